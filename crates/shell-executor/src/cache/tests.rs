//! The cache's limits: each session bounded by its own `max_shells` and idle timeout, all
//! sessions together by the process-wide cap; least recently used idle shell evicted first,
//! busy ones never, shells with background jobs last.

use std::sync::Arc;
use std::time::Duration;

use agentsh_protocol::{BashResult, DEFAULT_MAX_SHELLS};

use crate::test_helpers::{
    alive_with, config, executor, is_alive, run, run_limited, runtime, session, unique, wait_until,
};
use crate::{ExecutorConfig, SessionKey, ShellExecutor, ShellLimits};

/// An executor whose every session, and the whole cache, keep at most `max_shells` shells;
/// shells idle for `idle` are closed.
struct Bounded {
    exec: ShellExecutor,
    limits: ShellLimits,
}

impl Bounded {
    async fn run(&self, key: &SessionKey, command: &str) -> BashResult {
        run_limited(&self.exec, key, self.limits, command).await
    }
}

fn executor_with(max_shells: usize, idle: Duration) -> Bounded {
    Bounded {
        exec: ShellExecutor::new(ExecutorConfig {
            max_total_shells: max_shells,
            ..config()
        }),
        limits: ShellLimits {
            max_shells,
            idle_timeout: idle,
        },
    }
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

/// How many shells `session_id` holds (both surfaces, any environment).
fn shells_of(exec: &ShellExecutor, session_id: &str) -> usize {
    exec.shells()
        .iter()
        .filter(|s| s.session.session_id == session_id)
        .count()
}

/// Runs `command` in a shell of `key` told apart from the session's others by its environment
/// (`SHELL_NO=<n>`): one session, many shells.
async fn run_in_shell(
    exec: &ShellExecutor,
    key: &SessionKey,
    limits: ShellLimits,
    n: usize,
    command: &str,
) -> BashResult {
    let mut request = crate::test_helpers::request(command, key);
    request.limits = limits;
    request.env.insert("SHELL_NO".into(), n.to_string());
    crate::test_helpers::run_req(exec, request).await
}

#[test]
fn the_seventeenth_shell_evicts_the_least_recently_used_idle_one() {
    runtime().block_on(async {
        let exec = executor_with(DEFAULT_MAX_SHELLS, Duration::from_secs(3600));
        let keys16: Vec<SessionKey> = (0..16).map(|n| session(&format!("k{n:02}"))).collect();
        for key in &keys16 {
            exec.run(key, "true").await;
        }
        exec.run(&keys16[0], "true").await; // k00 is now the most recent; k01 the least
        let k01_supervisor = supervisor_of(&exec.exec, &keys16[1]).expect("k01 runs");
        exec.run(&session("k16"), "true").await;
        let mut want: Vec<String> = (0..17)
            .filter(|&n| n != 1)
            .map(|n| format!("k{n:02}"))
            .collect();
        want.sort();
        assert_eq!(keys(&exec.exec), want);
        assert!(
            wait_until(Duration::from_secs(5), || !is_alive(k01_supervisor)),
            "k01's tree ended"
        );
    });
}

/// A command that makes `running`, waits until `gate` exists, then prints `word`.
fn blocked(word: &str, running: &std::path::Path, gate: &std::path::Path) -> String {
    format!(
        ": > {}; until [ -e {} ]; do sleep 0.02; done; echo {word}",
        running.display(),
        gate.display()
    )
}

#[test]
fn a_busy_shell_is_never_evicted() {
    runtime().block_on(async {
        let exec = Arc::new(executor_with(2, Duration::from_secs(3600)));
        let (a, b, c) = (session("busy-a"), session("busy-b"), session("busy-c"));
        exec.run(&a, "true").await;
        exec.run(&b, "true").await;
        // a becomes busy (and stays the least recently used until its command ends): its
        // command runs (it made `running`) until the test opens the gate.
        let dir = tempfile::tempdir().expect("tempdir");
        let (running, gate) = (dir.path().join("running"), dir.path().join("gate"));
        let busy = {
            let exec = Arc::clone(&exec);
            let a = a.clone();
            let command = blocked("done", &running, &gate);
            tokio::spawn(async move { exec.run(&a, &command).await })
        };
        assert!(
            wait_until(Duration::from_secs(20), || running.exists()),
            "a's command never ran"
        );
        exec.run(&c, "true").await;
        assert_eq!(
            keys(&exec.exec),
            ["busy-a", "busy-c"],
            "b (idle) went, a (busy) stayed"
        );
        std::fs::write(&gate, "").expect("open the gate");
        assert_eq!(busy.await.expect("task").summary.output, "done\n");

        // Every shell busy: the cache goes over its limit rather than evict one.
        let one = Arc::new(executor_with(1, Duration::from_secs(3600)));
        let (running, gate) = (dir.path().join("running-x"), dir.path().join("gate-x"));
        let first = {
            let exec = Arc::clone(&one);
            let command = blocked("x", &running, &gate);
            tokio::spawn(async move { exec.run(&session("x"), &command).await })
        };
        assert!(
            wait_until(Duration::from_secs(20), || running.exists()),
            "x's command never ran"
        );
        assert_eq!(one.run(&session("y"), "echo y").await.summary.output, "y\n");
        std::fs::write(&gate, "").expect("open the gate");
        assert_eq!(first.await.expect("task").summary.output, "x\n");
        assert_eq!(one.exec.shells().len(), 1, "trimmed back to the limit");
    });
}

#[test]
fn shells_with_background_jobs_are_evicted_last() {
    runtime().block_on(async {
        let exec = executor_with(2, Duration::from_secs(3600));
        let (jobs, plain, new) = (session("jobs"), session("plain"), session("new"));
        let sleeper = unique("100.7");
        exec.run(&jobs, &format!("sleep {sleeper} &")).await;
        exec.run(&plain, "true").await;
        exec.run(&new, "true").await;
        assert_eq!(
            keys(&exec.exec),
            ["jobs", "new"],
            "the older shell with a job was kept"
        );
        // The job's fork may not have exec'd `sleep` yet on a loaded machine.
        assert!(
            wait_until(Duration::from_secs(5), || alive_with(&sleeper).len() == 1),
            "{:?}",
            alive_with(&sleeper)
        );
        exec.exec.close_idle().await;
        assert!(exec.exec.shells().is_empty());
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
        exec.run(&s, "true").await;
        let supervisor = supervisor_of(&exec.exec, &s).expect("runs");
        assert!(wait_until(Duration::from_secs(5), || exec
            .exec
            .shells()
            .is_empty()));
        assert!(wait_until(Duration::from_secs(5), || !is_alive(supervisor)));
        assert_eq!(exec.run(&s, "echo back").await.summary.output, "back\n");
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

/// Regression: the first session's `max_shells` used to bound every later session's shells.
#[test]
fn each_session_is_bounded_by_its_own_max_shells() {
    runtime().block_on(async {
        let exec = executor();
        let small = ShellLimits {
            max_shells: 2,
            ..ShellLimits::default()
        };
        let large = ShellLimits {
            max_shells: 4,
            ..ShellLimits::default()
        };
        let (a, b) = (session("small"), session("large"));
        for n in 0..3 {
            run_in_shell(&exec, &a, small, n, "MINE=$SHELL_NO").await;
        }
        assert_eq!(shells_of(&exec, "small"), 2, "small keeps its own 2");
        for n in 0..5 {
            run_in_shell(&exec, &b, large, n, "true").await;
        }
        assert_eq!(shells_of(&exec, "large"), 4, "large keeps its own 4");
        assert_eq!(
            shells_of(&exec, "small"),
            2,
            "large's shells evicted none of small's"
        );
        // small's least recently used shell (SHELL_NO=0) was the one that went.
        for n in [2, 1] {
            let mine = run_in_shell(&exec, &a, small, n, "echo ${MINE:-fresh}").await;
            assert_eq!(mine.summary.output, format!("{n}\n"));
        }
        assert_eq!(shells_of(&exec, "small"), 2);
    });
}

#[test]
fn the_process_wide_cap_bounds_all_sessions_together() {
    runtime().block_on(async {
        let exec = ShellExecutor::new(ExecutorConfig {
            max_total_shells: 3,
            ..config()
        });
        let sessions: Vec<SessionKey> = (0..4).map(|n| session(&format!("cap{n}"))).collect();
        for key in &sessions[..3] {
            run(&exec, key, "true").await;
        }
        let first = supervisor_of(&exec, &sessions[0]).expect("cap0 runs");
        run(&exec, &sessions[3], "true").await;
        assert_eq!(keys(&exec), ["cap1", "cap2", "cap3"], "the oldest went");
        assert!(
            wait_until(Duration::from_secs(5), || !is_alive(first)),
            "cap0's tree ended"
        );
        assert_eq!(ExecutorConfig::default().max_total_shells, 256);
    });
}

/// Regression: the first session's idle timeout used to apply to every session's shells.
#[test]
fn a_sessions_idle_timeout_applies_only_to_its_shells() {
    runtime().block_on(async {
        let exec = executor();
        let quick = ShellLimits {
            idle_timeout: Duration::from_millis(300),
            ..ShellLimits::default()
        };
        let slow = ShellLimits {
            idle_timeout: Duration::from_secs(3600),
            ..ShellLimits::default()
        };
        let (q, s) = (session("quick"), session("slow"));
        run_limited(&exec, &s, slow, "export KEPT=yes").await;
        run_limited(&exec, &q, quick, "true").await;
        let quick_supervisor = supervisor_of(&exec, &q).expect("quick runs");
        assert!(
            wait_until(Duration::from_secs(5), || shells_of(&exec, "quick") == 0),
            "quick's idle shell was closed"
        );
        assert!(wait_until(Duration::from_secs(5), || !is_alive(
            quick_supervisor
        )));
        assert_eq!(
            keys(&exec),
            ["slow"],
            "slow's shell outlived quick's timeout"
        );
        assert_eq!(
            run_limited(&exec, &s, slow, "echo $KEPT")
                .await
                .summary
                .output,
            "yes\n"
        );
    });
}

/// The sandbox is part of a shell's key: a request with one never gets the shell of
/// a request without one (or with another), even in the same session and surface, and each
/// keeps its own shell.
#[test]
fn a_sandbox_is_part_of_the_shell_key() {
    use agentsh_process::sandbox::{SandboxMode, SandboxNetwork, SandboxSpec};

    runtime().block_on(async {
        let exec = executor();
        let key = session("sandbox-key");
        let sandboxed = |mode: SandboxMode, network: bool| {
            let mut request = crate::test_helpers::request("echo ${X:-fresh}", &key);
            request.sandbox = Some(SandboxSpec {
                mode,
                writable: vec![std::env::temp_dir()],
                read_only: Vec::new(),
                network: if network {
                    SandboxNetwork::On
                } else {
                    SandboxNetwork::Off
                },
                temp_dir: None,
                temp_fs: None,
            });
            request
        };
        run(&exec, &key, "export X=plain").await;
        let run_sandboxed = |request| crate::test_helpers::run_req(&exec, request);
        assert_eq!(
            run_sandboxed(sandboxed(SandboxMode::WorkspaceWrite, false))
                .await
                .summary
                .output,
            "fresh\n"
        );
        let mut export = sandboxed(SandboxMode::WorkspaceWrite, false);
        export.command = "export X=sandboxed".into();
        run_sandboxed(export).await;
        // Another policy (network on, or another mode) is another shell again.
        assert_eq!(
            run_sandboxed(sandboxed(SandboxMode::WorkspaceWrite, true))
                .await
                .summary
                .output,
            "fresh\n"
        );
        assert_eq!(
            run_sandboxed(sandboxed(SandboxMode::ReadOnly, false))
                .await
                .summary
                .output,
            "fresh\n"
        );
        // Each kept its own shell and state.
        assert_eq!(
            run(&exec, &key, "echo ${X:-fresh}").await.summary.output,
            "plain\n"
        );
        assert_eq!(
            run_sandboxed(sandboxed(SandboxMode::WorkspaceWrite, false))
                .await
                .summary
                .output,
            "sandboxed\n"
        );
        assert_eq!(shells_of(&exec, "sandbox-key"), 4);
    });
}
