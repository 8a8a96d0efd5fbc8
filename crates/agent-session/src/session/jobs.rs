//! Where the session meets its jobs (`agentsh-jobs`): what it gives them ([`JobHost`]), and
//! its public API over its job table, forwarded.

use std::path::Path;
use std::sync::Arc;

use agentsh_artifact_store::ArtifactReservation;
use agentsh_jobs::{JobHost, JobLimits, JobToolCall, Jobs};
use agentsh_output_sink::{OutputSink, Secrets};
use agentsh_process::sandbox::{SandboxNetwork, SandboxSpec};
use agentsh_protocol::{
    JobSummary, JobView, ResourceLimits, SandboxStatus, SessionStatus, ToolOutcome,
};
use agentsh_pty_runtime::PtyCommand;
use agentsh_shell_executor::{ExecRequest, ShellExecutor, Surface};
use serde_json::Value;

use super::AgentSession;
use crate::Timeout;
use crate::approval::Refusal;
use crate::error::SessionError;

impl JobHost for AgentSession {
    fn limits(&self) -> JobLimits {
        let settings = self.settings();
        JobLimits {
            output_max_bytes: settings.output.max_bytes,
            max_running: settings.jobs.max_running,
            max_log_bytes: settings.jobs.max_log_bytes,
            default_timeout: settings.bash.default_timeout,
            memory: self.resources().memory,
        }
    }

    fn cwd(&self) -> &Path {
        Self::cwd(self)
    }

    fn sandbox(&self) -> Option<&SandboxSpec> {
        Self::sandbox(self)
    }

    fn secrets(&self) -> Option<Arc<Secrets>> {
        Self::secrets(self)
    }

    fn allocate_artifact(&self) -> Option<ArtifactReservation> {
        Self::allocate_artifact(self)
    }

    fn artifact_path(&self, id: &str) -> Option<std::path::PathBuf> {
        self.inner.store.as_ref().ok()?.resolve(id).ok()
    }

    fn shape_plan(&self, command: &str) -> Option<agentsh_shape::Plan> {
        self.settings().shape.shaping()?.plan(command)
    }

    fn new_sink(&self, head_lines: Option<u32>) -> OutputSink {
        Self::new_sink(self, head_lines)
    }

    fn exec_request(&self, command: &str, cwd: &Path, timeout: Timeout) -> ExecRequest {
        Self::exec_request(
            self,
            command,
            cwd,
            timeout,
            Surface::Tool,
            self.call_token(),
        )
    }

    fn pty_command(&self, command: &str, cwd: &Path, timeout: Timeout) -> PtyCommand {
        Self::pty_command(self, command, cwd, timeout)
    }

    fn executor(&self) -> &ShellExecutor {
        &self.inner.executor
    }

    async fn judge_input(&self, call: &JobToolCall, text: &str, shown: &str) -> Result<(), String> {
        self.gate()
            .check(&call.id, text, shown, call.approver.as_ref(), &call.cancel)
            .await
            .map(drop)
            .map_err(Refusal::into_text)
    }
}

impl AgentSession {
    /// The session's background jobs.
    pub(crate) fn jobs(&self) -> &Arc<Jobs> {
        &self.inner.jobs
    }

    /// This session's jobs, oldest first (the last 100 that ended, and every running one).
    pub fn jobs_summary(&self) -> Vec<JobSummary> {
        self.inner.jobs.summaries()
    }

    /// Runs one of the job tools by name (`job_output`, `job_input`, `job_kill`, `job_list`);
    /// `None` for any other name.
    /// Text for a PTY job whose foreground program is a shell is judged by the approval policy
    /// as a command line; nobody can be asked here, so text that needs a yes is refused.
    pub async fn execute_job_tool(&self, name: &str, args: &Value) -> Option<ToolOutcome> {
        self.execute_job_tool_for(name, args, &JobToolCall::default())
            .await
    }

    /// [`execute_job_tool`](Self::execute_job_tool) for call `call.id`, whose approval
    /// requests `call.approver` answers.
    pub(crate) async fn execute_job_tool_for(
        &self,
        name: &str,
        args: &Value,
        call: &JobToolCall,
    ) -> Option<ToolOutcome> {
        self.inner.jobs.execute_tool(self, name, args, call).await
    }

    /// `outcome` closed with the notices waiting for the session's next tool result (jobs
    /// that ended or have been busy without output), each after a blank line.
    pub fn with_job_notices(&self, outcome: ToolOutcome) -> ToolOutcome {
        self.inner.jobs.with_notices(outcome)
    }

    /// Job `id` as a UI shows it: its [`JobSummary`] (as
    /// [`jobs_summary`](Self::jobs_summary) gives it), the last whole lines of its output that
    /// fit in `max_bytes`, its line count and log artifact, and for a PTY job its terminal's
    /// screen. `None` when the session has no job `id` (never had one, or forgot it among
    /// the oldest finished ones).
    ///
    /// A look, not a read: the model's `job_output` still returns everything no result has
    /// shown, and its `until` still looks at every line no `job_output` returned.
    pub fn job_view(&self, id: u64, max_bytes: usize) -> Option<JobView> {
        self.inner.jobs.view(id, max_bytes)
    }

    /// [`job_view`](Self::job_view) of the job named `id` as the job tools take it (`"3"`,
    /// the RPC `job_view`'s); for an id no job has, the job tools' own error (`No job 9. Jobs:
    /// 1, 2`).
    pub fn find_job_view(&self, id: &str, max_bytes: usize) -> Result<JobView, SessionError> {
        self.inner
            .jobs
            .find_view(id, max_bytes)
            .map_err(SessionError::NoSuchJob)
    }

    /// Types `text`, which a person typed at job `job_id`'s hidden prompt, followed by Enter,
    /// after adding it to the session's secrets (`[REDACTED:input]`), so that nothing the
    /// session shows from then on holds it. Refused, with the reason, when `text` holds CR or
    /// LF, the job does not exist, has no terminal or has ended, or its terminal echoes now (the
    /// text would be shown).
    pub fn secret_input(&self, job_id: &str, text: &str) -> Result<(), String> {
        self.inner
            .jobs
            .secret_input(self.inner.secrets.as_deref(), job_id, text)
    }

    /// The session as a status line shows it: its cwd, shell, sandbox and jobs (what the RPC
    /// `status` request answers).
    pub fn status(&self) -> SessionStatus {
        SessionStatus {
            cwd: self.cwd().to_string_lossy().into_owned(),
            shell: self.shell_path().to_string_lossy().into_owned(),
            sandbox: self.sandbox().map(|policy| SandboxStatus {
                mode: policy.mode.to_string(),
                network: policy.network == SandboxNetwork::On,
                hosts: policy.network.proxy().map(|proxy| proxy.hosts.clone()),
            }),
            jobs: self.jobs_summary(),
        }
    }
}

/// What the session gives the commands its jobs and calls run.
impl AgentSession {
    /// The resource limits of each command tree, resolved at start.
    pub(crate) fn resources(&self) -> ResourceLimits {
        self.inner.resources
    }

    /// `command` as the PTY runtime runs it: the session's shell, environment, prefix, rc
    /// snapshot, sandbox (one the kernel can enforce: [`new`](Self::new) checked) and resource
    /// limits, in `cwd`, stopped after `timeout`.
    pub(crate) fn pty_command(&self, command: &str, cwd: &Path, timeout: Timeout) -> PtyCommand {
        let inner = &self.inner;
        PtyCommand {
            shell: inner.shell.clone(),
            env: inner.env.clone(),
            prefix: inner.prefix.clone(),
            snapshot: inner.snapshot.clone(),
            sandbox: self.sandbox().cloned(),
            limits: self.resources(),
            ..PtyCommand::new(command, cwd, timeout.duration())
        }
    }
}
