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

use crate::app::App;
use crate::app::secrets::{MASK, SecretPrompt};
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
        let (input_rows, cursor) = self.input_rows(area.width);
        let input_height = (input_rows.len() as u16).min(MAX_INPUT_ROWS);
        let status_height = u16::from(area.height > input_height + 1);
        let transcript_height = area.height.saturating_sub(input_height + status_height);
        self.page_rows = transcript_height.max(1);
        let transcript = Rect::new(area.x, area.y, area.width, transcript_height);
        if self.expanded.is_some() {
            self.draw_expanded(transcript, buf);
        } else {
            self.draw_transcript(transcript, buf);
        }
        // The input rows: the last ones, when the line is taller than its area.
        let input_top = area.y + transcript_height;
        let skip = input_rows.len().saturating_sub(usize::from(input_height));
        for (row, line) in input_rows.iter().skip(skip).enumerate() {
            buf.set_line(area.x, input_top + row as u16, line, area.width);
        }
        if status_height > 0 {
            let status = self.status_line(area.width);
            buf.set_line(area.x, area.bottom() - 1, &status, area.width);
        }
        cursor.and_then(|(row, col)| {
            let row = row.checked_sub(skip as u16)?;
            Some(Position::new(area.x + col, input_top + row))
        })
    }

    /// The transcript's rows in view, bottom-aligned, `scroll` rows up from the end.
    fn draw_transcript(&mut self, area: Rect, buf: &mut Buffer) {
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
        for (row, line) in rows.into_iter().enumerate() {
            buf.set_line(area.x, top + row as u16, line, area.width);
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
            buf.set_line(area.x, area.y + row as u16, line, area.width);
        }
        if let Some(first_line) = request {
            self.request_window(first_line);
        }
    }

    /// The input line, wrapped, with the cursor's (row, col); while a job asks for hidden
    /// input, the masked line instead.
    fn input_rows(&self, width: u16) -> (Vec<Line<'static>>, Option<(u16, u16)>) {
        if let Some(prompt) = self.secret_prompt() {
            return secret_rows(prompt, width);
        }
        let text = self.line.text();
        let cursor_at = self.line.cursor();
        let mut rows: Vec<Line<'static>> = Vec::new();
        let mut cursor = None;
        let mut line_start = 0;
        for (index, logical) in text.split('\n').enumerate() {
            let lead = if index == 0 { PROMPT } else { "  " };
            let clean = strip_controls(logical);
            let shown = format!("{lead}{clean}");
            let line_end = line_start + logical.len();
            let first_row = rows.len();
            let mut widths = Vec::new();
            for row in wrap(&shown, width) {
                widths.push(str_width(row));
                rows.push(Line::raw(row.to_owned()));
            }
            if cursor.is_none() && (line_start..=line_end).contains(&cursor_at) {
                let col = str_width(lead)
                    + str_width(&strip_controls(&logical[..cursor_at - line_start]));
                cursor = Some(cursor_in_rows(&widths, col, width, first_row, &mut rows));
            }
            line_start = line_end + 1;
        }
        if let Some(first) = rows.first_mut() {
            let prompt_style = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);
            let rest = first
                .spans
                .first()
                .map(|span| span.content.get(PROMPT.len()..).unwrap_or("").to_owned())
                .unwrap_or_default();
            *first = Line::from(vec![Span::styled(PROMPT, prompt_style), Span::raw(rest)]);
        }
        (rows, cursor)
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
