//! How a test writes a view down: plain rows, and rows with their styles.

use std::fmt::Write as _;

use agentsh_renderer::ratatui_core::buffer::Buffer;
use agentsh_renderer::ratatui_core::style::{Color, Modifier, Style};
use agentsh_renderer::ratatui_core::text::Text;
use agentsh_renderer::{
    ShownRange, Timeout, ToolDetails, ToolMeta, ToolResult, TruncatedBy, Truncation,
    TruncationDirection,
};

/// The widths every view is drawn at.
pub const WIDTHS: [u16; 3] = [40, 80, 120];

/// The rows as text, one per line.
pub fn plain(text: &Text<'_>) -> Vec<String> {
    text.lines.iter().map(ToString::to_string).collect()
}

fn color_name(color: Color) -> String {
    format!("{color:?}").to_lowercase()
}

/// A style as `fg/bg+mods`, empty for the default style.
pub fn style_name(style: Style) -> String {
    let mut parts = Vec::new();
    if let Some(fg) = style.fg {
        parts.push(color_name(fg));
    }
    if let Some(bg) = style.bg {
        parts.push(format!("on {}", color_name(bg)));
    }
    let modifiers = style.add_modifier;
    for (modifier, name) in [
        (Modifier::BOLD, "bold"),
        (Modifier::DIM, "dim"),
        (Modifier::ITALIC, "italic"),
        (Modifier::UNDERLINED, "underlined"),
        (Modifier::REVERSED, "reversed"),
    ] {
        if modifiers.contains(modifier) {
            parts.push(name.to_owned());
        }
    }
    parts.join(" ")
}

/// The rows with each span's style: `{style}text{/}`; unstyled spans bare.
pub fn styled(text: &Text<'_>) -> Vec<String> {
    text.lines
        .iter()
        .map(|line| {
            let mut row = String::new();
            for span in &line.spans {
                let style = style_name(line.style.patch(span.style));
                if style.is_empty() {
                    row.push_str(&span.content);
                } else {
                    write!(row, "{{{style}}}{}{{/}}", span.content).expect("write to a String");
                }
            }
            row
        })
        .collect()
}

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
        for row in styled(&text) {
            writeln!(out, "{row}").expect("write to a String");
        }
    }
    out
}

/// A buffer's rows as text, trailing blanks kept visible with `|` at the edge.
pub fn buffer_rows(buf: &Buffer) -> Vec<String> {
    let area = buf.area;
    (area.top()..area.bottom())
        .map(|y| {
            let mut row = String::new();
            let mut skip = 0;
            for x in area.left()..area.right() {
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                let symbol = buf[(x, y)].symbol();
                skip = agentsh_renderer::str_width(symbol).saturating_sub(1);
                row.push_str(symbol);
            }
            format!("{row}|")
        })
        .collect()
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
    }
}

/// `1\n2\n…\nN` without the final newline.
pub fn numbers(from: u64, to: u64) -> String {
    (from..=to)
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}
