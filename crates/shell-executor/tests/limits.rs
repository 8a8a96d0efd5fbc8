//! Resource limits enforced by the watchdog (a command's processes measured every 100 ms):
//! a tree over its memory, process or CPU limit ends, the result says which, and the shell
//! with its state stays.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agentsh_protocol::{LimitKind, ResourceLimits};
use agentsh_shell_executor::LateLimits;

use crate::common::{request, run, run_req, with_session};

const MIB: u64 = 1024 * 1024;

#[test]
fn a_tree_over_its_memory_limit_ends_and_the_shell_keeps_its_state() {
    with_session("limit-memory", async |exec, s| {
        run(&exec, &s, "export KEPT=before").await;
        let mut req = request(
            "python3 -c 'b = bytearray(1 << 30); print(\"allocated\")'",
            &s,
            Duration::from_secs(60),
        );
        req.resources = ResourceLimits {
            memory: Some(256 * MIB),
            ..ResourceLimits::default()
        };
        let started = Instant::now();
        let result = run_req(&exec, req).await;
        let limit = result.limit.expect("the memory limit is told");
        assert_eq!(limit.kind, LimitKind::Memory, "{result:?}");
        assert_eq!(limit.limit, 256 * MIB);
        assert!(limit.used > 256 * MIB, "{limit:?}");
        assert_eq!(result.exit_code, None, "{result:?}");
        assert!(!result.summary.output.contains("allocated"), "{result:?}");
        assert!(!result.session_restarted, "{result:?}");
        assert!(started.elapsed() < Duration::from_secs(30), "ended late");
        let next = run(&exec, &s, "echo $KEPT").await;
        assert_eq!(next.summary.output, "before\n");
        assert!(!next.session_restarted);
    });
}

#[test]
fn a_spinning_loop_ends_after_its_cpu_time() {
    with_session("limit-cpu", async |exec, s| {
        let mut req = request(
            "export SPUN=yes; sh -c 'while :; do :; done'",
            &s,
            Duration::from_secs(120),
        );
        req.resources = ResourceLimits {
            cpu_time: Some(Duration::from_secs(2)),
            ..ResourceLimits::default()
        };
        let result = run_req(&exec, req).await;
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
}

#[test]
fn a_tree_of_too_many_processes_ends() {
    with_session("limit-processes", async |exec, s| {
        let mut req = request(
            "for i in $(seq 200); do sleep 611 & done; wait",
            &s,
            Duration::from_secs(60),
        );
        req.resources = ResourceLimits {
            processes: Some(64),
            ..ResourceLimits::default()
        };
        let result = run_req(&exec, req).await;
        let limit = result.limit.expect("the process limit is told");
        assert_eq!(limit.kind, LimitKind::Processes, "{result:?}");
        assert_eq!(limit.limit, 64);
        assert!(limit.used > 64, "{limit:?}");
        // (bash also reports the background jobs it saw killed.)
        let left = run(&exec, &s, "echo left=$(pgrep -c -x -f 'sleep 611')").await;
        assert!(
            left.summary.output.lines().any(|line| line == "left=0"),
            "{left:?}"
        );
    });
}

#[test]
fn a_command_within_its_limits_is_untouched() {
    with_session("limit-within", async |exec, s| {
        let mut req = request(
            "python3 -c 'b = bytearray(16 << 20); print(len(b))'; sleep 0.3",
            &s,
            Duration::from_secs(60),
        );
        req.resources = ResourceLimits {
            memory: Some(256 * MIB),
            processes: Some(64),
            cpu_time: Some(Duration::from_secs(30)),
        };
        let result = run_req(&exec, req).await;
        assert_eq!(result.limit, None, "{result:?}");
        assert_eq!(result.exit_code, Some(0));
        assert_eq!(result.summary.output, "16777216\n");
        // The per-process backstop: a heap stops at twice the tree's memory.
        let limits = run(&exec, &s, "grep 'Max data size' /proc/self/limits").await;
        let fields: Vec<&str> = limits.summary.output.split_whitespace().collect();
        assert_eq!(
            fields.get(3..5),
            Some(&["536870912", "536870912"][..]),
            "{limits:?}"
        );
    });
}

#[test]
fn what_a_command_left_running_is_held_to_its_limits_after_the_result() {
    with_session("limit-leftovers", async |exec, s| {
        let told = Arc::new(Mutex::new(Vec::new()));
        let mut req = request(
            "(for i in $(seq 100); do sleep 617 & done; wait) & echo started",
            &s,
            Duration::from_secs(60),
        );
        req.resources = ResourceLimits {
            processes: Some(64),
            ..ResourceLimits::default()
        };
        let sink = Arc::clone(&told);
        req.late_limits = Some(LateLimits::new(move |hit| {
            sink.lock().expect("lock").push(hit);
        }));
        let result = run_req(&exec, req).await;
        assert_eq!(result.summary.output, "started\n", "{result:?}");
        assert_eq!(result.exit_code, Some(0), "{result:?}");
        let deadline = Instant::now() + Duration::from_secs(10);
        while told.lock().expect("lock").is_empty() {
            assert!(Instant::now() < deadline, "no late limit was told");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let hit = told.lock().expect("lock")[0];
        assert_eq!(hit.kind, LimitKind::Processes);
        assert_eq!(hit.limit, 64);
        assert!(hit.used > 64, "{hit:?}");
        let left = run(&exec, &s, "echo left=$(pgrep -c -x -f 'sleep 617')").await;
        assert!(
            left.summary.output.lines().any(|line| line == "left=0"),
            "{left:?}"
        );
    });
}
