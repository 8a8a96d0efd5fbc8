//! `--listen PATH`: the RPC protocol on a Unix socket (agentsh-rpc); each connection is a
//! session of its own, and its calls appear live in the transcript.

use agentsh_agent_session::{AgentSession, CancellationToken, Value};

use crate::host::CallKey;

/// A client's call, as it reaches the loop.
pub(crate) struct HostedStart {
    /// Its transcript key.
    pub key: CallKey,
    /// Its connection's number (1-based).
    pub connection: u64,
    /// Its connection's session.
    pub session: AgentSession,
    /// What it runs.
    pub kind: HostedKind,
    /// Aborts it (the client then gets the abort result).
    pub cancel: CancellationToken,
}

/// A tool call or a `bash` request.
pub(crate) enum HostedKind {
    /// A `tool_call`.
    Tool {
        /// The tool.
        name: String,
        /// Its arguments.
        arguments: Value,
    },
    /// A `bash` request.
    Bash {
        /// The command.
        command: String,
    },
}
