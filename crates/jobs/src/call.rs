//! [`JobCall`]: one `bash` call the session let run, piped. [`JobCall::run`] is the one way
//! every piped foreground call runs, on every surface (yielding into a job when it outlives its
//! yield time); [`JobCall::start_background`] starts it as a job (`run_in_background`).

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentsh_bash_normalize::Limits;
use agentsh_output_sink::{OutputSink, TailBuffer};
use agentsh_protocol::{BashResult, Timeout, ToolOutcome, too_many_jobs_text};
use agentsh_pty_runtime::PtyRun;
use agentsh_shell_executor::{CancellationToken, ExecError, Finished, JobChunks, Output, Ran};
use tokio::time::Instant;

use crate::job::{Job, JobMeta, JobOutput, LogSource, NewJob};
use crate::result::{FinishedRun, HeadCapture, ToolUpdate, build_tool_result};
use crate::shaped::{ShapeFn, ShapedOutput, shape_output};
use crate::tools::{Reader, answer_about, tool_error, wait_for};
use crate::{JobHost, Jobs, lock};

/// How long a `run_in_background` call waits for its job before it answers.
const START_WAIT: Duration = Duration::from_secs(1);
/// How often a running call sends a live update (≤ 20 a second).
const UPDATE_INTERVAL: Duration = Duration::from_millis(50);
/// A job started without a `timeout` runs until it is killed or its session ends.
const NO_TIMEOUT: Duration = Duration::from_secs(365 * 24 * 3600);

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
    /// The caller asked for the output as the program printed it (`raw`): not shaped.
    pub raw: bool,
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
            memory_limit: self.host.limits().memory,
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
        let (output, live) = if let Some((_, _, new)) = &may_yield {
            let live = live_updates.then(|| Live::Job(Arc::clone(&new.output)));
            let output = CallOutput::Job {
                chunks: new.chunks(),
                output: Arc::clone(&new.output),
                capped: new.capped(),
            };
            (output, live)
        } else {
            let tail = live_updates.then(|| {
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
        let finished = match ran {
            Ok(Ran::Running(running)) => match may_yield {
                Some((_, slot, new)) => {
                    let job = slot
                        .fill(|id| new.piped(self.meta(id, false, started), running.into_job()));
                    self.jobs.sample();
                    return self.answer(&job, true);
                }
                // Not reached: only a call that may yield is handed back running.
                None => running.finish().await,
            },
            Ok(Ran::Finished(finished)) => Ok(finished),
            Err(err) => Err(err),
        };
        self.finished(finished, live.as_ref(), sent, cancel, on_update)
    }

    /// The ordinary result of a call that ended: its output dumped (a call that could have
    /// become a job: its log file goes when the output fit), its last live update sent.
    fn finished(
        &self,
        finished: Result<Finished<CallOutput>, ExecError>,
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
        // A job log that stopped growing does not hold the whole output.
        let mut capped = false;
        let summary = match finished.output {
            CallOutput::Sink { mut sink, tail } => {
                let summary = match &tail {
                    Some(tail) => sink.dump_with(&mut |text| lock(tail).push(text)),
                    None => sink.dump(),
                };
                call_sink = Some(sink);
                summary
            }
            CallOutput::Job {
                output,
                capped: log_capped,
                ..
            } => {
                capped = log_capped.load(std::sync::atomic::Ordering::SeqCst);
                let mut output = lock(&output);
                let JobOutput { sink, log, .. } = &mut *output;
                sink.dump_with(&mut |text| log.push(text));
                log.take_new(self.max_bytes(), false).summary
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
        let shaped = self.shape(&result, capped);
        build_tool_result(&FinishedRun {
            result: &result,
            shaped: shaped.as_ref(),
            head_capture,
            limits: self.limits,
            max_bytes: self.max_bytes(),
            aborted: cancel.is_cancelled(),
            cwd: self.cwd,
            timeout: self.shown_timeout,
            sandbox: self.host.sandbox(),
        })
    }

    /// The call's output shaped for the model, when it is (`agentsh-shape`): not with `raw`,
    /// a `head`/`tail` limit, a run that was stopped, or a job log that was capped.
    fn shape(&self, result: &BashResult, capped: bool) -> Option<ShapedOutput> {
        if self.raw
            || capped
            || !self.limits.is_none()
            || result.cancelled
            || result.timed_out
            || result.needs_terminal.is_some()
        {
            return None;
        }
        shape_output(self.host, self.command, &result.summary)
    }

    /// The result of a call that made a job: the output so far as a tool result shows it, then the job
    /// line (and, after a yield, the new-shell line) — or, when the job already ended, its end.
    fn answer(&self, job: &Job, yielded: bool) -> ToolOutcome {
        // A job that already ended: its output is shaped as the call's would have been.
        let shape = |summary: &agentsh_protocol::OutputSummary| {
            shape_output(self.host, self.command, summary)
        };
        let shape: Option<&ShapeFn<'_>> = (!self.raw && self.limits.is_none()).then_some(&shape);
        answer_about(
            job,
            self.max_bytes(),
            self.limits,
            Reader::Start { yielded },
            self.jobs.secrets_answerable(),
            shape,
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
    /// A call that may become a job: its output side is a job's from the start (`chunks` feed
    /// `output`).
    Job {
        chunks: JobChunks,
        output: Arc<Mutex<JobOutput>>,
        /// Set when its log reached `jobs.max_log_bytes` and stopped growing.
        capped: Arc<std::sync::atomic::AtomicBool>,
    },
}

impl Output for CallOutput {
    fn chunk(&mut self, bytes: &[u8]) {
        match self {
            Self::Sink {
                sink,
                tail: Some(tail),
            } => sink.push_with(bytes, &mut |text| lock(tail).push(text)),
            Self::Sink { sink, tail: None } => sink.push(bytes),
            Self::Job { chunks, .. } => chunks(bytes),
        }
    }

    fn head_satisfied(&self) -> bool {
        match self {
            Self::Sink { sink, .. } => sink.head_satisfied(),
            Self::Job { .. } => false,
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
