#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod app;
mod approval;
// The frame bench's helpers: the mode's private types, measured by `benches/frame.rs` (with
// the `bench` feature, which only that bench turns on) and used by the unit tests.
#[cfg(any(test, feature = "bench"))]
#[doc(hidden)]
pub mod bench;
mod command;
mod complete;
mod draw;
mod highlight;
mod history;
mod host;
mod key_bytes;
mod line;
mod listen;
mod search;
mod session_view;
mod term;
mod transcript;

use std::io::{self, IsTerminal};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::sync::mpsc;

use crate::app::{App, AppConfig, Quit};
use crate::history::History;
use crate::session_view::SessionView;
use crate::term::TerminalGuard;

// What the signatures here use, so that a user of this crate needs no other to call it.
pub use agentsh_protocol::{Theme, ViewSettings};
pub use agentsh_renderer::{DefaultRenderer, Renderer};
pub use agentsh_seam::{BoxFuture, CallHost, CancellationToken, Handle};

/// How long leaving waits for every command tree to end before it gives up waiting.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(10);

/// The environment variable naming an input line that panics on purpose: only for the tests
/// that check the terminal comes back after a panic.
pub const PANIC_LINE_ENV: &str = "AGENTSH_TUI_PANIC_LINE";

/// Makes the session the mode drives, on the mode's runtime, before the terminal is taken (a
/// session here, or a far side reached over a transport: the mode does not know which). Its
/// error is shown, and nothing runs.
pub type MakeSession = Box<dyn FnOnce() -> BoxFuture<'static, Result<Handle, StartError>> + Send>;

/// Why the session or the server of other agents' calls could not start, in its own words.
pub type StartError = Box<dyn std::error::Error + Send + Sync>;

/// Starts a server of other agents' calls (`--listen`) on the mode's runtime, before the
/// terminal is taken: it tells the host of each call and runs until the token is cancelled.
/// Its error (a socket that cannot be served) is shown, and nothing runs.
pub type ServeCalls = Box<
    dyn FnOnce(
            Arc<dyn CallHost>,
            CancellationToken,
        ) -> Result<tokio::task::JoinHandle<()>, StartError>
        + Send,
>;

/// `--listen`: where other agents' calls come from, and the server that takes them.
pub struct Listen {
    /// What the status line names (the socket's path).
    pub shown: String,
    /// Starts the server.
    pub serve: ServeCalls,
}

impl std::fmt::Debug for Listen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listen")
            .field("shown", &self.shown)
            .finish_non_exhaustive()
    }
}

/// What the interactive mode starts with.
pub struct TuiOptions {
    /// What the views are drawn with (the configuration's theme, output limit and sandbox).
    pub settings: ViewSettings,
    /// The session the mode drives.
    pub session: MakeSession,
    /// The tools a blocked command may suggest (the interceptor blocks only commands whose
    /// suggested tool is among them; none by default).
    pub tool_names: Vec<String>,
    /// `--listen PATH`: also show the calls of a server of other agents.
    pub listen: Option<Listen>,
    /// The history file; `None` for `$XDG_STATE_HOME/agentsh/history` (else
    /// `~/.local/state/agentsh/history`).
    pub history: Option<PathBuf>,
}

impl TuiOptions {
    /// Options for the session `session` makes, drawn with `settings`; no server of other
    /// agents' calls, the default history file.
    pub fn new(settings: ViewSettings, session: MakeSession) -> Self {
        Self {
            settings,
            session,
            tool_names: Vec::new(),
            listen: None,
            history: None,
        }
    }
}

impl std::fmt::Debug for TuiOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TuiOptions")
            .field("tool_names", &self.tool_names)
            .field("listen", &self.listen)
            .field("history", &self.history)
            .finish_non_exhaustive()
    }
}

/// Why the mode could not run.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// stdin or stdout is not a terminal.
    #[error("the interactive mode needs a terminal on stdin and stdout")]
    NotATerminal,
    /// The session could not be made, or the server of `--listen` could not start: the
    /// reason, in the words of what failed.
    #[error("{0}")]
    Start(StartError),
    /// The terminal or the runtime failed.
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// Runs the interactive mode, drawn by `renderer`, until the person leaves; returns the exit
/// status (0, or 130 / 143 / 129 after SIGINT / SIGTERM / SIGHUP). Every command tree has
/// ended, and the terminal is as it was, when it returns (also on an error).
pub fn run<R: Renderer + Send + 'static>(
    renderer: R,
    options: TuiOptions,
) -> Result<ExitCode, TuiError> {
    if !io::stdin().is_terminal() || !io::stdout().is_terminal() {
        return Err(TuiError::NotATerminal);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let quit = runtime.block_on(run_async(renderer, options))?;
    runtime.shutdown_timeout(Duration::from_secs(1));
    Ok(match quit {
        Quit::Asked | Quit::TerminalGone => ExitCode::SUCCESS,
        Quit::Signal(code) => ExitCode::from(code),
    })
}

async fn run_async<R: Renderer>(renderer: R, options: TuiOptions) -> Result<Quit, TuiError> {
    let handle = (options.session)().await.map_err(TuiError::Start)?;
    let session = SessionView::connect(handle, options.settings).await;
    let (history, history_error) = History::open(options.history.or_else(history::default_path));
    let mut notes: Vec<String> = history_error.into_iter().collect();
    notes.extend(session.take_warnings());
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let pty_size = Arc::new(host::PtySize::default());
    let shutdown = CancellationToken::new();
    let (listening, listen_shown) = match options.listen {
        Some(Listen { shown, serve }) => {
            let host = Arc::new(listen::TuiCallHost::new(
                events_tx.clone(),
                Arc::clone(&pty_size),
            ));
            match serve(host, shutdown.clone()) {
                Ok(task) => (Some(task), Some(shown)),
                Err(err) => {
                    session.shutdown().await;
                    return Err(TuiError::Start(err));
                }
            }
        }
        None => (None, None),
    };
    let result = async {
        // Dropped at the end of this block, on every way out of it: the terminal comes back
        // before the commands are ended.
        let _guard = TerminalGuard::enter()?;
        let mut terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
        let size = terminal.size()?;
        host::spawn_input_thread(events_tx.clone())?;
        let config = AppConfig {
            session: session.clone(),
            tool_names: options.tool_names,
            history,
            listen: listen_shown,
            panic_line: std::env::var(PANIC_LINE_ENV).ok().filter(|l| !l.is_empty()),
            notes,
        };
        let mut app = App::new(
            renderer,
            config,
            events_tx,
            pty_size,
            (size.width, size.height),
        );
        // The person answers the jobs' password prompts here, and hears of their ends.
        app.follow_events(&session, None);
        let quit = app::run_loop(&mut app, &mut terminal, &mut events).await?;
        // Every call still running is cancelled before the session ends them all.
        app.cancel_all();
        Ok::<_, TuiError>(quit)
    }
    .await;
    // Every connection's calls and sessions end with the mode's own.
    shutdown.cancel();
    let ended = async {
        if let Some(task) = listening {
            let _ = task.await;
        }
        session.shutdown().await;
    };
    if tokio::time::timeout(SHUTDOWN_TIMEOUT, ended).await.is_err() {
        tracing::warn!("commands still running {SHUTDOWN_TIMEOUT:?} after leaving");
    }
    result
}
