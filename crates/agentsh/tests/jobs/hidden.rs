//! Hidden input: a PTY job at a password or passphrase prompt (echo off, line mode on) is
//! `waiting_for_input` with `hidden: true` and the closing line that tells the model it is not
//! its to answer; a prompt with echo on is not hidden.

use serde_json::{Value, json};

use super::{Session, job, text};
use crate::util::{LIVENESS, TestEnv, assert_in_no_file};

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
    // The result reminds the model that it answered a hidden prompt.
    assert!(
        text(&answered).ends_with(&format!(
            "\n\n[job {id} was asking for hidden input: the text was typed at a password or passphrase prompt]"
        )),
        "{answered}"
    );
    session.screen_showing(&id, answered, "got 7");

    let (id, waiting) = at_prompt(
        &mut session,
        "python3 -c 'import getpass; p = getpass.getpass(\"Passphrase: \"); print(\"length\", len(p))'",
    );
    assert_hidden(&id, &waiting);
    let answered = session.call("job_input", json!({"jobId": id, "text": "abc\n"}));
    session.screen_showing(&id, answered, "length 3");

    // Echo on: an ordinary prompt, not hidden.
    let (id, waiting) = at_prompt(&mut session, "read -p 'Name: ' n; echo \"hi $n\"");
    assert!(job(&waiting).get("hidden").is_none(), "{waiting}");
    assert!(!text(&waiting).contains("hidden input"), "{waiting}");
    let answered = session.call("job_input", json!({"jobId": id, "text": "Bob\n"}));
    assert!(!text(&answered).contains("hidden input"), "{answered}");
    let answered = session.screen_showing(&id, answered, "hi Bob");
    assert!(!text(&answered).contains("hidden input"), "{answered}");
}

/// The reported race: `job_input` answered once the output had been quiet for 200 ms, before
/// the 300 ms after which a waiting program is looked for, so its own result missed the
/// password prompt the input led to. It now waits while a process reads, and says so.
#[test]
fn job_input_that_leads_to_a_password_prompt_answers_with_the_hidden_input_line() {
    let env = TestEnv::new();
    let mut session = Session::start(&env);
    let (id, _) = at_prompt(&mut session, "python3 -q");
    // Imported first: the line below then prompts at once, however slow the machine.
    let imported = session.call(
        "job_input",
        json!({"jobId": id, "text": "import getpass\n"}),
    );
    assert!(!text(&imported).contains("hidden input"), "{imported}");

    let asked = session.call(
        "job_input",
        json!({"jobId": id, "text": "import getpass; getpass.getpass('Password: ')\n"}),
    );
    assert!(text(&asked).contains("Password:"), "{asked}");
    assert_eq!(job(&asked)["state"], "waiting_for_input", "{asked}");
    assert_hidden(&id, &asked);

    // An echoing prompt: waiting for input, not hidden.
    let answered = session.call("job_input", json!({"jobId": id, "text": "pw\n"}));
    assert!(text(&answered).contains("'pw'"), "{answered}");
    let named = session.call(
        "job_input",
        json!({"jobId": id, "text": "input('name: ')\n"}),
    );
    assert!(text(&named).contains("name: "), "{named}");
    assert_eq!(job(&named)["state"], "waiting_for_input", "{named}");
    assert!(job(&named).get("hidden").is_none(), "{named}");
    assert!(!text(&named).contains("hidden input"), "{named}");
    session.call("job_kill", json!({"jobId": id}));
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

/// The closing line while a client of the session answers hidden input.
fn answerable_line(id: &str) -> String {
    format!(
        "[job {id} is asking for hidden input (a password or passphrase): the user must type it into agentsh; do not ask for it in the chat]"
    )
}

/// A session whose client said `capabilities.secretInput`.
fn answering_session(env: &TestEnv) -> Session {
    let mut session = Session::start(env);
    session
        .rpc
        .send_json(&json!({"id": "hello", "type": "hello", "capabilities": {"secretInput": true}}));
    assert_eq!(session.rpc.response("hello")["success"], true);
    session
}

/// Starts `command` as a PTY job: its id, and the first `input_request` event, which may come
/// before the starting call's response (the call waits a second for its job).
fn start_asking(session: &mut Session, command: &str) -> (String, Value) {
    let call = session.send(
        "bash",
        json!({"command": command, "run_in_background": true, "pty": true}),
    );
    let lines = session
        .rpc
        .until(LIVENESS, |line| crate::util::is_response(line, &call));
    let id = job(&lines.last().expect("the response")["data"])["id"]
        .as_str()
        .expect("a job id")
        .to_owned();
    let request = match lines
        .into_iter()
        .find(|line| line["type"] == "input_request")
    {
        Some(request) => request,
        None => input_request(session),
    };
    (id, request)
}

/// The next `input_request` event (other lines are dropped).
fn input_request(session: &Session) -> Value {
    let lines = session
        .rpc
        .until(LIVENESS, |line| line["type"] == "input_request");
    lines.last().cloned().expect("the event")
}

/// Sends `secret_input` for job `id`: the response.
fn secret_input(session: &mut Session, request: &str, id: &str, text: &str) -> Value {
    session
        .rpc
        .send_json(&json!({"id": request, "type": "secret_input", "jobId": id, "text": text}));
    session.rpc.response(request)
}

#[test]
fn a_person_answers_a_hidden_prompt_with_secret_input_and_the_text_is_kept_nowhere() {
    const SECRET: &str = "correct-horse-battery-9";
    let env = TestEnv::with_config("[audit]\nenabled = true\n");
    let mut session = answering_session(&env);
    // A careless script prints what it read: the typed secret is redacted from then on.
    let command =
        "read -s -p 'Password: ' pw; echo; echo \"got ${#pw}\"; echo \"it was $pw\"; sleep 60";
    let (id, request) = start_asking(&mut session, command);
    assert_eq!(
        request,
        json!({"type": "input_request", "jobId": id, "prompt": "Password:",
               "command": command, "hidden": true}),
        "`read` is the job's shell: the job's command names the asker"
    );
    // The model is told that the person answers it here, not in the chat.
    let (waiting, _) = session.await_state(&id, "waiting_for_input");
    assert!(text(&waiting).ends_with(&answerable_line(&id)), "{waiting}");

    // A line break is refused, and nothing is typed.
    let refused = secret_input(&mut session, "s1", &id, "two\nlines");
    assert_eq!(
        refused["error"], "`text` must not hold CR or LF: agentsh sends it followed by Enter",
        "{refused}"
    );
    let refused = secret_input(&mut session, "s2", "9", SECRET);
    assert_eq!(refused["success"], false, "{refused}");

    let sent = secret_input(&mut session, "s3", &id, SECRET);
    assert_eq!(
        sent,
        json!({"type": "response", "id": "s3", "command": "secret_input", "success": true})
    );
    let answered = session.output(&id, json!({"until": "it was", "wait": 10}));
    let screen = text(&answered);
    assert!(
        screen.contains(&format!("got {}", SECRET.len())),
        "{screen}"
    );
    assert!(screen.contains("it was [REDACTED:input]"), "{screen}");
    assert!(!screen.contains(SECRET), "{screen}");
    // The job's log, the artifacts, the audit log, the config: nothing holds it.
    let view = {
        session
            .rpc
            .send_json(&json!({"id": "v", "type": "job_view", "jobId": id}));
        session.rpc.response("v")
    };
    assert!(!view.to_string().contains(SECRET), "{view}");
    session.call("job_kill", json!({"jobId": id}));
    drop(session);
    assert_in_no_file(env.root(), SECRET);

    // With the secret typed at an echoing prompt it would show: refused, nothing typed.
    let mut session = answering_session(&env);
    let (id, _) = session.background("read -p 'Name: ' n; echo \"hi $n\"", json!({"pty": true}));
    session.await_state(&id, "waiting_for_input");
    let refused = secret_input(&mut session, "s4", &id, SECRET);
    assert_eq!(
        refused["error"],
        format!(
            "job {id} is not asking for hidden input now (its terminal shows what is typed): the text was not sent"
        ),
        "{refused}"
    );
    session.call("job_kill", json!({"jobId": id}));
}

#[test]
fn getpass_and_every_ssh_keygen_prompt_are_answered_with_secret_input() {
    if agentsh_test_support::which("ssh-keygen").is_none() {
        eprintln!("skipped: no ssh-keygen");
        return;
    }
    let env = TestEnv::new();
    let mut session = answering_session(&env);
    let (id, request) = start_asking(
        &mut session,
        "python3 -c 'import getpass; p = getpass.getpass(\"Passphrase: \"); print(\"length\", len(p))'",
    );
    assert_eq!(request["jobId"], id.as_str());
    assert_eq!(request["prompt"], "Passphrase:");
    // Python's own command line (run by a launcher or exec'd by the job's shell, where the
    // job's command names it).
    assert!(
        request["command"]
            .as_str()
            .is_some_and(|command| command.contains("python3 -c")
                && command.contains("getpass.getpass(\"Passphrase: \")")),
        "{request}"
    );
    assert_eq!(
        secret_input(&mut session, "g", &id, "four")["success"],
        true
    );
    let done = session.output(&id, json!({"until": "length", "wait": 10}));
    assert!(text(&done).contains("length 4"), "{done}");

    let key = env.work_dir().join("key");
    let made = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "old-passphrase", "-f"])
        .arg(&key)
        .status()
        .expect("ssh-keygen");
    assert!(made.success());
    // Not the job's last command: its shell forks it, and the asking program's own command
    // line is named.
    let (id, first) = start_asking(&mut session, "ssh-keygen -p -f key; echo changed");
    // Three prompts, one event each: the old passphrase, the new one, the new one again.
    let mut request = Some(first);
    for (n, answer) in ["old-passphrase", "new-passphrase", "new-passphrase"]
        .into_iter()
        .enumerate()
    {
        let request = request.take().unwrap_or_else(|| input_request(&session));
        assert_eq!(request["jobId"], id.as_str(), "{request}");
        assert_eq!(request["command"], "ssh-keygen -p -f key", "{request}");
        let sent = secret_input(&mut session, &format!("k{n}"), &id, answer);
        assert_eq!(sent["success"], true, "prompt {n}: {sent}");
    }
    let (ended, _) = session.await_state(&id, "exited");
    assert!(
        text(&ended).contains("Your identification has been saved with the new passphrase"),
        "{ended}"
    );
    assert!(text(&ended).contains("changed"), "{ended}");
    // The key now opens with the new passphrase.
    let checked = std::process::Command::new("ssh-keygen")
        .args(["-y", "-P", "new-passphrase", "-f"])
        .arg(&key)
        .output()
        .expect("ssh-keygen -y");
    assert!(checked.status.success(), "{checked:?}");
}
