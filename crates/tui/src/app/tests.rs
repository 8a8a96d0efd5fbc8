//! The mode's state and frames without a terminal: an `App` drawn on ratatui's `TestBackend`.
//! (The real binary in a real terminal is tested in crates/agentsh/tests/interactive.)

use agentsh_agent_session::Settings;
use agentsh_protocol::{
    Answerer, ApprovalAnswer, ApprovalDecision, ApprovalRequest, ApprovalResolution, AskedSegment,
};
use agentsh_renderer::DefaultRenderer;
use agentsh_seam::{Approver, BoxFuture, CancellationToken, ready_now};
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tokio::sync::mpsc;

use super::App;
use crate::approval::TuiApprover;
use crate::bench::{Detached, finished_call};
use crate::host::{AppEvent, CallKey};
use crate::transcript::{EntryKind, ToolState};

struct Fixture {
    app: App<DefaultRenderer>,
    terminal: Terminal<TestBackend>,
    _runtime: tokio::runtime::Runtime,
    /// What the approvers of [`Fixture::ask`] send, passed on by [`Fixture::pump`].
    asked: (
        mpsc::UnboundedSender<AppEvent>,
        mpsc::UnboundedReceiver<AppEvent>,
    ),
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
        asked: mpsc::unbounded_channel(),
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

    /// Asks the person about `touch marker && echo done` (its segment `touch marker`) for
    /// call `call` of `connection`, the way a session asks the mode's approver; the approver and
    /// the answer to come.
    fn ask(
        &mut self,
        call: CallKey,
        connection: Option<u64>,
        request_id: &str,
    ) -> (TuiApprover, BoxFuture<'static, Option<ApprovalAnswer>>) {
        let approver = TuiApprover {
            call,
            connection,
            events: self.asked.0.clone(),
        };
        let request = ApprovalRequest {
            request_id: request_id.into(),
            tool_call_id: format!("call-{call}"),
            command: "touch marker && echo done".into(),
            segments: vec![AskedSegment {
                command: "touch marker".into(),
                reason: "Touching needs a yes.".into(),
            }],
        };
        let answer = approver.ask(&request);
        self.pump();
        (approver, answer)
    }

    /// Tells the loop that `approver`'s request `request_id` ended with `resolution`.
    fn resolve(
        &mut self,
        approver: &TuiApprover,
        request_id: &str,
        resolution: ApprovalResolution,
    ) {
        approver.resolved(request_id, resolution);
        self.pump();
    }

    /// Hands what the approvers sent to the loop.
    fn pump(&mut self) {
        while let Ok(event) = self.asked.1.try_recv() {
            self.app.handle(event);
        }
    }

    fn typed(&mut self, c: char) {
        self.key(KeyCode::Char(c), KeyModifiers::NONE);
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

/// What the answer future holds once the loop answered (it is ready at once).
fn answered(answer: BoxFuture<'static, Option<ApprovalAnswer>>) -> Option<ApprovalAnswer> {
    ready_now(answer).unwrap_or_else(|_| panic!("not answered yet"))
}

fn by_the_person(decision: ApprovalDecision) -> ApprovalAnswer {
    ApprovalAnswer {
        decision,
        answered_by: Answerer::Interactive,
    }
}

#[test]
fn an_approval_entry_shows_the_command_its_segments_the_connection_and_the_keys() {
    let mut f = fixture(80, 12);
    let (_approver, _answer) = f.ask(1 << 48, Some(2), "approval-1");
    let screen = f.screen();
    let input = screen.len() - 2;
    assert_eq!(
        &screen[input - 4..input],
        [
            "[2] Run this command? $ touch marker && echo done",
            "  touch marker (Touching needs a yes.)",
            "y allow · a allow for the session · n or esc deny",
            "",
        ],
        "{screen:#?}"
    );
}

#[test]
fn the_keys_answer_the_oldest_waiting_request_as_the_person_then_type_again() {
    let mut f = fixture(80, 16);
    let (_first, first) = f.ask(1, None, "approval-1");
    let (_second, mut second) = f.ask(1 << 48, Some(1), "approval-1");
    f.typed('y');
    assert_eq!(
        answered(first),
        Some(by_the_person(ApprovalDecision::Allow))
    );
    second = ready_now(second).expect_err("the newer request still waits");
    assert!(
        f.app.line.text().is_empty(),
        "the key answered, typed nothing"
    );
    let screen = f.screen();
    assert!(screen.iter().any(|row| row == "allowed"), "{screen:#?}");
    f.typed('a');
    assert_eq!(
        answered(second),
        Some(by_the_person(ApprovalDecision::AllowSession))
    );
    assert!(
        f.screen()
            .iter()
            .any(|row| row == "allowed for the session"),
        "answered, before the session's word"
    );
    // Nothing waits: the keys are letters of the input line again.
    f.typed('y');
    f.typed('a');
    f.typed('n');
    assert_eq!(f.app.line.text(), "yan");
}

#[test]
fn n_denies_and_ctrl_or_other_keys_leave_a_waiting_request_alone() {
    let mut f = fixture(80, 12);
    let (_approver, answer) = f.ask(1, None, "approval-1");
    f.typed('x');
    f.key(KeyCode::Char('y'), KeyModifiers::CONTROL);
    f.key(KeyCode::Char('Y'), KeyModifiers::SHIFT);
    let answer = ready_now(answer).expect_err("still waiting");
    assert_eq!(f.app.line.text(), "xY");
    f.typed('n');
    assert_eq!(
        answered(answer),
        Some(by_the_person(ApprovalDecision::Deny))
    );
    assert!(f.screen().iter().any(|row| row == "denied"));
}

#[test]
fn esc_denies_a_waiting_request_rather_than_cancelling_a_call() {
    let mut f = fixture(80, 12);
    let cancel = CancellationToken::new();
    let EntryKind::Tool(mut running) = finished_call("sleep 100", String::new()) else {
        unreachable!("a tool entry");
    };
    running.state = ToolState::Running(String::new());
    running.cancel = cancel.clone();
    f.app.push_entry(EntryKind::Tool(running));
    let (_approver, answer) = f.ask(2, None, "approval-1");
    f.key(KeyCode::Esc, KeyModifiers::NONE);
    assert_eq!(
        answered(answer),
        Some(by_the_person(ApprovalDecision::Deny))
    );
    assert!(!cancel.is_cancelled(), "Esc went to the request");
    // With none waiting, Esc cancels the newest call again.
    f.key(KeyCode::Esc, KeyModifiers::NONE);
    assert!(cancel.is_cancelled());
}

#[test]
fn a_request_resolved_elsewhere_closes_its_entry_and_takes_no_more_keys() {
    let mut f = fixture(80, 20);
    let cases = [
        (
            ApprovalResolution::Answered(ApprovalAnswer {
                decision: ApprovalDecision::Allow,
                answered_by: Answerer::Rpc,
            }),
            "answered by the client: allowed",
        ),
        (ApprovalResolution::TimedOut, "timed out: denied"),
        (ApprovalResolution::Aborted, "aborted: nothing ran"),
        (ApprovalResolution::Unanswered, "nobody answered: denied"),
    ];
    for (n, (resolution, shown)) in cases.into_iter().enumerate() {
        let id = format!("approval-{n}");
        let (approver, answer) = f.ask(1 << 48, Some(1), &id);
        // The session drops the question's future when the request ends otherwise.
        drop(answer);
        f.resolve(&approver, &id, resolution);
        let screen = f.screen();
        let input = screen.len() - 2;
        assert_eq!(screen[input - 2], shown, "{screen:#?}");
        assert_eq!(
            screen[input - 4],
            "[1] Approval: $ touch marker && echo done",
            "{screen:#?}"
        );
        assert!(f.app.approvals.is_empty());
    }
    f.typed('n');
    assert_eq!(f.app.line.text(), "n", "no request waits");
}

#[test]
fn a_request_whose_asker_stopped_waiting_is_passed_over() {
    let mut f = fixture(80, 16);
    // Two connections' requests may share an id: each is its own.
    let (_gone, gone) = f.ask(1 << 48, Some(1), "approval-1");
    let (_other, other) = f.ask((1 << 48) + 1, Some(2), "approval-1");
    drop(gone);
    f.typed('y');
    assert_eq!(
        answered(other),
        Some(by_the_person(ApprovalDecision::Allow))
    );
    assert_eq!(
        f.app.approvals.len(),
        2,
        "both open until the session's word"
    );
}

#[test]
fn the_person_answering_is_confirmed_by_the_resolution() {
    let mut f = fixture(80, 12);
    let (approver, answer) = f.ask(1, None, "approval-7");
    f.typed('a');
    let answer = answered(answer).expect("an answer");
    f.resolve(
        &approver,
        "approval-7",
        ApprovalResolution::Answered(answer),
    );
    let screen = f.screen();
    let input = screen.len() - 2;
    assert_eq!(
        &screen[input - 4..input],
        [
            "Approval: $ touch marker && echo done",
            "  touch marker (Touching needs a yes.)",
            "allowed for the session",
            "",
        ],
        "{screen:#?}"
    );
    assert!(f.app.approvals.is_empty());
}

#[test]
fn a_new_request_is_brought_into_view() {
    let mut f = fixture(60, 12);
    for n in 0..5 {
        f.call(&format!("seq {n}"), 5);
    }
    f.key(KeyCode::Char('o'), KeyModifiers::CONTROL);
    f.key(KeyCode::PageUp, KeyModifiers::NONE);
    let (_approver, _answer) = f.ask(1, None, "approval-1");
    assert!(f.app.expanded.is_none());
    let screen = f.screen();
    assert!(
        screen.iter().any(|row| row.starts_with("y allow")),
        "{screen:#?}"
    );
}

#[test]
fn the_ascii_theme_draws_the_keys_in_ascii() {
    let mut settings = Settings::default();
    settings.ui.theme = agentsh_agent_session::Theme::Ascii;
    let mut f = fixture_with(80, 8, settings);
    let (_approver, _answer) = f.ask(1, None, "approval-1");
    let screen = f.screen();
    assert!(
        screen
            .iter()
            .any(|row| row == "y allow - a allow for the session - n or esc deny"),
        "{screen:#?}"
    );
}

#[test]
fn the_approver_has_no_answer_when_the_loop_is_gone() {
    let (events, gone) = mpsc::unbounded_channel();
    drop(gone);
    let approver = TuiApprover {
        call: 1,
        connection: None,
        events,
    };
    let request = ApprovalRequest {
        request_id: "approval-1".into(),
        tool_call_id: "c1".into(),
        command: "touch x".into(),
        segments: Vec::new(),
    };
    assert_eq!(answered(approver.ask(&request)), None);
}

#[test]
fn a_jobs_hidden_prompt_is_answered_on_a_masked_line_that_keeps_nothing() {
    let mut fx = fixture(110, 14);
    let history_before = fx.app.history.entries().len();
    fx.app.handle(AppEvent::SecretAsked {
        connection: None,
        request: agentsh_protocol::InputRequest {
            job_id: "3".into(),
            prompt: "Enter old passphrase:".into(),
            command: "ssh-keygen -p -f key".into(),
        },
    });
    for c in "hunter22".chars() {
        fx.typed(c);
    }
    fx.key(KeyCode::Backspace, KeyModifiers::NONE);
    let screen = fx.screen().join("\n");
    assert!(
        screen.contains("job 3 asks for hidden input (started by the model): ssh-keygen -p -f key"),
        "{screen}"
    );
    assert!(screen.contains("Enter old passphrase: •••••••"), "{screen}");
    assert!(!screen.contains("••••••••"), "Backspace took one: {screen}");
    assert!(!screen.contains("hunter"), "{screen}");
    // Esc leaves the job waiting; the line is the ordinary one again, and nothing was kept.
    fx.key(KeyCode::Esc, KeyModifiers::NONE);
    let screen = fx.screen().join("\n");
    assert!(
        screen.contains("job 3 was not answered: it still waits for its hidden input"),
        "{screen}"
    );
    assert!(fx.app.secrets.is_empty());
    assert!(fx.app.line.is_empty(), "nothing went to the input line");
    assert_eq!(fx.app.history.entries().len(), history_before);
    assert!(!screen.contains("hunter"), "{screen}");
}
