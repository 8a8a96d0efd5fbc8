//! Protocol failures: every reason a request is answered with `success: false`.
//!
//! The text of a failure is its `Display`; [`crate::output::Message::failure`] is the one place
//! that turns a failure into a response line.

use agentsh_jsonl::MAX_REQUEST_LINE_BYTES;
use agentsh_protocol::wire::FieldError;
use agentsh_seam::HandleError;

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
pub enum RpcError {
    /// The line is not a request object; answered with `command: "parse"`.
    #[error("Failed to parse command: {0}")]
    Parse(ParseError),
    /// `type` names no request type.
    #[error("Unknown command type `{name}` (expected one of: {})", .expected.join(", "))]
    UnknownType {
        /// The `type` given.
        name: String,
        /// Every request type.
        expected: &'static [&'static str],
    },
    /// A field of the request is missing or of the wrong type.
    #[error("{0}")]
    Field(FieldError),
    /// A `tool_call` names a tool that does not exist (`unknown_tool_text`).
    #[error("{0}")]
    UnknownTool(String),
    /// A `tool_call` reuses the `toolCallId` of a call still running or queued.
    #[error("A tool call with toolCallId `{0}` is already running")]
    ToolCallIdInUse(String),
    /// An `approval` names no request waiting for this client's answer (unknown, or answered).
    #[error("No approval request `{0}` is waiting for an answer")]
    NoSuchApproval(String),
    /// An `abort` names no running or queued tool call.
    #[error("No running or queued tool call with toolCallId `{0}`")]
    NoSuchToolCall(String),
    /// The session refused or failed the request (`A bash command is already running`, an
    /// unknown artifact, a `job_view` of no job, settings it cannot apply, a far side that is
    /// down), in the session's own words.
    #[error(transparent)]
    Session(#[from] HandleError),
    /// A `hello` names a protocol other than this server's.
    #[error(
        "Protocol mismatch: this agentsh {version} speaks protocol {ours}, the other side speaks {theirs}"
    )]
    ProtocolMismatch {
        /// This agentsh's version.
        version: &'static str,
        /// The protocol this server speaks.
        ours: u32,
        /// The protocol the hello named.
        theirs: u64,
    },
    /// A `hello` with `settings` while calls run: they would lose their session.
    #[error(
        "hello while calls are running: settings apply to a new session, so a hello with \
         `settings` must come while no call runs"
    )]
    HelloWhileRunning,
    /// A request's task panicked or its result could not be serialised.
    #[error("internal error: {0}")]
    Internal(String),
}

impl RpcError {
    /// An internal error reporting `err`.
    pub fn internal(err: &dyn std::fmt::Display) -> Self {
        Self::Internal(err.to_string())
    }
}

/// Why a line is not a request object.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// The line is longer than [`MAX_REQUEST_LINE_BYTES`]; it was skipped unread.
    #[error("line exceeds {} MiB ({bytes} bytes)", MAX_REQUEST_LINE_BYTES / (1024 * 1024))]
    TooLong {
        /// Its length without the `\n`.
        bytes: u64,
    },
    /// The line is not UTF-8.
    #[error("line is not valid UTF-8 (invalid byte at offset {offset})")]
    NotUtf8 {
        /// The offset of the first byte that is not.
        offset: usize,
    },
    /// The line is not JSON (serde_json's text, with the line and column).
    #[error("{0}")]
    Json(serde_json::Error),
    /// The line is JSON but not an object.
    #[error("expected a JSON object, got {0}")]
    NotAnObject(&'static str),
    /// The object has no `type` (or `"type": null`).
    #[error("missing field `type`")]
    MissingType,
    /// `type` is not a string.
    #[error("field `type` must be a string, got {0}")]
    TypeNotAString(&'static str),
}
