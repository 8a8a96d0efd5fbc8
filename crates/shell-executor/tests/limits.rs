//! Resource limits enforced by the watchdog (a command's processes measured every 100 ms):
//! a tree over its memory, process or CPU limit ends, the result says which, and the shell
//! with its state stays.

use std::time::{Duration, Instant};

use agentsh_protocol::{LimitKind, ResourceLimits};

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
            "for i in $(seq 200); do sleep 600 & done; wait",
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
        let left = run(&exec, &s, "pgrep -c -x sleep -P $$ || true").await;
        assert_eq!(left.summary.output.trim(), "0", "{left:?}");
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
    });
}
