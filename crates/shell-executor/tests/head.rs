//! SPEC §1 / §6: a satisfied head limit stops the command like `| head` (exit 0).

use std::time::{Duration, Instant};

use agentsh_output_sink::{OutputSink, SinkOptions};

use crate::common::{executor, request, run, runtime, session};

#[test]
fn yes_with_head_five_stops_at_once() {
    runtime().block_on(async {
        let exec = executor();
        let s = session("head-yes");
        let mut sink = OutputSink::new(SinkOptions {
            head_lines: Some(5),
            ..SinkOptions::default()
        });
        let start = Instant::now();
        let result = exec
            .execute(
                request("( yes )", &s, Duration::from_secs(60)),
                &mut sink,
                None,
            )
            .await
            .expect("runs");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
        assert_eq!(result.exit_code, Some(0));
        assert!(!result.cancelled && !result.timed_out);
        assert!(!result.session_restarted);
        assert_eq!(sink.head_text(), Some("y\ny\ny\ny\ny\n"));
        assert_eq!(run(&exec, &s, "echo after").await.summary.output, "after\n");
    });
}

#[test]
fn a_producer_that_finishes_keeps_its_exit_code() {
    runtime().block_on(async {
        let exec = executor();
        let s = session("head-false");
        let mut sink = OutputSink::new(SinkOptions {
            head_lines: Some(1),
            ..SinkOptions::default()
        });
        // `false | tail -n 1` normalises to `( false )` with a tail limit: the producer's code.
        let result = exec
            .execute(
                request("( false )", &s, Duration::from_secs(60)),
                &mut sink,
                None,
            )
            .await
            .expect("runs");
        assert_eq!(result.exit_code, Some(1));
        let mut sink = OutputSink::new(SinkOptions {
            head_lines: Some(5),
            ..SinkOptions::default()
        });
        let result = exec
            .execute(
                request("printf 'a\\nb\\n'; (exit 3)", &s, Duration::from_secs(60)),
                &mut sink,
                None,
            )
            .await
            .expect("runs");
        assert_eq!(result.exit_code, Some(3));
    });
}
