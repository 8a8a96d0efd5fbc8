//! Resource limits on the real binary, over RPC: a call over its memory or CPU limit ends with
//! the limit line and `details.limit` while the shell keeps its state, a job over its memory
//! limit ends and its `job_end` says why, a fork bomb is held at its process limit while the
//! session stays usable (where the kernel holds the tree), and the sandbox's temp dir holds
//! `tmp_size`. Each runs with the mechanism this machine gives (a cgroup where root may write
//! one) and again with the watchdog, which every Linux has (the fork bomb inside a kernel net
//! of the test's own: as root nothing else would stop it were the watchdog to fail).

mod pty;

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{LIVENESS, Rpc, TestEnv};

/// The mechanisms to run each test with: this machine's own, then the watchdog.
const MECHANISMS: [Option<&str>; 2] = [None, Some("watchdog")];

/// The closing line of a tree ended over `memory = "256MiB"`.
pub const MEMORY_LINE: &str =
    "[Ended: this command's processes used more than 256.0MB of memory (limits.memory)]";

/// The closing line of a tree ended over `cpu_time = 2`.
pub const CPU_LINE: &str = "[Ended: this command's processes used 2 s of CPU (limits.cpu_time)]";

/// 1 GiB, 16 MiB at a time (what a build or a test run grows like), then a line that must
/// never be printed.
pub const MEMORY_HOG: &str = "python3 -c 'import time\nb = []\nfor i in range(64):\n    b.append(bytearray(16 << 20)); time.sleep(0.02)\nprint(\"allocated\")'";

/// A job's command that holds a little memory, waits for the file `go`, then grows past a
/// 256 MiB limit as [`MEMORY_HOG`] does.
pub fn gated_memory_hog(go: &std::path::Path) -> String {
    format!(
        "python3 -c 'import os, time\nb = bytearray(8 << 20)\nwhile not os.path.exists(\"{}\"): time.sleep(0.05)\nc = []\nfor i in range(64):\n    c.append(bytearray(16 << 20)); time.sleep(0.02)\nprint(\"allocated\")\ntime.sleep(60)'",
        go.display()
    )
}

/// `agentsh rpc` in `env`, on `mechanism` (`None`: the one agentsh picks).
fn rpc_on(env: &TestEnv, mechanism: Option<&str>) -> Rpc {
    let config = env.config_path();
    let mut command = env.command(&["rpc", "--config", config.to_str().expect("utf-8 path")]);
    if let Some(mechanism) = mechanism {
        command.env("AGENTSH_LIMITS_MECHANISM", mechanism);
    }
    Rpc::spawn(command)
}

/// The result of the `bash` tool call of `command` (`id` names the request and the call).
fn call(rpc: &mut Rpc, id: &str, command: &str) -> Value {
    call_tool(rpc, id, "bash", &serde_json::json!({ "command": command }))
}

/// The result of a tool call of `name` with `arguments`.
fn call_tool(rpc: &mut Rpc, id: &str, name: &str, arguments: &Value) -> Value {
    rpc.send_json(&serde_json::json!({
        "id": id, "type": "tool_call", "toolCallId": id, "name": name, "arguments": arguments,
    }));
    rpc.response_within(id, Duration::from_secs(60))["data"].clone()
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().expect("a text")
}

#[test]
fn a_call_over_its_memory_limit_ends_and_the_next_call_keeps_the_shell() {
    for mechanism in MECHANISMS {
        let env = TestEnv::with_config("[limits]\nmemory = \"256MiB\"\n");
        let mut rpc = rpc_on(&env, mechanism);
        call(&mut rpc, "1", "export KEPT=before");
        let result = call(&mut rpc, "2", MEMORY_HOG);
        let said = text(&result);
        assert!(said.contains(MEMORY_LINE), "{mechanism:?}: {said}");
        assert_eq!(result["isError"], true, "{result}");
        let limit = &result["details"]["limit"];
        assert_eq!(limit["kind"], "memory", "{mechanism:?}: {result}");
        assert_eq!(limit["limit"], 256 << 20);
        assert!(
            limit["used"].as_u64().expect("used") >= 256 << 20,
            "{result}"
        );
        let next = call(&mut rpc, "3", "echo $KEPT");
        assert_eq!(text(&next), "before", "{mechanism:?}: {next}");
        assert_eq!(next["details"]["sessionRestarted"], false);
        rpc.close(LIVENESS);
    }
}

#[test]
fn cpu_time_ends_a_spinning_command() {
    for mechanism in MECHANISMS {
        let env = TestEnv::with_config("[limits]\ncpu_time = 2\n");
        let mut rpc = rpc_on(&env, mechanism);
        let result = call(&mut rpc, "1", "sh -c 'while :; do :; done'");
        let said = text(&result);
        assert!(said.ends_with(CPU_LINE), "{mechanism:?}: {said}");
        let used = result["details"]["limit"]["used"].as_u64().expect("used");
        assert!((2..=4).contains(&used), "{result}");
        assert_eq!(result["details"]["timedOut"], false);
        rpc.close(LIVENESS);
    }
}

#[test]
fn cpu_time_ends_what_a_call_left_spinning_and_tells_it_on_a_next_result() {
    const LINE: &str = CPU_LINE;
    for mechanism in MECHANISMS {
        let env = TestEnv::with_config("[limits]\ncpu_time = 2\n");
        let mut rpc = rpc_on(&env, mechanism);
        let marker = crate::util::unique_marker();
        // The call returns at once; its `&` child spins on.
        let started = call(
            &mut rpc,
            "1",
            &format!("sh -c 'while :; do :; done' {marker} & echo started"),
        );
        assert_eq!(text(&started), "started", "{mechanism:?}: {started}");
        crate::util::wait_for_process(&marker);
        let mut told = false;
        let deadline = Instant::now() + LIVENESS;
        let mut n = 2;
        while !told && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(200));
            let next = call(&mut rpc, &n.to_string(), "true");
            told = text(&next).contains(LINE);
            n += 1;
        }
        assert!(told, "{mechanism:?}: the CPU time limit was never told");
        assert!(
            crate::util::processes_with(&marker).is_empty(),
            "{mechanism:?}: the spinner lives on"
        );
        // The shell and its state stay.
        let still = call(&mut rpc, "last", "echo usable");
        assert_eq!(text(&still), "usable", "{still}");
        rpc.close(LIVENESS);
    }
}

#[test]
fn a_job_over_its_memory_limit_ends_and_its_job_end_says_why() {
    for mechanism in MECHANISMS {
        let env = TestEnv::with_config("[limits]\nmemory = \"256MiB\"\n");
        let mut rpc = rpc_on(&env, mechanism);
        // The job holds a little memory, waits for a file, then grows past the limit.
        let go = env.root().join("go");
        let command = gated_memory_hog(&go);
        let started = call_tool(
            &mut rpc,
            "1",
            "bash",
            &serde_json::json!({ "command": command, "run_in_background": true }),
        );
        assert!(
            text(&started).contains("Running in the background as job 1"),
            "{started}"
        );
        let list = call_tool(&mut rpc, "2", "job_list", &serde_json::json!({}));
        assert!(
            text(&list).contains(" of 256.0MB · "),
            "{mechanism:?}: {}",
            text(&list)
        );
        std::fs::write(&go, "").expect("write the go file");
        let ended = rpc.until(LIVENESS, |line| line["type"] == "job_end");
        let end = ended.last().expect("a job_end");
        assert_eq!(end["reason"]["kind"], "memory", "{mechanism:?}: {end}");
        assert_eq!(end["reason"]["limit"], 256 << 20);
        let output = call_tool(
            &mut rpc,
            "3",
            "job_output",
            &serde_json::json!({ "jobId": "1" }),
        );
        assert!(
            text(&output).contains(&format!("{MEMORY_LINE}\n\n[job 1: ")),
            "{mechanism:?}: {output}"
        );
        assert_eq!(output["details"]["limit"]["kind"], "memory");
        rpc.close(LIVENESS);
    }
}

/// The sandbox's temp dir under `limits.tmp_size`: a write past the size fails with ENOSPC,
/// and the calls and jobs of the session see the same files there.
#[test]
fn the_sandboxs_temp_dir_holds_tmp_size_and_is_shared_by_calls_and_jobs() {
    // The sandbox needs what the kernel may lack (a kernel booted by `cargo xtask vm-test`
    // may be older than Landlock's needs).
    let kernel = agentsh_process::sandbox::Kernel::probe();
    if kernel.landlock_abi < agentsh_process::sandbox::MIN_LANDLOCK_ABI || !kernel.user_namespaces {
        eprintln!("skipped: no sandbox on this kernel ({kernel:?})");
        return;
    }
    let env = TestEnv::with_config(
        "[sandbox]\nmode = \"workspace-write\"\n\n[limits]\ntmp_size = \"10MiB\"\n",
    );
    let mut rpc = rpc_on(&env, None);
    let result = call(
        &mut rpc,
        "1",
        "echo kept > \"$TMPDIR/small\"; head -c 20000000 /dev/zero > \"$TMPDIR/big\"; \
         echo big=$?; rm -f \"$TMPDIR/big\"; df -k --output=size \"$TMPDIR\" | tail -1 | tr -d ' '",
    );
    let said = text(&result);
    assert!(
        said.contains("No space left on device") && said.contains("big=1\n10240"),
        "{said}"
    );
    // Nothing of it on the host's side of the directory.
    let tmpdir = call(&mut rpc, "2", "echo \"$TMPDIR\"");
    let host_dir = std::path::PathBuf::from(text(&tmpdir));
    assert!(host_dir.is_dir(), "{host_dir:?}");
    assert!(!host_dir.join("small").exists(), "{host_dir:?}");
    // A job (its own process tree, sandboxed on its own) sees the same file; one this short
    // answers with its end.
    let job = call_tool(
        &mut rpc,
        "3",
        "bash",
        &serde_json::json!({ "command": "cat \"$TMPDIR/small\"", "run_in_background": true }),
    );
    assert_eq!(job["details"]["job"]["id"], "1", "{job}");
    assert!(text(&job).starts_with("kept\n"), "{job}");
    rpc.close(LIVENESS);
}

/// The `pids.peak` file of the cgroup (v1 `pids` hierarchy, or v2) process `pid` is in now,
/// where the kernel has one.
fn pids_peak_file(pid: u32) -> Option<std::path::PathBuf> {
    let lines = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let dir = lines.lines().find_map(|line| {
        let (_, rest) = line.split_once(':')?;
        let (controllers, path) = rest.split_once(':')?;
        let path = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == "pids") {
            Some(std::path::Path::new("/sys/fs/cgroup/pids").join(path))
        } else if controllers.is_empty() {
            Some(std::path::Path::new("/sys/fs/cgroup").join(path))
        } else {
            None
        }
    })?;
    Some(dir.join("pids.peak")).filter(|file| file.exists())
}

/// How many processes descend from `root` (itself not counted).
fn descendants(root: u32) -> usize {
    agentsh_process::descendants(root).len()
}

/// The closing line of a tree held at 256 processes.
pub const PROCESS_LINE: &str = "[Process limit: this command's processes reached 256 at once; more were refused (limits.processes)]";

/// A bounded try of the process limit: up to 300 forks, which say `refused after N` when the
/// kernel refuses one; the children are ended and reaped before it exits.
pub const FORK_PROBE: &str = "python3 -c 'import os, time\npids = []\ntry:\n    for i in range(300):\n        pid = os.fork()\n        if pid == 0:\n            time.sleep(30); os._exit(0)\n        pids.append(pid)\n    print(\"forked\", len(pids))\nexcept OSError:\n    print(\"refused after\", len(pids))\nfor pid in pids:\n    os.kill(pid, 9); os.waitpid(pid, 0)'";

#[test]
fn a_fork_bomb_is_held_at_its_process_limit_and_the_session_stays_usable() {
    const LINE: &str = PROCESS_LINE;
    // Only where the kernel holds the tree. The watchdog samples every 100 ms and, for a
    // command running as root (as the tests here do), has no kernel backstop (RLIMIT_NPROC
    // exempts uid 0): a bomb outgrows its sampling (tried: over 30,000 processes before it
    // was ended), which a shared test machine must not endure.
    if !agentsh_process::limits_kernel_enforced() {
        eprintln!("skipped: the resource limits of this host are not kernel-enforced");
        return;
    }
    let env = TestEnv::with_config("[limits]\nprocesses = 256\n");
    let mut rpc = rpc_on(&env, None);
    let shell = call(&mut rpc, "1", "echo $$");
    let shell: u32 = text(&shell).trim().parse().expect("the shell's pid");
    // Everything the shell starts stays below its supervisor (a subreaper), also what the
    // bomb leaves running after its call returned.
    let supervisor = agentsh_process::parent_pid(shell).expect("the shell's supervisor");
    // A bounded command meets the limit first: told, and what a later command meets in the
    // same shell is told again.
    let probe = call(&mut rpc, "probe", FORK_PROBE);
    assert!(
        text(&probe).contains("refused after") && text(&probe).contains(LINE),
        "{probe}"
    );
    // The kernel's count of the tree: its cgroup's peak of tasks, where the kernel keeps one
    // (a pass over `/proc` of a tree that forks and exits meanwhile can count a pid twice);
    // else the processes below the supervisor.
    let peak = pids_peak_file(shell);
    let count = || {
        peak.as_ref()
            .and_then(|file| std::fs::read_to_string(file).ok())
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or_else(|| descendants(supervisor))
    };
    // Its call returns at once: the bomb forks on in the background.
    let bomb = call(&mut rpc, "2", ":(){ :|:& };:");
    // Told on that result or a next one; meanwhile the tree is never seen above the limit
    // (the shell and the bomb's first fork aside).
    let mut told = text(&bomb).contains(LINE);
    let mut most = 0;
    let deadline = Instant::now() + LIVENESS;
    let mut n = 3;
    while !told && Instant::now() < deadline {
        most = most.max(count());
        let next = call(&mut rpc, &n.to_string(), "true");
        told = text(&next).contains(LINE);
        n += 1;
    }
    assert!(told, "the process limit was never told");
    most = most.max(count());
    assert!(most <= 258, "{most} processes below the supervisor");
    // The session stays usable, and the limit is told once.
    let still = call(&mut rpc, "100", "echo usable");
    assert_eq!(text(&still), "usable", "{still}");
    let later = call(&mut rpc, "101", "echo again");
    assert_eq!(text(&later), "again", "{later}");
    // Its end leaves nothing.
    rpc.close(LIVENESS);
    let deadline = Instant::now() + LIVENESS;
    while descendants(supervisor) > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        descendants(supervisor),
        0,
        "the bomb outlived its session (most seen: {most})"
    );
}

/// A cgroup v1 `pids` group a test's agentsh runs in, with everything it starts: a kernel net
/// of `pids.max` tasks under a fork bomb the watchdog is to end, so that the machine would
/// endure the bomb even if the watchdog failed. Ended (its processes killed) and removed on
/// drop.
struct PidsNet {
    dir: std::path::PathBuf,
}

impl PidsNet {
    /// A net of `max` tasks, where this test runs as root with the v1 `pids` hierarchy at
    /// `/sys/fs/cgroup/pids` writable; `None` elsewhere.
    fn new(max: u64) -> Option<Self> {
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let hierarchy = std::path::Path::new("/sys/fs/cgroup/pids");
        if !root || !hierarchy.join("cgroup.procs").exists() {
            return None;
        }
        let dir = hierarchy.join(format!("agentsh-test-net-{}", crate::util::unique_marker()));
        std::fs::create_dir(&dir).ok()?;
        let net = Self { dir };
        std::fs::write(net.dir.join("pids.max"), max.to_string()).ok()?;
        Some(net)
    }

    /// The tasks in the net now.
    fn tasks(&self) -> u64 {
        std::fs::read_to_string(self.dir.join("pids.current"))
            .ok()
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or(0)
    }

    /// `command`, set to move itself into the net before it runs.
    fn around(&self, command: &mut std::process::Command) {
        use std::os::unix::process::CommandExt as _;
        let procs = std::ffi::CString::new(
            self.dir
                .join("cgroup.procs")
                .into_os_string()
                .into_encoded_bytes(),
        )
        .expect("a path without NUL");
        // SAFETY: between fork and exec only open, write and close, which are
        // async-signal-safe; nothing is allocated.
        unsafe {
            command.pre_exec(move || {
                let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // "0": the writing process itself.
                let written = libc::write(fd, b"0".as_ptr().cast(), 1);
                libc::close(fd);
                if written != 1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

impl Drop for PidsNet {
    fn drop(&mut self) {
        let procs = self.dir.join("cgroup.procs");
        let deadline = Instant::now() + LIVENESS;
        loop {
            let pids: Vec<i32> = std::fs::read_to_string(&procs)
                .unwrap_or_default()
                .lines()
                .filter_map(|line| line.trim().parse().ok())
                .collect();
            if pids.is_empty() || Instant::now() > deadline {
                break;
            }
            for pid in pids {
                // SAFETY: kill takes plain numbers; every pid here is in the test's own net.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

#[test]
fn a_fork_bomb_on_the_watchdog_is_ended_and_the_session_stays_usable() {
    // As root nothing in the kernel backs the watchdog (RLIMIT_NPROC exempts uid 0), so the
    // test runs agentsh inside a kernel net of its own: were the bomb not ended, it would stop
    // at the net instead of taking the machine down.
    const NET: u64 = 3_000;
    let Some(net) = PidsNet::new(NET) else {
        eprintln!("skipped: no writable cgroup v1 pids hierarchy to hold a net around the bomb");
        return;
    };
    let env = TestEnv::with_config("[limits]\nprocesses = 256\n");
    let config = env.config_path();
    let mut command = env.command(&["rpc", "--config", config.to_str().expect("utf-8 path")]);
    command.env("AGENTSH_LIMITS_MECHANISM", "watchdog");
    net.around(&mut command);
    let mut rpc = Rpc::spawn(command);
    let shell = call(&mut rpc, "1", "echo $$");
    let shell: u32 = text(&shell).trim().parse().expect("the shell's pid");
    let supervisor = agentsh_process::parent_pid(shell).expect("the shell's supervisor");

    // Its call returns at once; the watchdog finds the tree over the limit after that, ends
    // it, and tells it on a next result.
    let bomb = call(&mut rpc, "2", ":(){ :|:& };:");
    let mut told = text(&bomb).contains(PROCESS_LINE);
    let mut most = 0;
    let deadline = Instant::now() + LIVENESS;
    let mut n = 3;
    while !told && Instant::now() < deadline {
        most = most.max(net.tasks());
        let next = call(&mut rpc, &n.to_string(), "true");
        told = text(&next).contains(PROCESS_LINE);
        n += 1;
    }
    assert!(
        told,
        "the process limit was never told (most tasks: {most})"
    );
    // Ended, not held: nothing of the bomb is left soon after.
    let deadline = Instant::now() + LIVENESS;
    while descendants(supervisor) > 1 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(
        descendants(supervisor),
        1,
        "the bomb lives on below the supervisor (most tasks: {most})"
    );
    let still = call(&mut rpc, "100", "echo usable");
    assert_eq!(text(&still), "usable", "{still}");
    rpc.close(LIVENESS);
    eprintln!("most tasks seen in the net: {most} of {NET}");
}
