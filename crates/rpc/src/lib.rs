#![doc = include_str!("../README.md")]
//!
//! # Modules, for contributors
//!
//! Three parts, so that input is read while commands run and output lines never interleave:
//!
//! - a reader (`input`) splits the input into lines of at most 32 MiB (`agentsh_jsonl`'s
//!   `LineSplitter`; a longer line is skipped, not buffered) and `request` parses each into a
//!   wire `Request` or a `RequestError` (`agentsh_jsonl`'s lenient reading, shared with the MCP server,
//!   repairs what JSON allows but serde_json refuses and reads the `id` of a broken line). On
//!   a socket, and on stdin when it is a pipe or a socket (the usual case: a client process),
//!   the reader is a task on the runtime, woken by `epoll`, so a request reaches the
//!   dispatcher without a thread hand-off; otherwise (a terminal, a file) it is a thread doing
//!   blocking reads;
//! - the dispatcher (`server::Server`) answers quick requests (`abort`, `abort_bash`, errors)
//!   at once and runs `bash`, `tool_call` and `read_artifact` as tasks of their own, telling a
//!   [`CallHost`] (`host`) about the calls when there is one;
//! - a writer (`output`) writes the serialised lines queued for it: on stdout a thread (a line
//!   that fits the pipe while nothing is queued is written by its sender directly), on a socket
//!   a task.
//!
//! `stdio` wires them to stdin and stdout ([`serve_stdio`]), `socket` to a Unix socket
//! ([`listen`], [`serve_listener`], [`serve_connection`]). On end of input, or a stop request,
//! every running command is ended and the session shut down.
#![deny(missing_docs)]

mod approvals;
#[cfg(test)]
mod docs;
mod error;
mod hello;
mod input;
mod output;
mod request;
mod server;
mod socket;
mod stdio;
mod stream;

// The whole public surface. The seam's types are re-exported because these signatures use
// them: a host needs no other agentsh crate to serve a session it was handed.
pub use agentsh_seam::{
    CallEnd, CallHooks, CallHost, CallObserver, CancellationToken, Handle, HandleError, HostedCall,
    HostedCallKind, PtyAttachment, PtyHost, Reach, SessionHandle, Value, ready_now,
};
pub use agentsh_signals::Stop;
pub use socket::{
    ListenError, Listener, listen, listen_for_host, serve_connection, serve_listener,
};
pub use stdio::{StdioError, StdioOptions, serve_stdio};

/// What the server makes of one input line (without its `\n`) before any session sees it:
/// `Ok(None)` for a blank line (ignored), `Ok(Some(request))` for a request to run, and
/// `Err(line)` for a line that is no valid request: the JSON line it is answered with, as
/// written to the client (without its `\n`).
///
/// For the fuzz targets and their corpus replay (`crates/fuzz-checks`), which check every
/// line they are given against what the protocol promises; not part of the API.
#[doc(hidden)]
pub fn read_line_for_checks(
    line: &[u8],
) -> Result<Option<agentsh_protocol::wire::Request>, String> {
    request::parse_line(line).map_err(|err| {
        serde_json::to_string(&agentsh_protocol::wire::Message::failure(
            err.id,
            &err.command,
            &err.error,
        ))
        .unwrap_or_else(|err| format!("unserialisable failure: {err}"))
    })
}

/// The protocol this agentsh speaks: a `hello` naming another is refused, and both sides of
/// remote execution name theirs in it. Raised when a change to the requests or answers would break an
/// agentsh on the other end.
pub const PROTOCOL: u32 = agentsh_protocol::RPC_PROTOCOL;

/// Parsed requests waiting for the dispatcher; the reader waits when this many are queued.
const REQUEST_QUEUE: usize = 64;
