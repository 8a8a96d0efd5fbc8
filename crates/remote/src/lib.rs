#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod connection;
mod session;
mod transport;

// The types these signatures use, so a caller needs no other crate for them.
pub use serde_json::value::RawValue;
pub use serde_json::{Map, Value, json};
pub use tokio_util::sync::CancellationToken;

pub use session::{
    DEFAULT_LEASE, FarVersion, RawResponse, RemoteCall, RemoteConfig, RemoteError, RemoteSession,
    update_text,
};
pub use transport::{
    BoxFuture, Channel, CommandTransport, FarSide, Output, SSH_OPTIONS, SshTarget, SshTransport,
    Transport, shell_word,
};
