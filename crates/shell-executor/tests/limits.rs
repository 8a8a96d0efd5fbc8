//! Resource limits: a tree over its memory, process or CPU limit is held or ended, the result
//! says which, and the shell with its state stays. Each test runs with the mechanism this
//! machine gives (a cgroup where the kernel enforces the limits, as root on a hybrid host),
//! then once more in a copy of this binary forced onto the watchdog (the tree measured every
//! 100 ms), which every Linux has.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agentsh_process::{LIMITS_MECHANISM_VAR, limits_mechanism};
use agentsh_protocol::{LimitHit, LimitKind, ResourceLimits};
use agentsh_shell_executor::{ExecRequest, LateLimits, SessionKey, ShellExecutor};

use crate::common::{request, run, run_req, with_session};

const MIB: u64 = 1024 * 1024;

/// Whether the kernel holds the limits here; names the mechanism in the test's output.
fn kernel_enforced() -> bool {
    let mechanism = limits_mechanism();
    eprintln!("limits by {}", mechanism.describe());
    mechanism.is_kernel_enforced()
}

/// Runs test `name` again in a copy of this binary on the watchdog, when this run had the
/// kernel's limits.
fn again_on_the_watchdog(name: &str, kernel: bool) {
    if kernel {
        agentsh_test_support::rerun_with_env(&format!("limits::{name}"), LIMITS_MECHANISM_VAR);
    }
}

/// A request of `command` under `limits` whose late limits are collected into `told`.
fn limited(
    command: &str,
    session: &SessionKey,
    limits: ResourceLimits,
    told: &Arc<Mutex<Vec<LimitHit>>>,
) -> ExecRequest {
    let mut req = request(command, session, Duration::from_secs(60));
    req.resources = limits;
    let sink = Arc::clone(told);
    req.late_limits = Some(LateLimits::new(move |hit| {
        sink.lock().expect("lock").push(hit);
    }));
    req
}

/// How many processes run `sleep <seconds>` (a number no other test uses).
async fn sleepers(exec: &ShellExecutor, session: &SessionKey, seconds: u32) -> usize {
    let found = run(
        exec,
        session,
        &format!("echo found=$(pgrep -c -x -f 'sleep {seconds}')"),
    )
    .await;
    // (bash may also report background jobs it saw killed.)
    found
        .summary
        .output
        .lines()
        .find_map(|line| line.strip_prefix("found="))
        .and_then(|count| count.parse().ok())
        .unwrap_or_else(|| panic!("no count in {found:?}"))
}

#[test]
fn a_tree_over_its_memory_limit_ends_and_the_shell_keeps_its_state() {
    let kernel = kernel_enforced();
    with_session("limit-memory", async |exec, s| {
        run(&exec, &s, "export KEPT=before").await;
        let told = Arc::default();
        let limits = ResourceLimits {
            memory: Some(256 * MIB),
            ..ResourceLimits::default()
        };
        let started = Instant::now();
        // 1 GiB, 16 MiB at a time: what a build or a test run grows like.
        let command = "python3 -c 'import time\nb = []\nfor i in range(64):\n    b.append(bytearray(16 << 20)); time.sleep(0.02)\nprint(\"allocated\")'";
        let result = run_req(&exec, limited(command, &s, limits, &told)).await;
        let limit = result.limit.expect("the memory limit is told");
        assert_eq!(limit.kind, LimitKind::Memory, "{result:?}");
        assert_eq!(limit.limit, 256 * MIB);
        assert!(limit.used >= 256 * MIB, "{limit:?}");
        assert!(
            !result
                .summary
                .output
                .lines()
                .any(|line| line == "allocated"),
            "{result:?}"
        );
        assert_ne!(result.exit_code, Some(0), "{result:?}");
        assert!(!result.session_restarted, "{result:?}");
        assert!(started.elapsed() < Duration::from_secs(30), "ended late");
        let next = run(&exec, &s, "echo $KEPT").await;
        assert_eq!(next.summary.output, "before\n");
        assert!(!next.session_restarted);
    });
    again_on_the_watchdog(
        "a_tree_over_its_memory_limit_ends_and_the_shell_keeps_its_state",
        kernel,
    );
}

#[test]
fn a_spinning_loop_ends_after_its_cpu_time() {
    let kernel = kernel_enforced();
    with_session("limit-cpu", async |exec, s| {
        let told = Arc::default();
        let limits = ResourceLimits {
            cpu_time: Some(Duration::from_secs(2)),
            ..ResourceLimits::default()
        };
        let command = "export SPUN=yes; sh -c 'while :; do :; done'";
        let result = run_req(&exec, limited(command, &s, limits, &told)).await;
        let limit = result.limit.expect("the CPU limit is told");
        assert_eq!(limit.kind, LimitKind::CpuTime, "{result:?}");
        assert_eq!(limit.limit, 2);
        assert!((2..=4).contains(&limit.used), "{limit:?}");
        assert!(!result.timed_out);
        assert!(!result.session_restarted, "{result:?}");
        // The loop ran in a child: stopping it keeps the shell (a builtin loop in the shell
        // itself costs the shell, as its timeout does, and the result says so).
        let next = run(&exec, &s, "echo ${SPUN-unset}").await;
        assert_eq!(next.summary.output, "yes\n", "{next:?}");
    });
    again_on_the_watchdog("a_spinning_loop_ends_after_its_cpu_time", kernel);
}

#[test]
fn a_tree_of_too_many_processes_is_held_or_ended_and_told() {
    let kernel = kernel_enforced();
    with_session("limit-processes", async |exec, s| {
        let told: Arc<Mutex<Vec<LimitHit>>> = Arc::default();
        let limits = ResourceLimits {
            processes: Some(64),
            ..ResourceLimits::default()
        };
        // Forks until one is refused; each child sleeps.
        let command = "python3 -c 'import os
n = 0
for i in range(200):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.execvp(\"sleep\", [\"sleep\", \"613\"])
    n += 1
print(\"forked\", n)'";
        let result = run_req(&exec, limited(command, &s, limits, &told)).await;
        let hit = result
            .limit
            .or_else(|| told.lock().expect("lock").first().copied());
        if kernel {
            // Forks past the limit were refused; the command went on and ended by itself.
            assert_eq!(result.summary.output, "forked 63\n", "{result:?}");
            assert_eq!(result.exit_code, Some(0), "{result:?}");
            let hit = hit.expect("the process limit is told on the result");
            assert_eq!(
                (hit.kind, hit.limit, hit.used),
                (LimitKind::Processes, 64, 64)
            );
            // What it left running is held where it was, not ended (each child is a
            // `sleep` once it has executed it).
            let deadline = Instant::now() + Duration::from_secs(10);
            let mut held = sleepers(&exec, &s, 613).await;
            while held < 63 && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(50)).await;
                held = sleepers(&exec, &s, 613).await;
            }
            assert_eq!(held, 63);
        } else {
            // Told on this result (the watchdog saw the tree over it) or the next (the
            // command was over first, and its leftovers were measured after it).
            let deadline = Instant::now() + Duration::from_secs(10);
            let mut hit = hit;
            while hit.is_none() && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
                hit = told.lock().expect("lock").first().copied();
            }
            let hit = hit.expect("the process limit is told");
            assert_eq!((hit.kind, hit.limit), (LimitKind::Processes, 64));
            assert!(hit.used > 64, "{hit:?}");
            assert_eq!(sleepers(&exec, &s, 613).await, 0);
        }
        let next = run(&exec, &s, "echo still here").await;
        assert!(next.summary.output.ends_with("still here\n"), "{next:?}");
        assert!(!next.session_restarted);
        // The session's end ends whatever is held.
        exec.close_session(s.session_id.as_str()).await;
        let after = SessionKey::new("limit-processes-after", s.surface);
        assert_eq!(sleepers(&exec, &after, 613).await, 0);
    });
    again_on_the_watchdog(
        "a_tree_of_too_many_processes_is_held_or_ended_and_told",
        kernel,
    );
}

#[test]
fn a_command_within_its_limits_is_untouched() {
    let kernel = kernel_enforced();
    with_session("limit-within", async |exec, s| {
        let told = Arc::default();
        let limits = ResourceLimits {
            memory: Some(256 * MIB),
            processes: Some(64),
            cpu_time: Some(Duration::from_secs(30)),
        };
        let command = "python3 -c 'b = bytearray(16 << 20); print(len(b))'; sleep 0.3";
        let result = run_req(&exec, limited(command, &s, limits, &told)).await;
        assert_eq!(result.limit, None, "{result:?}");
        assert_eq!(result.exit_code, Some(0));
        assert_eq!(result.summary.output, "16777216\n");
        // The watchdog's per-process backstop: a heap stops at twice the tree's memory.
        let limits = run(&exec, &s, "grep 'Max data size' /proc/self/limits").await;
        let fields: Vec<&str> = limits.summary.output.split_whitespace().collect();
        if !kernel {
            assert_eq!(
                fields.get(3..5),
                Some(&["536870912", "536870912"][..]),
                "{limits:?}"
            );
        }
        assert!(told.lock().expect("lock").is_empty());
    });
    again_on_the_watchdog("a_command_within_its_limits_is_untouched", kernel);
}
