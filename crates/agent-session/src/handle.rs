//! [`LocalHandle`]: an [`AgentSession`] behind the surfaces' seam
//! ([`SessionHandle`](agentsh_seam::SessionHandle)), so the RPC server, the MCP server and the
//! interactive mode drive a session here exactly as they drive a far side.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::UNIX_EPOCH;

use agentsh_protocol::wire::{
    ArtifactData, ArtifactList, BashData, JOB_VIEW_BYTES, JOB_VIEW_MAX_BYTES, ListedArtifact, Query,
};
use agentsh_protocol::{COMMAND_ABORTED, ToolDetails, ToolOutcome, ToolResult};
use agentsh_seam::{
    BangCall, BangPolicy, BoxFuture, HandleError, Reach, SessionHandle, ToolCall, answer_data,
};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::approval::Verdict;
use crate::audit::AuditSource;
use crate::error::SessionError;
use crate::session::{AgentSession, PolicySource, SessionOptions};
use crate::tool::ToolContext;
use agentsh_artifact_store::ArtifactInfo;
use agentsh_bash_policy::TierSource;
use agentsh_config::HELLO_SETTINGS_SOURCE;
use agentsh_config::Settings;
use agentsh_jobs::JobToolCall;
use agentsh_jobs::ToolUpdate;

/// A fresh id for a user's command in the audit log: unique within the process.
fn next_bang_id() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    format!(
        "bang-{}",
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// The key of a hello's settings that holds the approval policy's tiers of a far side's
/// client (beside the execution sections).
pub const POLICY_TIERS_KEY: &str = "policyTiers";

/// Why a [`LocalHandle`] made without options refuses settings.
const SETTINGS_UNSUPPORTED: &str =
    "this server does not take settings in a hello (only `agentsh rpc` does)";

/// A session here, as the surfaces drive it. Cheap to share: hold it as an
/// `Arc<dyn SessionHandle>`.
pub struct LocalHandle {
    current: RwLock<AgentSession>,
    /// What settings are applied to: a new session is made from these with them.
    options: Option<SessionOptions>,
}

impl LocalHandle {
    /// `session` behind the seam; settings it is asked to apply are refused.
    pub fn new(session: AgentSession) -> Self {
        Self {
            current: RwLock::new(session),
            options: None,
        }
    }

    /// `session`, made from `options`, behind the seam: applying settings makes a new session
    /// from `options` with them applied (the same cwd and home, a fresh id), and shuts the old
    /// one down once the new one stands.
    pub fn renewable(session: AgentSession, options: SessionOptions) -> Self {
        Self {
            current: RwLock::new(session),
            options: Some(options),
        }
    }

    /// The session now (another one after settings were applied).
    pub fn session(&self) -> AgentSession {
        self.current
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Shares it as a handle.
    pub fn into_handle(self) -> Arc<dyn SessionHandle> {
        Arc::new(self)
    }

    /// What makes a session here in `cwd` with `settings` each time it is called (the
    /// `--listen` server's: one session per connection), as a handle. The audit log names
    /// their mode `rpc`; see [`factory_for`](Self::factory_for).
    pub fn factory(
        settings: Settings,
        cwd: PathBuf,
    ) -> impl Fn() -> Result<Arc<dyn SessionHandle>, SessionError> + Send + Sync + 'static {
        Self::factory_for(settings, cwd, "rpc")
    }

    /// [`factory`](Self::factory), the audit log naming the sessions' mode `mode`
    /// (`interactive` for the interactive mode's own session).
    pub fn factory_for(
        settings: Settings,
        cwd: PathBuf,
        mode: &'static str,
    ) -> impl Fn() -> Result<Arc<dyn SessionHandle>, SessionError> + Send + Sync + 'static {
        move || {
            let session = AgentSession::new(SessionOptions {
                settings: settings.clone(),
                cwd: cwd.clone(),
                mode: Some(mode.to_owned()),
                ..SessionOptions::default()
            })?;
            Ok(Self::new(session).into_handle())
        }
    }
}

impl std::fmt::Debug for LocalHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalHandle")
            .field("id", &self.session().id())
            .field("renewable", &self.options.is_some())
            .finish_non_exhaustive()
    }
}

fn failed(error: impl std::fmt::Display) -> HandleError {
    HandleError::Failed(error.to_string())
}

impl SessionHandle for LocalHandle {
    fn id(&self) -> String {
        self.session().id().to_owned()
    }

    fn tool_call<'a>(
        &'a self,
        call: ToolCall<'a>,
    ) -> BoxFuture<'a, Result<ToolOutcome, HandleError>> {
        let session = self.session();
        Box::pin(async move {
            let ToolCall {
                id,
                name,
                arguments,
                tool_names,
                cancel,
                pty_host,
                on_update,
                no_jobs,
                approver,
            } = call;
            if name == crate::BASH_TOOL {
                let context = ToolContext {
                    tool_names: tool_names.to_vec(),
                    cancel,
                    pty_host,
                    skip_live_updates: on_update.is_none(),
                    no_jobs,
                    approver,
                };
                let mut on_update = on_update;
                let outcome = session
                    .execute_tool(id, arguments, context, |update: ToolUpdate| {
                        if let Some(on_update) = on_update.as_mut() {
                            on_update(&update.text);
                        }
                    })
                    .await;
                return Ok(session.with_job_notices(outcome));
            }
            let call = JobToolCall {
                id: id.to_owned(),
                approver,
                cancel: cancel.clone(),
            };
            let job_tool = session.execute_job_tool_for(name, arguments, &call);
            tokio::pin!(job_tool);
            // An abort ends a waiting job tool at once (the job itself goes on).
            let answered = tokio::select! {
                answered = &mut job_tool => answered,
                () = cancel.cancelled() => {
                    return Ok(ToolOutcome::Aborted(ToolResult::new(
                        COMMAND_ABORTED.to_owned(),
                        ToolDetails::not_run(session.cwd(), session.settings().bash.default_timeout),
                        true,
                    )));
                }
            };
            answered
                .map(|outcome| session.with_job_notices(outcome))
                .ok_or_else(|| {
                    HandleError::Failed(agentsh_protocol::unknown_tool(name).unwrap_or_default())
                })
        })
    }

    fn bang<'a>(&'a self, bang: BangCall<'a>) -> BoxFuture<'a, Result<BashData, HandleError>> {
        let session = self.session();
        Box::pin(async move {
            let BangCall {
                command,
                options,
                cancel,
                on_output,
                policy,
            } = bang;
            // A command the person typed is not judged, only audited; one that came where any
            // process could send it is judged as a model's.
            let (call_id, verdict) = match &policy {
                BangPolicy::Audited => (next_bang_id(), Verdict::unjudged()),
                BangPolicy::Judged { call_id, approver } => {
                    let judged = session
                        .gate()
                        .check(call_id, command, command, approver.as_ref(), &cancel)
                        .await;
                    match judged {
                        Ok(verdict) => (call_id.clone(), verdict),
                        Err(refusal) => {
                            let _ = session.audit_decision(
                                AuditSource::Model,
                                command,
                                session.cwd(),
                                refusal.verdict(),
                            );
                            return Err(HandleError::Failed(refusal.into_text()));
                        }
                    }
                }
            };
            let source = match policy {
                BangPolicy::Audited => AuditSource::User,
                BangPolicy::Judged { .. } => AuditSource::Model,
            };
            session
                .audit_decision(source, command, session.cwd(), &verdict)
                .map_err(HandleError::Failed)?;
            let started = std::time::Instant::now();
            let result = match on_output {
                Some(on_output) => {
                    let run = session.execute_bash_with(command, options, on_output);
                    abortable(&session, &cancel, run).await
                }
                None => abortable(&session, &cancel, session.execute_bash(command, options)).await,
            }
            .map_err(failed);
            match &result {
                Ok(result) => session.audit_end(
                    &call_id,
                    result.exit_code,
                    started,
                    result.summary.artifact_id.as_deref(),
                ),
                Err(_) => session.audit_end(&call_id, None, started, None),
            }
            let result = result?;
            let text = session.bang_text(command, &result);
            Ok(BashData { result, text })
        })
    }

    fn query(
        &self,
        query: Query,
        _reach: Reach,
    ) -> BoxFuture<'_, Result<Option<Box<RawValue>>, HandleError>> {
        let session = self.session();
        match query {
            Query::ReadArtifact {
                artifact_id,
                offset,
                limit,
            } => Box::pin(async move {
                answer_data(&read_artifact(session, artifact_id, offset, limit).await?)
            }),
            Query::ListArtifacts => Box::pin(async move {
                // A listing reads the directory: off the async threads.
                let listed = tokio::task::spawn_blocking(move || session.list_artifacts())
                    .await
                    .map_err(|err| failed(format_args!("internal error: {err}")))?
                    .map_err(failed)?;
                answer_data(&ArtifactList {
                    artifacts: listed.iter().map(listed_artifact).collect(),
                })
            }),
            Query::Status => Box::pin(std::future::ready(answer_data(&session.status()))),
            Query::JobView { job_id, bytes } => {
                let bytes = bytes.unwrap_or(JOB_VIEW_BYTES).min(JOB_VIEW_MAX_BYTES) as usize;
                let look = session.find_job_view(&job_id, bytes).map_err(failed);
                Box::pin(std::future::ready(look.and_then(|view| answer_data(&view))))
            }
            Query::SecretInput { job_id, text } => {
                let sent = session.secret_input(&job_id, &text.0);
                // The text was a secret: not left in memory longer than needed.
                let mut text = text.0.into_bytes();
                text.fill(0);
                Box::pin(std::future::ready(
                    sent.map(|()| None).map_err(HandleError::Failed),
                ))
            }
            Query::Complete { word, kind } => Box::pin(async move {
                // A listing reads directories: off the async threads.
                let cwd = session.cwd().to_path_buf();
                let snapshot = session.snapshot_path().map(Path::to_path_buf);
                let found = tokio::task::spawn_blocking(move || {
                    let path_var = std::env::var_os("PATH");
                    // The session's shells source it: their functions, aliases and PATH.
                    let snapshot = snapshot.and_then(|path| std::fs::read_to_string(path).ok());
                    crate::complete::complete(
                        &cwd,
                        &word,
                        kind,
                        path_var.as_deref(),
                        snapshot.as_deref(),
                    )
                })
                .await
                .map_err(|err| failed(format_args!("internal error: {err}")))?;
                answer_data(&found)
            }),
        }
    }

    fn read_artifact(
        &self,
        id: String,
        offset: Option<u64>,
        limit: Option<u64>,
    ) -> BoxFuture<'_, Result<ArtifactData, HandleError>> {
        // The query's answer without its trip through JSON (an artifact can be large).
        Box::pin(read_artifact(self.session(), id, offset, limit))
    }

    fn artifact_size(&self, id: String) -> BoxFuture<'_, Result<Option<u64>, HandleError>> {
        let session = self.session();
        Box::pin(async move {
            // Any artifact of the store, not only the session's own (another process's output
            // is readable too).
            let store = session
                .artifacts()
                .ok_or_else(|| failed("artifacts are unavailable in this session"))?;
            let path = store.resolve(&id).map_err(failed)?;
            Ok(std::fs::metadata(&path).ok().map(|meta| meta.len()))
        })
    }

    fn apply_settings(&self, settings: Value) -> BoxFuture<'_, Result<(), HandleError>> {
        Box::pin(async move {
            let Some(base) = &self.options else {
                return Err(HandleError::Failed(SETTINGS_UNSUPPORTED.to_owned()));
            };
            // A far side's client sends its policy's tiers beside the sections.
            let mut settings = settings;
            let forwarded = match &mut settings {
                Value::Object(sections) => sections.remove(POLICY_TIERS_KEY),
                _ => None,
            };
            let policy = match forwarded {
                Some(tiers) => PolicySource::Forwarded(
                    serde_json::from_value::<Vec<TierSource>>(tiers).map_err(|err| {
                        failed(format_args!(
                            "config error in {HELLO_SETTINGS_SOURCE}: {POLICY_TIERS_KEY}: {err}"
                        ))
                    })?,
                ),
                None => base.policy.clone(),
            };
            let options = SessionOptions {
                settings: base
                    .settings
                    .with_execution_settings(&settings)
                    .map_err(failed)?,
                session_id: None,
                policy,
                ..base.clone()
            };
            // Making a session may take the rc snapshot: off the async threads. A sandbox the
            // kernel cannot enforce fails the new session (`Sandbox unavailable`).
            let session = tokio::task::spawn_blocking(move || AgentSession::new(options))
                .await
                .map_err(|err| failed(format_args!("internal error: {err}")))?
                .map_err(failed)?;
            let old = std::mem::replace(
                &mut *self
                    .current
                    .write()
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
                session,
            );
            // Its shells and jobs, with their trees, end before the settings count as applied.
            old.shutdown().await;
            Ok(())
        })
    }

    fn subscribe(&self, answers_secrets: bool) -> agentsh_seam::Subscription {
        self.session().events().subscribe(answers_secrets)
    }

    fn context_messages(&self) -> Vec<String> {
        self.session().context_messages()
    }

    fn take_warnings(&self) -> Vec<String> {
        self.session().take_warnings()
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        let session = self.session();
        Box::pin(async move { session.shutdown().await })
    }
}

/// Drives a bang command's `run` to its end; when `cancel` fires first, aborts the session's
/// bang command and keeps driving it (its result is the aborted one). `run` is polled first:
/// its first poll registers the command with the session, so an abort already requested
/// reaches it.
async fn abortable<T>(
    session: &AgentSession,
    cancel: &agentsh_seam::CancellationToken,
    run: impl Future<Output = T>,
) -> T {
    tokio::pin!(run);
    tokio::select! {
        biased;
        result = &mut run => result,
        () = cancel.cancelled() => {
            session.abort_bash();
            run.await
        }
    }
}

/// An artifact as a listing shows it.
/// Lines `offset ..` of artifact `id`, at most `limit`, as a query answers them.
async fn read_artifact(
    session: AgentSession,
    id: String,
    offset: Option<u64>,
    limit: Option<u64>,
) -> Result<ArtifactData, HandleError> {
    // A read streams the file: off the async threads.
    let artifact = tokio::task::spawn_blocking(move || session.read_artifact(&id, offset, limit))
        .await
        .map_err(|err| failed(format_args!("internal error: {err}")))?
        .map_err(failed)?;
    Ok(ArtifactData {
        text: artifact.text,
        total_lines: artifact.total_lines,
        path: artifact.path.to_string_lossy().into_owned(),
    })
}

fn listed_artifact(info: &ArtifactInfo) -> ListedArtifact {
    let since_epoch = info.modified.duration_since(UNIX_EPOCH).unwrap_or_default();
    ListedArtifact {
        id: info.id.to_string(),
        size: info.size,
        modified_ms: u64::try_from(since_epoch.as_millis()).unwrap_or(u64::MAX),
    }
}
