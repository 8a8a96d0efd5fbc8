//! RPC mode: JSON lines both ways (the requests, responses and events are listed in the
//! crate README), served by `agentsh_rpc::serve_stdio`.
//!
//! On end of input (or when the `--lease` runs out) every running command is ended, the session
//! shut down, and the process exits with status 0. SIGINT, SIGTERM and SIGHUP do the same, then exit 130, 143 or 129
//! ([`crate::signals`]).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agentsh_agent_session::{AgentSession, SessionOptions};
use agentsh_rpc::StdioOptions;

use crate::cli::RpcArgs;
use crate::signals::Signals;
use crate::{print_error, usage_error};

/// Runs `agentsh rpc` until stdin ends.
pub fn run(args: &RpcArgs) -> ExitCode {
    match remote_choice(args) {
        Ok(Some(remote)) => return run_remote(remote),
        Ok(None) => {}
        Err(code) => return code,
    }
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
        let options = SessionOptions {
            settings,
            cwd,
            ..SessionOptions::default()
        };
        (
            signals,
            AgentSession::new(options.clone()).map(|session| (session, options)),
        )
    };
    let (session, session_options) = match session {
        Ok(made) => made,
        // An unusable `bash.shell`: nothing runs on a broken configuration.
        Err(err) => return usage_error(&err),
    };
    let options = StdioOptions {
        // A hello's settings make a new session as this one was made (SPEC §17).
        session_options: Some(session_options),
        lease: args.lease,
    };
    match agentsh_rpc::serve_stdio(runtime, session, options, signals) {
        Ok(signalled) => signalled.map_or(ExitCode::SUCCESS, ExitCode::from),
        Err(err) => {
            print_error(&err);
            ExitCode::FAILURE
        }
    }
}

/// The far side to forward to, if `--remote` or `[remote]` names one.
fn remote_choice(args: &RpcArgs) -> Result<Option<crate::remote::Choice>, ExitCode> {
    let mut settings =
        crate::config::load_settings(args.config.as_deref()).map_err(|err| usage_error(&err))?;
    if args.lease.is_some() {
        // With a lease this is a far side (another agentsh started it): the configuration's
        // own far side would forward again, in a loop when both share a home. Only an explicit
        // `--remote` forwards from here.
        settings.remote.target = None;
        settings.remote.command = None;
    }
    // The far side's directory: not resolved here.
    crate::remote::choose(&args.remote, &settings, args.cwd.as_deref())
        .map_err(|message| usage_error(&message))
}

/// `agentsh rpc --remote`: connects, then serves stdio by forwarding every request.
fn run_remote(remote: crate::remote::Choice) -> ExitCode {
    let (runtime, signals, session) = match crate::remote::start_server(remote) {
        Ok(started) => started,
        Err(code) => return code,
    };
    match agentsh_rpc::serve_stdio_remote(runtime, session, signals) {
        Ok(signalled) => signalled.map_or(ExitCode::SUCCESS, ExitCode::from),
        Err(err) => {
            print_error(&err);
            ExitCode::FAILURE
        }
    }
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
