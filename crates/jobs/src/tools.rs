//! Starting jobs from a `bash` call, and the job tools: `job_output`, `job_input`,
//! `job_kill`, `job_list`. Every answer is a [`ToolResult`]: text, a blank line, the job's state
//! line; `details.job`. Argument errors and unknown ids are results with `isError: true`.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentsh_bash_normalize::Limits;
use agentsh_output_sink::{OutputSink, TailBuffer};
use agentsh_protocol::{
    BashResult, JobDetails, JobInputArgs, JobKillArgs, JobListArgs, JobState, JobSummary,
    NEXT_CALL_NEW_SHELL, NO_JOBS, NO_NEW_OUTPUT, Timeout, ToolDetails, ToolOutcome, ToolResult,
    format_size, hidden_input_line, hidden_input_sent_line, job_has_ended_text,
    job_has_no_terminal_text, job_started_line, job_state_line, no_such_job_text,
    too_many_jobs_text,
};
use agentsh_pty_runtime::{PtyRun, key_sequence, typed_text};
use agentsh_shell_executor::{CancellationToken, ExecError, Finished, JobChunks, Output, Ran};
use serde_json::Value;
use tokio::time::Instant;

use crate::args::OutputArgs;
use crate::job::ends::with_last_line;
use crate::job::{Job, JobMeta, JobOutput, LogSource, NewJob};
use crate::result::{FinishedRun, HeadCapture, ToolUpdate, build_tool_result};
use crate::{JobHost, JobToolCall, Jobs, lock};

/// How long a `run_in_background` call waits for its job before it answers.
const START_WAIT: Duration = Duration::from_secs(1);
/// How often a running call sends a live update (≤ 20 a second).
const UPDATE_INTERVAL: Duration = Duration::from_millis(50);
/// How long `job_input` lets the terminal take its input before it says how much went in.
const INPUT_LIMIT: Duration = Duration::from_secs(5);
/// How often `job_input` looks whether its input went in.
const INPUT_POLL: Duration = Duration::from_millis(10);
/// How long `job_kill` waits for the job's tree to be gone before it answers anyway.
const KILL_WAIT: Duration = Duration::from_secs(10);
/// A job started without a `timeout` runs until it is killed or its session ends.
const NO_TIMEOUT: Duration = Duration::from_secs(365 * 24 * 3600);
/// How often a waiting tool looks again when nothing woke it (a PTY job's input wait is only
/// visible in `/proc`).
const RECHECK: Duration = Duration::from_millis(100);

/// A tool error: the text, `isError`, no job.
fn tool_error(text: String, cwd: &Path, timeout: Timeout) -> ToolOutcome {
    ToolOutcome::Finished(ToolResult::new(
        text,
        ToolDetails::not_run(cwd, timeout),
        true,
    ))
}

/// One `bash` call the session let run (judged, intercepted, its `cwd` checked), piped: it
/// runs in the foreground ([`run`](Self::run)) and may become a job, or starts as one
/// ([`start_background`](Self::start_background)).
pub struct JobCall<'a, H: JobHost> {
    /// The session the call runs in.
    pub host: &'a H,
    /// The session's jobs, which a job the call makes joins.
    pub jobs: &'a Arc<Jobs>,
    /// The command, as it runs (normalised).
    pub command: &'a str,
    /// Where it runs (checked).
    pub cwd: &'a Path,
    /// The call's own timeout, when it gave one (a job without one runs until killed).
    pub timeout: Option<Timeout>,
    /// The clamped timeout (the argument's or the default), for `details`.
    pub shown_timeout: Timeout,
    /// The merged `head`/`tail` limits.
    pub limits: Limits,
}

impl<H: JobHost> JobCall<'_, H> {
    fn max_bytes(&self) -> u64 {
        self.host.limits().output_max_bytes
    }

    /// A job's output side with its log reserved now (`run_in_background`).
    fn new_job(&self) -> NewJob {
        NewJob::new(
            LogSource::Reserved(self.host.allocate_artifact()),
            self.host.limits().max_log_bytes,
            self.host.sandbox(),
            self.host.secrets(),
        )
    }

    /// The output side of a call that may become a job: like a foreground call's, its log is
    /// reserved only when the output first overflows the tail (a call that ends in time and
    /// fits creates no file), and from then on holds the whole stream.
    fn maybe_job(&self) -> NewJob {
        NewJob::new(
            LogSource::OnOverflow {
                allocate: {
                    let host = self.host.clone();
                    Box::new(move || host.allocate_artifact())
                },
                tail_bytes: self.max_bytes(),
            },
            self.host.limits().max_log_bytes,
            self.host.sandbox(),
            self.host.secrets(),
        )
    }

    /// What job `id` is; its command started at `started`.
    fn meta(&self, id: String, pty: bool, started: Instant) -> JobMeta {
        JobMeta {
            id,
            started: started.into_std(),
            command: self.command.to_owned(),
            cwd: self.cwd.to_path_buf(),
            timeout: self.shown_timeout,
            pty,
            reports: self.jobs.reports.clone(),
        }
    }

    /// `run_in_background`: a job in a new shell (or on a terminal), answered once it exited or
    /// a second has passed.
    pub async fn start_background(&self, pty: bool) -> ToolOutcome {
        let host = self.host;
        let jobs = self.jobs;
        let slot = match jobs.reserve(host.limits().max_running) {
            Ok(slot) => slot,
            Err(running) => {
                return tool_error(too_many_jobs_text(running), self.cwd, self.shown_timeout);
            }
        };
        let new = self.new_job();
        let run_time = self.timeout.map_or(NO_TIMEOUT, Timeout::duration);
        // Run times count from here: the command starts next.
        let started = Instant::now();
        let job = if pty {
            let mut command = host.pty_command(self.command, self.cwd, self.shown_timeout);
            command.timeout = run_time;
            command.answers_prompts = true;
            let running = PtyRun::start_with_text(command, new.take_sink(), new.texts());
            let job = slot.fill(|id| new.on_pty(self.meta(id, true, started), running));
            jobs.sample();
            crate::hidden::watch_hidden_input(&job, jobs.reports.events().clone(), host.secrets());
            job
        } else {
            let mut request = host.exec_request(self.command, self.cwd, self.shown_timeout);
            request.timeout = run_time;
            match host.executor().start_job(request, new.chunks()).await {
                Ok(run) => {
                    let job = slot.fill(|id| new.piped(self.meta(id, false, started), run));
                    jobs.sample();
                    job
                }
                Err(err) => {
                    return tool_error(
                        format!("cannot run the command: {err}"),
                        self.cwd,
                        self.shown_timeout,
                    );
                }
            }
        };
        wait_for(&job, START_WAIT, |job| job.state().0.is_over()).await;
        self.answer(&job, false)
    }

    /// Runs the call in the foreground on the session's `tool` shell, the one way every piped
    /// `bash` call runs: live updates of its output's tail (at most 20 a second, the last state
    /// always sent, none without `live_updates`), `cancel` aborting it. With `yield_after`
    /// (and room for one more job), its output is a job's from the start and, when it still
    /// runs then, the call answers with the yield result, the command going on as a job; else
    /// its output goes to a call's sink (whose head limit stops it).
    pub async fn run(
        &self,
        yield_after: Option<Duration>,
        live_updates: bool,
        cancel: &CancellationToken,
        on_update: &mut (impl FnMut(ToolUpdate) + Send),
    ) -> ToolOutcome {
        let host = self.host;
        let request = host.exec_request(self.command, self.cwd, self.shown_timeout);
        let token = request.cancel.clone();
        // With no room for one more job the call cannot yield: it is an ordinary call.
        let may_yield = yield_after.and_then(|after| {
            let slot = self.jobs.reserve(host.limits().max_running).ok()?;
            Some((after, slot, self.maybe_job()))
        });
        let shown = live_updates;
        let (output, live) = if let Some((_, _, new)) = &may_yield {
            let live = shown.then(|| Live::Job(Arc::clone(&new.output)));
            (CallOutput::Job(new.chunks()), live)
        } else {
            let tail = shown.then(|| {
                Arc::new(Mutex::new(TailBuffer::new(
                    usize::try_from(self.max_bytes()).unwrap_or(usize::MAX),
                )))
            });
            let sink = Box::new(host.new_sink(self.limits.head));
            let live = tail.clone().map(Live::Tail);
            (CallOutput::Sink { sink, tail }, live)
        };
        let yield_after = may_yield.as_ref().map(|(after, _, _)| *after);
        let started = Instant::now();
        let run = host.executor().run(request, output, yield_after);
        tokio::pin!(run);
        let mut ticks = tokio::time::interval_at(Instant::now() + UPDATE_INTERVAL, UPDATE_INTERVAL);
        let mut sent = 0;
        let mut aborted = false;
        let ran = loop {
            tokio::select! {
                done = &mut run => break done,
                () = cancel.cancelled(), if !aborted => {
                    aborted = true;
                    token.cancel();
                }
                _ = ticks.tick(), if live.is_some() => {
                    if let Some(live) = &live {
                        live.update(&mut sent, self.max_bytes(), on_update);
                    }
                }
            }
        };
        let (finished, new) = match (ran, may_yield) {
            (Ok(Ran::Running(running)), Some((_, slot, new))) => {
                let job =
                    slot.fill(|id| new.piped(self.meta(id, false, started), running.into_job()));
                self.jobs.sample();
                return self.answer(&job, true);
            }
            // Not reached: only a call that may yield is handed back running.
            (Ok(Ran::Running(running)), None) => (running.finish().await, None),
            (Ok(Ran::Finished(finished)), may_yield) => {
                (Ok(finished), may_yield.map(|(_, _, new)| new))
            }
            (Err(err), _) => (Err(err), None),
        };
        self.finished(
            finished,
            new.as_ref(),
            live.as_ref(),
            sent,
            cancel,
            on_update,
        )
    }

    /// The ordinary result of a call that ended: its output dumped (a call that could have
    /// become a job: its log file goes when the output fit), its last live update sent.
    fn finished(
        &self,
        finished: Result<Finished<CallOutput>, ExecError>,
        new: Option<&NewJob>,
        live: Option<&Live>,
        mut sent: u64,
        cancel: &CancellationToken,
        on_update: &mut (impl FnMut(ToolUpdate) + Send),
    ) -> ToolOutcome {
        let finished = match finished {
            Ok(finished) => finished,
            Err(err) => {
                return tool_error(
                    format!("cannot run the command: {err}"),
                    self.cwd,
                    self.shown_timeout,
                );
            }
        };
        // An ordinary call's sink: its head capture borrows from it.
        let mut call_sink = None;
        let summary = match (finished.output, new) {
            (CallOutput::Sink { mut sink, tail }, _) => {
                let summary = match &tail {
                    Some(tail) => sink.dump_with(&mut |text| lock(tail).push(text)),
                    None => sink.dump(),
                };
                call_sink = Some(sink);
                summary
            }
            (CallOutput::Job(_), Some(new)) => {
                let mut output = lock(&new.output);
                let JobOutput { sink, log, .. } = &mut *output;
                sink.dump_with(&mut |text| log.push(text));
                log.take_new(self.max_bytes(), false).summary
            }
            // Not reached: a job's output side comes with its job.
            (CallOutput::Job(_), None) => {
                return tool_error(
                    "cannot read the command's output".into(),
                    self.cwd,
                    self.shown_timeout,
                );
            }
        };
        let head_capture = call_sink.as_ref().and_then(|sink| {
            sink.head_text().map(|text| HeadCapture {
                text,
                truncated: sink.head_truncated(),
            })
        });
        // The last state is always sent.
        if let Some(live) = live {
            live.update(&mut sent, self.max_bytes(), on_update);
        }
        let result = finished.exit.result(
            summary,
            self.shown_timeout.duration(),
            finished.blocked_hosts,
        );
        build_tool_result(&FinishedRun {
            result: &result,
            head_capture,
            limits: self.limits,
            max_bytes: self.max_bytes(),
            aborted: cancel.is_cancelled(),
            cwd: self.cwd,
            timeout: self.shown_timeout,
            sandbox: self.host.sandbox(),
        })
    }

    /// The result of a call that made a job: the output so far as a tool result shows it, then the job
    /// line (and, after a yield, the new-shell line) — or, when the job already ended, its end.
    fn answer(&self, job: &Job, yielded: bool) -> ToolOutcome {
        answer_about(
            job,
            self.max_bytes(),
            self.limits,
            Reader::Start { yielded },
            self.jobs.secrets_answerable(),
        )
    }
}

/// Where a piped call's output goes.
enum CallOutput {
    /// An ordinary call's sink (its head limit stops the command), and the tail its live
    /// updates show, unless nobody sees them.
    Sink {
        sink: Box<OutputSink>,
        tail: Option<Arc<Mutex<TailBuffer>>>,
    },
    /// A call that may become a job: its output side is a job's from the start.
    Job(JobChunks),
}

impl Output for CallOutput {
    fn chunk(&mut self, bytes: &[u8]) {
        match self {
            Self::Sink {
                sink,
                tail: Some(tail),
            } => sink.push_with(bytes, &mut |text| lock(tail).push(text)),
            Self::Sink { sink, tail: None } => sink.push(bytes),
            Self::Job(chunks) => chunks(bytes),
        }
    }

    fn head_satisfied(&self) -> bool {
        match self {
            Self::Sink { sink, .. } => sink.head_satisfied(),
            Self::Job(_) => false,
        }
    }
}

/// What a running call's live updates show: the tail of its text so far.
enum Live {
    Tail(Arc<Mutex<TailBuffer>>),
    Job(Arc<Mutex<JobOutput>>),
}

impl Live {
    /// Sends the tail (its last `max_bytes`) when the text grew since `sent` bytes.
    fn update(&self, sent: &mut u64, max_bytes: u64, on_update: &mut impl FnMut(ToolUpdate)) {
        let (total, text) = match self {
            Self::Tail(tail) => {
                let tail = lock(tail);
                let total = tail.total_bytes();
                if total == *sent {
                    return;
                }
                (total, tail.snapshot())
            }
            Self::Job(output) => {
                let output = lock(output);
                let total = output.log.total_bytes();
                if total == *sent {
                    return;
                }
                (total, output.log.tail_text(max_bytes))
            }
        };
        *sent = total;
        on_update(ToolUpdate { text });
    }
}

/// Who a result about a job is for.
#[derive(Clone, Copy)]
enum Reader {
    /// The call that started the job (or yielded into it).
    Start { yielded: bool },
    /// A job tool; `job_output` also moves where `until` looks.
    Tool { returned_by_output: bool },
}

/// A result about `job`: what no result showed of it, as a tool result builds a body (with the notice when
/// over `max_bytes`), or a PTY job's screen; then, for the starting call, the job line (or the
/// state line when it already ended), for a tool the state line. Marks the text shown.
fn answer_about(
    job: &Job,
    max_bytes: u64,
    limits: Limits,
    reader: Reader,
    answerable: bool,
) -> ToolOutcome {
    let (state, exit_code) = job.state();
    let returned_by_output = matches!(
        reader,
        Reader::Tool {
            returned_by_output: true
        }
    );
    let new = lock(&job.output)
        .log
        .take_new(max_bytes, returned_by_output);
    let result = BashResult {
        summary: new.summary,
        annotation: None,
        // No outcome line: the state line after the text says how the job is.
        exit_code: Some(0),
        cancelled: false,
        timed_out: false,
        session_restarted: false,
        // The job's refusals go with its state line, below.
        blocked_hosts: Vec::new(),
        needs_terminal: None,
    };
    let mut outcome = build_tool_result(&FinishedRun {
        result: &result,
        head_capture: None,
        limits,
        max_bytes,
        aborted: false,
        cwd: &job.cwd,
        timeout: job.timeout,
        // No outcome line here (the state line says how the job is): the sandbox line, when
        // due, follows the state line.
        sandbox: None,
    });
    let result = match &mut outcome {
        ToolOutcome::Finished(result) | ToolOutcome::Aborted(result) => result,
    };
    let mut text = if let Some(terminal) = job.terminal() {
        screen_text(job, terminal)
    } else {
        let mut text = result.text();
        // A job tool's answer says what is new.
        if matches!(reader, Reader::Tool { .. })
            && new.empty
            && let Some(rest) = text.strip_prefix(agentsh_protocol::NO_OUTPUT)
        {
            text = format!("{NO_NEW_OUTPUT}{rest}");
        }
        if job.log_capped() {
            let _ = write!(
                text,
                "\n\n[The log stopped growing at {} (jobs.max_log_bytes): later output is only in this tail.]",
                format_size(job.max_log_bytes)
            );
        }
        text
    };
    text.push_str("\n\n");
    let ended = state.is_over();
    if ended {
        // The model sees the end here: no notice about it later.
        job.end_shown
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }
    match reader {
        Reader::Start { yielded } if !ended => {
            text.push_str(&job_started_line(&job.id));
            if yielded {
                text.push('\n');
                text.push_str(NEXT_CALL_NEW_SHELL);
            }
        }
        // A tool's answer, or a job that ended within its first second: how it is.
        Reader::Start { .. } | Reader::Tool { .. } => {
            // A sandboxed job that failed with a denial anywhere in its output gets the
            // sandbox line, the first of the closing lines; the state line follows it.
            let failed = ended && exit_code != Some(0);
            let blocked = job.blocked_hosts();
            if let Some(line) = lock(&job.output).log.denial_line(failed, &blocked) {
                text.push_str(&line);
                text.push_str("\n\n");
            }
            text.push_str(&job_state_line(&job.id, state, exit_code));
        }
    }
    // A password prompt: the model is told it is not its to answer, and where the person
    // answers it (agentsh, when some surface of the session takes hidden input).
    let hidden = job.asks_hidden(state);
    if hidden {
        text.push_str("\n\n");
        text.push_str(&hidden_input_line(&job.id, answerable));
    }
    let is_error = matches!(reader, Reader::Start { .. }) && ended && exit_code != Some(0);
    result.details.exit_code = if ended { exit_code } else { None };
    // The state the text says, not a later one: a job that ends meanwhile is seen ended by
    // the next answer, never by half of this one.
    result.details.job = Some(JobDetails {
        state,
        exit_code,
        hidden,
        ..job.details()
    });
    *result = ToolResult::new(text, result.details.clone(), is_error);
    outcome
}

/// Waits until `done(job)`, the job's end, or `limit`; wakes on every change of the job and
/// every [`RECHECK`].
async fn wait_for(job: &Job, limit: Duration, done: impl Fn(&Job) -> bool) {
    let deadline = Instant::now() + limit;
    let mut changes = job.changes();
    loop {
        if done(job) || !job.is_live() {
            return;
        }
        let now = Instant::now();
        if now >= deadline {
            return;
        }
        let step = (deadline - now).min(RECHECK);
        let _ = tokio::time::timeout(step, changes.changed()).await;
    }
}

/// The shells whose prompt takes command lines: text typed at them is judged.
const SHELLS: [&str; 4] = ["bash", "sh", "zsh", "dash"];

impl Jobs {
    /// Runs one of the job tools by name (`job_output`, `job_input`, `job_kill`, `job_list`)
    /// for call `call.id` of `host`'s session; `None` for any other name. Text for a PTY job
    /// whose foreground program is a shell is judged by `host` as a command line (whose
    /// approval requests `call.approver` answers).
    pub async fn execute_tool<H: JobHost>(
        &self,
        host: &H,
        name: &str,
        args: &Value,
        call: &JobToolCall,
    ) -> Option<ToolOutcome> {
        let limits = host.limits();
        let cwd = host.cwd().to_path_buf();
        let timeout = limits.default_timeout;
        let error = |text: String| tool_error(text, &cwd, timeout);
        let max_bytes = limits.output_max_bytes;
        Some(match name {
            "job_output" => match OutputArgs::parse(args) {
                Ok(args) => self
                    .job_output(&args, max_bytes)
                    .await
                    .unwrap_or_else(error),
                Err(err) => error(err.to_string()),
            },
            "job_input" => match JobInputArgs::from_value(args) {
                Ok(args) => self
                    .job_input(host, &args, call)
                    .await
                    .unwrap_or_else(error),
                Err(err) => error(err.to_string()),
            },
            "job_kill" => match JobKillArgs::from_value(args) {
                Ok(args) => self.job_kill(&args, max_bytes).await.unwrap_or_else(error),
                Err(err) => error(err.to_string()),
            },
            "job_list" => match JobListArgs::from_value(args) {
                Ok(JobListArgs {}) => self.job_list(&cwd, timeout),
                Err(err) => error(err.to_string()),
            },
            _ => return None,
        })
    }

    /// The job named `id` (as the tools take it), or the tools' error for an id no job has.
    pub(crate) fn find(&self, id: &str) -> Result<Arc<Job>, String> {
        self.get(id)
            .ok_or_else(|| no_such_job_text(id, &self.ids()))
    }

    async fn job_output(&self, args: &OutputArgs, max_bytes: u64) -> Result<ToolOutcome, String> {
        let job = self.find(&args.job_id)?;
        let limit = Duration::from_secs_f64(args.wait);
        match &args.until {
            Some(pattern) => {
                let looked = std::sync::atomic::AtomicU64::new(0);
                wait_for(&job, limit, |job| {
                    let mut from = looked.load(std::sync::atomic::Ordering::Relaxed);
                    let found = lock(&job.output).log.has_match(pattern, &mut from);
                    looked.store(from, std::sync::atomic::Ordering::Relaxed);
                    found
                })
                .await;
            }
            None if args.wait > 0.0 => {
                let seen = lock(&job.output).log.total_bytes();
                wait_for(&job, limit, |job| {
                    lock(&job.output).log.total_bytes() > seen
                        || job.state().0 == JobState::WaitingForInput
                })
                .await;
            }
            None => {}
        }
        let limits = Limits {
            head: args.head,
            tail: args.tail,
        };
        Ok(self.job_answer(&job, max_bytes, limits, true))
    }

    async fn job_input<H: JobHost>(
        &self,
        host: &H,
        args: &JobInputArgs,
        call: &JobToolCall,
    ) -> Result<ToolOutcome, String> {
        let job = self.find(&args.job_id)?;
        let Some(terminal) = job.terminal() else {
            return Err(job_has_no_terminal_text(&job.id));
        };
        if !job.is_live() || job.state().0.is_over() {
            return Err(job_has_ended_text(&job.id));
        }
        // Text typed at a shell's prompt is a command line: judged as one.
        if let Some(text) = args.text.as_deref()
            && terminal
                .foreground_program()
                .is_some_and(|program| SHELLS.contains(&program.as_str()))
        {
            let shown = text.trim_end_matches(['\r', '\n']);
            host.judge_input(call, text, shown).await?;
        }
        // Whether this input answers a password prompt: the result reminds the model of it.
        let to_hidden = terminal.input_hidden();
        let keys = key_sequence(&args.keys, terminal.terminal().key_modes())
            .map_err(|err| err.to_string())?;
        let mut bytes = args.text.as_deref().map(typed_text).unwrap_or_default();
        bytes.extend_from_slice(&keys);
        if !terminal.write_input(&bytes) {
            return Err(job_has_ended_text(&job.id));
        }
        // Long input goes in as the terminal takes it: as long as the program reads.
        let typing_until = Instant::now() + INPUT_LIMIT;
        while terminal.input_pending() > 0 && job.is_live() {
            if Instant::now() >= typing_until {
                let went_in = bytes.len().saturating_sub(terminal.input_pending());
                return Err(format!(
                    "Only {went_in} of {} bytes of input went in within {} s: the program is not reading its terminal (the rest is still queued)",
                    bytes.len(),
                    INPUT_LIMIT.as_secs()
                ));
            }
            tokio::time::sleep(INPUT_POLL).await;
        }
        job.settle(Duration::from_secs_f64(args.wait_seconds()))
            .await;
        let answer = self.job_answer(
            &job,
            host.limits().output_max_bytes,
            Limits::default(),
            false,
        );
        Ok(if to_hidden {
            with_last_line(answer, &hidden_input_sent_line(&job.id))
        } else {
            answer
        })
    }

    async fn job_kill(&self, args: &JobKillArgs, max_bytes: u64) -> Result<ToolOutcome, String> {
        let job = self.find(&args.job_id)?;
        // The model ends it itself: no notice about its end.
        job.killed_by_model
            .store(true, std::sync::atomic::Ordering::SeqCst);
        job.kill();
        let _ = tokio::time::timeout(KILL_WAIT, job.ended()).await;
        Ok(self.job_answer(&job, max_bytes, Limits::default(), true))
    }

    fn job_list(&self, cwd: &Path, default_timeout: Timeout) -> ToolOutcome {
        let jobs = self.summaries();
        let text = if jobs.is_empty() {
            NO_JOBS.to_owned()
        } else {
            let lines: Vec<String> = jobs.iter().map(JobSummary::list_line).collect();
            lines.join("\n")
        };
        ToolOutcome::Finished(ToolResult::new(
            text,
            ToolDetails::not_run(cwd, default_timeout),
            false,
        ))
    }

    /// A job tool's answer: the new output (a PTY job's screen), then the state line.
    fn job_answer(
        &self,
        job: &Job,
        max_bytes: u64,
        limits: Limits,
        returned_by_output: bool,
    ) -> ToolOutcome {
        let answerable = self.secrets_answerable();
        answer_about(
            job,
            max_bytes,
            limits,
            Reader::Tool { returned_by_output },
            answerable,
        )
    }
}

/// A PTY job's screen, headed `[screen COLSxROWS, cursor row R col C (1-based); full log:
/// artifact://ID]`, trailing blank rows dropped.
fn screen_text(job: &Job, terminal: &agentsh_pty_runtime::PtyController) -> String {
    let screen = terminal.terminal();
    let size = screen.size();
    let (row, col) = screen.cursor();
    let mut rows = screen.rows();
    while rows.last().is_some_and(|row| row.trim().is_empty()) {
        rows.pop();
    }
    let log = lock(&job.output)
        .log
        .artifact_file()
        .map_or_else(|| "none".to_owned(), |log| format!("artifact://{}", log.id));
    format!(
        "[screen {}x{}, cursor row {} col {} (1-based); full log: {log}]\n{}",
        size.cols,
        size.rows,
        row + 1,
        col + 1,
        rows.join("\n")
    )
}
