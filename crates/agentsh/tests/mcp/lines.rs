//! Lines black-box fuzzing found `agentsh mcp` reading wrong, each checked on the real binary
//! over raw JSON-RPC lines: the exact answer (ids byte for byte, as a JSON value would not
//! show them), then that the server still answers and exits 0 at end of input.

use serde_json::Value;

use crate::util::{LIVENESS, Rpc, TestEnv};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"agentsh-lines-test","version":"0"}}}"#;

/// `agentsh mcp --config <env's config>` over real pipes.
fn start(env: &TestEnv) -> Rpc {
    let config = env.config_path();
    Rpc::spawn(env.command(&["mcp", "--config", config.to_str().expect("utf-8 path")]))
}

/// The next line that is the answer to `id` (written as JSON text: `"s"`, `1e-400`), as
/// written; lines before it (notifications) are skipped.
fn answer_text(rpc: &Rpc, id: &str) -> String {
    let marker = format!(r#"{{"jsonrpc":"2.0","id":{id},"#);
    loop {
        let line = rpc.next_text(LIVENESS);
        if line.starts_with(&marker) {
            return line;
        }
        assert!(
            line.contains(r#""method":"#),
            "an answer other than to {id}: {line}"
        );
    }
}

fn parsed(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|err| panic!("not JSON ({err}): {line}"))
}

fn initialize(rpc: &mut Rpc) {
    rpc.send(INITIALIZE);
    let answer = parsed(&answer_text(rpc, r#""init""#));
    assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
    rpc.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
}

/// A later request is answered, and end of input ends the server with status 0.
fn still_serving_then_exits_0(mut rpc: Rpc) {
    rpc.send(r#"{"jsonrpc":"2.0","id":"after","method":"ping"}"#);
    assert_eq!(
        answer_text(&rpc, r#""after""#),
        r#"{"jsonrpc":"2.0","id":"after","result":{}}"#
    );
    let (status, _) = rpc.close(LIVENESS);
    assert_eq!(status.code(), Some(0), "exit status at end of input");
}

/// The text of a `tools/call` answer's one content block.
fn call_text(answer: &Value) -> &str {
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {answer}"))
}

#[test]
fn notifications_and_responses_before_initialize_are_ignored() {
    // The server exited (status 0, one WARN line) at either.
    let env = TestEnv::new();
    let mut rpc = start(&env);
    rpc.send(r#"{"jsonrpc":"2.0","method":"x"}"#);
    rpc.send(r#"{"jsonrpc":"2.0","id":"r","result":{}}"#);
    // Nothing answers them: the next line is the ping's.
    rpc.send(r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#);
    assert_eq!(
        rpc.next_text(LIVENESS),
        r#"{"jsonrpc":"2.0","id":"p","result":{}}"#
    );
    // Another early request gets an error with its id (rmcp's: without `initialize` it needs
    // the protocol version in `_meta`), and the server goes on.
    rpc.send(r#"{"jsonrpc":"2.0","id":"e","method":"tools/list"}"#);
    assert_eq!(
        rpc.next_text(LIVENESS),
        r#"{"jsonrpc":"2.0","id":"e","error":{"code":-32602,"message":"request _meta is missing or has malformed required fields: io.modelcontextprotocol/protocolVersion, io.modelcontextprotocol/clientCapabilities"}}"#
    );
    initialize(&mut rpc);
    rpc.send(r#"{"jsonrpc":"2.0","id":"list","method":"tools/list"}"#);
    let list = parsed(&answer_text(&rpc, r#""list""#));
    assert_eq!(
        list["result"]["tools"].as_array().map(Vec::len),
        Some(5),
        "{list}"
    );
    // After it, as before, they get no answer.
    rpc.send(r#"{"jsonrpc":"2.0","method":"x"}"#);
    rpc.send(r#"{"jsonrpc":"2.0","id":"r","result":{}}"#);
    still_serving_then_exits_0(rpc);
}

#[test]
fn a_request_reusing_the_id_of_a_running_one_gets_an_error_of_its_own() {
    // One of the two answers was lost (the call's).
    let env = TestEnv::new();
    let mut rpc = start(&env);
    initialize(&mut rpc);
    // The call runs until the test opens the gate, after the ping's answer.
    let gate = env.root().join("gate");
    let command = format!(
        "until [ -e {} ]; do sleep 0.05; done; echo slept",
        gate.display()
    );
    rpc.send_json(
        &serde_json::json!({"jsonrpc": "2.0", "id": "s", "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": command}}}),
    );
    rpc.send(r#"{"jsonrpc":"2.0","id":"s","method":"ping"}"#);
    assert_eq!(
        answer_text(&rpc, r#""s""#),
        r#"{"jsonrpc":"2.0","id":"s","error":{"code":-32600,"message":"Invalid request: id \"s\" is already in use by a running request"}}"#
    );
    std::fs::write(&gate, "").expect("open the gate");
    let call = parsed(&answer_text(&rpc, r#""s""#));
    assert_eq!(call_text(&call), "slept", "{call}");
    // Answered, the id is free again.
    rpc.send(r#"{"jsonrpc":"2.0","id":"s","method":"ping"}"#);
    assert_eq!(
        answer_text(&rpc, r#""s""#),
        r#"{"jsonrpc":"2.0","id":"s","result":{}}"#
    );
    still_serving_then_exits_0(rpc);
}

#[test]
fn params_with_a_lone_surrogate_or_1e999_are_read_as_rpc_mode_reads_them() {
    // Both were parse errors with `"id": null`, though the id was readable.
    let env = TestEnv::new();
    let mut rpc = start(&env);
    initialize(&mut rpc);
    rpc.send(r#"{"jsonrpc":"2.0","id":"u","method":"tools/call","params":{"name":"bash","arguments":{"command":"echo \ud800"}}}"#);
    let surrogate = parsed(&answer_text(&rpc, r#""u""#));
    assert_eq!(call_text(&surrogate), "\u{FFFD}", "{surrogate}");
    rpc.send(r#"{"jsonrpc":"2.0","id":"n","method":"tools/call","params":{"name":"bash","arguments":{"command":"echo huge","timeout":1e999}}}"#);
    let huge = parsed(&answer_text(&rpc, r#""n""#));
    assert_eq!(call_text(&huge), "huge", "{huge}");
    still_serving_then_exits_0(rpc);
}

#[test]
fn ids_rmcp_cannot_hold_are_echoed_as_written_or_answered_with_a_null_id() {
    // Numbers were refused, and every refusal had no `id` member at all.
    let env = TestEnv::new();
    let mut rpc = start(&env);
    initialize(&mut rpc);
    for id in [
        "1.5",
        "18446744073709551616",
        "18446744073719551617",
        "1e-400",
    ] {
        rpc.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
        assert_eq!(
            answer_text(&rpc, id),
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#)
        );
    }
    // A call under such an id runs as any other.
    rpc.send(r#"{"jsonrpc":"2.0","id":1e-400,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo held"}}}"#);
    let call = parsed(&answer_text(&rpc, "1e-400"));
    assert_eq!(call_text(&call), "held", "{call}");
    for (id, kind) in [("true", "a boolean"), (r#"{"a":1}"#, "an object")] {
        rpc.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
        assert_eq!(
            answer_text(&rpc, "null"),
            format!(
                r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32600,"message":"Invalid request: the id must be a string or a number, got {kind}"}}}}"#
            )
        );
    }
    still_serving_then_exits_0(rpc);
}
