//! Secrets in the interactive mode: a token in agentsh's environment printed by a tool call
//! and by a `!` command is redacted on the pane; a job's password prompt is answered by the
//! person on the masked line, and the typed text is in none of the pane (with its
//! scrollback), the history file, `/context`, the artifacts, the job's log or the audit log.
//! A job's end is a transcript line as it happens.

use serde_json::json;

use super::{Tui, history_file};
use crate::util::{TestEnv, assert_in_no_file};

/// The token agentsh's environment holds (its name matches the default `*TOKEN*`).
const TOKEN: &str = "s3cr3t-0123456789-abcdef";
/// What the person types at the job's prompt.
const TYPED: &str = "correct-horse-battery-9";

/// No row of the pane, scrollback included, holds `secret`.
#[track_caller]
fn assert_not_on_pane(tui: &Tui, secret: &str) {
    let rows = tui.pane.capture_history();
    assert!(!rows.is_empty(), "the pane has rows");
    assert!(
        rows.iter().all(|row| !row.contains(secret)),
        "{secret} on the pane:\n{}",
        rows.join("\n")
    );
}

#[test]
fn interactive_secrets_are_redacted_and_a_typed_password_is_kept_nowhere() {
    let env = TestEnv::with_config("[audit]\nenabled = true\n");
    let Some(tui) = Tui::start_with("interactive_secrets", env, &[("GITHUB_TOKEN", TOKEN)]) else {
        return;
    };

    // A token in the environment: redacted in a tool call's result and a `!` command's.
    tui.submit("printenv GITHUB_TOKEN");
    tui.wait_text("[REDACTED:GITHUB_TOKEN]");
    tui.submit("!printenv GITHUB_TOKEN; echo bang-done");
    tui.wait_text("bang-done");
    assert_not_on_pane(&tui, TOKEN);

    // The model's job asks for a password: the masked line names it; the person answers.
    let command =
        "read -s -p 'Password: ' pw; echo; echo \"got ${#pw}\"; echo \"it was $pw\"; sleep 60";
    tui.submit(&json!({"command": command, "run_in_background": true, "pty": true}).to_string());
    tui.wait_text("job 1 asks for hidden input (started by the model): read -s -p");
    tui.wait_text("Password: ");
    tui.pane.send_text(TYPED);
    let masked = "•".repeat(TYPED.chars().count());
    tui.wait_text(&format!("Password: {masked}"));
    assert_not_on_pane(&tui, TYPED);
    tui.pane.send_enter();
    tui.wait_text("sent the hidden input to job 1 (it is redacted from now on)");

    // The program got it (its own output says so) and what it printed back is redacted.
    tui.submit("/job 1");
    tui.wait_text(&format!("got {}", TYPED.len()));
    tui.wait_text("it was [REDACTED:input]");
    tui.submit("/context");
    tui.wait_text("/context");
    assert_not_on_pane(&tui, TYPED);
    assert_not_on_pane(&tui, TOKEN);

    // Nothing agentsh wrote holds either: history, artifacts and the job's log, the audit
    // log.
    let history = std::fs::read_to_string(history_file(&tui.env)).expect("the history file");
    assert!(history.contains("printenv GITHUB_TOKEN"), "{history}");
    assert!(!history.contains(TYPED), "{history}");
    assert_in_no_file(tui.env.root(), TYPED);
    assert_in_no_file(tui.env.root(), TOKEN);
}

#[test]
fn interactive_a_jobs_end_is_a_transcript_line_at_once() {
    let Some(tui) = Tui::start("interactive_job_end", "") else {
        return;
    };
    tui.submit(&json!({"command": "sleep 1; exit 3", "run_in_background": true}).to_string());
    // `after 1s`, or more seconds where a loaded machine made the job take longer.
    let line = "job 1 (sleep 1; exit 3) exited with code 3 after ";
    tui.wait("the job's end line", crate::util::LIVENESS, |screen| {
        screen.iter().any(|row| {
            row.split_once(line).is_some_and(|(_, rest)| {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                digits.parse::<u64>().is_ok_and(|secs| secs >= 1)
                    && rest[digits.len()..].starts_with('s')
            })
        })
    });
}
