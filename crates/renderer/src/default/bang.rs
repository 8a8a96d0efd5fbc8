//! The bang command view.

use agentsh_protocol::{BangState, BashResult, lines_of};
use ratatui_core::text::Text;

use super::DefaultRenderer;
use super::rows::{Rows, prepare};
use super::tool::{bytes_cut_text, warning_text};
use crate::layout::strip_controls;
use crate::view::{BangView, Expansion};

/// Logical lines a collapsed bang command shows.
pub const COLLAPSED_BANG_LINES: usize = 20;

impl DefaultRenderer {
    pub(super) fn draw_bang(&self, view: &BangView<'_>, width: u16) -> Text<'static> {
        let glyphs = &self.glyphs;
        let palette = &self.palette;
        let bang = view.bang;
        let mut rows = Rows::new(width);
        let title = if bang.exclude_from_context {
            palette.title_excluded
        } else {
            palette.title
        };
        // A person's own command: `!` or `!!` as typed, apart from the model's `$`.
        let prompt = if bang.exclude_from_context {
            "!! "
        } else {
            "! "
        };
        rows.prompted(
            (prompt, palette.user),
            "",
            &bang.command,
            title,
            glyphs.ellipsis,
        );

        let (output, result) = match &bang.state {
            BangState::Running { output } => (std::borrow::Cow::Borrowed(output.as_str()), None),
            BangState::Finished(result) => (result.annotated_output(), Some(result)),
        };
        let output = strip_controls(&output);
        let mut hidden = 0;
        match view.expansion {
            Expansion::Collapsed => {
                let lines: Vec<&str> = lines_of(&output).collect();
                let start = lines.len().saturating_sub(COLLAPSED_BANG_LINES);
                for line in &lines[start..] {
                    rows.wrapped(&prepare(line, glyphs.ellipsis), palette.output);
                }
                // Lines the kept tail lost to the byte limit are hidden too.
                let total = result.map_or(lines.len() as u64, |r| {
                    r.summary.total_lines.max(lines.len() as u64)
                });
                hidden = total.saturating_sub((lines.len() - start) as u64);
                if lines.is_empty() && result.is_some() {
                    rows.chrome("(no output)", palette.muted, glyphs.ellipsis);
                }
            }
            Expansion::Expanded {
                window,
                rows: height,
            } => {
                rows.window(
                    window,
                    height,
                    |_| palette.output,
                    palette.muted,
                    glyphs.ellipsis,
                );
            }
        }
        if hidden > 0 {
            rows.chrome(
                &format!("{} {hidden} more lines (ctrl+o to expand)", glyphs.ellipsis),
                palette.muted,
                glyphs.ellipsis,
            );
        }
        let Some(result) = result else {
            rows.spinner(glyphs, view.tick, view.elapsed, palette.accent);
            return rows.into_text();
        };
        if result.cancelled {
            rows.chrome("(cancelled)", palette.warning, glyphs.ellipsis);
        } else {
            match result.exit_code {
                Some(0) => {}
                Some(code) => {
                    rows.chrome(&format!("(exit {code})"), palette.error, glyphs.ellipsis);
                }
                None => rows.chrome("(no exit status)", palette.error, glyphs.ellipsis),
            }
        }
        if let Some(warning) = bang_warning(result, view.max_bytes) {
            rows.chrome(
                &glyphs.bracketed(&strip_controls(&warning)),
                palette.warning,
                glyphs.ellipsis,
            );
        }
        rows.into_text()
    }
}

/// The truncation warning of a finished bang command whose output the byte limit cut.
fn bang_warning(result: &BashResult, max_bytes: u64) -> Option<String> {
    let summary = &result.summary;
    if !summary.truncated {
        return None;
    }
    Some(warning_text(
        summary.full_output(),
        &bytes_cut_text(summary.output_lines, max_bytes),
    ))
}
