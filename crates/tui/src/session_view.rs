//! [`SessionView`]: a session the mode drives (here, or on a far side: the mode does not know
//! which), and what the mode last read of it.
//!
//! Every operation goes through the session's handle. A session that answers a look at once
//! (one here) is asked each time the mode looks; one that takes a round trip (a far side) is
//! asked off the loop's thread, and what the status line and followed jobs show of it is what
//! the last poll (every jobs tick, one at a time, never reconnecting) brought back.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use agentsh_protocol::{
    BangOptions, BashResult, JobSummary, JobView, SandboxStatus, SessionStatus, ToolOutcome,
    ViewSettings,
};
use agentsh_seam::wire::{ArtifactData, CompletionKind, Completions};
use agentsh_seam::{
    Approver, BangCall, BoxFuture, CancellationToken, Handle, HandleError, PtyHost, Reach,
    ToolCall, Value, lock, ready_now,
};
use tokio::sync::mpsc::UnboundedSender;

use crate::host::AppEvent;

/// The tool `/kill` calls.
const JOB_KILL_TOOL: &str = "job_kill";

/// Bytes of a followed job's output read for its view.
pub(crate) const JOB_VIEW_BYTES: usize = agentsh_seam::wire::JOB_VIEW_BYTES as usize;

/// Characters of a far side's description the status line shows (a `[remote] command` can be
/// long; its start names the pod or container).
const TARGET_CHARS: usize = 48;

/// A session the mode drives. Cloning shares it.
#[derive(Clone)]
pub(crate) struct SessionView {
    inner: Arc<Inner>,
}

struct Inner {
    handle: Handle,
    /// This side's settings (the theme, the output limit the views name).
    settings: ViewSettings,
    /// Where commands run when not here, cut to [`TARGET_CHARS`].
    location: Option<String>,
    /// The session as its last status answered; `None` before the first answer.
    status: Mutex<Option<SessionStatus>>,
    /// Whether the session answers a status at once (then it is asked each time).
    immediate: AtomicBool,
    /// Why the last poll failed (the connection was lost), until one succeeds.
    lost: Mutex<Option<String>>,
    /// A poll is on its way: no second one starts.
    polling: AtomicBool,
    /// Sessions the transcript knows of (a call that opens one more is answered by a new
    /// session: the transcript says so).
    sessions_seen: AtomicU64,
}

/// A look at a job.
pub(crate) enum Look {
    /// Read now; `None`: no job has the id.
    Now(Option<Box<JobView>>),
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

impl SessionView {
    /// The mode's view of `handle`, drawn with `settings`, before anything was read of it.
    fn unread(handle: Handle, settings: ViewSettings) -> Self {
        Self {
            inner: Arc::new(Inner {
                location: handle.location().map(|target| short_target(&target)),
                sessions_seen: AtomicU64::new(handle.sessions_opened()),
                handle,
                settings,
                status: Mutex::new(None),
                immediate: AtomicBool::new(false),
                lost: Mutex::new(None),
                polling: AtomicBool::new(false),
            }),
        }
    }

    /// Its status, asked for; `Err` with the read on its way when it is not answered at once.
    fn first_read(&self) -> Result<(), BoxFuture<'static, Result<SessionStatus, HandleError>>> {
        let handle = Arc::clone(&self.inner.handle);
        let status: BoxFuture<'static, _> =
            Box::pin(async move { handle.status(Reach::IfConnected).await });
        let answered = ready_now(status)?;
        self.inner.immediate.store(true, Ordering::Relaxed);
        self.inner.read(answered);
        Ok(())
    }

    /// The mode's view of `handle`, drawn with `settings`; a session that does not answer its
    /// status at once is read off the loop (must be called on the runtime).
    pub(crate) fn new(handle: Handle, settings: ViewSettings) -> Self {
        let view = Self::unread(handle, settings);
        if let Err(pending) = view.first_read() {
            view.inner.polling.store(true, Ordering::Release);
            let inner = Arc::clone(&view.inner);
            tokio::spawn(async move {
                inner.read(pending.await);
                inner.polling.store(false, Ordering::Release);
            });
        }
        view
    }

    /// The mode's view of `handle`, drawn with `settings`, with its status read, so the first
    /// frame shows it (a session that cannot answer `status` is shown from this side's
    /// settings).
    pub(crate) async fn connect(handle: Handle, settings: ViewSettings) -> Self {
        let view = Self::unread(handle, settings);
        if let Err(pending) = view.first_read() {
            view.inner.read(pending.await);
        }
        view
    }

    /// When a new session was opened behind the handle (a call reconnected to a far side)
    /// since this was last asked: where.
    pub(crate) fn take_reconnected(&self) -> Option<String> {
        let opened = self.inner.handle.sessions_opened();
        (self.inner.sessions_seen.swap(opened, Ordering::AcqRel) < opened)
            .then(|| self.inner.location.clone().unwrap_or_default())
    }

    /// The settings the views are drawn with.
    pub(crate) fn settings(&self) -> &ViewSettings {
        &self.inner.settings
    }

    /// The session's status: asked now of a session that answers at once, else as last read.
    fn status(&self) -> Option<SessionStatus> {
        if self.inner.immediate.load(Ordering::Relaxed)
            && let Ok(answered) = ready_now(self.inner.handle.status(Reach::IfConnected))
        {
            self.inner.read(answered);
        }
        lock(&self.inner.status).clone()
    }

    /// The session's directory, as calls elsewhere are measured against it.
    pub(crate) fn cwd(&self) -> String {
        self.status().map(|status| status.cwd).unwrap_or_default()
    }

    /// What the status line shows of where commands run.
    pub(crate) fn place(&self) -> Place {
        let remote = self
            .inner
            .location
            .clone()
            .map(|target| (target, lock(&self.inner.lost).clone()));
        if let Some(status) = self.status() {
            return Place {
                cwd: status.cwd,
                shell: status.shell,
                sandbox: status.sandbox,
                remote,
            };
        }
        Place {
            cwd: String::new(),
            shell: String::new(),
            // The session enforces this side's sandbox settings (a far side got them in its
            // hello).
            sandbox: self.inner.settings.sandbox.clone(),
            remote,
        }
    }

    /// The session's jobs (a far side's as last read).
    pub(crate) fn jobs_summary(&self) -> Vec<JobSummary> {
        self.status().map(|status| status.jobs).unwrap_or_default()
    }

    /// Reads the status of a session that takes a round trip again, unless a read is on its
    /// way; `AppEvent::FarPolled` follows when what it shows changed. A session that answers
    /// at once is read when it is looked at.
    pub(crate) fn poll(&self, events: &UnboundedSender<AppEvent>) {
        if self.inner.immediate.load(Ordering::Relaxed)
            || self.inner.polling.swap(true, Ordering::AcqRel)
        {
            return;
        }
        let (inner, events) = (Arc::clone(&self.inner), events.clone());
        tokio::spawn(async move {
            let answered = inner.handle.status(Reach::IfConnected).await;
            let changed = inner.read(answered);
            inner.polling.store(false, Ordering::Release);
            if changed {
                let _ = events.send(AppEvent::FarPolled);
            }
        });
    }

    /// Job `id` as a UI shows it, for transcript entry `entry`: read now from a session that
    /// answers at once; else off the loop, its answer coming as `AppEvent::JobLooked`.
    pub(crate) fn job_look(
        &self,
        id: &str,
        entry: usize,
        events: &UnboundedSender<AppEvent>,
    ) -> Look {
        let (handle, job) = (Arc::clone(&self.inner.handle), id.to_owned());
        let look: BoxFuture<'static, _> = Box::pin(async move {
            handle
                .job_view(job, JOB_VIEW_BYTES, Reach::IfConnected)
                .await
        });
        match ready_now(look) {
            Ok(look) => Look::Now(look.ok().map(Box::new)),
            Err(pending) => {
                let (events, id) = (events.clone(), id.to_owned());
                tokio::spawn(async move {
                    // No such job there, or the link is down (its session, and every job of
                    // it, ended with the connection): none.
                    let look = pending.await.ok();
                    let _ = events.send(AppEvent::JobLooked { entry, id, look });
                });
                Look::Later
            }
        }
    }

    /// Runs a `bash` tool call; `on_update` gets its live text; `approver` answers its
    /// approval requests.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn run_tool(
        &self,
        call_id: &str,
        arguments: &Value,
        tool_names: &[String],
        cancel: CancellationToken,
        pty_host: Arc<dyn PtyHost>,
        approver: Arc<dyn Approver>,
        mut on_update: impl FnMut(String) + Send,
    ) -> ToolOutcome {
        let mut update = |text: &str| on_update(text.to_owned());
        let call = ToolCall {
            id: call_id,
            name: agentsh_protocol::BASH_TOOL,
            arguments,
            tool_names,
            cancel,
            pty_host: Some(pty_host),
            on_update: Some(&mut update),
            no_jobs: false,
            approver: Some(approver),
        };
        self.inner
            .handle
            .tool_call(call)
            .await
            .unwrap_or_else(HandleError::into_outcome)
    }

    /// Ends job `id` and every process it left, as the `job_kill` tool does; its result.
    pub(crate) async fn kill_job(&self, call_id: &str, id: &str) -> ToolOutcome {
        let arguments = serde_json::json!({ "jobId": id });
        let call = ToolCall::new(call_id, JOB_KILL_TOOL, &arguments);
        self.inner
            .handle
            .tool_call(call)
            .await
            .unwrap_or_else(HandleError::into_outcome)
    }

    /// The names `word` may become where the session runs (its files, its `PATH`'s programs).
    pub(crate) async fn complete(
        &self,
        word: String,
        kind: CompletionKind,
    ) -> Result<Completions, String> {
        self.inner
            .handle
            .complete(word, kind)
            .await
            .map_err(|err| err.to_string())
    }

    /// The session's artifacts' ids, newest first.
    pub(crate) async fn artifact_ids(&self) -> Result<Vec<String>, String> {
        self.inner
            .handle
            .list_artifacts()
            .await
            .map(|listed| listed.into_iter().map(|artifact| artifact.id).collect())
            .map_err(|err| err.to_string())
    }

    /// Runs a bang command; `on_output` gets its output as it comes (a far side's as it brings
    /// it: the newest part at most every 50 ms); `cancel` aborts it.
    pub(crate) async fn run_bang(
        &self,
        command: &str,
        options: BangOptions,
        cancel: CancellationToken,
        mut on_output: impl FnMut(&str) + Send,
    ) -> Result<BashResult, String> {
        let bang = BangCall {
            command,
            options,
            cancel,
            on_output: Some(&mut on_output),
            policy: agentsh_seam::BangPolicy::Audited,
        };
        self.inner
            .handle
            .bang(bang)
            .await
            .map(|data| data.result)
            .map_err(|err| err.to_string())
    }

    /// A subscription to the session's events, as one who answers hidden input.
    pub(crate) fn subscribe_answering(&self) -> agentsh_seam::Subscription {
        self.inner.handle.subscribe(true)
    }

    /// Sends `text`, typed by the person, to job `job`'s hidden prompt.
    pub(crate) async fn secret_input(&self, job: String, text: String) -> Result<(), String> {
        self.inner
            .handle
            .secret_input(job, text)
            .await
            .map_err(|err| err.to_string())
    }

    /// The context messages bang commands recorded.
    pub(crate) fn context_messages(&self) -> Vec<String> {
        self.inner.handle.context_messages()
    }

    /// Lines of an artifact.
    pub(crate) async fn read_artifact(
        &self,
        id: String,
        offset: u64,
        limit: u64,
    ) -> Result<ArtifactData, String> {
        self.inner
            .handle
            .read_artifact(id, Some(offset), Some(limit))
            .await
            .map_err(|err| err.to_string())
    }

    /// Warnings not shown yet.
    pub(crate) fn take_warnings(&self) -> Vec<String> {
        self.inner.handle.take_warnings()
    }

    /// Ends every job and shell.
    pub(crate) async fn shutdown(&self) {
        self.inner.handle.shutdown().await;
    }
}

impl Inner {
    /// Takes in what a status read answered; returns whether what it shows changed.
    fn read(&self, answered: Result<SessionStatus, HandleError>) -> bool {
        match answered {
            Ok(status) => {
                let lost_before = lock(&self.lost).take().is_some();
                let mut shown = lock(&self.status);
                let changed = lost_before || shown.as_ref() != Some(&status);
                *shown = Some(status);
                changed
            }
            Err(HandleError::Lost(reason)) => {
                // The far session ended with its connection, and every job with it.
                if let Some(status) = lock(&self.status).as_mut() {
                    status.jobs.clear();
                }
                let mut lost = lock(&self.lost);
                let changed = lost.as_deref() != Some(reason.as_str());
                *lost = Some(reason);
                changed
            }
            // A session that cannot answer `status`: nothing to show but this side's settings.
            Err(_) => false,
        }
    }
}

/// `target`, cut to [`TARGET_CHARS`] with an ellipsis.
fn short_target(target: &str) -> String {
    match target.char_indices().nth(TARGET_CHARS) {
        Some((cut, _)) => format!("{}…", &target[..cut]),
        None => target.to_owned(),
    }
}
