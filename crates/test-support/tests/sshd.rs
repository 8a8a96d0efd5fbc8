//! The sshd harness against a real OpenSSH server and client: it logs in, the far side's
//! `.bashrc` is the test's, the error variants fail fast without prompting, and drop leaves
//! nothing of the instance behind.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use agentsh_test_support::sshd::{Sshd, skip_without_sshd};
use agentsh_test_support::{
    alive_containing, assert_no_survivor, marked_sleep, unique_marker, wait_for_process,
};

/// The liveness bound of every ssh run here.
const LIMIT: Duration = Duration::from_secs(10);

/// `ssh_command` + `-T -o BatchMode=yes -p PORT USER@127.0.0.1 remote`, stdin `/dev/null`, run
/// to its end (at most [`LIMIT`]: killed and a test failure after that).
fn run(sshd: &Sshd, ssh_command: &[String], remote: &str) -> Output {
    let mut child = Command::new(&ssh_command[0])
        .args(&ssh_command[1..])
        .args(["-T", "-o", "BatchMode=yes", "-p"])
        .arg(sshd.port().to_string())
        .arg(format!("{}@127.0.0.1", sshd.user()))
        .arg(remote)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ssh starts");
    let deadline = Instant::now() + LIMIT;
    while child.try_wait().expect("wait for ssh").is_none() {
        if Instant::now() >= deadline {
            let _ = child.kill();
            let output = child.wait_with_output().expect("ssh output");
            panic!(
                "ssh {remote:?} did not end within {LIMIT:?}; stderr: {}\nsshd log:\n{}",
                String::from_utf8_lossy(&output.stderr),
                sshd.log()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().expect("ssh output")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn ssh_command_logs_in_and_the_far_side_sees_ssh_connection() {
    if skip_without_sshd("ssh_command_logs_in") {
        return;
    }
    let sshd = Sshd::start().expect("sshd starts");
    let output = run(&sshd, &sshd.ssh_command(), "echo \"[$SSH_CONNECTION]\"");
    let stdout = text(&output.stdout);
    assert!(
        output.status.success(),
        "{}\n{}",
        text(&output.stderr),
        sshd.log()
    );
    // `client-ip client-port server-ip server-port`.
    let connection = stdout
        .trim()
        .strip_prefix('[')
        .and_then(|rest| rest.strip_suffix(']'))
        .expect("one bracketed line");
    let fields: Vec<&str> = connection.split(' ').collect();
    assert_eq!(fields.len(), 4, "{stdout:?}");
    assert_eq!(fields[2..], ["127.0.0.1", &sshd.port().to_string()]);
    assert_eq!(
        sshd.target(),
        format!("ssh://{}@127.0.0.1:{}", sshd.user(), sshd.port())
    );
    let id = Command::new("id").arg("-un").output().expect("id runs");
    assert_eq!(text(&id.stdout).trim(), sshd.user());
    assert_eq!(sshd.ssh_command()[..2], ["ssh", "-F"]);
    assert_eq!(
        sshd.ssh_command()[2],
        sshd.ssh_config().to_str().expect("UTF-8 path")
    );
}

#[test]
fn a_bashrc_in_home_runs_before_a_non_interactive_command() {
    if skip_without_sshd("a_bashrc_in_home_runs") {
        return;
    }
    let sshd = Sshd::start().expect("sshd starts");
    let banner = unique_marker("banner");
    std::fs::write(sshd.home().join(".bashrc"), format!("echo {banner}\n")).expect("a .bashrc");
    let output = run(&sshd, &sshd.ssh_command(), "true");
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), format!("{banner}\n"));
    // It is this HOME that bash read it from, not the machine's.
    let output = run(&sshd, &sshd.ssh_command(), "echo \"$HOME\"");
    assert_eq!(
        text(&output.stdout),
        format!("{banner}\n{}\n", sshd.home().display())
    );
}

#[test]
fn an_unknown_host_key_fails_without_prompting() {
    if skip_without_sshd("an_unknown_host_key_fails") {
        return;
    }
    let sshd = Sshd::start().expect("sshd starts");
    let output = run(&sshd, &sshd.unknown_host_ssh_command(), "echo logged-in");
    let stderr = text(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("Host key verification failed"), "{stderr}");
    assert!(!text(&output.stdout).contains("logged-in"));
}

#[test]
fn a_key_not_in_authorized_keys_is_denied() {
    if skip_without_sshd("a_key_not_in_authorized_keys") {
        return;
    }
    let sshd = Sshd::start().expect("sshd starts");
    let output = run(&sshd, &sshd.refused_key_ssh_command(), "echo logged-in");
    let stderr = text(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("Permission denied (publickey)"), "{stderr}");
    assert!(!text(&output.stdout).contains("logged-in"));
}

/// The chain of parents of `pid` (up to pid 1), from `/proc/<pid>/stat`.
fn ancestors(mut pid: u32) -> Vec<u32> {
    let mut chain = Vec::new();
    while pid > 1 {
        let Some(ppid) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|stat| {
                let (_, rest) = stat.rsplit_once(')')?;
                rest.split_whitespace().nth(1)?.parse().ok()
            })
        else {
            break;
        };
        chain.push(ppid);
        pid = ppid;
    }
    chain
}

#[test]
fn drop_ends_the_server_and_every_process_started_through_it() {
    if skip_without_sshd("drop_ends_the_server") {
        return;
    }
    let sshd = Sshd::start().expect("sshd starts");
    let config = sshd.dir().join("sshd_config");
    let config = config.to_str().expect("UTF-8 path").to_owned();
    assert!(!alive_containing(&config).is_empty(), "the server runs");

    // A process that left its session and outlived it: no longer below sshd.
    let detached = unique_marker("detached");
    let output = run(
        &sshd,
        &sshd.ssh_command(),
        &format!(
            "setsid {} </dev/null >/dev/null 2>&1 &",
            marked_sleep(&detached)
        ),
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    wait_for_process(&detached, LIMIT);
    let pids = alive_containing(&detached);
    assert!(
        pids.iter()
            .all(|&pid| !ancestors(pid).contains(&sshd.pid())),
        "the detached process still descends from sshd: {pids:?}"
    );
    assert!(pids.iter().all(|pid| sshd.processes().contains(pid)));

    // A session still connected.
    let attached = unique_marker("attached");
    let mut client = Command::new("ssh")
        .args(&sshd.ssh_command()[1..])
        .args(["-T", "-o", "BatchMode=yes", "-p"])
        .arg(sshd.port().to_string())
        .arg(format!("{}@127.0.0.1", sshd.user()))
        .arg(marked_sleep(&attached))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("ssh starts");
    wait_for_process(&attached, LIMIT);

    drop(sshd);
    assert_no_survivor(&detached, Duration::from_secs(5));
    assert_no_survivor(&attached, Duration::from_secs(5));
    assert_no_survivor(&config, Duration::from_secs(5));
    // The connection is gone, so the client ends too.
    let deadline = Instant::now() + LIMIT;
    while client.try_wait().expect("wait for ssh").is_none() {
        assert!(Instant::now() < deadline, "ssh still runs after the drop");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        !std::path::Path::new(&config).exists(),
        "the directory is removed"
    );
}

#[test]
fn dropping_one_instance_leaves_another_alone() {
    if skip_without_sshd("dropping_one_instance") {
        return;
    }
    let first = Sshd::start().expect("sshd starts");
    let second = Sshd::start().expect("a second sshd starts");
    assert_ne!(first.port(), second.port());
    let marker = unique_marker("second");
    let output = run(
        &second,
        &second.ssh_command(),
        &format!(
            "setsid {} </dev/null >/dev/null 2>&1 &",
            marked_sleep(&marker)
        ),
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    wait_for_process(&marker, LIMIT);
    drop(first);
    assert!(
        !alive_containing(&marker).is_empty(),
        "the second's process was killed"
    );
    let output = run(&second, &second.ssh_command(), "echo still-here");
    assert_eq!(text(&output.stdout), "still-here\n");
    drop(second);
    assert_no_survivor(&marker, Duration::from_secs(5));
}
