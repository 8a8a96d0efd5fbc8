#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod command;
mod error;
mod fastforward;
mod inspect;
mod keys;
mod limits;
mod pty;
mod redact;
mod run;
mod screen;
mod terminal;
mod ui;

pub use agentsh_output_sink::{OutputSink, SinkOptions, Spill, SpillSource};
pub use agentsh_process::shell::{ShellKind, ShellSpec};
pub use agentsh_process::{InputWait, SpawnError};
pub use agentsh_protocol::{BashResult, Cell, CellAttrs, CellColor, OutputSummary, Screen};
pub use command::PtyCommand;
pub use error::PtyError;
pub use keys::{
    KEY_NAMES, KILL_KEY_ALTERNATE_SCREEN, Key, KeyAction, KeyModes, Modifiers, UnknownKey,
    classify_keys, encode_key, key_sequence, normalize_keys, typed_text,
};
pub use run::{PTY_ERROR_PREFIX, PtyController, PtyRun, TextCallback};
pub use terminal::{
    DEFAULT_COLS, DEFAULT_ROWS, MAX_COLS, MAX_ROWS, MIN_COLS, MIN_ROWS, SCROLLBACK_LINES, Terminal,
    TerminalSize,
};
pub use ui::{MIN_DRAW_INTERVAL, TerminalUi, UiEvent, run_with_ui};
/// The terminal emulator crate, for [`Terminal::with_screen`] and [`TerminalUi::draw`].
pub use vt100;
