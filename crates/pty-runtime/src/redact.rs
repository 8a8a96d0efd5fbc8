//! Secrets on a terminal's screen: what the emulator shows is matched as the program wrote it,
//! rows joined across soft wraps (a secret the terminal's width cut in two is still found), and
//! redacted in the rows' text, the screen's contents and the cells a renderer draws.
//!
//! The line the cursor is on may still be being written: where the text before the cursor ends
//! with the start of a known value, that start is hidden too (see
//! [`Redactor::redact_at_cursor`]), so a value printed slowly never shows more than its first
//! few bytes, whoever reads the screen meanwhile.

use agentsh_output_sink::Redactor;
use agentsh_protocol::Screen;

/// The logical lines of the screen: runs of rows, each ending at a row that did not wrap.
fn logical_lines(screen: &vt100::Screen) -> Vec<std::ops::Range<u16>> {
    let (rows, _) = screen.size();
    let rows = rows.get();
    let mut lines = Vec::new();
    let mut start = 0;
    for row in 0..rows {
        if !screen.row_wrapped(row) || row + 1 == rows {
            lines.push(start..row + 1);
            start = row + 1;
        }
    }
    lines
}

/// The bytes of a row's text before column `col`: each cell's text, a blank cell one space,
/// the second half of a wide character nothing (as `vt100` writes a row's text).
fn text_bytes_before(screen: &vt100::Screen, row: u16, col: u16) -> usize {
    (0..col)
        .filter_map(|col| screen.cell(row, col))
        .filter(|cell| !cell.is_wide_continuation())
        .map(|cell| {
            if cell.has_contents() {
                cell.contents().len()
            } else {
                1
            }
        })
        .sum()
}

/// Where the cursor is in `text`, given as the byte it is at: not past the last character
/// before it that is not blank (a terminal shows written spaces and blank cells alike).
fn cursor_in(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text[..at].trim_end_matches(' ').len()
}

/// Each visible row's text (trailing blanks left out), with `redactor`'s secrets redacted: a
/// logical line with a secret is redacted as one text (the start of a value at the cursor
/// too) and laid out again over its rows, at the screen's width.
pub(crate) fn rows(screen: &vt100::Screen, redactor: Option<&Redactor>) -> Vec<String> {
    let (_, cols) = screen.size();
    let cols = cols.get();
    let mut rows: Vec<String> = screen.rows(0, cols).collect();
    let Some(redactor) = redactor else {
        return rows;
    };
    let (cursor_row, cursor_col) = screen.cursor_position();
    for line in logical_lines(screen) {
        let range = usize::from(line.start)..usize::from(line.end);
        // A wrapped row is full: its text is its cells; joined, they are the line.
        let joined: String = rows[range.clone()].concat();
        let cursor = line.contains(&cursor_row).then(|| {
            let before: usize = rows[usize::from(line.start)..usize::from(cursor_row)]
                .iter()
                .map(String::len)
                .sum();
            let in_row = text_bytes_before(screen, cursor_row, cursor_col);
            cursor_in(
                &joined,
                before + in_row.min(rows[usize::from(cursor_row)].len()),
            )
        });
        let std::borrow::Cow::Owned(redacted) = redactor.redact_at_cursor(&joined, cursor) else {
            continue;
        };
        let mut pieces: Vec<String> = Vec::new();
        let mut piece = String::new();
        let mut width = 0;
        for c in redacted.chars() {
            let w = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
            if width + w > usize::from(cols) {
                pieces.push(std::mem::take(&mut piece));
                width = 0;
            }
            piece.push(c);
            width += w;
        }
        pieces.push(piece);
        // The same number of rows: what no longer fits is cut (the secret was longer).
        pieces.resize(range.len(), String::new());
        for (row, text) in range.zip(pieces) {
            rows[row] = text;
        }
    }
    rows
}

/// The visible screen as text, as `vt100::Screen::contents` gives it (rows joined with `\n`,
/// none after a row that wrapped, trailing blanks and empty trailing rows left out), with
/// `redactor`'s secrets redacted over the whole text (the start of a value at the cursor too).
pub(crate) fn contents(screen: &vt100::Screen, redactor: Option<&Redactor>) -> String {
    let Some(redactor) = redactor else {
        return screen.contents();
    };
    let (rows, cols) = screen.size();
    let (cursor_row, cursor_col) = screen.cursor_position();
    let mut text = String::new();
    let mut cursor = None;
    for (row, row_text) in (0..rows.get()).zip(screen.rows(0, cols.get())) {
        if row == cursor_row {
            let in_row = text_bytes_before(screen, row, cursor_col).min(row_text.len());
            cursor = Some(text.len() + in_row);
        }
        text.push_str(&row_text);
        if !screen.row_wrapped(row) {
            text.push('\n');
        }
    }
    let cursor = cursor.map(|at| cursor_in(&text, at));
    let mut contents = redactor.redact_at_cursor(&text, cursor).into_owned();
    contents.truncate(contents.trim_end_matches('\n').len());
    contents
}

/// Overwrites the cells of every secret on `shown` (the screen's cells) with its replacement,
/// cut to the secret's cells or padded with blanks; the start of a value at the cursor too.
pub(crate) fn mask_cells(screen: &vt100::Screen, shown: &mut Screen, redactor: &Redactor) {
    let cols = usize::from(shown.cols);
    let (cursor_row, cursor_col) = screen.cursor_position();
    let cursor_cell = (usize::from(cursor_col) < cols)
        .then(|| usize::from(cursor_row) * cols + usize::from(cursor_col));
    for line in logical_lines(screen) {
        // The line's text, with the cell each byte comes from.
        let mut text = String::new();
        let mut cell_of_byte = Vec::new();
        let mut cursor = None;
        for row in line.clone() {
            for col in 0..cols {
                let index = usize::from(row) * cols + col;
                if Some(index) == cursor_cell {
                    cursor = Some(text.len());
                }
                let Some(cell) = shown.cells.get(index) else {
                    continue;
                };
                if cell.wide_continuation {
                    continue;
                }
                let content = if cell.text.is_empty() {
                    " "
                } else {
                    &cell.text
                };
                text.push_str(content);
                cell_of_byte.extend(std::iter::repeat_n(index, content.len()));
            }
            // The cursor past the row's last cell (the next character wraps).
            if row == cursor_row && usize::from(cursor_col) >= cols {
                cursor = Some(text.len());
            }
        }
        let cursor = cursor.map(|at| cursor_in(&text, at));
        for (range, replacement) in redactor.find_at_cursor(&text, cursor) {
            let first = cell_of_byte[range.start];
            let last = cell_of_byte[range.end - 1];
            let mut replacement = replacement.chars();
            for index in first..=last {
                let cell = &mut shown.cells[index];
                cell.wide_continuation = false;
                cell.text = replacement.next().map_or_else(String::new, String::from);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use agentsh_output_sink::SecretPattern;

    use crate::{Terminal, TerminalSize};

    fn terminal(cols: u16) -> Terminal {
        let terminal = Terminal::new(TerminalSize { cols, rows: 5 });
        terminal.set_secrets(Some(Arc::new(agentsh_output_sink::Secrets::new(
            Redactor::new(
                [("API_TOKEN".to_owned(), "0123456789abcdefghij".to_owned())],
                SecretPattern::defaults(),
            ),
        ))));
        terminal
    }

    use super::*;

    #[test]
    fn a_secret_on_one_row_is_redacted_in_rows_contents_and_cells() {
        let terminal = terminal(40);
        terminal.process(b"key=0123456789abcdefghij!\r\nnext");
        assert_eq!(terminal.rows()[0], "key=[REDACTED:API_TOKEN]!");
        assert_eq!(terminal.contents(), "key=[REDACTED:API_TOKEN]!\nnext");
        let screen = terminal.screen();
        // The secret's 20 cells hold the replacement (20 bytes too).
        assert_eq!(screen.row_text(0), "key=[REDACTED:API_TOKEN]!");
        assert_eq!(screen.row_text(1), "next");
    }

    /// Every text a reader of `terminal`'s screen gets: rows, contents, cells.
    fn every_reading(terminal: &Terminal) -> Vec<String> {
        let screen = terminal.screen();
        let cells: Vec<String> = (0..screen.rows).map(|row| screen.row_text(row)).collect();
        vec![
            terminal.rows().join("\n"),
            terminal.contents(),
            cells.join("\n"),
        ]
    }

    #[test]
    fn a_value_printed_byte_by_byte_shows_at_most_three_bytes_on_any_reading() {
        const VALUE: &str = "0123456789abcdefghij";
        // 18 columns: the value crosses a soft wrap on the way.
        let terminal = terminal(18);
        terminal.process(b"key=");
        for (n, byte) in VALUE.bytes().enumerate() {
            terminal.process(&[byte]);
            for reading in every_reading(&terminal) {
                // No four bytes of the value's start, wherever the wrap cut them.
                assert!(
                    !reading.replace('\n', "").contains("0123"),
                    "{n}: {reading:?}"
                );
                match n + 1 {
                    1..=3 => assert!(reading.contains(&VALUE[..=n]), "{n}: {reading:?}"),
                    20 => assert!(reading.contains("[REDACTED:API"), "{n}: {reading:?}"),
                    // The cells hold as much of `[REDACTED…]` as the value's start covers.
                    _ => assert!(reading.contains("[RED"), "{n}: {reading:?}"),
                }
            }
        }
        terminal.process(b"\r\n$ ");
        assert_eq!(terminal.rows()[..2].concat(), "key=[REDACTED:API_TOKEN]");
    }

    #[test]
    fn only_the_line_at_the_cursor_holds_a_values_start() {
        let terminal = terminal(40);
        // A finished line that ends with a value's start is shown as written: it is not a
        // value the program is still writing.
        terminal.process(b"0123456789\r\nnext 0123");
        assert_eq!(terminal.rows()[..2], ["0123456789", "next [REDACTED…]"]);
        assert_eq!(terminal.contents(), "0123456789\nnext [REDACTED…]");
        assert_eq!(terminal.screen().row_text(1), "next [RED", "4 cells");
        // The cursor moved on: the same text is no value's start any more.
        terminal.process(b" done");
        assert_eq!(terminal.rows()[1], "next 0123 done");
        // Three bytes are shown.
        terminal.process(b"\r\n012");
        assert_eq!(terminal.rows()[2], "012");
        assert_eq!(terminal.screen().row_text(2), "012");
    }

    #[test]
    fn a_secret_cut_by_a_soft_wrap_is_found() {
        let terminal = terminal(20);
        terminal.process(b"token: 0123456789abcdefghij end");
        let rows = terminal.rows();
        let joined = rows.concat();
        assert!(joined.contains("[REDACTED:API_TOKEN]"), "{rows:?}");
        assert!(!joined.contains("0123456789"), "{rows:?}");
        let screen = terminal.screen();
        let cells = format!("{}{}", screen.row_text(0), screen.row_text(1));
        assert!(!cells.contains("abcdefghij"), "{cells}");
        assert!(cells.starts_with("token: [REDACTED:API"), "{cells}");
    }
}
