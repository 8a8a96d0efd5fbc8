//! The job tools: `job_output`, `job_input`, `job_kill`, `job_list`. Every answer is a
//! [`ToolResult`]: text, a blank line, the job's state line; `details.job`. Argument errors and unknown ids are results with `isError: true`.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agentsh_bash_normalize::Limits;
use agentsh_protocol::{
    BashResult, JobDetails, JobInputArgs, JobKillArgs, JobListArgs, JobState, JobSummary,
    NEXT_CALL_NEW_SHELL, NO_JOBS, NO_NEW_OUTPUT, Timeout, ToolDetails, ToolOutcome, ToolResult,
    format_size, hidden_input_line, hidden_input_sent_line, job_has_ended_text,
    job_has_no_terminal_text, job_started_line, job_state_line, no_such_job_text,
};
use agentsh_pty_runtime::{key_sequence, typed_text};
use serde_json::Value;
use tokio::time::Instant;

use crate::args::OutputArgs;
use crate::job::Job;
use crate::job::ends::with_last_line;
use crate::result::{FinishedRun, build_tool_result};
use crate::shaped::{ShapeFn, shape_output};
use crate::{JobHost, JobToolCall, Jobs, lock};

/// How long `job_input` lets the terminal take its input before it says how much went in.
const INPUT_LIMIT: Duration = Duration::from_secs(5);
/// How often `job_input` looks whether its input went in.
const INPUT_POLL: Duration = Duration::from_millis(10);
/// How long `job_kill` waits for the job's tree to be gone before it answers anyway.
const KILL_WAIT: Duration = Duration::from_secs(10);
/// How often a waiting tool looks again when nothing woke it (a PTY job's input wait is only
/// visible in `/proc`).
const RECHECK: Duration = Duration::from_millis(100);

/// A tool error: the text, `isError`, no job.
pub(crate) fn tool_error(text: String, cwd: &Path, timeout: Timeout) -> ToolOutcome {
    ToolOutcome::Finished(ToolResult::new(
        text,
        ToolDetails::not_run(cwd, timeout),
        true,
    ))
}

/// Who a result about a job is for.
#[derive(Clone, Copy)]
pub(crate) enum Reader {
    /// The call that started the job (or yielded into it).
    Start { yielded: bool },
    /// A job tool; `job_output` also moves where `until` looks.
    Tool { returned_by_output: bool },
}

/// A result about `job`: what no result showed of it, as a tool result builds a body (with the notice when
/// over `max_bytes`), or a PTY job's screen; then, for the starting call, the job line (or the
/// state line when it already ended), for a tool the state line. Marks the text shown.
pub(crate) fn answer_about(
    job: &Job,
    max_bytes: u64,
    limits: Limits,
    reader: Reader,
    answerable: bool,
    shape: Option<&ShapeFn<'_>>,
) -> ToolOutcome {
    let (state, exit_code) = job.state();
    // Shaped: the whole output of an ended piped job, read for the first time, whose log holds
    // all of it.
    let shape = shape.filter(|_| {
        state.is_over()
            && job.terminal().is_none()
            && !job.log_capped()
            && lock(&job.output).log.nothing_shown()
    });
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
        // The job's limit goes with its state line, below.
        limit: None,
    };
    let shaped = shape.and_then(|shape| shape(&result.summary));
    let mut outcome = build_tool_result(&FinishedRun {
        shaped: shaped.as_ref(),
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
            // A limit its processes passed: said before the state, as on any result.
            if let Some(limit) = job.limit().filter(|_| ended) {
                text.push_str(&limit.closing_line());
                text.push_str("\n\n");
                result.details.limit = Some(limit);
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
pub(crate) async fn wait_for(job: &Job, limit: Duration, done: impl Fn(&Job) -> bool) {
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
                    .job_output(host, &args, max_bytes)
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

    async fn job_output<H: JobHost>(
        &self,
        host: &H,
        args: &OutputArgs,
        max_bytes: u64,
    ) -> Result<ToolOutcome, String> {
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
        // An ended job's output no result showed is shaped as a call's would be.
        let shape =
            |summary: &agentsh_protocol::OutputSummary| shape_output(host, &job.command, summary);
        let shape: Option<&ShapeFn<'_>> = (!args.raw && limits.is_none()).then_some(&shape);
        Ok(self.job_answer(&job, max_bytes, limits, true, shape))
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
            None,
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
        Ok(self.job_answer(&job, max_bytes, Limits::default(), true, None))
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
        shape: Option<&ShapeFn<'_>>,
    ) -> ToolOutcome {
        let answerable = self.secrets_answerable();
        answer_about(
            job,
            max_bytes,
            limits,
            Reader::Tool { returned_by_output },
            answerable,
            shape,
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
