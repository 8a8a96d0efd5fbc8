//! Properties of every view: no row wider than the width, the collapsed bounds (last 10
//! visual lines of a tool call, last 20 lines of a bang command),
//! and no panic on any string.

use agentsh_renderer::{
    BangRun, BangState, BangView, BashArgs, BashResult, CallState, DefaultRenderer, Expansion,
    JobState, JobSummary, LineWindow, OutputSummary, Renderer, Theme, ToolCallView, TruncatedBy,
    cap_line,
};
// (`wrap` is used for the header only: the body is checked by content.)
use proptest::prelude::*;

use super::support::{details, result, truncation};

/// Strings that stress the views: controls, escapes, wide and combining chars, tabs, newlines,
/// long runs.
fn hostile() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        any::<String>(),
        Just("\n".to_owned()),
        Just("\t".to_owned()),
        Just("\r".to_owned()),
        Just("\u{1b}[31m".to_owned()),
        Just("\u{1b}]0;t\u{7}".to_owned()),
        Just("\u{9b}".to_owned()),
        Just("日本".to_owned()),
        Just("👨‍👩‍👧".to_owned()),
        Just("e\u{301}".to_owned()),
        Just("\u{202e}".to_owned()),
        "[a-z ]{0,300}",
        "x{3990,4010}",
    ];
    prop::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
}

fn widths_ok(
    text: &agentsh_renderer::ratatui_core::text::Text<'_>,
    width: u16,
) -> Result<(), TestCaseError> {
    for line in &text.lines {
        let shown = line.to_string();
        prop_assert!(
            agentsh_renderer::str_width(&shown) <= usize::from(width.max(1)),
            "row wider than {width}: {shown:?}"
        );
        prop_assert!(
            !shown.chars().any(char::is_control),
            "control char drawn: {shown:?}"
        );
    }
    Ok(())
}

fn theme() -> impl Strategy<Value = Theme> {
    prop::sample::select(Theme::ALL.to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn tool_views_fit_and_collapse_to_twelve_rows(
        command in hostile(), output in hostile(), width in 0u16..200, theme in theme(),
        running in any::<bool>(), truncated in any::<bool>(), timeout in any::<bool>(),
        first in 1u64..20, rows in 0u16..50,
    ) {
        let renderer = DefaultRenderer::new(theme);
        let args = BashArgs {
            command: command.clone(),
            timeout: timeout.then_some(30.0),
            cwd: Some("sub dir".into()),
            ..BashArgs::default()
        };
        let mut details = details(Some(1));
        details.cwd = "/project/sub dir".into();
        if truncated {
            details.meta = Some(truncation(TruncatedBy::Bytes, (5, 9), 9, Some("4")));
        }
        let done = result(&output, details, true);
        let state = if running { CallState::Running { tail: &output } } else { CallState::Done(&done) };
        let mut view = ToolCallView::new(&args, "/project", state);
        let collapsed = renderer.tool_call(&view, width);
        widths_ok(&collapsed, width)?;
        // Everything but the call line and the footers: header, 10 lines, warning (and the
        // spinner of a running call, which stands where the result will be).
        let call_rows = renderer
            .tool_call(&ToolCallView::new(&BashArgs { command, cwd: args.cwd.clone(), ..BashArgs::default() }, "/project", CallState::Running { tail: "" }), width)
            .lines
            .len()
            - 1;
        let footer_rows = usize::from(timeout);
        let body = collapsed.lines.len() - call_rows - footer_rows;
        prop_assert!(body <= 12 + usize::from(running), "{body} rows between call line and footer");

        view.expansion = Expansion::Expanded { window: LineWindow::of_text(&output, first), rows };
        let expanded = renderer.tool_call(&view, width);
        widths_ok(&expanded, width)?;
    }

    #[test]
    fn bang_view_shows_the_last_twenty_capped_lines(
        output in hostile(), width in 2u16..200, theme in theme(), exit in prop::option::of(0i32..3),
    ) {
        // Without controls the drawn rows are the output itself, so their content can be checked.
        let output: String = output.chars().filter(|c| !c.is_control() || *c == '\n').filter(|c| !('\u{202a}'..='\u{2069}').contains(c)).collect();
        let renderer = DefaultRenderer::new(theme);
        let bang = BangRun {
            command: "cmd".into(),
            exclude_from_context: false,
            state: BangState::Finished(BashResult {
                summary: OutputSummary { output: output.clone(), ..OutputSummary::default() },
                exit_code: exit,
                ..BashResult::default()
            }),
        };
        let text = renderer.bang(&BangView::new(&bang), width);
        widths_ok(&text, width)?;
        let body = output.strip_suffix('\n').unwrap_or(&output);
        let lines: Vec<&str> = if body.is_empty() { vec![] } else { body.split('\n').collect() };
        let last = &lines[lines.len().saturating_sub(20)..];
        let ellipsis = agentsh_renderer::Glyphs::of(theme).ellipsis;
        let want: String = last.iter().map(|line| cap_line(line, 4000, ellipsis).into_owned()).collect();
        // Rows after the header, before the footers: the capped lines, wrapped.
        let header_rows = agentsh_renderer::wrap("$ cmd", width).count();
        let footer_rows = usize::from(lines.len() > 20)
            + usize::from(lines.is_empty())
            + usize::from(exit != Some(0));
        let drawn: String = text.lines[header_rows..text.lines.len() - footer_rows]
            .iter()
            .map(ToString::to_string)
            .collect();
        prop_assert_eq!(drawn, want);
    }

    #[test]
    fn running_bang_and_job_lines_fit(
        command in hostile(), output in hostile(), width in 0u16..200, theme in theme(), tick in any::<u64>(),
    ) {
        let renderer = DefaultRenderer::new(theme);
        let bang = BangRun { command: command.clone(), exclude_from_context: true, state: BangState::Running { output: output.clone() } };
        let mut view = BangView::new(&bang);
        view.tick = tick;
        widths_ok(&renderer.bang(&view, width), width)?;
        view.expansion = Expansion::Expanded { window: LineWindow::of_text(&output, 3), rows: 7 };
        widths_ok(&renderer.bang(&view, width), width)?;
        for state in [JobState::Running, JobState::WaitingForInput, JobState::Exited, JobState::Killed] {
            let job = JobSummary {
                id: "1".into(), state, exit_code: Some(7), pty: true, command: command.clone(),
                run_time: std::time::Duration::from_secs(tick % 100_000), output_bytes: tick,
                usage: None,
            };
            let line = renderer.job_line(&job, width);
            prop_assert!(agentsh_renderer::str_width(&line.to_string()) <= usize::from(width.max(1)));
        }
    }
}
