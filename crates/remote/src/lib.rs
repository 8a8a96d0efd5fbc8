#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod connection;
mod handle;
mod session;
mod transport;

// The types these signatures use, so a caller needs no other crate for them.
pub use agentsh_protocol::wire::Command;
pub use serde_json::{Map, Value, json};
pub use tokio_util::sync::CancellationToken;

pub use agentsh_seam::{BoxFuture, HandleError, Reach, SessionHandle, ToolCall};
pub use session::{DEFAULT_LEASE, FarVersion, RemoteConfig, RemoteError, RemoteHandle};
pub use transport::{
    Channel, CommandTransport, FarSide, SSH_OPTIONS, SshRun, SshTarget, SshTransport, Transport,
    shell_word,
};
