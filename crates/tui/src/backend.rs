//! Where the mode's calls run: a local session, or a far side (`--remote`, SPEC §17) whose
//! `agentsh rpc` runs every command, job and artifact while this side draws them.
//!
//! A local session is asked directly, on the loop's thread, as before. A far side is asked
//! over its connection, never on the loop's thread: what the status line and followed jobs
//! show of it is what the last poll (every jobs tick, one at a time) brought back.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use agentsh_agent_session::{
    AgentSession, ArtifactText, BangOptions, BashResult, CancellationToken, JobLook, JobSummary,
    SandboxStatus, SessionStatus, Settings, ToolContext, ToolOutcome, ToolUpdate, Value,
};
use agentsh_remote::{Map, RemoteCall, RemoteError, RemoteSession};
use tokio::sync::mpsc::UnboundedSender;

use crate::host::AppEvent;

/// Bytes of a followed job's output read for its view.
pub(crate) const JOB_VIEW_BYTES: usize = 16 * 1024;

/// The session the mode drives.
#[derive(Clone)]
pub(crate) enum Session {
    /// Commands run here.
    Local(AgentSession),
    /// Commands run on a far side.
    Remote(Arc<Far>),
}

/// A far side, and what was last read of it.
pub(crate) struct Far {
    remote: RemoteSession,
    /// This side's settings (the theme, the output limit the views name; the execution
    /// sections went to the far side in its hello).
    settings: Settings,
    /// What the transport reaches (`ssh://host`, a `[remote] command`), cut to
    /// [`TARGET_CHARS`].
    target: String,
    /// The far session as its last `status` answered; `None` before the first answer.
    status: Mutex<Option<SessionStatus>>,
    /// Why the last poll failed (the connection was lost), until one succeeds.
    lost: Mutex<Option<String>>,
    /// A poll is on its way: no second one starts.
    polling: AtomicBool,
    /// The context messages of bang commands run here (the far side keeps its own copy).
    context: Mutex<Vec<String>>,
    /// The running bang command's abort.
    bang: Mutex<Option<CancellationToken>>,
    /// Far-side sessions the transcript knows of (a call that opens one more is answered by
    /// a new session: the transcript says so).
    sessions_seen: AtomicU64,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A look at a job.
pub(crate) enum Look {
    /// Read now; `None`: no job has the id.
    Now(Option<JobLook>),
    /// Asked for; the answer comes as an event.
    Later,
}

/// What the status line shows of where commands run.
pub(crate) struct Place {
    /// The session's directory.
    pub cwd: String,
    /// The shell's path.
    pub shell: String,
    /// The sandbox, if any.
    pub sandbox: Option<SandboxStatus>,
    /// For a far side: its target, and why its connection is down when it is.
    pub remote: Option<(String, Option<String>)>,
}

impl Far {
    /// A far side reached through `remote`; reads its status once, so the first frame shows
    /// it (a far side that cannot answer `status` is shown from this side's settings).
    pub(crate) async fn connect(remote: RemoteSession, settings: Settings) -> Self {
        let far = Self {
            target: short_target(&remote.target()),
            sessions_seen: AtomicU64::new(remote.sessions_opened()),
            remote,
            settings,
            status: Mutex::new(None),
            lost: Mutex::new(None),
            polling: AtomicBool::new(false),
            context: Mutex::new(Vec::new()),
            bang: Mutex::new(None),
        };
        far.read_status().await;
        far
    }

    /// Reads the far session's status; returns whether what it shows changed.
    async fn read_status(&self) -> bool {
        let answer = self
            .remote
            .request_data_if_connected("status", Map::new())
            .await;
        match answer {
            Ok(data) => {
                let status = serde_json::from_value::<SessionStatus>(data).ok();
                let lost_before = lock(&self.lost).take().is_some();
                let mut shown = lock(&self.status);
                let changed = lost_before || *shown != status;
                if status.is_some() {
                    *shown = status;
                }
                changed
            }
            Err(RemoteError::Lost(reason)) => {
                // The far session ended with its connection, and every job with it.
                if let Some(status) = lock(&self.status).as_mut() {
                    status.jobs.clear();
                }
                let mut lost = lock(&self.lost);
                let changed = lost.as_deref() != Some(reason.as_str());
                *lost = Some(reason);
                changed
            }
            // An older far side without `status`: nothing to show but this side's settings.
            Err(_) => false,
        }
    }
}

impl Session {
    /// A far side: the target, when a new session was opened there (a call reconnected)
    /// since this was last asked.
    pub(crate) fn take_reconnected(&self) -> Option<String> {
        match self {
            Self::Local(_) => None,
            Self::Remote(far) => {
                let opened = far.remote.sessions_opened();
                (far.sessions_seen.swap(opened, Ordering::AcqRel) < opened)
                    .then(|| far.target.clone())
            }
        }
    }

    /// The settings the views are drawn with.
    pub(crate) fn settings(&self) -> &Settings {
        match self {
            Self::Local(session) => session.settings(),
            Self::Remote(far) => &far.settings,
        }
    }

    /// The session's directory, as calls elsewhere are measured against it.
    pub(crate) fn cwd(&self) -> String {
        match self {
            Self::Local(session) => session.cwd().to_string_lossy().into_owned(),
            Self::Remote(far) => lock(&far.status)
                .as_ref()
                .map(|status| status.cwd.clone())
                .unwrap_or_default(),
        }
    }

    /// What the status line shows of where commands run.
    pub(crate) fn place(&self) -> Place {
        match self {
            Self::Local(session) => Place {
                cwd: session.cwd().to_string_lossy().into_owned(),
                shell: session.shell_path().to_string_lossy().into_owned(),
                sandbox: session.sandbox().map(|policy| SandboxStatus {
                    mode: policy.mode.to_string(),
                    network: policy.network,
                }),
                remote: None,
            },
            Self::Remote(far) => {
                let status = lock(&far.status);
                let remote = Some((far.target.clone(), lock(&far.lost).clone()));
                match status.as_ref() {
                    Some(status) => Place {
                        cwd: status.cwd.clone(),
                        shell: status.shell.clone(),
                        sandbox: status.sandbox.clone(),
                        remote,
                    },
                    None => Place {
                        cwd: String::new(),
                        shell: String::new(),
                        // The far side enforces this side's sandbox settings (sent in hello).
                        sandbox: far.settings.sandbox.mode.map(|mode| SandboxStatus {
                            mode: mode.to_string(),
                            network: far.settings.sandbox.network,
                        }),
                        remote,
                    },
                }
            }
        }
    }

    /// The session's jobs (a far side's as last read).
    pub(crate) fn jobs_summary(&self) -> Vec<JobSummary> {
        match self {
            Self::Local(session) => session.jobs_summary(),
            Self::Remote(far) => lock(&far.status)
                .as_ref()
                .map(|status| status.jobs.clone())
                .unwrap_or_default(),
        }
    }

    /// Reads a far side's status again, unless a read is on its way; `AppEvent::FarPolled`
    /// follows when what it shows changed. Nothing for a local session.
    pub(crate) fn poll(&self, events: &UnboundedSender<AppEvent>) {
        let Self::Remote(far) = self else {
            return;
        };
        if far.polling.swap(true, Ordering::AcqRel) {
            return;
        }
        let (far, events) = (Arc::clone(far), events.clone());
        tokio::spawn(async move {
            let changed = far.read_status().await;
            far.polling.store(false, Ordering::Release);
            if changed {
                let _ = events.send(AppEvent::FarPolled);
            }
        });
    }

    /// Job `id` as a UI shows it, for transcript entry `entry`. A far side's is read off the
    /// loop: its answer comes as `AppEvent::JobLooked`.
    pub(crate) fn job_look(
        &self,
        id: &str,
        entry: usize,
        events: &UnboundedSender<AppEvent>,
    ) -> Look {
        match self {
            Self::Local(session) => Look::Now(session.job_look(id, JOB_VIEW_BYTES).ok()),
            Self::Remote(far) => {
                let (remote, events) = (far.remote.clone(), events.clone());
                let id = id.to_owned();
                tokio::spawn(async move {
                    let mut fields = Map::new();
                    fields.insert("jobId".to_owned(), Value::from(id.as_str()));
                    fields.insert("bytes".to_owned(), Value::from(JOB_VIEW_BYTES));
                    // No such job there, or the link is down (its session, and every job of
                    // it, ended with the connection): none.
                    let look = remote
                        .request_data_if_connected("job_view", fields)
                        .await
                        .ok()
                        .and_then(|data| serde_json::from_value::<JobLook>(data).ok());
                    let _ = events.send(AppEvent::JobLooked { entry, id, look });
                });
                Look::Later
            }
        }
    }

    /// Runs a tool call; `on_update` gets its live text.
    pub(crate) async fn run_tool(
        &self,
        call_id: &str,
        arguments: &Value,
        context: ToolContext,
        mut on_update: impl FnMut(String) + Send + 'static,
    ) -> ToolOutcome {
        match self {
            Self::Local(session) => {
                session
                    .execute_tool(call_id, arguments, context, move |update: ToolUpdate| {
                        on_update(update.text);
                    })
                    .await
            }
            Self::Remote(far) => {
                let call = RemoteCall {
                    name: agentsh_agent_session::BASH_TOOL,
                    arguments,
                    tool_names: &context.tool_names,
                };
                let result = far
                    .remote
                    .call_tool(call, &context.cancel, |text| on_update(text.to_owned()))
                    .await;
                // The call marked its result `sessionRestarted` itself.
                if context.cancel.is_cancelled() {
                    ToolOutcome::Aborted(result)
                } else {
                    ToolOutcome::Finished(result)
                }
            }
        }
    }

    /// Runs a bang command; `on_output` gets its output as it comes (a far side's as its
    /// `bash_output` events bring it: the newest part at most every 50 ms).
    pub(crate) async fn run_bang(
        &self,
        command: &str,
        options: BangOptions,
        on_output: impl FnMut(&str) + Send,
    ) -> Result<BashResult, String> {
        let far = match self {
            Self::Local(session) => {
                return session
                    .execute_bash_with(command, options, on_output)
                    .await
                    .map_err(|err| err.to_string());
            }
            Self::Remote(far) => far,
        };
        let abort = CancellationToken::new();
        *lock(&far.bang) = Some(abort.clone());
        let answer = far
            .remote
            .bash(command, options.timeout, &abort, true, on_output)
            .await;
        *lock(&far.bang) = None;
        let data = answer.map_err(|err| err.to_string())?;
        let text = data.get("text").and_then(Value::as_str).map(str::to_owned);
        let result = serde_json::from_value::<BashResult>(data)
            .map_err(|err| format!("the far side sent a result this agentsh cannot read: {err}"))?;
        if !options.exclude_from_context
            && let Some(text) = text
        {
            lock(&far.context).push(text);
        }
        Ok(result)
    }

    /// Aborts the running bang command.
    pub(crate) fn abort_bang(&self) {
        match self {
            Self::Local(session) => session.abort_bash(),
            Self::Remote(far) => {
                if let Some(token) = lock(&far.bang).as_ref() {
                    token.cancel();
                }
            }
        }
    }

    /// The context messages bang commands recorded.
    pub(crate) fn context_messages(&self) -> Vec<String> {
        match self {
            Self::Local(session) => session.context_messages(),
            Self::Remote(far) => lock(&far.context).clone(),
        }
    }

    /// Lines of an artifact (here, or the far side's).
    pub(crate) async fn read_artifact(
        &self,
        id: String,
        offset: u64,
        limit: u64,
    ) -> Result<ArtifactText, String> {
        match self {
            Self::Local(session) => {
                let session = session.clone();
                // A read streams the file: off the loop's thread.
                tokio::task::spawn_blocking(move || {
                    session.read_artifact(&id, Some(offset), Some(limit))
                })
                .await
                .map_err(|err| err.to_string())?
                .map_err(|err| err.to_string())
            }
            Self::Remote(far) => {
                let mut fields = Map::new();
                fields.insert("artifactId".to_owned(), Value::from(id));
                fields.insert("offset".to_owned(), Value::from(offset));
                fields.insert("limit".to_owned(), Value::from(limit));
                let data = far
                    .remote
                    .request_data("read_artifact", fields)
                    .await
                    .map_err(|err| err.to_string())?;
                let text = |key: &str| {
                    data.get(key)
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned()
                };
                Ok(ArtifactText {
                    text: text("text"),
                    total_lines: data.get("totalLines").and_then(Value::as_u64).unwrap_or(0),
                    path: text("path").into(),
                })
            }
        }
    }

    /// Warnings not shown yet.
    pub(crate) fn take_warnings(&self) -> Vec<String> {
        match self {
            Self::Local(session) => session.take_warnings(),
            Self::Remote(far) => far.remote.take_warnings(),
        }
    }

    /// Ends every job and shell (here, or on the far side: its input is closed).
    pub(crate) async fn shutdown(&self) {
        match self {
            Self::Local(session) => session.shutdown().await,
            Self::Remote(far) => far.remote.shutdown().await,
        }
    }
}

/// Characters of a far side's description the status line shows (a `[remote] command` can be
/// long; its start names the pod or container).
const TARGET_CHARS: usize = 48;

/// `target`, cut to [`TARGET_CHARS`] with an ellipsis.
fn short_target(target: &str) -> String {
    match target.char_indices().nth(TARGET_CHARS) {
        Some((cut, _)) => format!("{}…", &target[..cut]),
        None => target.to_owned(),
    }
}
