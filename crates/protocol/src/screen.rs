//! A terminal screen as plain data: rows of styled cells and the cursor.
//! The PTY runtime fills it from its headless terminal; a renderer draws it without knowing
//! which emulator produced it.

/// A colour of a cell, as the program set it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum CellColor {
    /// The terminal's default colour.
    #[default]
    Default,
    /// One of the 256 indexed colours (0–15 are the named ones).
    Indexed(u8),
    /// A 24-bit colour.
    Rgb(u8, u8, u8),
}

/// The text attributes of a cell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CellAttrs {
    /// Bold (increased intensity).
    pub bold: bool,
    /// Dim (decreased intensity).
    pub dim: bool,
    /// Italic.
    pub italic: bool,
    /// Underlined.
    pub underline: bool,
    /// Foreground and background swapped.
    pub inverse: bool,
}

/// One cell of a screen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cell {
    /// The grapheme in the cell; empty for a blank cell and for the second column of a wide
    /// character (see [`Cell::wide_continuation`]). It is what the program printed, so a
    /// renderer strips controls from it like from any other text.
    pub text: String,
    /// The right half of a wide character that starts in the cell before.
    pub wide_continuation: bool,
    /// Foreground colour.
    pub fg: CellColor,
    /// Background colour.
    pub bg: CellColor,
    /// Attributes.
    pub attrs: CellAttrs,
}

/// A terminal's visible screen: `rows` × `cols` cells, row-major, the cursor, and whether the
/// program uses the alternate screen (vim, less, htop).
///
/// ```
/// use agentsh_protocol::{Cell, Screen};
///
/// let mut screen = Screen::blank(4, 2);
/// screen.cells[1].text = "h".into();
/// screen.cells[2].text = "i".into();
/// assert_eq!(screen.row(0).len(), 4);
/// assert_eq!(screen.row_text(0), " hi");
/// assert_eq!(screen.cell(1, 3), Some(&Cell::default()));
/// assert_eq!(screen.cell(2, 0), None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Screen {
    /// Columns.
    pub cols: u16,
    /// Rows.
    pub rows: u16,
    /// `rows * cols` cells, row by row.
    pub cells: Vec<Cell>,
    /// The cursor as (row, col), 0-based; `None` when the program hid it.
    pub cursor: Option<(u16, u16)>,
    /// Whether the program switched to the alternate screen.
    pub alternate_screen: bool,
}

impl Screen {
    /// A screen of blank cells with the cursor at the top left.
    pub fn blank(cols: u16, rows: u16) -> Self {
        Self {
            cols,
            rows,
            cells: vec![Cell::default(); usize::from(cols) * usize::from(rows)],
            cursor: Some((0, 0)),
            alternate_screen: false,
        }
    }

    /// The cells of one row (empty past the last row, or when `cells` is short).
    pub fn row(&self, row: u16) -> &[Cell] {
        let cols = usize::from(self.cols);
        let start = usize::from(row).saturating_mul(cols);
        self.cells
            .get(start..start.saturating_add(cols).min(self.cells.len()))
            .unwrap_or(&[])
    }

    /// One cell, `None` outside the screen.
    pub fn cell(&self, row: u16, col: u16) -> Option<&Cell> {
        if col >= self.cols {
            return None;
        }
        self.row(row).get(usize::from(col))
    }

    /// A screen of plain cells holding `rows`' text, one character a cell (no colours, no
    /// attributes, no cursor): a screen known only as text, as the RPC `job_view` carries it.
    pub fn from_rows(rows: &[String]) -> Self {
        let cols = rows
            .iter()
            .map(|row| row.chars().count())
            .max()
            .unwrap_or(0);
        let cols = u16::try_from(cols).unwrap_or(u16::MAX);
        let mut screen = Self::blank(cols, u16::try_from(rows.len()).unwrap_or(u16::MAX));
        screen.cursor = None;
        for (at, row) in rows.iter().enumerate().take(usize::from(screen.rows)) {
            let start = at * usize::from(cols);
            for (col, ch) in row.chars().take(usize::from(cols)).enumerate() {
                if ch != ' ' {
                    screen.cells[start + col].text = ch.to_string();
                }
            }
        }
        screen
    }

    /// The text of every row ([`Screen::row_text`]).
    pub fn rows_text(&self) -> Vec<String> {
        (0..self.rows).map(|row| self.row_text(row)).collect()
    }

    /// The text of one row, blank cells as spaces, trailing blanks dropped.
    pub fn row_text(&self, row: u16) -> String {
        let mut text = String::new();
        for cell in self.row(row) {
            if cell.wide_continuation {
                continue;
            }
            if cell.text.is_empty() {
                text.push(' ');
            } else {
                text.push_str(&cell.text);
            }
        }
        text.truncate(text.trim_end_matches(' ').len());
        text
    }
}

/// A screen in JSON as its rows' text (`["$ ls", "a  b"]`): how the RPC `job_view` carries a
/// PTY job's screen. Read back, it is a screen of plain cells ([`Screen::from_rows`]).
#[cfg(feature = "serde")]
pub(crate) mod rows {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::Screen;

    // serde's `with` hands the field as it is: `&Option<Screen>`.
    #[allow(clippy::ref_option)]
    pub(crate) fn serialize<S: Serializer>(
        screen: &Option<Screen>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        screen.as_ref().map(Screen::rows_text).serialize(serializer)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Screen>, D::Error> {
        let rows = Option::<Vec<String>>::deserialize(deserializer)?;
        Ok(rows.map(|rows| Screen::from_rows(&rows)))
    }
}
