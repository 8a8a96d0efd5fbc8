use std::os::unix::fs::MetadataExt as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::*;

/// The backend of this process, or `None` (with the reason printed) when it has none.
fn backend() -> Option<&'static Backend> {
    let state = state();
    if state.backend.is_none() {
        eprintln!(
            "skipped: no cgroup for limits here ({})",
            state.mechanism.describe()
        );
    }
    state.backend.as_ref()
}

#[test]
fn the_groups_of_a_dead_owner_are_ended_and_removed_and_a_live_ones_kept() {
    let Some(backend) = backend() else {
        return;
    };
    // This pid with start time 0: an owner that is gone. Its pid namespace is another live
    // one (a sleep's, under `unshare --pid`), so that the sweeps of the other tests'
    // processes, which judge a foreign owner only by whether its namespace has a process,
    // leave it alone; the sweep below, told that namespace is its own, judges the owner.
    let Some((mut holder, namespace)) = live_foreign_namespace() else {
        eprintln!("skipped: unshare --pid cannot make a pid namespace here");
        return;
    };
    let dead = CommandCgroup::at(backend, &format!("{namespace}-{}-0-0", std::process::id()));
    let live = CommandCgroup::create(&ResourceLimits::default()).expect("a live owner's cgroup");
    for place in &dead.places {
        create_new_private_dir(&place.dir).expect("a leftover directory");
    }
    let mut children = Vec::new();
    for cgroup in [&dead, &live] {
        let child = Command::new("sleep")
            .arg("300")
            .stdin(Stdio::null())
            .spawn()
            .expect("sleep starts");
        cgroup.enter(child.id()).expect("enters");
        children.push(child);
    }
    let dirs: Vec<PathBuf> = dead.dirs().map(Path::to_path_buf).collect();
    // The dead owner's cgroup is not this process's to end: only the sweep does.
    dead.forget();

    end_leftovers_of(backend, &namespace);

    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = children[0].try_wait().expect("waits") {
            break status;
        }
        assert!(Instant::now() < deadline, "the leftover's sleep still runs");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGKILL)
    );
    for dir in &dirs {
        assert!(!dir.exists(), "{} is left", dir.display());
    }
    assert!(
        children[1].try_wait().expect("waits").is_none(),
        "a live owner's process was ended"
    );
    assert!(live.dirs().all(Path::exists));
    // Its own namespace's sweep leaves a live owner's cgroup too.
    state().end_leftovers();
    assert!(live.dirs().all(Path::exists));
    assert!(children[1].try_wait().expect("waits").is_none());
    live.remove().expect("removed");
    let status = children[1].wait().expect("waits");
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGKILL)
    );
    let _ = holder.kill();
    let _ = holder.wait();
}

/// A pid namespace other than this process's that has a process: `unshare --pid --fork
/// --kill-child sleep` (ended with it), and the namespace's inode number; `None` where
/// `unshare` cannot make one.
fn live_foreign_namespace() -> Option<(std::process::Child, String)> {
    let mut holder = Command::new("unshare")
        .args(["--pid", "--fork", "--kill-child", "sleep", "300"])
        .stdin(Stdio::null())
        .spawn()
        .ok()?;
    let own = fs::metadata("/proc/self/ns/pid").ok()?.ino();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if holder.try_wait().ok()?.is_some() {
            return None;
        }
        let inside = crate::children(holder.id())
            .and_then(|children| children.first().copied())
            .and_then(|sleep| fs::metadata(format!("/proc/{sleep}/ns/pid")).ok())
            .map(|meta| meta.ino())
            .filter(|ino| *ino != own);
        if let Some(ino) = inside {
            return Some((holder, ino.to_string()));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = holder.kill();
    let _ = holder.wait();
    None
}

#[test]
fn each_mechanism_says_what_it_guarantees() {
    let v2 = LimitsMechanism::CgroupV2 {
        parent: PathBuf::from("/sys/fs/cgroup/user.slice/agentsh-limits"),
    };
    assert!(v2.is_kernel_enforced());
    assert!(
        v2.describe()
            .starts_with("cgroup v2 memory and pids controllers: a command tree's memory"),
        "{}",
        v2.describe()
    );
    let v1 = LimitsMechanism::CgroupV1 {
        memory: PathBuf::from("/sys/fs/cgroup/memory/agentsh-limits"),
        pids: PathBuf::from("/sys/fs/cgroup/pids/agentsh-limits"),
        cpuacct: None,
        freezer: None,
        swap_counted: true,
        no_v2: "the cgroup v2 hierarchy at /sys/fs/cgroup/unified has no memory or pids \
                controller for agentsh's cgroup /"
            .to_owned(),
    };
    let text = v1.describe();
    assert!(
        text.starts_with(
            "cgroup v1 memory and pids controllers: a command tree's memory (swap included) \
             and tasks are capped by the kernel, its CPU time sampled from /proc"
        ) && text.contains("/sys/fs/cgroup/unified has no memory"),
        "{text}"
    );
    let watchdog = LimitsMechanism::Watchdog {
        reason: "AGENTSH_LIMITS_MECHANISM=watchdog is set".to_owned(),
    };
    assert!(!watchdog.is_kernel_enforced());
    assert_eq!(
        watchdog.describe(),
        "watchdog: memory and tasks sampled every 100 ms, a tree above a limit is ended; \
         RLIMIT_DATA backstop (no cgroup for this: AGENTSH_LIMITS_MECHANISM=watchdog is set)"
    );
}

#[test]
fn without_a_freezer_passes_of_sigkill_end_a_fork_loop() {
    let Some(backend) = backend() else {
        return;
    };
    let mut cgroup = CommandCgroup::create_in(
        state(),
        backend,
        &ResourceLimits {
            processes: Some(16),
            ..ResourceLimits::default()
        },
    )
    .expect("a cgroup");
    match &mut cgroup.kind {
        Kind::V1(roles) => roles.freezer = None,
        Kind::V2 => {
            eprintln!("skipped: cgroup v2 ends a cgroup with cgroup.kill");
            return;
        }
    }
    // A fork bomb, held by the kernel at 16 tasks: killed ones make room for new ones. It
    // starts only once it is inside, and not at all if the test ends first (`read` fails).
    let mut child = Command::new("/bin/sh")
        .args(["-c", "read go || exit; b() { b | b & }; b; wait"])
        .stdin(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("sh starts");
    let pids_dir = match cgroup.kind {
        Kind::V1(roles) => cgroup.dir(roles.pids).to_path_buf(),
        Kind::V2 => unreachable!("skipped above"),
    };
    assert_eq!(
        fs::read_to_string(pids_dir.join("pids.max"))
            .expect("pids.max")
            .trim(),
        "16"
    );
    cgroup.enter(child.id()).expect("enters");
    assert_eq!(cgroup.members(), vec![child.id()]);
    std::io::Write::write_all(child.stdin.as_mut().expect("stdin"), b"go\n").expect("go");
    let deadline = Instant::now() + Duration::from_secs(60);
    while cgroup.events().expect("events").pids_refused == 0 {
        assert!(Instant::now() < deadline, "no fork was refused");
        std::thread::sleep(Duration::from_millis(10));
    }
    cgroup.kill_all().expect("all ended");
    assert!(!cgroup.is_populated());
    child.wait().expect("reaped");
    let dirs: Vec<PathBuf> = cgroup.dirs().map(Path::to_path_buf).collect();
    cgroup.remove().expect("removed");
    assert!(dirs.iter().all(|dir| !dir.exists()));
}
