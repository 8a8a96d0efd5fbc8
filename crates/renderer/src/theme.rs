//! What a [`Theme`] draws with: the glyphs of brackets, ellipses, separators and spinners, and
//! the styles of each kind of text.

use std::time::Duration;

use agentsh_protocol::Theme;
use ratatui_core::style::{Color, Modifier, Style};

/// The glyphs of one theme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Glyphs {
    /// Opens a footer or warning: `⟦`, `⟨`, `[`.
    pub open: &'static str,
    /// Closes it: `⟧`, `⟩`, `]`.
    pub close: &'static str,
    /// Marks text left out: `…` (`...` in ASCII).
    pub ellipsis: &'static str,
    /// Separates the fields of a job line: `·` (`-` in ASCII).
    pub separator: &'static str,
    /// The frames of the running spinner, one per tick.
    pub spinner: &'static [&'static str],
}

impl Glyphs {
    /// The glyphs of `theme`.
    pub fn of(theme: Theme) -> Self {
        match theme {
            Theme::Unicode => Self {
                open: "⟦",
                close: "⟧",
                ellipsis: "…",
                separator: "·",
                spinner: &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"],
            },
            Theme::Nerd => Self {
                open: "⟨",
                close: "⟩",
                ellipsis: "…",
                separator: "·",
                // Nerd Font "progress" glyphs (md-circle_slice_1..8).
                spinner: &[
                    "\u{f0a9e}",
                    "\u{f0a9f}",
                    "\u{f0aa0}",
                    "\u{f0aa1}",
                    "\u{f0aa2}",
                    "\u{f0aa3}",
                    "\u{f0aa4}",
                    "\u{f0aa5}",
                ],
            },
            Theme::Ascii => Self {
                open: "[",
                close: "]",
                ellipsis: "...",
                separator: "-",
                spinner: &["|", "/", "-", "\\"],
            },
        }
    }

    /// The spinner frame of `tick`.
    pub fn spinner_frame(&self, tick: u64) -> &'static str {
        let frames = self.spinner.len().max(1) as u64;
        self.spinner
            .get((tick % frames) as usize)
            .copied()
            .unwrap_or("*")
    }

    /// The spinner row of a running command at `tick`: `⠋ Running… (esc to cancel)`.
    ///
    /// ```
    /// use agentsh_renderer::{Glyphs, Theme};
    ///
    /// assert_eq!(Glyphs::of(Theme::Ascii).running_line(1), "/ Running... (esc to cancel)");
    /// ```
    pub fn running_line(&self, tick: u64) -> String {
        format!(
            "{} Running{} (esc to cancel)",
            self.spinner_frame(tick),
            self.ellipsis
        )
    }

    /// The spinner row of a command that has run for `elapsed`:
    /// `⠏ Running… 42s (esc to cancel)`; without a time, [`Glyphs::running_line`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use agentsh_renderer::{Glyphs, Theme};
    ///
    /// let glyphs = Glyphs::of(Theme::Ascii);
    /// let line = glyphs.running_line_after(1, Some(Duration::from_secs(42)));
    /// assert_eq!(line, "/ Running... 42s (esc to cancel)");
    /// ```
    pub fn running_line_after(&self, tick: u64, elapsed: Option<Duration>) -> String {
        match elapsed {
            Some(elapsed) => format!(
                "{} Running{} {} (esc to cancel)",
                self.spinner_frame(tick),
                self.ellipsis,
                elapsed_text(elapsed)
            ),
            None => self.running_line(tick),
        }
    }

    /// The spinner row of a call that waits for a person's approval: `⠏ Waiting for approval…`.
    pub fn waiting_line(&self, tick: u64) -> String {
        format!(
            "{} Waiting for approval{}",
            self.spinner_frame(tick),
            self.ellipsis
        )
    }

    /// `text` between the theme's brackets: `⟦text⟧`.
    pub fn bracketed(&self, text: &str) -> String {
        format!("{}{text}{}", self.open, self.close)
    }
}

/// How long something has run, as a running row shows it: `42s`, `3m 07s`, `1h 02m`.
///
/// ```
/// use std::time::Duration;
/// use agentsh_renderer::elapsed_text;
///
/// assert_eq!(elapsed_text(Duration::from_millis(42_900)), "42s");
/// assert_eq!(elapsed_text(Duration::from_secs(187)), "3m 07s");
/// assert_eq!(elapsed_text(Duration::from_secs(3_720)), "1h 02m");
/// ```
pub fn elapsed_text(elapsed: Duration) -> String {
    let seconds = elapsed.as_secs();
    match seconds {
        0..60 => format!("{seconds}s"),
        60..3600 => format!("{}m {:02}s", seconds / 60, seconds % 60),
        _ => format!("{}h {:02}m", seconds / 3600, seconds % 3600 / 60),
    }
}

/// The styles of the default views. Every theme uses the same palette of the 16 named
/// colours, so a terminal's own colour scheme decides the shades.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Palette {
    /// The call line `$ command`.
    pub title: Style,
    /// The `$ command` of a `!!` bang command, kept out of the context.
    pub title_excluded: Style,
    /// Output lines.
    pub output: Style,
    /// Hints and counts: `… (N earlier lines …)`, the timeout footer, the overlay's footer.
    pub muted: Style,
    /// Truncation warnings and `(cancelled)`.
    pub warning: Style,
    /// `(exit N)` and a failed job.
    pub error: Style,
    /// A job that exited with 0.
    pub success: Style,
    /// The spinner and running state.
    pub accent: Style,
    /// The prompt of a person's own command (`!` or `!!`), apart from the model's `$`.
    pub user: Style,
}

impl Default for Palette {
    fn default() -> Self {
        Self {
            title: Style::new().add_modifier(Modifier::BOLD),
            title_excluded: Style::new().add_modifier(Modifier::BOLD | Modifier::DIM),
            output: Style::new().fg(Color::Gray),
            muted: Style::new().fg(Color::DarkGray),
            warning: Style::new().fg(Color::Yellow),
            error: Style::new().fg(Color::Red),
            success: Style::new().fg(Color::Green),
            accent: Style::new().fg(Color::Cyan),
            user: Style::new().fg(Color::Magenta).add_modifier(Modifier::BOLD),
        }
    }
}
