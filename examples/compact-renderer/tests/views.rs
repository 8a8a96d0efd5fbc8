//! The compact views: snapshots read by hand against the crate docs, and hand-written rows.

mod support;

use std::fmt::Write as _;

use agentsh_compact_renderer::CompactRenderer;
use agentsh_protocol::{BangState, CellColor, JobState, Screen};
use agentsh_renderer::ratatui_core::buffer::Buffer;
use agentsh_renderer::ratatui_core::layout::{Position, Rect};
use agentsh_renderer::{
    BangView, CallState, Expansion, LineWindow, PtyOverlayView, Renderer, ToolCallView,
};
use insta::assert_snapshot;

use support::{
    args, at_widths, buffer_rows, details, finished_bang, job, numbers, plain, result, styled,
};

fn draw(view: &ToolCallView<'_>, width: u16) -> Vec<String> {
    plain(&CompactRenderer.tool_call(view, width), width)
}

#[test]
fn done_call_is_a_header_and_the_last_three_lines() {
    let long = format!("{}\n{}", numbers(1, 30), "y".repeat(100));
    let args = args("seq 30 && printf y%.0s $(seq 100)");
    let done = result(&long, details(Some(0)), false);
    let view = ToolCallView::new(&args, "/project", CallState::Done(&done));
    assert_snapshot!(at_widths(|width| CompactRenderer.tool_call(&view, width)));
    assert_eq!(draw(&view, 80)[0], "✓ seq 30 && printf y%.0s $(seq 100)");
    assert_eq!(draw(&view, 80).len(), 4);
}

#[test]
fn done_call_styles_the_glyph_and_dims_the_output() {
    let args = args("echo hi");
    let done = result("hi", details(Some(0)), false);
    let view = ToolCallView::new(&args, "/project", CallState::Done(&done));
    assert_eq!(
        styled(&CompactRenderer.tool_call(&view, 40)),
        ["{green}✓{/} {bold}echo hi{/}", "{dim}  hi{/}"]
    );
}

#[test]
fn failing_call_names_its_exit_code() {
    let args = args("make test");
    let text = "error[E0308]: mismatched types\n --> src/lib.rs:3:5\n\tfound `u8`\nCommand exited with code 2";
    let done = result(text, details(Some(2)), true);
    let view = ToolCallView::new(&args, "/project", CallState::Done(&done));
    assert_snapshot!(at_widths(|width| CompactRenderer.tool_call(&view, width)));
    // At a width where the command must be cut, the exit code stays in view.
    assert_eq!(draw(&view, 16)[0], "✗ make… (exit 2)");
    assert_eq!(draw(&view, 14)[0], "✗ ma… (exit 2)");
}

#[test]
fn timed_out_and_cancelled_calls_say_so() {
    let args = args("sleep 999");
    let mut timed_out = details(None);
    timed_out.timed_out = true;
    timed_out.cancelled = true;
    let done = result("Command timed out after 300 seconds", timed_out, true);
    let view = ToolCallView::new(&args, "/project", CallState::Done(&done));
    assert_eq!(draw(&view, 80)[0], "✗ sleep 999 (timed out)");
    let mut cancelled = details(None);
    cancelled.cancelled = true;
    let done = result("Command aborted", cancelled, true);
    let view = ToolCallView::new(&args, "/project", CallState::Done(&done));
    assert_eq!(draw(&view, 80)[0], "✗ sleep 999 (cancelled)");
}

#[test]
fn running_call_shows_its_live_tail() {
    let args = args("cargo build");
    let tail = "   Compiling a v0.1.0\n   Compiling b v0.1.0\n   Compiling c v0.1.0\n   Compiling d v0.1.0\n";
    let view = ToolCallView::new(&args, "/project", CallState::Running { tail });
    assert_snapshot!(at_widths(|width| CompactRenderer.tool_call(&view, width)));
    let empty = ToolCallView::new(&args, "/project", CallState::Running { tail: "" });
    assert_eq!(draw(&empty, 80), ["… cargo build"]);
}

#[test]
fn expanded_call_draws_rows_lines_of_its_window() {
    let args = args("seq 100");
    let all = numbers(1, 100);
    let done = result(&all, details(Some(0)), false);
    let mut view = ToolCallView::new(&args, "/project", CallState::Done(&done));
    view.expansion = Expansion::Expanded {
        window: LineWindow::of_text(&all, 41),
        rows: 5,
    };
    assert_snapshot!(at_widths(|width| CompactRenderer.tool_call(&view, width)));
    assert_eq!(
        draw(&view, 40),
        ["✓ seq 100", "  41", "  42", "  43", "  44", "  45"]
    );
}

#[test]
fn bang_command_is_marked_with_a_bang() {
    let bang = finished_bang("ls -la", &format!("{}\n", numbers(1, 8)), Some(0));
    assert_snapshot!(at_widths(
        |width| CompactRenderer.bang(&BangView::new(&bang), width)
    ));
    let mut failed = finished_bang("false", "", Some(1));
    failed.exclude_from_context = true;
    assert_eq!(
        plain(&CompactRenderer.bang(&BangView::new(&failed), 80), 80),
        ["!! ✗ false (exit 1)"]
    );
    let running = agentsh_protocol::BangRun {
        command: "make".into(),
        exclude_from_context: false,
        state: BangState::Running {
            output: "a\nb\nc\nd".into(),
        },
    };
    assert_eq!(
        plain(&CompactRenderer.bang(&BangView::new(&running), 80), 80),
        ["! … make", "  b", "  c", "  d"]
    );
}

#[test]
fn job_line_per_state() {
    let jobs = [
        job("1", JobState::Running, None, "npm run dev"),
        job("2", JobState::WaitingForInput, None, "python3 -i"),
        job("3", JobState::Exited, Some(0), "make"),
        job("4", JobState::Exited, Some(2), "make test"),
        job("5", JobState::Exited, None, "sh -c 'kill -9 $$'"),
        job("6", JobState::Killed, None, "sleep 999"),
        job(
            "7",
            JobState::Running,
            None,
            "for f in *; do\n  gzip \"$f\"\ndone",
        ),
    ];
    let mut out = String::new();
    for width in [12, 40] {
        writeln!(out, "── {width} columns ──").expect("writing to a String cannot fail");
        for job in &jobs {
            let line = CompactRenderer.job_line(job, width);
            assert!(line.width() <= usize::from(width), "{line}");
            writeln!(out, "{line}|").expect("writing to a String cannot fail");
        }
    }
    assert_snapshot!(out);
}

#[test]
fn pty_overlay_is_a_header_over_the_screen() {
    let mut screen = Screen::blank(30, 3);
    for (col, ch) in ">>> 1+1".chars().enumerate() {
        screen.cells[col].text = ch.to_string();
    }
    for (col, ch) in "2 ok".chars().enumerate() {
        let cell = &mut screen.cells[30 + col];
        cell.text = ch.to_string();
        cell.fg = CellColor::Indexed(2);
    }
    screen.cells[60].text = "日".into();
    screen.cells[61].wide_continuation = true;
    screen.cells[62].text = "\u{1b}".into(); // a control in a cell is never drawn
    screen.cursor = Some((2, 3));
    let view = PtyOverlayView {
        command: "python3 -q",
        screen: &screen,
    };
    let area = Rect::new(0, 0, 24, 5);
    let mut buf = Buffer::empty(area);
    let cursor = CompactRenderer.pty_overlay(&view, area, &mut buf);
    assert_snapshot!(buffer_rows(&buf).join("\n"));
    assert_eq!(cursor, Some(Position::new(3, 3)));
    assert_eq!(
        CompactRenderer.pty_screen_area(area),
        Rect::new(0, 1, 24, 4)
    );
    assert_eq!(
        buf[(2, 2)].fg,
        agentsh_renderer::ratatui_core::style::Color::Indexed(2)
    );
    // A one-row area is all header; an empty one draws nothing.
    assert_eq!(
        CompactRenderer
            .pty_screen_area(Rect::new(0, 0, 24, 1))
            .height,
        0
    );
    let mut tiny = Buffer::empty(Rect::new(0, 0, 0, 0));
    assert_eq!(
        CompactRenderer.pty_overlay(&view, Rect::new(0, 0, 0, 0), &mut tiny),
        None
    );
}

#[test]
fn escape_sequences_in_commands_and_output_are_drawn_inert() {
    let command = "echo $'\u{1b}]0;pwned\u{7}' \u{1b}[2J\u{1b}[31mred\u{9b}x\nsecond line";
    let args = args(command);
    let output = "\u{1b}[1mbold\u{1b}[0m\r\nbell\u{7}\n\u{1b}]52;c;Y2xpcA==\u{7}clip";
    let done = result(output, details(Some(0)), false);
    let view = ToolCallView::new(&args, "/project", CallState::Done(&done));
    let rendered = CompactRenderer.tool_call(&view, 80);
    assert_snapshot!(plain(&rendered, 80).join("\n"));
    let bang = finished_bang(command, output, Some(0));
    let jobs = job("1", JobState::Running, None, command);
    let mut all = plain(&rendered, 80);
    all.extend(plain(&CompactRenderer.bang(&BangView::new(&bang), 80), 80));
    all.push(CompactRenderer.job_line(&jobs, 80).to_string());
    let screen = Screen::blank(10, 2);
    let area = Rect::new(0, 0, 80, 3);
    let mut buf = Buffer::empty(area);
    let pty = PtyOverlayView {
        command,
        screen: &screen,
    };
    CompactRenderer.pty_overlay(&pty, area, &mut buf);
    all.extend(buffer_rows(&buf));
    for row in &all {
        assert!(
            !row.chars().any(|c| c.is_control() && c != '\t'),
            "a control reached a row: {row:?}"
        );
        assert!(!row.contains('\t'), "a tab reached a row: {row:?}");
    }
    assert_eq!(all[0], "✓ echo $'' redx …");
}

#[test]
fn narrow_widths_never_overflow() {
    let args = args("日本語のコマンド --with-a-long-flag");
    let done = result("日本語の出力\n\tindented\nlast", details(Some(3)), true);
    let view = ToolCallView::new(&args, "/project", CallState::Done(&done));
    for width in 0..=24 {
        // `plain` checks every row against the width.
        let rows = draw(&view, width);
        assert_eq!(rows.len(), 4, "width {width}");
    }
    let jobs = job("12", JobState::Exited, Some(130), "日本語");
    for width in 0..=12 {
        assert!(CompactRenderer.job_line(&jobs, width).width() <= usize::from(width));
    }
}
