//! SPEC §6, Cache: a bounded number of shells, least recently used idle one evicted first,
//! busy ones never, shells with background jobs last, idle ones closed after a while.

use std::sync::Arc;
use std::time::Duration;

use agentsh_shell_executor::{DEFAULT_MAX_SHELLS, ExecutorConfig, SessionKey, ShellExecutor};

use crate::common::{
    alive_with, config, executor, is_alive, run, runtime, session, unique, wait_until,
};

fn executor_with(max_shells: usize, idle: Duration) -> ShellExecutor {
    ShellExecutor::new(ExecutorConfig {
        max_shells,
        idle_timeout: idle,
        ..config()
    })
}

fn supervisor_of(exec: &ShellExecutor, key: &SessionKey) -> Option<u32> {
    exec.shells()
        .into_iter()
        .find(|s| &s.session == key)
        .and_then(|s| s.supervisor_pid)
}

fn keys(exec: &ShellExecutor) -> Vec<String> {
    let mut keys: Vec<String> = exec
        .shells()
        .into_iter()
        .map(|s| s.session.session_id)
        .collect();
    keys.sort();
    keys
}

#[test]
fn the_seventeenth_shell_evicts_the_least_recently_used_idle_one() {
    runtime().block_on(async {
        let exec = executor_with(DEFAULT_MAX_SHELLS, Duration::from_secs(3600));
        let keys16: Vec<SessionKey> = (0..16).map(|n| session(&format!("k{n:02}"))).collect();
        for key in &keys16 {
            run(&exec, key, "true").await;
        }
        run(&exec, &keys16[0], "true").await; // k00 is now the most recent; k01 the least
        let k01_supervisor = supervisor_of(&exec, &keys16[1]).expect("k01 runs");
        run(&exec, &session("k16"), "true").await;
        let mut want: Vec<String> = (0..17)
            .filter(|&n| n != 1)
            .map(|n| format!("k{n:02}"))
            .collect();
        want.sort();
        assert_eq!(keys(&exec), want);
        assert!(
            wait_until(Duration::from_secs(5), || !is_alive(k01_supervisor)),
            "k01's tree ended"
        );
    });
}

#[test]
fn a_busy_shell_is_never_evicted() {
    runtime().block_on(async {
        let exec = Arc::new(executor_with(2, Duration::from_secs(3600)));
        let (a, b, c) = (session("busy-a"), session("busy-b"), session("busy-c"));
        run(&exec, &a, "true").await;
        run(&exec, &b, "true").await;
        // a becomes busy (and stays the least recently used until its command ends).
        let busy = {
            let exec = Arc::clone(&exec);
            let a = a.clone();
            tokio::spawn(async move { run(&exec, &a, "sleep 1; echo done").await })
        };
        tokio::time::sleep(Duration::from_millis(300)).await;
        run(&exec, &c, "true").await;
        assert_eq!(
            keys(&exec),
            ["busy-a", "busy-c"],
            "b (idle) went, a (busy) stayed"
        );
        assert_eq!(busy.await.expect("task").summary.output, "done\n");

        // Every shell busy: the cache goes over its limit rather than evict one.
        let one = Arc::new(executor_with(1, Duration::from_secs(3600)));
        let first = {
            let exec = Arc::clone(&one);
            tokio::spawn(async move { run(&exec, &session("x"), "sleep 0.5; echo x").await })
        };
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(
            run(&one, &session("y"), "echo y").await.summary.output,
            "y\n"
        );
        assert_eq!(first.await.expect("task").summary.output, "x\n");
        assert_eq!(one.shells().len(), 1, "trimmed back to the limit");
    });
}

#[test]
fn shells_with_background_jobs_are_evicted_last() {
    runtime().block_on(async {
        let exec = executor_with(2, Duration::from_secs(3600));
        let (jobs, plain, new) = (session("jobs"), session("plain"), session("new"));
        let sleeper = unique("100.7");
        run(&exec, &jobs, &format!("sleep {sleeper} &")).await;
        run(&exec, &plain, "true").await;
        run(&exec, &new, "true").await;
        assert_eq!(
            keys(&exec),
            ["jobs", "new"],
            "the older shell with a job was kept"
        );
        assert_eq!(alive_with(&sleeper).len(), 1);
        exec.close_idle().await;
        assert!(exec.shells().is_empty());
        assert!(
            alive_with(&sleeper).is_empty(),
            "closing a shell ends its tree"
        );
    });
}

#[test]
fn idle_shells_are_closed() {
    runtime().block_on(async {
        let exec = executor_with(16, Duration::from_millis(300));
        let s = session("idle");
        run(&exec, &s, "true").await;
        let supervisor = supervisor_of(&exec, &s).expect("runs");
        assert!(wait_until(Duration::from_secs(5), || exec
            .shells()
            .is_empty()));
        assert!(wait_until(Duration::from_secs(5), || !is_alive(supervisor)));
        assert_eq!(run(&exec, &s, "echo back").await.summary.output, "back\n");
    });
}

#[test]
fn close_session_ends_only_that_sessions_shells() {
    runtime().block_on(async {
        let exec = executor();
        let gone = session("close-me");
        let kept = session("keep-me");
        run(&exec, &gone, "export X=gone").await;
        run(&exec, &kept, "export X=kept").await;
        exec.close_session(&gone.session_id).await;
        // The closed session's next call gets a fresh shell; the other keeps its state.
        assert_eq!(
            run(&exec, &gone, "echo ${X:-fresh}").await.summary.output,
            "fresh\n"
        );
        assert_eq!(
            run(&exec, &kept, "echo ${X:-fresh}").await.summary.output,
            "kept\n"
        );
    });
}
