//! Resource limits in real cgroups: a memory hog is OOM-killed by the kernel, a fork loop is
//! held at the task limit, and nothing is left afterwards. Each test runs on the mechanism
//! this host has and says why it skips when it has none (not root, no writable cgroup).

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use agentsh_process::{
    CommandCgroup, LIMITS_MECHANISM_VAR, LimitsMechanism, limits_mechanism, random_hex,
};
use agentsh_protocol::ResourceLimits;
use agentsh_test_support::{alive_with_arg, which};

/// How long a state may take to come: a generous bound for slow machines, never a wait.
const LIVENESS: Duration = Duration::from_secs(60);

/// Polls `done` until it holds, or panics naming `what` after [`LIVENESS`].
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + LIVENESS;
    while !done() {
        assert!(Instant::now() < deadline, "still not: {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether this host limits with cgroups; prints why not.
fn cgroups() -> bool {
    let mechanism = limits_mechanism();
    if !mechanism.is_kernel_enforced() {
        eprintln!("skipped: {}", mechanism.describe());
    }
    mechanism.is_kernel_enforced()
}

/// Whether the mounts of this host have writable v1 memory and pids hierarchies as root
/// sees them: where detection must find cgroup v1 (or better).
fn v1_expected() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let has = |controller: &str| {
        mounts.lines().any(|line| {
            line.split_once(" - cgroup ").is_some_and(|(_, after)| {
                after
                    .split(' ')
                    .nth(1)
                    .is_some_and(|options| options.split(',').any(|o| o == controller))
            })
        })
    };
    root && has("memory") && has("pids")
}

/// `script` in `sh -c`, stopped at its first `read` until [`go`]: the test moves it into a
/// cgroup before it does anything.
fn held(script: &str) -> (Child, ChildStdin) {
    held_in(Path::new("/bin/sh"), script)
}

/// [`held`] in the shell `shell`.
fn held_in(shell: &Path, script: &str) -> (Child, ChildStdin) {
    let mut child = Command::new(shell)
        .args(["-c", &format!("read go || exit; {script}")])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("sh starts");
    let stdin = child.stdin.take().expect("stdin");
    (child, stdin)
}

fn go(stdin: &mut ChildStdin) {
    stdin.write_all(b"go\n").expect("the child reads on");
}

fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let mut status = None;
    wait_for("the child ends", || {
        status = child.try_wait().expect("waits");
        status.is_some()
    });
    status.expect("ended")
}

/// The pids `cgroup.procs` of each directory lists.
fn procs(dirs: &[PathBuf]) -> Vec<u32> {
    let mut pids: Vec<u32> = dirs
        .iter()
        .flat_map(|dir| {
            std::fs::read_to_string(dir.join("cgroup.procs"))
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect();
    pids.sort_unstable();
    pids.dedup();
    pids
}

#[test]
fn detection_finds_the_best_mechanism_this_host_has() {
    let mechanism = limits_mechanism();
    eprintln!("{}", mechanism.describe());
    match &mechanism {
        LimitsMechanism::CgroupV2 { parent } => assert!(parent.is_dir()),
        LimitsMechanism::CgroupV1 {
            memory,
            pids,
            no_v2,
            ..
        } => {
            assert!(memory.is_dir() && pids.is_dir(), "{mechanism:?}");
            assert!(!no_v2.is_empty(), "why not v2 is said");
        }
        LimitsMechanism::Watchdog { reason } => {
            assert!(
                !v1_expected(),
                "root with v1 memory and pids, yet the watchdog: {reason}"
            );
            eprintln!("skipped: no cgroup here ({reason})");
        }
    }
    // The same answer again, from the decision made once.
    assert_eq!(limits_mechanism(), mechanism);
}

/// Runs the test `test` again in a copy of this binary with `var=value`; false inside it.
fn rerun(test: &str, var: &str, value: &str) -> bool {
    if std::env::var_os(var).is_some() {
        return false;
    }
    let output = Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", test, "--nocapture", "--test-threads", "1"])
        .env(var, value)
        .output()
        .expect("the test binary starts");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("1 passed"),
        "{test} with {var}={value}: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    true
}

#[test]
fn the_watchdog_can_be_forced() {
    if rerun(
        "limits::the_watchdog_can_be_forced",
        LIMITS_MECHANISM_VAR,
        "watchdog",
    ) {
        return;
    }
    let mechanism = limits_mechanism();
    assert_eq!(
        mechanism,
        LimitsMechanism::Watchdog {
            reason: "AGENTSH_LIMITS_MECHANISM=watchdog is set".to_owned()
        }
    );
    let err = CommandCgroup::create(&ResourceLimits::default()).expect_err("no cgroup");
    assert_eq!(err.kind(), std::io::ErrorKind::Unsupported, "{err}");
}

#[test]
fn a_memory_hog_is_oom_killed_and_the_kill_is_counted() {
    if !cgroups() {
        return;
    }
    let Some(python) = which("python3") else {
        eprintln!("skipped: no python3 to allocate with");
        return;
    };
    let limit = 256 << 20;
    let cgroup = CommandCgroup::create(&ResourceLimits {
        memory: Some(limit),
        ..ResourceLimits::default()
    })
    .expect("a cgroup");
    let dirs: Vec<PathBuf> = cgroup.dirs().map(Path::to_path_buf).collect();
    // 1 GiB, every byte written.
    let (mut child, mut stdin) = held(&format!(
        "exec {} -c 'b = bytearray(b\"x\") * (1 << 30); print(len(b))'",
        python.display()
    ));
    cgroup.enter(child.id()).expect("enters");
    go(&mut stdin);
    let status = wait_exit(&mut child);
    assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
    let events = cgroup.events().expect("events");
    assert!(events.oom_kills >= 1, "{events:?}");
    assert_eq!(events.pids_refused, 0, "{events:?}");
    let usage = cgroup.usage().expect("usage");
    if let Some(peak) = usage.memory_peak_bytes {
        assert!(
            peak > limit / 2 && peak <= limit + (16 << 20),
            "peak {peak} against a limit of {limit}"
        );
    }
    cgroup.remove().expect("removed");
    for dir in dirs {
        assert!(!dir.exists(), "{} is left", dir.display());
    }
}

#[test]
fn a_fork_loop_is_held_at_the_process_limit_and_ended_whole() {
    if !cgroups() {
        return;
    }
    let cgroup = CommandCgroup::create(&ResourceLimits {
        processes: Some(64),
        ..ResourceLimits::default()
    })
    .expect("a cgroup");
    let dirs: Vec<PathBuf> = cgroup.dirs().map(Path::to_path_buf).collect();
    // A sleep length no other process has: how the test finds them in /proc.
    let seconds = format!(
        "3600.{}",
        u64::from_str_radix(&random_hex(6), 16).expect("hex")
    );
    // bash retries a refused fork for a while (dash would give up and exit at once).
    let Some(bash) = which("bash") else {
        eprintln!("skipped: no bash");
        return;
    };
    let (mut child, mut stdin) = held_in(
        &bash,
        &format!("for i in $(seq 500); do sleep {seconds} & done; wait"),
    );
    cgroup.enter(child.id()).expect("enters");
    go(&mut stdin);
    wait_for("a fork refused", || {
        cgroup.events().expect("events").pids_refused > 0
    });
    for _ in 0..20 {
        let usage = cgroup.usage().expect("usage");
        assert!(usage.tasks <= 64, "{usage:?}");
    }
    eprintln!(
        "held: {:?}, {:?}",
        cgroup.usage().expect("usage"),
        cgroup.events().expect("events")
    );
    let sleeps = alive_with_arg(&seconds);
    assert!(
        sleeps.len() >= 32 && sleeps.len() < 64,
        "{} sleeps",
        sleeps.len()
    );
    let inside = procs(&dirs);
    assert!(inside.contains(&child.id()), "the shell is inside");

    cgroup.kill_all().expect("all ended");
    assert!(!cgroup.is_populated());
    assert_eq!(wait_exit(&mut child).signal(), Some(libc::SIGKILL));
    wait_for("no sleep left", || alive_with_arg(&seconds).is_empty());
    for pid in inside {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
        // Gone, or a zombie of this test's own not reaped yet (the shell is reaped above).
        assert!(
            stat.is_err()
                || stat
                    .as_ref()
                    .is_ok_and(|s| s.rsplit_once(") ").is_some_and(|(_, r)| r.starts_with('Z'))),
            "process {pid} lives on: {stat:?}"
        );
    }
    cgroup.remove().expect("removed");
    for dir in dirs {
        assert!(!dir.exists(), "{} is left", dir.display());
    }
}

/// The cgroup paths of `pid` as `/proc/<pid>/cgroup` lists them.
fn cgroup_lines(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/cgroup")).expect("its cgroups")
}

#[test]
fn enter_and_leave_move_a_process_in_and_back_and_its_children_stay() {
    if !cgroups() {
        return;
    }
    let cgroup = CommandCgroup::create(&ResourceLimits {
        memory: Some(1 << 30),
        processes: Some(100),
        cpu_time: None,
    })
    .expect("a cgroup");
    let dirs: Vec<PathBuf> = cgroup.dirs().map(Path::to_path_buf).collect();
    let name = dirs[0]
        .file_name()
        .expect("a name")
        .to_string_lossy()
        .into_owned();
    let seconds = format!(
        "3600.{}",
        u64::from_str_radix(&random_hex(6), 16).expect("hex")
    );
    // The "shell": starts a child when told, says its pid, and waits to be told to exit.
    let (mut shell, mut stdin) = held(&format!("sleep {seconds} & echo $!; read done"));
    let before = cgroup_lines(shell.id());
    assert!(!before.contains(&name));
    assert!(!cgroup.is_populated());
    // `tasks` keeps its file open: each look below reads the count afresh.
    assert_eq!(cgroup.tasks().expect("tasks"), 0);

    cgroup.enter(shell.id()).expect("enters");
    let inside = cgroup_lines(shell.id());
    assert!(inside.contains(&format!("/{name}\n")), "{inside}");
    assert!(cgroup.is_populated());
    assert_eq!(procs(&dirs), vec![shell.id()]);
    assert_eq!(cgroup.tasks().expect("tasks"), 1);
    go(&mut stdin);
    let mut line = String::new();
    BufReader::new(shell.stdout.as_mut().expect("stdout"))
        .read_line(&mut line)
        .expect("the sleep's pid");
    let sleep: u32 = line.trim().parse().expect("a pid");
    assert_eq!(cgroup.tasks().expect("tasks"), 2, "the shell and its child");

    cgroup.leave(shell.id()).expect("leaves");
    assert_eq!(cgroup_lines(shell.id()), before, "back where it was");
    assert_eq!(procs(&dirs), vec![sleep], "the child stays inside");
    assert_eq!(cgroup.tasks().expect("tasks"), 1);
    let usage = cgroup.usage().expect("usage");
    assert_eq!(usage.tasks, 1, "{usage:?}");
    assert!(usage.memory_bytes > 0, "{usage:?}");
    let err = cgroup.leave(shell.id()).expect_err("not inside any more");
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);

    // Ending the cgroup ends the child and leaves the shell, which is outside.
    cgroup.kill_all().expect("ended");
    wait_for("the child is gone", || alive_with_arg(&seconds).is_empty());
    assert!(
        shell.try_wait().expect("waits").is_none(),
        "the shell lives"
    );
    stdin.write_all(b"done\n").expect("the shell reads");
    assert!(wait_exit(&mut shell).success());
    drop(cgroup);
    for dir in dirs {
        assert!(!dir.exists(), "{} is left after drop", dir.display());
    }
}

#[test]
fn cpu_time_is_counted_where_the_cgroup_keeps_it() {
    if !cgroups() {
        return;
    }
    let cgroup = CommandCgroup::create(&ResourceLimits::default()).expect("a cgroup");
    let (mut child, mut stdin) = held("while :; do :; done");
    cgroup.enter(child.id()).expect("enters");
    go(&mut stdin);
    if cgroup.usage().expect("usage").cpu_usec.is_none() {
        eprintln!("skipped: this cgroup keeps no CPU time (no writable cpuacct)");
    } else {
        wait_for("50 ms of CPU counted", || {
            cgroup
                .usage()
                .expect("usage")
                .cpu_usec
                .is_some_and(|us| us >= 50_000)
        });
    }
    cgroup.remove().expect("removed");
    assert_eq!(wait_exit(&mut child).signal(), Some(libc::SIGKILL));
}

/// The text of control file `name` in `dir`.
fn control(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name))
        .unwrap_or_else(|err| panic!("{}/{name}: {err}", dir.display()))
        .trim()
        .to_owned()
}

#[test]
fn cgroup_v2_control_files_hold_the_limits() {
    let mechanism = limits_mechanism();
    let LimitsMechanism::CgroupV2 { .. } = mechanism else {
        eprintln!(
            "skipped: not cgroup v2 here ({})",
            match &mechanism {
                LimitsMechanism::CgroupV1 { no_v2, .. } => no_v2.clone(),
                other => other.describe(),
            }
        );
        return;
    };
    let cgroup = CommandCgroup::create(&ResourceLimits {
        memory: Some(300 << 20),
        processes: Some(77),
        cpu_time: None,
    })
    .expect("a cgroup");
    let dir = cgroup.dirs().next().expect("one dir").to_path_buf();
    assert_eq!(control(&dir, "memory.max"), (300u64 << 20).to_string());
    assert_eq!(control(&dir, "pids.max"), "77");
    assert_eq!(control(&dir, "memory.oom.group"), "0");
    if dir.join("memory.swap.max").exists() {
        assert_eq!(control(&dir, "memory.swap.max"), "0");
    }
    let usage = cgroup.usage().expect("usage");
    assert!(usage.cpu_usec.is_some(), "{usage:?}");
    cgroup.remove().expect("removed");
    assert!(!dir.exists());
}

#[test]
fn cgroup_v1_control_files_hold_the_limits() {
    let mechanism = limits_mechanism();
    let LimitsMechanism::CgroupV1 {
        memory,
        pids,
        swap_counted,
        ..
    } = mechanism
    else {
        eprintln!("skipped: not cgroup v1 here ({})", mechanism.describe());
        return;
    };
    let cgroup = CommandCgroup::create(&ResourceLimits {
        memory: Some(300 << 20),
        processes: Some(77),
        cpu_time: None,
    })
    .expect("a cgroup");
    let dirs: Vec<PathBuf> = cgroup.dirs().map(Path::to_path_buf).collect();
    let memory_dir = dirs
        .iter()
        .find(|d| d.starts_with(&memory))
        .expect("a memory group");
    let pids_dir = dirs
        .iter()
        .find(|d| d.starts_with(&pids))
        .expect("a pids group");
    let bytes = (300u64 << 20).to_string();
    assert_eq!(control(memory_dir, "memory.limit_in_bytes"), bytes);
    if swap_counted {
        assert_eq!(control(memory_dir, "memory.memsw.limit_in_bytes"), bytes);
    }
    assert!(control(memory_dir, "memory.oom_control").starts_with("oom_kill_disable 0"));
    assert_eq!(control(pids_dir, "pids.max"), "77");
    cgroup.remove().expect("removed");
    for dir in dirs {
        assert!(!dir.exists(), "{} is left", dir.display());
    }
}
