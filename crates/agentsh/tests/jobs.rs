//! Background jobs over RPC against the real binary (issue 12): `bash` with
//! `run_in_background`, `pty` and `yield_after`, and the tools `job_output`, `job_input`,
//! `job_kill` and `job_list` as `tool_call` names. Written from the documented behaviour, not from the code:
//! texts are the documented ones.
//!
//! This file holds the client helper and the non-PTY jobs; `jobs/pty.rs` the PTY jobs,
//! `jobs/bounds.rs` the limits and `jobs/lifetime.rs` what ends jobs.

mod bounds;
mod ends;
mod hidden;
mod lifetime;
mod pty;
mod usage;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::{
    LIVENESS, Rpc, TestEnv, assert_json_eq, assert_no_survivor, marked_sleeper, unique_marker,
    wait_for_process,
};

/// The line a result ends with when the call left a job running, for job `id`.
pub fn running_line(id: &str) -> String {
    format!(
        "[Running in the background as job {id}. Read it with job_output, stop it with job_kill.]"
    )
}

/// The line a yield result adds.
pub const NEW_SHELL_LINE: &str =
    "[The next command runs in a new shell: variables and functions from earlier calls are gone.]";

/// An `agentsh rpc` session driven with `tool_call` requests, one at a time.
pub struct Session {
    pub rpc: Rpc,
    pub calls: u64,
}

impl Session {
    /// `agentsh rpc` in `env`.
    pub fn start(env: &TestEnv) -> Self {
        Self {
            rpc: env.rpc(),
            calls: 0,
        }
    }

    /// The result of tool `name` called with `arguments` (answered within [`LIVENESS`]).
    pub fn call(&mut self, name: &str, arguments: Value) -> Value {
        let id = self.send(name, arguments);
        self.answer(&id)
    }

    /// Sends a call of tool `name` with `arguments` without waiting: its request id.
    pub fn send(&mut self, name: &str, arguments: Value) -> String {
        self.calls += 1;
        let id = format!("call-{}", self.calls);
        let mut request = json!({"id": id, "type": "tool_call", "toolCallId": id, "name": name});
        request["arguments"] = arguments;
        self.rpc.send_json(&request);
        id
    }

    /// The result of the call sent as `id`, answered within [`LIVENESS`].
    pub fn answer(&mut self, id: &str) -> Value {
        let response = self.rpc.response(id);
        assert_eq!(
            response["success"], true,
            "a tool call is answered with a result: {response}"
        );
        response["data"].clone()
    }

    /// `bash` with `arguments`.
    pub fn bash(&mut self, arguments: Value) -> Value {
        self.call("bash", arguments)
    }

    /// `bash {command, run_in_background: true}` (plus `extra` arguments): the job's id and the
    /// starting result, which must say the job runs.
    pub fn background(&mut self, command: &str, extra: Value) -> (String, Value) {
        let mut arguments = json!({"command": command, "run_in_background": true});
        merge(&mut arguments, extra);
        let result = self.bash(arguments);
        let id = job(&result)["id"]
            .as_str()
            .unwrap_or_else(|| panic!("details.job.id is a string: {result}"))
            .to_owned();
        (id, result)
    }

    /// `job_output {jobId: id}` plus `extra` arguments, answered within [`LIVENESS`].
    pub fn output(&mut self, id: &str, extra: Value) -> Value {
        let mut arguments = json!({"jobId": id});
        merge(&mut arguments, extra);
        self.call("job_output", arguments)
    }

    /// Polls `job_output {jobId: id, wait: 1}` until `details.job.state` is `state`, within
    /// [`LIVENESS`]: the last result, and the bodies of all results on the way (for a non-PTY
    /// job, everything new it printed meanwhile).
    pub fn await_state(&mut self, id: &str, state: &str) -> (Value, String) {
        let deadline = Instant::now() + LIVENESS;
        let mut bodies = String::new();
        loop {
            let result = self.output(id, json!({"wait": 1}));
            bodies.push_str(body(&result));
            bodies.push('\n');
            if job(&result)["state"] == state {
                return (result, bodies);
            }
            assert!(
                Instant::now() < deadline,
                "job {id} not {state} within {LIVENESS:?}: last {result}"
            );
        }
    }
}

impl Session {
    /// `answer` (a PTY job `id`'s answer, e.g. `job_input`'s) if its text shows `needle`, else
    /// the first `job_output {wait: 1}` whose screen does, within [`LIVENESS`]: `job_input`
    /// answers once the output paused for 200 ms, which a loaded machine may do before the
    /// program printed its reply.
    pub fn screen_showing(&mut self, id: &str, answer: Value, needle: &str) -> Value {
        let deadline = Instant::now() + LIVENESS;
        let mut result = answer;
        while !text(&result).contains(needle) {
            assert!(
                Instant::now() < deadline,
                "job {id}: {needle:?} not on the screen within {LIVENESS:?}: last {result}"
            );
            result = self.output(id, json!({"wait": 1}));
        }
        result
    }
}

/// Adds the fields of `extra` (an object, or null for none) to `target`.
fn merge(target: &mut Value, extra: Value) {
    if let (Value::Object(target), Value::Object(extra)) = (target, extra) {
        target.extend(extra);
    }
}

/// The text of a result (its one text block).
pub fn text(result: &Value) -> &str {
    assert_eq!(
        result["content"][0]["type"], "text",
        "a text block: {result}"
    );
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("a text: {result}"))
}

/// `details.job` of a result (panics when there is none).
pub fn job(result: &Value) -> &Value {
    let job = &result["details"]["job"];
    assert!(job.is_object(), "details.job expected: {result}");
    job
}

/// The state line of a job tool's answer: `[job N: running]` etc.
pub fn state_line(id: &str, state: &str) -> String {
    format!("[job {id}: {state}]")
}

/// The text of a job tool's answer without its state line (and the blank line before it).
pub fn body(result: &Value) -> &str {
    let text = text(result);
    let (body, last) = text
        .rsplit_once("\n\n")
        .unwrap_or_else(|| panic!("text, a blank line, then the state line: {text:?}"));
    assert!(
        last.starts_with("[job ") && last.ends_with(']') && !last.contains('\n'),
        "the last line is the state line: {text:?}"
    );
    body
}

/// Asserts that `result` is a job tool's answer for job `id` ending with the state line of
/// `state` (e.g. `running`, `exited with code 0`), after a blank line.
pub fn assert_state(result: &Value, id: &str, state: &str) {
    let text = text(result);
    let line = state_line(id, state);
    assert!(
        text.ends_with(&format!("\n\n{line}")),
        "ends with a blank line and {line}: {text:?}"
    );
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(job(result)["id"], id, "{result}");
}

/// Asserts that `result` is a tool error whose text starts with `message`.
pub fn assert_tool_error(result: &Value, message: &str) {
    assert_eq!(result["isError"], true, "a tool error: {result}");
    let text = text(result);
    assert!(
        text.starts_with(message),
        "{message:?} expected, got {text:?}"
    );
}

/// The port in python's `Serving HTTP on 127.0.0.1 port NNNN` line in `text`.
fn served_port(text: &str) -> u16 {
    let rest = text
        .split("Serving HTTP on 127.0.0.1 port ")
        .nth(1)
        .unwrap_or_else(|| panic!("the starting result shows the port: {text:?}"));
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("a port number: {text:?}"))
}

/// `GET /<path>` over plain HTTP/1.0: the whole response.
fn http_get(port: u16, path: &str) -> String {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("the server accepts");
    stream.set_read_timeout(Some(LIVENESS)).expect("timeout");
    write!(stream, "GET /{path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").expect("send");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("a response");
    response
}

/// Asserts that nothing listens on `port` any more (allowing the last process a moment to go).
fn assert_port_closed(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        match TcpStream::connect(("127.0.0.1", port)) {
            Err(err) if err.kind() == std::io::ErrorKind::ConnectionRefused => return,
            other => assert!(
                Instant::now() < deadline,
                "port {port} still open after job_kill: {other:?}"
            ),
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_background_server_shows_its_port_serves_and_is_gone_after_job_kill() {
    let env = TestEnv::new();
    let marker = unique_marker();
    // The site's directory carries the marker, and the server's argv names it.
    let site = env.root().join(&marker);
    std::fs::create_dir(&site).expect("mkdir");
    std::fs::write(site.join("hello.txt"), "hello from the job\n").expect("write");
    let site = site.to_str().expect("utf-8 path");
    let mut session = Session::start(&env);

    let (id, started) = session.background(
        &format!("python3 -u -m http.server 0 --bind 127.0.0.1 --directory {site}"),
        json!({"cwd": site}),
    );
    assert_eq!(id, "1", "the first job of a session is 1");
    assert_eq!(started["isError"], false, "{started}");
    assert_eq!(started["details"]["exitCode"], Value::Null, "{started}");
    assert_json_eq(
        &json!({"id": "1", "state": "running", "exitCode": null, "pty": false}),
        job(&started),
        "details.job of the starting result",
    );
    let start_text = text(&started);
    assert!(
        start_text.ends_with(&format!("\n\n{}", running_line("1"))),
        "{start_text:?}"
    );
    let port = served_port(start_text);

    // The line was in the starting result: `until` finds it at once (not after its wait).
    let found = session.output(&id, json!({"until": "Serving HTTP", "wait": 300}));
    assert_state(&found, &id, "running");
    assert_eq!(job(&found)["state"], "running");
    assert!(
        !body(&found).contains("Serving HTTP"),
        "the starting result showed it already: {found}"
    );

    let page = http_get(port, "hello.txt");
    assert!(page.starts_with("HTTP/1.0 200"), "{page:?}");
    assert!(page.ends_with("hello from the job\n"), "{page:?}");
    // The request's log line (python writes it to stderr) is new output of the job.
    let logged = session.output(&id, json!({"until": "GET /hello.txt", "wait": 300}));
    assert!(
        body(&logged).contains("\"GET /hello.txt HTTP/1.0\" 200"),
        "{logged}"
    );

    let killed = session.call("job_kill", json!({"jobId": 1}));
    assert_state(&killed, &id, "killed");
    assert_eq!(job(&killed)["state"], "killed", "{killed}");
    assert_port_closed(port);
    assert_no_survivor(&marker);
}

#[test]
fn job_kill_ends_processes_a_job_left_behind_with_setsid_and_nohup() {
    let env = TestEnv::new();
    let mut session = Session::start(&env);
    let (escaped, nohup) = (unique_marker(), unique_marker());
    // The command itself still runs (`wait`) while its `setsid` child is in a session of its own.
    let (first, _) = session.background(
        &format!("setsid {} & echo started; wait", marked_sleeper(&escaped)),
        Value::Null,
    );
    // The command has returned; only the `nohup` child is left.
    let (second, _) = session.background(
        &format!(
            "nohup {} >/dev/null 2>&1 & echo started",
            marked_sleeper(&nohup)
        ),
        Value::Null,
    );
    wait_for_process(&escaped);
    wait_for_process(&nohup);

    let killed = session.call("job_kill", json!({"jobId": first}));
    assert_state(&killed, &first, "killed");
    assert_no_survivor(&escaped);

    let killed = session.call("job_kill", json!({"jobId": second}));
    assert_eq!(killed["isError"], false, "{killed}");
    assert_eq!(job(&killed)["id"], second.as_str());
    assert_no_survivor(&nohup);
}

#[test]
fn a_yielded_command_goes_on_as_a_job_and_the_next_call_gets_a_new_shell() {
    let env = TestEnv::new();
    let gate = env.root().join("gate");
    let mut session = Session::start(&env);
    let set = session.bash(json!({"command": "JOBVAR=kept; echo \"$JOBVAR\""}));
    assert_eq!(text(&set), "kept");

    // The command can only finish once the test opens the gate (after the next call).
    let yielded = session.bash(json!({
        "command": format!("sleep 2; until [ -e {} ]; do sleep 0.1; done; echo done", gate.display()),
        "yield_after": 1,
    }));
    assert_eq!(yielded["isError"], false, "{yielded}");
    assert_eq!(yielded["details"]["exitCode"], Value::Null, "{yielded}");
    let job_state = job(&yielded).clone();
    assert_json_eq(
        &json!({"id": "1", "state": "running", "exitCode": null, "pty": false}),
        &job_state,
        "details.job of the yield result",
    );
    let yield_text = text(&yielded);
    let lines: Vec<&str> = yield_text.lines().collect();
    assert!(
        lines.contains(&running_line("1").as_str()),
        "{yield_text:?}"
    );
    assert!(lines.contains(&NEW_SHELL_LINE), "{yield_text:?}");
    assert!(!yield_text.contains("Command exited"), "{yield_text:?}");

    // The next call runs at once (the yielded command still waits for the gate), in a new shell.
    let next = session.bash(json!({"command": "echo \"v=${JOBVAR-unset}\""}));
    assert_eq!(text(&next), "v=unset", "{next}");
    assert_eq!(next["details"].get("job"), None, "{next}");
    std::fs::write(&gate, "").expect("open the gate");

    let out = session.output("1", json!({"until": "^done$", "wait": 300}));
    assert!(body(&out).contains("done"), "{out}");
    let ended = if job(&out)["state"] == "exited" {
        out
    } else {
        // The output came first; the end follows.
        session.await_state("1", "exited").0
    };
    assert_state(&ended, "1", "exited with code 0");
    assert_json_eq(
        &json!({"id": "1", "state": "exited", "exitCode": 0, "pty": false}),
        job(&ended),
        "details.job once the command returned",
    );
}

#[test]
fn wait_and_until_return_as_soon_as_their_condition_holds() {
    let env = TestEnv::new();
    let (first, second) = (env.root().join("first"), env.root().join("second"));
    // The job prints `tick` each time the test creates this file (and removes it).
    let tick = env.root().join("tick");
    let mut session = Session::start(&env);
    let (id, _) = session.background(
        &format!(
            "until [ -e {first} ]; do sleep 0.1; done; echo one; \
             until [ -e {second} ]; do \
               if [ -e {tick} ]; then echo tick; rm {tick}; fi; sleep 0.05; \
             done; echo READY; sleep 300",
            first = first.display(),
            second = second.display(),
            tick = tick.display()
        ),
        Value::Null,
    );
    // `wait` returns with the first new output, long before its 300 s.
    let call = session.send("job_output", json!({"jobId": id, "wait": 300}));
    std::fs::write(&first, "").expect("open the first gate");
    let out = session.answer(&call);
    assert_state(&out, &id, "running");
    assert!(body(&out).starts_with("one"), "{out}");

    // `until` returns at the first matching line, not at the first output.
    let call = session.send(
        "job_output",
        json!({"jobId": id, "until": "^READY$", "wait": 300}),
    );
    // A line that does not match comes first (printed once the job removed the file).
    std::fs::write(&tick, "").expect("ask for a tick");
    let deadline = Instant::now() + LIVENESS;
    while tick.exists() {
        assert!(Instant::now() < deadline, "the job never ticked");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::write(&second, "").expect("open the second gate");
    let out = session.answer(&call);
    let shown = body(&out);
    assert!(shown.contains("tick"), "{out}");
    assert!(shown.lines().any(|line| line == "READY"), "{out}");

    // A line one `job_output` returned is not found again.
    let again = session.output(&id, json!({"until": "^READY$", "wait": 1}));
    assert!(!body(&again).contains("READY"), "{again}");
    session.call("job_kill", json!({"jobId": id}));
}

#[test]
fn a_command_that_ends_before_its_yield_is_an_ordinary_result() {
    let env = TestEnv::new();
    let mut session = Session::start(&env);
    let result = session.bash(json!({"command": "false", "yield_after": 5}));
    assert_eq!(result["isError"], true, "{result}");
    assert_eq!(result["details"]["exitCode"], 1, "{result}");
    assert_eq!(result["details"].get("job"), None, "no job: {result}");
    let text = text(&result);
    assert!(text.ends_with("Command exited with code 1"), "{text:?}");
    assert!(!text.contains("[Running in the background"), "{text:?}");
    let list = session.call("job_list", json!({}));
    assert_eq!(text_of_list(&list), "(no jobs)");
}

/// The text of a `job_list` answer (not an error).
fn text_of_list(result: &Value) -> &str {
    assert_eq!(result["isError"], false, "{result}");
    text(result)
}

#[test]
fn a_job_runs_in_a_new_shell_in_the_calls_cwd() {
    let env = TestEnv::new();
    let dir = env.root().join("elsewhere");
    std::fs::create_dir(&dir).expect("mkdir");
    let mut session = Session::start(&env);
    session.bash(json!({"command": "SHELLVAR=set; f() { echo fn; }"}));
    let (id, started) = session.background(
        "echo \"pwd=$PWD var=${SHELLVAR-unset}\"; type f >/dev/null 2>&1 || echo no-f",
        json!({"cwd": dir.to_str().expect("utf-8")}),
    );
    let (ended, bodies) = if job(&started)["state"] == "exited" {
        (started.clone(), text(&started).to_owned())
    } else {
        session.await_state(&id, "exited")
    };
    let all = format!("{}\n{bodies}", text(&started));
    assert!(
        all.contains(&format!("pwd={} var=unset", dir.display())),
        "{all:?}"
    );
    assert!(all.contains("no-f"), "{all:?}");
    assert_eq!(job(&ended)["exitCode"], 0, "{ended}");
    // The session's own shell kept its state.
    let kept = session.bash(json!({"command": "echo \"${SHELLVAR-unset}\""}));
    assert_eq!(text(&kept), "set");
}

#[test]
fn job_shells_do_not_count_toward_max_shells() {
    let env = TestEnv::with_config("[bash]\nmax_shells = 1\n");
    let mut session = Session::start(&env);
    session.bash(json!({"command": "KEPT=yes"}));
    let marker = unique_marker();
    for _ in 0..3 {
        session.background(&marked_sleeper(&marker), Value::Null);
    }
    // The one cached shell is still the session's, with its state.
    let kept = session.bash(json!({"command": "echo \"${KEPT-gone}\""}));
    assert_eq!(text(&kept), "yes", "{kept}");
    let (status, _) = session.rpc.close(LIVENESS);
    assert_eq!(status.code(), Some(0));
    assert_no_survivor(&marker);
}

#[test]
fn a_yielded_commands_shell_is_not_handed_back_when_it_ends() {
    let env = TestEnv::new();
    let gate = env.root().join("gate");
    let mut session = Session::start(&env);
    // It cannot end before the test opens the gate, after the yield.
    let yielded = session.bash(json!({
        "command": format!(
            "until [ -e {} ]; do sleep 0.05; done; YIELDED=set; echo end",
            gate.display()
        ),
        "yield_after": 1,
    }));
    let id = job(&yielded)["id"].as_str().expect("a job id").to_owned();
    std::fs::write(&gate, "").expect("open the gate");
    session.await_state(&id, "exited");
    for _ in 0..3 {
        let next = session.bash(json!({"command": "echo \"${YIELDED-unset}\""}));
        assert_eq!(text(&next), "unset", "{next}");
    }
}

#[test]
fn job_argument_errors_are_tool_errors_naming_the_argument() {
    let env = TestEnv::new();
    let mut session = Session::start(&env);
    let ran = env.root().join("ran");
    let alone = session.bash(json!({"command": format!("touch {}", ran.display()), "pty": true}));
    assert_eq!(alone["isError"], true, "{alone}");
    assert!(text(&alone).contains("pty"), "{alone}");
    assert!(!ran.exists(), "an argument error runs nothing");

    let (id, _) = session.background("sleep 300", Value::Null);
    let bad_regex = session.output(&id, json!({"until": "("}));
    assert_eq!(bad_regex["isError"], true, "{bad_regex}");
    assert!(text(&bad_regex).contains("until"), "{bad_regex}");

    let no_id = session.call("job_output", json!({}));
    assert_eq!(no_id["isError"], true, "{no_id}");
    assert!(text(&no_id).contains("jobId"), "{no_id}");

    let no_id = session.call("job_kill", json!({"jobId": true}));
    assert_eq!(no_id["isError"], true, "{no_id}");
    assert!(text(&no_id).contains("jobId"), "{no_id}");
    session.call("job_kill", json!({"jobId": id}));
}

#[test]
fn a_non_pty_job_has_no_terminal_for_job_input() {
    let env = TestEnv::new();
    let mut session = Session::start(&env);
    let (id, _) = session.background("sleep 300", Value::Null);
    let refused = session.call("job_input", json!({"jobId": id, "text": "hi\n"}));
    assert_tool_error(
        &refused,
        &format!("Job {id} has no terminal: start it with pty: true to send input"),
    );
    session.call("job_kill", json!({"jobId": id}));
}

#[test]
fn exec_has_no_job_arguments_and_refuses_them() {
    let env = TestEnv::new();
    let help = crate::util::finish(env.command(&["exec", "--help"]));
    assert_eq!(help.code(), 0, "{help:?}");
    for word in ["background", "--pty", "yield"] {
        assert!(
            !help.stdout.to_lowercase().contains(word),
            "exec --help mentions {word}: {}",
            help.stdout
        );
    }
    for flags in [
        &["--run-in-background"][..],
        &["--pty"],
        &["--yield-after", "1"],
    ] {
        let mut args = flags.to_vec();
        args.extend(["--", "true"]);
        let done = env.exec(&args);
        assert_eq!(done.code(), 2, "{flags:?}: {done:?}");
    }
}

/// `Path` of an artifact id from a result's text (`artifact://ID`), read with `read_artifact`.
pub fn artifact_path(session: &mut Session, id: &str) -> std::path::PathBuf {
    session.rpc.send_json(
        &json!({"id": "artifact", "type": "read_artifact", "artifactId": id, "limit": 1}),
    );
    let response = session.rpc.response("artifact");
    assert_eq!(response["success"], true, "{response}");
    Path::new(response["data"]["path"].as_str().expect("a path")).to_path_buf()
}

/// The artifact id after `artifact://` in `text`.
pub fn artifact_id(text: &str) -> String {
    let rest = text
        .split("artifact://")
        .nth(1)
        .unwrap_or_else(|| panic!("an artifact:// URL: {text:?}"));
    rest.chars().take_while(char::is_ascii_digit).collect()
}
