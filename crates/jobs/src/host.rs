//! [`JobHost`]: what a session gives the calls and jobs it runs. The one place the session and
//! its jobs meet: this crate knows no session, only this trait.

use std::future::Future;
use std::path::Path;
use std::sync::Arc;

use agentsh_artifact_store::ArtifactReservation;
use agentsh_output_sink::{OutputSink, Secrets};
use agentsh_process::sandbox::SandboxSpec;
use agentsh_protocol::Timeout;
use agentsh_pty_runtime::PtyCommand;
use agentsh_shell_executor::{CancellationToken, ExecRequest, ShellExecutor};

/// Who a job tool call is, for the approval policy.
#[derive(Default)]
pub struct JobToolCall {
    /// The call's id.
    pub id: String,
    /// Who answers its approval requests.
    pub approver: Option<Arc<dyn agentsh_seam::Approver>>,
    /// Cancelled when the call is aborted.
    pub cancel: CancellationToken,
}

/// The numbers a session's calls and jobs run by, from its settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobLimits {
    /// `output.max_bytes`: what a result shows at most (the tail of a call's output).
    pub output_max_bytes: u64,
    /// `jobs.max_running`: jobs running at once at most.
    pub max_running: usize,
    /// `jobs.max_log_bytes`: where a job's log artifact stops growing.
    pub max_log_bytes: u64,
    /// `bash.default_timeout`: what a job tool's result names as the timeout.
    pub default_timeout: Timeout,
    /// `limits.memory`, resolved: what `job_list` shows a job's memory against.
    pub memory: Option<u64>,
}

/// What a session gives the calls and jobs it runs: its settings' numbers, its artifacts, its
/// sandbox and secrets, the executor and the requests it runs commands with, and its approval
/// of text typed at a job's shell prompt. Cheap to clone: a job's log that is reserved when the
/// output first overflows keeps a clone.
pub trait JobHost: Clone + Send + Sync + 'static {
    /// The numbers calls and jobs run by.
    fn limits(&self) -> JobLimits;

    /// The session's working directory (what a job tool's result names).
    fn cwd(&self) -> &Path;

    /// The sandbox every command runs under, `None` when off: a job's output is watched for
    /// denials under one, and a failed call's result gets the sandbox line.
    fn sandbox(&self) -> Option<&SandboxSpec>;

    /// The secrets redacted from every output (`None` when redaction is off).
    fn secrets(&self) -> Option<Arc<Secrets>>;

    /// Reserves an artifact (a job's log), best effort: a failure is the session's warning,
    /// and `None`.
    fn allocate_artifact(&self) -> Option<ArtifactReservation>;

    /// The file of artifact `id` (digits), when the session's store has it.
    fn artifact_path(&self, id: &str) -> Option<std::path::PathBuf>;

    /// How `command`'s output is shaped for the model; `None` when shaping is off or the
    /// command is not one it shapes.
    fn shape_plan(&self, command: &str) -> Option<agentsh_shape::Plan>;

    /// A foreground call's sink: `output.max_bytes`, the head capture for `head_lines`, and
    /// an artifact allocated when the output first overflows.
    fn new_sink(&self, head_lines: Option<u32>) -> OutputSink;

    /// The request that runs `command` in `cwd` on the session's `tool` shell (its shell,
    /// environment, snapshot, limits and sandbox), with a fresh cancel token that the session's
    /// shutdown cancels.
    fn exec_request(&self, command: &str, cwd: &Path, timeout: Timeout) -> ExecRequest;

    /// `command` in `cwd` as the PTY runtime runs it, with the session's shell, environment
    /// and sandbox.
    fn pty_command(&self, command: &str, cwd: &Path, timeout: Timeout) -> PtyCommand;

    /// The shell executor calls and piped jobs run on.
    fn executor(&self) -> &ShellExecutor;

    /// Judges `text`, typed by `call` at the prompt of a job's shell, as a command line
    /// (`shown` is how texts show it): `Err` with the refusal's text when it may not go in.
    fn judge_input<'a>(
        &'a self,
        call: &'a JobToolCall,
        text: &'a str,
        shown: &'a str,
    ) -> impl Future<Output = Result<(), String>> + Send + 'a;
}
