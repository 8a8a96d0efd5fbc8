//! The JSON-lines RPC protocol as types: every request a client sends ([`Request`]), every
//! line a server writes ([`Message`]: responses and events) and the `data` of each response
//! that has one. A server parses requests with them and writes messages with them; a client
//! (the local side of remote execution) builds requests and reads messages with the same
//! types, so neither writes a request or field name by hand. `docs/rpc.md` in the repository
//! describes the protocol; a test parses its every example with these types.

mod data;
mod id;
mod message;
mod request;

pub use data::{
    ArtifactData, ArtifactList, BashData, COMPLETIONS_MAX, Completions, HelloData, ListedArtifact,
};
pub use id::RequestId;
pub use message::{LineType, Message, MissingField, PartialResult, ServerLine, TextBlock};
pub use request::{
    Capabilities, Command, CompletionKind, FieldError, Query, Request, RequestType, SecretText,
};

/// The bytes of a job's output a `job_view` returns without `bytes`.
pub const JOB_VIEW_BYTES: u64 = 16 * 1024;

/// The most bytes of a job's output a `job_view` returns, whatever `bytes` asks for.
pub const JOB_VIEW_MAX_BYTES: u64 = 1024 * 1024;

/// The `command` of a response to a line whose type could not be read.
pub const PARSE_COMMAND: &str = "parse";
