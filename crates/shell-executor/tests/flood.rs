//! Regression: a command that floods its output kept the FIFO branch of the run loop ready on
//! every turn, and the loop (biased towards reading) never got to its timeout, abort or head
//! stop: `seq 1 100000000 | head -n 2` ran to the end, and `yes` with a timeout never stopped.

use std::time::{Duration, Instant};

use agentsh_output_sink::{OutputSink, SinkOptions};

use crate::common::{executor, request, run, runtime, session};

/// Generous liveness bound: far below the seconds a starved loop takes.
const LIVENESS: Duration = Duration::from_secs(5);

#[test]
fn flooding_output_does_not_starve_the_timeout() {
    runtime().block_on(async {
        let exec = executor();
        let s = session("flood-timeout");
        let mut sink = OutputSink::new(SinkOptions::default());
        let start = Instant::now();
        let result = exec
            .execute(request("yes", &s, Duration::from_secs(1)), &mut sink, None)
            .await
            .expect("runs");
        assert!(start.elapsed() < LIVENESS, "{:?}", start.elapsed());
        assert!(result.timed_out && result.cancelled);
        assert!(
            result
                .summary
                .output
                .starts_with("[Command timed out after 1 seconds]\n")
        );
        assert_eq!(run(&exec, &s, "echo after").await.summary.output, "after\n");
    });
}

#[test]
fn flooding_output_does_not_starve_the_head_stop() {
    runtime().block_on(async {
        let exec = executor();
        let s = session("flood-head");
        for _ in 0..5 {
            let mut sink = OutputSink::new(SinkOptions {
                head_lines: Some(2),
                ..SinkOptions::default()
            });
            let start = Instant::now();
            let result = exec
                .execute(
                    request("( seq 1 100000000 )", &s, Duration::from_secs(120)),
                    &mut sink,
                    None,
                )
                .await
                .expect("runs");
            assert!(start.elapsed() < LIVENESS, "{:?}", start.elapsed());
            assert_eq!(result.exit_code, Some(0));
            assert_eq!(sink.head_text(), Some("1\n2\n"));
            // Ended like `head` ends a pipeline (SIGPIPE): bash reports nothing of it.
            assert!(!result.summary.output.contains("Terminated"));
        }
    });
}
