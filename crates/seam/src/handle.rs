//! [`SessionHandle`]: everything a surface does with a session, whether it runs here or on a
//! far side.

use std::path::Path;
use std::sync::Arc;

use agentsh_protocol::wire::{
    ArtifactData, ArtifactList, BashData, CompletionKind, Completions, ListedArtifact, Query,
    SecretText,
};
use agentsh_protocol::{
    BangOptions, JobView, REMOTE_LOST_PREFIX, SessionStatus, Timeout, ToolDetails, ToolOutcome,
    ToolResult,
};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use crate::{Approver, BoxFuture, PtyHost};

/// A shared handle to a session, as surfaces hold it.
pub type Handle = Arc<dyn SessionHandle>;

/// One agent session as the surfaces (the RPC server, the MCP server, the interactive mode)
/// drive it: tool calls with live updates and abort, users' commands with streamed output,
/// artifacts, status, looks at jobs, settings, warnings and the end. A session here
/// (`agentsh-agent-session`'s `LocalHandle`) and a far side (`agentsh-remote`'s
/// `RemoteHandle`) implement it; a surface never knows which it has.
pub trait SessionHandle: Send + Sync {
    /// An id of the session, unique within the process (a host numbers connections by it).
    fn id(&self) -> String;

    /// Where commands run when it is not here: what the far side's transport reaches
    /// (`ssh://host`, a `[remote] command`); `None` for a session here.
    fn location(&self) -> Option<String> {
        None
    }

    /// How many sessions this handle has had: 1, and one more each time a far side's lost
    /// connection was replaced by a new one (a new far-side session, whose jobs and shell
    /// state are new). A UI compares it around a call to tell the person.
    fn sessions_opened(&self) -> u64 {
        1
    }

    /// Runs a tool call (`bash` or a job tool) to its outcome. `Err` only when the session
    /// could not take the call at all (a far side that refused it); a lost connection, bad
    /// arguments or a failing command are results with `isError: true`.
    fn tool_call<'a>(
        &'a self,
        call: ToolCall<'a>,
    ) -> BoxFuture<'a, Result<ToolOutcome, HandleError>>;

    /// Runs a user's (bang) command on the session's user shell; cancelling `bang.cancel`
    /// aborts it (its result then says `cancelled`).
    fn bang<'a>(&'a self, bang: BangCall<'a>) -> BoxFuture<'a, Result<BashData, HandleError>>;

    /// Answers `query` with the JSON of its answer's `data` (`None`: it has none), as a
    /// response line carries it: the one place each query is answered. A far side passes the
    /// query on and hands back the far side's `data` unread; the RPC server writes it into its
    /// response. `reach` says whether a far side may open a new connection for it (a secret for
    /// a job never does: the far side's jobs lived on the lost one). The typed methods below
    /// build a query and read its answer.
    fn query(
        &self,
        query: Query,
        reach: Reach,
    ) -> BoxFuture<'_, Result<Option<Box<RawValue>>, HandleError>>;

    /// Lines `offset ..` (1-based; all from the first without it) of an artifact, at most
    /// `limit` of them; `id` is digits or an `artifact://` URL.
    fn read_artifact(
        &self,
        id: String,
        offset: Option<u64>,
        limit: Option<u64>,
    ) -> BoxFuture<'_, Result<ArtifactData, HandleError>> {
        let query = Query::ReadArtifact {
            artifact_id: id,
            offset,
            limit,
        };
        Box::pin(async move { read_data(self.query(query, Reach::Reconnect).await?.as_deref()) })
    }

    /// The session's artifacts, newest first.
    fn list_artifacts(&self) -> BoxFuture<'_, Result<Vec<ListedArtifact>, HandleError>> {
        Box::pin(async move {
            let list: ArtifactList = read_data(
                self.query(Query::ListArtifacts, Reach::Reconnect)
                    .await?
                    .as_deref(),
            )?;
            Ok(list.artifacts)
        })
    }

    /// The size of artifact `id` (digits or an `artifact://` URL), when it can be found; by
    /// default, as the session's listing has it.
    fn artifact_size(&self, id: String) -> BoxFuture<'_, Result<Option<u64>, HandleError>> {
        Box::pin(async move {
            let digits = id.strip_prefix("artifact://").unwrap_or(&id);
            Ok(self
                .list_artifacts()
                .await?
                .into_iter()
                .find(|listed| listed.id == digits)
                .map(|listed| listed.size))
        })
    }

    /// The names `word` may become, as the session's side sees them: entries of a directory
    /// relative to the session's directory, or programs on its `PATH` (the `complete` query).
    fn complete(
        &self,
        word: String,
        kind: CompletionKind,
    ) -> BoxFuture<'_, Result<Completions, HandleError>> {
        let query = Query::Complete { word, kind };
        Box::pin(async move { read_data(self.query(query, Reach::IfConnected).await?.as_deref()) })
    }

    /// What a status line shows of the session.
    fn status(&self, reach: Reach) -> BoxFuture<'_, Result<SessionStatus, HandleError>> {
        Box::pin(async move { read_data(self.query(Query::Status, reach).await?.as_deref()) })
    }

    /// A UI's look at job `id` (at most `bytes` of its newest output, at most 1 MiB), which
    /// moves nothing `job_output` returns; an id no job has is [`HandleError::Failed`] with
    /// the job tools' text.
    fn job_view(
        &self,
        id: String,
        bytes: usize,
        reach: Reach,
    ) -> BoxFuture<'_, Result<JobView, HandleError>> {
        let query = Query::JobView {
            job_id: id,
            bytes: Some(bytes as u64),
        };
        Box::pin(async move { read_data(self.query(query, reach).await?.as_deref()) })
    }

    /// Applies execution `settings` (an object of settings sections, as a remote `hello`
    /// carries them): the session is made anew with them, the old one ended. Refused
    /// (`Failed`) with the reason when they cannot be applied.
    fn apply_settings(&self, settings: Value) -> BoxFuture<'_, Result<(), HandleError>>;

    /// Subscribes to the session's events ([`SessionEvent`](crate::SessionEvent)): from now
    /// on, until the subscription is dropped. `answers_secrets`: the subscriber lets a person
    /// answer a job's hidden input (the interactive mode; an RPC client that said
    /// `capabilities.secretInput`); while one is held, results tell the model that the user
    /// types the secret into agentsh.
    fn subscribe(&self, answers_secrets: bool) -> crate::Subscription;

    /// Sends `text`, typed by a person at job `job_id`'s hidden prompt, followed by Enter
    /// (`\r`), and redacts it from everything the session shows from then on
    /// (`[REDACTED:input]`). Never logged, audited or kept. [`HandleError::Failed`] when
    /// `text` holds CR or LF, or the job does not exist, has no terminal or has ended.
    fn secret_input(&self, job_id: String, text: String) -> BoxFuture<'_, Result<(), HandleError>> {
        let query = Query::SecretInput {
            job_id,
            text: SecretText(text),
        };
        Box::pin(async move {
            self.query(query, Reach::IfConnected).await?;
            Ok(())
        })
    }

    /// The context messages users' commands recorded (not those of `!!cmd`).
    fn context_messages(&self) -> Vec<String>;

    /// Warnings not reported yet; taking them clears them.
    fn take_warnings(&self) -> Vec<String>;

    /// Ends every job and shell (a far side: closes its connection, so it ends them there).
    fn shutdown(&self) -> BoxFuture<'_, ()>;
}

/// Whether a look at a far side may open a new connection when the last one was lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// It may: what a client asked for is answered by a new session if it must.
    Reconnect,
    /// It may not: a poll (a status line) that finds the link down is [`HandleError::Lost`],
    /// and the person's next call is the one that reconnects.
    IfConnected,
}

/// One tool call, as a surface makes it.
pub struct ToolCall<'a> {
    /// The caller's id of the call (a far side gives the call an id of its own).
    pub id: &'a str,
    /// The tool: `bash`, `job_output`, `job_input`, `job_kill`, `job_list`.
    pub name: &'a str,
    /// Its arguments, as the model wrote them.
    pub arguments: &'a Value,
    /// The agent's tools: interception only suggests one of these.
    pub tool_names: &'a [String],
    /// Cancelling it aborts the call (a job tool that waits stops waiting; the job goes on).
    pub cancel: CancellationToken,
    /// The UI that shows a `bash` call's PTY, when there is one (only a session here runs a
    /// call on a PTY).
    pub pty_host: Option<Arc<dyn PtyHost>>,
    /// Gets the text of each live update of a `bash` call (its output's tail so far); `None`:
    /// nobody shows them, and none are made.
    pub on_update: Option<&'a mut (dyn FnMut(&str) + Send)>,
    /// Nothing may outlive the call (print mode): `run_in_background` is an argument error
    /// and no call yields.
    pub no_jobs: bool,
    /// Who answers the call's approval requests (the policy's `ask`); `None`: nobody can be
    /// asked, so a command that needs a yes is denied at once.
    pub approver: Option<Arc<dyn Approver>>,
}

impl<'a> ToolCall<'a> {
    /// A call of `name` with `arguments`, id `id`: no other tools, a fresh cancel token, no
    /// PTY, no live updates, jobs allowed.
    pub fn new(id: &'a str, name: &'a str, arguments: &'a Value) -> Self {
        Self {
            id,
            name,
            arguments,
            tool_names: &[],
            cancel: CancellationToken::new(),
            pty_host: None,
            on_update: None,
            no_jobs: false,
            approver: None,
        }
    }
}

impl std::fmt::Debug for ToolCall<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolCall")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("arguments", &self.arguments)
            .field("tool_names", &self.tool_names)
            .field("cancelled", &self.cancel.is_cancelled())
            .field("pty_host", &self.pty_host.is_some())
            .field("on_update", &self.on_update.is_some())
            .field("no_jobs", &self.no_jobs)
            .field("approver", &self.approver.is_some())
            .finish()
    }
}

/// One user's (bang) command.
pub struct BangCall<'a> {
    /// The command line.
    pub command: &'a str,
    /// Its timeout and whether it stays out of the model's context.
    pub options: BangOptions,
    /// Cancelling it aborts the command.
    pub cancel: CancellationToken,
    /// Gets each new piece of its output as it comes (a far side's at most every 50 ms, the
    /// newest part of each); `None`: nothing is streamed.
    pub on_output: Option<&'a mut (dyn FnMut(&str) + Send)>,
    /// Whether the approval policy judges it.
    pub policy: BangPolicy,
}

/// Whether a user's command is judged by the approval policy.
#[derive(Clone, Default)]
pub enum BangPolicy {
    /// Not judged, only audited: the person typed it (the interactive mode), or the host's own
    /// user sent it (RPC on stdio).
    #[default]
    Audited,
    /// Judged as a model's command: it arrived where any process of the user can send one (a
    /// `--listen` socket).
    Judged {
        /// The id its approval requests name (the `toolCallId` a host gave the request).
        call_id: String,
        /// Who answers its approval requests; `None`: nobody can.
        approver: Option<Arc<dyn Approver>>,
    },
}

impl std::fmt::Debug for BangPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Audited => f.write_str("Audited"),
            Self::Judged { call_id, approver } => f
                .debug_struct("Judged")
                .field("call_id", call_id)
                .field("approver", &approver.is_some())
                .finish(),
        }
    }
}

impl std::fmt::Debug for BangCall<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BangCall")
            .field("command", &self.command)
            .field("options", &self.options)
            .field("cancelled", &self.cancel.is_cancelled())
            .field("on_output", &self.on_output.is_some())
            .field("policy", &self.policy)
            .finish()
    }
}

/// Why a session could not do what it was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HandleError {
    /// The session refused or failed the request, in its own words (`A bash command is
    /// already running`, an unknown artifact, settings it cannot apply, `No job 9. Jobs: 1`).
    #[error("{0}")]
    Failed(String),
    /// A far side's connection was lost (or, for a look that may not reconnect, is down).
    #[error("{REMOTE_LOST_PREFIX}{0}")]
    Lost(String),
    /// A far side could not be reached, or refused a new session; the text names it.
    #[error("{0}")]
    Unreachable(String),
}

impl HandleError {
    /// The tool result of a call this failure ended: a tool error whose text is the failure's
    /// own words (a session that could not be reached says `Remote connection lost: …`: the
    /// call never reached a session).
    pub fn tool_result(&self) -> ToolResult {
        let text = match self {
            Self::Failed(_) | Self::Lost(_) => self.to_string(),
            Self::Unreachable(reason) => format!("{REMOTE_LOST_PREFIX}{reason}"),
        };
        let details = ToolDetails::not_run(Path::new(""), Timeout::default());
        ToolResult::new(text, details, true)
    }

    /// The outcome of a tool call that ended with this failure.
    pub fn into_outcome(self) -> ToolOutcome {
        ToolOutcome::Finished(self.tool_result())
    }
}

/// A query's answer read as a `T` (`null` when it has none); data this agentsh cannot read (a
/// far side of another version) is [`HandleError::Failed`] saying so.
fn read_data<T: serde::de::DeserializeOwned>(data: Option<&RawValue>) -> Result<T, HandleError> {
    let raw = data.map_or("null", RawValue::get);
    serde_json::from_str(raw).map_err(|err| {
        HandleError::Failed(format!(
            "the session sent an answer this agentsh cannot read: {err}"
        ))
    })
}

/// The answer `data` of a query: `value` as JSON.
pub fn answer_data<T: serde::Serialize>(value: &T) -> Result<Option<Box<RawValue>>, HandleError> {
    serde_json::value::to_raw_value(value)
        .map(Some)
        .map_err(|err| HandleError::Failed(format!("internal error: {err}")))
}
