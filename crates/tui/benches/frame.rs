//! Keystroke to frame in the interactive mode (the interactive mode; goal < 5 ms per frame): one key typed
//! with 1,000 lines of transcript at 120 × 40, against ratatui drawing 40 rows of text on the
//! same backend in the same run; and the frame after a resize (every entry laid out again).

use std::time::Duration;

use agentsh_bench_support::{Row, median, quick, time_each};
use agentsh_tui::bench::{BaselineFrame, FrameBench};

const COLS: u16 = 120;
const ROWS: u16 = 40;
const BASELINE: &str = "ratatui drawing 40 rows of text";

fn row(metric: &str, took: Duration, floor: Duration) {
    let ms = took.as_secs_f64() * 1e3;
    Row::new("tui", metric)
        .value(took.as_secs_f64() * 1e6, "µs")
        .ratio(took.as_secs_f64() / floor.as_secs_f64(), BASELINE)
        .goal("< 5 ms", ms < 5.0)
        .report();
}

fn main() -> std::io::Result<()> {
    let runs = if quick() { 50 } else { 2_000 };
    let mut mode = FrameBench::new(1_000, COLS, ROWS)?;
    let mut floor = BaselineFrame::new(COLS, ROWS)?;
    // Alternating rounds, so that both see the same machine.
    let (mut ours, mut theirs, mut resized) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..5 {
        ours.extend(time_each(runs / 5, || mode.keystroke().expect("frame")));
        theirs.extend(time_each(runs / 5, || floor.frame().expect("frame")));
        resized.extend(time_each(runs / 50, || {
            mode.resized_frame().expect("frame");
        }));
    }
    let floor = median(&theirs);
    row(
        "keystroke to frame, 1,000 lines of transcript",
        median(&ours),
        floor,
    );
    row(
        "frame after a resize, 1,000 lines laid out again",
        median(&resized),
        floor,
    );
    Ok(())
}
