//! What the host hands a [`Renderer`](crate::Renderer) for each view: references to the
//! `agentsh-protocol` data, plus the view's own state (collapsed or expanded, the spinner tick).

use std::time::Duration;

use agentsh_protocol::{BangRun, BashArgs, Screen, ToolResult, count_lines};

/// The default byte limit of a result's output (`output.max_bytes`), for the truncation
/// warning's `(50.0KB limit)`.
pub const DEFAULT_MAX_BYTES: u64 = agentsh_protocol::DEFAULT_OUTPUT_MAX_BYTES;

/// A `bash` tool call as a transcript holds it.
#[derive(Debug, Clone, Copy)]
pub struct ToolCallView<'a> {
    /// The call's arguments (the command, its cwd, a timeout).
    pub args: &'a BashArgs,
    /// The project directory: a call whose cwd differs is drawn `$ cd <dir> && <command>`.
    pub project_dir: &'a str,
    /// Running with a live tail, or done with its result.
    pub state: CallState<'a>,
    /// Collapsed (the last lines) or expanded (a window of the whole output).
    pub expansion: Expansion<'a>,
    /// The byte limit of the output (`output.max_bytes`), named by the truncation warning.
    pub max_bytes: u64,
    /// Advances the spinner of a running call (the host bumps it on its animation timer).
    pub tick: u64,
    /// How long the running call has run, when the host keeps the time (the renderer has no
    /// clock): its spinner row says it.
    pub elapsed: Option<Duration>,
    /// The running call waits for a person's approval before anything of it runs: its
    /// spinner row says so instead of the time.
    pub awaiting_approval: bool,
}

impl<'a> ToolCallView<'a> {
    /// A collapsed view of a call in `project_dir`, with the default byte limit.
    pub fn new(args: &'a BashArgs, project_dir: &'a str, state: CallState<'a>) -> Self {
        Self {
            args,
            project_dir,
            state,
            expansion: Expansion::Collapsed,
            max_bytes: DEFAULT_MAX_BYTES,
            tick: 0,
            elapsed: None,
            awaiting_approval: false,
        }
    }

    /// What an expanded view draws: the artifact holding the whole output when there is one
    /// (the host reads it by the lines in view), else the text the call has.
    pub fn expanded_source(&self) -> ExpandedSource<'a> {
        match self.state {
            CallState::Done(result) => {
                // A shaped result expands to the raw output.
                match result.details.raw_artifact() {
                    Some((id, _)) => ExpandedSource::Artifact(id),
                    None => ExpandedSource::Text(result.first_text()),
                }
            }
            CallState::Running { tail } => ExpandedSource::Text(tail),
        }
    }
}

/// Where a tool call is.
#[derive(Debug, Clone, Copy)]
pub enum CallState<'a> {
    /// Still running; the live tail of its output (the latest partial result's text).
    Running {
        /// The tail so far.
        tail: &'a str,
    },
    /// Done, with the result the model got.
    Done(&'a ToolResult),
}

/// Collapsed or expanded.
#[derive(Debug, Clone, Copy, Default)]
pub enum Expansion<'a> {
    /// The last lines only (10 visual lines of a tool call, 20 logical lines of a bang command).
    #[default]
    Collapsed,
    /// A window of the whole output: the lines the host read, drawn into `rows` rows.
    Expanded {
        /// The lines in view.
        window: LineWindow<'a>,
        /// How many rows of output to draw (the rest of the view is header and footers).
        rows: u16,
    },
}

/// Where an expanded view's lines come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpandedSource<'a> {
    /// The artifact with this id: the host reads its lines in view (`read_artifact` by range).
    Artifact(&'a str),
    /// This text, which the host already has.
    Text(&'a str),
}

/// A window of a longer text: some consecutive lines, where they start, and how many lines the
/// whole text has. The renderer draws from `first_line` on and never asks for more: a 1 GiB
/// artifact is read by the host one window at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineWindow<'a> {
    /// The line number of the first line of `text`, 1-based.
    pub first_line: u64,
    /// The lines, `\n`-separated (at least the ones that fit the view).
    pub text: &'a str,
    /// Lines of the whole text.
    pub total_lines: u64,
}

impl<'a> LineWindow<'a> {
    /// The window of `text` that starts at line `first_line` (1-based, clamped to the text):
    /// what a host passes when the whole text is in memory.
    ///
    /// ```
    /// use agentsh_renderer::LineWindow;
    ///
    /// let window = LineWindow::of_text("a\nb\nc\n", 2);
    /// assert_eq!((window.first_line, window.text, window.total_lines), (2, "b\nc\n", 3));
    /// ```
    pub fn of_text(text: &'a str, first_line: u64) -> Self {
        let total_lines = count_lines(text);
        let first_line = first_line.clamp(1, total_lines.max(1));
        let mut start = 0;
        for _ in 1..first_line {
            // `str::find` of a char runs on memchr.
            match text[start..].find('\n') {
                Some(at) => start += at + 1,
                None => break,
            }
        }
        Self {
            first_line,
            text: &text[start..],
            total_lines,
        }
    }
}

/// A bang command (`!cmd`, `!!cmd`) as the transcript holds it.
#[derive(Debug, Clone, Copy)]
pub struct BangView<'a> {
    /// The command, its output and how it ended.
    pub bang: &'a BangRun,
    /// Collapsed (the last 20 lines) or expanded (a window of the whole output).
    pub expansion: Expansion<'a>,
    /// The byte limit of the output (`output.max_bytes`), named by the truncation warning.
    pub max_bytes: u64,
    /// Advances the spinner while it runs.
    pub tick: u64,
    /// How long it has run, when the host keeps the time: its spinner row says it.
    pub elapsed: Option<Duration>,
}

impl<'a> BangView<'a> {
    /// A collapsed view with the default byte limit.
    pub fn new(bang: &'a BangRun) -> Self {
        Self {
            bang,
            expansion: Expansion::Collapsed,
            max_bytes: DEFAULT_MAX_BYTES,
            tick: 0,
            elapsed: None,
        }
    }
}

/// A command on a PTY, drawn as an overlay over the transcript.
#[derive(Debug, Clone, Copy)]
pub struct PtyOverlayView<'a> {
    /// The command, for the header.
    pub command: &'a str,
    /// The terminal's screen.
    pub screen: &'a Screen,
}
