//! The headless terminal's screen as `agentsh-protocol`'s [`Screen`]: what a renderer draws
//! without depending on the emulator.

use agentsh_protocol::{Cell, CellAttrs, CellColor, Screen};

use crate::terminal::Terminal;

impl Terminal {
    /// The visible screen as plain data: every cell with its colours and attributes, the
    /// cursor (`None` while hidden) and the alternate-screen flag.
    ///
    /// ```
    /// use agentsh_protocol::CellColor;
    /// use agentsh_pty_runtime::{Terminal, TerminalSize};
    ///
    /// let terminal = Terminal::new(TerminalSize { cols: 10, rows: 3 });
    /// terminal.process(b"\x1b[1;31mok\x1b[0m \xe6\x97\xa5");
    /// let screen = terminal.screen();
    /// assert_eq!(screen.row_text(0), "ok \u{65e5}");
    /// let o = screen.cell(0, 0).unwrap();
    /// assert_eq!((o.text.as_str(), o.fg, o.attrs.bold), ("o", CellColor::Indexed(1), true));
    /// assert!(screen.cell(0, 4).unwrap().wide_continuation);
    /// assert_eq!(screen.cursor, Some((0, 5)));
    /// ```
    pub fn screen(&self) -> Screen {
        let redactor = self.redactor();
        self.with_screen(|screen| {
            let mut shown = screen_of(screen);
            if let Some(redactor) = redactor {
                crate::redact::mask_cells(screen, &mut shown, &redactor);
            }
            shown
        })
    }
}

fn screen_of(screen: &vt100::Screen) -> Screen {
    let (rows, cols) = screen.size();
    let (rows, cols) = (rows.get(), cols.get());
    let mut cells = Vec::with_capacity(usize::from(rows) * usize::from(cols));
    for row in 0..rows {
        for col in 0..cols {
            cells.push(screen.cell(row, col).map_or_else(Cell::default, cell_of));
        }
    }
    Screen {
        cols,
        rows,
        cells,
        cursor: (!screen.hide_cursor()).then(|| screen.cursor_position()),
        alternate_screen: screen.alternate_screen(),
    }
}

fn cell_of(cell: &vt100::Cell) -> Cell {
    Cell {
        text: if cell.has_contents() {
            cell.contents().to_owned()
        } else {
            String::new()
        },
        wide_continuation: cell.is_wide_continuation(),
        fg: color_of(cell.fgcolor()),
        bg: color_of(cell.bgcolor()),
        attrs: CellAttrs {
            bold: cell.bold(),
            dim: cell.dim(),
            italic: cell.italic(),
            underline: cell.underline(),
            inverse: cell.inverse(),
        },
    }
}

fn color_of(color: vt100::Color) -> CellColor {
    match color {
        vt100::Color::Default => CellColor::Default,
        vt100::Color::Idx(index) => CellColor::Indexed(index),
        vt100::Color::Rgb(r, g, b) => CellColor::Rgb(r, g, b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TerminalSize;

    #[test]
    fn colours_attributes_cursor_and_alternate_screen() {
        let terminal = Terminal::new(TerminalSize { cols: 8, rows: 2 });
        terminal.process(b"\x1b[38;2;1;2;3;48;5;200;4;7mx\x1b[0m\x1b[2;3H\x1b[?25l");
        let screen = terminal.screen();
        assert_eq!((screen.cols, screen.rows, screen.cells.len()), (8, 2, 16));
        let x = screen.cell(0, 0).unwrap();
        assert_eq!(x.fg, CellColor::Rgb(1, 2, 3));
        assert_eq!(x.bg, CellColor::Indexed(200));
        assert!(x.attrs.underline && x.attrs.inverse && !x.attrs.bold);
        assert_eq!(screen.cell(0, 1), Some(&Cell::default()));
        assert_eq!(screen.cursor, None, "hidden cursor");
        assert!(!screen.alternate_screen);
        terminal.process(b"\x1b[?1049h\x1b[2;3H\x1b[?25h");
        let screen = terminal.screen();
        assert!(screen.alternate_screen);
        assert_eq!(screen.cursor, Some((1, 2)));
        assert_eq!(screen.row_text(0), "");
    }

    #[test]
    fn bracketed_paste_follows_the_program() {
        let terminal = Terminal::new(TerminalSize { cols: 8, rows: 2 });
        assert!(!terminal.bracketed_paste());
        terminal.process(b"\x1b[?2004h");
        assert!(terminal.bracketed_paste());
        terminal.process(b"\x1b[?2004l");
        assert!(!terminal.bracketed_paste());
    }
}
