//! Persistent shells: state persists per key, keys are isolated, cwd is per call.

use std::time::Duration;

use agentsh_output_sink::{OutputSink, SinkOptions};
use agentsh_process::env::{TerminalKind, hardened_env};
use agentsh_rc_snapshot::snapshot_for;

use crate::common::{
    bash, executor, path_str, request, run, run_req, runtime, session, tempdir, with_session,
};

#[test]
fn variables_functions_and_arrays_persist() {
    with_session("state", async |exec, s| {
        let first = run(
            &exec,
            &s,
            "export A=1; f(){ echo hi; }; declare -a arr=(x y); declare d=4",
        )
        .await;
        assert_eq!(first.exit_code, Some(0));
        assert_eq!(first.summary.output, "");
        let second = run(&exec, &s, "echo $A; f; echo ${arr[1]} $d").await;
        assert_eq!(second.summary.output, "1\nhi\ny 4\n");
        assert_eq!(second.exit_code, Some(0));
        assert!(!second.session_restarted);
    });
}

#[test]
fn cwd_is_applied_per_call() {
    with_session("cwd", async |exec, s| {
        let (one, two) = (tempdir(), tempdir());
        let mut req = request("pwd; cd /; pwd", &s, Duration::from_secs(10));
        req.cwd = one.path().to_path_buf();
        assert_eq!(
            run_req(&exec, req).await.summary.output,
            format!("{}\n/\n", path_str(one.path()))
        );
        let mut req = request("pwd", &s, Duration::from_secs(10));
        req.cwd = two.path().to_path_buf();
        assert_eq!(
            run_req(&exec, req).await.summary.output,
            format!("{}\n", path_str(two.path()))
        );
        let mut req = request("pwd", &s, Duration::from_secs(10));
        req.cwd = one.path().join("missing");
        let missing = run_req(&exec, req).await;
        assert_eq!(missing.exit_code, Some(1));
        assert!(
            missing.summary.output.contains("No such file or directory"),
            "{missing:?}"
        );
    });
}

#[test]
fn options_persist_but_errexit_is_reset() {
    with_session("opts", async |exec, s| {
        run(
            &exec,
            &s,
            "shopt -s nullglob; set -o pipefail; set -e; set -u",
        )
        .await;
        let after = run(&exec, &s, "shopt -q nullglob && echo nullglob; false | true; echo pipefail=$?; false; echo survived").await;
        assert_eq!(after.summary.output, "nullglob\npipefail=1\nsurvived\n");
        assert!(!after.session_restarted);
    });
}

#[test]
fn positional_parameters_are_empty_and_streams_are_merged() {
    with_session("misc", async |exec, s| {
        let out = run(
            &exec,
            &s,
            "echo \"[$#][${1-}]\"; echo out; echo err >&2; echo \"$AGENTSH_CMD\" | grep -c .",
        )
        .await;
        assert_eq!(out.summary.output, "[0][]\nout\nerr\n1\n");
        let syntax = run(&exec, &s, "echo (").await;
        assert_eq!(syntax.exit_code, Some(2));
        assert!(syntax.summary.output.contains("syntax error"), "{syntax:?}");
        assert_eq!(
            run(&exec, &s, "echo still here").await.summary.output,
            "still here\n"
        );
    });
}

#[test]
fn the_hardened_environment_reaches_commands() {
    with_session("env", async |exec, s| {
        let mut req = request(
            "echo $GIT_PAGER $TERM $NO_COLOR $MY_VAR $PAGER",
            &s,
            Duration::from_secs(10),
        );
        req.env.insert("MY_VAR".into(), "mine".into());
        req.env.insert("PAGER".into(), "less".into());
        assert_eq!(
            run_req(&exec, req).await.summary.output,
            "cat dumb 1 mine less\n"
        );
    });
}

#[test]
fn prefix_is_prepended() {
    with_session("prefix", async |exec, s| {
        let mut req = request("echo hello", &s, Duration::from_secs(10));
        req.prefix = Some("env PREFIXED=yes sh -c 'echo $PREFIXED; \"$@\"' sh".into());
        assert_eq!(run_req(&exec, req).await.summary.output, "yes\nhello\n");
    });
}

#[test]
fn rc_snapshot_brings_aliases_functions_and_options() {
    runtime().block_on(async {
        let home = tempdir();
        let cache = tempdir();
        let fixture =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/rc/bashrc");
        std::fs::copy(&fixture, home.path().join(".bashrc")).expect("copy fixture");
        let shell = bash();
        let base = vec![
            ("PATH".into(), std::env::var_os("PATH").unwrap_or_default()),
            ("HOME".into(), home.path().as_os_str().to_owned()),
        ];
        let env = hardened_env(
            base.clone(),
            &std::collections::BTreeMap::default(),
            TerminalKind::Pipe,
        );
        let snapshot = snapshot_for(&shell, home.path(), cache.path(), &env)
            .expect("snapshot made")
            .expect("bash has a snapshot");
        let mut config = crate::common::config();
        config.base_env = Some(base);
        let exec = agentsh_shell_executor::ShellExecutor::new(config);
        let s = session("rc");
        let mut req = request(
            "say hi; greet bob; is_number 42 && echo number; [[ -o noclobber ]] && echo noclobber; \
             [[ -o errexit ]] || echo no-errexit; type -t rm || echo rm-not-aliased",
            &s,
            Duration::from_secs(10),
        );
        req.snapshot = Some(snapshot.path.clone());
        let result = run_req(&exec, req).await;
        assert_eq!(
            result.summary.output, "<hi>\nhello bob\nnumber\nnoclobber\nno-errexit\nfile\n",
            "{result:?}"
        );
    });
}

#[test]
fn user_options_and_redirections_do_not_disturb_the_loop() {
    with_session("loop-proof", async |exec, s| {
        run(&exec, &s, "set -u -C -x; IFS=:; trap - USR1").await;
        // xtrace shows the user's own commands, never the loop's (one `+` more than under
        // `bash -c`: the command is a sourced file).
        assert_eq!(
            run(&exec, &s, "echo hi").await.summary.output,
            "++ echo hi\nhi\n"
        );
        let sleeper = crate::common::unique("100.6");
        let (stopped, _) = crate::common::run_with_timeout(
            &exec,
            &s,
            &format!("sleep {sleeper}"),
            Duration::from_secs(1),
        )
        .await;
        assert!(
            stopped.timed_out && !stopped.session_restarted,
            "{stopped:?}"
        );
        assert_eq!(
            run(&exec, &s, "set +x; echo $((1+1))").await.summary.output,
            "++ set +x\n2\n"
        );
        // The loop's own variables cannot be clobbered.
        let clobber = run(&exec, &s, "__ash_private_dir=/nowhere; echo $?").await;
        assert!(
            clobber.summary.output.contains("readonly variable"),
            "{clobber:?}"
        );
        assert_eq!(run(&exec, &s, "echo still").await.summary.output, "still\n");
        // `exec` redirections inside a command are undone when it ends.
        assert_eq!(
            run(&exec, &s, "exec >/dev/null 2>&1; echo hidden")
                .await
                .summary
                .output,
            ""
        );
        assert_eq!(
            run(&exec, &s, "echo visible").await.summary.output,
            "visible\n"
        );
    });
}

/// A snapshot that exits the shell is a start-up failure of the shell, not the command's exit:
/// the call fails with an error naming the shell, and the next call starts a fresh shell.
#[test]
fn a_snapshot_that_exits_is_a_startup_error_not_the_commands_status() {
    runtime().block_on(async {
        let dir = tempdir();
        let broken = dir.path().join("broken.sh");
        std::fs::write(&broken, "exit 3\n").expect("write snapshot");
        let exec = executor();
        for shell in ["bash", "sh"] {
            let s = session(&format!("broken-snapshot-{shell}"));
            let mut req = request("echo never", &s, Duration::from_secs(10));
            req.shell = agentsh_process::shell::ShellSpec::from_path(
                crate::common::which(shell).expect("shell on PATH"),
            );
            req.snapshot = Some(broken.clone());
            let mut sink = OutputSink::new(SinkOptions::default());
            let err = exec
                .execute(req, &mut sink, None)
                .await
                .expect_err("the shell cannot start");
            assert!(
                matches!(
                    err,
                    agentsh_shell_executor::ExecError::StartupExit { code: 3, .. }
                ),
                "{shell}: {err:?}"
            );
            assert!(
                err.to_string().contains("exited while starting (status 3)"),
                "{err}"
            );
            // Without the snapshot the same session works: nothing is left of the broken shell.
            assert_eq!(run(&exec, &s, "echo fine").await.summary.output, "fine\n");
        }
    });
}

/// A snapshot that never finishes is cut at the start-up limit (10 s), the whole tree ended;
/// the command's own timeout (1 s here) only starts once the shell is ready.
#[test]
fn a_snapshot_that_hangs_is_a_startup_timeout_and_leaves_no_process() {
    runtime().block_on(async {
        let dir = tempdir();
        let hanging = dir.path().join("hanging.sh");
        let marker = crate::common::unique("100.61");
        std::fs::write(&hanging, format!("sleep {marker}\n")).expect("write snapshot");
        let exec = executor();
        let s = session("hanging-snapshot");
        let mut req = request("echo never", &s, Duration::from_secs(1));
        req.snapshot = Some(hanging);
        let mut sink = OutputSink::new(SinkOptions::default());
        let started = std::time::Instant::now();
        let err = exec
            .execute(req, &mut sink, None)
            .await
            .expect_err("the shell never becomes ready");
        let elapsed = started.elapsed();
        assert!(
            matches!(
                err,
                agentsh_shell_executor::ExecError::StartupTimeout { seconds: 10, .. }
            ),
            "{err:?}"
        );
        assert!(
            elapsed >= Duration::from_secs(10) && elapsed < Duration::from_secs(20),
            "{elapsed:?}"
        );
        assert_eq!(crate::common::alive_with(&marker), Vec::<u32>::new());
    });
}
