//! Shells other than bash: sh (the POSIX loop). zsh uses the same loop with `builtin`.

use std::time::Duration;

use agentsh_process::shell::ShellSpec;

use crate::common::{request, run_req, with_session};

#[test]
fn sh_keeps_state_and_reports_exits() {
    with_session("sh", async |exec, s| {
        let sh = |command: &str| {
            let mut req = request(command, &s, Duration::from_secs(10));
            req.shell = ShellSpec::from_path("/bin/sh");
            req
        };
        assert_eq!(
            run_req(&exec, sh("X=1; f() { echo fn; }")).await.exit_code,
            Some(0)
        );
        assert_eq!(
            run_req(&exec, sh("echo $X; f; echo err >&2"))
                .await
                .summary
                .output,
            "1\nfn\nerr\n"
        );
        assert_eq!(run_req(&exec, sh("(exit 4)")).await.exit_code, Some(4));
        assert_eq!(run_req(&exec, sh("exit 5")).await.exit_code, Some(5));
        assert_eq!(
            run_req(&exec, sh("echo \"[${X-}]\"")).await.summary.output,
            "[]\n"
        );
    });
}

/// zsh runs the POSIX loop with `builtin` (`scripts/install-test-deps` installs zsh).
#[test]
fn zsh_keeps_state_reports_exits_and_is_replaced_after_a_stop() {
    let zsh = crate::common::which("zsh").expect("zsh is installed (scripts/install-test-deps)");
    with_session("zsh", async |exec, s| {
        let zsh_req = |command: &str, timeout: Duration| {
            let mut req = request(command, &s, timeout);
            req.shell = ShellSpec::from_path(&zsh);
            req
        };
        let ten = Duration::from_secs(10);
        let setup = run_req(
            &exec,
            zsh_req(
                "typeset -A m; m[k]=v; f() { echo fn $1 }; setopt extendedglob",
                ten,
            ),
        )
        .await;
        assert_eq!(setup.exit_code, Some(0), "{setup:?}");
        let out = run_req(
            &exec,
            zsh_req(
                "echo $m[k] $ZSH_NAME; f x; [[ -o extendedglob ]] && echo eg; echo err >&2",
                ten,
            ),
        )
        .await;
        assert_eq!(out.summary.output, "v zsh\nfn x\neg\nerr\n");
        assert_eq!(
            run_req(&exec, zsh_req("(exit 4)", ten)).await.exit_code,
            Some(4)
        );
        let dir = crate::common::tempdir();
        let mark = dir.path().join("MARK");
        let sleeper = crate::common::unique("100.55");
        let stopped = run_req(
            &exec,
            zsh_req(
                &format!("sleep {sleeper}; touch {}", crate::common::path_str(&mark)),
                Duration::from_secs(1),
            ),
        )
        .await;
        assert!(
            stopped.timed_out && stopped.session_restarted,
            "{stopped:?}"
        );
        assert!(crate::common::wait_until(Duration::from_secs(5), || {
            crate::common::alive_with(&sleeper).is_empty()
        }));
        std::thread::sleep(Duration::from_millis(300));
        assert!(!mark.exists());
        assert_eq!(
            run_req(&exec, zsh_req("echo \"[$m[k]]\"; exit 6", ten))
                .await
                .exit_code,
            Some(6)
        );
        assert_eq!(
            run_req(&exec, zsh_req("echo back", ten))
                .await
                .summary
                .output,
            "back\n"
        );
    });
}

#[test]
fn sh_restores_redirections_of_exec() {
    with_session("sh-exec", async |exec, s| {
        let sh = |command: &str| {
            let mut req = request(command, &s, Duration::from_secs(10));
            req.shell = ShellSpec::from_path("/bin/sh");
            req
        };
        assert_eq!(
            run_req(&exec, sh("exec >/dev/null 2>&1; echo hidden"))
                .await
                .summary
                .output,
            ""
        );
        assert_eq!(
            run_req(&exec, sh("echo visible")).await.summary.output,
            "visible\n"
        );
    });
}
