//! RPC mode: JSON lines both ways (the requests, responses and events are described in
//! `docs/rpc.md`), served by `agentsh_rpc::serve_stdio` over a session here or, with
//! `--remote`, on a far side.
//!
//! On end of input (or when the `--lease` runs out) every running command is ended, the session
//! shut down, and the process exits with status 0. SIGINT, SIGTERM and SIGHUP do the same, then
//! exit 130, 143 or 129.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agentsh_rpc::StdioOptions;

use crate::cli::RpcArgs;
use crate::{print_error, usage_error};

/// Runs `agentsh rpc` until stdin ends.
pub fn run(args: &RpcArgs) -> ExitCode {
    let remote = match remote_choice(args) {
        Ok(remote) => remote,
        Err(code) => return code,
    };
    let (runtime, signals, session) = match crate::serve_session(
        "rpc",
        args.session.config.as_deref(),
        args.session.cwd.as_deref(),
        remote,
        |_| {},
    ) {
        Ok(started) => started,
        Err(code) => return code,
    };
    let options = StdioOptions { lease: args.lease };
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
    let mut settings = crate::config::load_settings(args.session.config.as_deref())
        .map_err(|err| usage_error(&err))?;
    if args.lease.is_some() {
        // With a lease this is a far side (another agentsh started it): the configuration's
        // own far side would forward again, in a loop when both share a home. Only an explicit
        // `--remote` forwards from here.
        settings.remote.target = None;
        settings.remote.command = None;
    }
    // The far side's directory: not resolved here.
    crate::remote::choose(&args.remote, &settings, args.session.cwd.as_deref())
        .map_err(|message| usage_error(&message))
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
