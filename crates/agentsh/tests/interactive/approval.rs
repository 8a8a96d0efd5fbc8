//! The person answers the approval policy's questions: a `--listen` client (one that does not
//! answer approvals itself) sends a command the `[policy]` asks about, the pane shows the
//! approval entry, and `y`, `a`, `n` or Esc decide what the client gets.

use std::path::Path;

use serde_json::{Value, json};

use super::Tui;
use super::listen::{Client, listening, tool_call};

/// A policy that asks before any `touch`.
pub(super) const ASK_TOUCH: &str = r#"
[[policy.rules]]
prefix = ["touch"]
decision = "ask"
reason = "Touching files needs a yes."
"#;

/// The entry's rows while it waits for `command`'s answer (connection 1's call).
fn waiting(command: &str) -> [String; 3] {
    [
        format!("[1] Run this command? $ {command}"),
        format!("  {command} (Touching files needs a yes.)"),
        "y allow · a allow for the session · n or esc deny".to_owned(),
    ]
}

/// Waits for the pane to show `command`'s entry, waiting.
fn wait_question(tui: &Tui, command: &str) {
    let rows = waiting(command);
    let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
    tui.wait_rows(&rows);
}

/// The response to `id` (after its events), and its result's text.
fn result(client: &Client, id: &str) -> (Value, String) {
    let lines = client.until_response(id);
    let response = lines.last().cloned().expect("the response");
    assert_eq!(response["success"], true, "{response}");
    let text = response["data"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text result: {response}"))
        .to_owned();
    (response, text)
}

/// The work dir's `marker`, removed when there.
fn take_marker(work: &Path) -> bool {
    std::fs::remove_file(work.join("marker")).is_ok()
}

#[test]
fn interactive_approval_n_and_esc_deny_and_y_allows_once() {
    let Some((tui, socket)) = listening("interactive_approval_keys", ASK_TOUCH) else {
        return;
    };
    let work = tui.env.work_dir();
    let mut client = Client::connect(&socket);

    // n: nothing runs; the client gets the refusal.
    client.send(&tool_call("1", "c1", "touch marker"));
    wait_question(&tui, "touch marker");
    tui.pane.send_keys(&["n"]);
    let (response, text) = result(&client, "1");
    assert_eq!(text, "The user declined to run: touch marker");
    assert_eq!(response["data"]["isError"], true, "{response}");
    assert!(!take_marker(&work), "nothing ran");
    tui.wait_rows(&["  touch marker (Touching files needs a yes.)", "denied"]);
    assert!(
        tui.pane.capture().iter().all(|row| !row.starts_with("> n")),
        "the key answered; nothing was typed:\n{}",
        tui.screen()
    );

    // Esc: the same as n, and the call is not left running.
    client.send(&tool_call("2", "c2", "touch marker"));
    wait_question(&tui, "touch marker");
    tui.pane.send_keys(&["Escape"]);
    let (_, text) = result(&client, "2");
    assert_eq!(text, "The user declined to run: touch marker");
    assert!(!take_marker(&work), "nothing ran");

    // y: it runs, this once (the next identical call is asked again).
    client.send(&tool_call("3", "c3", "touch marker"));
    wait_question(&tui, "touch marker");
    tui.pane.send_keys(&["y"]);
    let (response, _) = result(&client, "3");
    assert_eq!(response["data"]["isError"], false, "{response}");
    assert!(take_marker(&work), "the command ran");
    tui.wait_rows(&["  touch marker (Touching files needs a yes.)", "allowed"]);
    client.send(&tool_call("4", "c4", "touch marker"));
    wait_question(&tui, "touch marker");
    tui.pane.send_keys(&["y"]);
    result(&client, "4");
    assert!(take_marker(&work), "asked and ran again");
}

#[test]
fn interactive_approval_a_allows_the_same_command_for_the_session() {
    let Some((tui, socket)) = listening("interactive_approval_session", ASK_TOUCH) else {
        return;
    };
    let work = tui.env.work_dir();
    let mut client = Client::connect(&socket);
    client.send(&tool_call("1", "c1", "touch marker"));
    wait_question(&tui, "touch marker");
    tui.pane.send_keys(&["a"]);
    let (response, _) = result(&client, "1");
    assert_eq!(response["data"]["isError"], false, "{response}");
    assert!(take_marker(&work), "the command ran");
    tui.wait_text("allowed for the session");

    // The same command again: not asked (no new entry), and it runs.
    client.send(&tool_call("2", "c2", "touch marker"));
    let lines = client.until_response("2");
    let response = lines.last().expect("the response");
    assert_eq!(response["data"]["isError"], false, "{response}");
    assert!(take_marker(&work), "it ran without a question");
    let screen = tui.wait("the second call in the pane", crate::util::LIVENESS, |s| {
        s.iter()
            .filter(|row| row.starts_with("[1] $ touch marker"))
            .count()
            == 2
    });
    let questions = screen
        .iter()
        .filter(|row| row.contains("Run this command?") || row.contains("Approval: $"))
        .count();
    assert_eq!(questions, 1, "asked once:\n{}", screen.join("\n"));
}

#[test]
fn interactive_approval_of_a_socket_bash_request() {
    let Some((tui, socket)) = listening("interactive_approval_bash", ASK_TOUCH) else {
        return;
    };
    let work = tui.env.work_dir();
    let mut client = Client::connect(&socket);
    // A user's command on the socket is judged like a tool call: any process can send one.
    client.send(&json!({"id": "1", "type": "bash", "command": "touch marker"}));
    wait_question(&tui, "touch marker");
    assert!(
        !work.join("marker").exists(),
        "nothing runs before the answer"
    );
    tui.pane.send_keys(&["y"]);
    let lines = client.until_response("1");
    let response = lines.last().expect("the response");
    assert_eq!(response["success"], true, "{response}");
    assert_eq!(response["data"]["exitCode"], 0, "{response}");
    assert!(take_marker(&work), "the command ran");
    tui.wait_text("allowed");
}

#[test]
fn interactive_approval_of_a_call_typed_in_the_pane() {
    let Some(tui) = Tui::start("interactive_approval_typed", ASK_TOUCH) else {
        return;
    };
    // Any line but a bang command runs as the model's call: judged, and asked here.
    tui.submit("touch marker");
    tui.wait_rows(&[
        "Run this command? $ touch marker",
        "  touch marker (Touching files needs a yes.)",
        "y allow · a allow for the session · n or esc deny",
    ]);
    assert!(
        !tui.env.work_dir().join("marker").exists(),
        "not before the answer"
    );
    tui.pane.send_keys(&["y"]);
    tui.wait_rows(&["  touch marker (Touching files needs a yes.)", "allowed"]);
    tui.wait_text("(no output)");
    assert!(take_marker(&tui.env.work_dir()), "the command ran");
    // A bang command is the person's own: never asked.
    tui.submit("!touch marker");
    tui.wait("the bang command's end", crate::util::LIVENESS, |_| {
        tui.env.work_dir().join("marker").exists()
    });
    let screen = tui.pane.capture();
    let questions = screen
        .iter()
        .filter(|row| row.contains("Run this command?") || row.contains("Approval: $"))
        .count();
    assert_eq!(questions, 1, "{}", screen.join("\n"));
}

#[test]
fn interactive_approval_takes_the_screen_from_a_program_on_the_overlay() {
    let config = format!("{}{ASK_TOUCH}", super::VIRTUAL_TERMINAL_ON);
    let Some((tui, socket)) = listening("interactive_approval_over_overlay", &config) else {
        return;
    };
    let work = tui.env.work_dir();
    // A program of the person's on the overlay, every key going to it.
    tui.submit("cat");
    tui.wait("cat on the overlay", super::PROGRAM_START, |screen| {
        screen.first().is_some_and(|row| row.trim_end() == "$ cat")
            && screen.iter().any(|row| row.trim_end() == "esc to kill")
    });
    // A client's call asks: the question is shown and answered, not typed into `cat`.
    let mut client = Client::connect(&socket);
    client.send(&tool_call("1", "c1", "touch marker"));
    wait_question(&tui, "touch marker");
    tui.pane.send_keys(&["y"]);
    let (response, _) = result(&client, "1");
    assert_eq!(response["data"]["isError"], false, "{response}");
    assert!(take_marker(&work), "the command ran");
    // The program has its screen and keys back.
    tui.wait(
        "cat on the overlay again",
        crate::util::LIVENESS,
        |screen| screen.first().is_some_and(|row| row.trim_end() == "$ cat"),
    );
    tui.pane.send_text("still here");
    tui.pane.send_enter();
    tui.wait_rows(&["still here", "still here"]);
    tui.pane.send_keys(&["C-d"]);
    tui.wait_text(super::STATUS_MARK);
}
