//! The tool call view.

use agentsh_protocol::{
    COMMAND_ABORTED, FullOutput, Timeout, ToolDetails, TruncatedBy, Truncation, count_lines,
    exit_outcome, format_size, timeout_annotation,
};
use ratatui_core::text::Text;

use super::DefaultRenderer;
use super::rows::{Rows, last_rows};
use crate::layout::strip_controls;
use crate::view::{CallState, ExpandedSource, Expansion, ToolCallView};

/// Visual lines a collapsed tool call shows.
pub const COLLAPSED_TOOL_LINES: usize = 10;

impl DefaultRenderer {
    pub(super) fn draw_tool_call(&self, view: &ToolCallView<'_>, width: u16) -> Text<'static> {
        let glyphs = &self.glyphs;
        let palette = &self.palette;
        let mut rows = Rows::new(width);
        let cwd = match view.state {
            CallState::Done(result) => Some(result.details.cwd.as_str()),
            CallState::Running { .. } => view.args.cwd.as_deref(),
        };
        let prefix = cd_prefix(cwd, view.project_dir);
        rows.command(&prefix, &view.args.command, palette.title, glyphs.ellipsis);

        let (text, result) = match view.state {
            CallState::Running { tail } => (tail, None),
            CallState::Done(result) => (result.first_text().trim_end_matches('\n'), Some(result)),
        };
        let truncation = result.and_then(|result| result.details.truncation());
        // A failed call's outcome line (`Command exited with code N`) is drawn as an error.
        let outcome = result
            .filter(|result| result.is_error)
            .and_then(|result| outcome_text(&result.details));
        let style_of = |line: &str| {
            if outcome.as_deref() == Some(line) {
                palette.error
            } else {
                palette.output
            }
        };
        match view.expansion {
            Expansion::Collapsed => {
                let text = strip_controls(text);
                let last = last_rows(&text, COLLAPSED_TOOL_LINES, rows.width(), glyphs.ellipsis);
                if last.hidden_rows > 0 {
                    let total = truncation.map_or_else(|| count_lines(&text), |t| t.total_lines);
                    rows.chrome(
                        &format!(
                            "{} ({} earlier lines, showing {} of {total}) (ctrl+o to expand)",
                            glyphs.ellipsis, last.hidden_rows, last.shown_rows
                        ),
                        palette.muted,
                        glyphs.ellipsis,
                    );
                }
                rows.last(&last, style_of);
            }
            Expansion::Expanded {
                window,
                rows: height,
            } => {
                rows.window(window, height, style_of, palette.muted, glyphs.ellipsis);
                // An artifact holds the output alone: say how the call ended after it.
                if let (Some(outcome), ExpandedSource::Artifact(_)) =
                    (&outcome, view.expanded_source())
                {
                    rows.chrome(outcome, palette.error, glyphs.ellipsis);
                }
            }
        }
        if let CallState::Running { .. } = view.state {
            if view.awaiting_approval {
                rows.chrome(
                    &glyphs.waiting_line(view.tick),
                    palette.warning,
                    glyphs.ellipsis,
                );
            } else {
                rows.spinner(glyphs, view.tick, view.elapsed, palette.accent);
            }
        }
        if let Some(truncation) = truncation {
            let warning = truncation_warning(truncation, view.max_bytes);
            rows.chrome(
                &glyphs.bracketed(&strip_controls(&warning)),
                palette.warning,
                glyphs.ellipsis,
            );
        }
        // A shaped result: its text is what the model read; ctrl+o shows the raw output.
        if let Some(shaped) = result.and_then(|result| result.details.shaped()) {
            let left_out = shaped.raw_lines.saturating_sub(shaped.kept_lines);
            rows.chrome(
                &glyphs.bracketed(&format!(
                    "Shaped: {left_out} of {} lines of {} left out (ctrl+o: the raw output)",
                    shaped.raw_lines,
                    strip_controls(&shaped.shaper)
                )),
                palette.muted,
                glyphs.ellipsis,
            );
        }
        if let Some(timeout) = view.args.timeout {
            rows.chrome(
                &glyphs.bracketed(&format!("Timeout: {}s", Timeout::clamp(timeout))),
                palette.muted,
                glyphs.ellipsis,
            );
        }
        rows.into_text()
    }
}

/// `Full output: artifact://ID. Truncated: showing X of Y lines` (by lines) or
/// `… Truncated: X lines shown (50.0KB limit)` (by bytes), without the brackets.
pub(crate) fn truncation_warning(truncation: &Truncation, max_bytes: u64) -> String {
    let cut = match truncation.truncated_by {
        TruncatedBy::Lines => format!(
            "Truncated: showing {} of {} lines",
            truncation.output_lines, truncation.total_lines
        ),
        TruncatedBy::Bytes => bytes_cut_text(truncation.output_lines, max_bytes),
    };
    let full = FullOutput::new(
        truncation.artifact_id.as_deref(),
        truncation.artifact_error.as_deref(),
    );
    warning_text(full, &cut)
}

/// `Truncated: X lines shown (50.0KB limit)`: what the byte limit left.
pub(crate) fn bytes_cut_text(lines: u64, max_bytes: u64) -> String {
    format!(
        "Truncated: {lines} lines shown ({} limit)",
        format_size(max_bytes)
    )
}

/// A warning's text: where the whole output is (`Full output: artifact://ID`, or
/// `Full output not saved: <reason>`), then what was cut, joined by `. `.
pub(crate) fn warning_text(full: FullOutput<'_>, cut: &str) -> String {
    match full {
        FullOutput::Artifact(id) => format!("Full output: artifact://{id}. {cut}"),
        FullOutput::NotSaved(reason) => format!("Full output not saved: {reason}. {cut}"),
        FullOutput::Nowhere => cut.to_owned(),
    }
}

/// How a failed call ended, as its result text says it (its outcome line).
fn outcome_text(details: &ToolDetails) -> Option<String> {
    if details.timed_out {
        Some(timeout_annotation(details.timeout.seconds()))
    } else if details.cancelled {
        Some(COMMAND_ABORTED.to_owned())
    } else {
        exit_outcome(details.exit_code)
    }
}

/// `cd <dir> && ` when the call ran outside the project directory: the directory relative to
/// the project when inside it, as it is otherwise; quoted when the shell would split it.
pub(crate) fn cd_prefix(cwd: Option<&str>, project_dir: &str) -> String {
    let Some(cwd) = cwd else {
        return String::new();
    };
    let project = project_dir.trim_end_matches('/');
    let cwd_trimmed = cwd.trim_end_matches('/');
    if cwd_trimmed.is_empty() && cwd.starts_with('/') {
        return if project.is_empty() {
            String::new()
        } else {
            "cd / && ".to_owned()
        };
    }
    if cwd_trimmed == project || cwd_trimmed == "." || cwd_trimmed.is_empty() {
        return String::new();
    }
    let shown = cwd_trimmed
        .strip_prefix(project)
        .and_then(|rest| rest.strip_prefix('/'))
        .filter(|_| !project.is_empty())
        .unwrap_or(cwd_trimmed);
    let safe = shown
        .chars()
        .all(|c| c.is_alphanumeric() || "/._-~+@%:,=".contains(c));
    if safe {
        format!("cd {shown} && ")
    } else {
        format!("cd '{}' && ", shown.replace('\'', r"'\''"))
    }
}
