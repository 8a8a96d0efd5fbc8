//! MCP mode (SPEC §14): `agentsh mcp` serves the bash tool, the job tools and the session's
//! artifacts to an MCP client on stdio, through the official Rust SDK (`rmcp`).
//!
//! One session per connection. `yield_after` defaults to `mcp.yield_after` (45 s) here, below
//! common clients' request limits. End of input ends every job and shell and exits 0; SIGINT,
//! SIGTERM and SIGHUP do the same with 130, 143 and 129.

mod backend;
mod server;
mod transport;

use std::process::ExitCode;

use agentsh_agent_session::{AgentSession, SessionOptions};
use backend::Backend;
use rmcp::ServiceExt;

use crate::cli::McpArgs;
use crate::signals::Signals;
use crate::{print_error, usage_error};

/// How long the last answers get to reach stdout when the server ends.
const WRITER_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Runs `agentsh mcp` until stdin ends.
pub fn run(args: &McpArgs) -> ExitCode {
    let remote = match remote_choice(args) {
        Ok(remote) => remote,
        Err(code) => return code,
    };
    let (runtime, mut signals, session) = match remote {
        Some(remote) => match connect_remote(remote) {
            Ok(connected) => connected,
            Err(code) => return code,
        },
        None => match local_session(args) {
            Ok(local) => local,
            Err(code) => return code,
        },
    };
    let _context = runtime.enter();
    // Cancelled at end of input: what still runs is ended, not waited for (rmcp would let
    // an in-flight call run on for its drain time).
    let ended = tokio_util::sync::CancellationToken::new();
    let handler = server::McpServer::new(session.clone(), args.tools.clone(), ended.clone());
    let signalled = runtime.block_on(async {
        // Non-blocking pipes when the client gave pipes (as MCP clients do): no thread hop
        // per message.
        let (stdin, stdout) = rmcp::transport::stdio_pipes();
        let (transport, writer) = transport::LineTransport::new(stdin, stdout, ended);
        let service = match handler.serve(transport).await {
            Ok(service) => service,
            Err(err) => {
                // The client went away (or spoke no MCP) before the handshake ended.
                tracing::warn!("MCP initialisation failed: {err}");
                session.shutdown().await;
                let _ = tokio::time::timeout(WRITER_GRACE, writer).await;
                return None;
            }
        };
        let cancel = service.cancellation_token();
        let signalled = tokio::select! {
            _ = service.waiting() => None,
            code = signals.recv() => {
                cancel.cancel();
                Some(code)
            }
        };
        session.shutdown().await;
        // The transport is gone with the service: the writer flushes what is queued and ends.
        let _ = tokio::time::timeout(WRITER_GRACE, writer).await;
        signalled
    });
    // A blocking stdin read cannot be cancelled: do not wait for it.
    runtime.shutdown_background();
    signalled.map_or(ExitCode::SUCCESS, ExitCode::from)
}

/// The far side `--remote` or `[remote]` names, if any.
fn remote_choice(args: &McpArgs) -> Result<Option<crate::remote::Choice>, ExitCode> {
    let settings =
        crate::config::load_settings(args.config.as_deref()).map_err(|err| usage_error(&err))?;
    let Some(mut remote) = crate::remote::choose(&args.remote, &settings, args.cwd.as_deref())
        .map_err(|message| usage_error(&message))?
    else {
        return Ok(None);
    };
    // `mcp.yield_after` wins over `bash.yield_after` here (SPEC §13): on the far side too.
    remote.set_yield_after(settings.mcp.yield_after);
    Ok(Some(remote))
}

/// A local session for the MCP server, with its runtime and signals.
fn local_session(args: &McpArgs) -> Result<(tokio::runtime::Runtime, Signals, Backend), ExitCode> {
    let (mut settings, cwd, runtime) =
        crate::server_start(args.config.as_deref(), args.cwd.as_deref())?;
    // `mcp.yield_after` wins over `bash.yield_after` here (SPEC §13).
    settings.bash.yield_after = settings.mcp.yield_after;
    let (signals, session) = {
        let _context = runtime.enter();
        let signals = Signals::install().map_err(|err| {
            print_error(&format_args!("cannot handle signals: {err}"));
            ExitCode::FAILURE
        })?;
        let session = AgentSession::new(SessionOptions {
            settings,
            cwd,
            ..SessionOptions::default()
        })
        .map_err(|err| usage_error(&err))?;
        (signals, session)
    };
    Ok((runtime, signals, Backend::Local(session)))
}

/// A far-side session for the MCP server, connected before the client is served.
fn connect_remote(
    remote: crate::remote::Choice,
) -> Result<(tokio::runtime::Runtime, Signals, Backend), ExitCode> {
    let (runtime, signals, session) = crate::remote::start_server(remote)?;
    Ok((runtime, signals, Backend::Remote(session)))
}
