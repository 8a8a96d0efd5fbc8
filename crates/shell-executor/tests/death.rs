//! Shell death and agentsh dying.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::{alive_with, run, unique, wait_until, with_session};

#[test]
fn exit_kill_and_exec_report_like_a_shell_and_the_next_call_works() {
    with_session("death", async |exec, s| {
        for (command, code) in [
            ("exit 3", 3),
            ("kill -9 $$", 137),
            ("exec true", 0),
            ("set -e; false", 1),
        ] {
            run(&exec, &s, "export KEPT=yes").await;
            let result = run(&exec, &s, command).await;
            assert_eq!(result.exit_code, Some(code), "{command}: {result:?}");
            let next = run(&exec, &s, "echo \"next[${KEPT-}]\"").await;
            assert_eq!(next.summary.output, "next[]\n", "{command}: a fresh shell");
            assert_eq!(next.exit_code, Some(0));
        }
    });
}

const CHILD_ENV: &str = "AGENTSH_EXECUTOR_TEST_CHILD";

/// Re-executes this test binary as a stand-in for agentsh: it starts a shell that runs a
/// background sleep and a foreground sleep, and is then killed with SIGKILL. Within 5 s
/// nothing of the shell may be left.
#[test]
fn agentsh_killed_by_sigkill_leaves_nothing() {
    if let Some(markers) = std::env::var_os(CHILD_ENV) {
        // Child role: run the command and never return normally.
        let markers = markers.to_string_lossy().into_owned();
        let (a, b) = markers.split_once(' ').expect("two markers");
        with_session("agentsh-dies", async |exec, s| {
            run(&exec, &s, &format!("sleep {a} & sleep {b}")).await;
        });
        return;
    }
    let (a, b) = (unique("100.9"), unique("100.8"));
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args([
            "--exact",
            "death::agentsh_killed_by_sigkill_leaves_nothing",
            "--nocapture",
        ])
        .env(CHILD_ENV, format!("{a} {b}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("child starts");
    let started = wait_until(Duration::from_secs(20), || {
        !alive_with(&a).is_empty() && !alive_with(&b).is_empty()
    });
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    assert!(started, "the child never started its shell");
    assert!(
        wait_until(Duration::from_secs(5), || alive_with(&a).is_empty()
            && alive_with(&b).is_empty()),
        "left behind: {:?} {:?}",
        alive_with(&a),
        alive_with(&b)
    );
}
