//! The dispatcher: answers each request, running the long ones as tasks of their own.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agentsh_agent_session::{
    AgentSession, BASH_TOOL, BangOptions, BashResult, SessionError, SessionOptions, ToolContext,
    ToolDetails, ToolOutcome, ToolResult, ToolUpdate, unknown_tool,
};
use serde::Serialize;
use serde_json::Value;
use serde_json::value::to_raw_value;
use tokio::sync::mpsc;
use tokio::task::{self, JoinError, JoinSet};
use tokio_util::sync::CancellationToken;

use crate::error::RpcError;
use crate::hello::{ArtifactList, ListedArtifact, check_protocol, hello_response};
use crate::host::{CallEnd, CallHooks, CallHost, HostedCall, HostedCallKind};
use crate::input::Incoming;
use crate::output::{Message, Output, PartialResult};
use crate::request::{Command, Request};
use crate::stream::OutputStream;

/// How long, at end of input, running commands get to end after being cancelled before the
/// session is shut down regardless.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// The abort token of the running `bash` request, if any.
pub(crate) type RunningBash = Arc<Mutex<Option<CancellationToken>>>;

/// Tool calls running or queued, by `toolCallId`.
pub(crate) type ToolCalls = Arc<Mutex<HashMap<String, CancellationToken>>>;

/// What asks a server to stop before its input ends: for [`serve_stdio`](crate::serve_stdio),
/// the binary's SIGINT, SIGTERM and SIGHUP.
pub trait Stop: Send {
    /// What a stop request carries back to the caller (the binary: the exit status it calls
    /// for).
    type Reason: Send;

    /// Waits for the next stop request. The first ends serving: every running call is
    /// cancelled and answered, then the session is shut down. One that comes while the calls
    /// are still answering stops that wait (the session is still shut down, every tree ended).
    /// Dropping the future before it is ready must lose no request.
    fn requested(&mut self) -> impl Future<Output = Self::Reason> + Send;
}

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
    session: AgentSession,
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
    task_requests: HashMap<task::Id, (Option<Value>, &'static str)>,
    /// What a `hello` with `settings` makes its new session from; `None`: such a hello is
    /// refused.
    session_options: Option<SessionOptions>,
    /// With no input line for this long, serving ends as at end of input.
    lease: Option<Duration>,
}

impl Server {
    /// A server for `session`, writing to `output`, telling `host` about its calls.
    pub fn new(session: AgentSession, output: Output, host: Option<Arc<dyn CallHost>>) -> Self {
        Self {
            session,
            output,
            host,
            bash: RunningBash::default(),
            tool_calls: ToolCalls::default(),
            tasks: JoinSet::new(),
            task_requests: HashMap::new(),
            session_options: None,
            lease: None,
        }
    }

    /// Lets a `hello` with `settings` replace the session: a new one is made from `options`
    /// (the options the first session was made with) with the hello's settings applied and a
    /// fresh id.
    pub fn with_session_options(mut self, options: SessionOptions) -> Self {
        self.session_options = Some(options);
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
    /// A `hello` with `settings` is served in line: no other request is read until its new
    /// session is made (or refused) and the old one shut down.
    pub async fn serve<S: Stop>(
        mut self,
        mut requests: mpsc::Receiver<Incoming>,
        mut stop: S,
    ) -> Option<S::Reason> {
        send_warnings(&self.session, &self.output);
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
                            command: Command::Hello { protocol, settings },
                        }))) => {
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
            } => self.bash(id, command, timeout, stream_id),
            Command::AbortBash => {
                // Answered first: the response precedes the aborted command's own.
                self.output.send(&Message::success(id, name, None));
                if let Some(token) = lock(&self.bash).as_ref() {
                    token.cancel();
                }
                self.session.abort_bash();
            }
            Command::ToolCall {
                tool_call_id,
                name: tool_name,
                arguments,
                tool_names,
            } => self.tool_call(id, tool_call_id, tool_name, arguments, tool_names),
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
                        &RpcError::NoSuchToolCall(tool_call_id),
                    ));
                }
            }
            Command::ReadArtifact {
                artifact_id,
                offset,
                limit,
            } => self.read_artifact(id, artifact_id, offset, limit),
            Command::ListArtifacts => self.list_artifacts(id),
            Command::Ping => self.output.send(&Message::success(id, name, None)),
            Command::Status => self
                .output
                .send(&data_response(id, name, &self.session.status())),
            Command::JobView { job_id, bytes } => {
                let message = match job_look(&self.session, &job_id, bytes) {
                    Ok(look) => data_response(id, name, &look),
                    Err(error) => Message::failure(id, name, &error),
                };
                self.output.send(&message);
            }
            // A hello with settings is served by `serve` itself; this one only checks.
            Command::Hello { protocol, .. } => self.output.send(&hello_response(id, protocol)),
        }
    }

    /// `hello`: the version and protocol; with `settings`, a new session first (SPEC §17).
    async fn hello(&mut self, id: Option<Value>, protocol: Option<u64>, settings: Option<Value>) {
        const NAME: &str = "hello";
        let Some(settings) = settings else {
            self.output.send(&hello_response(id, protocol));
            return;
        };
        if let Err(error) = check_protocol(protocol) {
            self.output.send(&Message::failure(id, NAME, &error));
            return;
        }
        match self.new_session(&settings).await {
            Ok(session) => {
                let old = std::mem::replace(&mut self.session, session);
                // Its shells and jobs, with their trees, end before the hello is answered.
                old.shutdown().await;
                send_warnings(&self.session, &self.output);
                self.output.send(&hello_response(id, protocol));
            }
            Err(error) => self.output.send(&Message::failure(id, NAME, &error)),
        }
    }

    /// A session made as the first one was, with `settings` applied to its settings; refused
    /// while calls run, or when its sandbox cannot be enforced here.
    async fn new_session(&self, settings: &Value) -> Result<AgentSession, RpcError> {
        let Some(base) = &self.session_options else {
            return Err(RpcError::HelloSettingsUnsupported);
        };
        if lock(&self.bash).is_some() || !lock(&self.tool_calls).is_empty() {
            return Err(RpcError::HelloWhileRunning);
        }
        let options = SessionOptions {
            settings: base.settings.with_execution_settings(settings)?,
            session_id: None,
            ..base.clone()
        };
        // Making a session may take the rc snapshot: off the async threads.
        // A sandbox the kernel cannot enforce fails the new session (`Sandbox unavailable`).
        task::spawn_blocking(move || AgentSession::new(options))
            .await
            .map_err(|err| RpcError::internal(&err))?
            .map_err(RpcError::Session)
    }

    fn list_artifacts(&mut self, id: Option<Value>) {
        const NAME: &str = "list_artifacts";
        let session = self.session.clone();
        let output = self.output.clone();
        let request_id = id.clone();
        self.spawn(id, NAME, async move {
            // A listing reads the directory: off the async threads.
            let listed = task::spawn_blocking(move || session.list_artifacts()).await;
            let message = match listed {
                Ok(Ok(artifacts)) => data_response(
                    request_id,
                    NAME,
                    &ArtifactList {
                        artifacts: artifacts.iter().map(ListedArtifact::from).collect(),
                    },
                ),
                Ok(Err(err)) => Message::failure(request_id, NAME, &err.into()),
                Err(err) => Message::failure(request_id, NAME, &RpcError::internal(&err)),
            };
            output.send(&message);
        });
    }

    fn read_artifact(
        &mut self,
        id: Option<Value>,
        artifact_id: String,
        offset: Option<u64>,
        limit: Option<u64>,
    ) {
        const NAME: &str = "read_artifact";
        let session = self.session.clone();
        let output = self.output.clone();
        let request_id = id.clone();
        self.spawn(id, NAME, async move {
            // A read streams the file: off the async threads.
            let read =
                task::spawn_blocking(move || session.read_artifact(&artifact_id, offset, limit))
                    .await;
            let message = match read {
                Ok(Ok(artifact)) => {
                    let path = artifact.path.to_string_lossy();
                    let data = ArtifactData {
                        text: &artifact.text,
                        total_lines: artifact.total_lines,
                        path: &path,
                    };
                    data_response(request_id, NAME, &data)
                }
                Ok(Err(err)) => Message::failure(request_id, NAME, &err.into()),
                Err(err) => Message::failure(request_id, NAME, &RpcError::internal(&err)),
            };
            output.send(&message);
        });
    }

    fn bash(
        &mut self,
        id: Option<Value>,
        command: String,
        timeout: Option<f64>,
        stream_id: Option<String>,
    ) {
        const NAME: &str = "bash";
        let (abort, busy) = match claim_bash(&self.bash) {
            Ok(claimed) => claimed,
            Err(error) => return self.output.send(&Message::failure(id, NAME, &error)),
        };
        let observer = self.host.as_ref().and_then(|host| {
            host.call_started(HostedCall {
                session: self.session.clone(),
                id: next_bash_id(),
                kind: HostedCallKind::Bash {
                    command: command.clone(),
                },
                cancel: abort.clone(),
            })
            .observer
        });
        let session = self.session.clone();
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
            let result = if observer.is_some() || stream_id.is_some() {
                let stream =
                    stream_id.map(|stream_id| OutputStream::start(stream_id, output.clone()));
                let on_output = |text: &str| {
                    if let Some(observer) = observer.as_mut() {
                        observer.update(text);
                    }
                    if let Some(stream) = &stream {
                        stream.push(text);
                    }
                };
                let run = session.execute_bash_with(&command, options, on_output);
                let result = abortable_bash(&session, &abort, run).await;
                if let Some(stream) = stream {
                    stream.finish().await;
                }
                result
            } else {
                abortable_bash(&session, &abort, session.execute_bash(&command, options)).await
            };
            if let Some(observer) = observer {
                observer.finished(CallEnd::Bash(&result));
            }
            drop(busy);
            send_warnings(&session, &output);
            output.send(&match result {
                Ok(result) => {
                    let text = session.bang_text(&command, &result);
                    let data = BashData {
                        result: &result,
                        text,
                    };
                    data_response(request_id, NAME, &data)
                }
                Err(err) => Message::failure(request_id, NAME, &err.into()),
            });
        });
    }

    fn tool_call(
        &mut self,
        id: Option<Value>,
        tool_call_id: String,
        tool_name: String,
        arguments: Value,
        tool_names: Vec<String>,
    ) {
        const NAME: &str = "tool_call";
        if let Some(unknown) = unknown_tool(&tool_name) {
            self.output
                .send(&Message::failure(id, NAME, &RpcError::UnknownTool(unknown)));
            return;
        }
        let (cancel, registered) = match register_call(&self.tool_calls, &tool_call_id) {
            Ok(registered) => registered,
            Err(error) => return self.output.send(&Message::failure(id, NAME, &error)),
        };
        // No host (stdio): nothing cloned, nothing allocated.
        let hooks = self.host.as_ref().map_or_else(CallHooks::default, |host| {
            host.call_started(HostedCall {
                session: self.session.clone(),
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
        let session = self.session.clone();
        let output = self.output.clone();
        let request_id = id.clone();
        self.spawn(id, NAME, async move {
            let CallHooks {
                pty_host,
                mut observer,
            } = hooks;
            // Only a host shows a PTY: without one (stdio), never a PTY.
            let context = ToolContext {
                tool_names,
                cancel,
                pty_host,
                skip_live_updates: false,
                no_jobs: false,
            };
            let outcome = if tool_name == BASH_TOOL {
                let updates = output.clone();
                let (update_id, update_name) = (tool_call_id.clone(), tool_name.clone());
                let observing = &mut observer;
                let on_update = move |update: ToolUpdate| {
                    if let Some(observer) = observing {
                        observer.update(&update.text);
                    }
                    updates.send(&Message::ToolExecutionUpdate {
                        tool_call_id: update_id.clone(),
                        tool_name: update_name.clone(),
                        partial_result: PartialResult::text(update.text),
                    });
                };
                session
                    .execute_tool(&tool_call_id, &arguments, context, on_update)
                    .await
            } else {
                let job_tool = session.execute_job_tool(&tool_name, &arguments);
                tokio::pin!(job_tool);
                // An abort ends a waiting job tool at once (the job itself goes on).
                let answered = tokio::select! {
                    answered = &mut job_tool => answered,
                    () = context.cancel.cancelled() => None,
                };
                match answered {
                    Some(outcome) => outcome,
                    None => ToolOutcome::Aborted(ToolResult::new(
                        agentsh_protocol::COMMAND_ABORTED.to_owned(),
                        ToolDetails::not_run(
                            session.cwd(),
                            session.settings().bash.default_timeout,
                        ),
                        true,
                    )),
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
                        &RpcError::internal(&err),
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
        id: Option<Value>,
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
                .send(&Message::failure(id, command, &RpcError::internal(&err)));
        }
    }

    /// End of input or a stop request: cancel everything, let the tasks answer, shut the
    /// session down (which ends every shell's tree). A stop request that comes while the tasks
    /// are answering cuts that wait short (not the session's shutdown); its reason is returned.
    async fn shutdown<S: Stop>(mut self, stop: &mut S) -> Option<S::Reason> {
        for token in lock(&self.tool_calls).values() {
            token.cancel();
        }
        if let Some(token) = lock(&self.bash).as_ref() {
            token.cancel();
        }
        self.session.abort_bash();
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

/// Drives a bang command's `run` to its end; when `abort` fires first, aborts the session's
/// bang command and keeps driving it (its result is the aborted one). `run` is polled first:
/// its first poll registers the command with the session, so an abort already requested
/// reaches it.
async fn abortable_bash<T>(
    session: &AgentSession,
    abort: &CancellationToken,
    run: impl Future<Output = T>,
) -> T {
    tokio::pin!(run);
    tokio::select! {
        biased;
        result = &mut run => result,
        () = abort.cancelled() => {
            session.abort_bash();
            run.await
        }
    }
}

/// `data` of a `read_artifact` response.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactData<'a> {
    text: &'a str,
    total_lines: u64,
    path: &'a str,
}

/// The bytes of output a `job_view` returns without `bytes`, and at most.
const JOB_VIEW_BYTES: (u64, u64) = (16 * 1024, 1024 * 1024);

/// `job_view`: job `id` of `session` as a UI shows it, or the job tools' own error for an id
/// no job has.
fn job_look(
    session: &AgentSession,
    id: &str,
    bytes: Option<u64>,
) -> Result<agentsh_agent_session::JobLook, RpcError> {
    let (default, most) = JOB_VIEW_BYTES;
    let bytes = bytes.unwrap_or(default).min(most) as usize;
    session.job_look(id, bytes).map_err(RpcError::NoSuchJob)
}

/// A successful response carrying `data`.
/// The `data` of a `bash` response: the `BashResult`'s fields, then `text`, the result as the
/// model's context gets it ([`AgentSession::bang_text`]: the fenced output, the outcome, the
/// sandbox line of SPEC §16 when a sandboxed command failed with a denial, the notice).
#[derive(Serialize)]
struct BashData<'a> {
    #[serde(flatten)]
    result: &'a BashResult,
    text: String,
}

pub(crate) fn data_response(id: Option<Value>, command: &str, data: &impl Serialize) -> Message {
    match to_raw_value(data) {
        Ok(data) => Message::success(id, command, Some(data)),
        Err(err) => Message::failure(id, command, &RpcError::internal(&err)),
    }
}

/// Sends the session's new warnings, each as a `warning` event.
fn send_warnings(session: &AgentSession, output: &Output) {
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

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The maps hold plain data: still consistent after a panic elsewhere.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Claims the `bash` slot for a new request: its abort token, and the guard that frees the
/// slot when the request ends; the session's own error (and text) while one runs.
pub(crate) fn claim_bash(slot: &RunningBash) -> Result<(CancellationToken, BusyGuard), RpcError> {
    let mut running = lock(slot);
    if running.is_some() {
        return Err(RpcError::Session(SessionError::AlreadyRunning));
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
