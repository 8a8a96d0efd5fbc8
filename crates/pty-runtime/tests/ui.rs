//! `run_with_ui`: a scripted UI (it reacts to what it is shown, like a user) drives real PTY
//! sessions.

use std::future::Future;

use agentsh_pty_runtime::vt100;
use agentsh_pty_runtime::{PtyRun, TerminalSize, TerminalUi, UiEvent, run_with_ui};
use tokio::sync::mpsc;

use crate::util::{alive_with_arg, command, run, sink};

/// Sends each event once the screen it is shown contains the given text (in order).
struct ScriptedUi {
    script: Vec<(&'static str, UiEvent)>,
    sender: mpsc::UnboundedSender<UiEvent>,
    events: mpsc::UnboundedReceiver<UiEvent>,
    draws: usize,
    last: String,
}

impl ScriptedUi {
    fn new(script: Vec<(&'static str, UiEvent)>) -> Self {
        let (sender, events) = mpsc::unbounded_channel();
        Self {
            script,
            sender,
            events,
            draws: 0,
            last: String::new(),
        }
    }
}

impl TerminalUi for ScriptedUi {
    fn draw(&mut self, screen: &vt100::Screen) {
        self.draws += 1;
        self.last = screen.contents();
        while self
            .script
            .first()
            .is_some_and(|(needle, _)| self.last.contains(needle))
        {
            let (_, event) = self.script.remove(0);
            self.sender.send(event).expect("receiver alive");
        }
    }

    fn next_event(&mut self) -> impl Future<Output = Option<UiEvent>> + Send {
        self.events.recv()
    }
}

#[test]
fn the_ui_sees_the_prompt_and_answers_it() {
    run(async {
        let session = PtyRun::start(command(r#"read -p 'name? ' n; echo "hi $n""#), sink());
        let mut ui = ScriptedUi::new(vec![("name?", UiEvent::Keys(b"bob\r".to_vec()))]);
        let result = run_with_ui(session, &mut ui).await;
        assert_eq!(result.summary.output, "name? bob\nhi bob\n");
        assert_eq!(ui.last, "name? bob\nhi bob");
        assert!(ui.script.is_empty());
        assert!(ui.draws >= 2);
    });
}

#[test]
fn the_ui_resizes_the_terminal() {
    run(async {
        let session = PtyRun::start(command("stty size; read _; stty size"), sink());
        let mut ui = ScriptedUi::new(vec![
            (
                "40 120",
                UiEvent::Resize(TerminalSize {
                    cols: 100,
                    rows: 30,
                }),
            ),
            ("40 120", UiEvent::Keys(b"\r".to_vec())),
        ]);
        let result = run_with_ui(session, &mut ui).await;
        assert_eq!(result.summary.output, "40 120\n\n30 100\n");
    });
}

#[test]
fn esc_from_the_ui_kills_the_command() {
    run(async {
        let session = PtyRun::start(command("echo ready; exec sleep 100.7722"), sink());
        let mut ui = ScriptedUi::new(vec![("ready", UiEvent::Keys(b"\x1b".to_vec()))]);
        let result = run_with_ui(session, &mut ui).await;
        assert!(result.cancelled);
        assert_eq!(result.exit_code, None);
        assert_eq!(result.annotated_output(), "[Command cancelled]\nready\n");
        assert_eq!(alive_with_arg("100.7722"), Vec::<u32>::new());
    });
}
