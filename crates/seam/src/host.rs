//! Hooks for a host that shows the calls a server runs, live (the interactive mode with
//! `--listen` shows each socket connection's calls in its transcript).

use std::sync::Arc;

use agentsh_protocol::ToolOutcome;
use agentsh_protocol::wire::BashData;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::{Approver, Handle, HandleError, PtyHost};

/// What shows a connection's calls live (the interactive mode). An RPC server given one tells
/// it of every call; the stdio server has none.
pub trait CallHost: Send + Sync + 'static {
    /// A `tool_call` (any of the tools) or a `bash` request is about to run on `call.session`.
    ///
    /// Called on the connection's dispatcher, before the call's `tool_execution_start` event is
    /// sent, so it should return at once. Not called for a request refused before it runs (an
    /// unknown tool, a `toolCallId` in use, a second `bash`).
    fn call_started(&self, call: HostedCall) -> CallHooks;
}

/// A call about to run, as a [`CallHost`] sees it.
#[derive(Clone)]
pub struct HostedCall {
    /// The connection's session.
    pub session: Handle,
    /// The `toolCallId`; for a `bash` request a fresh id, unique among the process's `bash`
    /// requests (`bash-1`, `bash-2`, …; a client's `toolCallId` may look the same).
    pub id: String,
    /// What runs.
    pub kind: HostedCallKind,
    /// Cancelling it aborts the call exactly as the client's `abort` (for `bash`:
    /// `abort_bash`) would: the client gets the abort result (`tool_execution_end` with it,
    /// then `success: true` with it as `data`).
    pub cancel: CancellationToken,
}

impl std::fmt::Debug for HostedCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostedCall")
            .field("session", &self.session.id())
            .field("id", &self.id)
            .field("kind", &self.kind)
            .field("cancelled", &self.cancel.is_cancelled())
            .finish()
    }
}

/// What a [`HostedCall`] runs.
#[derive(Debug, Clone, PartialEq)]
pub enum HostedCallKind {
    /// A `tool_call`.
    Tool {
        /// The tool (`bash`, `job_output`, …).
        name: String,
        /// Its arguments, as the client sent them.
        arguments: Value,
    },
    /// A `bash` request (a user's command, never on a PTY).
    Bash {
        /// The command line.
        command: String,
    },
}

/// What a [`CallHost`] gives back for a call.
#[derive(Default)]
pub struct CallHooks {
    /// Given to the call's `ToolContext::pty_host` (for `bash` tool calls; with
    /// `bash.virtual_terminal = "on"` the call then runs on a PTY the host shows). Ignored for
    /// the job tools and for `bash` requests, which never use a PTY.
    pub pty_host: Option<Arc<dyn PtyHost>>,
    /// Told the call's live updates and how it ended.
    pub observer: Option<Box<dyn CallObserver>>,
    /// Also asked the call's approval requests (the interactive mode's person), besides the
    /// connection's client when it answers them: the first answer wins.
    pub approver: Option<Arc<dyn Approver>>,
}

impl std::fmt::Debug for CallHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallHooks")
            .field("pty_host", &self.pty_host.is_some())
            .field("observer", &self.observer.is_some())
            .field("approver", &self.approver.is_some())
            .finish()
    }
}

/// Follows one call. Its methods run on the call's task: they should return at once.
pub trait CallObserver: Send {
    /// What the call printed since: for a tool call, its live tail (the text of each
    /// `tool_execution_update`, before it is sent: each replaces the one before); for a
    /// `bash` request, each new piece of its output as the sink commits it (to append).
    fn update(&mut self, text: &str) {
        let _ = text;
    }

    /// How the call ended, also when it was aborted; called once, before the client is
    /// answered.
    ///
    /// Not called when the call's task panicked (the client gets an `internal error`
    /// response) or was dropped (the server ending while the call ignored its cancellation
    /// for 10 s): the observer is dropped then, so a host that must know implements `Drop`.
    fn finished(self: Box<Self>, end: CallEnd<'_>);
}

/// How a call ended.
#[derive(Debug, Clone, Copy)]
pub enum CallEnd<'a> {
    /// A `tool_call`'s outcome.
    Tool(&'a ToolOutcome),
    /// A `bash` request's result.
    Bash(&'a Result<BashData, HandleError>),
}
