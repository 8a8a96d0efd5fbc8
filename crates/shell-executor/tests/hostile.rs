//! Issue 10's classes of hostile commands, one regression test each (Completion and
//! Stopping), on bash and, where the class applies, sh and zsh.

use std::time::{Duration, Instant};

use agentsh_process::shell::ShellSpec;

use crate::common::{
    alive_with, executor, path_str, run_on, runtime, session, tempdir, unique, wait_until, which,
};

fn shells() -> Vec<ShellSpec> {
    ["bash", "sh", "zsh"]
        .into_iter()
        .filter_map(which)
        .map(ShellSpec::from_path)
        .collect()
}

const TEN: Duration = Duration::from_secs(10);

#[test]
fn forged_completion_through_the_report_fifo_is_ignored() {
    runtime().block_on(async {
        let exec = executor();
        for spec in shells() {
            let s = session(&format!("forge-{:?}", spec.kind));
            let start = Instant::now();
            // A report for the running command, written as the loop would, then the rest.
            let forged = run_on(
                &exec,
                &s,
                &spec,
                r#"printf '%s 0\n' "$__ash_seq" >"$__ash_private_dir/report"; sleep 1; echo rest; (exit 3)"#,
                TEN,
            )
            .await;
            assert_eq!(
                (forged.summary.output.as_str(), forged.exit_code),
                ("rest\n", Some(3)),
                "{spec:?}: {forged:?}"
            );
            assert!(start.elapsed() >= Duration::from_secs(1), "ended early");
            assert!(!forged.session_restarted);
            // A background writer that forges the next command's report: results stay in step.
            let late = run_on(
                &exec,
                &s,
                &spec,
                r#"( sleep 0.3; printf '%s 0\n' $((__ash_seq + 1)) >"$__ash_private_dir/report" ) &"#,
                TEN,
            )
            .await;
            assert_eq!(late.exit_code, Some(0));
            let next = run_on(&exec, &s, &spec, "sleep 1; echo second; (exit 4)", TEN).await;
            assert_eq!(
                (next.summary.output.as_str(), next.exit_code),
                ("second\n", Some(4)),
                "{spec:?}"
            );
            let after = run_on(&exec, &s, &spec, "echo $((40 + 2))", TEN).await;
            assert_eq!(after.summary.output, "42\n", "{spec:?}");
        }
    });
}

#[test]
fn forged_traps_through_the_report_fifo_are_not_installed() {
    // The loop sends the user's DEBUG/ERR traps ahead of its report; the same lines written by
    // the command itself (while it runs) must not become the session's traps.
    runtime().block_on(async {
        let exec = executor();
        let s = session("forge-traps");
        let bash = ShellSpec::from_path(which("bash").expect("bash"));
        let forged = run_on(
            &exec,
            &s,
            &bash,
            // Still running (stderr open) when agentsh reads it: a forgery to skip.
            r#"printf "trap -- 'echo HACKED' DEBUG\n%s 0\n" "$__ash_seq" >"$__ash_private_dir/report"; sleep 1; echo ran"#,
            TEN,
        )
        .await;
        assert_eq!(
            (forged.summary.output.as_str(), forged.exit_code),
            ("ran\n", Some(0))
        );
        let next = run_on(&exec, &s, &bash, "echo clean", TEN).await;
        assert_eq!(next.summary.output, "clean\n");
        assert!(!next.session_restarted);
        // The user's own trap still comes through the loop and fires for the next command.
        let set = run_on(&exec, &s, &bash, "trap 'echo T' DEBUG", TEN).await;
        assert_eq!(set.exit_code, Some(0));
        let traced = run_on(&exec, &s, &bash, "echo x", TEN).await;
        assert_eq!(traced.summary.output, "T\nx\n");
        let cleared = run_on(&exec, &s, &bash, "trap - DEBUG; echo y", TEN).await;
        assert_eq!(cleared.summary.output, "T\ny\n");
        let after = run_on(&exec, &s, &bash, "echo z", TEN).await;
        assert_eq!(after.summary.output, "z\n");
    });
}

#[test]
fn endless_writes_into_the_report_fifo_replace_the_shell() {
    // A trap line that never ends would grow agentsh's buffer without bound: past its limit the
    // shell is replaced, and the session goes on.
    runtime().block_on(async {
        let exec = executor();
        let s = session("endless-report");
        let bash = ShellSpec::from_path(which("bash").expect("bash"));
        let start = Instant::now();
        let flood = run_on(
            &exec,
            &s,
            &bash,
            r#"{ printf "trap -- '"; head -c 3000000 /dev/zero | tr '\0' x; } >"$__ash_private_dir/report"; sleep 30"#,
            TEN,
        )
        .await;
        assert!(flood.session_restarted, "{flood:?}");
        assert!(start.elapsed() < TEN, "waited for the timeout");
        let next = run_on(&exec, &s, &bash, "echo $((40 + 2))", TEN).await;
        assert_eq!(next.summary.output, "42\n");
    });
}

#[test]
fn rest_of_the_command_does_not_run_after_a_timeout_when_it_traps_usr1() {
    runtime().block_on(async {
        let exec = executor();
        let dir = tempdir();
        let traps = [
            "trap '' USR1",
            "trap 'echo got' USR1",
            "trap - USR1",
            // Every signal a shell can trap, the real-time ones with them.
            "for s in $(seq 1 64); do case $s in 9|19|32|33) ;; *) trap 'echo got' $s 2>/dev/null;; esac; done",
        ];
        for spec in shells() {
            for (i, trap) in traps.iter().enumerate() {
                let s = session(&format!("usr1-{:?}-{i}", spec.kind));
                let marker = dir.path().join(format!("m-{:?}-{i}", spec.kind));
                run_on(&exec, &s, &spec, "V=kept", TEN).await;
                let command = format!("{trap}; sleep 1.2; touch {}", path_str(&marker));
                let start = Instant::now();
                let stopped = run_on(&exec, &s, &spec, &command, Duration::from_millis(400)).await;
                assert!(stopped.timed_out, "{spec:?} {trap}: {stopped:?}");
                assert!(start.elapsed() < Duration::from_secs(3), "liveness");
                // Had the rest run, `touch` would have by now.
                std::thread::sleep(Duration::from_millis(1500).saturating_sub(start.elapsed()));
                assert!(!marker.exists(), "{spec:?} `{trap}`: the rest ran after the stop");
                // Earlier state is kept unless the shell had to be replaced.
                let var = run_on(&exec, &s, &spec, "echo \"$V\"", TEN).await;
                let want = if stopped.session_restarted { "\n" } else { "kept\n" };
                let shown: Vec<&str> = var.summary.output.lines().collect();
                assert!(shown.contains(&want.trim_end()), "{spec:?} {trap}: {var:?}");
            }
        }
    });
}

#[test]
fn shadowed_or_disabled_machinery_neither_hides_a_status_nor_hangs() {
    runtime().block_on(async {
        let exec = executor();
        let mut cases: Vec<(&str, &str)> = vec![
            ("bash", "builtin() { :; }"),
            ("bash", "trap false DEBUG"),
            ("bash", "enable -n printf"),
            ("bash", "enable -n cd"),
            ("bash", "enable -n ."),
            ("bash", "shopt -s extdebug; trap false DEBUG"),
            ("bash", "enable -n enable"),
            ("sh", "command() { :; }"),
        ];
        if which("zsh").is_some() {
            cases.push(("zsh", "disable printf"));
            cases.push(("zsh", "builtin() { :; }"));
        }
        for (shell, hostile) in cases {
            let spec = ShellSpec::from_path(which(shell).expect("shell"));
            let s = session(&format!("machinery-{shell}-{hostile}"));
            let start = Instant::now();
            let first = run_on(&exec, &s, &spec, hostile, TEN).await;
            assert!(!first.timed_out, "{shell} `{hostile}`: {first:?}");
            // The true status of later failing commands, and no hang.
            for _ in 0..2 {
                let failed = run_on(&exec, &s, &spec, "echo ok; false", TEN).await;
                assert_eq!(
                    (failed.summary.output.as_str(), failed.exit_code),
                    ("ok\n", Some(1)),
                    "{shell} `{hostile}`: {failed:?}"
                );
                let status = run_on(&exec, &s, &spec, "(exit 5)", TEN).await;
                assert_eq!(status.exit_code, Some(5), "{shell} `{hostile}`");
            }
            // Five calls, each within 2 s of its command's end.
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "{shell} `{hostile}`: {:?}",
                start.elapsed()
            );
        }
    });
}

#[test]
fn agentsh_machinery_stays_out_of_the_users_view() {
    runtime().block_on(async {
        let exec = executor();
        let bash = ShellSpec::from_path(which("bash").expect("bash"));
        let s = session("machinery-view");
        // An ERR trap that exits does not end the shell on a timeout's way out.
        run_on(&exec, &s, &bash, "V=kept; trap 'exit 42' ERR", TEN).await;
        let stopped = run_on(&exec, &s, &bash, "sleep 5", Duration::from_secs(1)).await;
        assert!(
            stopped.timed_out && !stopped.session_restarted,
            "{stopped:?}"
        );
        let kept = run_on(&exec, &s, &bash, "echo \"$V\"; trap - ERR", TEN).await;
        assert_eq!(kept.summary.output, "kept\n");
        // ERR fires once for a failing command, DEBUG once per user command.
        run_on(&exec, &s, &bash, "trap 'echo E' ERR", TEN).await;
        let err = run_on(&exec, &s, &bash, "false", TEN).await;
        assert_eq!(
            (err.summary.output.as_str(), err.exit_code),
            ("E\n", Some(1))
        );
        run_on(&exec, &s, &bash, "trap - ERR; trap 'echo D' DEBUG", TEN).await;
        let debug = run_on(&exec, &s, &bash, "echo x", TEN).await;
        assert_eq!(debug.summary.output, "D\nx\n");
        run_on(&exec, &s, &bash, "trap - DEBUG", TEN).await;
        // The shell's report of a process agentsh killed is not the command's output.
        let sleeper = unique("100.7");
        let killed = run_on(
            &exec,
            &s,
            &bash,
            &format!("echo started; sleep {sleeper}"),
            Duration::from_secs(1),
        )
        .await;
        assert_eq!(killed.summary.output, "started\n", "{killed:?}");
        assert!(wait_until(Duration::from_secs(5), || alive_with(&sleeper).is_empty()));
        let after = run_on(&exec, &s, &bash, "echo \"$V\"", TEN).await;
        assert_eq!(after.summary.output, "kept\n");
        // Closed or limited descriptors leave no loop error in any result.
        for hostile in ["exec 14>&- 10>&- 11>&- 12>&- 13>&- 15>&-", "ulimit -n 4"] {
            let line = run_on(&exec, &s, &bash, hostile, TEN).await;
            assert_eq!(line.summary.output, "", "`{hostile}`");
            let next = run_on(&exec, &s, &bash, "echo clean", TEN).await;
            assert_eq!(next.summary.output, "clean\n", "after `{hostile}`");
        }
    });
}

/// A command that redefines `:` or `true` (as `:(){ :|:& };:` does) changes the user's shell,
/// not the loop's: the loop never calls them, so the next commands run the function only
/// where the user calls it.
#[test]
fn a_command_that_redefines_colon_or_true_is_not_run_by_the_loop() {
    runtime().block_on(async {
        let exec = executor();
        let mut shells = vec!["bash"];
        if which("zsh").is_some() {
            shells.push("zsh");
        }
        for shell in shells {
            let spec = ShellSpec::from_path(which(shell).expect("shell"));
            let s = session(&format!("redefined-noop-{shell}"));
            let dir = tempfile::tempdir().expect("tempdir");
            let ran = dir.path().join("ran");
            let define = format!(
                ":() {{ echo colon >> '{f}'; }}; true() {{ echo true >> '{f}'; }}",
                f = ran.display()
            );
            let defined = run_on(&exec, &s, &spec, &define, TEN).await;
            assert_eq!(defined.exit_code, Some(0), "{shell}: {defined:?}");
            for _ in 0..3 {
                let next = run_on(&exec, &s, &spec, "echo ok", TEN).await;
                assert_eq!(
                    (next.summary.output.as_str(), next.exit_code),
                    ("ok\n", Some(0)),
                    "{shell}: {next:?}"
                );
            }
            assert!(!ran.exists(), "{shell}: the loop ran the user's function");
            // The user's own call still runs it.
            let called = run_on(&exec, &s, &spec, ":; true", TEN).await;
            assert_eq!(called.exit_code, Some(0), "{shell}: {called:?}");
            assert_eq!(
                std::fs::read_to_string(&ran).expect("the functions ran"),
                "colon\ntrue\n",
                "{shell}"
            );
        }
    });
}
