//! How a test writes a view down: plain rows, and rows with their styles.

use std::fmt::Write as _;

use agentsh_renderer::ratatui_core::text::Text;
pub use agentsh_renderer::snapshot::{buffer_rows, plain_rows as plain, style_name, styled_rows};
use agentsh_renderer::{
    ShownRange, Timeout, ToolDetails, ToolMeta, ToolResult, TruncatedBy, Truncation,
    TruncationDirection,
};

/// The widths every view is drawn at.
pub const WIDTHS: [u16; 3] = [40, 80, 120];

/// A view drawn at the three widths, plain then styled, as one snapshot text. Every plain row
/// is checked to fit its width on the way.
pub fn at_widths(mut draw: impl FnMut(u16) -> Text<'static>) -> String {
    let mut out = String::new();
    for width in WIDTHS {
        let text = draw(width);
        for line in &text.lines {
            assert!(
                line.width() <= usize::from(width),
                "row wider than {width}: {line}"
            );
        }
        writeln!(out, "── {width} columns, plain ──").expect("write to a String");
        for row in plain(&text) {
            writeln!(out, "{row}").expect("write to a String");
        }
        writeln!(out, "── {width} columns, styled ──").expect("write to a String");
        for row in styled_rows(&text) {
            writeln!(out, "{row}").expect("write to a String");
        }
    }
    out
}

/// Details of a call that exited with `code` in `/project`.
pub fn details(code: Option<i32>) -> ToolDetails {
    ToolDetails {
        exit_code: code,
        cancelled: false,
        timed_out: false,
        session_restarted: false,
        cwd: "/project".into(),
        timeout: Timeout::DEFAULT,
        meta: None,
        interception: None,
        job: None,
        limit: None,
    }
}

/// A result with `text`.
pub fn result(text: &str, details: ToolDetails, is_error: bool) -> ToolResult {
    ToolResult::new(text.to_owned(), details, is_error)
}

/// `details.meta.truncation` of a tail cut by the byte limit (with an artifact) or by the
/// caller's tail (without one).
pub fn truncation(
    by: TruncatedBy,
    shown: (u64, u64),
    total: u64,
    artifact: Option<&str>,
) -> ToolMeta {
    ToolMeta {
        truncation: Some(Truncation {
            direction: TruncationDirection::Tail,
            truncated_by: by,
            total_lines: total,
            total_bytes: total * 7,
            output_lines: shown.1 - shown.0 + 1,
            output_bytes: (shown.1 - shown.0 + 1) * 7,
            shown_range: ShownRange {
                start: shown.0,
                end: shown.1,
            },
            artifact_id: artifact.map(str::to_owned),
            artifact_error: None,
        }),
        shaped: None,
    }
}

/// `1\n2\n…\nN` without the final newline.
pub fn numbers(from: u64, to: u64) -> String {
    (from..=to)
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}
