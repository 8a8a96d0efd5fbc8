//! A second [`Renderer`] for agentsh, outside the renderer crate: the proof that a
//! downstream crate swaps the whole look with nothing but `agentsh-renderer` (for the trait and
//! the layout helpers), `agentsh-protocol` (the data) and `ratatui-core` (the types drawn).
//!
//! [`CompactRenderer`] draws every view small:
//!
//! - a tool call is one header line `<glyph> <command>` (`✓` done, `✗` failed with
//!   `(exit N)`, `(timed out)` or `(cancelled)` after it, `…` running), then the last
//!   [`PREVIEW_LINES`] logical lines of its output, each cut (not wrapped) to the width and
//!   indented by two spaces; expanded, the lines of the window the host passes, `rows` of them;
//! - a bang command is the same with `!` (or `!!`) in front: `! ✓ make`;
//! - a PTY overlay is a header row `▶ <command>` above the screen, no footer;
//! - a job line is `#N <state> <command>`.
//!
//! Every string drawn goes through [`strip_controls`] first, and no row is wider than the width
//! ([`str_width`]). A command of several lines is shown by its first line followed by ` …`.
//!
//! ```
//! use agentsh_compact_renderer::CompactRenderer;
//! use agentsh_renderer::{BashArgs, CallState, Renderer, ToolCallView};
//!
//! let args = BashArgs { command: "make".into(), ..BashArgs::default() };
//! let view = ToolCallView::new(&args, "/project", CallState::Running { tail: "cc a.c\ncc b.c\n" });
//! let text = CompactRenderer.tool_call(&view, 40);
//! let rows: Vec<String> = text.lines.iter().map(ToString::to_string).collect();
//! assert_eq!(rows, ["… make", "  cc a.c", "  cc b.c"]);
//! ```

use agentsh_protocol::{BangState, JobState, JobSummary, ToolResult, lines_of};
use agentsh_renderer::{
    BangView, CallState, Expansion, PtyOverlayView, Renderer, ToolCallView, draw_screen,
    expand_tabs, single_line, str_width, strip_controls, truncate_to_width,
};
use ratatui_core::buffer::Buffer;
use ratatui_core::layout::{Position, Rect};
use ratatui_core::style::{Color, Modifier, Style};
use ratatui_core::text::{Line, Span, Text};

/// Logical lines of output a collapsed view shows.
pub const PREVIEW_LINES: usize = 3;

/// What a cut row ends with.
const ELLIPSIS: &str = "…";

/// What each output row starts with.
const INDENT: &str = "  ";

/// The compact views: one header line and a short preview per call.
///
/// It has no state and no theme; it is a unit struct so that a host can pass
/// `&CompactRenderer` wherever it takes a `&dyn Renderer`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompactRenderer;

impl Renderer for CompactRenderer {
    fn tool_call(&self, view: &ToolCallView<'_>, width: u16) -> Text<'static> {
        let (status, output) = match view.state {
            CallState::Running { tail } => (Status::Running, tail.to_owned()),
            CallState::Done(result) => (Status::of_result(result), result.text()),
        };
        let header = header_line(Vec::new(), status, &view.args.command, width);
        with_output(header, &output, view.expansion, width)
    }

    fn bang(&self, view: &BangView<'_>, width: u16) -> Text<'static> {
        let bang = view.bang;
        let status = match &bang.state {
            BangState::Running { .. } => Status::Running,
            BangState::Finished(result) => Status::of_outcome(
                result.exit_code != Some(0) || result.cancelled || result.timed_out,
                result.exit_code,
                result.cancelled,
                result.timed_out,
            ),
        };
        let (marker, style) = if bang.exclude_from_context {
            (
                "!! ",
                Style::new().fg(Color::Magenta).add_modifier(Modifier::DIM),
            )
        } else {
            ("! ", Style::new().fg(Color::Magenta))
        };
        let header = header_line(
            vec![Part::new(marker.to_owned(), style)],
            status,
            &bang.command,
            width,
        );
        with_output(header, bang.output(), view.expansion, width)
    }

    fn pty_overlay(
        &self,
        view: &PtyOverlayView<'_>,
        area: Rect,
        buf: &mut Buffer,
    ) -> Option<Position> {
        if area.is_empty() {
            return None;
        }
        let header = fit(
            vec![Part::new("▶ ".to_owned(), Style::new().fg(Color::Cyan))],
            Part::new(command_text(view.command), bold()),
            Vec::new(),
            area.width,
        );
        buf.set_style(Rect { height: 1, ..area }, Style::reset());
        buf.set_line(area.x, area.y, &header, area.width);
        let inner = self.pty_screen_area(area);
        draw_screen(view.screen, inner, buf);
        let (row, col) = view.screen.cursor?;
        (row < inner.height && col < inner.width)
            .then(|| Position::new(inner.x + col, inner.y + row))
    }

    fn pty_screen_area(&self, area: Rect) -> Rect {
        let top = area.height.min(1);
        Rect {
            y: area.y + top,
            height: area.height - top,
            ..area
        }
    }

    fn job_line(&self, job: &JobSummary, width: u16) -> Line<'static> {
        let (state, style) = match (job.state, job.exit_code) {
            (JobState::Running, _) => ("running".to_owned(), Style::new().fg(Color::Yellow)),
            (JobState::WaitingForInput, _) => ("waiting".to_owned(), Style::new().fg(Color::Cyan)),
            (JobState::Exited, Some(0)) => ("exit 0".to_owned(), Style::new().fg(Color::Green)),
            (JobState::Exited, Some(code)) => (format!("exit {code}"), Style::new().fg(Color::Red)),
            (JobState::Exited, None) => ("exited".to_owned(), dim()),
            (JobState::Killed, _) => ("killed".to_owned(), dim()),
        };
        fit(
            vec![
                Part::new(format!("#{} ", single_line(&job.id)), bold()),
                Part::new(format!("{state} "), style),
            ],
            Part::new(command_text(&job.command), Style::new()),
            Vec::new(),
            width,
        )
    }
}

/// How a call or bang command stands, for its header's glyph and suffix.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Status {
    Running,
    Succeeded,
    /// Failed, with what follows the command (`(exit 2)`), if anything.
    Failed(Option<String>),
}

impl Status {
    fn of_result(result: &ToolResult) -> Self {
        let details = &result.details;
        Self::of_outcome(
            result.is_error,
            details.exit_code,
            details.cancelled,
            details.timed_out,
        )
    }

    fn of_outcome(failed: bool, exit_code: Option<i32>, cancelled: bool, timed_out: bool) -> Self {
        if !failed {
            return Self::Succeeded;
        }
        let suffix = if timed_out {
            Some("(timed out)".to_owned())
        } else if cancelled {
            Some("(cancelled)".to_owned())
        } else {
            // No exit status (a blocked command, a bad cwd): the preview says why.
            exit_code
                .filter(|&code| code != 0)
                .map(|code| format!("(exit {code})"))
        };
        Self::Failed(suffix)
    }

    fn glyph(&self) -> Part {
        match self {
            Self::Running => Part::new("…".to_owned(), Style::new().fg(Color::Yellow)),
            Self::Succeeded => Part::new("✓".to_owned(), Style::new().fg(Color::Green)),
            Self::Failed(_) => Part::new("✗".to_owned(), Style::new().fg(Color::Red)),
        }
    }
}

/// `<marker><glyph> <command>[ <suffix>]`, fitted to `width` with the suffix kept in view.
fn header_line(mut left: Vec<Part>, status: Status, command: &str, width: u16) -> Line<'static> {
    left.push(status.glyph());
    left.push(Part::new(" ".to_owned(), Style::new()));
    let right = match status {
        Status::Failed(Some(suffix)) => {
            vec![Part::new(format!(" {suffix}"), Style::new().fg(Color::Red))]
        }
        _ => Vec::new(),
    };
    fit(left, Part::new(command_text(command), bold()), right, width)
}

/// The header followed by the output's rows: the last [`PREVIEW_LINES`] lines when collapsed,
/// the window's lines when expanded.
fn with_output(
    header: Line<'static>,
    output: &str,
    expansion: Expansion<'_>,
    width: u16,
) -> Text<'static> {
    let mut lines = vec![header];
    match expansion {
        Expansion::Collapsed => {
            let output = strip_controls(output);
            let all: Vec<&str> = lines_of(&output).collect();
            let start = all.len().saturating_sub(PREVIEW_LINES);
            lines.extend(all[start..].iter().map(|line| output_row(line, width)));
        }
        Expansion::Expanded { window, rows } => {
            let text = strip_controls(window.text);
            lines.extend(
                lines_of(&text)
                    .take(usize::from(rows))
                    .map(|line| output_row(line, width)),
            );
        }
    }
    Text::from(lines)
}

/// One output line (already stripped), indented and cut to `width`.
fn output_row(line: &str, width: u16) -> Line<'static> {
    let row = format!("{INDENT}{}", expand_tabs(line));
    Line::styled(truncate_to_width(&row, width, ELLIPSIS).into_owned(), dim())
}

/// A command as a header shows it: stripped, its first line only (then ` …`), tabs expanded.
fn command_text(command: &str) -> String {
    let clean = strip_controls(command);
    let clean = clean.trim();
    match clean.split_once('\n') {
        Some((first, _)) => format!("{} {ELLIPSIS}", expand_tabs(first.trim_end())),
        None => expand_tabs(clean).into_owned(),
    }
}

/// A piece of a line with its style.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Part {
    text: String,
    style: Style,
}

impl Part {
    fn new(text: String, style: Style) -> Self {
        Self { text, style }
    }

    fn width(&self) -> usize {
        str_width(&self.text)
    }
}

/// `left`, `flexible` and `right` on one line of at most `width` columns: the flexible part is
/// cut first; when even the fixed parts do not fit, the line is cut from its end.
fn fit(left: Vec<Part>, flexible: Part, right: Vec<Part>, width: u16) -> Line<'static> {
    let fixed: usize = left.iter().chain(&right).map(Part::width).sum();
    let limit = usize::from(width);
    let mut parts = left;
    if fixed + flexible.width() <= limit {
        parts.push(flexible);
        parts.extend(right);
    } else if fixed < limit {
        let room = (limit - fixed) as u16;
        let text = truncate_to_width(&flexible.text, room, ELLIPSIS).into_owned();
        parts.push(Part::new(text, flexible.style));
        parts.extend(right);
    } else {
        parts.push(flexible);
        parts.extend(right);
        let mut left = limit;
        let mut cut = Vec::new();
        for part in parts {
            if left == 0 {
                break;
            }
            let text = truncate_to_width(&part.text, left as u16, ELLIPSIS).into_owned();
            left = left.saturating_sub(str_width(&text));
            cut.push(Part::new(text, part.style));
        }
        parts = cut;
    }
    Line::from(
        parts
            .into_iter()
            .map(|part| Span::styled(part.text, part.style))
            .collect::<Vec<_>>(),
    )
}

fn bold() -> Style {
    Style::new().add_modifier(Modifier::BOLD)
}

fn dim() -> Style {
    Style::new().add_modifier(Modifier::DIM)
}
