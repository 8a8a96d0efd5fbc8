//! The dispatcher: answers each request, running the long ones as tasks of their own.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentsh_protocol::wire::{Command, Request, RequestId, RequestType};
use agentsh_protocol::{BangOptions, ToolOutcome, unknown_tool};
use agentsh_seam::{
    Approver, BangCall, BangPolicy, BoxFuture, CallEnd, CallHooks, CallHost, FirstAnswer, Handle,
    HandleError, HostedCall, HostedCallKind, Reach, ToolCall, lock, ready_now,
};
use agentsh_signals::Stop;
use serde_json::Value;
use serde_json::value::{RawValue, to_raw_value};
use tokio::sync::mpsc;
use tokio::task::{self, JoinError, JoinSet};
use tokio_util::sync::CancellationToken;

use crate::approvals::ClientApprovals;
use crate::error::RpcError;
use crate::hello::{check_protocol, hello_response};
use crate::input::Incoming;
use crate::output::{Message, Output, PartialResult};
use crate::stream::OutputStream;

/// How long, at end of input, running commands get to end after being cancelled before the
/// session is shut down regardless.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// The abort token of the running `bash` request, if any.
pub(crate) type RunningBash = Arc<Mutex<Option<CancellationToken>>>;

/// Tool calls running or queued, by `toolCallId`.
pub(crate) type ToolCalls = Arc<Mutex<HashMap<String, CancellationToken>>>;

/// A [`Stop`] that is requested once, when `token` is cancelled.
pub(crate) struct TokenStop {
    token: CancellationToken,
    fired: bool,
}

impl TokenStop {
    pub(crate) fn new(token: CancellationToken) -> Self {
        Self {
            token,
            fired: false,
        }
    }
}

impl Stop for TokenStop {
    type Reason = ();

    async fn requested(&mut self) {
        if self.fired {
            std::future::pending::<()>().await;
        }
        self.token.cancelled().await;
        self.fired = true;
    }
}

/// The RPC server of one session.
pub struct Server {
    session: Handle,
    output: Output,
    /// What shows the calls live, if anything (never on stdio).
    host: Option<Arc<dyn CallHost>>,
    /// The running `bash` request's own abort token; set by the dispatcher, so two `bash`
    /// lines in a row can never both start, and an `abort_bash` right after a `bash` is never
    /// lost (even before the task has started the command).
    bash: RunningBash,
    tool_calls: ToolCalls,
    tasks: JoinSet<()>,
    /// The request each task answers, to answer it if the task panics.
    task_requests: HashMap<task::Id, (Option<RequestId>, &'static str)>,
    /// With no input line for this long, serving ends as at end of input.
    lease: Option<Duration>,
    /// The client's answers to approval requests.
    approvals: Arc<ClientApprovals>,
    /// `bash` requests are judged by the approval policy (a socket, which any process of the
    /// user can reach); on stdio they are the host's own user's and are not.
    judge_bash: bool,
    /// Sends the session's events (`job_end`, and `input_request` while the client said
    /// `capabilities.secretInput`: its subscription counts the client as one who answers).
    events: Option<task::JoinHandle<()>>,
    answers_secrets: bool,
}

impl Server {
    /// A server for `session`, writing to `output`, telling `host` about its calls.
    pub fn new(session: Handle, output: Output, host: Option<Arc<dyn CallHost>>) -> Self {
        let approvals = ClientApprovals::new(output.clone());
        Self {
            session,
            output,
            host,
            bash: RunningBash::default(),
            tool_calls: ToolCalls::default(),
            tasks: JoinSet::new(),
            task_requests: HashMap::new(),
            lease: None,
            approvals,
            judge_bash: false,
            events: None,
            answers_secrets: false,
        }
    }

    /// Judges `bash` requests by the approval policy, as a model's commands: for a socket,
    /// which any process of the user can reach.
    pub fn judging_bash(mut self) -> Self {
        self.judge_bash = true;
        self
    }

    /// Ends serving, as at end of input, once no input line (a request, a bad line, a blank
    /// line) has come for `lease`. Running calls do not renew it; only input does.
    pub fn with_lease(mut self, lease: Option<Duration>) -> Self {
        self.lease = lease;
        self
    }

    /// Serves requests until `requests` ends (input closed), the lease runs out or a stop is
    /// requested, then ends every running command and shuts the session down. Returns the
    /// reason of the first stop request, if one came (also while shutting down).
    ///
    /// A `hello` with `settings` is served in line: no other request is read until the
    /// session has applied them (a new session, the old one shut down) or refused them.
    pub async fn serve<S: Stop>(
        mut self,
        mut requests: mpsc::Receiver<Incoming>,
        mut stop: S,
    ) -> Option<S::Reason> {
        send_warnings(&self.session, &self.output);
        self.subscribe_events(false);
        // Without a lease the deadline is never armed.
        let expiry = tokio::time::sleep(self.lease.unwrap_or(Duration::MAX));
        tokio::pin!(expiry);
        let renew = |expiry: std::pin::Pin<&mut tokio::time::Sleep>, lease: Option<Duration>| {
            if let Some(lease) = lease {
                expiry.reset(tokio::time::Instant::now() + lease);
            }
        };
        let signalled = loop {
            tokio::select! {
                request = requests.recv() => {
                    renew(expiry.as_mut(), self.lease);
                    match request {
                        Some(Ok(Some(Request {
                            id,
                            command: Command::Hello { protocol, settings, capabilities },
                        }))) => {
                            if let Some(capabilities) = capabilities {
                                self.approvals.set_enabled(capabilities.approvals);
                                self.subscribe_events(capabilities.secret_input);
                            }
                            self.hello(id, protocol, settings).await;
                            // The hello's own work does not count against the lease.
                            renew(expiry.as_mut(), self.lease);
                        }
                        Some(Ok(Some(request))) => self.dispatch(request),
                        Some(Ok(None)) => {}
                        Some(Err(err)) => {
                            self.output.send(&Message::failure(err.id, &err.command, &err.error));
                        }
                        None => break None,
                    }
                }
                Some(joined) = self.tasks.join_next_with_id(), if !self.tasks.is_empty() => {
                    self.reaped(joined);
                }
                reason = stop.requested() => break Some(reason),
                () = &mut expiry, if self.lease.is_some() => {
                    // A line that is already queued came in time.
                    if requests.is_empty() {
                        tracing::debug!("no input for the lease ({:?}): shutting down", self.lease);
                        break None;
                    }
                    renew(expiry.as_mut(), self.lease);
                }
            }
        };
        if signalled.is_some() {
            tracing::debug!("stop requested: shutting down");
        }
        let during = self.shutdown(&mut stop).await;
        signalled.or(during)
    }

    fn dispatch(&mut self, request: Request) {
        let Request { id, command } = request;
        let name = command.name();
        match command {
            Command::Bash {
                command,
                timeout,
                stream_id,
                judged,
                approvals,
            } => {
                let judged = judged || self.judge_bash;
                self.bash(id, command, timeout, stream_id, judged, approvals);
            }
            Command::AbortBash => {
                // Answered first: the response precedes the aborted command's own.
                self.output.send(&Message::success(id, name, None));
                if let Some(token) = lock(&self.bash).as_ref() {
                    token.cancel();
                }
            }
            Command::ToolCall {
                tool_call_id,
                name: tool_name,
                arguments,
                tool_names,
                approvals,
            } => {
                let approver = self.approvals.for_call(approvals);
                self.tool_call(id, tool_call_id, tool_name, arguments, tool_names, approver);
            }
            Command::Approval {
                request_id,
                decision,
            } => {
                if self.approvals.answer(&request_id, decision) {
                    self.output.send(&Message::success(id, name, None));
                } else {
                    self.output.send(&Message::failure(
                        id,
                        name,
                        RpcError::NoSuchApproval(request_id),
                    ));
                }
            }
            Command::Abort { tool_call_id } => {
                let token = lock(&self.tool_calls).get(&tool_call_id).cloned();
                if let Some(token) = token {
                    // Answered first: the response precedes the aborted call's end event.
                    self.output.send(&Message::success(id, name, None));
                    token.cancel();
                } else {
                    self.output.send(&Message::failure(
                        id,
                        name,
                        RpcError::NoSuchToolCall(tool_call_id),
                    ));
                }
            }
            Command::Ping => self.output.send(&Message::success(id, name, None)),
            Command::Query(query) => {
                let session = Arc::clone(&self.session);
                self.answer(
                    id,
                    name,
                    Box::pin(async move { session.query(query, Reach::Reconnect).await }),
                );
            }
            // A hello with settings is served by `serve` itself; this one only checks.
            Command::Hello { protocol, .. } => self.output.send(&hello_response(id, protocol)),
        }
    }

    /// Sends the session's events to the client: every `job_end`, and `input_request` only
    /// while `answers` (the client said `capabilities.secretInput`, so it counts as one who
    /// answers hidden input). Subscribes anew only when `answers` changed.
    fn subscribe_events(&mut self, answers: bool) {
        if self.events.is_some() && self.answers_secrets == answers {
            return;
        }
        if let Some(task) = self.events.take() {
            task.abort();
        }
        self.answers_secrets = answers;
        let mut subscription = self.session.subscribe(answers);
        let output = self.output.clone();
        self.events = Some(tokio::spawn(async move {
            while let Some(event) = subscription.recv().await {
                if !event.for_answerers_only() || subscription.answers_secrets() {
                    output.send(&Message::event(&event));
                }
            }
        }));
    }

    /// Answers a query with the session's answer: at once when the session gives it now (a
    /// session here), else in a task of its own (a far side's round trip, a read of a file), so
    /// that a quick answer keeps its place among the responses.
    fn answer(
        &mut self,
        id: Option<RequestId>,
        name: &'static str,
        answer: BoxFuture<'static, Result<Option<Box<RawValue>>, HandleError>>,
    ) {
        let respond = move |id, answered: Result<Option<Box<RawValue>>, HandleError>| match answered
        {
            Ok(data) => Message::success(id, name, data),
            Err(error) => Message::failure(id, name, RpcError::Session(error)),
        };
        match ready_now(answer) {
            Ok(answered) => self.output.send(&respond(id, answered)),
            Err(pending) => {
                let output = self.output.clone();
                let request_id = id.clone();
                self.spawn(id, name, async move {
                    output.send(&respond(request_id, pending.await));
                });
            }
        }
    }

    /// `hello`: the version and protocol; with `settings`, the session made anew with them
    /// first.
    async fn hello(
        &mut self,
        id: Option<RequestId>,
        protocol: Option<u64>,
        settings: Option<Value>,
    ) {
        const NAME: &str = RequestType::Hello.name();
        let Some(settings) = settings else {
            self.output.send(&hello_response(id, protocol));
            return;
        };
        if let Err(error) = check_protocol(protocol) {
            self.output.send(&Message::failure(id, NAME, &error));
            return;
        }
        // Settings apply to a new session: calls running would lose theirs.
        if lock(&self.bash).is_some() || !lock(&self.tool_calls).is_empty() {
            self.output
                .send(&Message::failure(id, NAME, RpcError::HelloWhileRunning));
            return;
        }
        match self.session.apply_settings(settings).await {
            Ok(()) => {
                send_warnings(&self.session, &self.output);
                self.output.send(&hello_response(id, protocol));
            }
            Err(error) => {
                send_warnings(&self.session, &self.output);
                self.output
                    .send(&Message::failure(id, NAME, RpcError::Session(error)));
            }
        }
    }

    fn bash(
        &mut self,
        id: Option<RequestId>,
        command: String,
        timeout: Option<f64>,
        stream_id: Option<String>,
        judged: bool,
        approvals: Option<bool>,
    ) {
        const NAME: &str = RequestType::Bash.name();
        let (abort, busy) = match claim_bash(&self.bash) {
            Ok(claimed) => claimed,
            Err(error) => return self.output.send(&Message::failure(id, NAME, &error)),
        };
        let call_id = next_bash_id();
        let hooks = self.host.as_ref().map_or_else(CallHooks::default, |host| {
            host.call_started(HostedCall {
                session: Arc::clone(&self.session),
                id: call_id.clone(),
                kind: HostedCallKind::Bash {
                    command: command.clone(),
                },
                cancel: abort.clone(),
            })
        });
        let CallHooks {
            observer, approver, ..
        } = hooks;
        let policy = if judged {
            BangPolicy::Judged {
                // A far side's client routes the requests by the stream it asked for.
                call_id: stream_id.clone().unwrap_or(call_id),
                approver: FirstAnswer::of(
                    self.approvals
                        .for_call(approvals)
                        .into_iter()
                        .chain(approver)
                        .collect(),
                ),
            }
        } else {
            BangPolicy::Audited
        };
        let session = Arc::clone(&self.session);
        let output = self.output.clone();
        let request_id = id.clone();
        self.spawn(id, NAME, async move {
            let options = BangOptions {
                timeout,
                exclude_from_context: false,
            };
            // A host, or a client that asked for a stream, sees the output as it comes;
            // without either, the sink's plain path.
            let mut observer = observer;
            let stream = stream_id.map(|stream_id| OutputStream::start(stream_id, output.clone()));
            let live = observer.is_some() || stream.is_some();
            let mut on_output = |text: &str| {
                if let Some(observer) = observer.as_mut() {
                    observer.update(text);
                }
                if let Some(stream) = &stream {
                    stream.push(text);
                }
            };
            let bang = BangCall {
                command: &command,
                options,
                cancel: abort,
                on_output: live.then_some(&mut on_output as &mut (dyn FnMut(&str) + Send)),
                policy,
            };
            let result = session.bang(bang).await;
            if let Some(stream) = stream {
                stream.finish().await;
            }
            if let Some(observer) = observer {
                observer.finished(CallEnd::Bash(&result));
            }
            drop(busy);
            send_warnings(&session, &output);
            output.send(&match result {
                Ok(data) => Message::with_data(request_id, NAME, &data),
                Err(err) => Message::failure(request_id, NAME, RpcError::Session(err)),
            });
        });
    }

    fn tool_call(
        &mut self,
        id: Option<RequestId>,
        tool_call_id: String,
        tool_name: String,
        arguments: Value,
        tool_names: Vec<String>,
        approver: Option<Arc<dyn Approver>>,
    ) {
        const NAME: &str = RequestType::ToolCall.name();
        if let Some(unknown) = unknown_tool(&tool_name) {
            self.output
                .send(&Message::failure(id, NAME, RpcError::UnknownTool(unknown)));
            return;
        }
        let (cancel, registered) = match register_call(&self.tool_calls, &tool_call_id) {
            Ok(registered) => registered,
            Err(error) => return self.output.send(&Message::failure(id, NAME, &error)),
        };
        // No host (stdio): nothing cloned, nothing allocated.
        let hooks = self.host.as_ref().map_or_else(CallHooks::default, |host| {
            host.call_started(HostedCall {
                session: Arc::clone(&self.session),
                id: tool_call_id.clone(),
                kind: HostedCallKind::Tool {
                    name: tool_name.clone(),
                    arguments: arguments.clone(),
                },
                cancel: cancel.clone(),
            })
        });
        // Sent before the task starts, so it precedes every update.
        self.output.send(&Message::ToolExecutionStart {
            tool_call_id: tool_call_id.clone(),
            tool_name: tool_name.clone(),
            args: arguments.clone(),
        });
        let session = Arc::clone(&self.session);
        let output = self.output.clone();
        let request_id = id.clone();
        self.spawn(id, NAME, async move {
            let CallHooks {
                pty_host,
                mut observer,
                approver: host_approver,
            } = hooks;
            let approver = FirstAnswer::of(approver.into_iter().chain(host_approver).collect());
            let updates = output.clone();
            let (update_id, update_name) = (tool_call_id.clone(), tool_name.clone());
            let observing = &mut observer;
            let mut on_update = move |text: &str| {
                if let Some(observer) = observing {
                    observer.update(text);
                }
                updates.send(&Message::ToolExecutionUpdate {
                    tool_call_id: update_id.clone(),
                    tool_name: update_name.clone(),
                    partial_result: PartialResult::text(text.to_owned()),
                });
            };
            // Only a host shows a PTY: without one (stdio), never a PTY.
            let call = ToolCall {
                id: &tool_call_id,
                name: &tool_name,
                arguments: &arguments,
                tool_names: &tool_names,
                cancel,
                pty_host,
                on_update: Some(&mut on_update),
                no_jobs: false,
                approver,
            };
            let outcome = session.tool_call(call).await;
            drop(on_update);
            let outcome = match outcome {
                Ok(outcome) => outcome,
                Err(error) => {
                    drop(registered);
                    send_warnings(&session, &output);
                    output.send(&Message::failure(
                        request_id,
                        NAME,
                        RpcError::Session(error),
                    ));
                    return;
                }
            };
            if let Some(observer) = observer {
                observer.finished(CallEnd::Tool(&outcome));
            }
            // Unregistered before the end event: once a client has seen it, the id is free.
            drop(registered);
            // An aborted call is answered like any other result (`success: true`, the abort
            // result as data, `isError: true`): aborting is what the client asked for.
            let result = match &outcome {
                ToolOutcome::Finished(result) | ToolOutcome::Aborted(result) => result,
            };
            let is_error = result.is_error;
            let result = match to_raw_value(result) {
                Ok(result) => result,
                Err(err) => {
                    output.send(&Message::failure(
                        request_id,
                        NAME,
                        RpcError::internal(&err),
                    ));
                    return;
                }
            };
            output.send(&Message::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                result: result.clone(),
                is_error,
            });
            send_warnings(&session, &output);
            output.send(&Message::success(request_id, NAME, Some(result)));
        });
    }

    fn spawn(
        &mut self,
        id: Option<RequestId>,
        command: &'static str,
        work: impl Future<Output = ()> + Send + 'static,
    ) {
        let handle = self.tasks.spawn(work);
        self.task_requests.insert(handle.id(), (id, command));
    }

    /// A task ended; a task that panicked still gets its request answered.
    fn reaped(&mut self, joined: Result<(task::Id, ()), JoinError>) {
        let task_id = match &joined {
            Ok((task_id, ())) => *task_id,
            Err(err) => err.id(),
        };
        let request = self.task_requests.remove(&task_id);
        if let (Err(err), Some((id, command))) = (joined, request) {
            self.output
                .send(&Message::failure(id, command, RpcError::internal(&err)));
        }
    }

    /// End of input or a stop request: cancel everything, let the tasks answer, shut the
    /// session down (which ends every shell's tree). A stop request that comes while the tasks
    /// are answering cuts that wait short (not the session's shutdown); its reason is returned.
    async fn shutdown<S: Stop>(mut self, stop: &mut S) -> Option<S::Reason> {
        self.approvals.close();
        if let Some(task) = self.events.take() {
            task.abort();
        }
        for token in lock(&self.tool_calls).values() {
            token.cancel();
        }
        if let Some(token) = lock(&self.bash).as_ref() {
            token.cancel();
        }
        let drain = tokio::time::timeout(DRAIN_TIMEOUT, async {
            while let Some(joined) = self.tasks.join_next_with_id().await {
                self.reaped(joined);
            }
        });
        let signalled = tokio::select! {
            drained = drain => {
                if drained.is_err() {
                    tracing::warn!("commands still running {DRAIN_TIMEOUT:?} after they were cancelled");
                }
                None
            }
            reason = stop.requested() => {
                tracing::warn!("stop requested while commands were ending: not waiting for them");
                Some(reason)
            }
        };
        self.session.shutdown().await;
        self.tasks.shutdown().await;
        signalled
    }
}

/// Sends the session's new warnings, each as a `warning` event.
fn send_warnings(session: &Handle, output: &Output) {
    output.send_all(
        session
            .take_warnings()
            .into_iter()
            .map(|message| Message::Warning { message }),
    );
}

/// A fresh id for a `bash` request shown by a host: unique within the process.
fn next_bash_id() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("bash-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Claims the `bash` slot for a new request: its abort token, and the guard that frees the
/// slot when the request ends; the session's own error (and text) while one runs.
pub(crate) fn claim_bash(slot: &RunningBash) -> Result<(CancellationToken, BusyGuard), RpcError> {
    let mut running = lock(slot);
    if running.is_some() {
        return Err(RpcError::Session(HandleError::Failed(
            agentsh_protocol::BANG_ALREADY_RUNNING.to_owned(),
        )));
    }
    let abort = CancellationToken::new();
    *running = Some(abort.clone());
    Ok((abort, BusyGuard(Arc::clone(slot))))
}

/// Registers tool call `id`: its cancel token, and the guard that unregisters it when the
/// call ends; an error while a call with that id runs or is queued.
pub(crate) fn register_call(
    calls: &ToolCalls,
    id: &str,
) -> Result<(CancellationToken, ToolCallGuard), RpcError> {
    let mut registered = lock(calls);
    if registered.contains_key(id) {
        return Err(RpcError::ToolCallIdInUse(id.to_owned()));
    }
    let cancel = CancellationToken::new();
    registered.insert(id.to_owned(), cancel.clone());
    Ok((
        cancel,
        ToolCallGuard {
            calls: Arc::clone(calls),
            id: id.to_owned(),
        },
    ))
}

/// Clears the running `bash` when the request ends, even by a panic.
pub(crate) struct BusyGuard(RunningBash);

impl Drop for BusyGuard {
    fn drop(&mut self) {
        lock(&self.0).take();
    }
}

/// Unregisters a tool call when it ends, even by a panic.
pub(crate) struct ToolCallGuard {
    calls: ToolCalls,
    id: String,
}

impl Drop for ToolCallGuard {
    fn drop(&mut self) {
        lock(&self.calls).remove(&self.id);
    }
}
