//! The tool result of a `bash` call, and the context text of a bang command, as pure
//! functions of what the executor reported.
//!
//! # Which lines are shown, and how they are numbered
//!
//! Lines are numbered 1..=T over the whole sanitised output (T = `totalLines`; lines end at
//! `\n`, and a final `\n` ends the last line rather than starting an empty one). The builder
//! takes a *source window* of that output and knows where it sits:
//!
//! - with a `head` limit and a head capture: the capture, which starts at line 1;
//! - otherwise the sink's tail (`summary.output`), whose last line is line T, so its first line
//!   is line `T - lines(tail) + 1`.
//!
//! The annotation of a stopped command (`result.annotation`, e.g. `Command timed out after 5
//! seconds`) is not part of that window: it is put before the text as its own line,
//! `[<annotation>]`, and never counted or cut.
//!
//! The byte limit cuts the tail at a UTF-8 boundary, not a line boundary, so the tail's first
//! line may be only the end of a line. That line **is shown and counted**: the range starts at
//! the line it belongs to (a single minified line cut to its last 50 KB still shows something).
//! One exception: when the cut tail starts with `\n`, the line it ends has nothing visible left,
//! so that `\n` is dropped and the range starts at the next line (`seq 1 100000` under a
//! 51,200-byte limit shows lines 91468-100000, not an empty line 91467 first).
//!
//! `head`/`tail` are then applied to the source window (`apply_head_tail`), and the range
//! `A-B` is where the result sits in the whole output. The notice
//! (`[Showing lines A-B of T (50.0KB limit)…]`) is added when the shown lines reach an edge that
//! the byte limit cut (the start of a truncated tail, the end of a truncated head capture), i.e.
//! when the byte limit, not the caller, decided what is missing. A caller's `tail -n 5` of a
//! truncated tail that holds more than 5 lines therefore gets no notice.

use std::path::Path;

use agentsh_bash_interceptor::Interception;
use agentsh_bash_normalize::{Limits, apply_head_tail, count_lines};
use agentsh_protocol::{
    BashResult, COMMAND_ABORTED, FullOutput, NO_OUTPUT, SHELL_ENDED_LINE, ShownRange, Timeout,
    ToolDetails, ToolMeta, ToolOutcome, ToolResult, TruncatedBy, Truncation, TruncationDirection,
    annotation_line, exit_outcome, needs_terminal_line, truncation_notice,
};

use agentsh_process::sandbox::SandboxSpec;
use agentsh_sandbox::denial_line_for;

use crate::shaped::ShapedOutput;

/// The line a bang command's context text ends with when it was stopped.
pub const BANG_CANCELLED: &str = "(command cancelled)";

/// A live update of a running tool call: the current tail of its output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolUpdate {
    /// The sanitised tail of the output so far.
    pub text: String,
}

/// The first lines of the output, kept apart by the sink for a `head` limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeadCapture<'a> {
    /// The captured text: the first lines of the sanitised output, starting at line 1.
    pub text: &'a str,
    /// True when the capture's byte bound cut it before it held all the lines it wanted.
    pub truncated: bool,
}

/// Everything the result builder needs about one finished tool call.
#[derive(Debug, Clone, Copy)]
pub struct FinishedRun<'a> {
    /// What the executor reported; `annotation` says why a stopped run stopped, and becomes
    /// the first line of the text.
    pub result: &'a BashResult,
    /// The output shaped for the model, when it was: its text is the body, its closing line
    /// comes first of the closing lines (in place of the notice), and `details.meta.shaped`
    /// says what shaped it.
    pub shaped: Option<&'a ShapedOutput>,
    /// The head capture, when a `head` limit was in force. Without one, `head` is applied to
    /// the tail the sink kept (exact when the output was not truncated).
    pub head_capture: Option<HeadCapture<'a>>,
    /// The merged limits (explicit arguments over extracted ones).
    pub limits: Limits,
    /// The byte limit the sink used (`output.max_bytes`), for the notice.
    pub max_bytes: u64,
    /// Whether the caller aborted the call.
    pub aborted: bool,
    /// The working directory the command ran in.
    pub cwd: &'a Path,
    /// The (clamped) timeout of the call.
    pub timeout: Timeout,
    /// The sandbox the command ran under, `None` when off: a failed command whose
    /// output shows a denial gets the sandbox line.
    pub sandbox: Option<&'a SandboxSpec>,
}

/// Builds the tool result of a finished call: body, outcome line, the sandbox line
/// (for a sandboxed command that failed with a denial in its output, see
/// [`DENIAL_MARKERS`](agentsh_sandbox::DENIAL_MARKERS)), notice; `details` with `meta.truncation`
/// whenever anything was left out.
///
/// A run the executor reports as cancelled but not timed out was stopped by an abort, so it is
/// an abort even when `aborted` is false.
pub fn build_tool_result(run: &FinishedRun<'_>) -> ToolOutcome {
    let result = run.result;
    let summary = &result.summary;
    let source = match (run.limits.head, run.head_capture) {
        (Some(_), Some(capture)) => Source {
            text: capture.text,
            first_line: 1,
            cut_at_start: false,
            cut_at_end: capture.truncated,
        },
        _ => Source::tail(&summary.output, summary.truncated, summary.total_lines),
    };
    let shown = source.show(run.limits, summary.total_lines);

    let aborted = run.aborted || (result.cancelled && !result.timed_out);
    let outcome = if aborted {
        Some(COMMAND_ABORTED.to_owned())
    } else if result.timed_out || ended_by_limit(result) {
        // The annotation, or the limit line, says why it ended.
        None
    } else if let Some(program) = &result.needs_terminal {
        Some(needs_terminal_line(program, true))
    } else {
        exit_outcome(result.exit_code)
    };
    let is_error = aborted || result.timed_out || result.exit_code != Some(0);

    let mut text = annotation_text(result);
    match run.shaped {
        Some(shaped) => text.push_str(&shaped.text),
        None => text.push_str(body_or_placeholder(shown.text)),
    }
    if let Some(outcome) = outcome {
        text.push_str("\n\n");
        text.push_str(&outcome);
    }
    // The shaped-output line comes first of the closing lines, in place of the notice.
    if let Some(shaped) = run.shaped {
        text.push_str("\n\n");
        text.push_str(&shaped.closing);
    }
    let head_text = run.head_capture.map_or("", |capture| capture.text);
    if let Some(line) = denial_line_for(
        run.sandbox,
        result.exit_code != Some(0),
        &[&summary.output, head_text],
        &result.blocked_hosts,
    ) {
        text.push_str("\n\n");
        text.push_str(&line);
    }
    if run.shaped.is_none() && shown.byte_limited {
        text.push_str("\n\n");
        text.push_str(&shown.notice(run.max_bytes, summary.full_output()));
    }
    if let Some(limit) = &result.limit {
        text.push_str("\n\n");
        text.push_str(&limit.closing_line());
    }
    if result.session_restarted {
        text.push_str("\n\n");
        text.push_str(SHELL_ENDED_LINE);
    }

    let truncation = (run.shaped.is_none() && shown.left_out()).then(|| Truncation {
        direction: if run.limits.head.is_some() {
            TruncationDirection::Head
        } else {
            TruncationDirection::Tail
        },
        truncated_by: if shown.byte_limited {
            TruncatedBy::Bytes
        } else {
            TruncatedBy::Lines
        },
        total_lines: summary.total_lines,
        total_bytes: summary.total_bytes,
        output_lines: shown.lines,
        output_bytes: shown.text.len() as u64,
        shown_range: shown.range(),
        artifact_id: summary.artifact_id.clone(),
        artifact_error: summary.artifact_error.clone(),
    });
    let details = ToolDetails {
        exit_code: result.exit_code,
        cancelled: result.cancelled,
        timed_out: result.timed_out,
        session_restarted: result.session_restarted,
        cwd: run.cwd.to_string_lossy().into_owned(),
        timeout: run.timeout,
        meta: (truncation.is_some() || run.shaped.is_some()).then(|| ToolMeta {
            truncation,
            shaped: run.shaped.map(|shaped| shaped.meta.clone()),
        }),
        interception: None,
        job: None,
        limit: result.limit,
    };
    let tool_result = ToolResult::new(text, details, is_error);
    if aborted {
        ToolOutcome::Aborted(tool_result)
    } else {
        ToolOutcome::Finished(tool_result)
    }
}

/// The result of a command the interceptor blocked: `Blocked: <message>\n\nOriginal
/// command: <command>`, `details.interception` set, `isError` true. `cwd` and `timeout` are the
/// call's, as far as they are known.
pub fn blocked_result(
    interception: &Interception,
    command: &str,
    cwd: &Path,
    timeout: Timeout,
) -> ToolResult {
    let mut details = ToolDetails::not_run(cwd, timeout);
    details.interception = Some(interception.details());
    ToolResult::new(interception.text(command), details, true)
}

/// The text a bang command (`!cmd`) leaves in the model's context:
///
/// ````text
/// Ran `cmd`
/// ```
/// <output>
/// ```
///
/// Command exited with code 2
///
/// [Showing lines A-B of T (50.0KB limit). Full: artifact://ID]
/// ````
///
/// The output (after its `[annotation]` line, which says why a stopped command stopped) is
/// fenced, or `(no output)`. Then `(command cancelled)` for a stopped command, `Command exited
/// with code N` for a non-zero exit, or `Command failed: missing exit status` when there is no
/// exit code (the spec names only the first two; a silent missing status would look like
/// success). Then, for a command run under `sandbox` that failed (a non-zero exit or no exit
/// status) with a denial in its output, the sandbox line
/// (`[sandbox: <mode>; writable: <roots>; network off]`). The notice follows when the byte
/// limit truncated the output. Code spans and fences grow past any backticks in the command or
/// output.
pub fn bang_context_text(
    command: &str,
    result: &BashResult,
    max_bytes: u64,
    sandbox: Option<&SandboxSpec>,
) -> String {
    let summary = &result.summary;
    let shown = Source::tail(&summary.output, summary.truncated, summary.total_lines)
        .show(Limits::NONE, summary.total_lines);

    let mut text = format!("Ran {}\n", code_span(command));
    let mut body = annotation_text(result);
    let output = trim_final_newline(shown.text);
    if output.is_empty() {
        // A stopped command with no output: the annotation line alone, no blank line after it.
        body.pop();
    } else {
        body.push_str(output);
    }
    if body.is_empty() {
        text.push_str(NO_OUTPUT);
    } else {
        let fence = "`".repeat(longest_backtick_run(&body).max(2) + 1);
        text.push_str(&fence);
        text.push('\n');
        text.push_str(&body);
        text.push('\n');
        text.push_str(&fence);
    }
    let outcome = if result.cancelled {
        Some(BANG_CANCELLED.to_owned())
    } else if ended_by_limit(result) {
        None
    } else if let Some(program) = &result.needs_terminal {
        Some(needs_terminal_line(program, false))
    } else {
        exit_outcome(result.exit_code)
    };
    if let Some(outcome) = outcome {
        text.push_str("\n\n");
        text.push_str(&outcome);
    }
    if let Some(line) = denial_line_for(
        sandbox,
        result.exit_code != Some(0),
        &[&summary.output],
        &result.blocked_hosts,
    ) {
        text.push_str("\n\n");
        text.push_str(&line);
    }
    if shown.byte_limited {
        text.push_str("\n\n");
        text.push_str(&shown.notice(max_bytes, summary.full_output()));
    }
    if let Some(limit) = &result.limit {
        text.push_str("\n\n");
        text.push_str(&limit.closing_line());
    }
    if result.session_restarted {
        text.push_str("\n\n");
        text.push_str(SHELL_ENDED_LINE);
    }
    text
}

/// Whether a resource limit ended the command (it has no exit status of its own then; the
/// limit line says why it ended). A process limit the kernel enforced by refusing forks ends
/// nothing: that command's own status stands.
fn ended_by_limit(result: &BashResult) -> bool {
    result.limit.is_some() && result.exit_code.is_none()
}

/// The `[<annotation>]\n` line a stopped run's text starts with; empty for other runs.
fn annotation_text(result: &BashResult) -> String {
    result
        .annotation
        .as_deref()
        .map(annotation_line)
        .unwrap_or_default()
}

/// A window of the whole output and where it sits in it.
struct Source<'a> {
    text: &'a str,
    /// 1-based number of the window's first line in the whole output.
    first_line: u64,
    /// The byte limit removed output before the window.
    cut_at_start: bool,
    /// The byte limit removed output after the window.
    cut_at_end: bool,
}

impl<'a> Source<'a> {
    /// The sink's tail: its last line is line `total_lines`.
    fn tail(text: &'a str, truncated: bool, total_lines: u64) -> Self {
        let lines = count_lines(text);
        let mut source = Self {
            text,
            first_line: (total_lines + 1).saturating_sub(lines).max(1),
            cut_at_start: truncated,
            cut_at_end: false,
        };
        // A cut tail that starts with `\n` starts with the invisible end of a line: drop it.
        if truncated && let Some(rest) = text.strip_prefix('\n') {
            source.text = rest;
            source.first_line += 1;
        }
        source
    }

    /// Applies the caller's limits to the window.
    fn show(&self, limits: Limits, total_lines: u64) -> Shown<'a> {
        // `head` keeps a prefix of the window, `tail` a suffix of that prefix.
        let end = apply_head_tail(self.text, limits.head, None).len();
        let shown = apply_head_tail(self.text, limits.head, limits.tail);
        let start = end - shown.len();
        // The shown part starts at a line start, so the lines before it are whole lines.
        let skipped = count_lines(&self.text[..start]);
        let lines = count_lines(shown);
        let asked_for_nothing = limits.head == Some(0) || limits.tail == Some(0);
        let touches_cut =
            (self.cut_at_start && start == 0) || (self.cut_at_end && end == self.text.len());
        Shown {
            text: shown,
            first_line: self.first_line + skipped,
            lines,
            byte_limited: touches_cut && !asked_for_nothing,
            total_lines,
        }
    }
}

/// The lines a result shows.
struct Shown<'a> {
    text: &'a str,
    first_line: u64,
    lines: u64,
    /// The byte limit, not the caller, decided where the shown lines stop: notice due.
    byte_limited: bool,
    total_lines: u64,
}

impl Shown<'_> {
    fn range(&self) -> ShownRange {
        if self.lines == 0 {
            ShownRange { start: 0, end: 0 }
        } else {
            ShownRange {
                start: self.first_line,
                end: self.first_line + self.lines - 1,
            }
        }
    }

    /// Whether the text leaves any of the output out.
    fn left_out(&self) -> bool {
        let range = self.range();
        self.byte_limited
            || (self.lines == 0 && self.total_lines > 0)
            || (self.lines > 0 && (range.start > 1 || range.end < self.total_lines))
    }

    /// `[Showing lines A-B of T (50.0KB limit). Full: artifact://ID]` (or `. Full output not
    /// saved: <reason>]`).
    fn notice(&self, max_bytes: u64, full: FullOutput<'_>) -> String {
        let range = self.range();
        truncation_notice(range.start, range.end, self.total_lines, max_bytes, full)
    }
}

fn body_or_placeholder(shown: &str) -> &str {
    let body = trim_final_newline(shown);
    if body.is_empty() { NO_OUTPUT } else { body }
}

/// A final `\n` ends the last line; it is not shown as an empty line.
fn trim_final_newline(text: &str) -> &str {
    text.strip_suffix('\n').unwrap_or(text)
}

fn longest_backtick_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// `text` as a Markdown code span, delimited by more backticks than it contains.
fn code_span(text: &str) -> String {
    let ticks = "`".repeat(longest_backtick_run(text) + 1);
    if text.starts_with('`') || text.ends_with('`') {
        format!("{ticks} {text} {ticks}")
    } else {
        format!("{ticks}{text}{ticks}")
    }
}

#[cfg(test)]
mod tests;
