//! A session's background jobs: the table, one job's output and state, and starting
//! one (`run_in_background`, a yielded call, a PTY job). The tools that read and drive them are
//! in `tools`.
//!
//! A job's output goes through its own [`OutputSink`] with a zero-byte tail: every committed
//! byte goes straight to the job's log artifact (reserved when the job starts, capped at
//! `jobs.max_log_bytes`), and the sink hands the same text to the job's [`JobLog`], which keeps
//! the bounded tail and the reading positions the tools use. So agentsh's memory per job is the
//! log's tail plus the sink's spill batch, whatever the job prints.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crate::lock;
use std::time::{Duration, Instant};

use agentsh_artifact_store::ArtifactReservation;
use agentsh_output_sink::{OutputSink, SinkOptions};
use agentsh_protocol::{
    JobDetails, JobState, JobSummary, JobUsage, LimitHit, Timeout, ToolOutcome,
};
use agentsh_pty_runtime::{InputWait, PtyController, PtyRun};
use agentsh_seam::EventHub;
use agentsh_shell_executor::{CommandExit, JobProgress, JobRun};
use tokio::sync::watch;

pub(crate) mod ends;
pub(crate) mod log;
mod spill;
pub(crate) mod usage;

use ends::JobReports;
use log::{JobLog, LogFile};
use spill::CappedLog;

/// How long a PTY job's output must have been quiet before `/proc` is asked whether it waits
/// for input.
const QUIET_FOR_INPUT: Duration = Duration::from_millis(300);
/// `job_input` answers once the output has been quiet this long (or [`QUIET_FOR_INPUT`] while
/// a process waits for input, or its `wait` ran out).
const SETTLE: Duration = Duration::from_millis(200);
/// Finished jobs listed until the session ends: the last this many.
const FINISHED_KEPT: usize = 100;

/// The output side of a job, shared by its task and its tools.
pub(crate) struct JobOutput {
    pub(crate) sink: OutputSink,
    pub(crate) log: JobLog,
}

/// How a job is driven.
pub(crate) enum Control {
    Piped(JobRun),
    Pty(PtyController),
}

/// One job.
pub(crate) struct Job {
    pub(crate) id: String,
    pub(crate) command: String,
    pub(crate) cwd: PathBuf,
    pub(crate) timeout: Timeout,
    pub(crate) pty: bool,
    pub(crate) started: Instant,
    /// `limits.memory`, resolved: what `job_list` shows its memory against.
    memory_limit: Option<u64>,
    pub(crate) output: Arc<Mutex<JobOutput>>,
    /// Bumped on new text and on every change of progress: what waiting tools watch.
    changes: watch::Receiver<u64>,
    pub(crate) progress: watch::Receiver<JobProgress>,
    /// Set once the log stopped growing at `jobs.max_log_bytes`.
    capped: Arc<AtomicBool>,
    pub(crate) max_log_bytes: u64,
    pub(crate) control: Control,
    /// When it ended (for `job_list`'s run time).
    ended_at: Mutex<Option<Instant>>,
    /// A PTY job's refusals by the network allowlist, once it ended (a piped job's come from
    /// its run).
    pty_blocked: Arc<Mutex<Vec<String>>>,
    /// Turns `true` once the ended job's sink is flushed into its log (its last unfinished
    /// line, the log file's last batch).
    flushed: watch::Receiver<bool>,
    /// A result has shown the model that the job ended (its starting result, a `job_output`):
    /// its end notice is not needed.
    pub(crate) end_shown: AtomicBool,
    /// The model killed it (`job_kill`): no end notice.
    pub(crate) killed_by_model: AtomicBool,
    /// What its tree uses, as the session's sampler last read it.
    pub(crate) usage: Mutex<usage::Usage>,
}

impl Job {
    /// Where the job is now. A PTY job whose output has been quiet for 300 ms
    /// ([`QUIET_FOR_INPUT`]) is asked in `/proc` whether its program waits for input.
    /// The resource limit the job's processes passed, once its command returned or ended.
    pub(crate) fn limit(&self) -> Option<LimitHit> {
        self.progress.borrow().exit().and_then(|exit| exit.limit)
    }

    pub(crate) fn state(&self) -> (JobState, Option<i32>) {
        match *self.progress.borrow() {
            JobProgress::Running => {
                if let Control::Pty(controller) = &self.control
                    && controller.quiet_for() >= QUIET_FOR_INPUT
                    && controller.input_wait() == InputWait::Waiting
                {
                    return (JobState::WaitingForInput, None);
                }
                (JobState::Running, None)
            }
            JobProgress::Returned(exit) | JobProgress::Ended(exit) => exit_state(exit),
        }
    }

    /// Waits until a PTY job's output settles after input went in, at most `limit`: no output
    /// for [`SETTLE`] since the later of the call and the last output, or for
    /// [`QUIET_FOR_INPUT`] while a process of the job waits in `read` on its terminal, so that
    /// [`state`](Self::state) decides on the same quiet output whether it waits for input (and
    /// a hidden prompt is seen by the answer that follows). Returns at once for a job without a
    /// terminal, and when the job ends.
    pub(crate) async fn settle(&self, limit: Duration) {
        let Control::Pty(controller) = &self.control else {
            return;
        };
        let called = tokio::time::Instant::now();
        let deadline = called + limit;
        let mut changes = self.changes();
        while self.is_live() {
            // Input a program reads without echo makes no output: the program's answer to it
            // is waited for all the same.
            let quiet = controller.quiet_for().min(called.elapsed());
            // `/proc` is asked only once the output has been quiet for SETTLE.
            let needed = if quiet >= QUIET_FOR_INPUT {
                return;
            } else if quiet >= SETTLE {
                if controller.input_wait() != InputWait::Waiting {
                    return;
                }
                QUIET_FOR_INPUT
            } else {
                SETTLE
            };
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return;
            }
            // Output that comes meanwhile moves the end; the job's end (a change) cuts it short.
            let step = needed.saturating_sub(quiet).min(deadline - now);
            let _ = tokio::time::timeout(step, changes.changed()).await;
        }
    }

    /// `details.job`.
    pub(crate) fn details(&self) -> JobDetails {
        let (state, exit_code) = self.state();
        JobDetails {
            id: self.id.clone(),
            state,
            exit_code,
            pty: self.pty,
            hidden: self.asks_hidden(state),
        }
    }

    /// Whether the job, in `state`, waits for hidden input: a PTY job waiting for input on a
    /// terminal whose echo is off and line mode on (a password or passphrase prompt).
    pub(crate) fn asks_hidden(&self, state: JobState) -> bool {
        state == JobState::WaitingForInput
            && matches!(&self.control, Control::Pty(controller) if controller.input_hidden())
    }

    /// Whether the job holds a shell (or terminal) still: its command or what it left runs.
    pub(crate) fn is_live(&self) -> bool {
        !matches!(*self.progress.borrow(), JobProgress::Ended(_))
    }

    /// The `host:port`s a sandbox's network allowlist refused for the job's connections
    /// (complete once it ended).
    pub(crate) fn blocked_hosts(&self) -> Vec<String> {
        match &self.control {
            Control::Piped(run) => run.blocked_hosts(),
            Control::Pty(_) => lock(&self.pty_blocked).clone(),
        }
    }

    /// Whether the log stopped growing at its cap.
    pub(crate) fn log_capped(&self) -> bool {
        self.capped.load(Ordering::SeqCst)
    }

    /// Kills the job (whole tree, shell or terminal); returns at once.
    pub(crate) fn kill(&self) {
        match &self.control {
            Control::Piped(run) => run.kill(),
            Control::Pty(controller) => controller.kill(),
        }
    }

    /// The terminal of a PTY job.
    pub(crate) fn terminal(&self) -> Option<&PtyController> {
        match &self.control {
            Control::Pty(controller) => Some(controller),
            Control::Piped(_) => None,
        }
    }

    /// A receiver of the job's changes (new text, progress).
    pub(crate) fn changes(&self) -> watch::Receiver<u64> {
        self.changes.clone()
    }

    /// Waits until the job has ended (its processes gone) and all its output is in its log,
    /// so that what answers next (`job_kill`, `job_output`) has its last line.
    pub(crate) async fn ended(&self) {
        let mut flushed = self.flushed.clone();
        // The sender goes when the watcher ends: flushed, or the job is gone.
        let _ = flushed.wait_for(|flushed| *flushed).await;
    }

    /// The job as lists show it.
    pub(crate) fn summary(&self) -> JobSummary {
        let (state, exit_code) = self.state();
        JobSummary {
            id: self.id.clone(),
            state,
            exit_code,
            pty: self.pty,
            command: self.command.clone(),
            run_time: self.run_time(),
            output_bytes: lock(&self.output).log.total_bytes(),
            usage: Some(JobUsage {
                memory_limit: self.memory_limit,
                ..lock(&self.usage).view(self.is_live() && !state.is_over())
            }),
        }
    }

    /// How long it has run (until it ended).
    pub(crate) fn run_time(&self) -> Duration {
        match *lock(&self.ended_at) {
            Some(ended) => ended.duration_since(self.started),
            None => self.started.elapsed(),
        }
    }
}

/// The state a command's end gives.
pub(crate) fn exit_state(exit: CommandExit) -> (JobState, Option<i32>) {
    if exit.killed || exit.timed_out {
        (JobState::Killed, None)
    } else {
        (JobState::Exited, exit.exit_code)
    }
}

/// A job being set up: its output side, before its command starts.
pub(crate) struct NewJob {
    pub(crate) output: Arc<Mutex<JobOutput>>,
    changes_tx: Arc<watch::Sender<u64>>,
    changes: watch::Receiver<u64>,
    capped: Arc<AtomicBool>,
    max_log_bytes: u64,
}

impl NewJob {
    /// Set when the job's log reaches its cap and stops growing.
    pub(crate) fn capped(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.capped)
    }

    /// An output side whose log comes from `log`, of a command run under `sandbox` (its
    /// stream is watched for denials then).
    pub(crate) fn new(
        log: LogSource,
        max_log_bytes: u64,
        sandbox: Option<&agentsh_process::sandbox::SandboxSpec>,
        secrets: Option<Arc<agentsh_output_sink::Secrets>>,
    ) -> Self {
        let capped = Arc::new(AtomicBool::new(false));
        let job_log = JobLog::new().watching_denials(sandbox);
        let (max_bytes, spill) = match log {
            LogSource::Reserved(reservation) => {
                let spill = reservation.map(|reservation| {
                    *lock(&job_log.artifact) = Some(LogFile {
                        id: reservation.id().to_owned(),
                        path: reservation.path().to_path_buf(),
                    });
                    Box::new(CappedLog::new(
                        reservation,
                        max_log_bytes,
                        Arc::clone(&capped),
                    )) as Box<dyn agentsh_output_sink::SpillSource>
                });
                // Every committed byte goes to the log at once; the job's own tail is in `JobLog`.
                (0, spill)
            }
            LogSource::OnOverflow {
                allocate,
                tail_bytes,
            } => {
                let spill = Box::new(LazyLog {
                    allocate,
                    max_log_bytes,
                    capped: Arc::clone(&capped),
                    file: Arc::clone(&job_log.artifact),
                }) as Box<dyn agentsh_output_sink::SpillSource>;
                (
                    usize::try_from(tail_bytes).unwrap_or(usize::MAX),
                    Some(spill),
                )
            }
        };
        let sink = OutputSink::new(SinkOptions {
            max_bytes,
            head_lines: None,
            spill,
            secrets,
        });
        let (changes_tx, changes) = watch::channel(0);
        Self {
            output: Arc::new(Mutex::new(JobOutput { sink, log: job_log })),
            changes_tx: Arc::new(changes_tx),
            changes,
            capped,
            max_log_bytes,
        }
    }

    /// Where the job's raw chunks go (the piped runtime).
    pub(crate) fn chunks(&self) -> agentsh_shell_executor::JobChunks {
        let output = Arc::clone(&self.output);
        let changes = Arc::clone(&self.changes_tx);
        Box::new(move |bytes| {
            {
                let mut output = lock(&output);
                let JobOutput { sink, log } = &mut *output;
                sink.push_with(bytes, &mut |text| log.push(text));
            }
            changes.send_modify(|n| *n = n.wrapping_add(1));
        })
    }

    /// Where the job's committed text goes (the PTY runtime, whose sink is its own).
    pub(crate) fn texts(&self) -> agentsh_pty_runtime::TextCallback {
        let output = Arc::clone(&self.output);
        let changes = Arc::clone(&self.changes_tx);
        Box::new(move |text| {
            lock(&output).log.push(text);
            changes.send_modify(|n| *n = n.wrapping_add(1));
        })
    }

    /// A sink for a PTY job: the log artifact as spill, no tail of its own (`texts` keeps it).
    pub(crate) fn take_sink(&self) -> OutputSink {
        std::mem::replace(
            &mut lock(&self.output).sink,
            OutputSink::new(SinkOptions::default()),
        )
    }

    /// The finished job, driven by a piped run.
    pub(crate) fn piped(self, meta: JobMeta, run: JobRun) -> Arc<Job> {
        let progress = run.watch();
        self.finish(meta, progress, Control::Piped(run), Arc::default())
    }

    /// The finished job, driven by a PTY session.
    pub(crate) fn on_pty(self, meta: JobMeta, session: PtyRun) -> Arc<Job> {
        let controller = session.controller();
        let (progress_tx, progress) = watch::channel(JobProgress::Running);
        let texts = Arc::clone(&self.changes_tx);
        let blocked = Arc::new(Mutex::new(Vec::new()));
        let task_blocked = Arc::clone(&blocked);
        tokio::spawn(async move {
            let result = session.wait().await;
            *lock(&task_blocked) = result.blocked_hosts;
            let exit = CommandExit {
                exit_code: result.exit_code,
                timed_out: result.timed_out,
                killed: result.cancelled && !result.timed_out,
                shell_restarted: false,
                needs_terminal: None,
                limit: result.limit,
            };
            let _ = progress_tx.send(JobProgress::Ended(exit));
            texts.send_modify(|n| *n = n.wrapping_add(1));
        });
        self.finish(meta, progress, Control::Pty(controller), blocked)
    }

    fn finish(
        self,
        meta: JobMeta,
        progress: watch::Receiver<JobProgress>,
        control: Control,
        pty_blocked: Arc<Mutex<Vec<String>>>,
    ) -> Arc<Job> {
        let (flushed, flushed_rx) = watch::channel(false);
        let job = Arc::new(Job {
            id: meta.id,
            command: meta.command,
            cwd: meta.cwd,
            timeout: meta.timeout,
            pty: meta.pty,
            started: meta.started,
            memory_limit: meta.memory_limit,
            output: self.output,
            changes: self.changes,
            progress,
            capped: self.capped,
            max_log_bytes: self.max_log_bytes,
            control,
            ended_at: Mutex::new(None),
            pty_blocked,
            flushed: flushed_rx,
            end_shown: AtomicBool::new(false),
            killed_by_model: AtomicBool::new(false),
            usage: Mutex::default(),
        });
        let reports = meta.reports;
        // Watches the job's progress: wakes its waiters, and once it ended, finishes its sink
        // (the last line, the log file) and notes when.
        let watched = Arc::downgrade(&job);
        let mut progress = job.progress.clone();
        let changes = self.changes_tx;
        tokio::spawn(async move {
            let mut reported = false;
            loop {
                let now = *progress.borrow_and_update();
                changes.send_modify(|n| *n = n.wrapping_add(1));
                // The command returned, processes it left may go on: its end is reported now.
                if let JobProgress::Returned(exit) = now
                    && !reported
                    && let Some(job) = watched.upgrade()
                {
                    reported = true;
                    let run_time = job.started.elapsed();
                    reports.ended(&job, ends::job_end(&job, exit, run_time));
                }
                if matches!(now, JobProgress::Ended(_)) || progress.changed().await.is_err() {
                    break;
                }
            }
            if let Some(job) = watched.upgrade() {
                *lock(&job.ended_at) = Some(Instant::now());
                let mut output = lock(&job.output);
                let JobOutput { sink, log, .. } = &mut *output;
                sink.dump_with(&mut |text| log.push(text));
                drop(output);
                let _ = flushed.send(true);
                changes.send_modify(|n| *n = n.wrapping_add(1));
                // Ended without returning first (killed, a terminal's program): reported once
                // its last output is in its log.
                if !reported && let Some(exit) = job.progress.borrow().exit() {
                    let run_time = job.run_time();
                    reports.ended(&job, ends::job_end(&job, exit, run_time));
                }
            }
        });
        job
    }
}

/// Where a job's log artifact comes from.
pub(crate) enum LogSource {
    /// Reserved when the job started (`None`: no artifact could be had).
    Reserved(Option<ArtifactReservation>),
    /// Reserved by `allocate` (the session's) when the output first overflows a tail of
    /// `tail_bytes`.
    OnOverflow { allocate: Allocate, tail_bytes: u64 },
}

/// Reserves a job's log artifact, best effort (the session's `allocate_artifact`: a failure is
/// its warning, and `None`).
pub(crate) type Allocate = Box<dyn FnOnce() -> Option<ArtifactReservation> + Send>;

/// The spill source of a call that may become a job: reserves the log at the first overflow.
struct LazyLog {
    allocate: Allocate,
    max_log_bytes: u64,
    capped: Arc<AtomicBool>,
    file: Arc<Mutex<Option<LogFile>>>,
}

impl agentsh_output_sink::SpillSource for LazyLog {
    fn open(self: Box<Self>) -> Option<Box<dyn agentsh_output_sink::Spill>> {
        let reservation = (self.allocate)()?;
        *lock(&self.file) = Some(LogFile {
            id: reservation.id().to_owned(),
            path: reservation.path().to_path_buf(),
        });
        Box::new(CappedLog::new(reservation, self.max_log_bytes, self.capped)).open()
    }
}

/// What a job is, apart from how it runs.
pub(crate) struct JobMeta {
    pub(crate) id: String,
    pub(crate) command: String,
    pub(crate) cwd: PathBuf,
    pub(crate) timeout: Timeout,
    pub(crate) pty: bool,
    /// When its command started.
    pub(crate) started: Instant,
    /// `limits.memory`, resolved: what `job_list` shows its memory against.
    pub(crate) memory_limit: Option<u64>,
    /// Where the job reports its end.
    pub(crate) reports: ends::JobReports,
}

/// A session's jobs: ids from 1, the running ones bounded, the finished ones kept (the last
/// 100), and where they report (the session's events, the notices for its next result).
#[derive(Default)]
pub struct Jobs {
    table: Mutex<Table>,
    /// Reads what the running jobs use, while any runs.
    sampler: usage::Sampler,
    /// Where the jobs report their ends.
    pub(crate) reports: JobReports,
}

#[derive(Default)]
struct Table {
    last_id: u64,
    jobs: BTreeMap<u64, Arc<Job>>,
    /// Ids handed out whose job is still being started.
    starting: usize,
}

/// A place for one more job, taken before it starts: dropped unused, it is given back (and no
/// id is spent on it).
pub(crate) struct Slot<'a> {
    jobs: &'a Jobs,
    used: bool,
}

impl Slot<'_> {
    /// The job takes its place: `make` gets its id.
    pub(crate) fn fill(mut self, make: impl FnOnce(String) -> Arc<Job>) -> Arc<Job> {
        let id = {
            let mut table = lock(&self.jobs.table);
            table.last_id += 1;
            table.last_id
        };
        let job = make(id.to_string());
        let mut table = lock(&self.jobs.table);
        table.starting -= 1;
        table.jobs.insert(id, Arc::clone(&job));
        table.trim();
        self.used = true;
        job
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if !self.used {
            lock(&self.jobs.table).starting -= 1;
        }
    }
}

impl Table {
    fn running(&self) -> usize {
        self.jobs.values().filter(|job| job.is_live()).count() + self.starting
    }

    /// Forgets the oldest finished jobs past [`FINISHED_KEPT`].
    fn trim(&mut self) {
        let finished: Vec<u64> = self
            .jobs
            .iter()
            .filter(|(_, job)| !job.is_live())
            .map(|(&id, _)| id)
            .collect();
        for id in finished
            .iter()
            .take(finished.len().saturating_sub(FINISHED_KEPT))
        {
            self.jobs.remove(id);
        }
    }
}

impl Jobs {
    /// A session's job table, its jobs reporting through `events` (their ends, a hidden
    /// prompt).
    pub fn new(events: EventHub) -> Self {
        Self {
            table: Mutex::default(),
            sampler: usage::Sampler::default(),
            reports: JobReports::new(events),
        }
    }

    /// The jobs as lists show them, oldest first (the last 100 that ended, and every running
    /// one).
    pub fn summaries(&self) -> Vec<JobSummary> {
        self.all().iter().map(|job| job.summary()).collect()
    }

    /// Queues `text` for the session's next tool result, which closes with it (once).
    pub fn tell_next_result(&self, text: String) {
        self.reports.session_notice(text);
    }

    /// `outcome` closed with the notices waiting for the session's next tool result (jobs
    /// that ended or have been busy without output), each after a blank line.
    pub fn with_notices(&self, outcome: ToolOutcome) -> ToolOutcome {
        let notices = self.reports.take();
        if notices.is_empty() {
            return outcome;
        }
        ends::with_last_line(outcome, &notices.join("\n\n"))
    }

    /// Starts reading what the running jobs use, unless that runs already (a job just
    /// started).
    pub(crate) fn sample(self: &Arc<Self>) {
        self.sampler
            .ensure(Arc::downgrade(self), self.reports.clone());
    }

    /// Whether a person can answer hidden input through some surface of the session now.
    pub(crate) fn secrets_answerable(&self) -> bool {
        self.reports.events().secrets_answerable()
    }

    /// A place for a new job, unless `max_running` jobs run: then the number running.
    pub(crate) fn reserve(&self, max_running: usize) -> Result<Slot<'_>, usize> {
        let mut table = lock(&self.table);
        let running = table.running();
        if running >= max_running {
            return Err(running);
        }
        table.starting += 1;
        Ok(Slot {
            jobs: self,
            used: false,
        })
    }

    /// The job with this id.
    pub(crate) fn get(&self, id: &str) -> Option<Arc<Job>> {
        self.by_number(id.parse().ok()?)
    }

    /// The job with this id, as a number.
    pub(crate) fn by_number(&self, id: u64) -> Option<Arc<Job>> {
        lock(&self.table).jobs.get(&id).cloned()
    }

    /// Every job, oldest first.
    pub(crate) fn all(&self) -> Vec<Arc<Job>> {
        lock(&self.table).jobs.values().cloned().collect()
    }

    /// The ids, for an error about an unknown one.
    pub(crate) fn ids(&self) -> Vec<String> {
        lock(&self.table).jobs.keys().map(u64::to_string).collect()
    }

    /// Kills every job (whole trees) and waits until all have ended.
    pub async fn shutdown(&self) {
        let jobs = self.all();
        for job in &jobs {
            job.kill();
        }
        for job in &jobs {
            job.ended().await;
        }
    }
}
