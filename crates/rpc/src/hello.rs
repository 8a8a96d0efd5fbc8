//! What the far side of remote execution answers (SPEC §17): the `hello` (this agentsh's
//! version and protocol, the check of the other side's) and the artifacts of a
//! `list_artifacts`. The `hello` that brings settings, which replaces the session, is the
//! server's (`Server::hello`).

use agentsh_agent_session::ArtifactInfo;
use serde::Serialize;
use serde_json::Value;

use crate::PROTOCOL;
use crate::error::RpcError;
use crate::output::Message;
use crate::server::data_response;

/// `data` of a `list_artifacts` response.
#[derive(Serialize)]
pub(crate) struct ArtifactList {
    pub(crate) artifacts: Vec<ListedArtifact>,
}

/// One artifact of a `list_artifacts` response: `{"id": "42", "size", "modifiedMs"}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ListedArtifact {
    id: String,
    size: u64,
    /// Milliseconds since the Unix epoch (0 for a time before it).
    modified_ms: u64,
}

impl From<&ArtifactInfo> for ListedArtifact {
    fn from(info: &ArtifactInfo) -> Self {
        let since_epoch = info
            .modified
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Self {
            id: info.id.to_string(),
            size: info.size,
            modified_ms: u64::try_from(since_epoch.as_millis()).unwrap_or(u64::MAX),
        }
    }
}

/// `data` of a `hello` response.
#[derive(Serialize)]
struct HelloData {
    agentsh: &'static str,
    protocol: u32,
}

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
pub(crate) fn hello_response(id: Option<Value>, protocol: Option<u64>) -> Message {
    const NAME: &str = "hello";
    match check_protocol(protocol) {
        Ok(()) => data_response(
            id,
            NAME,
            &HelloData {
                agentsh: VERSION,
                protocol: PROTOCOL,
            },
        ),
        Err(error) => Message::failure(id, NAME, &error),
    }
}
