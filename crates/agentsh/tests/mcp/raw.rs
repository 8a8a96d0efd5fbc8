//! `agentsh mcp` driven by raw JSON-RPC lines: what no SDK sends (garbage), and the end of input
//! with jobs running, where the exit status and the processes left are the point.

use std::io::Write;
use std::time::Instant;

use serde_json::{Value, json};

use crate::util::{LIVENESS, Rpc, TestEnv, assert_no_survivor, processes_with, unique_marker};

/// Lines that are not JSON-RPC requests: not JSON, cut off, not UTF-8, JSON of the wrong shape.
const GARBAGE: [&[u8]; 5] = [
    b"this is not json",
    br#"{"jsonrpc": "2.0", "id": 3, "method": "#,
    b"\xff\xfe not utf-8 \x80",
    br#"{"foo": 1}"#,
    b"42",
];

/// Calls (each with a ping) of [`requests_written_in_pieces_are_read_whole`]: bytes were lost
/// about once in 300 such pairs on main at 144f45b (this test failed 4 runs of 5 there).
const CALLS_IN_PIECES: u64 = 1000;

/// `agentsh mcp --config <env's config>` over real pipes.
fn start(env: &TestEnv) -> Rpc {
    let config = env.config_path();
    Rpc::spawn(env.command(&["mcp", "--config", config.to_str().expect("utf-8 path")]))
}

fn request(rpc: &mut Rpc, id: &Value, method: &str, params: &Value) {
    rpc.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
}

fn is_answer(line: &Value, id: &Value) -> bool {
    line.get("method").is_none() && line.get("id") == Some(id)
}

/// Every line until (and including) the answer to `id`.
fn until_answer(rpc: &Rpc, id: &Value) -> Vec<Value> {
    rpc.until(LIVENESS, |line| is_answer(line, id))
}

/// Every line until the answers to all of `ids` came (requests may be answered in any order).
fn until_answers(rpc: &Rpc, ids: &[Value]) -> Vec<Value> {
    let mut lines = Vec::new();
    for id in ids {
        if !lines.iter().any(|line| is_answer(line, id)) {
            lines.extend(until_answer(rpc, id));
        }
    }
    lines
}

fn initialize_request(rpc: &mut Rpc) {
    request(
        rpc,
        &json!("init"),
        "initialize",
        &json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "agentsh-raw-test", "version": "0"}
        }),
    );
}

fn initialized(rpc: &mut Rpc) {
    rpc.send(r#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#);
}

fn initialize(rpc: &mut Rpc) {
    initialize_request(rpc);
    let answer = until_answer(rpc, &json!("init")).pop().expect("the answer");
    assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
    initialized(rpc);
}

/// The error responses without an id (to lines whose id could not be read: `"id": null`, as
/// JSON-RPC 2.0 writes it), each checked for the JSON-RPC error shape.
fn anonymous_errors(lines: &[Value]) -> Vec<&Value> {
    let errors: Vec<&Value> = lines
        .iter()
        .filter(|line| line.get("method").is_none() && line.get("id").is_some_and(Value::is_null))
        .collect();
    for error in &errors {
        assert_eq!(error["jsonrpc"], "2.0", "{error}");
        assert!(error["error"]["code"].is_i64(), "{error}");
        assert!(
            error["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{error}"
        );
    }
    errors
}

fn send_garbage(rpc: &mut Rpc) {
    for line in GARBAGE {
        rpc.send_bytes(line);
    }
}

#[test]
fn garbage_before_initialize_gets_json_rpc_errors_then_the_handshake_works() {
    let env = TestEnv::new();
    let mut rpc = start(&env);
    send_garbage(&mut rpc);
    initialize_request(&mut rpc);
    let lines = until_answer(&rpc, &json!("init"));
    assert_eq!(
        anonymous_errors(&lines).len(),
        GARBAGE.len(),
        "one parse or invalid-request error per garbage line: {lines:#?}"
    );
    let answer = lines.last().expect("the answer");
    assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
    initialized(&mut rpc);
    request(&mut rpc, &json!("list"), "tools/list", &json!({}));
    let list = until_answer(&rpc, &json!("list"))
        .pop()
        .expect("the answer");
    assert_eq!(
        list["result"]["tools"].as_array().map(Vec::len),
        Some(5),
        "{list}"
    );
    let (status, _) = rpc.close(LIVENESS);
    assert_eq!(status.code(), Some(0));
}

#[test]
fn garbage_and_bad_requests_in_a_session_get_errors_and_the_session_goes_on() {
    let env = TestEnv::new();
    let mut rpc = start(&env);
    initialize(&mut rpc);
    send_garbage(&mut rpc);
    request(&mut rpc, &json!(5), "no/such/method", &json!({}));
    rpc.send(r#"{"jsonrpc": "2.0", "id": 6, "method": "tools/call"}"#);
    request(
        &mut rpc,
        &json!(7),
        "tools/call",
        &json!({"name": "bash", "arguments": {}}),
    );
    // Neither a response from the client nor an unknown notification gets an answer.
    rpc.send(r#"{"jsonrpc": "2.0", "id": 99, "result": {}}"#);
    rpc.send(r#"{"jsonrpc": "2.0", "method": "notifications/no_such_thing"}"#);
    request(
        &mut rpc,
        &json!(8),
        "tools/call",
        &json!({"name": "bash", "arguments": {"command": "echo ok"}}),
    );
    request(&mut rpc, &json!(9), "ping", &json!({}));
    let lines = until_answers(&rpc, &[5, 6, 7, 8, 9].map(|id| json!(id)));

    assert_eq!(
        anonymous_errors(&lines).len(),
        GARBAGE.len(),
        "one error per garbage line: {lines:#?}"
    );
    let answer = |id: Value| {
        lines
            .iter()
            .find(|line| is_answer(line, &id))
            .unwrap_or_else(|| panic!("no answer to {id}: {lines:#?}"))
    };
    assert_eq!(answer(json!(5))["error"]["code"], -32601, "{lines:#?}");
    assert!(
        answer(json!(6))["error"]["code"].is_i64(),
        "tools/call without params"
    );
    // An argument error: a JSON-RPC error, or (MCP 2025-11-25) a tool error the model can read.
    let missing = answer(json!(7));
    assert!(
        missing["error"]["code"].is_i64() || missing["result"]["isError"] == true,
        "bash without a command: {missing}"
    );
    let ok = answer(json!(8));
    assert_eq!(
        ok["result"]["content"],
        json!([{"type": "text", "text": "ok"}]),
        "{ok}"
    );
    assert!(
        !lines.iter().any(|line| line.get("id") == Some(&json!(99))),
        "{lines:#?}"
    );
    let (status, _) = rpc.close(LIVENESS);
    assert_eq!(status.code(), Some(0));
}

/// A `sleep 300` whose own argv carries `marker`.
fn marked_sleeper(marker: &str) -> String {
    format!("bash -c 'exec -a {marker}-sleep sleep 300'")
}

#[test]
fn end_of_input_with_jobs_and_a_call_running_leaves_nothing_and_exits_0() {
    let env = TestEnv::new();
    let mut rpc = start(&env);
    initialize(&mut rpc);
    let marker = unique_marker();
    let sleeper = marked_sleeper(&marker);
    let call = |command: String, background: bool| json!({"name": "bash", "arguments": {"command": command, "run_in_background": background}});
    for id in [2, 3] {
        request(
            &mut rpc,
            &json!(id),
            "tools/call",
            &call(format!("{sleeper} & {sleeper}"), true),
        );
        let answer = until_answer(&rpc, &json!(id)).pop().expect("the answer");
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(
            text.contains("[Running in the background as job"),
            "{answer}"
        );
    }
    // And a foreground call still running when input ends.
    request(&mut rpc, &json!(4), "tools/call", &call(sleeper, false));
    let deadline = Instant::now() + LIVENESS;
    while processes_with(&marker).len() < 5 {
        assert!(Instant::now() < deadline, "the five sleepers did not start");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let (status, _) = rpc.close(LIVENESS);
    assert_eq!(status.code(), Some(0), "exit status at end of input");
    assert_no_survivor(&marker);
}

#[test]
fn end_of_input_ends_a_running_call_instead_of_waiting_for_it() {
    // Closing the client stops its work (RPC does the same): a command that would
    // create a file after 3 s never gets there.
    let env = TestEnv::new();
    let mut rpc = start(&env);
    initialize(&mut rpc);
    let marker = unique_marker();
    let done = env.work_dir().join("done");
    let command = format!(
        "{}; touch '{}'",
        marked_sleeper(&marker).replace("300", "3"),
        done.display()
    );
    request(
        &mut rpc,
        &json!(2),
        "tools/call",
        &json!({"name": "bash", "arguments": {"command": command}}),
    );
    let deadline = Instant::now() + LIVENESS;
    while processes_with(&marker).is_empty() {
        assert!(Instant::now() < deadline, "the command did not start");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let (status, _) = rpc.close(LIVENESS);
    assert_eq!(status.code(), Some(0), "exit status at end of input");
    assert_no_survivor(&marker);
    assert!(
        !done.exists(),
        "the call ran to its end after end of input instead of being ended"
    );
}

#[test]
fn requests_written_in_pieces_are_read_whole() {
    // A client may write a line in many small writes (an unbuffered `write!` of a JSON value does:
    // one per token), and the next request may arrive while a call ends. Each request must still
    // be read whole and answered: bytes lost between reads leave a request unanswered and the
    // client waiting forever.
    let env = TestEnv::new();
    let mut rpc = start(&env);
    initialize(&mut rpc);
    let mut stdin = rpc.take_stdin();
    let mut write_in_pieces = |message: Value| {
        let line = format!("{message}\n");
        for byte in line.as_bytes() {
            stdin
                .write_all(std::slice::from_ref(byte))
                .expect("write to agentsh");
        }
    };
    for id in 1..=CALLS_IN_PIECES {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": "bash", "arguments": {"command": "true"}}});
        let ping = json!({"jsonrpc": "2.0", "id": format!("ping {id}"), "method": "ping"});
        write_in_pieces(call);
        write_in_pieces(ping);
        let lines = until_answers(&rpc, &[json!(id), json!(format!("ping {id}"))]);
        let answer = lines
            .iter()
            .find(|line| is_answer(line, &json!(id)))
            .expect("the answer");
        assert_eq!(answer["result"]["isError"], false, "call {id}: {answer}");
    }
    rpc.put_stdin(stdin);
    let (status, _) = rpc.close(LIVENESS);
    assert_eq!(status.code(), Some(0));
}
