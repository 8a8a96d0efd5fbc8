//! The transcript: every call, bang command and note of the session, oldest first, each with
//! its rows cached for the width they were drawn at (only a changed or running entry is drawn
//! again, so a frame over a long transcript costs the rows in view).

use std::time::Instant;

use crate::approval::ApprovalEntry;
use crate::session_view::SessionView;
use agentsh_protocol::Theme;
use agentsh_protocol::{BangRun, BangState, BashArgs, BashResult, JobSummary, ToolResult};
use agentsh_renderer::{
    BangView, CallState, Expansion, Glyphs, Renderer, ToolCallView, expand_tabs, single_line,
    strip_controls, wrap,
};
use agentsh_seam::CancellationToken;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

/// Lines of a tool result other than `bash`'s shown collapsed (its last ones).
const COLLAPSED_OTHER_LINES: usize = 10;

/// Where a call came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Typed here.
    Local,
    /// Sent by a client of `--listen`, connection `n` (1-based, in order of arrival).
    Connection(u64),
}

/// A tool call: `bash` (drawn by the renderer) or a job tool.
pub(crate) struct ToolEntry {
    /// Who sent it.
    pub origin: Origin,
    /// The tool's name.
    pub tool: String,
    /// For `bash`: the arguments as the renderer draws them (for arguments that do not parse,
    /// the raw text as the command).
    pub args: BashArgs,
    /// For another tool: its arguments as JSON text, for the header.
    pub args_text: String,
    /// The session's directory: a call elsewhere is drawn `$ cd <dir> && …`.
    pub project_dir: String,
    /// Running (the live tail) or done.
    pub state: ToolState,
    /// Cancelling it aborts the call.
    pub cancel: CancellationToken,
    /// The byte limit of the session's output (for the truncation warning's text).
    pub max_bytes: u64,
    /// When it started (its running row says for how long).
    pub started: Instant,
    /// It waits for the person's approval (its running row says so instead of the time).
    pub awaiting_approval: bool,
}

/// Where a tool call is.
pub(crate) enum ToolState {
    /// Running; the latest live tail.
    Running(String),
    /// Done.
    Done(Box<ToolResult>),
}

/// A bang command.
pub(crate) struct BangEntry {
    /// The command, its output so far or its result.
    pub run: BangRun,
    /// Aborts it (typed here, or a client's `bash` request).
    pub abort: CancellationToken,
    /// Esc aborted it already (it is ending).
    pub aborted: bool,
    /// The byte limit of the session's output.
    pub max_bytes: u64,
    /// When it started (its running row says for how long).
    pub started: Instant,
}

/// A followed job (`/job N`).
pub(crate) struct JobEntry {
    /// The session the job belongs to.
    pub session: SessionView,
    /// Its id.
    pub id: String,
    /// What was last read: the job line, its output's last lines or screen rows.
    pub summary: Option<JobSummary>,
    /// The text shown under the job line.
    pub body: String,
    /// A read of a far side's job is on its way.
    pub waiting: bool,
}

impl JobEntry {
    /// Job `id` of `session`, not read yet.
    pub(crate) fn new(session: SessionView, id: String) -> Self {
        Self {
            session,
            id,
            summary: None,
            body: String::new(),
            waiting: false,
        }
    }
}

/// What a note is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NoteKind {
    /// Information (help, context, lists).
    Info,
    /// Something went wrong or needs an answer.
    Warning,
    /// A hint, dimmed (the first screen's).
    Hint,
}

/// One transcript entry.
pub(crate) enum EntryKind {
    /// A tool call.
    Tool(Box<ToolEntry>),
    /// A bang command.
    Bang(BangEntry),
    /// A followed job.
    Job(JobEntry),
    /// `/jobs`: every job as it was then.
    Jobs(Vec<JobSummary>),
    /// `/artifact ID`: an artifact, read window by window once expanded.
    Artifact {
        /// The id as typed (a bare id or `artifact://ID`).
        id: String,
    },
    /// An approval request for the person: pending until answered here or elsewhere.
    Approval(Box<ApprovalEntry>),
    /// A note from the mode itself.
    Note {
        /// Its kind (colour).
        kind: NoteKind,
        /// Its text.
        text: String,
    },
}

/// An entry and its cached rows.
pub(crate) struct Entry {
    /// What it is.
    pub kind: EntryKind,
    /// Bumped on every change; the cache is for one version.
    version: u64,
    cache: Option<Cached>,
}

struct Cached {
    width: u16,
    version: u64,
    lines: Vec<Line<'static>>,
}

impl Entry {
    /// A new entry.
    pub(crate) fn new(kind: EntryKind) -> Self {
        Self {
            kind,
            version: 0,
            cache: None,
        }
    }

    /// Marks it changed.
    pub(crate) fn touch(&mut self) {
        self.version += 1;
    }

    /// Whether it still runs (its spinner turns).
    pub(crate) fn is_running(&self) -> bool {
        match &self.kind {
            EntryKind::Tool(tool) => matches!(tool.state, ToolState::Running(_)),
            EntryKind::Bang(bang) => matches!(bang.run.state, BangState::Running { .. }),
            EntryKind::Job(job) => job.summary.as_ref().is_some_and(|s| !s.state.is_over()),
            EntryKind::Note { .. }
            | EntryKind::Jobs(_)
            | EntryKind::Artifact { .. }
            | EntryKind::Approval(_) => false,
        }
    }

    /// Its collapsed rows at `width` (a blank row after it), from the cache when unchanged.
    pub(crate) fn rows(&mut self, draw: &Draw<'_>) -> &[Line<'static>] {
        let fresh = self
            .cache
            .as_ref()
            .is_some_and(|c| c.width == draw.width && c.version == self.version);
        if !fresh {
            let mut lines = self.draw(draw, Expansion::Collapsed);
            lines.push(Line::default());
            self.cache = Some(Cached {
                width: draw.width,
                version: self.version,
                lines,
            });
        }
        self.cache.as_ref().map_or(&[], |cached| &cached.lines)
    }

    /// Its rows with `expansion`, drawn now (no cache).
    pub(crate) fn draw(&self, draw: &Draw<'_>, expansion: Expansion<'_>) -> Vec<Line<'static>> {
        let width = draw.width;
        match &self.kind {
            EntryKind::Tool(tool) if tool.tool == agentsh_protocol::BASH_TOOL => {
                let state = match &tool.state {
                    ToolState::Running(tail) => CallState::Running { tail },
                    ToolState::Done(result) => CallState::Done(result),
                };
                let view = ToolCallView {
                    args: &tool.args,
                    project_dir: &tool.project_dir,
                    state,
                    expansion,
                    max_bytes: tool.max_bytes,
                    tick: draw.tick,
                    elapsed: Some(tool.started.elapsed()),
                    awaiting_approval: tool.awaiting_approval,
                };
                let mut lines = draw.renderer.tool_call(&view, width).lines;
                mark_origin(&mut lines, &tool.origin);
                lines
            }
            EntryKind::Tool(tool) => other_tool_rows(tool, draw),
            EntryKind::Bang(bang) => {
                let view = BangView {
                    bang: &bang.run,
                    expansion,
                    max_bytes: bang.max_bytes,
                    tick: draw.tick,
                    elapsed: Some(bang.started.elapsed()),
                };
                draw.renderer.bang(&view, width).lines
            }
            EntryKind::Job(job) => {
                let mut lines = Vec::new();
                if let Some(summary) = &job.summary {
                    lines.push(draw.renderer.job_line(summary, width));
                } else if job.waiting {
                    lines.push(Line::styled(
                        format!("job {}: reading…", single_line(&job.id)),
                        Style::new().fg(Color::DarkGray),
                    ));
                } else {
                    lines.push(Line::styled(
                        format!("job {}: no such job", single_line(&job.id)),
                        Style::new().fg(Color::Yellow),
                    ));
                }
                lines.extend(text_rows(&job.body, width, Style::new().fg(Color::Gray)));
                lines
            }
            EntryKind::Jobs(jobs) => {
                let mut lines = vec![Line::styled("/jobs", Style::new().fg(Color::DarkGray))];
                lines.extend(jobs.iter().map(|job| draw.renderer.job_line(job, width)));
                lines
            }
            EntryKind::Artifact { id } => artifact_rows(id, expansion, width),
            EntryKind::Approval(approval) => approval.rows(width, &draw.glyphs),
            EntryKind::Note { kind, text } => {
                let style = match kind {
                    NoteKind::Info => Style::new(),
                    NoteKind::Warning => Style::new().fg(Color::Yellow),
                    NoteKind::Hint => Style::new().fg(Color::DarkGray),
                };
                text_rows(text, width, style)
            }
        }
    }

    /// The finished output an expanded view reads: `(artifact id, total lines)` or the text.
    pub(crate) fn expand_source(&self) -> Option<ExpandSource> {
        match &self.kind {
            EntryKind::Tool(tool) if tool.tool == agentsh_protocol::BASH_TOOL => {
                let view = ToolCallView::new(
                    &tool.args,
                    &tool.project_dir,
                    match &tool.state {
                        ToolState::Running(tail) => CallState::Running { tail },
                        ToolState::Done(result) => CallState::Done(result),
                    },
                );
                Some(match view.expanded_source() {
                    agentsh_renderer::ExpandedSource::Artifact(id) => {
                        let total = match &tool.state {
                            ToolState::Done(result) => result
                                .details
                                .raw_artifact()
                                .map_or(0, |(_, total_lines)| total_lines),
                            ToolState::Running(_) => 0,
                        };
                        ExpandSource::Artifact {
                            id: id.to_owned(),
                            total_lines: total,
                        }
                    }
                    agentsh_renderer::ExpandedSource::Text(_) => ExpandSource::Text,
                })
            }
            EntryKind::Artifact { id } => Some(ExpandSource::Artifact {
                id: id.clone(),
                total_lines: 0,
            }),
            EntryKind::Bang(bang) => Some(match &bang.run.state {
                BangState::Finished(BashResult { summary, .. }) => match &summary.artifact_id {
                    Some(id) => ExpandSource::Artifact {
                        id: id.clone(),
                        total_lines: summary.total_lines,
                    },
                    None => ExpandSource::Text,
                },
                BangState::Running { .. } => ExpandSource::Text,
            }),
            _ => None,
        }
    }

    /// The text an expanded view of an entry without an artifact shows.
    pub(crate) fn own_text(&self) -> &str {
        match &self.kind {
            EntryKind::Tool(tool) => match &tool.state {
                ToolState::Running(tail) => tail,
                ToolState::Done(result) => result.first_text(),
            },
            EntryKind::Bang(bang) => bang.run.output(),
            EntryKind::Job(job) => &job.body,
            EntryKind::Note { text, .. } => text,
            EntryKind::Jobs(_) | EntryKind::Artifact { .. } | EntryKind::Approval(_) => "",
        }
    }
}

/// Where an expanded entry's lines come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ExpandSource {
    /// An artifact, read window by window.
    Artifact {
        /// Its id.
        id: String,
        /// Its lines, as the result counted them (0 when unknown).
        total_lines: u64,
    },
    /// The entry's own text.
    Text,
}

/// What drawing needs besides the entry.
pub(crate) struct Draw<'a> {
    /// The renderer.
    pub renderer: &'a dyn Renderer,
    /// The width in columns.
    pub width: u16,
    /// The spinner tick.
    pub tick: u64,
    /// The theme's glyphs, for what the mode draws itself.
    pub glyphs: Glyphs,
}

/// An artifact opened with `/artifact`: its header, and once expanded the lines in view with
/// where they are.
fn artifact_rows(id: &str, expansion: Expansion<'_>, width: u16) -> Vec<Line<'static>> {
    let header = format!(
        "artifact://{}",
        single_line(id.trim_start_matches("artifact://"))
    );
    let mut lines: Vec<Line<'static>> = wrap(&header, width)
        .map(|row| Line::styled(row.to_owned(), Style::new().add_modifier(Modifier::BOLD)))
        .collect();
    let muted = Style::new().fg(Color::DarkGray);
    match expansion {
        Expansion::Collapsed => lines.push(Line::styled("(ctrl+o to expand)", muted)),
        Expansion::Expanded { window, rows } => {
            let mut body = text_rows(window.text, width, Style::new().fg(Color::Gray));
            body.truncate(usize::from(rows));
            let shown = visible_lines(window.text, width, rows);
            lines.extend(body);
            let last = (window.first_line + shown.max(1) - 1).min(window.total_lines.max(1));
            lines.push(Line::styled(
                format!(
                    "(lines {}-{last} of {}, ctrl+o to collapse)",
                    window.first_line, window.total_lines
                ),
                muted,
            ));
        }
    }
    lines
}

/// How many of `text`'s lines fit whole into `rows` rows at `width` (at least one, when there
/// is a line).
pub(crate) fn visible_lines(text: &str, width: u16, rows: u16) -> u64 {
    let mut left = usize::from(rows);
    let mut shown = 0;
    for line in agentsh_protocol::lines_of(text) {
        let needed = agentsh_renderer::visual_rows(&expand_tabs(&strip_controls(line)), width);
        if needed > left {
            if shown == 0 {
                shown = 1;
            }
            break;
        }
        left -= needed;
        shown += 1;
    }
    shown
}

impl<'a> Draw<'a> {
    /// What drawing at `width` needs, in `theme` (the setting `ui.theme`).
    pub(crate) fn new(renderer: &'a dyn Renderer, theme: Theme, width: u16, tick: u64) -> Self {
        Self {
            renderer,
            width,
            tick,
            glyphs: Glyphs::of(theme),
        }
    }
}

/// A client's call is marked on its first row: `[1] $ make`.
fn mark_origin(lines: &mut [Line<'static>], origin: &Origin) {
    if let (Origin::Connection(n), Some(first)) = (origin, lines.first_mut()) {
        first.spans.insert(
            0,
            Span::styled(format!("[{n}] "), Style::new().fg(Color::Magenta)),
        );
        // The mark may push the row past the width: the terminal then cuts it, never wraps it.
    }
}

/// A job tool's call: `⚙ job_output {"id":"1"}`, then the last lines of its result.
fn other_tool_rows(tool: &ToolEntry, draw: &Draw<'_>) -> Vec<Line<'static>> {
    let width = draw.width;
    let mut header = format!("{} {}", tool.tool, single_line(&tool.args_text));
    if let Origin::Connection(n) = tool.origin {
        header = format!("[{n}] {header}");
    }
    let mut lines: Vec<Line<'static>> = wrap(&header, width)
        .map(|row| Line::styled(row.to_owned(), Style::new().add_modifier(Modifier::BOLD)))
        .collect();
    match &tool.state {
        ToolState::Running(_) => {
            lines.push(Line::styled(
                draw.glyphs
                    .running_line_after(draw.tick, Some(tool.started.elapsed())),
                Style::new().fg(Color::Cyan),
            ));
        }
        ToolState::Done(result) => {
            let text = result.first_text();
            let all: Vec<&str> = text.lines().collect();
            let skip = all.len().saturating_sub(COLLAPSED_OTHER_LINES);
            let style = if result.is_error {
                Style::new().fg(Color::Red)
            } else {
                Style::new().fg(Color::Gray)
            };
            for line in &all[skip..] {
                lines.extend(text_rows(line, width, style));
            }
        }
    }
    lines
}

/// Untrusted text as rows: controls stripped, tabs expanded, wrapped at `width`.
pub(crate) fn text_rows(text: &str, width: u16, style: Style) -> Vec<Line<'static>> {
    let clean = strip_controls(text);
    let mut rows = Vec::new();
    for line in clean.split('\n') {
        let line = expand_tabs(line);
        for row in wrap(&line, width) {
            rows.push(Line::styled(row.to_owned(), style));
        }
    }
    if clean.ends_with('\n') {
        rows.pop();
    }
    rows
}
