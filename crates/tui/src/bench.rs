//! What `benches/frame.rs` measures, with the mode's private types: one keystroke and the
//! frame it draws over a transcript of a given length, against the floor of drawing the same
//! rows as plain text on the same backend. Not part of the API.

use std::fmt::Write as _;
use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

use agentsh_agent_session::{
    AgentSession, LocalHandle, SessionOptions, Settings, Timeout, ToolDetails,
};
use agentsh_protocol::ToolResult;
use agentsh_renderer::DefaultRenderer;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::Paragraph;
use ratatui::{Terminal, TerminalOptions, Viewport};
use tokio::sync::mpsc;

use crate::app::{App, AppConfig};
use crate::history::History;
use crate::host::AppEvent;
use crate::transcript::{EntryKind, Origin, ToolEntry, ToolState};

/// Lines of output per call in the transcript.
const LINES_PER_CALL: usize = 10;

/// The mode over a transcript, drawing on a crossterm backend that writes to nowhere (the
/// escape sequences are still produced: the CPU a real terminal frame costs agentsh).
pub struct FrameBench {
    app: App<DefaultRenderer>,
    terminal: Terminal<CrosstermBackend<io::Sink>>,
    // The session's runtime: Tab's reads of names run on it.
    runtime: tokio::runtime::Runtime,
    events: mpsc::UnboundedReceiver<AppEvent>,
    typed: usize,
}

/// What `FrameBench::type_command` types, a key at a time (then Ctrl+U, and again).
const TYPED_COMMAND: &str = "cargo test -p crate-0042 --release";

/// The history entry `n` of a made-up history: commands a person repeats, with numbers.
fn history_entry(n: usize) -> String {
    match n % 6 {
        0 => format!("cargo test -p crate-{:04}", n % 1000),
        1 => format!("git commit -m 'change {n}'"),
        2 => format!("ls -la dir-{}", n % 300),
        3 => format!("grep -rn 'needle{n}' src/"),
        4 => format!("cargo build -p crate-{:04} --release", n % 700),
        _ => format!("echo step-{n} && make -j4 target-{}", n % 50),
    }
}

/// The mode without a terminal: an `App` over a fresh session in the temp directory, with
/// the runtime its session needs and the receiving end of its events (kept, never read).
pub(crate) struct Detached {
    pub app: App<DefaultRenderer>,
    pub runtime: tokio::runtime::Runtime,
    pub events: mpsc::UnboundedReceiver<AppEvent>,
}

impl Detached {
    /// The mode at `cols` × `rows` with `settings`.
    pub(crate) fn new(settings: Settings, cols: u16, rows: u16) -> io::Result<Self> {
        Self::new_in(
            settings,
            &std::env::temp_dir(),
            History::open(None).0,
            (cols, rows),
        )
    }

    /// The mode at `size` with `settings`, its session in `cwd`, with `history`.
    pub(crate) fn new_in(
        settings: Settings,
        cwd: &Path,
        history: History,
        (cols, rows): (u16, u16),
    ) -> io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let session = {
            let _entered = runtime.enter();
            let view = settings.view_settings();
            let session = AgentSession::new(SessionOptions {
                settings,
                cwd: cwd.to_path_buf(),
                ..SessionOptions::default()
            })
            .map_err(io::Error::other)?;
            crate::session_view::SessionView::new(LocalHandle::new(session).into_handle(), view)
        };
        let (events_tx, events) = mpsc::unbounded_channel();
        let config = AppConfig {
            session,
            tool_names: Vec::new(),
            history,
            listen: None,
            panic_line: None,
            notes: Vec::new(),
        };
        let app = App::new(
            DefaultRenderer::default(),
            config,
            events_tx,
            std::sync::Arc::default(),
            (cols, rows),
        );
        Ok(Self {
            app,
            runtime,
            events,
        })
    }
}

/// A finished `bash` call of `command` in the temp directory that printed `text`, exit 0.
pub(crate) fn finished_call(command: &str, text: String) -> EntryKind {
    let cwd = std::env::temp_dir();
    let mut details = ToolDetails::not_run(&cwd, Timeout::clamp(300.0));
    details.exit_code = Some(0);
    EntryKind::Tool(Box::new(ToolEntry {
        origin: Origin::Local,
        tool: "bash".into(),
        args: agentsh_protocol::BashArgs {
            command: command.into(),
            ..Default::default()
        },
        args_text: String::new(),
        project_dir: cwd.to_string_lossy().into_owned(),
        state: ToolState::Done(Box::new(ToolResult::new(text, details, false))),
        cancel: agentsh_agent_session::CancellationToken::new(),
        max_bytes: agentsh_protocol::DEFAULT_OUTPUT_MAX_BYTES,
        started: std::time::Instant::now(),
        awaiting_approval: false,
    }))
}

impl FrameBench {
    /// The mode at `cols` × `rows` with `lines` lines of finished tool calls (10 lines each),
    /// one frame drawn.
    pub fn new(lines: usize, cols: u16, rows: u16) -> io::Result<Self> {
        Self::drawn(
            Detached::new(Settings::default(), cols, rows)?,
            lines,
            cols,
            rows,
        )
    }

    /// [`FrameBench::new`] over a history of `entries` entries, the session in `dir` (Tab
    /// lists it).
    pub fn with_history(
        lines: usize,
        cols: u16,
        rows: u16,
        entries: usize,
        dir: &Path,
    ) -> io::Result<Self> {
        let mut history = History::open(None).0;
        for n in 0..entries {
            history.push(&history_entry(n));
        }
        let detached = Detached::new_in(Settings::default(), dir, history, (cols, rows))?;
        Self::drawn(detached, lines, cols, rows)
    }

    /// The bench over `detached`, its transcript filled with `lines` lines and one frame drawn
    /// on a `cols`×`rows` terminal.
    fn drawn(detached: Detached, lines: usize, cols: u16, rows: u16) -> io::Result<Self> {
        let Detached {
            mut app,
            runtime,
            events,
        } = detached;
        fill(&mut app, lines);
        let mut terminal = fixed_terminal(cols, rows)?;
        app.draw(&mut terminal)?;
        Ok(Self {
            app,
            terminal,
            runtime,
            events,
            typed: 0,
        })
    }

    /// One key of a command typed into the input line (a Ctrl+U once it is all typed), and
    /// the frame it causes: with a history, the suggestion is looked for at each.
    pub fn type_command(&mut self) -> io::Result<()> {
        let at = self.typed % (TYPED_COMMAND.len() + 1);
        self.typed += 1;
        let key = match TYPED_COMMAND[at..].chars().next() {
            Some(c) => KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
            None => KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL),
        };
        self.app.handle(AppEvent::Terminal(Event::Key(key)));
        self.app.draw(&mut self.terminal)
    }

    /// Reads the session directory's names for Tab now (as the first Tab does, off the
    /// frame), so that the Tabs measured find them.
    pub fn read_names(&mut self) -> io::Result<()> {
        let session = self.app.session.clone();
        let names = self.runtime.block_on(async move {
            session
                .complete(String::new(), agentsh_seam::wire::CompletionKind::Path)
                .await
                .map(|found| found.names)
        });
        let source = crate::complete::NameSource::Dir {
            dir: String::new(),
            hidden: false,
        };
        self.app.named(&source, names);
        Ok(())
    }

    /// Tab on `cat <start>` in the session's directory: the time from the key to its frame
    /// (the line, typed, and the frame before the key are drawn outside it, as is the list's
    /// closing after it: each Tab's frame draws its list whole).
    pub fn tab(&mut self, start: &str) -> io::Result<Duration> {
        let line = format!("cat {start}");
        self.app.line.set(&line, line.len());
        self.app.draw(&mut self.terminal)?;
        let began = Instant::now();
        self.key(KeyCode::Tab, KeyModifiers::NONE);
        self.app.draw(&mut self.terminal)?;
        let took = began.elapsed();
        self.key(KeyCode::Esc, KeyModifiers::NONE);
        self.app.line.clear();
        Ok(took)
    }

    /// The first Tab in a directory: the key, the names read through the session (what the
    /// loop waits for), and the frame that shows them.
    pub fn cold_tab(&mut self, start: &str) -> io::Result<Duration> {
        self.app.names.clear();
        let line = format!("cat {start}");
        self.app.line.set(&line, line.len());
        let began = Instant::now();
        self.key(KeyCode::Tab, KeyModifiers::NONE);
        self.app.draw(&mut self.terminal)?;
        let named = self.runtime.block_on(async {
            loop {
                match self.events.recv().await {
                    Some(event @ AppEvent::Named { .. }) => break Some(event),
                    Some(_) => {}
                    None => break None,
                }
            }
        });
        if let Some(event) = named {
            self.app.handle(event);
        }
        self.app.draw(&mut self.terminal)?;
        let took = began.elapsed();
        self.key(KeyCode::Esc, KeyModifiers::NONE);
        self.app.line.clear();
        Ok(took)
    }

    /// Ctrl+R, then `query` typed into the search: each key's time to its frame (Esc after,
    /// and its frame, outside them).
    pub fn search(&mut self, query: &str) -> io::Result<Vec<Duration>> {
        self.app.draw(&mut self.terminal)?;
        let mut took = Vec::with_capacity(query.len() + 1);
        let began = Instant::now();
        self.key(KeyCode::Char('r'), KeyModifiers::CONTROL);
        self.app.draw(&mut self.terminal)?;
        took.push(began.elapsed());
        for c in query.chars() {
            let began = Instant::now();
            self.key(KeyCode::Char(c), KeyModifiers::NONE);
            self.app.draw(&mut self.terminal)?;
            took.push(began.elapsed());
        }
        self.key(KeyCode::Esc, KeyModifiers::NONE);
        Ok(took)
    }

    fn key(&mut self, code: KeyCode, modifiers: KeyModifiers) {
        // A key may start a task (Tab's read of names): on the session's runtime.
        let _entered = self.runtime.enter();
        self.app.handle(AppEvent::Terminal(Event::Key(KeyEvent::new(
            code, modifiers,
        ))));
    }

    /// One key typed into the input line (a letter, every 40th a Backspace clearing them),
    /// and the frame it causes.
    pub fn keystroke(&mut self) -> io::Result<()> {
        self.typed += 1;
        let code = if self.typed.is_multiple_of(40) {
            KeyCode::Char('u')
        } else {
            KeyCode::Char('a')
        };
        let modifiers = if self.typed.is_multiple_of(40) {
            KeyModifiers::CONTROL
        } else {
            KeyModifiers::NONE
        };
        self.app.handle(AppEvent::Terminal(Event::Key(KeyEvent::new(
            code, modifiers,
        ))));
        self.app.draw(&mut self.terminal)
    }

    /// A frame after the width changed: every entry is laid out again.
    pub fn resized_frame(&mut self) -> io::Result<()> {
        let (cols, rows) = self.app.size;
        let cols = if cols % 2 == 0 { cols + 1 } else { cols - 1 };
        self.terminal = fixed_terminal(cols, rows)?;
        self.app
            .handle(AppEvent::Terminal(Event::Resize(cols, rows)));
        self.app.draw(&mut self.terminal)
    }
}

/// `lines` lines of finished tool calls (10 lines each) in `app`'s transcript.
fn fill(app: &mut App<DefaultRenderer>, lines: usize) {
    for call in 0..lines.div_ceil(LINES_PER_CALL) {
        let mut text = String::new();
        for line in 0..LINES_PER_CALL {
            let _ = writeln!(
                text,
                "   Compiling crate-{call:04}-{line} v0.{line}.{call} (/work/src/c{call:04})"
            );
        }
        app.push_entry(finished_call(
            &format!("cargo build -p crate-{call:04}"),
            text,
        ));
    }
}

/// The floor: ratatui drawing `rows` rows of text (a changing last row, as a keystroke
/// changes the input line) on the same backend.
pub struct BaselineFrame {
    terminal: Terminal<CrosstermBackend<io::Sink>>,
    lines: Vec<Line<'static>>,
    typed: usize,
}

impl BaselineFrame {
    /// `rows` rows of `cols` columns.
    pub fn new(cols: u16, rows: u16) -> io::Result<Self> {
        let terminal = fixed_terminal(cols, rows)?;
        let lines = (0..rows)
            .map(|n| {
                Line::raw(format!(
                    "   Compiling crate-{n:04} v0.{n}.0 (/work/src/c{n:04})"
                ))
            })
            .collect();
        Ok(Self {
            terminal,
            lines,
            typed: 0,
        })
    }

    /// One frame.
    pub fn frame(&mut self) -> io::Result<()> {
        self.typed = (self.typed + 1) % 40;
        if let Some(last) = self.lines.last_mut() {
            *last = Line::raw(format!("> {}", "a".repeat(self.typed)));
        }
        let text = self.lines.clone();
        self.terminal
            .draw(|frame| frame.render_widget(Paragraph::new(text), frame.area()))
            .map(drop)
    }
}

/// A terminal of a fixed size on a backend that writes to nowhere. (A resizing one would ask
/// the backend for the size at every frame; with no terminal on stdout, crossterm then runs
/// `tput`, which would be measured instead of the frame.)
fn fixed_terminal(cols: u16, rows: u16) -> io::Result<Terminal<CrosstermBackend<io::Sink>>> {
    Terminal::with_options(
        CrosstermBackend::new(io::sink()),
        TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, 0, cols, rows)),
        },
    )
}
