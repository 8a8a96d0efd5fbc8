//! The mode's state and frames without a terminal: an `App` drawn on ratatui's `TestBackend`.
//! (The real binary in a real terminal is tested in crates/agentsh/tests/interactive.)

use agentsh_agent_session::Settings;
use agentsh_renderer::DefaultRenderer;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tokio::sync::mpsc;

use super::App;
use crate::bench::{Detached, finished_call};
use crate::host::AppEvent;

struct Fixture {
    app: App<DefaultRenderer>,
    terminal: Terminal<TestBackend>,
    _runtime: tokio::runtime::Runtime,
    _events: mpsc::UnboundedReceiver<AppEvent>,
}

fn fixture(cols: u16, rows: u16) -> Fixture {
    fixture_with(cols, rows, Settings::default())
}

fn fixture_with(cols: u16, rows: u16, settings: Settings) -> Fixture {
    let Detached {
        app,
        runtime,
        events,
    } = Detached::new(settings, cols, rows).expect("the mode");
    Fixture {
        app,
        terminal: Terminal::new(TestBackend::new(cols, rows)).expect("terminal"),
        _runtime: runtime,
        _events: events,
    }
}

impl Fixture {
    /// A finished `bash` call printing `lines` numbered lines.
    fn call(&mut self, command: &str, lines: usize) {
        let text: String = (1..=lines)
            .flat_map(|n| [format!("line {n}"), "\n".into()])
            .collect();
        self.app.push_entry(finished_call(command, text));
    }

    fn key(&mut self, code: KeyCode, modifiers: KeyModifiers) {
        self.app.handle(AppEvent::Terminal(Event::Key(KeyEvent::new(
            code, modifiers,
        ))));
    }

    fn screen(&mut self) -> Vec<String> {
        self.app.draw(&mut self.terminal).expect("frame");
        let buffer = self.terminal.backend().buffer();
        (0..buffer.area.height)
            .map(|y| {
                (0..buffer.area.width)
                    .map(|x| buffer[(x, y)].symbol().to_owned())
                    .collect::<String>()
                    .trim_end()
                    .to_owned()
            })
            .collect()
    }
}

#[test]
fn the_newest_rows_sit_above_the_input_and_the_status_line() {
    let mut f = fixture(60, 12);
    f.call("echo one", 1);
    f.call("seq 3", 3);
    let screen = f.screen();
    let input = screen.len() - 2;
    assert_eq!(screen[input], ">");
    assert!(screen[input + 1].contains("sandbox off"), "{screen:#?}");
    assert_eq!(
        &screen[input - 5..input],
        ["$ seq 3", "line 1", "line 2", "line 3", ""]
    );
}

#[test]
fn pgup_scrolls_and_the_view_stays_put_when_rows_arrive() {
    let mut f = fixture(60, 12);
    for n in 0..5 {
        f.call(&format!("seq {n}"), 5);
    }
    let bottom = f.screen();
    f.key(KeyCode::PageUp, KeyModifiers::NONE);
    let scrolled = f.screen();
    assert_ne!(scrolled, bottom);
    assert!(scrolled.last().is_some_and(|s| s.contains("scrolled up")));
    f.call("echo late", 1);
    let after = f.screen();
    assert_eq!(
        after[..8],
        scrolled[..8],
        "rows added below move nothing in view"
    );
    f.key(KeyCode::PageDown, KeyModifiers::NONE);
    f.key(KeyCode::PageDown, KeyModifiers::NONE);
    let back = f.screen();
    assert!(back.iter().any(|row| row == "$ echo late"), "{back:#?}");
}

#[test]
fn ctrl_o_expands_the_last_result_at_its_end_and_home_goes_to_line_one() {
    let mut f = fixture(60, 20);
    f.call("seq 100", 100);
    f.key(KeyCode::Char('o'), KeyModifiers::CONTROL);
    let screen = f.screen();
    let footer = screen
        .iter()
        .find(|row| row.starts_with("(lines "))
        .unwrap_or_else(|| panic!("no window footer: {screen:#?}"));
    assert!(footer.ends_with("of 100, ctrl+o to collapse)"), "{footer}");
    assert!(
        footer.contains("-100 of"),
        "ends at the last line: {footer}"
    );
    assert!(screen.iter().any(|row| row == "line 100"));
    f.key(KeyCode::Home, KeyModifiers::NONE);
    let top = f.screen();
    assert!(top.iter().any(|row| row == "line 1"), "{top:#?}");
    assert!(
        top.iter().any(|row| row.starts_with("(lines 1-")),
        "{top:#?}"
    );
    // Esc with nothing running collapses it again.
    f.key(KeyCode::Esc, KeyModifiers::NONE);
    let collapsed = f.screen();
    assert!(
        collapsed
            .iter()
            .any(|row| row.contains("(ctrl+o to expand)")),
        "{collapsed:#?}"
    );
}

#[test]
fn a_long_input_line_wraps_with_the_cursor_at_its_end() {
    let mut f = fixture(20, 8);
    for c in "echo abcdefghijklmnopqrstuvwxyz".chars() {
        f.key(KeyCode::Char(c), KeyModifiers::NONE);
    }
    let screen = f.screen();
    let input = screen.len() - 3;
    assert_eq!(screen[input], "> echo abcdefghijklm");
    assert_eq!(screen[input + 1], "nopqrstuvwxyz");
    let cursor = f.terminal.get_cursor_position().expect("cursor");
    assert_eq!((cursor.x, cursor.y), (13, input as u16 + 1));
}

#[test]
fn the_ascii_theme_draws_the_modes_own_rows_in_ascii() {
    let mut settings = Settings::default();
    settings.ui.theme = agentsh_agent_session::Theme::Ascii;
    let mut f = fixture_with(200, 8, settings);
    let screen = f.screen();
    let status = screen.last().expect("the status line");
    assert!(status.contains(" - sandbox off"), "{status}");
    assert!(status.is_ascii(), "{status}");
}

#[test]
fn the_status_line_names_the_sandbox() {
    let mut settings = Settings::default();
    settings.sandbox.mode = Some(agentsh_agent_session::SandboxMode::ReadOnly);
    let mut f = fixture_with(200, 8, settings);
    let screen = f.screen();
    let status = screen.last().expect("the status line");
    assert!(
        status.contains("sandbox read-only, network off"),
        "{status}"
    );
}
