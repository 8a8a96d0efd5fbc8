//! One foreground call: how it comes back from [`ShellExecutor::run`](crate::ShellExecutor::run)
//! ([`Ran`]: finished, or still running after its yield time) and how its command ended
//! ([`CommandExit`]).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use agentsh_process::shell::apply_prefix;
use agentsh_protocol::{
    BashResult, CANCELLED_ANNOTATION, LimitHit, OutputSummary, timeout_annotation,
};
use tokio_util::sync::CancellationToken;

use crate::error::ExecError;
use crate::request::ExecRequest;
use crate::shell::{Output, RunOutcome, ShellProcess, StopReason, TreeLimits};

/// How a command ended (a foreground call's, a job's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CommandExit {
    /// The command's exit status; `None` when it was stopped or none could be obtained.
    pub exit_code: Option<i32>,
    /// Its timeout stopped it.
    pub timed_out: bool,
    /// It was aborted or killed (the request's cancel token, [`JobRun::kill`]).
    pub killed: bool,
    /// Its shell died or had to be replaced on the way (a job's shell is never reused).
    pub shell_restarted: bool,
    /// It was ended because a program that needs a terminal (`vim`) started in it.
    pub needs_terminal: Option<&'static str>,
    /// The resource limit its processes passed, when one did.
    pub limit: Option<LimitHit>,
}

impl CommandExit {
    /// The result of a call that ended so, its output summarised as `summary`; `timeout` is the
    /// one it ran with (the annotation of a timed-out command names it), `blocked_hosts` what
    /// a sandbox's network allowlist refused while it ran.
    pub fn result(
        self,
        summary: OutputSummary,
        timeout: Duration,
        blocked_hosts: Vec<String>,
    ) -> BashResult {
        let annotation = if self.timed_out {
            Some(timeout_annotation(timeout.as_secs_f64()))
        } else if self.killed {
            Some(CANCELLED_ANNOTATION.to_owned())
        } else {
            None
        };
        BashResult {
            summary,
            annotation,
            exit_code: self.exit_code,
            cancelled: self.killed || self.timed_out,
            timed_out: self.timed_out,
            session_restarted: self.shell_restarted,
            blocked_hosts,
            needs_terminal: self.needs_terminal.map(str::to_owned),
            limit: self.limit,
        }
    }

    pub(crate) fn from_outcome(outcome: &Result<RunOutcome, ExecError>) -> Self {
        match outcome {
            Ok(outcome) => Self {
                exit_code: outcome.exit_code,
                timed_out: outcome.stopped == Some(StopReason::Timeout),
                killed: outcome.stopped == Some(StopReason::Abort),
                shell_restarted: outcome.restarted,
                needs_terminal: outcome.needs_terminal,
                limit: outcome.limit,
            },
            Err(_) => Self {
                shell_restarted: true,
                ..Self::default()
            },
        }
    }
}

/// What [`ShellExecutor::run`] came to.
pub enum Ran<'o, O> {
    /// The command ended (within the yield time, when there was one): an ordinary call, its
    /// shell kept when it can be.
    Finished(Finished<O>),
    /// The command still runs after the yield time: it is the caller's now.
    Running(Running<'o, O>),
}

impl<O> std::fmt::Debug for Ran<'_, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Finished(finished) => f.debug_tuple("Finished").field(&finished.exit).finish(),
            Self::Running(_) => f.write_str("Running"),
        }
    }
}

impl<O: Output> Ran<'_, O> {
    /// The call's end: at once when it finished, else once its command ended (waited for here).
    pub async fn finish(self) -> Result<Finished<O>, ExecError> {
        match self {
            Self::Finished(finished) => Ok(finished),
            Self::Running(running) => running.finish().await,
        }
    }
}

/// A call that ended.
#[derive(Debug)]
pub struct Finished<O> {
    /// How its command ended.
    pub exit: CommandExit,
    /// The `host:port`s a sandbox's network allowlist refused for the shell while it ran (each
    /// once, in the order first refused).
    pub blocked_hosts: Vec<String>,
    /// The output it was given, back.
    pub output: O,
}

/// The command, its shell and its output, run to its end.
pub(crate) type CallRun<'o, O> =
    Pin<Box<dyn Future<Output = (ShellProcess, Result<RunOutcome, ExecError>, O)> + Send + 'o>>;

/// A call whose command still runs after its yield time, in a shell that is no longer the
/// session's: [`into_job`](Self::into_job) makes it a job, [`finish`](Self::finish) waits for
/// it. Dropped, it ends the command's whole tree and its shell.
pub struct Running<'o, O> {
    pub(crate) run: CallRun<'o, O>,
    /// The request's cancel token: it stops the command.
    pub(crate) cancel: CancellationToken,
    /// The network link's mark from before the command started.
    pub(crate) mark: Option<u64>,
    /// The shell's supervisor: every process of the command descends from it.
    pub(crate) root: Option<u32>,
}

impl<'o, O: Output + 'o> Running<'o, O> {
    /// Starts `request`'s command (prefix applied) in `shell`, into `output`: nothing runs
    /// until the run is polled.
    pub(crate) fn new(mut shell: ShellProcess, request: ExecRequest, mut output: O) -> Self {
        let mark = shell.network_mark();
        let root = shell.supervisor_pid();
        let cancel = request.cancel.clone();
        let run = Box::pin(async move {
            let outcome = run_command(&mut shell, &request, &mut output).await;
            (shell, outcome, output)
        });
        Self {
            run,
            cancel,
            mark,
            root,
        }
    }

    /// Waits for the command's end (the request's cancel token still stops it), then closes its
    /// shell: it left the cache when the call yielded.
    pub async fn finish(self) -> Result<Finished<O>, ExecError> {
        let (shell, outcome, output) = self.run.await;
        let exit = CommandExit::from_outcome(&outcome);
        let blocked_hosts = shell.blocked_since(self.mark);
        shell.close().await;
        outcome?;
        Ok(Finished {
            exit,
            blocked_hosts,
            output,
        })
    }
}

/// Runs the request's command (prefix applied) in `shell`.
pub(crate) async fn run_command(
    shell: &mut ShellProcess,
    request: &ExecRequest,
    output: &mut dyn Output,
) -> Result<RunOutcome, ExecError> {
    let command = match request.prefix.as_deref() {
        Some(prefix) => apply_prefix(prefix, &request.command),
        None => request.command.clone(),
    };
    shell
        .run(
            &command,
            &request.cwd,
            request.timeout,
            TreeLimits {
                resources: request.resources,
                late: request.late_limits.as_ref(),
            },
            &request.cancel,
            output,
        )
        .await
}
