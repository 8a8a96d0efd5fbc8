//! Resource limits of a PTY session's tree, on this machine's mechanism (a command cgroup
//! where the kernel holds trees, else the watchdog; the mechanism is per process, so the
//! other one is exercised through the binary's tests): a tree over its memory or CPU time
//! limit is ended and the result says which limit it passed; one within its limits is left
//! alone.

use std::time::Duration;

use agentsh_protocol::{LimitKind, ResourceLimits};
use agentsh_pty_runtime::PtyRun;

use crate::util::{command, run, sink};

const MIB: u64 = 1 << 20;

#[test]
fn a_tree_over_its_memory_limit_ends_with_the_limit() {
    run(async {
        // 512 MiB, 16 MiB at a time, under 128 MiB.
        let mut hog = command(
            "python3 -c 'import time\nb = []\nfor i in range(32):\n    b.append(bytearray(16 << 20)); time.sleep(0.02)\nprint(\"allocated\")'",
        );
        hog.limits = ResourceLimits {
            memory: Some(128 * MIB),
            ..ResourceLimits::default()
        };
        let result = PtyRun::start(hog, sink()).wait().await;
        let hit = result.limit.expect("a limit was passed");
        assert_eq!(hit.kind, LimitKind::Memory, "{result:?}");
        assert_eq!(hit.limit, 128 * MIB);
        assert!(hit.used >= 128 * MIB, "{hit:?}");
        assert_eq!(result.exit_code, None, "ended by the limit: {result:?}");
        assert!(!result.cancelled && !result.timed_out, "{result:?}");
        // Never printed (bash's report of the killed job quotes the command, not its line).
        assert!(
            !result
                .summary
                .output
                .lines()
                .any(|line| line.trim() == "allocated"),
            "{}",
            result.summary.output
        );
    });
}

#[test]
fn a_spinning_shell_is_ended_after_its_cpu_time() {
    run(async {
        // The shell spins itself: its own CPU time counts.
        let mut spin = command("while :; do :; done");
        spin.limits = ResourceLimits {
            cpu_time: Some(Duration::from_secs(1)),
            ..ResourceLimits::default()
        };
        let result = PtyRun::start(spin, sink()).wait().await;
        let hit = result.limit.expect("a limit was passed");
        assert_eq!(hit.kind, LimitKind::CpuTime, "{result:?}");
        assert_eq!(hit.limit, 1);
        assert!((1..=3).contains(&hit.used), "{hit:?}");
        assert_eq!(result.exit_code, None, "{result:?}");
        assert!(!result.timed_out, "{result:?}");
    });
}

#[test]
fn a_tree_within_its_limits_runs_to_its_end() {
    run(async {
        let mut small = command(
            "python3 -c 'b = bytearray(8 << 20)\nprint(\"held\", len(b) >> 20)'; sh -c 'exit 3'",
        );
        small.limits = ResourceLimits {
            memory: Some(256 * MIB),
            processes: Some(64),
            cpu_time: Some(Duration::from_secs(30)),
        };
        let result = PtyRun::start(small, sink()).wait().await;
        assert_eq!(result.limit, None, "{result:?}");
        assert_eq!(result.exit_code, Some(3), "{result:?}");
        assert!(
            result.summary.output.contains("held 8"),
            "{}",
            result.summary.output
        );
    });
}
