#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod approvals;
mod ids;
mod server;
mod transport;

use std::time::Duration;

use rmcp::ServiceExt;
use tokio::runtime::Runtime;

// The seam's types these signatures use, so a host needs no other agentsh crate to serve a
// session it was handed.
pub use agentsh_seam::{CancellationToken, Handle, SessionHandle, Value};
pub use agentsh_signals::Stop;

/// The stdio transport between the client's lines and rmcp: for the fuzz targets and their
/// corpus replay (`crates/fuzz-checks`), which drive it with arbitrary lines; not part of the
/// API.
#[doc(hidden)]
pub use transport::LineTransport;

/// How long the last answers get to reach stdout when the server ends.
const WRITER_GRACE: Duration = Duration::from_secs(2);

/// One tool the server offers.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// Its name (`bash`, `job_output`, …).
    pub name: String,
    /// What the client's model reads about it.
    pub description: String,
    /// The JSON schema of its arguments (an object schema).
    pub input_schema: Value,
}

/// What the server offers and tells the client's model.
#[derive(Debug, Clone, PartialEq)]
pub struct McpOptions {
    /// The tools offered, in order.
    pub tools: Vec<ToolSpec>,
    /// The agent's other tools (`--tools`): interception only suggests one of these.
    pub tool_names: Vec<String>,
    /// The session's output limit in bytes, as the instructions name it.
    pub output_max_bytes: u64,
    /// Seconds after which a call still running returns and goes on as a job, as the
    /// instructions name them; `None`: never.
    pub yield_after: Option<f64>,
}

/// Serves `session` (here or on a far side) to an MCP client on stdin and stdout until stdin
/// ends or `stop` asks; then ends what still runs, shuts the session down (every tree ended)
/// and shuts `runtime` down. Returns the stop's reason, if one came.
///
/// Newline-delimited JSON-RPC: a request line that is no message gets a JSON-RPC error
/// (`-32700`, or `-32600` with its id as written, `null` when it has none), never silence;
/// lines are bounded at 32 MiB. A request id is answered as the client wrote it (a number
/// token for token), and one still in use by a running request is refused. Notifications and
/// responses that come before `initialize` are ignored, as after it. A client's cancel of a
/// call ends the command's whole process tree.
pub fn serve_stdio<S: Stop>(
    runtime: Runtime,
    session: Handle,
    options: McpOptions,
    stop: S,
) -> Option<S::Reason> {
    let signalled = runtime.block_on(async {
        // Non-blocking pipes when the client gave pipes (as MCP clients do): no thread hop
        // per message.
        let (stdin, stdout) = rmcp::transport::stdio_pipes();
        serve(session, options, stdin, stdout, stop).await
    });
    // A blocking stdin read cannot be cancelled: do not wait for it.
    runtime.shutdown_background();
    signalled
}

/// What [`serve_stdio`] does on its runtime, over any byte streams: serves `session` to the
/// MCP client that writes to `reader` and reads `writer` until `reader` ends or `stop` asks;
/// then ends what still runs, shuts the session down and lets the last answers reach `writer`
/// (for up to 2 s). Returns the stop's reason, if one came. Everything [`serve_stdio`] says of
/// the lines holds here. Needs a tokio runtime with IO and time enabled; the crate's tests run
/// it over an in-memory pipe.
pub async fn serve<R, W, S>(
    session: Handle,
    options: McpOptions,
    reader: R,
    writer: W,
    mut stop: S,
) -> Option<S::Reason>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    S: Stop,
{
    // Cancelled at end of input: what still runs is ended, not waited for (rmcp would let
    // an in-flight call run on for its drain time).
    let ended = CancellationToken::new();
    let ending = std::sync::Arc::clone(&session);
    let handler = server::McpServer::new(session, options, ended.clone());
    let (transport, writer) = transport::LineTransport::new(reader, writer, ended);
    let serving = transport.serving();
    let service = match handler.serve(transport).await {
        Ok(service) => {
            serving.store(true, std::sync::atomic::Ordering::SeqCst);
            service
        }
        Err(err) => {
            // The client went away (or spoke no MCP) before the handshake ended.
            tracing::warn!("MCP initialisation failed: {err}");
            ending.shutdown().await;
            let _ = tokio::time::timeout(WRITER_GRACE, writer).await;
            return None;
        }
    };
    let cancel = service.cancellation_token();
    let job_ends = tokio::spawn(server::report_job_ends(
        std::sync::Arc::clone(&ending),
        service.peer().clone(),
    ));
    let signalled = tokio::select! {
        _ = service.waiting() => None,
        reason = stop.requested() => {
            cancel.cancel();
            Some(reason)
        }
    };
    job_ends.abort();
    ending.shutdown().await;
    // The transport is gone with the service: the writer flushes what is queued and ends.
    let _ = tokio::time::timeout(WRITER_GRACE, writer).await;
    signalled
}
