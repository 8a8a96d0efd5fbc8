//! Commands that outlive their call: a job in a shell of its own, and a call that
//! yields — its command goes on as a job in the session's shell, which leaves the cache.
//!
//! A job's task owns its shell: it runs the command, passes every raw output chunk to the
//! caller's [`JobChunks`], then follows what the processes the command left behind (`server &`)
//! still write, until none of them holds the output and none is left, and closes the shell
//! (its whole process tree). [`JobRun::kill`] (or the request's cancel token) stops it at any
//! point, the way a timeout stops a command. Job shells are not in the cache: they count toward
//! no `max_shells`, and a session's calls never wait for them.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agentsh_process::shell::apply_prefix;
use tokio::sync::{oneshot, watch};
use tokio_util::sync::CancellationToken;

use crate::error::ExecError;
use crate::executor::{ShellExecutor, check_request};
use crate::request::ExecRequest;
use crate::shell::{Output, RunOutcome, ShellProcess, StopReason};

/// Where a job's raw output chunks go, from the job's task, in order.
pub type JobChunks = Box<dyn FnMut(&[u8]) + Send>;

/// How a job's command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct JobExit {
    /// The command's exit status; `None` when it was stopped or none could be obtained.
    pub exit_code: Option<i32>,
    /// Its timeout stopped it.
    pub timed_out: bool,
    /// It was killed ([`JobRun::kill`], the request's cancel token).
    pub killed: bool,
    /// Its shell died or had to be replaced on the way (a job's shell is never reused).
    pub shell_restarted: bool,
    /// It was ended because a program that needs a terminal (`vim`) started in it.
    pub needs_terminal: Option<&'static str>,
}

impl JobExit {
    fn from_outcome(outcome: &Result<RunOutcome, ExecError>) -> Self {
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
    Returned(JobExit),
    /// Its command and everything it left are gone, its shell closed: nothing more comes.
    Ended(JobExit),
}

impl JobProgress {
    /// How the command ended, once it has.
    pub fn exit(self) -> Option<JobExit> {
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
    pub async fn ended(&self) -> JobExit {
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

/// What [`ShellExecutor::execute_or_yield`] came to.
#[derive(Debug)]
pub enum Yielded {
    /// The command ended within the yield time: an ordinary call, its shell kept; with the
    /// `host:port`s a sandbox's network allowlist refused for the shell while it ran.
    Finished(JobExit, Vec<String>),
    /// The command still runs: it goes on as this job, in the shell that was the session's.
    Job(JobRun),
}

/// The job task's [`Output`]: every chunk to the caller.
struct ChunkOutput(JobChunks);

impl Output for ChunkOutput {
    fn chunk(&mut self, bytes: &[u8]) {
        (self.0)(bytes);
    }

    fn head_satisfied(&self) -> bool {
        false
    }
}

/// The part of a yielding call both its caller and its task decide under one lock: whether the
/// caller gave up waiting (the task then keeps the shell as a job's) or the task handed the
/// shell back first.
#[derive(Default)]
struct Handover {
    yielded: bool,
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
        let mut shell = ShellProcess::start(
            &request.shell,
            Vec::clone(&env),
            request.snapshot.as_deref(),
            &request.cwd,
            request.sandbox.as_ref(),
        )
        .await?;
        shell.for_job();
        let root = shell.supervisor_pid();
        let (progress_tx, progress) = watch::channel(JobProgress::Running);
        let kill = request.cancel.clone();
        let blocked = Blocked::default();
        let task_blocked = Arc::clone(&blocked);
        tokio::spawn(async move {
            let mut output = ChunkOutput(output);
            let mark = shell.network_mark();
            let outcome = run_command(&mut shell, &request, &mut output).await;
            let ending = Ending::new(&request, &progress_tx, &task_blocked, mark);
            finish_job(shell, outcome, output, ending).await;
        });
        Ok(JobRun {
            kill,
            progress,
            blocked,
            root,
        })
    }

    /// Runs `request` on the session's shell like [`execute`](Self::execute), its raw output
    /// going to `output`; when it still runs after `yield_after`, the call stops waiting: the
    /// command goes on as a job in that shell, which leaves the cache (the session's next call
    /// starts a new one), and is closed when the job ends.
    pub async fn execute_or_yield(
        &self,
        request: ExecRequest,
        output: JobChunks,
        yield_after: Duration,
    ) -> Result<Yielded, ExecError> {
        let (hold, env) = self.hold_slot(&request).await?;
        let outcome = async {
            let mut slot = tokio::select! {
                slot = hold.slot().shell.lock() => slot,
                () = request.cancel.cancelled() => {
                    let killed = JobExit { killed: true, ..JobExit::default() };
                    return Ok(Yielded::Finished(killed, Vec::new()));
                }
            };
            let usable = slot.as_mut().is_some_and(|shell| {
                shell.is_alive()
                    && shell.spec() == &request.shell
                    && shell.sandbox() == request.sandbox.as_ref()
            });
            let mut shell = match slot.take() {
                Some(shell) if usable => shell,
                old => {
                    if let Some(old) = old {
                        old.close().await;
                    }
                    ShellProcess::start(
                        &request.shell,
                        Vec::clone(&env),
                        request.snapshot.as_deref(),
                        &request.cwd,
                        request.sandbox.as_ref(),
                    )
                    .await?
                }
            };
            let handover = Arc::new(Mutex::new(Handover::default()));
            let (back_tx, mut back) = oneshot::channel();
            let (progress_tx, progress) = watch::channel(JobProgress::Running);
            let task_handover = Arc::clone(&handover);
            let task_request = request.clone();
            let blocked = Blocked::default();
            let task_blocked = Arc::clone(&blocked);
            let mark = shell.network_mark();
            let root = shell.supervisor_pid();
            tokio::spawn(async move {
                let mut output = ChunkOutput(output);
                let outcome = run_command(&mut shell, &task_request, &mut output).await;
                let next = {
                    let state = task_handover.lock().unwrap_or_else(PoisonError::into_inner);
                    if state.yielded {
                        TaskNext::Job(shell, outcome)
                    } else {
                        match back_tx.send((shell, outcome)) {
                            Ok(()) => TaskNext::HandedBack,
                            Err((shell, outcome)) => TaskNext::Dropped(shell, outcome),
                        }
                    }
                };
                match next {
                    // The caller takes the shell back: an ordinary call.
                    TaskNext::HandedBack => {}
                    // The caller's future was dropped before it decided: like a dropped call.
                    TaskNext::Dropped(shell, outcome) => {
                        let exit = JobExit::from_outcome(&outcome);
                        shell.close().await;
                        let _ = progress_tx.send(JobProgress::Ended(exit));
                    }
                    // Yielded: the shell is the job's now.
                    TaskNext::Job(shell, outcome) => {
                        let ending = Ending::new(&task_request, &progress_tx, &task_blocked, mark);
                        finish_job(shell, outcome, output, ending).await;
                    }
                }
            });
            let waited = tokio::time::timeout(yield_after, &mut back).await;
            let returned = match waited {
                Ok(Ok(returned)) => Some(returned),
                Ok(Err(_)) => None,
                Err(_elapsed) => {
                    let mut state = handover.lock().unwrap_or_else(PoisonError::into_inner);
                    if let Ok(returned) = back.try_recv() {
                        Some(returned)
                    } else {
                        state.yielded = true;
                        None
                    }
                }
            };
            let Some((mut shell, outcome)) = returned else {
                // The slot stays empty: the session's next call starts a new shell.
                drop(slot);
                return Ok(Yielded::Job(JobRun {
                    kill: request.cancel.clone(),
                    progress,
                    blocked,
                    root,
                }));
            };
            let exit = JobExit::from_outcome(&outcome);
            let refused = shell.blocked_since(mark);
            outcome?;
            if shell.is_alive() {
                *slot = Some(shell);
            } else {
                shell.close().await;
            }
            Ok(Yielded::Finished(exit, refused))
        }
        .await;
        self.release(hold, &request).await;
        outcome
    }
}

/// What a yielding call's task does once its command returned.
enum TaskNext {
    HandedBack,
    Dropped(ShellProcess, Result<RunOutcome, ExecError>),
    Job(ShellProcess, Result<RunOutcome, ExecError>),
}

/// Runs the request's command (prefix applied) in `shell`.
async fn run_command(
    shell: &mut ShellProcess,
    request: &ExecRequest,
    output: &mut ChunkOutput,
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
        request: &'a ExecRequest,
        progress: &'a watch::Sender<JobProgress>,
        blocked: &'a Blocked,
        mark: Option<u64>,
    ) -> Self {
        Self {
            cancel: &request.cancel,
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
    mut output: ChunkOutput,
    ending: Ending<'_>,
) {
    let exit = JobExit::from_outcome(&outcome);
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
