//! The tool call view: snapshots read against the spec, and hand-written rows.

use agentsh_renderer::{
    BashArgs, CallState, DefaultRenderer, Expansion, LineWindow, Renderer, Theme, ToolCallView,
    TruncatedBy,
};
use insta::assert_snapshot;

use super::support::{at_widths, details, numbers, plain, result, truncation};

fn args(command: &str) -> BashArgs {
    BashArgs {
        command: command.into(),
        ..BashArgs::default()
    }
}

fn draw(view: &ToolCallView<'_>, width: u16) -> Vec<String> {
    plain(&DefaultRenderer::default().tool_call(view, width))
}

#[test]
fn collapsed_header_counts_hidden_and_shown_visual_lines() {
    let args = args("seq 30");
    let done = result(&numbers(1, 30), details(Some(0)), false);
    let view = ToolCallView::new(&args, "/project", CallState::Done(&done));
    let rows = draw(&view, 80);
    assert_eq!(rows[0], "$ seq 30");
    assert_eq!(
        rows[1],
        "… (20 earlier lines, showing 10 of 30) (ctrl+o to expand)"
    );
    assert_eq!(
        &rows[2..],
        ["21", "22", "23", "24", "25", "26", "27", "28", "29", "30"]
    );
}

#[test]
fn collapsed_header_counts_wrapped_rows_and_the_whole_output() {
    // Twelve lines of 50 chars at width 40: 24 visual rows, 10 shown. T is `totalLines`.
    let line = "x".repeat(50);
    let text = [line.as_str(); 12].join("\n");
    let mut details = details(Some(0));
    details.meta = Some(truncation(TruncatedBy::Lines, (189, 200), 200, None));
    let done = result(&text, details, false);
    let args = args("gen | tail -n 12");
    let view = ToolCallView::new(&args, "/project", CallState::Done(&done));
    let rows = draw(&view, 40);
    assert_eq!(rows[1], "… (14 earlier lines, showing 10 of 200)…");
    let rows = draw(&view, 120);
    assert_eq!(
        rows[1],
        "… (2 earlier lines, showing 10 of 200) (ctrl+o to expand)"
    );
    assert_eq!(rows.last().unwrap(), "⟦Truncated: showing 12 of 200 lines⟧");
}

#[test]
fn short_result_has_no_header() {
    let args = args("echo hi");
    let done = result("hi", details(Some(0)), false);
    let view = ToolCallView::new(&args, "/project", CallState::Done(&done));
    assert_eq!(draw(&view, 80), ["$ echo hi", "hi"]);
}

#[test]
fn call_outside_the_project_dir_is_drawn_with_cd() {
    let args = BashArgs {
        command: "make".into(),
        cwd: Some("crates/x".into()),
        ..BashArgs::default()
    };
    let mut inside = details(Some(0));
    inside.cwd = "/project/crates/x".into();
    let done = result("ok", inside, false);
    let view = ToolCallView::new(&args, "/project", CallState::Done(&done));
    assert_eq!(draw(&view, 80)[0], "$ cd crates/x && make");
    let running = ToolCallView::new(&args, "/project", CallState::Running { tail: "" });
    assert_eq!(draw(&running, 80)[0], "$ cd crates/x && make");
    let mut outside = details(Some(0));
    outside.cwd = "/tmp/my dir".into();
    let done = result("ok", outside, false);
    let view = ToolCallView::new(&args, "/project", CallState::Done(&done));
    assert_eq!(draw(&view, 80)[0], "$ cd '/tmp/my dir' && make");
}

#[test]
fn snapshot_collapsed_byte_truncated_with_timeout() {
    let args = BashArgs {
        command: "seq 200000".into(),
        timeout: Some(30.0),
        ..BashArgs::default()
    };
    let text = format!(
        "{}\n\n[Showing lines 192687-200000 of 200000 (50.0KB limit). Full: artifact://12]",
        numbers(192_687, 200_000)
    );
    let mut details = details(Some(0));
    details.meta = Some(truncation(
        TruncatedBy::Bytes,
        (192_687, 200_000),
        200_000,
        Some("12"),
    ));
    let done = result(&text, details, false);
    let view = ToolCallView::new(&args, "/project", CallState::Done(&done));
    let rows = draw(&view, 120);
    assert_eq!(
        rows[1],
        "… (7306 earlier lines, showing 10 of 200000) (ctrl+o to expand)"
    );
    assert_eq!(
        &rows[rows.len() - 2..],
        [
            "⟦Full output: artifact://12. Truncated: 7314 lines shown (50.0KB limit)⟧",
            "⟦Timeout: 30s⟧"
        ]
    );
    assert_snapshot!(at_widths(|w| DefaultRenderer::default().tool_call(&view, w)));
}

#[test]
fn snapshot_expanded_with_artifact_text() {
    let args = args("seq 200000");
    let mut details = details(Some(2));
    details.meta = Some(truncation(
        TruncatedBy::Bytes,
        (192_687, 200_000),
        200_000,
        Some("12"),
    ));
    let done = result("(tail)", details, true);
    // What the host read from artifact 12: lines 1-6 of 200000.
    let artifact = numbers(1, 6);
    let mut view = ToolCallView::new(&args, "/project", CallState::Done(&done));
    assert_eq!(
        view.expanded_source(),
        agentsh_renderer::ExpandedSource::Artifact("12")
    );
    view.expansion = Expansion::Expanded {
        window: LineWindow {
            first_line: 1,
            text: &artifact,
            total_lines: 200_000,
        },
        rows: 5,
    };
    let rows = draw(&view, 80);
    assert_eq!(
        rows,
        [
            "$ seq 200000",
            "1",
            "2",
            "3",
            "4",
            "5",
            "(lines 1-5 of 200000, ctrl+o to collapse)",
            "Command exited with code 2",
            "⟦Full output: artifact://12. Truncated: 7314 lines shown (50.0KB limit)⟧",
        ]
    );
    assert_snapshot!(at_widths(|w| DefaultRenderer::default().tool_call(&view, w)));
}

#[test]
fn snapshot_expanded_result_text_scrolled() {
    let args = args("seq 12");
    let text = numbers(1, 12);
    let done = result(&text, details(Some(0)), false);
    let mut view = ToolCallView::new(&args, "/project", CallState::Done(&done));
    let agentsh_renderer::ExpandedSource::Text(source) = view.expanded_source() else {
        panic!("no artifact: the result text is the source");
    };
    view.expansion = Expansion::Expanded {
        window: LineWindow::of_text(source, 4),
        rows: 4,
    };
    assert_eq!(
        draw(&view, 40),
        [
            "$ seq 12",
            "4",
            "5",
            "6",
            "7",
            "(lines 4-7 of 12, ctrl+o to collapse)"
        ]
    );
    assert_snapshot!(at_widths(|w| DefaultRenderer::default().tool_call(&view, w)));
}

#[test]
fn snapshot_running_spinner_each_theme() {
    let args = BashArgs {
        command: "cargo build".into(),
        timeout: Some(600.0),
        ..BashArgs::default()
    };
    let tail = "   Compiling a v0.1.0\n   Compiling b v0.2.0\n";
    let mut out = String::new();
    for theme in Theme::ALL {
        let mut view = ToolCallView::new(&args, "/project", CallState::Running { tail });
        view.tick = 3;
        out.push_str(&format!("══ theme {theme} ══\n"));
        out.push_str(&at_widths(|w| {
            DefaultRenderer::new(theme).tool_call(&view, w)
        }));
    }
    assert_snapshot!(out);
}

#[test]
fn snapshot_running_with_its_time_and_waiting_for_approval_each_theme() {
    let args = BashArgs {
        command: "cargo build".into(),
        ..BashArgs::default()
    };
    let tail = "   Compiling a v0.1.0\n";
    let mut out = String::new();
    for theme in Theme::ALL {
        out.push_str(&format!("══ theme {theme} ══\n"));
        for (elapsed, waiting) in [(42, false), (187, false), (3, true)] {
            let mut view = ToolCallView::new(&args, "/project", CallState::Running { tail });
            view.tick = 9;
            view.elapsed = Some(std::time::Duration::from_secs(elapsed));
            view.awaiting_approval = waiting;
            out.push_str(&at_widths(|w| {
                DefaultRenderer::new(theme).tool_call(&view, w)
            }));
        }
    }
    assert_snapshot!(out);
}

#[test]
fn snapshot_truncation_warnings_each_theme() {
    let args = args("make test | tail -n 3");
    let mut by_lines = details(Some(0));
    by_lines.meta = Some(truncation(TruncatedBy::Lines, (98, 100), 100, None));
    let by_lines = result("ok 98\nok 99\nok 100", by_lines, false);
    let mut by_bytes = details(Some(0));
    by_bytes.meta = Some(truncation(
        TruncatedBy::Bytes,
        (9_001, 10_000),
        10_000,
        Some("7"),
    ));
    let by_bytes = result(
        "line 9999\nline 10000\n\n[Showing lines 9001-10000 of 10000 (50.0KB limit). Full: artifact://7]",
        by_bytes,
        false,
    );
    let mut out = String::new();
    for theme in Theme::ALL {
        for done in [&by_lines, &by_bytes] {
            let view = ToolCallView::new(&args, "/project", CallState::Done(done));
            out.push_str(&format!("══ theme {theme} ══\n"));
            out.push_str(&at_widths(|w| {
                DefaultRenderer::new(theme).tool_call(&view, w)
            }));
        }
    }
    assert_snapshot!(out);
}

#[test]
fn snapshot_exit_code_cancelled_and_empty() {
    let args = args("false; sleep 100");
    let failed = result(
        "(no output)\n\nCommand exited with code 1",
        details(Some(1)),
        true,
    );
    let mut aborted_details = details(None);
    aborted_details.cancelled = true;
    let aborted = result(
        "[Command cancelled]\n(no output)\n\nCommand aborted",
        aborted_details,
        true,
    );
    let empty = result("(no output)", details(Some(0)), false);
    let mut out = String::new();
    for (name, done) in [
        ("exit 1", &failed),
        ("aborted", &aborted),
        ("empty", &empty),
    ] {
        let view = ToolCallView::new(&args, "/project", CallState::Done(done));
        out.push_str(&format!("══ {name} ══\n"));
        out.push_str(&at_widths(|w| {
            DefaultRenderer::default().tool_call(&view, w)
        }));
    }
    assert_snapshot!(out);
}

#[test]
fn snapshot_wide_chars_combining_marks_tabs_and_wrapping() {
    let args = args("cat intl.txt");
    let text = [
        "日本語のテキスト、幅は二列ずつ。".repeat(3),
        "emoji 👍🏽 family 👨‍👩‍👧 flag 🇫🇷".to_owned(),
        "e\u{301}le\u{300}ve cafe\u{301} n\u{303}".to_owned(),
        "a\tb\tc\t|".to_owned(),
        "日\tx".to_owned(),
        format!("{}end", "long-".repeat(30)),
    ]
    .join("\n");
    let done = result(&text, details(Some(0)), false);
    let mut view = ToolCallView::new(&args, "/project", CallState::Done(&done));
    view.expansion = Expansion::Expanded {
        window: LineWindow::of_text(&text, 1),
        rows: 30,
    };
    assert_eq!(draw(&view, 80)[5], "a   b   c   |");
    assert_eq!(draw(&view, 80)[6], "日  x");
    assert_snapshot!(at_widths(|w| DefaultRenderer::default().tool_call(&view, w)));
}

#[test]
fn snapshot_command_with_escape_sequences_is_inert() {
    let args = args(
        "echo $'\\e]0;pwned\\a' \u{1b}[31mred\u{1b}[0m \u{1b}]0;title\u{7}x\u{9b}2J\u{202e}evil",
    );
    let done = result(
        "\u{1b}[2Jclear\u{1b}[1;1Hhome\rline\u{7}",
        details(Some(0)),
        false,
    );
    let view = ToolCallView::new(&args, "/project", CallState::Done(&done));
    let rows = draw(&view, 120);
    for row in &rows {
        assert!(
            !row.chars()
                .any(|c| c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c)),
            "control in {row:?}"
        );
    }
    assert_eq!(rows[0], "$ echo $'\\e]0;pwned\\a' red x2Jevil");
    assert_snapshot!(at_widths(|w| DefaultRenderer::default().tool_call(&view, w)));
}

#[test]
fn snapshot_multi_line_command() {
    let args = args("for i in 1 2; do\n  echo \"$i\"\ndone");
    let done = result("1\n2", details(Some(0)), false);
    let view = ToolCallView::new(&args, "/project", CallState::Done(&done));
    assert_eq!(
        draw(&view, 80),
        ["$ for i in 1 2; do", "    echo \"$i\"", "  done", "1", "2"]
    );
    assert_snapshot!(at_widths(|w| DefaultRenderer::default().tool_call(&view, w)));
}

#[test]
fn a_shaped_result_is_marked_and_expands_to_the_raw_output() {
    let args = args("cargo test");
    let text = "[… 40 passing tests …]\ntest tests::b ... FAILED\ntest result: FAILED. 40 passed; 1 failed\n\nCommand exited with code 101\n\n[Shaped output of cargo test: 41 of 45 lines left out; full output: artifact://7]";
    let mut details = details(Some(101));
    details.meta = Some(agentsh_renderer::ToolMeta {
        truncation: None,
        shaped: Some(agentsh_renderer::ShapedMeta {
            shaper: "cargo test".into(),
            raw_lines: 45,
            raw_bytes: 2000,
            kept_lines: 4,
            artifact_id: "7".into(),
        }),
    });
    let done = result(text, details, true);
    let view = ToolCallView::new(&args, "/project", CallState::Done(&done));
    // ctrl+o opens the raw output, the artifact the text names.
    assert!(matches!(
        view.expanded_source(),
        agentsh_renderer::ExpandedSource::Artifact("7")
    ));
    let rows = draw(&view, 100);
    // The marker, bracketed as the theme brackets what the view adds.
    let marker = rows.last().expect("rows");
    assert!(
        marker.ends_with("Shaped: 41 of 45 lines of cargo test left out (ctrl+o: the raw output)⟧"),
        "{rows:#?}"
    );
    assert!(
        rows.iter().any(|row| row == "test tests::b ... FAILED"),
        "{rows:#?}"
    );
}
