//! `agentsh rpc` over real pipes. Lines fuzzing found read wrong: `tests/rpc/lines.rs`.

mod lines;

use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::{
    LIVENESS, TestEnv, assert_no_survivor, is_response, marked_sleep, unique_marker,
    wait_for_process,
};

/// The only limit stated as a number in the brief: an abort is answered in under a second.
const ANSWERED_AT_ONCE: Duration = Duration::from_secs(1);

#[test]
fn abort_bash_is_answered_at_once_and_ends_the_whole_command() {
    let env = TestEnv::new();
    let mut rpc = env.rpc();
    let marker = unique_marker();
    rpc.send_json(&json!({"id": "b", "type": "bash", "command": marked_sleep(&marker)}));
    wait_for_process(&marker);

    let sent = Instant::now();
    rpc.send(r#"{"id": "a", "type": "abort_bash"}"#);
    let abort = rpc.next(LIVENESS);
    let answered = sent.elapsed();
    assert_eq!(
        abort,
        json!({"id": "a", "type": "response", "command": "abort_bash", "success": true})
    );
    assert!(answered < ANSWERED_AT_ONCE, "abort_bash took {answered:?}");

    let bash = rpc.response("b");
    assert_eq!(bash["command"], "bash");
    assert_eq!(
        bash["success"], true,
        "an abort is data, not a failure: {bash}"
    );
    assert_eq!(bash["data"]["cancelled"], true);
    assert_eq!(bash["data"]["timedOut"], false);
    assert!(
        bash["data"]["output"]
            .as_str()
            .is_some_and(|output| output.starts_with("[Command cancelled]")),
        "{bash}"
    );
    assert_no_survivor(&marker);

    // The session is still usable.
    rpc.send(r#"{"id": "c", "type": "bash", "command": "echo still here"}"#);
    let next = rpc.response("c");
    assert_eq!(next["data"]["output"], "still here\n");
    assert_eq!(next["data"]["exitCode"], 0);
}

#[test]
fn a_second_bash_is_refused_while_one_runs() {
    let env = TestEnv::new();
    let mut rpc = env.rpc();
    let marker = unique_marker();
    rpc.send_json(&json!({"id": "1", "type": "bash", "command": marked_sleep(&marker)}));
    wait_for_process(&marker);
    rpc.send(r#"{"id": "2", "type": "bash", "command": "echo no"}"#);
    assert_eq!(
        rpc.next(LIVENESS),
        json!({
            "id": "2", "type": "response", "command": "bash", "success": false,
            "error": "A bash command is already running"
        })
    );
    rpc.send(r#"{"id": "3", "type": "abort_bash"}"#);
    assert_eq!(rpc.response("1")["data"]["cancelled"], true);
    assert_no_survivor(&marker);
    // Once it ended, the next one runs.
    rpc.send(r#"{"id": "4", "type": "bash", "command": "echo yes"}"#);
    assert_eq!(rpc.response("4")["data"]["output"], "yes\n");
}

#[test]
fn bash_right_after_bash_then_abort_is_never_lost() {
    // The abort arrives before the first command may even have started.
    let env = TestEnv::new();
    let mut rpc = env.rpc();
    let marker = unique_marker();
    rpc.send_json(&json!({"id": "1", "type": "bash", "command": marked_sleep(&marker)}));
    rpc.send(r#"{"id": "2", "type": "abort_bash"}"#);
    let response = rpc.response("1");
    assert_eq!(response["data"]["cancelled"], true, "{response}");
    assert_no_survivor(&marker);
}

fn events_of<'a>(lines: &'a [Value], call: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|line| line["toolCallId"] == call && line["type"] != "tool_execution_update")
        .collect()
}

#[test]
fn queued_tool_calls_run_in_order_and_a_queued_one_can_be_aborted() {
    let env = TestEnv::new();
    let mut rpc = env.rpc();
    let marker = unique_marker();
    let call = |id: &str, command: &str| {
        json!({"id": id, "type": "tool_call", "toolCallId": id, "name": "bash",
               "arguments": {"command": command}})
    };
    rpc.send_json(&call(
        "first",
        &format!("echo one; {}", marked_sleep(&marker)),
    ));
    wait_for_process(&marker);
    rpc.send_json(&call("second", "echo two"));
    rpc.send_json(&call("third", "echo three"));
    rpc.send(r#"{"id": "abort-2", "type": "abort", "toolCallId": "second"}"#);

    // `second` ends while `first` still runs: it was only queued.
    let lines = rpc.until(LIVENESS, |line| is_response(line, "second"));
    assert!(
        !lines
            .iter()
            .any(|line| line["toolCallId"] == "third" && line["type"] == "tool_execution_end")
    );
    let second = events_of(&lines, "second");
    assert_eq!(
        second[0],
        &json!({"type": "tool_execution_start", "toolCallId": "second", "toolName": "bash",
                "args": {"command": "echo two"}})
    );
    assert_eq!(second[1]["type"], "tool_execution_end");
    assert_eq!(second[1]["isError"], true);
    let aborted = &second[1]["result"];
    assert_eq!(aborted["isError"], true);
    let text = aborted["content"][0]["text"].as_str().expect("text");
    assert!(text.ends_with("Command aborted"), "{text:?}");
    assert!(!text.contains("two"), "a queued call never ran: {text:?}");
    assert!(
        lines.iter().any(|line| line
            == &json!({"id": "abort-2", "type": "response", "command": "abort", "success": true})),
        "{lines:#?}"
    );
    let response = lines.last().expect("response");
    assert_eq!(response["success"], true);
    assert_eq!(&response["data"], aborted);

    // Now abort the running one, and the third runs after it.
    rpc.send(r#"{"id": "abort-1", "type": "abort", "toolCallId": "first"}"#);
    let lines = rpc.until(LIVENESS, |line| is_response(line, "third"));
    assert_no_survivor(&marker);
    let updates: Vec<&Value> = lines
        .iter()
        .filter(|line| line["type"] == "tool_execution_update")
        .collect();
    let lines: Vec<&Value> = lines
        .iter()
        .filter(|line| line["type"] != "tool_execution_update")
        .collect();
    let kinds: Vec<(String, String)> = lines
        .iter()
        .map(|line| {
            (
                line["type"].as_str().unwrap_or("").to_owned(),
                line["toolCallId"]
                    .as_str()
                    .or_else(|| line["id"].as_str())
                    .unwrap_or("")
                    .to_owned(),
            )
        })
        .collect();
    let position = |kind: &str, id: &str| {
        kinds
            .iter()
            .position(|(k, i)| k == kind && i == id)
            .unwrap_or_else(|| panic!("no {kind} {id} in {kinds:?}"))
    };
    assert!(position("response", "abort-1") < position("tool_execution_end", "first"));
    assert!(position("tool_execution_end", "first") < position("response", "first"));
    assert!(position("response", "first") < position("tool_execution_end", "third"));
    let first_end = &lines[position("tool_execution_end", "first")];
    assert_eq!(first_end["isError"], true);
    let first_text = first_end["result"]["content"][0]["text"]
        .as_str()
        .expect("text");
    assert!(
        first_text.starts_with("[Command cancelled]\none\n"),
        "{first_text:?}"
    );
    assert!(first_text.ends_with("Command aborted"), "{first_text:?}");
    let third = lines.last().expect("response");
    assert_eq!(third["data"]["content"][0]["text"], "three");
    assert_eq!(third["data"]["isError"], false);
    // Every update names its call and tool, and carries a text block.
    for update in updates {
        assert_eq!(update["toolName"], "bash");
        assert_eq!(
            update["partialResult"]["content"][0]["type"], "text",
            "{update}"
        );
    }
}

#[test]
fn tool_call_errors_are_results_and_protocol_errors_are_failures() {
    let env = TestEnv::new();
    let mut rpc = env.rpc();
    rpc.send(
        r#"{"id": "x", "type": "tool_call", "toolCallId": "c", "name": "read", "arguments": {}}"#,
    );
    assert_eq!(
        rpc.next(LIVENESS),
        json!({"id": "x", "type": "response", "command": "tool_call", "success": false,
               "error": "Unknown tool `read`: the tools are `bash`, `job_output`, `job_input`, `job_kill` and `job_list`"})
    );
    rpc.send(r#"{"id": "y", "type": "abort", "toolCallId": "nope"}"#);
    assert_eq!(
        rpc.next(LIVENESS),
        json!({"id": "y", "type": "response", "command": "abort", "success": false,
               "error": "No running or queued tool call with toolCallId `nope`"})
    );
    // Bad arguments are the tool's business: an error result, not an RPC failure.
    rpc.send(r#"{"id": "z", "type": "tool_call", "toolCallId": "c", "name": "bash", "arguments": {"command": 5}}"#);
    let response = rpc.response("z");
    assert_eq!(response["success"], true);
    assert_eq!(response["data"]["isError"], true);
    // A failing command likewise.
    rpc.send(r#"{"id": "w", "type": "tool_call", "toolCallId": "c", "name": "bash", "arguments": {"command": "(exit 3)"}}"#);
    let response = rpc.response("w");
    assert_eq!(response["success"], true);
    assert_eq!(response["data"]["isError"], true);
    assert_eq!(response["data"]["details"]["exitCode"], 3);
}

#[test]
fn a_tool_call_id_in_flight_cannot_be_reused() {
    let env = TestEnv::new();
    let mut rpc = env.rpc();
    let marker = unique_marker();
    rpc.send_json(
        &json!({"id": "1", "type": "tool_call", "toolCallId": "same", "name": "bash",
                          "arguments": {"command": marked_sleep(&marker)}}),
    );
    wait_for_process(&marker);
    rpc.send(r#"{"id": "2", "type": "tool_call", "toolCallId": "same", "name": "bash", "arguments": {"command": "true"}}"#);
    assert_eq!(
        rpc.response("2"),
        json!({"id": "2", "type": "response", "command": "tool_call", "success": false,
               "error": "A tool call with toolCallId `same` is already running"})
    );
    rpc.send(r#"{"type": "abort", "toolCallId": "same"}"#);
    assert_eq!(rpc.response("1")["data"]["isError"], true);
    assert_no_survivor(&marker);
    // Once answered, the id is free again.
    rpc.send(r#"{"id": "3", "type": "tool_call", "toolCallId": "same", "name": "bash", "arguments": {"command": "echo again"}}"#);
    assert_eq!(rpc.response("3")["data"]["content"][0]["text"], "again");
}

/// Sends `line`, expects exactly `expected` back, then checks the server still answers.
fn check_bad_input(rpc: &mut crate::util::Rpc, line: &[u8], expected: &Value) {
    rpc.send_bytes(line);
    let got = rpc.next(LIVENESS);
    assert_eq!(
        &got,
        expected,
        "for input {:?}",
        String::from_utf8_lossy(&line[..line.len().min(80)])
    );
}

#[test]
fn bad_input_is_answered_and_the_server_lives_on() {
    let env = TestEnv::new();
    let mut rpc = env.rpc();
    let parse = |error: &str| json!({"type": "response", "command": "parse", "success": false, "error": error});
    let parse_with_id = |id: &str, error: &str| json!({"id": id, "type": "response", "command": "parse", "success": false, "error": error});
    // The id of a line that is not JSON is still echoed when it can be read.
    check_bad_input(
        &mut rpc,
        b"{\"id\": \"1\", \"type\": ",
        &parse_with_id(
            "1",
            "Failed to parse command: EOF while parsing a value at line 1 column 20",
        ),
    );
    check_bad_input(
        &mut rpc,
        br#"{"id": "2", "type": "launch_missiles"}"#,
        &json!({"id": "2", "type": "response", "command": "launch_missiles", "success": false,
                "error": "Unknown command type `launch_missiles` (expected one of: bash, abort_bash, tool_call, abort, read_artifact, list_artifacts, hello, ping, status, job_view, approval, secret_input, complete)"}),
    );
    check_bad_input(
        &mut rpc,
        br#"{"id": "3", "type": "bash"}"#,
        &json!({"id": "3", "type": "response", "command": "bash", "success": false,
                "error": "missing field `command` (a string)"}),
    );
    check_bad_input(
        &mut rpc,
        br#"{"id": "4", "type": "read_artifact", "artifactId": 7}"#,
        &json!({"id": "4", "type": "response", "command": "read_artifact", "success": false,
                "error": "field `artifactId` must be a string, got a number"}),
    );
    check_bad_input(
        &mut rpc,
        b"{\"id\": \"5\", \"type\": \"bash\", \"command\": \"echo \xff\xfe\"}",
        &parse_with_id(
            "5",
            "Failed to parse command: line is not valid UTF-8 (invalid byte at offset 45)",
        ),
    );
    check_bad_input(
        &mut rpc,
        b"{}",
        &parse("Failed to parse command: missing field `type`"),
    );
    check_bad_input(
        &mut rpc,
        b"42",
        &parse("Failed to parse command: expected a JSON object, got a number"),
    );
    // Blank lines are ignored: the next answer is the next request's.
    rpc.send_bytes(b"");
    rpc.send_bytes(b"   \t");
    rpc.send(r#"{"id": "ok", "type": "bash", "command": "echo alive"}"#);
    let answer = rpc.next(LIVENESS);
    assert!(is_response(&answer, "ok"), "{answer}");
    assert_eq!(answer["data"]["output"], "alive\n");
}

#[test]
fn a_line_over_32_mib_is_refused_without_killing_the_server() {
    let env = TestEnv::new();
    let mut rpc = env.rpc();
    let len: usize = 32 * 1024 * 1024 + 1;
    let mut stdin = rpc.take_stdin();
    let writer = std::thread::spawn(move || {
        // A valid-looking request padded with spaces, streamed in chunks.
        let head = br#"{"id": "big", "type": "bash", "command": "true"}"#;
        stdin.write_all(head).expect("write");
        let chunk = vec![b' '; 1 << 20];
        let mut left = len - head.len();
        while left > 0 {
            let n = left.min(chunk.len());
            stdin.write_all(&chunk[..n]).expect("write");
            left -= n;
        }
        stdin.write_all(b"\n").expect("write");
        stdin
    });
    let answer = rpc.next(LIVENESS);
    rpc.put_stdin(writer.join().expect("writer thread"));
    assert_eq!(
        answer,
        json!({"id": "big", "type": "response", "command": "parse", "success": false,
               "error": format!("Failed to parse command: line exceeds 32 MiB ({len} bytes)")})
    );
    // Exactly 32 MiB is still accepted (padding is JSON whitespace).
    let mut line = br#"{"id": "max", "type": "bash", "command": "echo fits"}"#.to_vec();
    line.resize(32 * 1024 * 1024, b' ');
    let mut stdin = rpc.take_stdin();
    let writer = std::thread::spawn(move || {
        stdin.write_all(&line).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin
    });
    let answer = rpc.response("max");
    rpc.put_stdin(writer.join().expect("writer thread"));
    assert_eq!(answer["data"]["output"], "fits\n");
}

#[test]
fn end_of_input_ends_running_commands_and_exits_zero() {
    let env = TestEnv::new();
    let mut rpc = env.rpc();
    let bash_marker = unique_marker();
    let tool_marker = unique_marker();
    rpc.send_json(&json!({"id": "b", "type": "bash", "command": marked_sleep(&bash_marker)}));
    rpc.send_json(
        &json!({"id": "t", "type": "tool_call", "toolCallId": "t", "name": "bash",
                          "arguments": {"command": marked_sleep(&tool_marker)}}),
    );
    wait_for_process(&bash_marker);
    wait_for_process(&tool_marker);
    let closed = Instant::now();
    let (status, _) = rpc.close(LIVENESS);
    assert_eq!(status.code(), Some(0));
    assert!(
        closed.elapsed() < Duration::from_secs(10),
        "took {:?}",
        closed.elapsed()
    );
    assert_no_survivor(&bash_marker);
    assert_no_survivor(&tool_marker);
}

#[test]
fn read_artifact_returns_lines_of_a_spilled_output() {
    let env = TestEnv::with_config("[output]\nmax_bytes = 100\n");
    let mut rpc = env.rpc();
    rpc.send(r#"{"id": "1", "type": "tool_call", "toolCallId": "c1", "name": "bash", "arguments": {"command": "seq 1 1000"}}"#);
    let result = rpc.response("1")["data"].clone();
    let truncation = &result["details"]["meta"]["truncation"];
    assert_eq!(truncation["truncatedBy"], "bytes");
    assert_eq!(truncation["totalLines"], 1000);
    let id = truncation["artifactId"]
        .as_str()
        .expect("spilled to an artifact")
        .to_owned();
    assert!(
        result["content"][0]["text"]
            .as_str()
            .is_some_and(|text| text.ends_with(&format!(". Full: artifact://{id}]"))),
        "{result}"
    );

    rpc.send_json(&json!({"id": "2", "type": "read_artifact", "artifactId": format!("artifact://{id}"), "offset": 10, "limit": 3}));
    let path = env.artifacts_dir().join(format!("{id}.bash.log"));
    assert_eq!(
        rpc.response("2"),
        json!({"id": "2", "type": "response", "command": "read_artifact", "success": true,
               "data": {"text": "10\n11\n12\n", "totalLines": 1000, "path": path.to_str().expect("utf-8")}})
    );
    // The whole artifact is the whole output, byte for byte.
    rpc.send_json(&json!({"id": "3", "type": "read_artifact", "artifactId": id}));
    let seq = std::process::Command::new("seq")
        .args(["1", "1000"])
        .output()
        .expect("coreutils seq");
    let expected = String::from_utf8(seq.stdout).expect("ascii");
    assert_eq!(rpc.response("3")["data"]["text"], expected);

    rpc.send(r#"{"id": "4", "type": "read_artifact", "artifactId": "artifact://abc"}"#);
    assert_eq!(
        rpc.response("4")["error"],
        "artifact:// ID must be numeric, got: abc"
    );
    rpc.send(r#"{"id": "5", "type": "read_artifact", "artifactId": "99999"}"#);
    assert_eq!(
        rpc.response("5")["error"],
        format!("Artifact 99999 not found. Available: {id}")
    );
}

/// The names in the artifact store of `env`, sorted, but for the store's own files.
fn store_listing(env: &TestEnv) -> Vec<String> {
    agentsh_test_support::artifact_store_names(&env.artifacts_dir())
}

/// Regression (issue 11): every call reserved an artifact before it ran, creating and
/// unlinking a file (and using up an id) even when its output fitted. A call whose
/// output fits creates no file; the first call that overflows gets the store's first id.
#[test]
fn calls_whose_output_fits_create_no_artifact_file() {
    let env = TestEnv::new();
    let mut rpc = env.rpc();
    for n in 0..5 {
        let id = format!("t{n}");
        rpc.send_json(
            &json!({"id": id, "type": "tool_call", "toolCallId": id, "name": "bash",
                              "arguments": {"command": "seq 1 10"}}),
        );
        let data = rpc.response(&id)["data"].clone();
        assert_eq!(data["details"]["meta"].get("truncation"), None, "{data}");
    }
    rpc.send(r#"{"id": "b", "type": "bash", "command": "seq 1 10"}"#);
    assert_eq!(rpc.response("b")["data"].get("artifactId"), None);
    assert_eq!(store_listing(&env), Vec::<String>::new());

    rpc.send(r#"{"id": "big", "type": "tool_call", "toolCallId": "big", "name": "bash", "arguments": {"command": "seq 1 100000"}}"#);
    let truncation = rpc.response("big")["data"]["details"]["meta"]["truncation"].clone();
    assert_eq!(truncation["artifactId"], "1", "{truncation}");
    rpc.send(r#"{"id": "big-bash", "type": "bash", "command": "seq 1 100000"}"#);
    assert_eq!(rpc.response("big-bash")["data"]["artifactId"], "2");
    assert_eq!(store_listing(&env), ["1.bash.log", "2.bash.log"]);
    let (status, _) = rpc.close(LIVENESS);
    assert_eq!(status.code(), Some(0));
}

#[test]
fn invalid_interceptor_rules_are_warned_about_once_at_start() {
    let env = TestEnv::with_config(
        "[bash_interceptor]\nenabled = true\n[[bash_interceptor.rules]]\npattern = \"(\"\ntool = \"read\"\nmessage = \"m\"\n",
    );
    let mut rpc = env.rpc();
    let first = rpc.next(LIVENESS);
    assert_eq!(first["type"], "warning", "{first}");
    let message = first["message"].as_str().expect("message");
    assert!(
        message.starts_with("bash_interceptor.rules[0] (pattern `(`) skipped: invalid regex"),
        "{message}"
    );
    // Not repeated after calls.
    rpc.send(r#"{"id": "1", "type": "tool_call", "toolCallId": "c", "name": "bash", "arguments": {"command": "true"}}"#);
    let lines = rpc.until(LIVENESS, |line| is_response(line, "1"));
    assert!(
        !lines.iter().any(|line| line["type"] == "warning"),
        "{lines:#?}"
    );
}

#[test]
fn rpc_cwd_sets_the_session_directory_and_must_exist() {
    let env = TestEnv::new();
    let sub = env.work_dir().join("sub");
    std::fs::create_dir(&sub).expect("mkdir");
    let config = env.config_path();
    let config = config.to_str().expect("utf-8");
    let mut rpc =
        crate::util::Rpc::spawn(env.command(&["rpc", "--config", config, "--cwd", "sub"]));
    rpc.send(r#"{"id": "1", "type": "bash", "command": "pwd"}"#);
    assert_eq!(
        rpc.response("1")["data"]["output"],
        format!("{}\n", sub.display())
    );
    rpc.send(r#"{"id": "2", "type": "tool_call", "toolCallId": "c", "name": "bash", "arguments": {"command": "pwd"}}"#);
    let result = rpc.response("2");
    assert_eq!(
        result["data"]["details"]["cwd"],
        sub.to_str().expect("utf-8")
    );

    let done = crate::util::finish(
        env.command(&["rpc", "--config", config, "--cwd", "missing"])
            .stdin(std::process::Stdio::piped()),
    );
    assert_eq!(done.code(), 2, "{done:?}");
    assert!(
        done.stderr.starts_with("agentsh: --cwd "),
        "{}",
        done.stderr
    );
    assert!(done.stderr.contains("missing"), "{}", done.stderr);
}

/// Requests from a regular file (not a pipe) are read by the blocking reader: every line is
/// answered, and the server exits 0 at the end of the file. (Only requests that need no command:
/// the end of input ends running commands.)
#[test]
fn requests_from_a_file_are_answered() {
    let env = TestEnv::new();
    let requests = env.root().join("requests.jsonl");
    std::fs::write(
        &requests,
        "{\"id\":\"1\",\"type\":\"abort_bash\"}\n\
         not json\n\
         {\"id\":\"2\",\"type\":\"read_artifact\",\"artifactId\":\"999\"}",
    )
    .expect("write requests");
    let config = env.config_path();
    let finished = crate::util::finish(
        env.command(&["rpc", "--config", config.to_str().expect("utf-8 path")])
            .stdin(std::fs::File::open(&requests).expect("open requests")),
    );
    assert_eq!(finished.status.code(), Some(0), "{finished:?}");
    let responses: Vec<Value> = finished
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object per line"))
        .filter(|line: &Value| line["type"] == "response")
        .collect();
    assert_eq!(responses.len(), 3, "{responses:?}");
    let with_id = |id: &str| {
        responses
            .iter()
            .find(|r| r["id"] == id)
            .unwrap_or_else(|| panic!("no response {id}: {responses:?}"))
    };
    assert_eq!(with_id("1")["success"], true);
    assert!(
        responses
            .iter()
            .any(|r| r["command"] == "parse" && r["success"] == false)
    );
    // The last line has no newline: it is still a request.
    assert_eq!(with_id("2")["success"], false);
    assert!(
        with_id("2")["error"]
            .as_str()
            .is_some_and(|e| e.contains("Artifact 999 not found")),
        "{responses:?}"
    );
}

/// A pipe on stdin is read without blocking while the server runs; its flags are restored at
/// the end, so whoever shares the pipe finds it as it was.
#[test]
fn stdin_flags_are_restored_when_the_server_ends() {
    use std::io::BufRead;

    let env = TestEnv::new();
    let (reader, mut writer) = std::io::pipe().expect("pipe");
    let config = env.config_path();
    let mut child = env
        .command(&["rpc", "--config", config.to_str().expect("utf-8 path")])
        .stdin(reader.try_clone().expect("dup"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn agentsh rpc");
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    writer
        .write_all(b"{\"id\":\"1\",\"type\":\"bash\",\"command\":\"echo hi\"}\n")
        .expect("write");
    let mut line = String::new();
    stdout.read_line(&mut line).expect("response");
    let response: Value = serde_json::from_str(&line).expect("JSON");
    assert_eq!(response["data"]["output"], "hi\n", "{line}");
    drop(writer);
    let status = crate::util::wait_timeout(&mut child, LIVENESS);
    assert_eq!(status.code(), Some(0));
    // Our copy shares the open file with the server's stdin.
    // SAFETY: fcntl on a descriptor we own.
    let flags = unsafe { libc::fcntl(std::os::fd::AsRawFd::as_raw_fd(&reader), libc::F_GETFL) };
    assert!(flags >= 0);
    assert_eq!(flags & libc::O_NONBLOCK, 0, "stdin left non-blocking");
}
