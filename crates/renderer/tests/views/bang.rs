//! The bang command view.

use agentsh_renderer::{
    BangRun, BangState, BangView, BashResult, DefaultRenderer, Expansion, LineWindow,
    OutputSummary, Renderer, Theme,
};
use insta::assert_snapshot;

use super::support::{at_widths, numbers, plain};

fn finished(command: &str, output: &str, exit_code: Option<i32>) -> BangRun {
    let lines = agentsh_protocol_lines(output);
    BangRun {
        command: command.into(),
        exclude_from_context: false,
        state: BangState::Finished(BashResult {
            summary: OutputSummary {
                output: output.into(),
                total_lines: lines,
                total_bytes: output.len() as u64,
                output_lines: lines,
                output_bytes: output.len() as u64,
                ..OutputSummary::default()
            },
            exit_code,
            ..BashResult::default()
        }),
    }
}

/// Lines split at `\n`, a final `\n` ending the last line rather than starting one, written out
/// here rather than taken from the crate.
fn agentsh_protocol_lines(text: &str) -> u64 {
    let text = text.strip_suffix('\n').unwrap_or(text);
    if text.is_empty() {
        0
    } else {
        text.split('\n').count() as u64
    }
}

fn draw(bang: &BangRun, width: u16) -> Vec<String> {
    plain(&DefaultRenderer::default().bang(&BangView::new(bang), width))
}

#[test]
fn collapsed_shows_the_last_20_lines_and_how_many_more() {
    let bang = finished("seq 25", &format!("{}\n", numbers(1, 25)), Some(0));
    let rows = draw(&bang, 80);
    assert_eq!(rows[0], "! seq 25");
    assert_eq!(rows[1], "6");
    assert_eq!(rows[20], "25");
    assert_eq!(rows[21], "… 5 more lines (ctrl+o to expand)");
    assert_eq!(rows.len(), 22);
}

#[test]
fn snapshot_finished_exit_and_more_lines() {
    let bang = finished(
        "make",
        &format!("{}\nerror: failed\n", numbers(1, 30)),
        Some(2),
    );
    assert_eq!(draw(&bang, 80).last().unwrap(), "(exit 2)");
    assert_snapshot!(at_widths(
        |w| DefaultRenderer::default().bang(&BangView::new(&bang), w)
    ));
}

#[test]
fn snapshot_running_excluded_each_theme() {
    let bang = BangRun {
        command: "npm install".into(),
        exclude_from_context: true,
        state: BangState::Running {
            output: "added 1 package\nadded 2 packages\n".into(),
        },
    };
    let mut out = String::new();
    for theme in Theme::ALL {
        let mut view = BangView::new(&bang);
        view.tick = 1;
        out.push_str(&format!("══ theme {theme} ══\n"));
        out.push_str(&at_widths(|w| DefaultRenderer::new(theme).bang(&view, w)));
    }
    assert_snapshot!(out);
}

#[test]
fn snapshot_running_with_its_time_each_theme() {
    let bang = BangRun {
        command: "git status -s".into(),
        exclude_from_context: false,
        state: BangState::Running {
            output: " M README.md\n".into(),
        },
    };
    let mut out = String::new();
    for theme in Theme::ALL {
        let mut view = BangView::new(&bang);
        view.tick = 9;
        view.elapsed = Some(std::time::Duration::from_secs(42));
        out.push_str(&format!("══ theme {theme} ══\n"));
        out.push_str(&at_widths(|w| DefaultRenderer::new(theme).bang(&view, w)));
    }
    assert_snapshot!(out);
}

#[test]
fn snapshot_cancelled_and_timed_out() {
    let mut cancelled = finished("sleep 100", "", None);
    if let BangState::Finished(result) = &mut cancelled.state {
        result.cancelled = true;
        result.annotation = Some("Command cancelled".into());
    }
    let mut timed_out = finished("ping host", "64 bytes\n", None);
    if let BangState::Finished(result) = &mut timed_out.state {
        result.cancelled = true;
        result.timed_out = true;
        result.annotation = Some("Command timed out after 5 seconds".into());
    }
    let empty = finished("true", "", Some(0));
    assert_eq!(
        draw(&cancelled, 80),
        ["! sleep 100", "[Command cancelled]", "(cancelled)"]
    );
    assert_eq!(draw(&empty, 80), ["! true", "(no output)"]);
    let mut out = String::new();
    for bang in [&cancelled, &timed_out, &empty] {
        out.push_str(&at_widths(|w| {
            DefaultRenderer::default().bang(&BangView::new(bang), w)
        }));
    }
    assert_snapshot!(out);
}

#[test]
fn snapshot_truncated_with_artifact_and_line_cap() {
    // One 5,000-char line: its first 4,000 chars, then how many were left out.
    let long = "ab".repeat(2_500);
    let output = format!("before\n{long}\nafter\n");
    let mut bang = finished("cat minified.js", &output, Some(0));
    if let BangState::Finished(result) = &mut bang.state {
        result.summary.truncated = true;
        result.summary.total_lines = 9_000;
        result.summary.artifact_id = Some("3".into());
    }
    let rows = draw(&bang, 120);
    let capped: String = rows[2..rows.len() - 3].concat();
    assert_eq!(capped, format!("{}… [1000 chars omitted]", &long[..4000]));
    assert_eq!(
        &rows[rows.len() - 2..],
        [
            "… 8997 more lines (ctrl+o to expand)",
            "⟦Full output: artifact://3. Truncated: 3 lines shown (50.0KB limit)⟧"
        ]
    );
    assert_snapshot!(at_widths(
        |w| DefaultRenderer::default().bang(&BangView::new(&bang), w)
    ));
}

#[test]
fn snapshot_expanded_window() {
    let output = format!("{}\n", numbers(1, 100));
    let bang = finished("seq 100", &output, Some(0));
    let mut view = BangView::new(&bang);
    view.expansion = Expansion::Expanded {
        window: LineWindow::of_text(&output, 50),
        rows: 3,
    };
    let rows = plain(&DefaultRenderer::default().bang(&view, 80));
    assert_eq!(
        rows,
        [
            "! seq 100",
            "50",
            "51",
            "52",
            "(lines 50-52 of 100, ctrl+o to collapse)"
        ]
    );
    assert_snapshot!(at_widths(|w| DefaultRenderer::default().bang(&view, w)));
}
