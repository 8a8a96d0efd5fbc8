//! Isolation and Stopping: which processes a timeout ends. The parent chain decides
//! first; a marker can move a process into the current command, never out of it; start time
//! decides only for orphans.

use std::time::Duration;

use crate::common::{
    alive_with, path_str, run, run_with_timeout, tempdir, unique, wait_until, with_session,
};

const ONE_SECOND: Duration = Duration::from_secs(1);
/// Every process of a stopped command is gone within this bound after the result.
const GONE_WITHIN: Duration = Duration::from_secs(5);

#[test]
fn an_old_marker_does_not_dodge_the_timeout_kill() {
    with_session("attrib-old-marker", async |exec, s| {
        let first = run(&exec, &s, "echo \"$AGENTSH_CMD\"").await;
        let old = first.summary.output.trim().to_owned();
        assert!(!old.is_empty(), "{first:?}");
        // An `&` child of the shell and a double-forked orphan, both started by this command,
        // both claiming the earlier command's marker.
        let (child, orphan) = (unique("100.71"), unique("100.72"));
        let command = format!(
            "AGENTSH_CMD={old} sleep {child} & (AGENTSH_CMD={old} setsid sleep {orphan} &); \
             sleep 100"
        );
        let (result, _) = run_with_timeout(&exec, &s, &command, ONE_SECOND).await;
        assert!(result.timed_out, "{result:?}");
        assert!(
            wait_until(GONE_WITHIN, || alive_with(&child).is_empty()
                && alive_with(&orphan).is_empty()),
            "survived the timeout: {:?} {:?}",
            alive_with(&child),
            alive_with(&orphan)
        );
        assert!(!result.session_restarted, "{result:?}");
        assert_eq!(run(&exec, &s, "echo alive").await.summary.output, "alive\n");
    });
}

#[test]
fn a_worker_forked_by_an_earlier_server_survives_a_later_timeout() {
    with_session("attrib-server", async |exec, s| {
        let dir = tempdir();
        let (trigger, forked) = (dir.path().join("trigger"), dir.path().join("forked"));
        let (server, worker, bare, moved) = (
            unique("100.73"),
            unique("100.74"),
            unique("100.75"),
            unique("100.76"),
        );
        // A "dev server": on a trigger it forks workers — one with its own environment, one
        // with a cleared one, and one (as tmux does for a client) with the environment named
        // in the trigger — and writes the pids of the first two.
        let started = run(
            &exec,
            &s,
            &format!(
                "bash -c 'while :; do if [ -e \"$1\" ]; then m=$(cat \"$1\"); rm -f \"$1\"; \
                 sleep {worker} & w=$!; env -i sleep {bare} & b=$!; \
                 AGENTSH_CMD=$m sleep {moved} & echo \"$w $b\" > \"$2.tmp\"; \
                 mv \"$2.tmp\" \"$2\"; fi; sleep 0.05; done' {server} {trigger} {forked} & \
                 echo \"server $!\"",
                trigger = path_str(&trigger),
                forked = path_str(&forked),
            ),
        )
        .await;
        let server_pid = started
            .summary
            .output
            .trim()
            .strip_prefix("server ")
            .unwrap_or_else(|| panic!("{started:?}"))
            .to_owned();

        // The later call makes the server fork, then times out.
        let (result, _) = run_with_timeout(
            &exec,
            &s,
            &format!(
                "echo \"$AGENTSH_CMD\" > {trigger}.tmp; mv {trigger}.tmp {trigger}; \
                 until [ -e {forked} ]; do sleep 0.02; done; echo forked; sleep 100",
                trigger = path_str(&trigger),
                forked = path_str(&forked),
            ),
            ONE_SECOND,
        )
        .await;
        assert!(result.timed_out, "{result:?}");
        assert!(
            result.summary.output.contains("forked\n"),
            "the workers were forked during the call: {result:?}"
        );
        assert!(!result.session_restarted, "{result:?}");
        for arg in [&server, &worker, &bare] {
            assert_eq!(alive_with(arg).len(), 1, "{arg} was ended with the command");
        }
        // The current marker moved that one into the command.
        assert!(
            wait_until(GONE_WITHIN, || alive_with(&moved).is_empty()),
            "the worker with the current marker survived"
        );

        // The next call still sees the server and both workers.
        let pids = std::fs::read_to_string(&forked).expect("the worker pids");
        let check = run(
            &exec,
            &s,
            &format!("kill -0 {server_pid} {} && echo all-alive", pids.trim()),
        )
        .await;
        assert_eq!(check.summary.output, "all-alive\n", "{check:?}");

        exec.close_session(&s.session_id).await;
        assert!(wait_until(GONE_WITHIN, || {
            [&server, &worker, &bare]
                .iter()
                .all(|arg| alive_with(arg).is_empty())
        }));
    });
}
