//! The far side under this side's limits: a job over its memory limit ends and its `job_end`
//! says why, and a fork bomb is held at the process limit where the far side's kernel holds
//! the tree. (A call's memory, CPU time and temp dir size: `the_far_side_applies_this_sides_limits`.)

use std::time::{Duration, Instant};

use serde_json::json;

use super::setup::{Far, body, tool_call};
use crate::limits::{FORK_PROBE, MEMORY_LINE, PROCESS_LINE, gated_memory_hog};
use crate::util::{LIVENESS, Rpc};

/// More processes below the shell's supervisor than this and the bomb is not held: the test
/// ends it at once (a machine must not endure one) and fails.
const RUNAWAY: usize = 1_000;

#[test]
fn a_far_side_job_over_its_memory_limit_ends_and_its_job_end_says_why() {
    super::on_every_far_side("far_side_job_limit", |far| {
        let env = far.env("[limits]\nmemory = \"256MiB\"\n");
        let mut rpc = far.rpc(&env);
        // The job holds a little memory, waits for a file, then grows past the limit.
        let go = env.work_dir().join("go");
        let command = gated_memory_hog(&go);
        let (_, started) = tool_call(
            &mut rpc,
            "job",
            "bash",
            &json!({ "command": command, "run_in_background": true }),
        );
        assert!(
            body(&started).contains("Running in the background as job 1"),
            "{}: {started}",
            far.name()
        );
        let (_, list) = tool_call(&mut rpc, "list", "job_list", &json!({}));
        assert!(
            body(&list).contains(" of 256.0MB · "),
            "{}: {}",
            far.name(),
            body(&list)
        );
        std::fs::write(&go, "").expect("write the go file");
        let ended = rpc.until(LIVENESS, |line| line["type"] == "job_end");
        let end = ended.last().expect("a job_end");
        assert_eq!(end["reason"]["kind"], "memory", "{}: {end}", far.name());
        assert_eq!(end["reason"]["limit"], 256 << 20);
        let (_, output) = tool_call(&mut rpc, "out", "job_output", &json!({ "jobId": "1" }));
        assert!(
            body(&output).contains(MEMORY_LINE),
            "{}: {output}",
            far.name()
        );
        assert_eq!(output["details"]["limit"]["kind"], "memory");
        rpc.close(LIVENESS);
    });
}

/// The text of a `bash` call of `command` on `rpc`.
fn run(rpc: &mut Rpc, call: &str, command: &str) -> String {
    let (_, result) = tool_call(rpc, call, "bash", &json!({ "command": command }));
    body(&result).to_owned()
}

#[test]
fn a_far_side_fork_bomb_is_held_where_its_kernel_holds_the_tree() {
    // The sshd far side only: it is this host as this user, so its limits have this host's
    // mechanism. The unshare far side is PID 1 of a namespace of its own, where agentsh may
    // fall back to the watchdog, which cannot hold a bomb run as root (nothing in the kernel
    // backs it: RLIMIT_NPROC exempts uid 0).
    let Some(far) = Far::ssh("far_side_fork_bomb") else {
        return;
    };
    if !agentsh_process::limits_kernel_enforced() {
        eprintln!("skipped: the resource limits of this host are not kernel-enforced");
        return;
    }
    let env = far.env("[limits]\nprocesses = 256\n");
    let mut rpc = far.rpc(&env);
    // First a bounded probe: the kernel must refuse forks past the limit there, or no bomb.
    let probe = run(&mut rpc, "probe", FORK_PROBE);
    assert!(
        probe.contains("refused after") && probe.contains(PROCESS_LINE),
        "the far side's kernel does not refuse forks past the limit: {probe}"
    );
    let shell: u32 = run(&mut rpc, "pid", "echo $$")
        .trim()
        .parse()
        .expect("the shell's pid");
    let supervisor = agentsh_process::parent_pid(shell).expect("the shell's supervisor");
    let count = || agentsh_process::descendants(supervisor).len();

    // Its call returns at once; the limit is told on that result or a next one.
    let mut told = run(&mut rpc, "bomb", ":(){ :|:& };:").contains(PROCESS_LINE);
    let mut most = 0;
    let deadline = Instant::now() + LIVENESS;
    let mut n = 0;
    while !told && Instant::now() < deadline {
        most = most.max(count());
        if most > RUNAWAY {
            // Not held: end the whole tree, then fail.
            // SAFETY: getpgid and kill take plain numbers; a group of the test's own is
            // never named (the shell runs in a session of its own).
            unsafe {
                let group = libc::getpgid(shell.cast_signed());
                if group > 1 {
                    libc::kill(-group, libc::SIGKILL);
                }
            }
            panic!("the fork bomb was not held: {most} processes");
        }
        n += 1;
        told = run(&mut rpc, &format!("next-{n}"), "true").contains(PROCESS_LINE);
    }
    assert!(told, "the process limit was never told");
    most = most.max(count());
    assert!(most <= 258, "{most} processes below the supervisor");
    assert_eq!(run(&mut rpc, "usable", "echo usable"), "usable");
    // Its end leaves nothing.
    rpc.close(LIVENESS);
    let deadline = Instant::now() + LIVENESS;
    while count() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        count(),
        0,
        "the bomb outlived its session (most seen: {most})"
    );
}

/// The cgroup directories under `/sys/fs/cgroup` named for owners that are PID 1 of their pid
/// namespace (`<namespace>-1-<start>-<n>`).
fn cgroups_of_pid_1s() -> std::collections::BTreeSet<std::path::PathBuf> {
    let output = std::process::Command::new("find")
        .args([
            "/sys/fs/cgroup",
            "-maxdepth",
            "6",
            "-type",
            "d",
            "-name",
            "*-1-*-*",
        ])
        .output()
        .expect("find runs");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(std::path::PathBuf::from)
        .collect()
}

#[test]
fn the_cgroups_of_a_far_side_that_ran_as_pid_1_are_swept_once_it_is_gone() {
    // The unshare far side is PID 1 of a pid namespace of its own: killed, its whole namespace
    // dies at once and nothing of it removes its cgroups.
    let before = cgroups_of_pid_1s();
    let far = Far::Unshare;
    let env = far.env("");
    let mut remote = far.rpc(&env);
    let (_, result) = tool_call(&mut remote, "1", "bash", &json!({ "command": "true" }));
    assert_eq!(result["isError"], false, "{result}");
    let made: Vec<_> = cgroups_of_pid_1s().difference(&before).cloned().collect();
    if made.is_empty() {
        eprintln!("skipped: the far side made no cgroup on this host");
        return;
    }
    // Its transport killed: `--kill-child` kills PID 1, and with it the namespace.
    let transport = agentsh_process::descendants(remote.pid())
        .into_iter()
        .find(|process| {
            std::fs::read_to_string(format!("/proc/{}/comm", process.pid))
                .is_ok_and(|comm| comm.trim() == far.transport_comm())
        })
        .expect("the transport process");
    // SAFETY: kill takes plain numbers; the pid is the test's own transport process.
    unsafe { libc::kill(transport.pid.cast_signed(), libc::SIGKILL) };
    remote.kill();
    assert!(
        made.iter().any(|dir| dir.exists()),
        "nothing left to sweep: {made:?}"
    );
    // Later sessions here sweep them (the period shortened to zero; a start whose sweep
    // finds another one running leaves it to that one, so sessions start until they are gone).
    let local = crate::util::TestEnv::new();
    let left = || -> Vec<_> { made.iter().filter(|dir| dir.exists()).cloned().collect() };
    let deadline = Instant::now() + LIVENESS;
    let mut n = 0;
    while !left().is_empty() && Instant::now() < deadline {
        let config = local.config_path();
        let mut command = local.command(&["rpc", "--config", config.to_str().expect("utf-8 path")]);
        command.env(agentsh_process::SWEEP_PERIOD_VAR, "0");
        let mut rpc = Rpc::spawn(command);
        n += 1;
        let (_, result) = tool_call(
            &mut rpc,
            &n.to_string(),
            "bash",
            &json!({ "command": "true" }),
        );
        assert_eq!(result["isError"], false, "{result}");
        let session = Instant::now();
        while !left().is_empty() && session.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(50));
        }
        rpc.close(LIVENESS);
    }
    assert_eq!(left(), Vec::<std::path::PathBuf>::new(), "made: {made:?}");
}

#[test]
fn the_sweep_of_a_far_side_in_a_pid_namespace_leaves_this_hosts_sessions_alone() {
    // A session here, its shell in cgroups named for this host's pid namespace.
    let local = crate::util::TestEnv::new();
    let mut here = local.rpc();
    let (_, set) = tool_call(
        &mut here,
        "set",
        "bash",
        &json!({ "command": "export KEPT=yes" }),
    );
    assert_eq!(set["isError"], false, "{set}");
    // A far side that is PID 1 of a pid namespace of its own, its `/proc` that namespace's:
    // it sweeps at its start (the period shortened to zero), and must judge nothing of
    // another namespace by what its `/proc` shows.
    let env = Far::Unshare.env("");
    let mut far = Far::Unshare.rpc_with(&env, &[(agentsh_process::SWEEP_PERIOD_VAR, "0")]);
    let (_, far_call) = tool_call(&mut far, "far", "bash", &json!({ "command": "sleep 0.5" }));
    assert_eq!(far_call["isError"], false, "{far_call}");
    let (_, kept) = tool_call(
        &mut here,
        "kept",
        "bash",
        &json!({ "command": "echo $KEPT" }),
    );
    assert_eq!(body(&kept), "yes", "{kept}");
    assert_eq!(kept["details"]["sessionRestarted"], false, "{kept}");
    far.close(LIVENESS);
    here.close(LIVENESS);
}
