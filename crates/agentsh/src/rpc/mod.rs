//! RPC mode: JSON lines both ways (the requests, responses and events are listed in the
//! crate README).
//!
//! Three parts, so that input is read while commands run and output lines never interleave:
//!
//! - a reader splits stdin into lines of at most [`framing::MAX_LINE_BYTES`]
//!   ([`framing::LineSplitter`]; a longer line is skipped, not buffered) and parses each into a
//!   [`request::Request`] or a [`request::RequestError`]. When stdin is a pipe or a socket (the
//!   usual case: a client process) the reader is a task on the runtime, woken by `epoll`, so a
//!   request reaches the dispatcher without a thread hand-off; otherwise (a terminal, a file) it
//!   is a thread doing blocking reads;
//! - the dispatcher ([`server::Server`]) answers quick requests (`abort`, `abort_bash`, errors)
//!   at once and runs `bash`, `tool_call` and `read_artifact` as tasks of their own;
//! - a writer thread ([`output::spawn_writer`]) writes the serialised lines queued for it; a
//!   line that fits the pipe while nothing is queued is written by its sender directly.
//!
//! On end of input every running command is ended, the session shut down, and the process exits
//! with status 0. SIGINT, SIGTERM and SIGHUP do the same, then exit 130, 143 or 129
//! ([`crate::signals`]).

mod error;
mod framing;
mod input;
mod lenient;
mod output;
mod request;
mod server;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use agentsh_agent_session::{AgentSession, SessionOptions};
use tokio::sync::mpsc;

use crate::cli::RpcArgs;
use crate::signals::Signals;
use crate::{print_error, usage_error};

/// Parsed requests waiting for the dispatcher; the reader waits when this many are queued.
const REQUEST_QUEUE: usize = 64;

/// How long the runtime waits for leftover blocking work when the server ends.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Runs `agentsh rpc` until stdin ends.
pub fn run(args: &RpcArgs) -> ExitCode {
    let (settings, cwd, runtime) =
        match crate::server_start(args.config.as_deref(), args.cwd.as_deref()) {
            Ok(started) => started,
            Err(code) => return code,
        };
    let (signals, session) = {
        let _context = runtime.enter();
        // Caught before anything runs: from here on a signal shuts the server down cleanly.
        let signals = match Signals::install() {
            Ok(signals) => signals,
            Err(err) => {
                print_error(&format_args!("cannot handle signals: {err}"));
                return ExitCode::FAILURE;
            }
        };
        let session = AgentSession::new(SessionOptions {
            settings,
            cwd,
            ..SessionOptions::default()
        });
        (signals, session)
    };
    let session = match session {
        Ok(session) => session,
        // An unusable `bash.shell`: nothing runs on a broken configuration.
        Err(err) => return usage_error(&err),
    };
    let (output, writer) = match output::spawn_writer(std::io::stdout(), output::stdout_has_room) {
        Ok(pair) => pair,
        Err(err) => {
            print_error(&format_args!("cannot start the output thread: {err}"));
            return ExitCode::FAILURE;
        }
    };
    let (requests_tx, requests) = mpsc::channel(REQUEST_QUEUE);
    let stdin = {
        let _entered = runtime.enter();
        input::AsyncStdin::open()
    };
    if let Some(stdin) = stdin {
        runtime.spawn(input::read_async(stdin, requests_tx));
    } else if let Err(err) = std::thread::Builder::new()
        .name("rpc-reader".into())
        .spawn(move || input::read_blocking(&requests_tx))
    {
        print_error(&format_args!("cannot start the input thread: {err}"));
        return ExitCode::FAILURE;
    }
    let signalled = runtime.block_on(server::Server::new(session, output).serve(requests, signals));
    // Drops the reader task, and with it the non-blocking stdin, whose flags it restores.
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    // Every `Output` was owned by the server and its tasks, now gone: the writer drains its
    // queue and ends.
    if writer.join().is_err() {
        tracing::error!("the output thread panicked");
    }
    signalled.map_or(ExitCode::SUCCESS, ExitCode::from)
}

/// The session's working directory: `--cwd DIR` (must be a directory; made absolute), else the
/// current directory.
pub(crate) fn session_cwd(flag: Option<&Path>) -> Result<PathBuf, String> {
    let current = std::env::current_dir()
        .map_err(|err| format!("cannot read the current directory: {err}"))?;
    let Some(dir) = flag else {
        return Ok(current);
    };
    let dir = current.join(dir);
    match std::fs::metadata(&dir) {
        Ok(meta) if meta.is_dir() => Ok(dir),
        Ok(_) => Err(format!("--cwd {}: not a directory", dir.display())),
        Err(err) => Err(format!("--cwd {}: {err}", dir.display())),
    }
}
