//! Containment that has no single point of failure, with the real binary: what agentsh and
//! a supervisor that die together leave behind (processes, cgroups, the shell's private
//! directory) is ended by the sweep of a later agentsh start, within one sweep period; without
//! cgroups that is said in a warning.

use serde_json::json;

use crate::leftovers::{all_gone, made, private_command, start_until};
use crate::util::{
    Rpc, TestEnv, assert_no_survivor, processes_with, unique_marker, wait_for_process,
};

/// The start of the warning agentsh gives without a cgroup per shell.
pub const NO_CGROUP_WARNING: &str = "agentsh: warning: no cgroup per shell (";

/// The parent pid of `pid` (`/proc/<pid>/stat`).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn signal(pid: u32, signal: i32) {
    let pid = libc::pid_t::try_from(pid).expect("a pid");
    // SAFETY: kill(2) has no memory effects.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0, "kill {pid} {signal}");
}

/// Entries of agentsh's parent cgroups (`…/agentsh/<pidns>-<pid>-<start>-<n>`) owned by `pid`.
fn cgroups_of(pid: u32) -> Vec<String> {
    let Ok(mounts) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    let Some(mount) = mounts.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        after
            .starts_with("cgroup2 ")
            .then(|| before.split(' ').nth(4).map(str::to_owned))?
    }) else {
        return Vec::new();
    };
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let own = own
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .unwrap_or("/")
        .trim_start_matches('/')
        .to_owned();
    let parent = std::path::Path::new(&mount).join(own).join("agentsh");
    std::fs::read_dir(parent)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| name.split('-').nth(1) == Some(pid.to_string().as_str()))
        .collect()
}

#[test]
fn agentsh_and_supervisor_killed_together_are_cleaned_by_a_later_start() {
    let env = crate::leftovers::private_env(false);
    let probe = env.exec(&["--", "true"]);
    if probe.stderr.contains(NO_CGROUP_WARNING) {
        eprintln!(
            "skipped: cgroup v2 is not writable here, and without cgroups what agentsh leaves \
             when it dies together with a supervisor is not found ({})",
            probe.stderr.trim()
        );
        return;
    }
    let (escapee, foreground) = (unique_marker(), unique_marker());
    let config = env.config_path();
    let config = config.to_str().expect("utf-8 path");
    let mut rpc = Rpc::spawn(private_command(&env, &["rpc", "--config", config]));
    rpc.send_json(&json!({
        "id": "b",
        "type": "bash",
        "command": format!(
            "(setsid sh -c 'sleep 100; : {escapee}' &); sh -c 'sleep 100; : {foreground}'"
        ),
    }));
    wait_for_process(&escapee);
    wait_for_process(&foreground);
    let sh = processes_with(&foreground)[0];
    let shell = parent_of(sh).expect("the shell");
    let supervisor = parent_of(shell).expect("the supervisor");
    assert_eq!(
        parent_of(supervisor),
        Some(rpc.pid()),
        "agentsh → supervisor → shell"
    );
    let agentsh = rpc.pid();
    assert!(!cgroups_of(agentsh).is_empty(), "the shell has a cgroup");
    let dirs = made(&env);
    assert_eq!(dirs.len(), 1, "the shell's private directory: {dirs:?}");

    // Together: the supervisor cannot act on its parent-death signal while stopped, and is
    // then killed too.
    signal(supervisor, libc::SIGSTOP);
    rpc.kill();
    signal(supervisor, libc::SIGKILL);

    // Nothing was left to remove the shell's private directory.
    assert_eq!(made(&env), dirs);
    // The sweep of a later start ends what they left, and removes the directory.
    start_until(&env, "the sweep of a later start", || {
        processes_with(&escapee).is_empty()
            && processes_with(&foreground).is_empty()
            && cgroups_of(agentsh).is_empty()
            && all_gone(&env, &dirs)
    });
    assert_no_survivor(&escapee);
    assert_no_survivor(&foreground);
}

#[test]
fn without_cgroups_the_fallback_is_warned_about() {
    let env = TestEnv::new();
    let mut command = env.command(&["exec", "--", "echo", "ok"]);
    command
        .env("AGENTSH_NO_CGROUP", "1")
        .stdin(std::process::Stdio::null());
    let done = crate::util::finish(command);
    assert_eq!(done.stdout, "ok\n", "{done:?}");
    assert_eq!(
        done.stderr.matches(NO_CGROUP_WARNING).count(),
        1,
        "{done:?}"
    );
    assert!(done.stderr.contains("AGENTSH_NO_CGROUP is set"), "{done:?}");
}
