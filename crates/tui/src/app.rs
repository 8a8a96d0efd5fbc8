//! The mode's state and its loop: one task owns the transcript, the input line and the
//! overlays; calls run as tasks of their own and report back through [`AppEvent`]s.

mod approvals;
mod calls;
mod input;
mod recall;
pub(crate) mod secrets;
mod tab;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use agentsh_protocol::JobState;
use agentsh_protocol::JobSummary;
use agentsh_pty_runtime::PtyController;
use agentsh_renderer::Renderer;
use agentsh_signals::Signals;
use ratatui::Terminal;
use ratatui::backend::Backend;
use tokio::sync::{mpsc, watch};
use tokio::time::{Instant, MissedTickBehavior, interval};

use crate::highlight::Styled;
use crate::history::{History, Suggester};
use crate::host::{AppEvent, ApprovalKey, CallKey, PtySize};
use crate::line::LineEditor;
use crate::search::HistorySearch;
use crate::session_view::SessionView;
use crate::transcript::{Entry, EntryKind, ExpandSource, NoteKind};

/// How often a running call's spinner turns.
const SPINNER_INTERVAL: Duration = Duration::from_millis(100);
/// How often job states (status line, `/job N`) are read again.
const JOBS_INTERVAL: Duration = Duration::from_millis(250);
/// Shortest time between two frames drawn for a program's output (keys are drawn at once).
const OUTPUT_FRAME_INTERVAL: Duration = agentsh_pty_runtime::MIN_DRAW_INTERVAL;

pub(crate) use tab::{Completing, NameCache};

/// The first screen's hint: what to type, and where the rest is.
pub(crate) const FIRST_HINT: &str = "Type a command to run it as the model's bash call, !cmd to run it yourself; /help lists the rest.";

/// How the mode ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quit {
    /// `/quit`, Ctrl+D.
    Asked,
    /// The terminal went away (input closed).
    TerminalGone,
    /// A signal: the exit status it calls for (SIGINT 130, SIGTERM 143, SIGHUP 129).
    Signal(u8),
}

/// What the mode was started with.
pub(crate) struct AppConfig {
    /// The interactive session (here, or on a far side).
    pub session: SessionView,
    /// The tools the interceptor may suggest.
    pub tool_names: Vec<String>,
    /// The history.
    pub history: History,
    /// Where `--listen` serves, for the status line.
    pub listen: Option<String>,
    /// The submitted line that panics on purpose (tests of the terminal's restoration only).
    pub panic_line: Option<String>,
    /// Notes to show first (warnings from the start).
    pub notes: Vec<String>,
}

/// A program shown on the PTY overlay.
pub(crate) struct Overlay {
    pub key: CallKey,
    pub controller: PtyController,
    pub command: String,
    /// Its output has ended (the program exited; its result is on the way).
    pub output_done: bool,
}

/// An expanded entry: the window of its lines in view.
pub(crate) struct Expanded {
    /// The entry.
    pub entry: usize,
    /// Where its lines come from.
    pub source: ExpandSource,
    /// The first line in view, 1-based.
    pub first_line: u64,
    /// The artifact's lines read for the view (for [`ExpandSource::Artifact`]).
    pub window: Option<ArtifactWindow>,
    /// A read asked for and not answered yet: its first line.
    pub pending: Option<u64>,
    /// Rows of output the last frame had room for.
    pub rows: u16,
    /// The view stays on the last lines (as expanded; until PgUp or Home moves it).
    pub at_end: bool,
}

/// Lines read from an artifact.
pub(crate) struct ArtifactWindow {
    pub first_line: u64,
    pub text: String,
    pub total_lines: u64,
}

/// The mode.
pub(crate) struct App<R> {
    pub renderer: R,
    pub session: SessionView,
    pub tool_names: Vec<String>,
    pub transcript: Vec<Entry>,
    /// Calls by key → their entry.
    pub calls: HashMap<CallKey, usize>,
    pub next_key: CallKey,
    pub line: LineEditor,
    pub history: History,
    /// Rows scrolled up from the bottom of the transcript.
    pub scroll: usize,
    /// The transcript's rows at the last frame: rows added below a scrolled-up view move the
    /// offset with them, so what is read stays in place.
    pub total_rows: usize,
    pub expanded: Option<Expanded>,
    /// Programs on a PTY, the newest shown.
    pub overlays: Vec<Overlay>,
    pub tick: u64,
    /// Ctrl+D asked while jobs run: the next one ends them.
    pub quit_asked: bool,
    pub quit: Option<Quit>,
    pub events: mpsc::UnboundedSender<AppEvent>,
    pub pty_size: Arc<PtySize>,
    /// The terminal's size.
    pub size: (u16, u16),
    /// Sessions of `--listen` connections, for their jobs.
    pub connections: HashMap<u64, SessionView>,
    /// Running jobs of every session, as last read.
    pub jobs_running: usize,
    pub listen: Option<String>,
    pub panic_line: Option<String>,
    /// Rows of transcript the last frame showed (a page for PgUp/PgDn).
    pub page_rows: u16,
    /// ctrl+l: the next frame is drawn on a cleared screen.
    pub clear_screen: bool,
    /// Approval requests not resolved yet and their entries, oldest first.
    pub approvals: Vec<(ApprovalKey, usize)>,
    /// Jobs' questions for hidden input, oldest first: the oldest is on the masked line.
    pub secrets: Vec<secrets::SecretPrompt>,
    /// Tab's list under the input line, while open.
    pub completing: Option<Completing>,
    /// Names read for Tab.
    pub names: NameCache,
    /// Ctrl+R's search, while open.
    pub search: Option<HistorySearch>,
    /// The search's matcher (its scratch space kept from one search to the next).
    pub matcher: Option<Box<nucleo_matcher::Matcher>>,
    /// The history's suggestion for the line.
    pub suggester: Suggester,
    /// The input line's colours, for the text they were found for.
    pub highlighted: (String, Vec<Styled>),
}

impl<R: Renderer> App<R> {
    pub(crate) fn new(
        renderer: R,
        config: AppConfig,
        events: mpsc::UnboundedSender<AppEvent>,
        pty_size: Arc<PtySize>,
        size: (u16, u16),
    ) -> Self {
        let mut app = Self {
            renderer,
            session: config.session,
            tool_names: config.tool_names,
            transcript: Vec::new(),
            calls: HashMap::new(),
            next_key: 1,
            line: LineEditor::default(),
            history: config.history,
            scroll: 0,
            total_rows: 0,
            expanded: None,
            overlays: Vec::new(),
            tick: 0,
            quit_asked: false,
            quit: None,
            events,
            pty_size,
            size,
            connections: HashMap::new(),
            jobs_running: 0,
            listen: config.listen,
            panic_line: config.panic_line,
            page_rows: size.1.saturating_sub(3),
            clear_screen: false,
            approvals: Vec::new(),
            secrets: Vec::new(),
            completing: None,
            names: NameCache::default(),
            search: None,
            matcher: None,
            suggester: Suggester::default(),
            highlighted: (String::new(), Vec::new()),
        };
        app.resized(size.0, size.1);
        app.note(NoteKind::Hint, FIRST_HINT);
        for note in config.notes {
            app.note(NoteKind::Warning, note);
        }
        app
    }

    /// Adds a note to the transcript.
    pub(crate) fn note(&mut self, kind: NoteKind, text: impl Into<String>) {
        self.push_entry(EntryKind::Note {
            kind,
            text: text.into(),
        });
    }

    /// Appends an entry; returns its index. The view follows the bottom unless scrolled up.
    pub(crate) fn push_entry(&mut self, kind: EntryKind) -> usize {
        self.transcript.push(Entry::new(kind));
        self.transcript.len() - 1
    }

    /// A fresh call key.
    pub(crate) fn new_key(&mut self) -> CallKey {
        let key = self.next_key;
        self.next_key += 1;
        key
    }

    /// The terminal changed size: the PTY size follows, and so do the programs shown.
    pub(crate) fn resized(&mut self, cols: u16, rows: u16) {
        self.size = (cols, rows);
        let screen = self
            .renderer
            .pty_screen_area(ratatui::layout::Rect::new(0, 0, cols, rows));
        self.pty_size.set(screen.width.max(1), screen.height.max(1));
        for overlay in &self.overlays {
            overlay.controller.resize(screen.width, screen.height);
        }
    }

    /// Whether any entry runs (the spinner turns).
    fn anything_running(&self) -> bool {
        // Only the newest entries can run for long; a scan of a long transcript each tick is
        // still cheap next to a frame.
        self.transcript.iter().any(Entry::is_running)
    }

    /// Reads every session's jobs again; refreshes followed jobs. Returns whether anything
    /// drawn changed.
    fn refresh_jobs(&mut self) -> bool {
        self.session.poll(&self.events);
        let mut running = count_running(&self.session.jobs_summary());
        for session in self.connections.values() {
            running += count_running(&session.jobs_summary());
        }
        let mut changed = running != self.jobs_running;
        changed |= self.drop_ended_secret_prompts();
        self.jobs_running = running;
        if !self.quit_asked || running == 0 {
            self.quit_asked = false;
        }
        for (at, entry) in self.transcript.iter_mut().enumerate() {
            if let EntryKind::Job(job) = &mut entry.kind
                && job.summary.as_ref().is_none_or(|s| !s.state.is_over())
                && calls::refresh_job(job, at, &self.events)
            {
                entry.touch();
                changed = true;
            }
        }
        changed
    }
}

fn count_running(jobs: &[JobSummary]) -> usize {
    jobs.iter()
        .filter(|job| matches!(job.state, JobState::Running | JobState::WaitingForInput))
        .count()
}

/// Waits for the shown program's next output; never, without one. A program that ended
/// leaves `None` (its result follows as an event).
async fn overlay_changed(updates: &mut Option<(CallKey, watch::Receiver<u64>)>) {
    match updates {
        Some((_, receiver)) => {
            if receiver.changed().await.is_err() {
                *updates = None;
            } else {
                receiver.mark_unchanged();
            }
        }
        None => std::future::pending().await,
    }
}

/// Runs the mode on `terminal` until it is left; returns how.
pub(crate) async fn run_loop<R: Renderer, B: Backend>(
    app: &mut App<R>,
    terminal: &mut Terminal<B>,
    events: &mut mpsc::UnboundedReceiver<AppEvent>,
) -> io::Result<Quit> {
    let mut signals = Signals::install()?;
    let mut spinner = interval(SPINNER_INTERVAL);
    spinner.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut jobs = interval(JOBS_INTERVAL);
    jobs.set_missed_tick_behavior(MissedTickBehavior::Skip);
    let mut overlay_updates: Option<(CallKey, watch::Receiver<u64>)> = None;
    let mut dirty = true;
    let mut output_frame: Option<Instant> = None;
    let mut last_frame = Instant::now();
    loop {
        if dirty && output_frame.is_none() {
            if std::mem::take(&mut app.clear_screen) {
                terminal
                    .clear()
                    .map_err(|err| io::Error::other(err.to_string()))?;
            }
            app.draw(terminal)?;
            last_frame = Instant::now();
            dirty = false;
        }
        // The overlay shown is the newest program's.
        let shown = app
            .overlays
            .last()
            .filter(|o| !o.output_done)
            .map(|o| o.key);
        if overlay_updates.as_ref().map(|(key, _)| *key) != shown {
            overlay_updates = app.overlays.last().map(|o| (o.key, o.controller.updates()));
        }
        let running = app.anything_running();
        tokio::select! {
            event = events.recv() => {
                let Some(event) = event else { return Ok(Quit::TerminalGone) };
                dirty |= app.handle(event);
                // Everything already queued is taken before the next frame.
                while let Ok(event) = events.try_recv() {
                    dirty |= app.handle(event);
                }
            }
            _ = spinner.tick(), if running => {
                app.tick += 1;
                for entry in app.transcript.iter_mut().filter(|e| e.is_running()) {
                    entry.touch();
                }
                dirty = true;
            }
            _ = jobs.tick() => {
                dirty |= app.refresh_jobs();
            }
            () = overlay_changed(&mut overlay_updates) => {
                if overlay_updates.is_none()
                    && let Some(overlay) = app.overlays.last_mut()
                {
                    overlay.output_done = true;
                }
                // Output is drawn at most every OUTPUT_FRAME_INTERVAL.
                let due = last_frame + OUTPUT_FRAME_INTERVAL;
                if Instant::now() < due {
                    output_frame.get_or_insert(due);
                }
                dirty = true;
            }
            () = async { tokio::time::sleep_until(output_frame.unwrap_or_else(Instant::now)).await }, if output_frame.is_some() => {
                output_frame = None;
            }
            code = signals.recv() => {
                app.quit = Some(Quit::Signal(code));
            }
        }
        if let Some(quit) = app.quit {
            return Ok(quit);
        }
    }
}
