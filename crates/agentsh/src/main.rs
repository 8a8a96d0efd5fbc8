//! `agentsh`: the bash tool runtime of an LLM coding agent, as a command.
//!
//! - `agentsh exec [--cwd DIR] [--timeout S] [--head N] [--tail N] [--tools a,b] [--config FILE]
//!   [--json] -- <command…>` (print mode, [`exec`]): one `bash` tool call, printed as its
//!   text or, with `--json`, as the tool result object.
//! - `agentsh artifact ID [--offset N] [--limit N]` ([`artifact`]): lines of an artifact (a
//!   result's `Full: artifact://ID`) printed as they are, read as RPC `read_artifact` reads them.
//! - `agentsh rpc [--config FILE] [--cwd DIR]` (RPC mode, [`rpc`]): JSON lines both ways,
//!   requests on stdin, responses and events on stdout.
//!
//! - `agentsh [--config FILE] [--cwd DIR] [--listen PATH] [--tools a,b]` on a terminal: the
//!   interactive mode (crate `agentsh-tui`, drawn by the default renderer); without a
//!   terminal, the help text and exit status 2.
//!
//! The crate README describes the modes as a user meets them.
//!
//! - `agentsh mcp [--config FILE] [--cwd DIR] [--tools a,b]` (MCP mode, [`mcp`]): the tools
//!   and the session's artifacts to an MCP client on stdio.
//! - `agentsh doctor` ([`doctor`]): what this host gives agentsh, checked for real;
//!   `agentsh completions bash|zsh|fish` ([`completions`]): a completion script.
//!
//! `--config`, `--cwd`, `--remote` and `--remote-install` may also come before the subcommand
//! (`agentsh --config FILE exec -- …`); crate `agentsh-cli` moves them into it.
//!
//! Every mode runs its session here, or with `--remote` on a far side ([`remote`]); the
//! binary makes the session (`serve_session`) and hands it to the surface, which drives it
//! through `agentsh_seam::SessionHandle` without knowing which it has. Logs go to stderr only,
//! filtered by `RUST_LOG` (default: warnings); stdout carries results only.

mod artifact;
mod completions;
mod config;
mod doctor;
mod exec;
#[cfg(test)]
mod guide_docs;
mod interactive;
mod mcp;
mod policy;
mod remote;
mod rpc;

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use agentsh_agent_session::{AgentSession, LocalHandle, SessionOptions};
use agentsh_config::Settings;
use agentsh_seam::Handle;
use agentsh_signals::Signals;
use clap::Parser;
use tracing_subscriber::EnvFilter;

use agentsh_cli::{Cli, Mode};

/// The command line, parsed by `agentsh-cli`.
pub(crate) use agentsh_cli as cli;

/// Exit status of a usage or configuration error (clap uses it for usage errors too).
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    // A sweep of what dead agentsh processes left, started detached by another agentsh, runs
    // here and exits; anything else goes on, this binary now known to answer such a start.
    agentsh_process::answer_sweep_request();
    let cli = Cli::parse();
    init_tracing();
    match cli.mode {
        Some(Mode::Exec(args)) => exec::run(args),
        Some(Mode::Artifact(args)) => artifact::run(args),
        Some(Mode::Rpc(args)) => rpc::run(&args),
        Some(Mode::Mcp(args)) => mcp::run(&args),
        Some(Mode::Policy(args)) => policy::run(args),
        Some(Mode::Doctor(args)) => doctor::run(&args),
        Some(Mode::Completions(args)) => completions::run(args.shell),
        None => interactive::run(cli.interactive),
    }
}

/// Logs to stderr, `RUST_LOG` filtering, warnings and errors by default.
fn init_tracing() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

/// Prints `agentsh: <message>` on stderr.
fn print_error(message: &dyn std::fmt::Display) {
    // Nothing sensible is left to do when stderr itself is gone.
    let _ = writeln!(std::io::stderr().lock(), "agentsh: {message}");
}

/// Prints `agentsh: warning: <text>` on stderr for each warning.
fn print_warnings(warnings: &[String]) {
    let mut stderr = std::io::stderr().lock();
    for warning in warnings {
        let _ = writeln!(stderr, "agentsh: warning: {warning}");
    }
}

/// Exit with a usage/config error after printing it.
fn usage_error(message: &dyn std::fmt::Display) -> ExitCode {
    print_error(message);
    ExitCode::from(EXIT_USAGE)
}

/// What a server mode (`rpc`, `mcp`; `artifact` for its one read) serves: its runtime, the signals (caught before anything
/// runs: from then on a signal shuts the server down cleanly) and the session: on the far side
/// `remote` names (connected and said `hello`), else here, from `--config` and `--cwd` with
/// `local` applied to the settings. A session here takes the settings of a `hello` by making
/// a new session as this one was made. On failure, the exit status to end with, what went
/// wrong reported (2 for a configuration, a `--cwd` or a far side that cannot be used).
fn serve_session(
    mode: &str,
    config: Option<&Path>,
    cwd: Option<&Path>,
    remote: Option<remote::Choice>,
    local: impl FnOnce(&mut Settings),
) -> Result<(tokio::runtime::Runtime, Signals, Handle), ExitCode> {
    if let Some(remote) = remote {
        let (runtime, signals, session) = remote::start_server(remote)?;
        return Ok((runtime, signals, Arc::new(session)));
    }
    let mut settings = config::load_settings(config).map_err(|err| usage_error(&err))?;
    let cwd = rpc::session_cwd(cwd).map_err(|message| usage_error(&message))?;
    local(&mut settings);
    let runtime = runtime().map_err(|err| {
        print_error(&format_args!("cannot start the async runtime: {err}"));
        ExitCode::FAILURE
    })?;
    let made = {
        let _context = runtime.enter();
        let signals = Signals::install().map_err(|err| {
            print_error(&format_args!("cannot handle signals: {err}"));
            ExitCode::FAILURE
        })?;
        let options = SessionOptions {
            settings,
            cwd,
            mode: Some(mode.to_owned()),
            ..SessionOptions::default()
        };
        // An unusable `bash.shell`: nothing runs on a broken configuration.
        let session = AgentSession::new(options.clone()).map_err(|err| usage_error(&err))?;
        let session: Handle = Arc::new(LocalHandle::renewable(session, options));
        (signals, session)
    };
    Ok((runtime, made.0, made.1))
}

/// The tokio runtime of either mode, or the error to report: one thread. Commands, requests
/// and responses are all waits on I/O; one thread serves them without waking other workers for
/// every task (an RPC `true` round trip measured 3.3 context switches instead of 9, 0.46 ms
/// instead of 0.55 ms) and starts faster (`agentsh exec`). Blocking work (artifact reads) goes
/// to tokio's blocking pool.
fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}
