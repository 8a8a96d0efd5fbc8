//! Secrets on a terminal's screen: what the emulator shows is matched as the program wrote it,
//! rows joined across soft wraps (a secret the terminal's width cut in two is still found), and
//! redacted in the rows' text and in the cells a renderer draws.

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

/// Each visible row's text (trailing blanks left out), with `redactor`'s secrets redacted: a
/// logical line with a secret is redacted as one text and laid out again over its rows, at
/// the screen's width.
pub(crate) fn rows(screen: &vt100::Screen, redactor: Option<&Redactor>) -> Vec<String> {
    let (_, cols) = screen.size();
    let cols = cols.get();
    let mut rows: Vec<String> = screen.rows(0, cols).collect();
    let Some(redactor) = redactor else {
        return rows;
    };
    for line in logical_lines(screen) {
        let range = usize::from(line.start)..usize::from(line.end);
        // A wrapped row is full: its text is its cells; joined, they are the line.
        let joined: String = rows[range.clone()].concat();
        let redacted = redactor.redact(&joined);
        if redacted == joined {
            continue;
        }
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

/// Overwrites the cells of every secret on `shown` (the screen's cells) with its replacement,
/// cut to the secret's cells or padded with blanks.
pub(crate) fn mask_cells(screen: &vt100::Screen, shown: &mut Screen, redactor: &Redactor) {
    let cols = usize::from(shown.cols);
    for line in logical_lines(screen) {
        // The line's text, with the cell each byte comes from.
        let mut text = String::new();
        let mut cell_of_byte = Vec::new();
        for row in line.clone() {
            for col in 0..cols {
                let index = usize::from(row) * cols + col;
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
        }
        for (range, name) in redactor.find_all(&text) {
            let first = cell_of_byte[range.start];
            let last = cell_of_byte[range.end - 1];
            let mut replacement = Redactor::replacement(&name).into_bytes().into_iter();
            for index in first..=last {
                let cell = &mut shown.cells[index];
                cell.wide_continuation = false;
                cell.text = replacement
                    .next()
                    .map_or_else(String::new, |byte| char::from(byte).to_string());
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
