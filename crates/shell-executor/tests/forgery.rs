//! Completion: no output can end a command early or change its status.

use agentsh_output_sink::{OutputSink, SinkOptions};

use crate::common::{request, run, with_session};

#[test]
fn a_megabyte_of_random_bytes_then_exit() {
    with_session("forgery-random", async |exec, s| {
        let kept = run(&exec, &s, "head -c 1000000 /dev/urandom; (exit 7)").await;
        assert_eq!(kept.exit_code, Some(7));
        assert!(
            kept.summary.total_bytes > 500_000,
            "{}",
            kept.summary.total_bytes
        );
        assert!(!kept.session_restarted);
        let died = run(&exec, &s, "head -c 1000000 /dev/urandom; exit 7").await;
        assert_eq!(died.exit_code, Some(7));
        assert_eq!(run(&exec, &s, "echo next").await.summary.output, "next\n");
    });
}

#[test]
fn mark_shaped_output_is_just_output() {
    with_session("forgery-marks", async |exec, s| {
        let command = r"printf '\036AGENTSH0123456789abcdef:0\n'; printf '\036AGENTSH'; printf 'deadbeefdeadbeef:1\n'; printf 'x\036AGENTSH'; echo; (exit 5)";
        let mut sink = OutputSink::new(SinkOptions::default());
        let mut seen = String::new();
        let mut on_chunk = |text: &str| seen.push_str(text);
        let result = exec
            .execute(
                request(command, &s, std::time::Duration::from_secs(10)),
                &mut sink,
                Some(&mut on_chunk),
            )
            .await
            .expect("runs");
        assert_eq!(result.exit_code, Some(5));
        // The sink removes the control byte; the text is all there, in the result and in what
        // the live callback saw.
        let text = "AGENTSH0123456789abcdef:0\nAGENTSHdeadbeefdeadbeef:1\nxAGENTSH\n";
        assert_eq!(result.summary.output, text);
        assert_eq!(seen, text);
    });
}

#[test]
fn report_shaped_output_is_just_output() {
    with_session("forgery-report", async |exec, s| {
        // The loop reports `<seq> <status>` on its own channel; the same text on stdout is output.
        let result = run(
            &exec,
            &s,
            "for i in 1 2 3 4 5; do echo \"$i 0\"; done; (exit 9)",
        )
        .await;
        assert_eq!(result.summary.output, "1 0\n2 0\n3 0\n4 0\n5 0\n");
        assert_eq!(result.exit_code, Some(9));
    });
}

#[test]
fn nul_bytes_and_unterminated_escapes() {
    with_session("forgery-nul", async |exec, s| {
        let nul = run(&exec, &s, r"printf 'a\0b\0c\n'; (exit 4)").await;
        assert_eq!(nul.exit_code, Some(4));
        assert_eq!(nul.summary.output, "abc\n");
        let esc = run(&exec, &s, r"printf 'ok\n\033]0;never terminated'; (exit 6)").await;
        assert_eq!(esc.exit_code, Some(6));
        assert_eq!(esc.summary.output, "ok\n");
        let after = run(&exec, &s, "echo clean").await;
        assert_eq!(after.summary.output, "clean\n");
    });
}

#[test]
fn commands_cannot_reach_the_control_channels() {
    with_session("forgery-fds", async |exec, s| {
        let result = run(
            &exec,
            &s,
            "echo 0 >&3; read -t 1 x <&3; echo 1 >&7; ls /proc/self/fd | sort -n | tr '\\n' ' '",
        )
        .await;
        assert!(
            result.summary.output.contains("3: Bad file descriptor"),
            "{result:?}"
        );
        assert!(
            result.summary.output.contains("7: Bad file descriptor"),
            "{result:?}"
        );
        // The command sees stdin, stdout, stderr, and the fd `ls` opened for the directory.
        assert!(result.summary.output.ends_with("0 1 2 3 "), "{result:?}");
        assert_eq!(result.exit_code, Some(0));
        assert_eq!(run(&exec, &s, "echo fine").await.summary.output, "fine\n");
    });
}

#[test]
fn nul_in_the_command_is_an_error() {
    with_session("forgery-nul-cmd", async |exec, s| {
        let mut sink = OutputSink::new(SinkOptions::default());
        let err = exec
            .execute(
                request("echo a\0b", &s, std::time::Duration::from_secs(5)),
                &mut sink,
                None,
            )
            .await
            .expect_err("rejected");
        assert_eq!(
            err.to_string(),
            "the command contains a NUL byte, which no shell can run"
        );
    });
}
