//! Building a view row by row: untrusted text in, wrapped styled rows out.

use std::borrow::Cow;
use std::time::Duration;

use ratatui_core::style::Style;
use ratatui_core::text::{Line, Span, Text};

use agentsh_protocol::lines_of;

use crate::theme::Glyphs;
use crate::view::LineWindow;

use crate::layout::{
    MAX_LINE_CHARS, cap_line, expand_tabs, strip_controls, truncate_to_width, visual_rows, wrap,
};

/// A logical line ready to wrap: capped at [`MAX_LINE_CHARS`] chars, tabs expanded. The text
/// must already be stripped of controls.
pub(crate) fn prepare<'a>(line: &'a str, ellipsis: &str) -> Cow<'a, str> {
    match cap_line(line, MAX_LINE_CHARS, ellipsis) {
        Cow::Borrowed(line) => expand_tabs(line),
        Cow::Owned(capped) => Cow::Owned(expand_tabs(&capped).into_owned()),
    }
}

/// The rows of a view, each at most `width` columns.
pub(crate) struct Rows {
    width: u16,
    lines: Vec<Line<'static>>,
}

impl Rows {
    pub(crate) fn new(width: u16) -> Self {
        Self {
            width: width.max(1),
            lines: Vec::new(),
        }
    }

    pub(crate) fn width(&self) -> u16 {
        self.width
    }

    /// One prepared logical line (stripped, capped, tabs expanded), wrapped.
    pub(crate) fn wrapped(&mut self, line: &str, style: Style) {
        for row in wrap(line, self.width) {
            self.lines
                .push(Line::from(Span::styled(row.to_owned(), style)));
        }
    }

    /// A command as a header: `$ <command>`, its later lines indented under the first.
    pub(crate) fn command(&mut self, prefix: &str, command: &str, style: Style, ellipsis: &str) {
        self.prompted(("$ ", style), prefix, command, style, ellipsis);
    }

    /// A command as a header after `prompt` (its text and style): `! <command>`, its later
    /// lines indented under the first.
    pub(crate) fn prompted(
        &mut self,
        prompt: (&str, Style),
        prefix: &str,
        command: &str,
        style: Style,
        ellipsis: &str,
    ) {
        let (lead, lead_style) = prompt;
        let command = strip_controls(command);
        let command = command.trim_end_matches('\n');
        let indent = " ".repeat(lead.len());
        for (index, line) in command.split('\n').enumerate() {
            let (lead, prefix) = if index == 0 {
                (lead, prefix)
            } else {
                (indent.as_str(), "")
            };
            let line = format!("{lead}{prefix}{line}");
            let first = self.lines.len();
            self.wrapped(&prepare(&line, ellipsis), style);
            // The prompt (ASCII, never wrapped off its row) in its own style.
            if index == 0
                && lead_style != style
                && let Some(row) = self.lines.get_mut(first)
                && let Some(span) = row.spans.first_mut()
                && let Some(rest) = span.content.strip_prefix(lead)
            {
                let rest = rest.to_owned();
                row.spans = vec![
                    Span::styled(lead.to_owned(), lead_style),
                    Span::styled(rest, style),
                ];
            }
        }
    }

    /// A row of chrome the view itself wrote (a header, a hint, a warning; no controls): one
    /// row, cut to the width with `ellipsis`, so that a view's row count does not depend on
    /// how its chrome wraps.
    pub(crate) fn chrome(&mut self, text: &str, style: Style, ellipsis: &str) {
        let row = truncate_to_width(&expand_tabs(text), self.width, ellipsis).into_owned();
        self.lines.push(Line::from(Span::styled(row, style)));
    }

    /// The spinner row of a running command: `⠋ Running… 42s (esc to cancel)` (no time
    /// when the host keeps none).
    pub(crate) fn spinner(
        &mut self,
        glyphs: &Glyphs,
        tick: u64,
        elapsed: Option<Duration>,
        style: Style,
    ) {
        self.chrome(
            &glyphs.running_line_after(tick, elapsed),
            style,
            glyphs.ellipsis,
        );
    }

    pub(crate) fn into_text(self) -> Text<'static> {
        Text::from(self.lines)
    }
}

/// The lines of a collapsed view: the last `keep` visual rows of `lines` (prepared logical
/// lines) at `width`, and how many rows are hidden before them.
pub(crate) struct LastRows<'a> {
    /// The logical lines whose rows are (partly) shown, in order.
    pub(crate) lines: Vec<Cow<'a, str>>,
    /// Rows of the first of `lines` to skip (it is only partly shown).
    pub(crate) skip_rows: usize,
    /// Visual rows hidden before the shown ones.
    pub(crate) hidden_rows: usize,
    /// Visual rows shown.
    pub(crate) shown_rows: usize,
}

/// The last `keep` visual rows of `text` (stripped, not yet prepared) at `width`.
pub(crate) fn last_rows<'a>(
    text: &'a str,
    keep: usize,
    width: u16,
    ellipsis: &str,
) -> LastRows<'a> {
    let mut lines = Vec::new();
    let mut rows = 0;
    let mut all = lines_of(text).rev();
    for line in all.by_ref() {
        let line = prepare(line, ellipsis);
        rows += visual_rows(&line, width);
        lines.push(line);
        if rows >= keep {
            break;
        }
    }
    lines.reverse();
    let hidden_before: usize = all
        .map(|line| visual_rows(&prepare(line, ellipsis), width))
        .sum();
    let skip_rows = rows.saturating_sub(keep);
    LastRows {
        lines,
        skip_rows,
        hidden_rows: hidden_before + skip_rows,
        shown_rows: rows.min(keep),
    }
}

impl Rows {
    /// Pushes the rows of a [`LastRows`], each logical line in the style `style_of` gives it.
    pub(crate) fn last(&mut self, last: &LastRows<'_>, style_of: impl Fn(&str) -> Style) {
        let mut skip = last.skip_rows;
        for line in &last.lines {
            let style = style_of(line);
            for row in wrap(line, self.width) {
                if skip > 0 {
                    skip -= 1;
                    continue;
                }
                self.lines
                    .push(Line::from(Span::styled(row.to_owned(), style)));
            }
        }
    }

    /// Pushes rows of a window's lines until `rows` are drawn, then, unless the window showed
    /// the whole text, where it is: `(lines A-B of T, ctrl+o to collapse)`.
    pub(crate) fn window(
        &mut self,
        window: LineWindow<'_>,
        rows: u16,
        style_of: impl Fn(&str) -> Style,
        muted: Style,
        ellipsis: &str,
    ) {
        let text = strip_controls(window.text);
        let mut left = usize::from(rows);
        let mut last = None;
        for (index, line) in lines_of(&text).enumerate() {
            if left == 0 {
                break;
            }
            let line = prepare(line, ellipsis);
            let style = style_of(&line);
            for row in wrap(&line, self.width).take(left) {
                self.lines
                    .push(Line::from(Span::styled(row.to_owned(), style)));
                left -= 1;
            }
            last = Some(window.first_line + index as u64);
        }
        let last = last.unwrap_or(window.first_line);
        if window.first_line > 1 || last < window.total_lines {
            self.chrome(
                &format!(
                    "(lines {}-{last} of {}, ctrl+o to collapse)",
                    window.first_line, window.total_lines
                ),
                muted,
                ellipsis,
            );
        }
    }
}
