//! Screens as text: [`format_screen`] and the [`WaitError`] a wait that ran out of time returns.

use std::fmt::{self, Write as _};
use std::time::Duration;

/// A screen, one row a line, with row numbers and its trailing empty rows summed up: what a
/// timeout shows.
pub fn format_screen(rows: &[String]) -> String {
    let used = rows
        .iter()
        .rposition(|row| !row.is_empty())
        .map_or(0, |i| i + 1);
    let mut text = String::new();
    for (i, row) in rows[..used].iter().enumerate() {
        let _ = writeln!(text, "{i:>3} |{row}");
    }
    match rows.len() - used {
        0 => {}
        1 => {
            let _ = writeln!(text, "    (row {used} empty)");
        }
        n => {
            let _ = writeln!(text, "    (rows {used}..{} empty)", used + n - 1);
        }
    }
    text
}

/// A wait that ran out of time (or lost its tmux server): what was waited for, for how long,
/// the program's state and the last screen. Its `Debug` is its `Display`, so `expect` on a
/// wait prints the screen as it was, row by row.
#[derive(Clone, PartialEq, Eq)]
pub struct WaitError {
    /// What the wait waited for, e.g. `the screen to show "hi"`.
    pub waited_for: String,
    /// How long it waited.
    pub waited: Duration,
    /// The program's state at the end: `running`, `exited with status 3`, or tmux's error.
    pub program: String,
    /// The last screen captured (empty when none could be).
    pub screen: Vec<String>,
}

impl fmt::Display for WaitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "timed out after {:.1} s waiting for {} (the program: {}); the last screen:\n{}",
            self.waited.as_secs_f64(),
            self.waited_for,
            self.program,
            format_screen(&self.screen)
        )
    }
}

impl fmt::Debug for WaitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for WaitError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_screen_is_shown_numbered_with_its_empty_tail_summed_up() {
        let rows = |rows: &[&str]| rows.iter().map(|&row| row.to_owned()).collect::<Vec<_>>();
        assert_eq!(
            format_screen(&rows(&["$ ls", "", "a  b", "", ""])),
            "  0 |$ ls\n  1 |\n  2 |a  b\n    (rows 3..4 empty)\n"
        );
        assert_eq!(
            format_screen(&rows(&["x", ""])),
            "  0 |x\n    (row 1 empty)\n"
        );
        assert_eq!(format_screen(&rows(&["x"])), "  0 |x\n");
        assert_eq!(format_screen(&[]), "");
    }
}
