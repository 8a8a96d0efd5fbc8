//! How a call ends ([`Ran`], [`CommandExit`]), and commands that outlive their call: a job in a
//! shell of its own, and a call that yields — its command goes on as a job in the session's
//! shell, which leaves the cache.
//!
//! A job's task owns its shell: it runs the command, passes every raw output chunk to the
//! caller's [`JobChunks`], then follows what the processes the command left behind (`server &`)
//! still write, until none of them holds the output and none is left, and closes the shell
//! (its whole process tree). [`JobRun::kill`] (or the request's cancel token) stops it at any
//! point, the way a timeout stops a command. Job shells are not in the cache: they count toward
//! no `max_shells`, and a session's calls never wait for them.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agentsh_process::shell::apply_prefix;
use agentsh_protocol::{BashResult, CANCELLED_ANNOTATION, OutputSummary, timeout_annotation};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::error::ExecError;
use crate::executor::{ShellExecutor, check_request, start_shell};
use crate::request::ExecRequest;
use crate::shell::{Output, RunOutcome, ShellProcess, StopReason};

/// Where a job's raw output chunks go, from the job's task, in order.
pub type JobChunks = Box<dyn FnMut(&[u8]) + Send>;

impl Output for JobChunks {
    fn chunk(&mut self, bytes: &[u8]) {
        self(bytes);
    }
}

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
            },
            Err(_) => Self {
                shell_restarted: true,
                ..Self::default()
            },
        }
    }
}

/// Where a job is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobProgress {
    /// Its command runs.
    Running,
    /// Its command returned (or was stopped); processes it left behind may still run and write.
    Returned(CommandExit),
    /// Its command and everything it left are gone, its shell closed: nothing more comes.
    Ended(CommandExit),
}

impl JobProgress {
    /// How the command ended, once it has.
    pub fn exit(self) -> Option<CommandExit> {
        match self {
            Self::Running => None,
            Self::Returned(exit) | Self::Ended(exit) => Some(exit),
        }
    }
}

/// A running job: its progress, and the handle that kills it. Dropping it does not stop the
/// job (the request's cancel token, or [`JobRun::kill`], does).
#[derive(Debug, Clone)]
pub struct JobRun {
    kill: CancellationToken,
    progress: watch::Receiver<JobProgress>,
    blocked: Blocked,
    /// The job's supervisor: every process of the job descends from it.
    root: Option<u32>,
}

/// What a sandbox's network allowlist refused for a job's connections, as its task last saw
/// it (when the command returned, when the job ended).
type Blocked = Arc<Mutex<Vec<String>>>;

impl JobRun {
    /// Stops the job as a timeout stops a command, its whole tree and its shell; returns at
    /// once (wait with [`JobRun::ended`]).
    pub fn kill(&self) {
        self.kill.cancel();
    }

    /// Where the job is now.
    pub fn progress(&self) -> JobProgress {
        *self.progress.borrow()
    }

    /// The `host:port`s a sandbox's network allowlist refused for connections the job's
    /// processes made while it ran (each once, in the order first refused): complete once the
    /// job has ended, as of its command's return before. Empty without an allowlist.
    pub fn blocked_hosts(&self) -> Vec<String> {
        self.blocked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The pid every process of the job descends from (its shell's supervisor, a subreaper:
    /// also what called `setsid` or double-forked), while the job runs.
    pub fn root_pid(&self) -> Option<u32> {
        self.root
    }

    /// A receiver that sees every change of [`JobRun::progress`].
    pub fn watch(&self) -> watch::Receiver<JobProgress> {
        self.progress.clone()
    }

    /// Waits until the job has ended (its shell closed), and says how its command ended.
    pub async fn ended(&self) -> CommandExit {
        let mut progress = self.progress.clone();
        loop {
            if let JobProgress::Ended(exit) = *progress.borrow_and_update() {
                return exit;
            }
            if progress.changed().await.is_err() {
                // The task is gone without a word (the runtime is shutting down).
                return progress.borrow().exit().unwrap_or_default();
            }
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
type CallRun<'o, O> =
    Pin<Box<dyn Future<Output = (ShellProcess, Result<RunOutcome, ExecError>, O)> + Send + 'o>>;

/// A call whose command still runs after its yield time, in a shell that is no longer the
/// session's: [`into_job`](Self::into_job) makes it a job, [`finish`](Self::finish) waits for
/// it. Dropped, it ends the command's whole tree and its shell.
pub struct Running<'o, O> {
    pub(crate) run: CallRun<'o, O>,
    /// The request's cancel token: it stops the command.
    cancel: CancellationToken,
    /// The network link's mark from before the command started.
    pub(crate) mark: Option<u64>,
    /// The shell's supervisor: every process of the command descends from it.
    root: Option<u32>,
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

impl<O: Output + 'static> Running<'static, O> {
    /// The command goes on as a job: a task follows it to its end and what it leaves behind,
    /// then closes its shell. The request's cancel token kills it, as [`JobRun::kill`] does.
    pub fn into_job(self) -> JobRun {
        let (progress_tx, progress) = watch::channel(JobProgress::Running);
        let blocked = Blocked::default();
        let task_blocked = Arc::clone(&blocked);
        let Self {
            run,
            cancel,
            mark,
            root,
        } = self;
        let kill = cancel.clone();
        tokio::spawn(async move {
            let (shell, outcome, output) = run.await;
            let ending = Ending::new(&cancel, &progress_tx, &task_blocked, mark);
            finish_job(shell, outcome, output, ending).await;
        });
        JobRun {
            kill,
            progress,
            blocked,
            root,
        }
    }
}

impl ShellExecutor {
    /// Starts `request` as a job in a new shell of its own (rc snapshot, environment, cwd as for
    /// the session's shell; nothing of the session shell's state), outside the cache. Returns
    /// once the command was handed to the shell; `output` gets every raw chunk from then on.
    /// The request's cancel token kills the job, as [`JobRun::kill`] does.
    pub async fn start_job(
        &self,
        request: ExecRequest,
        output: JobChunks,
    ) -> Result<JobRun, ExecError> {
        check_request(&request)?;
        let (env, _key) = self.environment(&request);
        let mut shell = start_shell(&request, &env).await?;
        shell.for_job();
        Ok(Running::new(shell, request, output).into_job())
    }
}

/// Runs the request's command (prefix applied) in `shell`.
async fn run_command(
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
            &request.cancel,
            output,
        )
        .await
}

/// Where a job's task reports to once its command returned.
struct Ending<'a> {
    cancel: &'a CancellationToken,
    progress: &'a watch::Sender<JobProgress>,
    blocked: &'a Blocked,
    /// The network link's mark from before the command started.
    mark: Option<u64>,
}

impl<'a> Ending<'a> {
    fn new(
        cancel: &'a CancellationToken,
        progress: &'a watch::Sender<JobProgress>,
        blocked: &'a Blocked,
        mark: Option<u64>,
    ) -> Self {
        Self {
            cancel,
            progress,
            blocked,
            mark,
        }
    }

    /// Takes what the shell's network link refused since the command started.
    fn note_blocked(&self, shell: &ShellProcess) {
        *self.blocked.lock().unwrap_or_else(PoisonError::into_inner) =
            shell.blocked_since(self.mark);
    }
}

/// After a job's command returned: publishes that, follows what it left behind, closes the
/// shell, publishes the end.
async fn finish_job(
    mut shell: ShellProcess,
    outcome: Result<RunOutcome, ExecError>,
    mut output: impl Output,
    ending: Ending<'_>,
) {
    let exit = CommandExit::from_outcome(&outcome);
    ending.note_blocked(&shell);
    let _ = ending.progress.send(JobProgress::Returned(exit));
    if outcome.is_ok() && !ending.cancel.is_cancelled() {
        shell.follow_leftovers(ending.cancel, &mut output).await;
    }
    ending.note_blocked(&shell);
    shell.close().await;
    // Killed while it followed leftovers: the command had returned on its own, its status
    // stands; the processes it left were ended.
    let _ = ending.progress.send(JobProgress::Ended(exit));
}
