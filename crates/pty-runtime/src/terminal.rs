//! The headless terminal: a `vt100` emulator fed with the same bytes as the output
//! sink, keeping the screen the UI shows.

use std::num::NonZeroU16;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::fastforward::FastForward;
use crate::keys::KeyModes;

/// Default width of a PTY session's terminal, in columns.
pub const DEFAULT_COLS: u16 = 120;
/// Default height of a PTY session's terminal, in rows.
pub const DEFAULT_ROWS: u16 = 40;
/// Lines of scrollback the headless terminal keeps.
pub const SCROLLBACK_LINES: usize = 10_000;
/// Narrowest terminal a resize can ask for (narrower requests are clamped).
pub const MIN_COLS: u16 = 20;
/// Widest terminal a resize can ask for.
pub const MAX_COLS: u16 = 400;
/// Lowest terminal a resize can ask for.
pub const MIN_ROWS: u16 = 5;
/// Highest terminal a resize can ask for.
pub const MAX_ROWS: u16 = 200;

/// The longest window title kept, in bytes (a program cannot grow it without bound).
const MAX_TITLE_BYTES: usize = 4096;
/// The most answer bytes (cursor position reports, …) held for the PTY at once.
const MAX_PENDING_REPLIES: usize = 4096;

/// A terminal size in character cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TerminalSize {
    /// Columns.
    pub cols: u16,
    /// Rows.
    pub rows: u16,
}

impl TerminalSize {
    /// A size, clamped to [`MIN_COLS`]`..=`[`MAX_COLS`] × [`MIN_ROWS`]`..=`[`MAX_ROWS`].
    ///
    /// ```
    /// use agentsh_pty_runtime::TerminalSize;
    /// assert_eq!(TerminalSize::clamped(0, 1000), TerminalSize { cols: 20, rows: 200 });
    /// assert_eq!(TerminalSize::clamped(81, 25), TerminalSize { cols: 81, rows: 25 });
    /// ```
    pub fn clamped(cols: u16, rows: u16) -> Self {
        Self {
            cols: cols.clamp(MIN_COLS, MAX_COLS),
            rows: rows.clamp(MIN_ROWS, MAX_ROWS),
        }
    }

    fn nonzero(self) -> (NonZeroU16, NonZeroU16) {
        let rows = NonZeroU16::new(self.rows).unwrap_or(NonZeroU16::MIN);
        let cols = NonZeroU16::new(self.cols).unwrap_or(NonZeroU16::MIN);
        (rows, cols)
    }
}

impl Default for TerminalSize {
    /// [`DEFAULT_COLS`] × [`DEFAULT_ROWS`] (120 × 40).
    fn default() -> Self {
        Self {
            cols: DEFAULT_COLS,
            rows: DEFAULT_ROWS,
        }
    }
}

/// What `vt100` reports through callbacks: the window title and answers to queries.
#[derive(Debug, Default)]
struct Events {
    title: String,
    /// Bytes the terminal answers to the program (cursor position and status reports, device
    /// attributes), written to the PTY by the session.
    replies: Vec<u8>,
}

impl vt100::Callbacks for Events {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        let title = &title[..title.len().min(MAX_TITLE_BYTES)];
        self.title = String::from_utf8_lossy(title).into_owned();
    }

    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        _i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        if self.replies.len() >= MAX_PENDING_REPLIES || i1.is_some() {
            return;
        }
        match (c, params) {
            // Device status report: "OK".
            ('n', [[5]]) => self.replies.extend_from_slice(b"\x1b[0n"),
            // Cursor position report (1-based).
            ('n', [[6]]) => {
                let (row, col) = screen.cursor_position();
                self.replies
                    .extend_from_slice(format!("\x1b[{};{}R", row + 1, col + 1).as_bytes());
            }
            // Primary device attributes: a VT100 with advanced video option, like xterm.
            ('c', [] | [[0]]) => self.replies.extend_from_slice(b"\x1b[?1;2c"),
            _ => {}
        }
    }
}

pub(crate) struct Inner {
    parser: vt100::Parser<Events>,
    fast: FastForward,
    /// Secrets to redact from what the screen shows (rows, contents, cells).
    pub(crate) secrets: Option<Arc<agentsh_output_sink::Secrets>>,
}

impl Inner {
    fn new(size: TerminalSize, scrollback: usize) -> Self {
        let (rows, cols) = size.nonzero();
        Self {
            parser: vt100::Parser::new_with_callbacks(rows, cols, scrollback, Events::default()),
            fast: FastForward::new(size.rows, scrollback),
            secrets: None,
        }
    }

    /// Brings the emulator up to date with everything fed so far.
    fn settle(&mut self) -> &mut vt100::Parser<Events> {
        self.fast.flush(&mut self.parser);
        &mut self.parser
    }
}

/// A headless terminal emulator: feed it a program's output, read its screen.
///
/// A cheap handle (clones share one terminal), safe to use from several threads: the PTY
/// session feeds it while a UI reads it. Built on `vt100` (re-exported as
/// [`vt100`](crate::vt100)); [`Terminal::with_screen`] gives the full `vt100::Screen` (cells
/// with colours and attributes, scrollback), the other methods the common questions.
///
/// Long runs of plain output (text, `\r\n` and colour changes) are fast-forwarded: lines that
/// would scroll beyond the scrollback before anyone looks are not drawn, with the same
/// resulting screen and scrollback (see `src/fastforward.rs`).
///
/// ```
/// use agentsh_pty_runtime::{Terminal, TerminalSize};
/// let terminal = Terminal::new(TerminalSize::default());
/// terminal.process(b"\x1b]2;build\x07compiling\r\n\x1b[32mok\x1b[0m\x1b[?1h");
/// assert_eq!(terminal.contents(), "compiling\nok");
/// assert_eq!(terminal.cursor(), (1, 2));
/// assert_eq!(terminal.title(), "build");
/// assert!(terminal.key_modes().application_cursor);
/// ```
#[derive(Clone)]
pub struct Terminal {
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for Terminal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Terminal")
            .field("size", &self.size())
            .finish_non_exhaustive()
    }
}

impl Terminal {
    /// A terminal of `size` with [`SCROLLBACK_LINES`] of scrollback.
    pub fn new(size: TerminalSize) -> Self {
        Self::with_scrollback(size, SCROLLBACK_LINES)
    }

    /// A terminal of `size` keeping `scrollback` lines that scrolled off the top.
    pub fn with_scrollback(size: TerminalSize, scrollback: usize) -> Self {
        Self {
            inner: Arc::new(Mutex::new(Inner::new(size, scrollback))),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Feeds program output.
    pub fn process(&self, bytes: &[u8]) {
        let mut inner = self.lock();
        let Inner { parser, fast, .. } = &mut *inner;
        fast.feed(parser, bytes);
    }

    /// Answers the terminal owes the program (cursor position reports, …), taken out. Queries
    /// are never held back by the fast-forward, so this needs no settling.
    pub(crate) fn take_replies(&self) -> Vec<u8> {
        std::mem::take(&mut self.lock().parser.callbacks_mut().replies)
    }

    /// Changes the size (not clamped: the session clamps what a UI asks for).
    pub fn resize(&self, size: TerminalSize) {
        let mut inner = self.lock();
        let (rows, cols) = size.nonzero();
        inner.settle().set_size(rows, cols);
        inner.fast.set_rows(size.rows);
    }

    /// Runs `f` on the screen, up to date with everything fed so far.
    pub fn with_screen<R>(&self, f: impl FnOnce(&vt100::Screen) -> R) -> R {
        let mut inner = self.lock();
        f(inner.settle().screen())
    }

    /// The current size.
    pub fn size(&self) -> TerminalSize {
        let (rows, cols) = self.with_screen(vt100::Screen::size);
        TerminalSize {
            cols: cols.get(),
            rows: rows.get(),
        }
    }

    /// The visible screen as text: rows joined with `\n`, trailing blanks and empty trailing
    /// rows left out; secrets redacted (see [`Terminal::set_secrets`]).
    pub fn contents(&self) -> String {
        let redactor = self.redactor();
        self.with_screen(|screen| crate::redact::contents(screen, redactor.as_deref()))
    }

    /// Each visible row as text (trailing blanks left out), top to bottom; secrets redacted
    /// over rows joined across soft wraps (see [`Terminal::set_secrets`]).
    pub fn rows(&self) -> Vec<String> {
        let redactor = self.redactor();
        self.with_screen(|screen| crate::redact::rows(screen, redactor.as_deref()))
    }

    /// Redacts `secrets` (also values added to them later) from everything this terminal shows
    /// from now on: its rows, contents and cells (a secret written across a soft wrap too; and
    /// where the text before the cursor ends with more than
    /// [`SHOWN_VALUE_START_BYTES`](agentsh_output_sink::SHOWN_VALUE_START_BYTES) of a value's
    /// first bytes, as when a program prints it slowly, those bytes become
    /// [`UNFINISHED_VALUE_REPLACEMENT`](agentsh_output_sink::UNFINISHED_VALUE_REPLACEMENT)).
    /// The program's own output is unchanged; the emulator keeps the real text, only what is
    /// read from it is redacted.
    pub fn set_secrets(&self, secrets: Option<Arc<agentsh_output_sink::Secrets>>) {
        self.lock().secrets = secrets;
    }

    pub(crate) fn redactor(&self) -> Option<Arc<agentsh_output_sink::Redactor>> {
        let secrets = self.lock().secrets.clone()?;
        Some(secrets.current()).filter(|redactor| !redactor.is_empty())
    }

    /// The text of the cell at `row`, `col` (0-based; empty for a blank cell), `None` outside
    /// the screen.
    pub fn cell_text(&self, row: u16, col: u16) -> Option<String> {
        self.with_screen(|screen| screen.cell(row, col).map(|cell| cell.contents().to_owned()))
    }

    /// The cursor position, `(row, col)`, 0-based.
    pub fn cursor(&self) -> (u16, u16) {
        self.with_screen(vt100::Screen::cursor_position)
    }

    /// Whether the program hid the cursor (`ESC [ ? 25 l`).
    pub fn cursor_hidden(&self) -> bool {
        self.with_screen(vt100::Screen::hide_cursor)
    }

    /// The window title the program set (`OSC 0` / `OSC 2`); empty when it set none.
    pub fn title(&self) -> String {
        self.lock().settle().callbacks().title.clone()
    }

    /// Whether the program uses the alternate screen (vim, less, htop).
    pub fn alternate_screen(&self) -> bool {
        self.with_screen(vt100::Screen::alternate_screen)
    }

    /// Whether the program asked for bracketed paste (`ESC [ ? 2004 h`): a paste then goes to
    /// it between `ESC [ 200 ~` and `ESC [ 201 ~`.
    pub fn bracketed_paste(&self) -> bool {
        self.with_screen(vt100::Screen::bracketed_paste)
    }

    /// Whether the program switched on application-cursor mode (`ESC [ ? 1 h`).
    pub fn application_cursor(&self) -> bool {
        self.with_screen(vt100::Screen::application_cursor)
    }

    /// The modes key normalisation depends on ([`classify_keys`](crate::classify_keys)).
    pub fn key_modes(&self) -> KeyModes {
        self.with_screen(|screen| KeyModes {
            alternate_screen: screen.alternate_screen(),
            application_cursor: screen.application_cursor(),
        })
    }
}
