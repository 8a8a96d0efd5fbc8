//! Regression: a command that floods its output kept the FIFO branch of the run loop ready on
//! every turn, and the loop (biased towards reading) never got to its timeout, abort or head
//! stop: `seq 1 100000000 | head -n 2` ran to the end, and `yes` with a timeout never stopped.

use std::time::{Duration, Instant};

use agentsh_protocol::timeout_annotation;

use crate::common::{head_sink, request, run, run_into, run_req, with_session};

/// Generous liveness bound: far below the seconds a starved loop takes.
const LIVENESS: Duration = Duration::from_secs(5);

#[test]
fn flooding_output_does_not_starve_the_timeout() {
    with_session("flood-timeout", async |exec, s| {
        let start = Instant::now();
        let result = run_req(&exec, request("yes", &s, Duration::from_secs(1))).await;
        assert!(start.elapsed() < LIVENESS, "{:?}", start.elapsed());
        assert!(result.timed_out && result.cancelled);
        assert!(
            result
                .annotated_output()
                .starts_with(&format!("[{}]\n", timeout_annotation(1.0)))
        );
        assert_eq!(run(&exec, &s, "echo after").await.summary.output, "after\n");
    });
}

#[test]
fn flooding_output_does_not_starve_the_head_stop() {
    with_session("flood-head", async |exec, s| {
        for _ in 0..5 {
            let mut sink = head_sink(2);
            let start = Instant::now();
            let req = request("( seq 1 100000000 )", &s, Duration::from_secs(120));
            let result = run_into(&exec, req, &mut sink).await;
            assert!(start.elapsed() < LIVENESS, "{:?}", start.elapsed());
            assert_eq!(result.exit_code, Some(0));
            assert_eq!(sink.head_text(), Some("1\n2\n"));
            // Ended like `head` ends a pipeline (SIGPIPE): bash reports nothing of it.
            assert!(!result.summary.output.contains("Terminated"));
        }
    });
}
