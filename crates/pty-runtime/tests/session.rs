//! PTY sessions on real pseudo-terminals with real shells and programs.

use std::time::Duration;

use agentsh_output_sink::{OutputSink, SinkOptions};
use agentsh_process::shell::ShellSpec;
use agentsh_pty_runtime::{KeyAction, PtyRun, TerminalSize, key_sequence};

use crate::util::{PROCESSES, alive_with_arg, command, open_fds, run, runtime, sink, wait_until};

#[test]
fn tty_is_a_pseudo_terminal() {
    run(async {
        let result = PtyRun::start(command("tty"), sink()).wait().await;
        let out = &result.summary.output;
        let number = out
            .strip_prefix("/dev/pts/")
            .and_then(|rest| rest.strip_suffix('\n'))
            .unwrap_or_else(|| panic!("not a pts path: {out:?}"));
        assert!(number.parse::<u32>().is_ok(), "{out:?}");
        assert_eq!(result.exit_code, Some(0));
        assert!(!result.cancelled && !result.timed_out);
    });
}

#[test]
fn stty_size_follows_resize_clamped() {
    run(async {
        let session = PtyRun::start(
            command("stty size; read _; stty size; read _; stty size"),
            sink(),
        );
        let terminal = session.terminal().clone();
        wait_until("the first size", || terminal.contents().contains("40 120")).await;
        assert_eq!(
            session.resize(100, 30),
            TerminalSize {
                cols: 100,
                rows: 30
            }
        );
        assert!(session.write_input(b"\r"));
        wait_until("the second size", || terminal.contents().contains("30 100")).await;
        assert_eq!(
            session.resize(5, 1000),
            TerminalSize {
                cols: 20,
                rows: 200
            }
        );
        assert!(session.write_input(b"\r"));
        let result = session.wait().await;
        assert_eq!(result.summary.output, "40 120\n\n30 100\n\n200 20\n");
        assert_eq!(
            terminal.size(),
            TerminalSize {
                cols: 20,
                rows: 200
            }
        );
        assert_eq!(result.exit_code, Some(0));
    });
}

#[test]
fn a_prompt_is_answered_through_write_input() {
    run(async {
        let session = PtyRun::start(command(r#"read -p 'name? ' n; echo "hi $n""#), sink());
        let terminal = session.terminal().clone();
        wait_until("the prompt", || terminal.contents() == "name? ").await;
        assert!(session.write_input(b"bob\r"));
        let result = session.wait().await;
        assert_eq!(result.summary.output, "name? bob\nhi bob\n");
        assert_eq!(result.exit_code, Some(0));
        assert_eq!(terminal.contents(), "name? bob\nhi bob");
    });
}

/// Counts `needle` in `haystack`.
fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

#[test]
fn arrows_follow_the_programs_application_cursor_mode() {
    run(async {
        // The program switches application-cursor mode on, reads two keys raw and dumps them,
        // switches it off, reads one more.
        let script = r"printf '\033[?1h'; stty raw -echo; printf 'READY1\n'
            head -c 3 | od -An -tx1; head -c 3 | od -An -tx1
            printf '\033[?1l'; printf 'READY2\n'
            head -c 3 | od -An -tx1; stty sane";
        let session = PtyRun::start(command(script), sink());
        let terminal = session.terminal().clone();
        wait_until("raw mode", || {
            terminal.contents().contains("READY1") && terminal.application_cursor()
        })
        .await;
        // Up as a Kitty event, then as the legacy sequence.
        assert_eq!(
            session.send_keys(b"\x1b[1;1:1A"),
            KeyAction::Forward(b"\x1bOA".to_vec())
        );
        wait_until("the first dump", || {
            count(&terminal.contents(), "1b 4f 41") == 1
        })
        .await;
        assert_eq!(
            session.send_keys(b"\x1b[A"),
            KeyAction::Forward(b"\x1bOA".to_vec())
        );
        wait_until("mode off", || {
            terminal.contents().contains("READY2") && !terminal.application_cursor()
        })
        .await;
        assert_eq!(
            session.send_keys(b"\x1b[1;1:1A"),
            KeyAction::Forward(b"\x1b[A".to_vec())
        );
        let result = session.wait().await;
        let out = result.summary.output;
        assert_eq!(count(&out, " 1b 4f 41\n"), 2, "{out:?}");
        assert_eq!(count(&out, " 1b 5b 41\n"), 1, "{out:?}");
        assert_eq!(result.exit_code, Some(0));
    });
}

#[test]
fn named_keys_follow_the_programs_application_cursor_mode() {
    run(async {
        let script = r#"printf '\033[?1h'; printf 'READY\n'
            IFS= read -r line; printf '%s' "$line" | od -An -tx1"#;
        let session = PtyRun::start(command(script), sink());
        let terminal = session.terminal().clone();
        wait_until("application-cursor mode", || {
            terminal.contents().contains("READY") && terminal.application_cursor()
        })
        .await;
        let keys = key_sequence(&["Up", "Enter"], terminal.key_modes()).expect("known keys");
        assert_eq!(keys, b"\x1bOA\r");
        assert!(session.write_input(&keys));
        let result = session.wait().await;
        assert!(
            result.summary.output.ends_with("\n 1b 4f 41\n"),
            "{:?}",
            result.summary.output
        );
        assert_eq!(result.exit_code, Some(0));
    });
}

#[test]
fn esc_is_forwarded_to_less_and_ctrl_bracket_kills_it() {
    run(async {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("pager-input.txt");
        let text = (1..=300)
            .map(|i| format!("line {i}\n"))
            .collect::<Vec<_>>()
            .concat();
        std::fs::write(&file, text).expect("write");
        let path = file.to_str().expect("utf-8 path").to_owned();
        // The hardened LESS=FRX would quit at once (F) and skip the alternate screen (X).
        let session = PtyRun::start(command(&format!("LESS=R less '{path}'")), sink());
        let terminal = session.terminal().clone();
        wait_until("less on the alternate screen", || {
            terminal.alternate_screen() && terminal.contents().contains("line 1\n")
        })
        .await;
        assert_eq!(
            session.send_keys(b"\x1b"),
            KeyAction::Forward(b"\x1b".to_vec())
        );
        // less is still there and takes keys: ESC then G goes to the end.
        assert_eq!(session.send_keys(b"G"), KeyAction::Forward(b"G".to_vec()));
        wait_until("the end of the file", || {
            terminal.contents().contains("line 300")
        })
        .await;
        assert!(!alive_with_arg(&path).is_empty(), "less is running");
        assert_eq!(session.send_keys(b"\x1d"), KeyAction::Kill);
        let result = session.wait().await;
        assert!(result.cancelled && !result.timed_out);
        assert_eq!(result.exit_code, None);
        assert!(
            result
                .annotated_output()
                .starts_with("[Command cancelled]\n")
        );
        assert_eq!(alive_with_arg(&path), Vec::<u32>::new());
    });
}

#[test]
fn esc_kills_outside_the_alternate_screen() {
    run(async {
        let session = PtyRun::start(command("echo ready; sleep 100.7719"), sink());
        let terminal = session.terminal().clone();
        wait_until("sleep and its greeting", || {
            !alive_with_arg("100.7719").is_empty() && terminal.contents() == "ready"
        })
        .await;
        assert_eq!(session.send_keys(b"\x1b[27u"), KeyAction::Kill);
        let result = session.wait().await;
        assert!(result.cancelled);
        assert_eq!(result.annotated_output(), "[Command cancelled]\nready\n");
        assert_eq!(alive_with_arg("100.7719"), Vec::<u32>::new());
    });
}

#[test]
fn timeout_ends_the_whole_tree_including_setsid_children() {
    run(async {
        let mut cmd = command("setsid sleep 100.7714 & sleep 100.7713");
        cmd.timeout = Duration::from_secs(4);
        let session = PtyRun::start(cmd, sink());
        let started = std::time::Instant::now();
        wait_until("both sleeps", || {
            !alive_with_arg("100.7713").is_empty() && !alive_with_arg("100.7714").is_empty()
        })
        .await;
        let result = session.wait().await;
        assert!(started.elapsed() < Duration::from_secs(20));
        assert!(result.timed_out && result.cancelled);
        assert_eq!(result.exit_code, None);
        assert_eq!(
            result.annotated_output(),
            "[Command timed out after 4 seconds]\n"
        );
        assert_eq!(alive_with_arg("100.7713"), Vec::<u32>::new());
        assert_eq!(alive_with_arg("100.7714"), Vec::<u32>::new());
    });
}

#[test]
fn kill_ends_the_whole_tree_including_setsid_children() {
    run(async {
        let session = PtyRun::start(command("setsid sleep 100.7716 & sleep 100.7715"), sink());
        let controller = session.controller();
        let waiting = tokio::spawn(session.wait());
        wait_until("both sleeps", || {
            !alive_with_arg("100.7715").is_empty() && !alive_with_arg("100.7716").is_empty()
        })
        .await;
        controller.kill();
        let result = waiting.await.expect("joined");
        assert!(result.cancelled && !result.timed_out);
        assert_eq!(result.exit_code, None);
        assert_eq!(result.annotated_output(), "[Command cancelled]\n");
        assert_eq!(alive_with_arg("100.7715"), Vec::<u32>::new());
        assert_eq!(alive_with_arg("100.7716"), Vec::<u32>::new());
        // Input after the end is ignored.
        assert!(controller.has_exited());
        assert!(!controller.write_input(b"ignored\r"));
    });
}

#[test]
fn what_the_command_leaves_behind_is_ended_when_its_shell_exits() {
    run(async {
        let dir = tempfile::tempdir().expect("tempdir");
        let flag = dir.path().join("started");
        let flag = flag.to_str().expect("utf-8");
        // A background job that ignores the hang-up and SIGTERM: only SIGKILL ends it.
        let script = format!(
            "(trap '' HUP TERM; touch '{flag}'; exec sleep 100.7717) & \
             while [ ! -e '{flag}' ]; do sleep 0.01; done; echo started"
        );
        let result = PtyRun::start(command(&script), sink()).wait().await;
        assert_eq!(result.summary.output, "started\n");
        assert_eq!(result.exit_code, Some(0));
        assert_eq!(alive_with_arg("100.7717"), Vec::<u32>::new());
    });
}

#[test]
fn dropping_a_session_kills_its_command() {
    run(async {
        let session = PtyRun::start(command("sleep 100.7720"), sink());
        wait_until("sleep", || !alive_with_arg("100.7720").is_empty()).await;
        drop(session);
        wait_until("sleep to end", || alive_with_arg("100.7720").is_empty()).await;
    });
}

#[test]
fn exit_codes() {
    run(async {
        for (script, code) in [
            ("exit 3", 3),
            ("kill -9 $$", 137),
            ("true", 0),
            ("false", 1),
        ] {
            let result = PtyRun::start(command(script), sink()).wait().await;
            assert_eq!(result.exit_code, Some(code), "{script}");
            assert!(!result.cancelled, "{script}");
        }
    });
}

#[test]
fn progress_and_colours_come_out_clean_and_the_screen_shows_the_final_state() {
    run(async {
        let script = r"printf 'progress 10%%\rprogress 50%%\rprogress 100%%\n'
            printf '\033[31mred\033[0m \033[1mdone\033[0m\n'";
        let session = PtyRun::start(command(script), sink());
        let terminal = session.terminal().clone();
        let result = session.wait().await;
        assert_eq!(result.summary.output, "progress 100%\nred done\n");
        assert_eq!(result.summary.total_lines, 2);
        assert_eq!(terminal.rows()[..3], ["progress 100%", "red done", ""]);
        terminal.with_screen(|screen| {
            let red = screen.cell(1, 0).expect("cell");
            assert_eq!(red.fgcolor(), agentsh_pty_runtime::vt100::Color::Idx(1));
            assert!(screen.cell(1, 4).expect("cell").bold());
            assert!(!screen.cell(0, 0).expect("cell").bold());
        });
    });
}

#[test]
fn a_start_failure_is_a_pty_error_line_with_no_exit_code() {
    run(async {
        let mut cmd = command("echo never");
        cmd.shell = ShellSpec::from_path("/nonexistent/agentsh-test-shell");
        let session = PtyRun::start(cmd, sink());
        let controller = session.controller();
        let result = session.wait().await;
        assert_eq!(
            result.summary.output,
            "PTY error: cannot start /nonexistent/agentsh-test-shell: No such file or directory (os error 2)\n"
        );
        assert_eq!(result.exit_code, None);
        assert!(!result.cancelled && !result.timed_out);
        assert!(!controller.write_input(b"x"));

        let mut cmd = command("echo never");
        cmd.cwd = "/nonexistent/agentsh-test-dir".into();
        let result = PtyRun::start(cmd, sink()).wait().await;
        let out = &result.summary.output;
        assert!(out.starts_with("PTY error: cannot start "), "{out:?}");
        assert!(
            out.contains("working directory /nonexistent/agentsh-test-dir"),
            "{out:?}"
        );
        assert_eq!(result.exit_code, None);
    });
}

#[test]
fn hardened_environment_with_a_256_colour_term() {
    run(async {
        let mut cmd =
            command(r#"echo "$TERM $PAGER $GIT_EDITOR ${COLUMNS-none} ${LINES-none} $EXTRA""#);
        let mut base: Vec<_> = std::env::vars_os().collect();
        base.push(("COLUMNS".into(), "999".into()));
        base.push(("LINES".into(), "7".into()));
        base.push(("TERM".into(), "dumb".into()));
        cmd.base_env = Some(base);
        cmd.env.insert("EXTRA".into(), "extra".into());
        let result = PtyRun::start(cmd, sink()).wait().await;
        assert_eq!(
            result.summary.output,
            "xterm-256color cat true none none extra\n"
        );
    });
}

#[test]
fn the_snapshot_is_sourced_and_the_cwd_and_prefix_apply() {
    run(async {
        let dir = tempfile::tempdir().expect("tempdir");
        let snapshot = dir.path().join("snapshot.sh");
        std::fs::write(
            &snapshot,
            "shopt -s expand_aliases\nalias greet='echo from-snapshot'\nhello() { echo fn; }\n",
        )
        .expect("write");
        let mut cmd = command("greet; hello; pwd");
        cmd.snapshot = Some(snapshot);
        cmd.cwd = dir.path().to_owned();
        let result = PtyRun::start(cmd, sink()).wait().await;
        let cwd = dir.path().canonicalize().expect("canonical");
        assert_eq!(
            result.summary.output,
            format!("from-snapshot\nfn\n{}\n", cwd.display())
        );

        let mut cmd = command(r#"sh -c 'echo "prefixed=$PREFIXED"'"#);
        cmd.prefix = Some("env PREFIXED=1".into());
        let result = PtyRun::start(cmd, sink()).wait().await;
        assert_eq!(result.summary.output, "prefixed=1\n");
    });
}

#[test]
fn zsh_and_sh_run_commands_too() {
    run(async {
        for shell in ["/bin/sh", "/usr/bin/zsh", "/bin/zsh"] {
            if !std::path::Path::new(shell).exists() {
                continue;
            }
            let mut cmd = command("set -- a b; echo \"$# $1\"; tty >/dev/null && echo tty; exit 4");
            cmd.shell = ShellSpec::from_path(shell);
            let result = PtyRun::start(cmd, sink()).wait().await;
            assert_eq!(result.summary.output, "2 a\ntty\n", "{shell}");
            assert_eq!(result.exit_code, Some(4), "{shell}");
        }
    });
}

#[test]
fn cursor_position_queries_are_answered() {
    run(async {
        let script = r#"stty -echo; printf 'ab\033[6n'; IFS= read -r -d R reply; stty echo; echo " pos=${reply#*[}""#;
        let result = PtyRun::start(command(script), sink()).wait().await;
        assert_eq!(result.summary.output, "ab pos=1;3\n");
    });
}

#[test]
fn a_satisfied_head_capture_stops_the_command_with_status_zero() {
    run(async {
        let sink = OutputSink::new(SinkOptions {
            head_lines: Some(3),
            ..SinkOptions::default()
        });
        let (result, sink) = PtyRun::start(command("yes line.7718"), sink)
            .wait_with_sink()
            .await;
        assert_eq!(result.exit_code, Some(0));
        assert!(!result.cancelled);
        assert_eq!(sink.head_text(), Some("line.7718\nline.7718\nline.7718\n"));
        assert_eq!(alive_with_arg("line.7718"), Vec::<u32>::new());
    });
}

#[test]
fn two_hundred_sessions_leave_no_descriptor_behind() {
    let _exclusive = PROCESSES
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let runtime = runtime();
    let one_round = |i: usize| async move {
        let mut cmd = command("echo hi");
        match i % 4 {
            0 => cmd.shell = ShellSpec::from_path("/nonexistent/agentsh-test-shell"),
            1 => cmd.command = "sleep 100.7721".into(),
            2 => cmd.command = "read x; echo got $x".into(),
            _ => {}
        }
        let session = PtyRun::start(cmd, sink());
        match i % 4 {
            1 => session.kill(),
            2 => {
                session.write_input(b"it\r");
            }
            _ => {}
        }
        session.wait().await
    };
    // Warm up: the spawner thread, the runtime's descriptors.
    runtime.block_on(async {
        for i in 0..4 {
            one_round(i).await;
        }
    });
    let before = open_fds();
    runtime.block_on(async {
        for i in 0..200 {
            let result = one_round(i).await;
            if i % 4 == 2 {
                assert_eq!(result.summary.output, "it\ngot it\n");
            }
        }
    });
    assert_eq!(open_fds(), before);
    assert_eq!(alive_with_arg("100.7721"), Vec::<u32>::new());
}

#[test]
fn flooding_output_cannot_starve_the_timeout() {
    run(async {
        let mut cmd = command("yes flood.7723");
        cmd.timeout = Duration::from_secs(1);
        let started = std::time::Instant::now();
        let session = PtyRun::start(cmd, sink());
        let terminal = session.terminal().clone();
        let result = session.wait().await;
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{:?}",
            started.elapsed()
        );
        assert!(result.timed_out);
        assert!(result.summary.truncated);
        let out = &result.summary.output;
        let tail: Vec<&str> = out.lines().rev().skip(1).take(100).collect();
        assert!(
            tail.iter().all(|line| *line == "flood.7723"),
            "{:?}",
            &out[out.len() - 200..]
        );
        assert_eq!(alive_with_arg("flood.7723"), Vec::<u32>::new());
        assert!(
            terminal
                .rows()
                .iter()
                .filter(|row| *row == "flood.7723")
                .count()
                >= 38
        );
    });
}

/// Containment has no single point of failure: a PTY command that kills its
/// supervisor ends with everything it started, in the run with cgroups (where the machine has
/// them) and in a copy of this binary without (agentsh as subreaper).
#[test]
fn killing_the_pty_supervisor_leaves_no_survivor() {
    let (a, b) = (
        format!("100.61{}", std::process::id()),
        format!("100.62{}", std::process::id()),
    );
    run(async {
        let started = std::time::Instant::now();
        let result = PtyRun::start(
            command(&format!(
                "(setsid sleep {a} &); sleep 0.2; kill -9 $PPID; sleep {b}"
            )),
            sink(),
        )
        .wait()
        .await;
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the call waited for its sleep"
        );
        assert_eq!(result.exit_code, None, "{result:?}");
        // The promise is within 1 s; the bound is only generous.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while !(alive_with_arg(&a).is_empty() && alive_with_arg(&b).is_empty())
            && std::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(
            (alive_with_arg(&a), alive_with_arg(&b)),
            (vec![], vec![]),
            "left behind"
        );
    });
    agentsh_test_support::rerun_with_env(
        "session::killing_the_pty_supervisor_leaves_no_survivor",
        agentsh_process::NO_CGROUP_VAR,
    );
}
