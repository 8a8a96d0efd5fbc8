//! Commands that wait for a human return at once: no controlling terminal, and an environment
//! that turns prompts off.

use std::time::Duration;

use crate::common::{path_str, run_with_timeout, tempdir, with_session};

/// The liveness bound: every one of these returns well within it (the timeout is far above).
const BOUND: Duration = Duration::from_secs(5);
const TIMEOUT: Duration = Duration::from_secs(60);

#[test]
fn stdin_readers_get_end_of_file() {
    with_session("hangs-stdin", async |exec, s| {
        for (command, code) in [
            ("cat", 0),
            ("read x", 1),
            ("python3 -c 'input()'", 1),
            ("head -n 1", 0),
        ] {
            let (result, took) = run_with_timeout(&exec, &s, command, TIMEOUT).await;
            assert!(took < BOUND, "{command} took {took:?}");
            assert_eq!(result.exit_code, Some(code), "{command}: {result:?}");
            assert!(!result.timed_out);
        }
    });
}

#[test]
fn the_terminal_cannot_be_opened() {
    with_session("hangs-tty", async |exec, s| {
        let (result, took) = run_with_timeout(&exec, &s, "read x </dev/tty", TIMEOUT).await;
        assert!(took < BOUND, "took {took:?}");
        assert_eq!(result.exit_code, Some(1));
        assert!(result.summary.output.contains("/dev/tty"), "{result:?}");
    });
}

#[test]
fn git_editor_and_pager_do_not_wait() {
    with_session("hangs-git", async |exec, s| {
        let repo = tempdir();
        let dir = path_str(repo.path());
        let setup = format!(
            "cd '{dir}' && git init -q && git config user.email t@example.com && git config user.name T && \
             echo one > f && git add f && git commit -qm first && echo two > f && git add f"
        );
        let (result, _) = run_with_timeout(&exec, &s, &setup, TIMEOUT).await;
        assert_eq!(result.exit_code, Some(0), "{result:?}");

        // No -m: the editor is `true` (GIT_EDITOR), so git sees an empty message and aborts.
        let (commit, took) =
            run_with_timeout(&exec, &s, &format!("cd '{dir}' && git commit"), TIMEOUT).await;
        assert!(took < BOUND, "git commit took {took:?}");
        assert_eq!(commit.exit_code, Some(1), "{commit:?}");
        assert!(
            commit.summary.output.contains("empty commit message"),
            "{commit:?}"
        );

        let (log, took) = run_with_timeout(
            &exec,
            &s,
            &format!("cd '{dir}' && git -c core.pager=less log"),
            TIMEOUT,
        )
        .await;
        assert!(took < BOUND, "git log took {took:?}");
        assert_eq!(log.exit_code, Some(0), "{log:?}");
        assert!(log.summary.output.contains("    first\n"), "{log:?}");

        let (less, took) = run_with_timeout(&exec, &s, &format!("less '{dir}/f'"), TIMEOUT).await;
        assert!(took < BOUND, "less took {took:?}");
        assert_eq!(less.exit_code, Some(0));
        assert_eq!(less.summary.output, "two\n");
    });
}
