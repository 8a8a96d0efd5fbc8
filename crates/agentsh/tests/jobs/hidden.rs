//! Hidden input: a PTY job at a password or passphrase prompt (echo off, line mode on) is
//! `waiting_for_input` with `hidden: true` and the closing line that tells the model it is not
//! its to answer; a prompt with echo on is not hidden.

use serde_json::{Value, json};

use super::{Session, job, text};
use crate::util::TestEnv;

/// The closing line for a session no surface can take hidden input in (RPC without it).
fn hidden_line(id: &str) -> String {
    format!(
        "[job {id} is asking for hidden input (a password or passphrase): ask the user to answer it in a terminal; do not ask for it in the chat]"
    )
}

/// Starts `command` as a PTY job and waits until it waits for input; the answer.
fn at_prompt(session: &mut Session, command: &str) -> (String, Value) {
    let (id, started) = session.background(command, json!({"pty": true}));
    assert_eq!(job(&started)["pty"], true, "{started}");
    let (waiting, _) = session.await_state(&id, "waiting_for_input");
    (id, waiting)
}

#[track_caller]
fn assert_hidden(id: &str, waiting: &Value) {
    assert_eq!(job(waiting)["hidden"], true, "{waiting}");
    let text = text(waiting);
    assert!(
        text.ends_with(&format!(
            "\n\n[job {id}: waiting for input]\n\n{}",
            hidden_line(id)
        )),
        "{text}"
    );
}

#[test]
fn read_s_and_getpass_are_hidden_prompts_and_read_p_is_not() {
    let env = TestEnv::new();
    let mut session = Session::start(&env);

    let (id, waiting) = at_prompt(
        &mut session,
        "read -s -p 'Password: ' pw; echo; echo \"got ${#pw}\"",
    );
    assert_hidden(&id, &waiting);
    // The model can still answer (job_input works); the program gets the text.
    let answered = session.call("job_input", json!({"jobId": id, "text": "hunter2\n"}));
    assert!(text(&answered).contains("got 7"), "{answered}");
    // The result reminds the model that it answered a hidden prompt.
    assert!(
        text(&answered).ends_with(&format!(
            "\n\n[job {id} was asking for hidden input: the text was typed at a password or passphrase prompt]"
        )),
        "{answered}"
    );

    let (id, waiting) = at_prompt(
        &mut session,
        "python3 -c 'import getpass; p = getpass.getpass(\"Passphrase: \"); print(\"length\", len(p))'",
    );
    assert_hidden(&id, &waiting);
    let answered = session.call("job_input", json!({"jobId": id, "text": "abc\n"}));
    assert!(text(&answered).contains("length 3"), "{answered}");

    // Echo on: an ordinary prompt, not hidden.
    let (id, waiting) = at_prompt(&mut session, "read -p 'Name: ' n; echo \"hi $n\"");
    assert!(job(&waiting).get("hidden").is_none(), "{waiting}");
    assert!(!text(&waiting).contains("hidden input"), "{waiting}");
    let answered = session.call("job_input", json!({"jobId": id, "text": "Bob\n"}));
    assert!(text(&answered).contains("hi Bob"), "{answered}");
    assert!(!text(&answered).contains("hidden input"), "{answered}");
}

#[test]
fn an_ssh_keygen_passphrase_prompt_is_hidden() {
    if agentsh_test_support::which("ssh-keygen").is_none() {
        eprintln!("skipped: no ssh-keygen");
        return;
    }
    let env = TestEnv::new();
    let key = env.work_dir().join("key");
    let made = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "oldpass", "-f"])
        .arg(&key)
        .status()
        .expect("ssh-keygen");
    assert!(made.success());
    let mut session = Session::start(&env);
    let (id, waiting) = at_prompt(&mut session, "ssh-keygen -p -f key");
    assert_hidden(&id, &waiting);
    session.call("job_kill", json!({"jobId": id}));
}
