//! One connection's answers to approval requests: a client that said
//! `{"type":"hello","capabilities":{"approvals":true}}` gets `approval_request` events and
//! answers them with `approval` requests; every request it was asked ends with an
//! `approval_resolved` event, whoever answered.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use agentsh_protocol::{
    Answerer, ApprovalAnswer, ApprovalDecision, ApprovalRequest, ApprovalResolution,
};
use agentsh_seam::{Approver, BoxFuture, lock};
use tokio::sync::oneshot;

use crate::output::{Message, Output};

/// The approvals of one connection.
pub(crate) struct ClientApprovals {
    output: Output,
    /// Whether the client said it answers approval requests.
    enabled: AtomicBool,
    /// The requests it was asked and has not answered, by id.
    pending: Mutex<HashMap<String, oneshot::Sender<ApprovalDecision>>>,
    /// The call of each request it was asked, until the request is resolved.
    calls: Mutex<HashMap<String, String>>,
}

impl ClientApprovals {
    pub(crate) fn new(output: Output) -> Arc<Self> {
        Arc::new(Self {
            output,
            enabled: AtomicBool::new(false),
            pending: Mutex::new(HashMap::new()),
            calls: Mutex::new(HashMap::new()),
        })
    }

    /// The client's hello said whether it answers approval requests.
    pub(crate) fn set_enabled(&self, enabled: bool) {
        self.enabled.store(enabled, Ordering::Relaxed);
    }

    /// This connection's approver for a call: `None` when the client did not say it answers,
    /// or said this call's own client cannot (`approvals: false` on the request).
    pub(crate) fn for_call(self: &Arc<Self>, approvals: Option<bool>) -> Option<Arc<dyn Approver>> {
        let enabled = self.enabled.load(Ordering::Relaxed) && approvals != Some(false);
        enabled.then(|| Arc::clone(self) as Arc<dyn Approver>)
    }

    /// An `approval` request: `false` when no request of that id waits for this client.
    pub(crate) fn answer(&self, request_id: &str, decision: ApprovalDecision) -> bool {
        let waiting = lock(&self.pending).remove(request_id);
        waiting.is_some_and(|sender| sender.send(decision).is_ok())
    }

    /// The connection is ending: nothing it was asked will be answered.
    pub(crate) fn close(&self) {
        lock(&self.pending).clear();
    }
}

impl Approver for ClientApprovals {
    fn ask(&self, request: &ApprovalRequest) -> BoxFuture<'static, Option<ApprovalAnswer>> {
        let (sender, receiver) = oneshot::channel();
        lock(&self.pending).insert(request.request_id.clone(), sender);
        lock(&self.calls).insert(request.request_id.clone(), request.tool_call_id.clone());
        self.output.send(&Message::ApprovalRequest {
            request_id: request.request_id.clone(),
            tool_call_id: request.tool_call_id.clone(),
            command: request.command.clone(),
            segments: request.segments.clone(),
        });
        Box::pin(async move {
            receiver.await.ok().map(|decision| ApprovalAnswer {
                decision,
                answered_by: Answerer::Rpc,
            })
        })
    }

    fn resolved(&self, request_id: &str, resolution: ApprovalResolution) {
        lock(&self.pending).remove(request_id);
        let tool_call_id = lock(&self.calls).remove(request_id).unwrap_or_default();
        self.output.send(&Message::ApprovalResolved {
            request_id: request_id.to_owned(),
            tool_call_id,
            decision: resolution.decision_str().to_owned(),
            answered_by: resolution
                .answered_by()
                .map(|answerer| answerer.as_str().to_owned()),
        });
    }
}
