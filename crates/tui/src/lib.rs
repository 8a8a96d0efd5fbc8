#![doc = include_str!("../README.md")]

mod app;
mod backend;
#[doc(hidden)]
pub mod bench;
mod command;
mod draw;
mod history;
mod host;
mod keys;
mod line;
mod listen;
mod term;
mod transcript;

use std::io::{self, IsTerminal};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use agentsh_agent_session::{AgentSession, CancellationToken, SessionOptions};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::sync::mpsc;

use crate::app::{App, AppConfig, Quit};
use crate::backend::{Far, Session};
use agentsh_remote::RemoteSession;

// What the signatures here use, so that a user of this crate needs no other to call it.
use crate::history::History;
use crate::term::TerminalGuard;
pub use agentsh_agent_session::{SessionError, Settings, Theme};
pub use agentsh_remote::{RemoteConfig, RemoteError};
pub use agentsh_renderer::{DefaultRenderer, Renderer};
pub use agentsh_rpc::ListenError;

/// How long leaving waits for every command tree to end before it gives up waiting.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(10);

/// The environment variable naming an input line that panics on purpose: only for the tests
/// that check the terminal comes back after a panic.
pub const PANIC_LINE_ENV: &str = "AGENTSH_TUI_PANIC_LINE";

/// What the interactive mode starts with.
#[derive(Debug, Clone)]
pub struct TuiOptions {
    /// The settings (the configuration file's).
    pub settings: Settings,
    /// The session's working directory (the project).
    pub cwd: PathBuf,
    /// The tools a blocked command may suggest (the interceptor blocks only commands whose
    /// suggested tool is among them; none by default).
    pub tool_names: Vec<String>,
    /// `--listen PATH`: also serve the RPC protocol on this Unix socket.
    pub listen: Option<PathBuf>,
    /// The history file; `None` for `$XDG_STATE_HOME/agentsh/history` (else
    /// `~/.local/state/agentsh/history`).
    pub history: Option<PathBuf>,
    /// `--remote`: run every command on this far side (SPEC §17) instead of here; `cwd` is
    /// then only where the history and notes of this side are kept, and the far side's
    /// directory is the one in `far`. Cannot be combined with `listen`.
    pub remote: Option<RemoteConfig>,
}

impl TuiOptions {
    /// Options for `cwd` with `settings`, no socket, the default history file.
    pub fn new(settings: Settings, cwd: impl Into<PathBuf>) -> Self {
        Self {
            settings,
            cwd: cwd.into(),
            tool_names: Vec::new(),
            listen: None,
            history: None,
            remote: None,
        }
    }
}

/// Why the mode could not run.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// stdin or stdout is not a terminal.
    #[error("the interactive mode needs a terminal on stdin and stdout")]
    NotATerminal,
    /// The session could not be made (an unusable `bash.shell`).
    #[error(transparent)]
    Session(#[from] SessionError),
    /// `--listen`: the socket could not be served (the error names the path).
    #[error("--listen: {0}")]
    Listen(#[from] ListenError),
    /// `--remote`: the far side could not be reached, or refused the session.
    #[error("{0}")]
    Remote(#[from] RemoteError),
    /// `--remote` with `--listen`: each connection would need a far side of its own.
    #[error("--listen cannot be combined with --remote: the calls of --listen run here")]
    ListenWithRemote,
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
    let session = match options.remote {
        Some(_) if options.listen.is_some() => return Err(TuiError::ListenWithRemote),
        Some(config) => {
            let remote = RemoteSession::connect(config).await?;
            Session::Remote(Arc::new(Far::connect(remote, options.settings).await))
        }
        None => Session::Local(AgentSession::new(SessionOptions {
            settings: options.settings,
            cwd: options.cwd,
            ..SessionOptions::default()
        })?),
    };
    let (history, history_error) = History::open(options.history.or_else(history::default_path));
    let mut notes: Vec<String> = history_error.into_iter().collect();
    notes.extend(session.take_warnings());
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let pty_size = Arc::new(host::PtySize::default());
    let shutdown = CancellationToken::new();
    let listening = match (&options.listen, &session) {
        (Some(path), Session::Local(session)) => {
            let host = Arc::new(listen::TuiCallHost::new(
                events_tx.clone(),
                Arc::clone(&pty_size),
            ));
            let served = listen::start(
                path,
                session.settings().clone(),
                session.cwd().to_path_buf(),
                host,
                shutdown.clone(),
            );
            match served {
                Ok(task) => Some(task),
                Err(err) => {
                    session.shutdown().await;
                    return Err(TuiError::Listen(err));
                }
            }
        }
        _ => None,
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
            listen: options.listen.as_ref().map(|p| p.display().to_string()),
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
