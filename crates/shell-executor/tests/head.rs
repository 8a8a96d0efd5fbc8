//! A satisfied head limit stops the command like `| head` (exit 0).

use std::time::{Duration, Instant};

use crate::common::{head_sink, request, run, run_into, with_session};

#[test]
fn yes_with_head_five_stops_at_once() {
    with_session("head-yes", async |exec, s| {
        let mut sink = head_sink(5);
        let start = Instant::now();
        let req = request("( yes )", &s, Duration::from_secs(60));
        let result = run_into(&exec, req, &mut sink).await;
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
    with_session("head-false", async |exec, s| {
        // `false | head -n 1` normalises to `( false )` with a head limit it never reaches:
        // the producer's code.
        let req = request("( false )", &s, Duration::from_secs(60));
        let result = run_into(&exec, req, &mut head_sink(1)).await;
        assert_eq!(result.exit_code, Some(1));
        let req = request("printf 'a\\nb\\n'; (exit 3)", &s, Duration::from_secs(60));
        let result = run_into(&exec, req, &mut head_sink(5)).await;
        assert_eq!(result.exit_code, Some(3));
    });
}
