//! Stopping and State after stopping: the whole tree ends, nothing more of the
//! command runs, the shell keeps its state when it can.

use std::time::Duration;

use agentsh_process::shell::ShellSpec;
use agentsh_protocol::{CANCELLED_ANNOTATION, timeout_annotation};
use agentsh_shell_executor::ShellExecutor;

use crate::common::{
    alive_with, executor, path_str, request, run, run_req, run_with_timeout, runtime, session,
    tempdir, unique, wait_until, with_session,
};

const ONE_SECOND: Duration = Duration::from_secs(1);
/// Every process of a stopped command is gone within this bound after the result.
const GONE_WITHIN: Duration = Duration::from_secs(5);

/// Runs `command` (with `{A}`, `{B}` replaced by unique sleep arguments and `{MARK}` by a file
/// path) under a 1 s timeout and checks the result, the processes and the file.
async fn check_stopped(exec: &ShellExecutor, name: &str, template: &str) {
    let s = session(name);
    let dir = tempdir();
    let mark = dir.path().join("MARK");
    let (a, b) = (unique("100.1"), unique("100.2"));
    let command = template
        .replace("{A}", &a)
        .replace("{B}", &b)
        .replace("{MARK}", &path_str(&mark));
    let (result, took) = run_with_timeout(exec, &s, &command, ONE_SECOND).await;
    assert!(
        result.timed_out && result.cancelled,
        "{command}: {result:?}"
    );
    assert_eq!(result.exit_code, None, "{command}");
    assert!(
        result
            .annotated_output()
            .starts_with(&format!("[{}]\n", timeout_annotation(1.0))),
        "{command}: {result:?}"
    );
    assert!(
        took < Duration::from_secs(4),
        "{command}: the call took {took:?}"
    );
    assert!(
        wait_until(GONE_WITHIN, || alive_with(&a).is_empty()
            && alive_with(&b).is_empty()),
        "{command}: processes survived: {:?} {:?}",
        alive_with(&a),
        alive_with(&b)
    );
    assert!(
        !result.session_restarted,
        "{command}: the shell should be kept"
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(!mark.exists(), "{command}: the rest of the command ran");
    let next = run(exec, &s, "echo alive").await;
    assert_eq!(next.summary.output, "alive\n", "{command}");
}

#[test]
fn plain_and_background_sleeps() {
    runtime().block_on(async {
        let exec = executor();
        check_stopped(&exec, "stop-plain", "sleep {A}").await;
        check_stopped(&exec, "stop-bg", "sleep {A} & sleep {B}").await;
        check_stopped(&exec, "stop-pipe", "sleep {A} | cat").await;
    });
}

#[test]
fn escapes_by_setsid_double_fork_and_cleared_environment() {
    runtime().block_on(async {
        let exec = executor();
        check_stopped(&exec, "stop-setsid", "(setsid sleep {A} &); sleep {B}").await;
        check_stopped(
            &exec,
            "stop-env-i",
            "(env -i setsid sh -c 'sleep {A}' &); sleep {B}",
        )
        .await;
        check_stopped(&exec, "stop-nohup", "nohup sh -c 'sleep {A}' & sleep {B}").await;
    });
}

#[test]
fn term_ignoring_processes_get_killed() {
    runtime().block_on(async {
        let exec = executor();
        check_stopped(&exec, "stop-trap", "sh -c 'trap \"\" TERM; sleep {A}'").await;
    });
}

#[test]
fn nothing_more_of_the_command_runs() {
    runtime().block_on(async {
        let exec = executor();
        check_stopped(&exec, "stop-list", "sleep {A}; touch {MARK}").await;
        check_stopped(
            &exec,
            "stop-fn",
            "f() { sleep {A}; touch {MARK}; }; f; touch {MARK}",
        )
        .await;
        check_stopped(
            &exec,
            "stop-loop",
            "for i in 1 2 3; do sleep {A}; done; touch {MARK}",
        )
        .await;
        check_stopped(
            &exec,
            "stop-subshell",
            "(sleep {A}; touch {MARK}); touch {MARK}",
        )
        .await;
    });
}

#[test]
fn state_survives_a_timeout() {
    with_session("stop-state", async |exec, s| {
        run(&exec, &s, "export A=1; cd /").await;
        let sleeper = unique("100.3");
        let (stopped, _) =
            run_with_timeout(&exec, &s, &format!("sleep {sleeper}"), ONE_SECOND).await;
        assert!(stopped.timed_out);
        assert!(!stopped.session_restarted);
        let after = run(&exec, &s, "echo $A").await;
        assert_eq!(after.summary.output, "1\n");
        assert!(!after.session_restarted);
    });
}

#[test]
fn a_builtin_loop_replaces_the_shell() {
    with_session("stop-busy", async |exec, s| {
        run(&exec, &s, "export A=1").await;
        let (stopped, took) = run_with_timeout(&exec, &s, "while :; do :; done", ONE_SECOND).await;
        assert!(stopped.timed_out && stopped.cancelled);
        assert!(stopped.session_restarted, "{stopped:?}");
        assert!(took < Duration::from_secs(4), "{took:?}");
        let after = run(&exec, &s, "echo \"[${A-}]\"").await;
        assert_eq!(after.summary.output, "[]\n", "a fresh shell");
        assert_eq!(after.exit_code, Some(0));
    });
}

#[test]
fn abort_cancels_with_its_own_annotation() {
    with_session("stop-abort", async |exec, s| {
        let sleeper = unique("100.4");
        let req = request(
            &format!("echo started; sleep {sleeper}"),
            &s,
            Duration::from_secs(60),
        );
        let cancel = req.cancel.clone();
        // Cancelled once its `sleep` runs (so `started` was printed), however long the shell
        // took to start.
        let running = sleeper.clone();
        tokio::spawn(async move {
            while alive_with(&running).is_empty() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            cancel.cancel();
        });
        let result = run_req(&exec, req).await;
        assert!(result.cancelled && !result.timed_out, "{result:?}");
        // bash reports the foreground job it lost ("Terminated"); nothing else follows.
        let annotated = result.annotated_output();
        let output = annotated.as_ref();
        assert!(
            [
                format!("[{CANCELLED_ANNOTATION}]\nstarted\n"),
                format!("[{CANCELLED_ANNOTATION}]\nstarted\nTerminated\n")
            ]
            .iter()
            .any(|want| want == output),
            "{output:?}"
        );
        assert!(wait_until(GONE_WITHIN, || alive_with(&sleeper).is_empty()));
        assert!(!result.session_restarted);

        // Cancelled before it starts: the command never runs.
        let dir = tempdir();
        let mark = dir.path().join("MARK");
        let req = request(
            &format!("touch {}", path_str(&mark)),
            &s,
            Duration::from_secs(60),
        );
        req.cancel.cancel();
        let result = run_req(&exec, req).await;
        assert!(result.cancelled);
        std::thread::sleep(Duration::from_millis(200));
        assert!(!mark.exists());
        assert_eq!(run(&exec, &s, "echo ok").await.summary.output, "ok\n");
    });
}

#[test]
fn sh_is_replaced_after_a_stop_and_runs_nothing_more() {
    with_session("stop-sh", async |exec, s| {
        let dir = tempdir();
        let mark = dir.path().join("MARK");
        let sleeper = unique("100.5");
        let mut req = request(
            &format!("X=1; sleep {sleeper}; touch {}", path_str(&mark)),
            &s,
            ONE_SECOND,
        );
        req.shell = ShellSpec::from_path("/bin/sh");
        let result = run_req(&exec, req).await;
        assert!(result.timed_out);
        assert!(result.session_restarted);
        assert!(wait_until(GONE_WITHIN, || alive_with(&sleeper).is_empty()));
        std::thread::sleep(Duration::from_millis(300));
        assert!(!mark.exists());
        let mut req = request("echo \"[${X-}]\"", &s, Duration::from_secs(10));
        req.shell = ShellSpec::from_path("/bin/sh");
        assert_eq!(run_req(&exec, req).await.summary.output, "[]\n");
    });
}

#[test]
fn dropping_the_call_ends_the_command_and_the_shell() {
    with_session("stop-dropped", async |exec, s| {
        let dir = tempdir();
        let mark = dir.path().join("MARK");
        let sleeper = unique("100.45");
        run(&exec, &s, "export KEPT=1").await;
        let command = format!("sleep {sleeper}; touch {}", path_str(&mark));
        // Boxed: dropping it below drops the call itself.
        let mut call = Box::pin(run_req(
            &exec,
            request(&command, &s, Duration::from_secs(60)),
        ));
        // Dropped while its `sleep` runs.
        let deadline = std::time::Instant::now() + GONE_WITHIN * 4;
        while alive_with(&sleeper).is_empty() {
            assert!(
                tokio::time::timeout(Duration::from_millis(20), call.as_mut())
                    .await
                    .is_err(),
                "the call ended before its sleep ran"
            );
            assert!(std::time::Instant::now() < deadline, "the sleep never ran");
        }
        drop(call);
        assert!(wait_until(GONE_WITHIN, || alive_with(&sleeper).is_empty()));
        std::thread::sleep(Duration::from_millis(300));
        assert!(!mark.exists());
        let next = run(&exec, &s, "echo \"[${KEPT-}]\"").await;
        assert_eq!(next.summary.output, "[]\n", "a fresh shell");
    });
}
