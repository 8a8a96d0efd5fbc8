//! PTY sessions for agentsh (SPEC §8): a command in the user's shell on a pseudo-terminal, a
//! headless terminal emulator fed with its output, and key normalisation for the user's
//! keyboard.
//!
//! - [`PtySession`] — starts a [`PtyCommand`] on a new PTY through `agentsh-process` (a
//!   supervisor, the shell in a session of its own with the PTY as controlling terminal, the
//!   hardened environment with `TERM=xterm-256color`, the rc snapshot sourced), feeds the
//!   output to an [`OutputSink`](agentsh_output_sink::OutputSink) and a [`Terminal`], takes
//!   input, resizes (clamped to [`MIN_COLS`]–[`MAX_COLS`] × [`MIN_ROWS`]–[`MAX_ROWS`]) and
//!   kills, and ends with a [`BashResult`](agentsh_protocol::BashResult): exit code, or
//!   `timedOut`/`cancelled`, or the line `PTY error: <reason>` with `exitCode: null`. The
//!   whole process tree is gone and the PTY closed when the result is returned.
//! - [`Terminal`] — a `vt100` emulator (120×40, 10,000 lines of scrollback by default) with
//!   the screen, cursor, title, alternate-screen and application-cursor state.
//! - [`normalize_keys`] / [`classify_keys`] — Kitty and legacy key sequences to what an
//!   `xterm-256color` program expects, and the kill key (Esc; Ctrl+] on the alternate screen).
//! - [`TerminalUi`] / [`run_with_ui`] — the small seam an interactive UI implements.
//!
//! ```
//! use std::time::Duration;
//! use agentsh_output_sink::{OutputSink, SinkOptions};
//! use agentsh_pty_runtime::{PtyCommand, PtySession};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let command = PtyCommand::new("tty; printf '\\033[32mgreen\\033[0m\\n'; exit 3", "/tmp", Duration::from_secs(10));
//! let session = PtySession::start(command, OutputSink::new(SinkOptions::default()));
//! let terminal = session.terminal().clone();
//! let result = session.wait().await;
//! assert!(result.summary.output.starts_with("/dev/pts/"));
//! assert!(result.summary.output.ends_with("\ngreen\n")); // colours removed by the sink
//! assert_eq!(result.exit_code, Some(3));
//! assert!(terminal.contents().ends_with("\ngreen")); // the screen as a terminal shows it
//! # });
//! ```
#![deny(missing_docs)]

mod error;
mod fastforward;
mod keys;
mod pty;
mod session;
mod terminal;
mod ui;

pub use error::PtyError;
pub use keys::{KILL_KEY_ALTERNATE_SCREEN, KeyAction, KeyModes, classify_keys, normalize_keys};
pub use session::{PTY_ERROR_PREFIX, PtyCommand, PtyController, PtySession};
pub use terminal::{
    DEFAULT_COLS, DEFAULT_ROWS, MAX_COLS, MAX_ROWS, MIN_COLS, MIN_ROWS, SCROLLBACK_LINES, Terminal,
    TerminalSize,
};
pub use ui::{MIN_DRAW_INTERVAL, TerminalUi, UiEvent, run_with_ui};
/// The terminal emulator crate, for [`Terminal::with_screen`] and [`TerminalUi::draw`].
pub use vt100;
