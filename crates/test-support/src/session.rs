//! [`FakeSession`]: a scripted [`SessionHandle`] for the tests of the surfaces that drive one
//! (the MCP server), so that they run without a session, a shell or the binary.
//!
//! It records what the surface does (each tool call with its arguments, its cancel token and
//! whether it wanted live updates; settings applied; subscriptions; shutdowns) and answers each
//! tool call with the next scripted [`Reply`]: a result, an abort once the call is cancelled, or
//! a [`HandleError`], after sending live updates to the call's `on_update`. Session events go
//! out through its [`EventHub`] ([`FakeSession::send_event`]).
//!
//! A test waits for states, never for time: [`FakeSession::wait_for_calls`] and friends return
//! as soon as the state is reached, and panic after a 10 s liveness limit naming what they
//! waited for.
//!
//! ```
//! use agentsh_seam::{SessionHandle, ToolCall, json};
//! use agentsh_test_support::session::{FakeSession, Reply};
//!
//! agentsh_test_support::runtime().block_on(async {
//!     let session = FakeSession::new();
//!     session.reply(Reply::text("hi\n").with_updates(["h"]));
//!     let arguments = json!({"command": "echo hi"});
//!     let outcome = session.tool_call(ToolCall::new("c1", "bash", &arguments)).await;
//!     assert_eq!(outcome.expect("runs").into_result().text(), "hi\n");
//!     let calls = session.wait_for_calls(1).await;
//!     assert_eq!(calls[0].arguments, arguments);
//!     assert!(!calls[0].live_updates);
//! });
//! ```

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agentsh_protocol::wire::{
    ArtifactData, ArtifactList, BashData, Completions, ListedArtifact, Query,
};
use agentsh_protocol::{
    ApprovalAnswer, ApprovalRequest, ApprovalResolution, SessionStatus, Timeout, ToolDetails,
    ToolOutcome, ToolResult,
};
use agentsh_seam::{
    BangCall, BoxFuture, CancellationToken, EventHub, Handle, HandleError, RawValue, Reach,
    SessionEvent, SessionHandle, Subscription, ToolCall, Value, answer_data,
};
use tokio::sync::watch;

/// How long a wait for a state may take before the test fails: generous, for slow machines.
pub const LIVENESS: Duration = Duration::from_secs(10);

/// The working directory the fake's results name.
pub const FAKE_CWD: &str = "/fake/cwd";

/// A scripted session. Share it as `Arc<FakeSession>` and hand a surface
/// [`FakeSession::handle`].
#[derive(Debug)]
pub struct FakeSession {
    id: String,
    events: EventHub,
    state: watch::Sender<State>,
}

/// What the fake recorded and what it still has to answer with.
#[derive(Debug, Default)]
pub struct State {
    /// The replies not used yet, in order.
    replies: VecDeque<Reply>,
    /// Every tool call, in the order they came.
    pub calls: Vec<RecordedCall>,
    /// Calls that have returned (their outcome handed back), by index in `calls`.
    pub returned: Vec<usize>,
    /// The artifacts, by id: their text.
    pub artifacts: BTreeMap<String, String>,
    /// Warnings not taken yet.
    pub warnings: Vec<String>,
    /// Every `apply_settings`, in order.
    pub settings: Vec<Value>,
    /// The status `status` answers with.
    pub status: Option<SessionStatus>,
    /// Subscriptions made (`subscribe` calls; a dropped one still counts).
    pub subscriptions: usize,
    /// `shutdown` calls.
    pub shutdowns: usize,
    /// Every `secret_input`: the job and the text.
    pub secret_inputs: Vec<(String, String)>,
    /// Every user's (bang) command.
    pub bangs: Vec<String>,
    /// What each approval request a reply asked got back from the call's approver (`None`:
    /// no approver, or it could not answer), in order.
    pub answers: Vec<Option<ApprovalAnswer>>,
}

/// One tool call as the fake got it.
#[derive(Debug, Clone)]
pub struct RecordedCall {
    /// The caller's id of the call.
    pub id: String,
    /// The tool.
    pub name: String,
    /// Its arguments.
    pub arguments: Value,
    /// The agent's other tools.
    pub tool_names: Vec<String>,
    /// The call's cancel token: a test waits for it to be cancelled.
    pub cancel: CancellationToken,
    /// Whether the surface asked for live updates (`on_update` was given).
    pub live_updates: bool,
    /// Whether an approver was given.
    pub approver: bool,
    /// Whether a PTY host was given.
    pub pty_host: bool,
    /// `no_jobs`.
    pub no_jobs: bool,
}

/// What the fake does with one tool call: live updates, maybe a wait, then an outcome.
#[derive(Debug)]
pub struct Reply {
    updates: Vec<String>,
    ask: Option<ApprovalRequest>,
    until_cancelled: bool,
    outcome: Result<ToolOutcome, HandleError>,
}

impl Reply {
    /// A call that ran and exited 0, with `text` as its result.
    pub fn text(text: &str) -> Self {
        Self::finished(result(text, Some(0), false))
    }

    /// A call that failed (exit status 1): its result is a tool error with `text`.
    pub fn error_text(text: &str) -> Self {
        Self::finished(result(text, Some(1), true))
    }

    /// A call that ran to `result`.
    pub fn finished(result: ToolResult) -> Self {
        Self {
            updates: Vec::new(),
            ask: None,
            until_cancelled: false,
            outcome: Ok(ToolOutcome::Finished(result)),
        }
    }

    /// A call the session could not take: `tool_call` returns `error`.
    pub fn failure(error: HandleError) -> Self {
        Self {
            updates: Vec::new(),
            ask: None,
            until_cancelled: false,
            outcome: Err(error),
        }
    }

    /// A call that runs until its cancel token is cancelled, then ends aborted: its result's
    /// text is `Command aborted`, `details.cancelled` is true, and it is an error.
    pub fn until_cancelled() -> Self {
        let mut aborted = result("Command aborted", None, true);
        aborted.details.cancelled = true;
        Self {
            updates: Vec::new(),
            ask: None,
            until_cancelled: true,
            outcome: Ok(ToolOutcome::Aborted(aborted)),
        }
    }

    /// First sends each of `updates` to the call's `on_update`, when it has one (each is the
    /// whole tail so far, as a session's live updates are).
    #[must_use]
    pub fn with_updates<'s>(mut self, updates: impl IntoIterator<Item = &'s str>) -> Self {
        self.updates = updates.into_iter().map(str::to_owned).collect();
        self
    }

    /// Then asks the call's approver `request` (as a session asks about a command its policy
    /// says `ask` about), records the answer ([`State::answers`]) and tells the approver it
    /// was resolved with it (`Unanswered` without one), before the outcome.
    #[must_use]
    pub fn asking(mut self, request: ApprovalRequest) -> Self {
        self.ask = Some(request);
        self
    }
}

/// A tool result with `text`, `exit_code` and `is_error`, run in [`FAKE_CWD`].
pub fn result(text: &str, exit_code: Option<i32>, is_error: bool) -> ToolResult {
    let mut details = ToolDetails::not_run(Path::new(FAKE_CWD), Timeout::DEFAULT);
    details.exit_code = exit_code;
    ToolResult::new(text.to_owned(), details, is_error)
}

impl FakeSession {
    /// A fake with nothing scripted: a call without a reply ends with `fake: <tool> ran`.
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            id: "fake".to_owned(),
            events: EventHub::new(),
            state: watch::channel(State::default()).0,
        })
    }

    /// This fake as the handle a surface holds.
    pub fn handle(self: &Arc<Self>) -> Handle {
        Arc::clone(self) as Handle
    }

    /// Queues `reply` for the next tool call that has none yet.
    pub fn reply(&self, reply: Reply) {
        self.state
            .send_modify(|state| state.replies.push_back(reply));
    }

    /// Adds artifact `id` (digits) holding `text`.
    pub fn add_artifact(&self, id: &str, text: &str) {
        self.state.send_modify(|state| {
            state.artifacts.insert(id.to_owned(), text.to_owned());
        });
    }

    /// Adds a warning, taken by the next `take_warnings`.
    pub fn warn(&self, warning: &str) {
        self.state
            .send_modify(|state| state.warnings.push(warning.to_owned()));
    }

    /// Sets what `status` answers.
    pub fn set_status(&self, status: SessionStatus) {
        self.state.send_modify(|state| state.status = Some(status));
    }

    /// Sends `event` to every subscriber.
    pub fn send_event(&self, event: SessionEvent) {
        self.events.send(event);
    }

    /// The fake's event hub.
    pub fn events(&self) -> &EventHub {
        &self.events
    }

    /// Reads the recorded state.
    pub fn with_state<T>(&self, read: impl FnOnce(&State) -> T) -> T {
        read(&self.state.borrow())
    }

    /// The tool calls so far.
    pub fn calls(&self) -> Vec<RecordedCall> {
        self.with_state(|state| state.calls.clone())
    }

    /// Waits until `reached` holds of the state; panics after [`LIVENESS`], naming `what`.
    pub async fn wait_for(&self, what: &str, reached: impl FnMut(&State) -> bool) {
        let mut state = self.state.subscribe();
        let waited = tokio::time::timeout(LIVENESS, state.wait_for(reached)).await;
        assert!(
            matches!(waited, Ok(Ok(_))),
            "the fake session never got {what} within {LIVENESS:?}"
        );
    }

    /// Waits until at least `count` tool calls came; the calls.
    pub async fn wait_for_calls(&self, count: usize) -> Vec<RecordedCall> {
        self.wait_for(&format!("{count} tool calls"), |state| {
            state.calls.len() >= count
        })
        .await;
        self.calls()
    }

    /// Waits until at least `count` subscriptions were made.
    pub async fn wait_for_subscriptions(&self, count: usize) {
        self.wait_for(&format!("{count} subscriptions"), |state| {
            state.subscriptions >= count
        })
        .await;
    }

    /// Waits until the session was shut down.
    pub async fn wait_for_shutdown(&self) {
        self.wait_for("a shutdown", |state| state.shutdowns > 0)
            .await;
    }
}

/// Waits until `cancel` is cancelled; panics after [`LIVENESS`], naming `what`.
pub async fn wait_cancelled(cancel: &CancellationToken, what: &str) {
    let waited = tokio::time::timeout(LIVENESS, cancel.cancelled()).await;
    assert!(
        waited.is_ok(),
        "{what} was not cancelled within {LIVENESS:?}"
    );
}

impl SessionHandle for FakeSession {
    fn id(&self) -> String {
        self.id.clone()
    }

    fn tool_call<'a>(
        &'a self,
        call: ToolCall<'a>,
    ) -> BoxFuture<'a, Result<ToolOutcome, HandleError>> {
        Box::pin(async move {
            let ToolCall {
                id,
                name,
                arguments,
                tool_names,
                cancel,
                pty_host,
                mut on_update,
                no_jobs,
                approver,
            } = call;
            let recorded = RecordedCall {
                id: id.to_owned(),
                name: name.to_owned(),
                arguments: arguments.clone(),
                tool_names: tool_names.to_vec(),
                cancel: cancel.clone(),
                live_updates: on_update.is_some(),
                approver: approver.is_some(),
                pty_host: pty_host.is_some(),
                no_jobs,
            };
            let (mut reply, mut index) = (None, 0);
            self.state.send_modify(|state| {
                index = state.calls.len();
                state.calls.push(recorded);
                reply = state.replies.pop_front();
            });
            let reply = reply.unwrap_or_else(|| Reply::text(&format!("fake: {name} ran")));
            if let Some(on_update) = on_update.as_mut() {
                for update in &reply.updates {
                    on_update(update);
                }
            }
            if let Some(request) = &reply.ask {
                let answer = match &approver {
                    Some(approver) => {
                        let answer = approver.ask(request).await;
                        let resolution = answer
                            .map_or(ApprovalResolution::Unanswered, ApprovalResolution::Answered);
                        approver.resolved(&request.request_id, resolution);
                        answer
                    }
                    None => None,
                };
                self.state.send_modify(|state| state.answers.push(answer));
            }
            if reply.until_cancelled {
                cancel.cancelled().await;
            }
            self.state.send_modify(|state| state.returned.push(index));
            reply.outcome
        })
    }

    fn bang<'a>(&'a self, bang: BangCall<'a>) -> BoxFuture<'a, Result<BashData, HandleError>> {
        self.state
            .send_modify(|state| state.bangs.push(bang.command.to_owned()));
        Box::pin(async {
            Err(HandleError::Failed(
                "the fake session runs no user commands".to_owned(),
            ))
        })
    }

    fn query(
        &self,
        query: Query,
        _reach: Reach,
    ) -> BoxFuture<'_, Result<Option<Box<RawValue>>, HandleError>> {
        let answer = match query {
            Query::ReadArtifact {
                artifact_id,
                offset,
                limit,
            } => {
                let digits = artifact_id
                    .strip_prefix("artifact://")
                    .unwrap_or(&artifact_id)
                    .to_owned();
                let text = self.with_state(|state| state.artifacts.get(&digits).cloned());
                text.ok_or_else(|| HandleError::Failed(format!("No artifact {artifact_id}")))
                    .and_then(|text| {
                        let lines: Vec<&str> = text.split_inclusive('\n').collect();
                        let first = offset.unwrap_or(1).saturating_sub(1) as usize;
                        let count = limit.map_or(usize::MAX, |limit| limit as usize);
                        answer_data(&ArtifactData {
                            text: lines.iter().skip(first).take(count).copied().collect(),
                            total_lines: lines.len() as u64,
                            path: format!("/fake/artifacts/{digits}"),
                        })
                    })
            }
            Query::ListArtifacts => {
                let artifacts = self.with_state(|state| {
                    state
                        .artifacts
                        .iter()
                        .rev()
                        .map(|(id, text)| ListedArtifact {
                            id: id.clone(),
                            size: text.len() as u64,
                            modified_ms: 0,
                        })
                        .collect()
                });
                answer_data(&ArtifactList { artifacts })
            }
            Query::Status => {
                let status = self.with_state(|state| state.status.clone());
                answer_data(&status.unwrap_or_else(|| SessionStatus {
                    cwd: FAKE_CWD.to_owned(),
                    shell: "/bin/sh".to_owned(),
                    sandbox: None,
                    jobs: Vec::new(),
                }))
            }
            Query::JobView { job_id, .. } => Err(HandleError::Failed(format!("No job {job_id}"))),
            Query::SecretInput { job_id, text } => {
                self.state
                    .send_modify(|state| state.secret_inputs.push((job_id, text.0)));
                Ok(None)
            }
            // No files and no programs in a scripted session.
            Query::Complete { .. } => answer_data(&Completions::default()),
        };
        Box::pin(std::future::ready(answer))
    }

    fn apply_settings(&self, settings: Value) -> BoxFuture<'_, Result<(), HandleError>> {
        self.state
            .send_modify(|state| state.settings.push(settings));
        Box::pin(async { Ok(()) })
    }

    fn subscribe(&self, answers_secrets: bool) -> Subscription {
        let subscription = self.events.subscribe(answers_secrets);
        self.state.send_modify(|state| state.subscriptions += 1);
        subscription
    }

    fn context_messages(&self) -> Vec<String> {
        Vec::new()
    }

    fn take_warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        self.state
            .send_modify(|state| warnings = std::mem::take(&mut state.warnings));
        warnings
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        self.state.send_modify(|state| state.shutdowns += 1);
        Box::pin(async {})
    }
}
