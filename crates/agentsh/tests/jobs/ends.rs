//! Jobs that report back: a job's end goes to the client at once as a `job_end` event, and
//! the session's next tool result (any tool) closes with its notice, once; a job the model
//! killed, or whose end a result showed, gets none.

use std::time::Duration;

use serde_json::{Value, json};

use super::{Session, job, text};
use crate::util::{LIVENESS, TestEnv, is_response};

/// The notice of job `id` running `command` that exited with `code` after `run_time`.
fn notice(id: &str, command: &str, code: i32, run_time: &str) -> String {
    format!(
        "[job {id} ({command}) exited with code {code} after {run_time}; job_output {id} shows its last output]"
    )
}

/// The run time of a `job_end` event as notices write it under a minute (`2s`): whole seconds
/// of its `runTimeMs`, which a loaded machine may make longer than the command's sleep.
fn run_time(event: &Value) -> String {
    let ms = event["runTimeMs"].as_u64().expect("runTimeMs");
    assert!(ms < 60_000, "under a minute: {event}");
    format!("{}s", ms / 1000)
}

/// Waits for the `job_end` event of job `id` (other lines are dropped); the event.
fn job_end(session: &Session, id: &str) -> Value {
    let lines = session.rpc.until(LIVENESS, |line| {
        line["type"] == "job_end" && line["jobId"] == id
    });
    lines.last().cloned().expect("the event")
}

/// Sends a `bash` call of `command`; the lines up to its response, and its result.
fn call_seeing_events(session: &mut Session, command: &str) -> (Vec<Value>, Value) {
    call_tool(session, "bash", json!({"command": command}))
}

/// Calls tool `name` with `arguments`; the lines up to its response, and its result.
fn call_tool(session: &mut Session, name: &str, arguments: Value) -> (Vec<Value>, Value) {
    let id = session.send(name, arguments);
    let mut lines = session.rpc.until(LIVENESS, |line| is_response(line, &id));
    let response = lines.pop().expect("the response");
    (lines, response["data"].clone())
}

/// The `job_end` event of job `id` among `lines`, else the next one to come.
fn job_end_in(session: &Session, lines: &[Value], id: &str) -> Value {
    lines
        .iter()
        .find(|line| line["type"] == "job_end" && line["jobId"] == id)
        .cloned()
        .unwrap_or_else(|| job_end(session, id))
}

#[test]
fn an_ended_job_is_reported_at_once_and_noticed_once_in_the_next_result() {
    let env = TestEnv::new();
    let mut session = Session::start(&env);
    let (id, started) = session.background("sleep 2; exit 3", json!({}));
    assert_eq!(job(&started)["state"], "running", "{started}");

    // The event comes at once, while no call runs.
    let event = job_end(&session, &id);
    assert_eq!(event["state"], "exited", "{event}");
    assert_eq!(event["exitCode"], 3, "{event}");
    let ms = event["runTimeMs"].as_u64().expect("runTimeMs");
    assert!((1900..5000).contains(&ms), "{event}");
    std::thread::sleep(Duration::from_secs(1));

    // The next result, of any tool, closes with the notice; the one after it does not.
    let (_, result) = call_seeing_events(&mut session, "true");
    assert_eq!(
        text(&result),
        format!(
            "(no output)\n\n{}",
            notice(&id, "sleep 2; exit 3", 3, &run_time(&event))
        ),
        "{result}"
    );
    assert_eq!(
        result["isError"], false,
        "a notice does not make a result an error"
    );
    let (_, again) = call_seeing_events(&mut session, "true");
    assert_eq!(text(&again), "(no output)", "{again}");

    // A job tool's result carries it too.
    let (lines, started) = call_tool(
        &mut session,
        "bash",
        json!({"command": "exit 0", "run_in_background": true, "timeout": 60}),
    );
    let second = job(&started)["id"].as_str().expect("a job id").to_owned();
    // Its starting result may show the end itself (it waits a second): then no notice. Its
    // event may come before that result.
    let event = job_end_in(&session, &lines, &second);
    let listed = session.call("job_list", json!({}));
    let listed = text(&listed);
    let noticed = listed.contains(&notice(&second, "exit 0", 0, &run_time(&event)));
    assert!(
        noticed || !listed.contains("[job 2"),
        "the notice, or none when the start showed the end: {listed}"
    );
}

#[test]
fn a_job_the_model_killed_or_whose_end_it_saw_gets_no_notice() {
    let env = TestEnv::new();
    let mut session = Session::start(&env);

    // Killed by the model: the event says killed, no notice follows.
    let (killed, _) = session.background("sleep 300", json!({}));
    let (lines, _) = call_tool(&mut session, "job_kill", json!({"jobId": killed}));
    let event = job_end_in(&session, &lines, &killed);
    assert_eq!(event["state"], "killed", "{event}");
    assert_eq!(event["exitCode"], Value::Null, "{event}");

    // Its end shown by `job_output`: no notice either. It ends once the test opens its gate,
    // after its starting result (else that result could show the end first).
    let gate = env.root().join("gate");
    let (shown, started) = session.background(
        &format!(
            "until [ -e {} ]; do sleep 0.05; done; exit 4",
            gate.display()
        ),
        json!({}),
    );
    assert_eq!(job(&started)["state"], "running", "{started}");
    std::fs::write(&gate, "").expect("open the gate");
    let mut seen = Vec::new();
    loop {
        let (lines, result) = call_tool(
            &mut session,
            "job_output",
            json!({"jobId": shown, "wait": 5}),
        );
        seen.extend(lines);
        if job(&result)["state"] == "exited" {
            assert!(
                text(&result).ends_with(&format!("[job {shown}: exited with code 4]")),
                "{result}"
            );
            break;
        }
    }
    job_end_in(&session, &seen, &shown);

    let (_, result) = call_seeing_events(&mut session, "echo done");
    assert_eq!(text(&result), "done", "{result}");
}

#[test]
fn a_long_command_is_cut_at_60_characters_in_the_notice() {
    let env = TestEnv::new();
    let mut session = Session::start(&env);
    let command = format!("sleep 2\necho {}", "x".repeat(80));
    let (id, _) = session.background(&command, json!({}));
    let event = job_end(&session, &id);
    let (_, result) = call_seeing_events(&mut session, "true");
    let shown: String = command.replace('\n', " ").chars().take(60).collect();
    let after = run_time(&event);
    assert!(
        text(&result).ends_with(&format!(
            "[job {id} ({shown}…) exited with code 0 after {after}; job_output {id} shows its last output]"
        )),
        "{result}"
    );
}
