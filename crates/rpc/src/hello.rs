//! The `hello` of remote execution: this agentsh's version and protocol, and the check of the
//! other side's. The `hello` that brings settings, which makes the session anew, is the
//! server's (`Server::hello`).

use agentsh_protocol::wire::{HelloData, Message, RequestId, RequestType};

use crate::PROTOCOL;
use crate::error::RpcError;

/// This agentsh's version (every crate of the workspace shares it).
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A hello naming `protocol` (none: not checked) is answered with this.
pub(crate) fn check_protocol(protocol: Option<u64>) -> Result<(), RpcError> {
    match protocol {
        Some(theirs) if theirs != u64::from(PROTOCOL) => Err(RpcError::ProtocolMismatch {
            version: VERSION,
            ours: PROTOCOL,
            theirs,
        }),
        _ => Ok(()),
    }
}

/// The answer to a `hello` whose settings (if any) were applied: the version and protocol, or
/// the protocol mismatch.
pub(crate) fn hello_response(id: Option<RequestId>, protocol: Option<u64>) -> Message {
    const NAME: &str = RequestType::Hello.name();
    match check_protocol(protocol) {
        Ok(()) => Message::with_data(
            id,
            NAME,
            &HelloData {
                agentsh: VERSION.to_owned(),
                protocol: u64::from(PROTOCOL),
            },
        ),
        Err(error) => Message::failure(id, NAME, &error),
    }
}
