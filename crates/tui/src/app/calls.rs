//! Starting calls and taking in what they report: tool calls, bang commands, PTY programs,
//! followed jobs, and the windows of an expanded result.

use std::sync::Arc;

use agentsh_protocol::{BASH_TOOL, BangOptions, BashArgs, JobView, ToolOutcome};
use agentsh_protocol::{BangRun, BangState, JobState, count_lines};
use agentsh_renderer::Renderer;
use agentsh_seam::wire::ArtifactData;
use agentsh_seam::{CancellationToken, Value};
use tokio::sync::mpsc::UnboundedSender;

use super::{App, ArtifactWindow, Expanded, Overlay};
use crate::approval::TuiApprover;
use crate::host::{AppEvent, CallKey, HostedKind, HostedStart, UiPtyHost};
use crate::session_view::{Look, SessionView};
use crate::transcript::{
    BangEntry, Entry, EntryKind, ExpandSource, JobEntry, NoteKind, Origin, ToolEntry, ToolState,
};

/// Bytes of a running bang command's output kept for its view (its last 20 lines are drawn;
/// the whole output is in its artifact once it ends).
const BANG_LIVE_BYTES: usize = 256 * 1024;
/// Lines of a followed job's output shown.
const JOB_VIEW_LINES: usize = 20;

impl<R: Renderer> App<R> {
    /// Runs a `bash` tool call typed here (a command or JSON arguments).
    pub(crate) fn start_tool(&mut self, args: serde_json::Map<String, Value>) {
        let key = self.new_key();
        let arguments = Value::Object(args);
        let cancel = CancellationToken::new();
        let session = self.session.clone();
        let place = (session.cwd(), session.settings().output_max_bytes);
        self.add_tool_entry(
            key,
            Origin::Local,
            place,
            BASH_TOOL,
            &arguments,
            cancel.clone(),
        );
        let pty_host = Arc::new(UiPtyHost {
            key,
            events: self.events.clone(),
            size: Arc::clone(&self.pty_size),
        });
        let approver = Arc::new(TuiApprover {
            call: key,
            connection: None,
            events: self.events.clone(),
        });
        let tool_names = self.tool_names.clone();
        let events = self.events.clone();
        tokio::spawn(async move {
            let updates = events.clone();
            let on_update = move |text: String| {
                let _ = updates.send(AppEvent::ToolUpdate(key, text));
            };
            let call_id = format!("tui-{key}");
            let outcome = session
                .run_tool(
                    &call_id,
                    &arguments,
                    &tool_names,
                    cancel,
                    pty_host,
                    approver,
                    on_update,
                )
                .await;
            let _ = events.send(AppEvent::ToolDone(key, outcome));
        });
    }

    /// A tool call's entry, running; `place` is its session's directory and output limit.
    fn add_tool_entry(
        &mut self,
        key: CallKey,
        origin: Origin,
        place: (String, u64),
        tool: &str,
        arguments: &Value,
        cancel: CancellationToken,
    ) {
        let args = BashArgs::from_value(arguments).unwrap_or_else(|_| BashArgs {
            // Arguments the tool will refuse: the header shows what was sent.
            command: arguments.to_string(),
            ..BashArgs::default()
        });
        let entry = self.push_entry(EntryKind::Tool(Box::new(ToolEntry {
            origin,
            tool: tool.to_owned(),
            args,
            args_text: arguments.to_string(),
            project_dir: place.0,
            state: ToolState::Running(String::new()),
            cancel,
            max_bytes: place.1,
            started: std::time::Instant::now(),
            awaiting_approval: false,
        })));
        self.calls.insert(key, entry);
    }

    /// Runs a bang command typed here.
    pub(crate) fn start_bang(&mut self, command: String, exclude_from_context: bool) {
        let key = self.new_key();
        let session = self.session.clone();
        let abort = CancellationToken::new();
        let entry = self.push_entry(bang_entry(
            &command,
            exclude_from_context,
            abort.clone(),
            session.settings().output_max_bytes,
        ));
        self.calls.insert(key, entry);
        let events = self.events.clone();
        tokio::spawn(async move {
            let output = events.clone();
            let options = BangOptions {
                timeout: None,
                exclude_from_context,
            };
            let result = session
                .run_bang(&command, options, abort, move |text: &str| {
                    let _ = output.send(AppEvent::BangOutput(key, text.to_owned()));
                })
                .await;
            let _ = events.send(AppEvent::BangDone(key, result));
        });
    }

    /// A call of a `--listen` client started: its entry.
    fn hosted(&mut self, start: HostedStart) {
        let origin = Origin::Connection(start.connection);
        let settings = self.session.settings().clone();
        let fresh = !self.connections.contains_key(&start.connection);
        let session = self
            .connections
            .entry(start.connection)
            .or_insert_with(|| SessionView::new(start.session, settings));
        let place = (session.cwd(), session.settings().output_max_bytes);
        if fresh {
            let view = session.clone();
            self.follow_events(&view, Some(start.connection));
        }
        match start.kind {
            HostedKind::Tool { name, arguments } => {
                self.add_tool_entry(start.key, origin, place, &name, &arguments, start.cancel);
            }
            HostedKind::Bash { command } => {
                let entry = self.push_entry(bang_entry(&command, false, start.cancel, place.1));
                self.calls.insert(start.key, entry);
            }
        }
    }

    /// What a call's task reported; returns whether the screen changed.
    pub(crate) fn call_event(&mut self, event: AppEvent) -> bool {
        match event {
            AppEvent::ToolUpdate(key, text) => {
                self.with_call(key, |kind| {
                    if let EntryKind::Tool(tool) = kind
                        && let ToolState::Running(tail) = &mut tool.state
                    {
                        *tail = text;
                    }
                });
            }
            AppEvent::ToolDone(key, outcome) => {
                let (ToolOutcome::Finished(result) | ToolOutcome::Aborted(result)) = outcome;
                self.with_call(key, |kind| {
                    if let EntryKind::Tool(tool) = kind {
                        tool.state = ToolState::Done(Box::new(result));
                    }
                });
                self.call_ended(key);
            }
            AppEvent::BangOutput(key, text) => {
                self.with_call(key, |kind| {
                    if let EntryKind::Bang(bang) = kind
                        && let BangState::Running { output } = &mut bang.run.state
                    {
                        output.push_str(&text);
                        keep_tail(output, BANG_LIVE_BYTES);
                    }
                });
            }
            AppEvent::BangDone(key, result) => {
                self.with_call(key, |kind| match result {
                    Ok(result) => {
                        if let EntryKind::Bang(bang) = kind {
                            bang.run.state = BangState::Finished(result);
                        }
                    }
                    Err(error) => {
                        *kind = EntryKind::Note {
                            kind: NoteKind::Warning,
                            text: error,
                        };
                    }
                });
                self.call_ended(key);
            }
            AppEvent::PtyAttached(key, controller) => {
                let command = self
                    .calls
                    .get(&key)
                    .and_then(|&at| match &self.transcript[at].kind {
                        EntryKind::Tool(tool) => Some(tool.args.command.clone()),
                        _ => None,
                    })
                    .unwrap_or_default();
                let (cols, rows) = self.pty_size.get().unwrap_or((80, 24));
                controller.resize(cols, rows);
                self.overlays.push(Overlay {
                    key,
                    controller,
                    command,
                    output_done: false,
                });
            }
            AppEvent::Window {
                id,
                first_line,
                read,
            } => self.window_read(&id, first_line, read),
            AppEvent::Hosted(start) => self.hosted(*start),
            AppEvent::ApprovalAsked(ask) => self.approval_asked(*ask),
            AppEvent::SecretAsked {
                connection,
                request,
            } => self.secret_asked(connection, request),
            AppEvent::SecretSent { job, sent } => self.secret_sent(&job, sent),
            AppEvent::JobEnded { connection, end } => self.job_ended(connection, &end),
            AppEvent::ApprovalResolved { key, resolution } => {
                self.approval_resolved(&key, resolution);
            }
            AppEvent::JobLooked { entry, id, look } => {
                let Some(Entry {
                    kind: EntryKind::Job(job),
                    ..
                }) = self.transcript.get_mut(entry)
                else {
                    return false;
                };
                if job.id != id {
                    return false;
                }
                job.waiting = false;
                let changed = show_look(job, look);
                if changed {
                    self.transcript[entry].touch();
                }
                return changed;
            }
            AppEvent::Named { source, names } => self.named(&source, names),
            AppEvent::Killed { typed, outcome } => self.killed(&typed, outcome),
            // The status line is drawn from what the poll read.
            AppEvent::FarPolled => {}
            AppEvent::Terminal(_) | AppEvent::InputClosed => return false,
        }
        true
    }

    fn with_call(&mut self, key: CallKey, change: impl FnOnce(&mut EntryKind)) {
        if let Some(&at) = self.calls.get(&key) {
            let entry = &mut self.transcript[at];
            change(&mut entry.kind);
            entry.touch();
        }
    }

    fn call_ended(&mut self, key: CallKey) {
        // It may have made or removed files: Tab reads them again.
        self.names.clear();
        self.calls.remove(&key);
        self.overlays.retain(|overlay| overlay.key != key);
        if let Some(target) = self.session.take_reconnected() {
            self.note(
                NoteKind::Warning,
                format!(
                    "Reconnected to {target}: a new session (earlier jobs and shell state are gone)"
                ),
            );
        }
    }

    /// `/job N`: follows the job in the transcript.
    pub(crate) fn follow_job(&mut self, id: String) {
        let at = self.transcript.len();
        let mut job = JobEntry::new(self.session.clone(), id);
        refresh_job(&mut job, at, &self.events);
        if job.summary.is_none() && !job.waiting {
            // Perhaps a client's job.
            for session in self.connections.values() {
                let mut theirs = JobEntry::new(session.clone(), job.id.clone());
                if refresh_job(&mut theirs, at, &self.events) {
                    job = theirs;
                    break;
                }
            }
        }
        self.push_entry(EntryKind::Job(job));
    }

    /// `/kill N`: ends job N (and every process it left) as the `job_kill` tool does; the
    /// transcript says how it went when it has.
    pub(crate) fn kill_job(&mut self, id: String, typed: &str) {
        let key = self.new_key();
        let (session, events, typed) =
            (self.session.clone(), self.events.clone(), typed.to_owned());
        tokio::spawn(async move {
            let outcome = session.kill_job(&format!("tui-kill-{key}"), &id).await;
            let _ = events.send(AppEvent::Killed { typed, outcome });
        });
    }

    /// `/kill N` ended: its result in the transcript, and the jobs read again.
    fn killed(&mut self, typed: &str, outcome: ToolOutcome) {
        let (ToolOutcome::Finished(result) | ToolOutcome::Aborted(result)) = outcome;
        let kind = if result.is_error {
            NoteKind::Warning
        } else {
            NoteKind::Info
        };
        self.note(kind, format!("{typed}\n{}", result.first_text().trim_end()));
        self.scroll = 0;
        self.refresh_jobs();
    }

    /// `/artifact ID`: an entry, expanded at its first line.
    pub(crate) fn open_artifact(&mut self, id: String) {
        let entry = self.push_entry(EntryKind::Artifact { id: id.clone() });
        self.expanded = Some(Expanded {
            entry,
            source: ExpandSource::Artifact { id, total_lines: 0 },
            first_line: 1,
            window: None,
            pending: None,
            rows: self.page_rows,
            at_end: false,
        });
        self.request_window(1);
    }

    /// ctrl+o: expands the last result (at its end), or collapses it.
    pub(crate) fn toggle_expanded(&mut self) {
        if self.expanded.take().is_some() {
            return;
        }
        let Some((entry, source)) = self
            .transcript
            .iter()
            .enumerate()
            .rev()
            .find_map(|(at, entry)| entry.expand_source().map(|source| (at, source)))
        else {
            return;
        };
        let rows = self.page_rows.max(1);
        let total = match &source {
            ExpandSource::Artifact { total_lines, .. } => *total_lines,
            ExpandSource::Text => count_lines(self.transcript[entry].own_text()),
        };
        let first_line = total.saturating_sub(u64::from(rows)) + 1;
        let artifact = matches!(source, ExpandSource::Artifact { .. });
        self.expanded = Some(Expanded {
            entry,
            source,
            first_line,
            window: None,
            pending: None,
            rows,
            at_end: true,
        });
        if artifact {
            self.request_window(first_line);
        }
    }

    /// PgUp/PgDn: a page of the expanded result, or of the transcript.
    pub(crate) fn page(&mut self, up: bool) {
        let Some(expanded) = &self.expanded else {
            let page = usize::from(self.page_rows.max(2) - 1);
            self.scroll = if up {
                self.scroll.saturating_add(page)
            } else {
                self.scroll.saturating_sub(page)
            };
            return;
        };
        let rows = i64::from(expanded.rows.max(1));
        self.move_expanded(if up { -rows } else { rows });
    }

    /// Moves the expanded view by `lines` (negative: up), clamped to the output; `i64::MIN`
    /// and `i64::MAX` go to the first and the last page.
    pub(crate) fn move_expanded(&mut self, lines: i64) {
        let Some(expanded) = &mut self.expanded else {
            return;
        };
        let rows = u64::from(expanded.rows.max(1));
        let total = match (&expanded.source, &expanded.window) {
            (ExpandSource::Artifact { .. }, Some(window)) => window.total_lines,
            (ExpandSource::Artifact { total_lines, .. }, None) => *total_lines,
            (ExpandSource::Text, _) => count_lines(self.transcript[expanded.entry].own_text()),
        };
        let last_start = (total.saturating_sub(rows) + 1).max(1);
        let first_line = if lines < 0 {
            expanded
                .first_line
                .saturating_sub(lines.unsigned_abs())
                .max(1)
        } else {
            expanded
                .first_line
                .saturating_add(lines.unsigned_abs())
                .min(last_start)
        };
        expanded.at_end = first_line == last_start && lines > 0;
        if first_line == expanded.first_line {
            return;
        }
        expanded.first_line = first_line;
        if matches!(expanded.source, ExpandSource::Artifact { .. }) {
            self.request_window(first_line);
        }
    }

    /// Reads the expanded artifact's lines from `first_line` on, off the loop's thread.
    pub(crate) fn request_window(&mut self, first_line: u64) {
        let Some(expanded) = &mut self.expanded else {
            return;
        };
        let ExpandSource::Artifact { id, .. } = &expanded.source else {
            return;
        };
        expanded.pending = Some(first_line);
        let (id, session, events) = (id.clone(), self.session.clone(), self.events.clone());
        // A window's worth and some: rows may grow before the answer comes.
        let limit = u64::from(self.size.1.max(expanded.rows)) + 1;
        tokio::spawn(async move {
            let read = session.read_artifact(id.clone(), first_line, limit).await;
            let _ = events.send(AppEvent::Window {
                id,
                first_line,
                read,
            });
        });
    }

    fn window_read(&mut self, id: &str, first_line: u64, read: Result<ArtifactData, String>) {
        let Some(expanded) = &mut self.expanded else {
            return;
        };
        let same =
            matches!(&expanded.source, ExpandSource::Artifact { id: shown, .. } if shown == id);
        if !same || expanded.pending != Some(first_line) {
            return;
        }
        expanded.pending = None;
        match read {
            Ok(text) => {
                let total = text.total_lines;
                expanded.window = Some(ArtifactWindow {
                    first_line,
                    text: text.text,
                    total_lines: total,
                });
                // Past the end (the count was not known): the last page instead.
                let rows = u64::from(expanded.rows.max(1));
                if first_line > 1 && first_line + rows > total + 1 {
                    let last_start = total.saturating_sub(rows) + 1;
                    if last_start < first_line {
                        expanded.first_line = last_start;
                        self.request_window(last_start);
                    }
                }
            }
            Err(error) => {
                self.expanded = None;
                self.note(NoteKind::Warning, error);
            }
        }
    }
}

/// A running bang command's entry; `max_bytes` is its session's output limit.
fn bang_entry(
    command: &str,
    exclude_from_context: bool,
    abort: CancellationToken,
    max_bytes: u64,
) -> EntryKind {
    EntryKind::Bang(BangEntry {
        run: BangRun {
            command: command.to_owned(),
            exclude_from_context,
            state: BangState::Running {
                output: String::new(),
            },
        },
        abort,
        aborted: false,
        max_bytes,
        started: std::time::Instant::now(),
    })
}

/// Drops the start of `text` beyond `max` bytes, at a line start when there is one.
fn keep_tail(text: &mut String, max: usize) {
    if text.len() <= max {
        return;
    }
    let mut cut = text.len() - agentsh_protocol::tail_of(text, max).len();
    if let Some(newline) = text[cut..].find('\n') {
        cut += newline + 1;
    }
    text.replace_range(..cut, "");
}

/// Reads a followed job (transcript entry `entry`) again; returns whether what it shows
/// changed. A far side's job is read off the loop: its answer comes as
/// `AppEvent::JobLooked`, and no second read starts while one is on its way.
pub(crate) fn refresh_job(
    job: &mut JobEntry,
    entry: usize,
    events: &UnboundedSender<AppEvent>,
) -> bool {
    if job.waiting {
        return false;
    }
    match job.session.job_look(&job.id, entry, events) {
        Look::Now(look) => show_look(job, look.map(|look| *look)),
        Look::Later => {
            job.waiting = true;
            false
        }
    }
}

/// Shows what a read of a followed job found (`None`: no such job); returns whether what it
/// shows changed.
fn show_look(job: &mut JobEntry, look: Option<JobView>) -> bool {
    let Some(look) = look else {
        // Gone while it ran: its session ended (a far side's, with its connection), and the
        // end of a session kills every job.
        if let Some(summary) = job.summary.as_mut()
            && !summary.state.is_over()
        {
            summary.state = JobState::Killed;
            return true;
        }
        return false;
    };
    let body = if let Some(screen) = &look.screen {
        let mut rows = screen.rows_text();
        while rows.last().is_some_and(|row| row.trim().is_empty()) {
            rows.pop();
        }
        rows.join("\n")
    } else {
        let lines: Vec<&str> = look.output.lines().collect();
        lines[lines.len().saturating_sub(JOB_VIEW_LINES)..].join("\n")
    };
    let summary = Some(look.summary);
    let changed = body != job.body || summary != job.summary;
    job.body = body;
    job.summary = summary;
    changed
}

#[cfg(test)]
mod tests {
    use super::keep_tail;

    #[test]
    fn a_kept_tail_starts_at_a_line() {
        let mut text = "aaaa\nbbbb\ncccc\n".to_owned();
        keep_tail(&mut text, 8);
        assert_eq!(text, "cccc\n");
        let mut short = "ab".to_owned();
        keep_tail(&mut short, 8);
        assert_eq!(short, "ab");
    }
}
