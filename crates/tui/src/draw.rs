//! One frame: the transcript (or the expanded result, or a program's overlay), the input line
//! and the status line. Everything a call shows is drawn by the [`Renderer`]; the mode draws
//! only its own chrome (prompt, status, notes).

use std::io;

use agentsh_renderer::{
    Expansion, Glyphs, LineWindow, PtyOverlayView, Renderer, single_line, str_width,
    strip_controls, truncate_to_width, wrap,
};
use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use crate::app::secrets::{MASK, SecretPrompt};
use crate::app::{App, Completing};
use crate::transcript::{Draw, ExpandSource};

/// The prompt before the input line.
const PROMPT: &str = "> ";
/// The input line grows up to this many rows, then scrolls.
const MAX_INPUT_ROWS: u16 = 6;

impl<R: Renderer> App<R> {
    /// Draws one frame on `terminal` (ratatui shows the cursor where the frame puts it, and
    /// hides it when the frame puts it nowhere).
    pub(crate) fn draw<B: Backend>(&mut self, terminal: &mut Terminal<B>) -> io::Result<()> {
        terminal
            .draw(|frame| {
                let area = frame.area();
                if let Some(position) = self.draw_into(area, frame.buffer_mut()) {
                    frame.set_cursor_position(position);
                }
            })
            .map(drop)
            .map_err(|err| io::Error::other(err.to_string()))
    }

    /// Draws the frame into `buf`; returns where the cursor goes.
    pub(crate) fn draw_into(&mut self, area: Rect, buf: &mut Buffer) -> Option<Position> {
        if area.width == 0 || area.height == 0 {
            return None;
        }
        if let Some(overlay) = self.shown_overlay() {
            let screen = overlay.controller.terminal().screen();
            let view = PtyOverlayView {
                command: &overlay.command,
                screen: &screen,
            };
            return self.renderer.pty_overlay(&view, area, buf);
        }
        let (input_rows, cursor, below) = self.input_rows(area.width);
        let input_height = (input_rows.len() as u16).min(MAX_INPUT_ROWS);
        let status_height = u16::from(area.height > input_height + 1);
        // Tab's list or Ctrl+R's matches, under the input line, when there is room.
        let below_height =
            (below.len() as u16).min(area.height.saturating_sub(input_height + status_height + 1));
        let transcript_height = area.height.saturating_sub(input_height + status_height);
        // The transcript keeps its place while a list is open: the input line and the list
        // cover its last rows (so opening one redraws those rows, not the whole screen).
        self.page_rows = transcript_height.saturating_sub(below_height).max(1);
        let transcript = Rect::new(area.x, area.y, area.width, transcript_height);
        if self.expanded.is_some() {
            let shown = Rect {
                height: transcript_height - below_height,
                ..transcript
            };
            self.draw_expanded(shown, buf);
        } else {
            self.draw_transcript(transcript, below_height, buf);
        }
        // The input rows: the last ones, when the line is taller than its area.
        let input_top = area.y + transcript_height - below_height;
        let skip = input_rows.len().saturating_sub(usize::from(input_height));
        for (row, line) in input_rows.iter().skip(skip).enumerate() {
            put_line(buf, area.x, input_top + row as u16, line, area.width);
        }
        for (row, line) in below.iter().take(usize::from(below_height)).enumerate() {
            put_line(
                buf,
                area.x,
                input_top + input_height + row as u16,
                line,
                area.width,
            );
        }
        if let Some(open) = &self.completing {
            let glyphs = self.glyphs();
            draw_list(
                open,
                area,
                input_top + input_height,
                below_height,
                glyphs,
                buf,
            );
        }
        if status_height > 0 {
            let status = self.status_line(area.width);
            put_line(buf, area.x, area.bottom() - 1, &status, area.width);
        }
        cursor.and_then(|(row, col)| {
            let row = row.checked_sub(skip as u16)?;
            Some(Position::new(area.x + col, input_top + row))
        })
    }

    /// The transcript's rows in view, bottom-aligned, `scroll` rows up from the end; its last
    /// `covered` rows are left out (what covers them draws there).
    fn draw_transcript(&mut self, area: Rect, covered: u16, buf: &mut Buffer) {
        if area.height == 0 {
            return;
        }
        let draw = Draw::new(
            &self.renderer,
            self.session.settings().theme,
            area.width,
            self.tick,
        );
        let height = usize::from(area.height);
        // Rows needed from the end: the view's height plus what is scrolled away.
        let total: usize = self
            .transcript
            .iter_mut()
            .map(|entry| entry.rows(&draw).len())
            .sum();
        if self.scroll > 0 && total > self.total_rows {
            self.scroll += total - self.total_rows;
        }
        self.total_rows = total;
        self.scroll = self.scroll.min(total.saturating_sub(height));
        let end = total - self.scroll;
        let start = end.saturating_sub(height);
        // Walk the entries from the end, collecting rows start..end.
        let mut rows: Vec<&Line<'static>> = Vec::with_capacity(end - start);
        let mut at = total;
        for entry in self.transcript.iter_mut().rev() {
            if at <= start {
                break;
            }
            let lines = entry.rows(&draw);
            let first = at - lines.len();
            for (index, line) in lines.iter().enumerate().rev() {
                let row = first + index;
                if row >= start && row < end {
                    rows.push(line);
                }
            }
            at = first;
        }
        rows.reverse();
        // Fewer rows than the view: they sit at the bottom, next to the input line.
        let top = area.y + area.height - rows.len() as u16;
        let uncovered = area.bottom() - covered;
        for (row, line) in rows.into_iter().enumerate() {
            let y = top + row as u16;
            if y < uncovered {
                put_line(buf, area.x, y, line, area.width);
            }
        }
    }

    /// The expanded entry, filling `area`: the window of lines in view.
    fn draw_expanded(&mut self, area: Rect, buf: &mut Buffer) {
        let Some(expanded) = &mut self.expanded else {
            return;
        };
        let Some(entry) = self.transcript.get(expanded.entry) else {
            self.expanded = None;
            return;
        };
        let draw = Draw::new(
            &self.renderer,
            self.session.settings().theme,
            area.width,
            self.tick,
        );
        let own_text = entry.own_text();
        let mut window = match (&expanded.source, &expanded.window) {
            (ExpandSource::Text, _) => LineWindow::of_text(own_text, expanded.first_line),
            (ExpandSource::Artifact { .. }, Some(window)) => LineWindow {
                first_line: window.first_line,
                text: &window.text,
                total_lines: window.total_lines,
            },
            (ExpandSource::Artifact { total_lines, .. }, None) => LineWindow {
                first_line: expanded.first_line,
                text: "",
                total_lines: *total_lines,
            },
        };
        // The frame's rows (header, footers) come out of the area: measured, then drawn.
        // Drawn with no row of output, a view is its frame alone (the window's footer
        // included, which a view of the whole output drops: a row to spare, then).
        let chrome = entry
            .draw(&draw, Expansion::Expanded { window, rows: 0 })
            .len()
            .min(usize::from(area.height).saturating_sub(1));
        let rows = (area.height - chrome as u16).max(1);
        expanded.rows = rows;
        // Kept on the last lines while it is there: the page ends with the output's end.
        let mut request = None;
        if expanded.at_end {
            let total = window.total_lines;
            let want = (total.saturating_sub(u64::from(rows)) + 1).max(1);
            if want != expanded.first_line {
                expanded.first_line = want;
                match expanded.source {
                    ExpandSource::Text => window = LineWindow::of_text(own_text, want),
                    ExpandSource::Artifact { .. } => request = Some(want),
                }
            }
        }
        let lines = entry.draw(&draw, Expansion::Expanded { window, rows });
        for (row, line) in lines.iter().take(usize::from(area.height)).enumerate() {
            put_line(buf, area.x, area.y + row as u16, line, area.width);
        }
        if let Some(first_line) = request {
            self.request_window(first_line);
        }
    }

    /// The input line, wrapped and coloured, with the cursor's (row, col), then Tab's list
    /// or Ctrl+R's matches under it; while a job asks for hidden input, the masked line
    /// instead.
    fn input_rows(
        &mut self,
        width: u16,
    ) -> (Vec<Line<'static>>, Option<(u16, u16)>, Vec<Line<'static>>) {
        if let Some(prompt) = self.secret_prompt() {
            let (rows, cursor) = secret_rows(prompt, width);
            return (rows, cursor, Vec::new());
        }
        if self.search.is_some() {
            return self.search_rows(width);
        }
        self.refresh_highlight();
        let tail = self.suggestion_tail().map(str::to_owned);
        let text = self.line.text();
        let cursor_at = self.line.cursor();
        let styles = &self.highlighted.1;
        let mut rows: Vec<Line<'static>> = Vec::new();
        let mut cursor = None;
        let mut line_start = 0;
        for (index, logical) in text.split('\n').enumerate() {
            let lead = if index == 0 { PROMPT } else { "  " };
            let clean = strip_controls(logical);
            // Colours are for the text as typed: a line with controls in it is shown plain.
            let coloured = matches!(clean, std::borrow::Cow::Borrowed(_));
            let shown = format!("{lead}{clean}");
            let line_end = line_start + logical.len();
            let first_row = rows.len();
            let mut widths = Vec::new();
            for row in wrap(&shown, width) {
                widths.push(str_width(row));
                let at = row.as_ptr() as usize - shown.as_ptr() as usize;
                let mut spans = Vec::new();
                if index == 0 && at == 0 {
                    spans.push(Span::styled(PROMPT, prompt_style()));
                    let rest = &row[PROMPT.len().min(row.len())..];
                    styled_spans(rest, line_start, styles, coloured, &mut spans);
                } else {
                    let (lead_part, rest) = if at == 0 {
                        row.split_at(lead.len().min(row.len()))
                    } else {
                        ("", row)
                    };
                    if !lead_part.is_empty() {
                        spans.push(Span::raw(lead_part.to_owned()));
                    }
                    let offset = line_start + (at + lead_part.len()).saturating_sub(lead.len());
                    styled_spans(rest, offset, styles, coloured, &mut spans);
                }
                rows.push(Line::from(spans));
            }
            if cursor.is_none() && (line_start..=line_end).contains(&cursor_at) {
                let col = str_width(lead)
                    + str_width(&strip_controls(&logical[..cursor_at - line_start]));
                cursor = Some(cursor_in_rows(&widths, col, width, first_row, &mut rows));
            }
            line_start = line_end + 1;
        }
        // The suggestion, dimmed after the cursor, as far as the row has room.
        if let (Some(tail), Some((row, col))) = (tail, cursor)
            && let Some(line) = rows.get_mut(usize::from(row))
        {
            let room = width.saturating_sub(col);
            let tail = strip_controls(&tail);
            let shown = truncate_to_width(&tail, room, "");
            if !shown.is_empty() {
                line.spans.push(Span::styled(
                    shown.into_owned(),
                    Style::new().fg(Color::DarkGray),
                ));
            }
        }
        let below = match &self.completing {
            Some(open) => completion_rows(open, width, self.glyphs()),
            None => Vec::new(),
        };
        (rows, cursor, below)
    }

    /// The input line's colours, found again when its text changed.
    fn refresh_highlight(&mut self) {
        let text = self.line.text();
        if self.highlighted.0 != text {
            let shell = shell_part(text);
            let offset = text.len() - shell.len();
            let mut styles = crate::highlight::highlight(shell);
            for styled in &mut styles {
                styled.start += offset;
                styled.end += offset;
            }
            self.highlighted.0.clear();
            self.highlighted.0.push_str(text);
            self.highlighted.1 = styles;
        }
    }

    /// Ctrl+R's rows: the query, then the matches, newest first, the chosen one marked.
    fn search_rows(
        &mut self,
        width: u16,
    ) -> (Vec<Line<'static>>, Option<(u16, u16)>, Vec<Line<'static>>) {
        let glyphs = self.glyphs();
        let Some(search) = &mut self.search else {
            return (Vec::new(), None, Vec::new());
        };
        let matcher = self
            .matcher
            .get_or_insert_with(|| Box::new(crate::search::matcher()));
        let label = "history search: ";
        let query = single_line(search.query());
        let head = truncate_to_width(&query, width.saturating_sub(label.len() as u16 + 1), "")
            .into_owned();
        let col = (str_width(label) + str_width(&head)).min(usize::from(width)) as u16;
        let head = vec![Line::from(vec![
            Span::styled(label, prompt_style()),
            Span::raw(head),
        ])];
        let mut rows = Vec::new();
        let (found, chosen) = search.shown(self.history.entries(), matcher);
        if found.is_empty() {
            rows.push(Line::styled(
                "  (no match; Esc leaves the line as it was)",
                Style::new().fg(Color::DarkGray),
            ));
        }
        for (index, entry) in found.iter().enumerate() {
            let text = truncate_to_width(
                &single_line(entry),
                width.saturating_sub(2),
                glyphs.ellipsis,
            )
            .into_owned();
            rows.push(if Some(index) == chosen {
                Line::from(vec![
                    Span::styled("> ", prompt_style()),
                    Span::styled(text, Style::new().add_modifier(Modifier::REVERSED)),
                ])
            } else {
                Line::from(vec![Span::raw("  "), Span::raw(text)])
            });
        }
        (head, Some((0, col)), rows)
    }

    /// The theme's glyphs.
    fn glyphs(&self) -> Glyphs {
        Glyphs::of(self.session.settings().theme)
    }

    /// The status line: cwd, shell, running jobs, sandbox, the socket; a hint when scrolled.
    fn status_line(&self, width: u16) -> Line<'static> {
        let place = self.session.place();
        let cwd = std::path::Path::new(&place.cwd);
        // A far side's home is not this side's: its directory is shown whole.
        let home = match place.remote {
            None => std::env::var_os("HOME").map(std::path::PathBuf::from),
            Some(_) => None,
        };
        let cwd = match home.as_deref().and_then(|home| cwd.strip_prefix(home).ok()) {
            Some(rest) if rest.as_os_str().is_empty() => "~".to_owned(),
            Some(rest) => format!("~/{}", rest.display()),
            None => cwd.display().to_string(),
        };
        let shell = std::path::Path::new(&place.shell)
            .file_name()
            .map_or_else(String::new, |name| name.to_string_lossy().into_owned());
        let jobs = match self.jobs_running {
            1 => "1 job running".to_owned(),
            n => format!("{n} jobs running"),
        };
        let sandbox = match place.sandbox {
            None => "sandbox off".to_owned(),
            Some(policy) => match &policy.hosts {
                Some(hosts) => format!(
                    "sandbox {}, network: {} {}",
                    policy.mode,
                    hosts.len(),
                    if hosts.len() == 1 { "host" } else { "hosts" }
                ),
                None => format!(
                    "sandbox {}, network {}",
                    policy.mode,
                    if policy.network { "on" } else { "off" }
                ),
            },
        };
        let mut fields = Vec::new();
        match place.remote {
            None => fields.extend([cwd, shell, jobs, sandbox]),
            // The directory and shell were the lost session's: the notice takes their place,
            // after the short fields (its reason may run past the width).
            Some((far, Some(reason))) => fields.extend([
                jobs,
                sandbox,
                format!("connection to {far} lost ({reason}); the next call reconnects"),
            ]),
            Some((far, None)) => fields.extend([cwd, shell, jobs, sandbox, format!("on {far}")]),
        }
        if let Some(path) = &self.listen {
            fields.push(format!("listening on {path}"));
        }
        if self.scroll > 0 {
            fields.push(format!("scrolled up {} rows (PgDn)", self.scroll));
        }
        if let Some(expanded) = &self.expanded
            && expanded.pending.is_some()
        {
            fields.push("reading".to_owned());
        }
        let glyphs = Glyphs::of(self.session.settings().theme);
        let text = single_line(&fields.join(&format!(" {} ", glyphs.separator)));
        Line::styled(
            truncate_to_width(&text, width, glyphs.ellipsis).into_owned(),
            Style::new().fg(Color::DarkGray),
        )
    }
}

/// Writes `line` at (`x`, `y`), at most `width` columns: what `Buffer::set_line` does, with a
/// fast path for spans of printable ASCII (one cell a byte, no grapheme segmentation), which
/// most rows are. A frame writes thousands of cells; this keeps a keystroke's frame cheap.
fn put_line(buf: &mut Buffer, x: u16, y: u16, line: &Line<'_>, width: u16) {
    let right = x.saturating_add(width).min(buf.area.right());
    let mut at = x;
    for span in &line.spans {
        if at >= right {
            break;
        }
        let style = line.style.patch(span.style);
        let text = span.content.as_bytes();
        if text.iter().all(|byte| (b' '..=b'~').contains(byte)) {
            let room = usize::from(right - at);
            for &byte in &text[..text.len().min(room)] {
                buf[(at, y)].set_char(char::from(byte)).set_style(style);
                at += 1;
            }
        } else {
            let (end, _) = buf.set_stringn(at, y, &span.content, usize::from(right - at), style);
            at = end;
        }
    }
}

/// The prompt's style.
fn prompt_style() -> Style {
    Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD)
}

/// The part of an input line the shell reads (a bang's command after its `!` or `!!`); empty
/// for a slash word or a JSON tool call, which are not coloured.
fn shell_part(text: &str) -> &str {
    let trimmed = text.trim_start();
    if let Some(rest) = trimmed
        .strip_prefix("!!")
        .or_else(|| trimmed.strip_prefix('!'))
    {
        return rest;
    }
    if trimmed.starts_with('{') || trimmed.starts_with('/') && !trimmed.starts_with("//") {
        // A slash word is the mode's; a path such as `/usr/bin/ls -l` is a command.
        let first = trimmed.split_whitespace().next().unwrap_or("");
        if trimmed.starts_with('{')
            || crate::complete::SLASH_WORDS
                .iter()
                .any(|w| w.trim_end() == first)
        {
            return "";
        }
    }
    text
}

/// `row`, which starts at byte `offset` of the line, as spans in the colours of `styles`
/// (plain when not `coloured`).
fn styled_spans(
    row: &str,
    offset: usize,
    styles: &[crate::highlight::Styled],
    coloured: bool,
    spans: &mut Vec<Span<'static>>,
) {
    if !coloured {
        if !row.is_empty() {
            spans.push(Span::raw(row.to_owned()));
        }
        return;
    }
    let end = offset + row.len();
    let mut at = offset;
    // The first range that ends after the row's start.
    let first = styles.partition_point(|s| s.end <= offset);
    for styled in &styles[first..] {
        if styled.start >= end {
            break;
        }
        let from = styled.start.max(at);
        let to = styled.end.min(end);
        if from > at {
            spans.push(Span::raw(row[at - offset..from - offset].to_owned()));
        }
        if to > from {
            spans.push(Span::styled(
                row[from - offset..to - offset].to_owned(),
                styled.style,
            ));
        }
        at = to.max(at);
    }
    if at < end {
        spans.push(Span::raw(row[at - offset..].to_owned()));
    }
}

/// Rows Tab's list takes at most, its last saying how many more there are.
const LIST_ROWS: usize = 4;

/// Tab's list laid out: the candidates in columns as wide as the widest name in view (of the
/// first rows' worth), two apart, the rows in view starting where the chosen one is.
struct ListLayout {
    /// The first candidate shown.
    first: usize,
    /// Candidates a row.
    per_row: usize,
    /// Rows of names shown.
    rows: usize,
    /// Columns a name takes at most.
    widest: usize,
}

impl ListLayout {
    fn of(open: &Completing, width: u16) -> Self {
        let candidates = open.candidates();
        let width = usize::from(width.max(1));
        let sample = candidates.len().min(LIST_ROWS * 8);
        let widest = candidates[..sample]
            .iter()
            .map(|name| str_width(name))
            .max()
            .unwrap_or(1)
            .clamp(1, width.saturating_sub(2).max(1));
        let per_row = (width.saturating_sub(2) / (widest + 2)).max(1);
        let chosen_row = open.selected.map_or(0, |at| at / per_row);
        let first_row = chosen_row.saturating_sub(LIST_ROWS - 2);
        let total_rows = candidates.len().div_ceil(per_row);
        let rows = total_rows.saturating_sub(first_row).min(LIST_ROWS - 1);
        Self {
            first: first_row * per_row,
            per_row,
            rows,
            widest,
        }
    }
}

/// Tab's list as rows: the rows of names are left empty here (`draw_list` fills them, cell
/// by cell), then how many there are; `(no match)` for none.
fn completion_rows(open: &Completing, width: u16, glyphs: Glyphs) -> Vec<Line<'static>> {
    let muted = Style::new().fg(Color::DarkGray);
    let candidates = open.candidates();
    if candidates.is_empty() {
        return vec![Line::styled("  (no match)", muted)];
    }
    let layout = ListLayout::of(open, width);
    let mut rows = vec![Line::default(); layout.rows];
    let after = candidates
        .len()
        .saturating_sub(layout.first + layout.rows * layout.per_row);
    let text = if after > 0 {
        format!(
            "  {} {after} more (Tab cycles, Esc closes)",
            glyphs.ellipsis
        )
    } else {
        format!("  {} matches (Tab cycles, Esc closes)", candidates.len())
    };
    rows.push(Line::styled(text, muted));
    rows
}

/// Draws the names of Tab's list into its rows from `top` (at most `height` of them), the
/// chosen one reversed. A name of printable ASCII is written a cell a character (the frame
/// budget: a list is hundreds of characters), any other through the buffer's text path.
fn draw_list(
    open: &Completing,
    area: Rect,
    top: u16,
    height: u16,
    glyphs: Glyphs,
    buf: &mut Buffer,
) {
    let candidates = open.candidates();
    if candidates.is_empty() {
        return;
    }
    let layout = ListLayout::of(open, area.width);
    let reversed = Style::new().add_modifier(Modifier::REVERSED);
    let shown = candidates.iter().enumerate().skip(layout.first);
    for (index, (at, name)) in shown.take(layout.rows * layout.per_row).enumerate() {
        let row = (index / layout.per_row) as u16;
        if row >= height {
            break;
        }
        let x = area.x + 2 + ((index % layout.per_row) * (layout.widest + 2)) as u16;
        let y = top + row;
        let style = if open.selected == Some(at) {
            reversed
        } else {
            Style::new()
        };
        if name.len() <= layout.widest && name.bytes().all(|b| (b' '..=b'~').contains(&b)) {
            for (offset, byte) in name.bytes().enumerate() {
                let cell = &mut buf[(x + offset as u16, y)];
                cell.set_char(char::from(byte));
                cell.set_style(style);
            }
        } else {
            let clean = single_line(name);
            let name = truncate_to_width(&clean, layout.widest as u16, glyphs.ellipsis);
            buf.set_stringn(x, y, name, layout.widest, style);
        }
    }
}

/// The masked line: which job asks and what it runs (wrapped, at most three rows), then its
/// prompt and one mask character per typed one, the cursor after them.
fn secret_rows(prompt: &SecretPrompt, width: u16) -> (Vec<Line<'static>>, Option<(u16, u16)>) {
    let header_style = Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD);
    let mut rows: Vec<Line<'static>> = wrap(&single_line(&prompt.header()), width)
        .take(3)
        .map(|row| Line::styled(row.to_owned(), header_style))
        .collect();
    let asked = single_line(&prompt.request.prompt);
    let asked = if asked.is_empty() {
        "hidden input:".to_owned()
    } else {
        asked
    };
    let masked: String = std::iter::repeat_n(MASK, prompt.typed_chars()).collect();
    let shown = format!("{asked} {masked}");
    let mut widths = Vec::new();
    let first_row = rows.len();
    for row in wrap(&shown, width) {
        widths.push(str_width(row));
        rows.push(Line::raw(row.to_owned()));
    }
    let cursor = cursor_in_rows(&widths, str_width(&shown), width, first_row, &mut rows);
    (rows, Some(cursor))
}

/// Where column `col` of a logical line wrapped into rows of `widths` lands: (row, col). At
/// the end of a full row it is the start of a new, empty row (added to `rows`).
fn cursor_in_rows(
    widths: &[usize],
    col: usize,
    width: u16,
    first_row: usize,
    rows: &mut Vec<Line<'static>>,
) -> (u16, u16) {
    let mut before = 0;
    for (index, &row_width) in widths.iter().enumerate() {
        if col < before + row_width {
            return ((first_row + index) as u16, (col - before) as u16);
        }
        before += row_width;
    }
    let last = widths.len().saturating_sub(1);
    let last_width = widths.last().copied().unwrap_or(0);
    if last_width < usize::from(width) {
        ((first_row + last) as u16, last_width as u16)
    } else {
        rows.insert(first_row + widths.len(), Line::default());
        ((first_row + widths.len()) as u16, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn put_line_writes_what_set_line_writes() {
        let area = Rect::new(0, 0, 12, 1);
        let lines = [
            Line::from(vec![
                Span::styled("> ", prompt_style()),
                Span::raw("cat "),
                Span::styled("file", Style::new().fg(Color::Green)),
            ]),
            Line::styled("plain row that is too long", Style::new().fg(Color::Gray)),
            Line::from(vec![Span::raw("wide 漢字 x"), Span::raw("é!")]),
            Line::from(vec![
                Span::raw("ab"),
                Span::styled("cd", Style::new().bold()),
            ])
            .style(Style::new().fg(Color::Red)),
        ];
        for line in &lines {
            for (x, width) in [(0, 12), (3, 5), (11, 1)] {
                let mut ours = Buffer::empty(area);
                let mut theirs = Buffer::empty(area);
                put_line(&mut ours, x, 0, line, width);
                theirs.set_line(x, 0, line, width);
                assert_eq!(ours, theirs, "{line:?} at {x}, {width} columns");
            }
        }
    }
}
