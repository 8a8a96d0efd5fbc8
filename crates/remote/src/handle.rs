//! [`RemoteHandle`] behind the surfaces' seam: every call, command, artifact read and look
//! goes to the far side as a request of the typed wire.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agentsh_protocol::wire::{BashData, Command, Message, Query};
use agentsh_protocol::{
    ApprovalAnswer, ApprovalRequest, ApprovalResolution, ToolOutcome, ToolResult,
};
use agentsh_seam::{
    Approver, BangCall, BangPolicy, BoxFuture, CancellationToken, HandleError, Reach,
    SessionHandle, ToolCall, lock,
};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::connection::{Answer, Connection};
use crate::session::{RemoteError, RemoteHandle};

impl SessionHandle for RemoteHandle {
    fn id(&self) -> String {
        self.target()
    }

    fn location(&self) -> Option<String> {
        Some(self.target())
    }

    fn sessions_opened(&self) -> u64 {
        RemoteHandle::sessions_opened(self)
    }

    fn tool_call<'a>(
        &'a self,
        call: ToolCall<'a>,
    ) -> BoxFuture<'a, Result<ToolOutcome, HandleError>> {
        Box::pin(async move {
            let cancel = call.cancel.clone();
            let result = match self.run_tool(call).await {
                Ok(result) => result,
                Err(RemoteError::Failed(reason)) => return Err(HandleError::Failed(reason)),
                // The call never got a result: a tool error says why.
                Err(err) => HandleError::from(err).tool_result(),
            };
            Ok(if cancel.is_cancelled() {
                ToolOutcome::Aborted(result)
            } else {
                ToolOutcome::Finished(result)
            })
        })
    }

    fn bang<'a>(&'a self, bang: BangCall<'a>) -> BoxFuture<'a, Result<BashData, HandleError>> {
        Box::pin(async move {
            let exclude = bang.options.exclude_from_context;
            let data = self.run_bang(bang).await?;
            if !exclude {
                lock(self.context()).push(data.text.clone());
            }
            Ok(data)
        })
    }

    fn query(
        &self,
        query: Query,
        reach: Reach,
    ) -> BoxFuture<'_, Result<Option<Box<RawValue>>, HandleError>> {
        // The far side's jobs live on its connection: a lost one is not reopened for a secret.
        let reach = match query {
            Query::SecretInput { .. } => Reach::IfConnected,
            _ => reach,
        };
        Box::pin(async move { Ok(self.request_raw(query.into(), reach).await?) })
    }

    fn apply_settings(&self, settings: Value) -> BoxFuture<'_, Result<(), HandleError>> {
        Box::pin(async move {
            // The far side makes its session anew with them, or refuses them. Once applied
            // they are kept: a reconnect's hello carries them too.
            let command = Command::Hello {
                protocol: Some(u64::from(agentsh_protocol::RPC_PROTOCOL)),
                settings: Some(settings.clone()),
                capabilities: Some(self.capabilities()),
            };
            let _: Value = self.request(command, Reach::Reconnect).await?;
            self.keep_settings(&settings);
            Ok(())
        })
    }

    fn subscribe(&self, answers_secrets: bool) -> agentsh_seam::Subscription {
        self.events().subscribe(answers_secrets)
    }

    fn context_messages(&self) -> Vec<String> {
        lock(self.context()).clone()
    }

    fn take_warnings(&self) -> Vec<String> {
        RemoteHandle::take_warnings(self)
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(RemoteHandle::shutdown(self))
    }
}

impl RemoteHandle {
    /// Runs a tool call on the far side under an id of this side's: each live update's text
    /// goes to the call's `on_update`, `cancel` sends an `abort`. The result says
    /// `sessionRestarted` when the call is the first after a reconnect.
    async fn run_tool(&self, call: ToolCall<'_>) -> Result<ToolResult, RemoteError> {
        let connection = self.connection().await?;
        let restarted = self.take_restarted();
        let call_id = self.next_call_id("remote");
        let request = Command::ToolCall {
            tool_call_id: call_id.clone(),
            name: call.name.to_owned(),
            arguments: call.arguments.clone(),
            tool_names: call.tool_names.to_vec(),
            // The far side asks this side, which asks the call's own approver; a call that
            // has none is denied there at once.
            approvals: call.approver.is_none().then_some(false),
        };
        let abort = Command::Abort {
            tool_call_id: call_id.clone(),
        };
        let mut on_update = call.on_update;
        let mut approvals = ForwardedApprovals::new(&connection, call.id, call.approver);
        let answer = run_streamed(
            &connection,
            &call_id,
            request,
            abort,
            &call.cancel,
            |event| match event {
                Message::ToolExecutionUpdate { partial_result, .. } => {
                    if let Some(on_update) = on_update.as_mut() {
                        on_update(partial_result.as_text());
                    }
                }
                event => approvals.event(event),
            },
        )
        .await;
        approvals.finish();
        let mut result: ToolResult = answer
            .map_err(RemoteError::Lost)?
            .into_data()
            .map_err(RemoteError::Failed)?;
        if restarted {
            result.details.session_restarted = true;
            // The far side made its text without knowing: the model must read it there too.
            if let Some(text) = result.text_mut() {
                *text =
                    agentsh_protocol::insert_session_line(text, agentsh_protocol::RECONNECTED_LINE);
            }
        }
        Ok(result)
    }

    /// Runs a user's command on the far side: a `bash` request, whose output comes as
    /// `bash_output` events when the caller wants it (pieces at most every 50 ms, each the
    /// newest 64 KiB at most; without, nothing is streamed over the link). `cancel` sends
    /// `abort_bash`; the command's own response (`cancelled: true`) still ends the call.
    async fn run_bang(&self, bang: BangCall<'_>) -> Result<BashData, HandleError> {
        let connection = self.connection().await?;
        let restarted = self.take_restarted();
        let stream_id = self.next_call_id("bash");
        let mut on_output = bang.on_output;
        let (judged, local_id, approver) = match bang.policy {
            BangPolicy::Audited => (false, String::new(), None),
            BangPolicy::Judged { call_id, approver } => (true, call_id, approver),
        };
        let request = Command::Bash {
            command: bang.command.to_owned(),
            timeout: bang.options.timeout,
            // A judged command's approval requests come back under its stream.
            stream_id: (on_output.is_some() || judged).then(|| stream_id.clone()),
            judged,
            approvals: (judged && approver.is_none()).then_some(false),
        };
        let mut approvals = ForwardedApprovals::new(&connection, &local_id, approver);
        let answer = run_streamed(
            &connection,
            &stream_id,
            request,
            Command::AbortBash,
            &bang.cancel,
            |event| match event {
                Message::BashOutput { text, .. } => {
                    if let Some(on_output) = on_output.as_mut() {
                        on_output(&text);
                    }
                }
                event => approvals.event(event),
            },
        )
        .await;
        approvals.finish();
        let mut data: BashData = answer
            .map_err(RemoteError::Lost)?
            .into_data()
            .map_err(HandleError::Failed)?;
        if restarted {
            data.result.session_restarted = true;
        }
        Ok(data)
    }
}

/// Sends `request` and hands its events (those routed to `stream`: its `toolCallId` or
/// `streamId`) to `on_event` until its response comes, which it returns; `cancel` resolving
/// sends `abort` (once). Events sent before the response are delivered before it returns.
async fn run_streamed(
    connection: &Connection,
    stream: &str,
    request: Command,
    abort: Command,
    cancel: &CancellationToken,
    mut on_event: impl FnMut(Message),
) -> Result<Answer, String> {
    let mut events = connection.events(stream);
    let response = connection.request(request);
    tokio::pin!(response);
    let cancelled = cancel.cancelled();
    tokio::pin!(cancelled);
    let (mut abort, mut events_open) = (Some(abort), true);
    let answer = loop {
        tokio::select! {
            answer = &mut response => break answer,
            event = events.recv(), if events_open => match event {
                Some(event) => on_event(event),
                None => events_open = false,
            },
            () = &mut cancelled, if abort.is_some() => {
                if let Some(abort) = abort.take() {
                    // An id of no request of ours: its answer is routed to no one.
                    let _ = connection.send(Some(connection.unanswered_id()), abort);
                }
            }
        }
    };
    while let Ok(event) = events.try_recv() {
        on_event(event);
    }
    connection.forget(stream);
    answer
}

/// An approval request asked here: the task that waits for the answer, and the answer once
/// given.
type Asked = (
    tokio::task::JoinHandle<()>,
    Arc<Mutex<Option<ApprovalAnswer>>>,
);

/// The far side's approval requests of one call, asked of the call's own approver here: each
/// answer goes back as an `approval` request, each resolution the far side reports reaches the
/// approver.
struct ForwardedApprovals<'a> {
    connection: &'a Arc<Connection>,
    /// The call's id here (the far side knows it by an id of this side's own).
    call_id: &'a str,
    approver: Option<Arc<dyn Approver>>,
    /// The requests asked and not resolved yet: the task that waits for the answer here, and
    /// the answer once given (whose `answeredBy` the resolution keeps: the far side only knows
    /// that its client answered).
    asked: HashMap<String, Asked>,
}

impl<'a> ForwardedApprovals<'a> {
    fn new(
        connection: &'a Arc<Connection>,
        call_id: &'a str,
        approver: Option<Arc<dyn Approver>>,
    ) -> Self {
        Self {
            connection,
            call_id,
            approver,
            asked: HashMap::new(),
        }
    }

    fn event(&mut self, event: Message) {
        let Some(approver) = self.approver.clone() else {
            return;
        };
        match event {
            Message::ApprovalRequest {
                request_id,
                command,
                segments,
                ..
            } => {
                let request = ApprovalRequest {
                    request_id: request_id.clone(),
                    tool_call_id: self.call_id.to_owned(),
                    command,
                    segments,
                };
                let given = Arc::new(Mutex::new(None));
                let answer = Arc::clone(&given);
                let asked = approver.ask(&request);
                let connection = Arc::clone(self.connection);
                let task = tokio::spawn(async move {
                    if let Some(answered) = asked.await {
                        *lock(&answer) = Some(answered);
                        let reply = Command::Approval {
                            request_id: request.request_id,
                            decision: answered.decision,
                        };
                        let _ = connection.send(Some(connection.unanswered_id()), reply);
                    }
                });
                self.asked.insert(request_id, (task, given));
            }
            Message::ApprovalResolved {
                request_id,
                decision,
                answered_by,
                ..
            } => {
                let Some((task, given)) = self.asked.remove(&request_id) else {
                    return;
                };
                task.abort();
                let resolution = ApprovalResolution::from_names(&decision, answered_by.as_deref());
                let resolution = match (resolution, *lock(&given)) {
                    (Some(ApprovalResolution::Answered(far)), Some(here))
                        if far.decision == here.decision =>
                    {
                        ApprovalResolution::Answered(here)
                    }
                    (Some(resolution), _) => resolution,
                    (None, _) => ApprovalResolution::Unanswered,
                };
                approver.resolved(&request_id, resolution);
            }
            _ => {}
        }
    }

    /// The call ended: requests still open end with it.
    fn finish(self) {
        for (request_id, (task, _)) in self.asked {
            task.abort();
            if let Some(approver) = &self.approver {
                approver.resolved(&request_id, ApprovalResolution::Aborted);
            }
        }
    }
}
