//! Commands that outlive their call: a job in a shell of its own, and a call that yields — its
//! command goes on as a job in the session's shell, which leaves the cache
//! ([`Running::into_job`]).
//!
//! A job's task owns its shell: it runs the command, passes every raw output chunk to the
//! caller's [`JobChunks`], then follows what the processes the command left behind (`server &`)
//! still write, until none of them holds the output and none is left, and closes the shell
//! (its whole process tree). [`JobRun::kill`] (or the request's cancel token) stops it at any
//! point, the way a timeout stops a command. Job shells are not in the cache: they count toward
//! no `max_shells`, and a session's calls never wait for them.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::call::{CommandExit, Running};
use crate::error::ExecError;
use crate::executor::{ShellExecutor, check_request, start_shell};
use crate::request::ExecRequest;
use crate::shell::{Output, RunOutcome, ShellProcess};

/// Where a job's raw output chunks go, from the job's task, in order.
pub type JobChunks = Box<dyn FnMut(&[u8]) + Send>;

impl Output for JobChunks {
    fn chunk(&mut self, bytes: &[u8]) {
        self(bytes);
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
