//! PTY jobs (`pty: true`): the screen, `waiting_for_input` from the kernel, `job_input`
//! with text and key names, and the terminal environment.

use std::time::Instant;

use serde_json::{Value, json};

use super::{Session, assert_state, assert_tool_error, job, text};
use crate::util::{LIVENESS, TestEnv};

/// The first line of a PTY job's answer, parsed:
/// `[screen 120x40, cursor row R col C (1-based); full log: artifact://ID]` → (R, C, ID).
fn screen_header(result: &Value) -> (usize, usize, String) {
    let text = text(result);
    let first = text.lines().next().unwrap_or_default();
    let parsed = first
        .strip_prefix("[screen 120x40, cursor row ")
        .and_then(|rest| rest.split_once(" col "))
        .and_then(|(row, rest)| {
            let (col, rest) = rest.split_once(" (1-based); full log: artifact://")?;
            let id = rest.strip_suffix(']')?;
            let digits = !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit());
            digits.then(|| Some((row.parse().ok()?, col.parse().ok()?, id.to_owned())))?
        });
    parsed.unwrap_or_else(|| panic!("a screen header first: {text:?}"))
}

/// The screen rows of a PTY job's answer: between the header and the blank line before the
/// state line.
fn screen(result: &Value) -> Vec<&str> {
    let body = super::body(result);
    body.lines().skip(1).collect()
}

/// Whether the screen of `result` has a row that, without trailing blanks, is `row`.
fn has_row(result: &Value, row: &str) -> bool {
    screen(result).iter().any(|line| line.trim_end() == row)
}

/// `run_in_background` with `pty: true` (and `extra` arguments).
fn pty_job(session: &mut Session, command: &str, extra: Value) -> String {
    let mut arguments = json!({"pty": true});
    super::merge(&mut arguments, extra);
    let (id, started) = session.background(command, arguments);
    assert_eq!(job(&started)["pty"], true, "{started}");
    id
}

/// Polls `job_output {wait: 1}` until `ready` holds for the answer, within `limit`.
fn await_screen(
    session: &mut Session,
    id: &str,
    limit: std::time::Duration,
    ready: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + limit;
    loop {
        let result = session.output(id, json!({"wait": 1}));
        if ready(&result) {
            return result;
        }
        assert!(
            Instant::now() < deadline,
            "job {id}: the screen did not get there within {limit:?}: {result}"
        );
    }
}

/// The job's answer once it has exited (the answer `result` already, or a later one).
fn exited(session: &mut Session, id: &str, result: Value) -> Value {
    if job(&result)["state"] == "exited" {
        result
    } else {
        session.await_state(id, "exited").0
    }
}

#[test]
fn a_pty_job_waits_for_input_at_read_and_gets_its_answer() {
    let env = TestEnv::new();
    let mut session = Session::start(&env);
    let id = pty_job(
        &mut session,
        "read -p 'Name? ' n; echo \"hi $n\"",
        Value::Null,
    );
    let (waiting, _) = session.await_state(&id, "waiting_for_input");
    assert_state(&waiting, &id, "waiting for input");
    let (row, col, log) = screen_header(&waiting);
    let rows = screen(&waiting);
    let prompt = rows
        .iter()
        .position(|line| line.starts_with("Name?"))
        .unwrap_or_else(|| panic!("the prompt is on the screen: {waiting}"));
    assert_eq!((row, col), (prompt + 1, 7), "the cursor after `Name? `");

    let answered = session.call("job_input", json!({"jobId": id, "text": "Bob\n"}));
    assert_eq!(answered["isError"], false, "{answered}");
    let answered = session.screen_showing(&id, answered, "hi Bob");
    let ended = exited(&mut session, &id, answered);
    assert_state(&ended, &id, "exited with code 0");
    assert_eq!(job(&ended)["exitCode"], 0, "{ended}");

    // The full log holds the whole exchange.
    session
        .rpc
        .send_json(&json!({"id": "log", "type": "read_artifact", "artifactId": log}));
    let log = session.rpc.response("log");
    let log_text = log["data"]["text"].as_str().unwrap_or_default();
    assert!(log_text.contains("Name? "), "{log}");
    assert!(log_text.contains("hi Bob"), "{log}");
}

#[test]
fn the_python_repl_waits_for_input_at_its_prompt_and_answers() {
    let env = TestEnv::new();
    let mut session = Session::start(&env);
    let id = pty_job(&mut session, "python3 -q", Value::Null);
    let (waiting, _) = session.await_state(&id, "waiting_for_input");
    assert!(
        screen(&waiting).iter().any(|row| row.starts_with(">>>")),
        "{waiting}"
    );
    let answered = session.call("job_input", json!({"jobId": id, "text": "1+1\n"}));
    assert_eq!(answered["isError"], false, "{answered}");
    if !has_row(&answered, "2") {
        await_screen(&mut session, &id, LIVENESS, |result| has_row(result, "2"));
    }
    let bye = session.call("job_input", json!({"jobId": id, "text": "exit()\n"}));
    let ended = exited(&mut session, &id, bye);
    assert_eq!(job(&ended)["exitCode"], 0, "{ended}");
}

#[test]
fn a_pty_job_waiting_in_epoll_on_a_socket_stays_running() {
    let env = TestEnv::new();
    let script = env.root().join("server.py");
    std::fs::write(
        &script,
        "import select, socket\n\
         s = socket.socket()\n\
         s.bind(('127.0.0.1', 0))\n\
         s.listen()\n\
         e = select.epoll()\n\
         e.register(s.fileno(), select.EPOLLIN)\n\
         print('listening', flush=True)\n\
         e.poll()\n",
    )
    .expect("write the server");
    let mut session = Session::start(&env);
    let id = pty_job(
        &mut session,
        &format!("python3 {}", script.display()),
        Value::Null,
    );
    await_screen(&mut session, &id, LIVENESS, |result| {
        has_row(result, "listening")
    });
    // Each answer comes after a second without output: long past the 300 ms a PTY job must be quiet.
    for _ in 0..3 {
        let quiet = session.output(&id, json!({"wait": 1}));
        assert_state(&quiet, &id, "running");
        assert_eq!(job(&quiet)["state"], "running", "{quiet}");
    }
    session.call("job_kill", json!({"jobId": id}));
}

#[test]
fn vim_in_a_pty_job_edits_and_writes_a_file() {
    if agentsh_test_support::which("vim").is_none() {
        eprintln!("skipped: vim is not installed");
        return;
    }
    let env = TestEnv::new();
    let dir = env.root().join("edit");
    std::fs::create_dir(&dir).expect("mkdir");
    let mut session = Session::start(&env);
    let id = pty_job(
        &mut session,
        "vim -u NONE -N file.txt",
        json!({"cwd": dir.to_str().expect("utf-8")}),
    );
    session.await_state(&id, "waiting_for_input");
    let typed = session.call(
        "job_input",
        json!({"jobId": id, "text": "ihello", "keys": ["Esc"]}),
    );
    assert_eq!(typed["isError"], false, "{typed}");
    // Key names are case-insensitive.
    let saved = session.call(
        "job_input",
        json!({"jobId": id, "text": ":wq", "keys": ["enter"]}),
    );
    assert_eq!(saved["isError"], false, "{saved}");
    let ended = exited(&mut session, &id, saved);
    assert_eq!(job(&ended)["exitCode"], 0, "{ended}");
    assert_eq!(
        std::fs::read_to_string(dir.join("file.txt")).expect("vim wrote the file"),
        "hello\n"
    );
}

#[test]
fn npm_init_asks_its_questions_in_a_pty_job() {
    if agentsh_test_support::which("npm").is_none() {
        eprintln!("skipped: npm is not installed");
        return;
    }
    let env = TestEnv::new();
    let dir = env.root().join("package");
    std::fs::create_dir(&dir).expect("mkdir");
    let mut session = Session::start(&env);
    let id = pty_job(
        &mut session,
        "npm init",
        json!({"cwd": dir.to_str().expect("utf-8")}),
    );
    // npm is slow to start on a busy machine.
    let asked = await_screen(&mut session, &id, LIVENESS * 3, |result| {
        screen(result)
            .iter()
            .any(|row| row.starts_with("package name:"))
    });
    assert_ne!(job(&asked)["state"], "exited", "{asked}");
    session.call("job_kill", json!({"jobId": id}));
    assert!(
        !dir.join("package.json").exists(),
        "nothing answered, nothing written"
    );
}

#[test]
fn pty_jobs_get_a_terminal_and_no_prompt_suppressors() {
    let env = TestEnv::new();
    let mut session = Session::start(&env);
    let id = pty_job(
        &mut session,
        "echo \"TERM=$TERM CI=${CI-unset} YES=${npm_config_yes-unset} PIP=${PIP_NO_INPUT-unset} \
         GIT=${GIT_TERMINAL_PROMPT-unset} PAGER=$PAGER\"; tty",
        Value::Null,
    );
    let ended = session.await_state(&id, "exited").0;
    assert!(
        has_row(
            &ended,
            "TERM=xterm-256color CI=unset YES=unset PIP=unset GIT=unset PAGER=cat"
        ),
        "{ended}"
    );
    assert!(
        screen(&ended)
            .iter()
            .any(|row| row.starts_with("/dev/pts/")),
        "{ended}"
    );
}

#[test]
fn job_input_to_an_ended_job_is_refused() {
    let env = TestEnv::new();
    let mut session = Session::start(&env);
    let id = pty_job(&mut session, "echo bye", Value::Null);
    session.await_state(&id, "exited");
    let refused = session.call("job_input", json!({"jobId": id, "text": "x\n"}));
    assert_tool_error(&refused, &format!("Job {id} has ended"));
}

#[test]
fn an_unknown_key_name_is_an_error_and_nothing_is_sent() {
    let env = TestEnv::new();
    let mut session = Session::start(&env);
    let id = pty_job(
        &mut session,
        "IFS= read -r line; echo \"got:$line\"",
        Value::Null,
    );
    session.await_state(&id, "waiting_for_input");
    let refused = session.call(
        "job_input",
        json!({"jobId": id, "text": "abc", "keys": ["Enter", "Hyper+Q"]}),
    );
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(text(&refused).contains("Hyper+Q"), "{refused}");
    // Neither the text nor the valid key reached the terminal.
    let after = session.output(&id, json!({"wait": 1}));
    assert!(!super::body(&after).contains("abc"), "{after}");
    assert_eq!(job(&after)["state"], "waiting_for_input", "{after}");
    let answered = session.call("job_input", json!({"jobId": id, "text": "xyz\n"}));
    let ended = exited(&mut session, &id, answered.clone());
    let shown = format!("{}\n{}", text(&answered), text(&ended));
    assert!(shown.contains("got:xyz"), "{shown:?}");
    assert!(!shown.contains("abc"), "{shown:?}");
}
