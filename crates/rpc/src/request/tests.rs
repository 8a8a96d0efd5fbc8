//! Parsing request lines: each type, bad fields, lines that are not requests.

use serde_json::json;

use super::*;
use agentsh_protocol::wire::Query;

fn ok(line: &str) -> Request {
    parse_line(line.as_bytes())
        .expect("valid request")
        .expect("not blank")
}

fn err(line: &[u8]) -> RequestError {
    parse_line(line).expect_err("invalid request")
}

/// `(id, command, error text)` of a rejected line.
fn check_err(line: &str, id: Option<Value>, command: &str, error: &str) {
    let err = err(line.as_bytes());
    assert_eq!(
        (err.id, err.command, err.error.to_string()),
        (
            id.map(RequestId::from),
            command.to_owned(),
            error.to_owned()
        ),
        "{line}"
    );
}

#[test]
fn blank_lines_are_ignored() {
    for line in ["", "   ", "\t\r"] {
        assert!(matches!(parse_line(line.as_bytes()), Ok(None)), "{line:?}");
    }
}

#[test]
fn each_request_type() {
    assert_eq!(
        ok(r#"{"id":"1","type":"bash","command":"ls","timeout":2.5}"#),
        Request {
            id: Some(json!("1").into()),
            command: Command::Bash {
                judged: false,
                approvals: None,
                stream_id: None,
                command: "ls".into(),
                timeout: Some(2.5)
            }
        }
    );
    assert_eq!(
        ok(r#"{"type":"bash","command":"ls","timeout":null,"extra":1}"#).command,
        Command::Bash {
            judged: false,
            approvals: None,
            stream_id: None,
            command: "ls".into(),
            timeout: None
        }
    );
    assert_eq!(ok(r#"{"id":7,"type":"abort_bash"}"#).id, Some(7.into()));
    assert_eq!(
        ok(r#"{"type":"tool_call","toolCallId":"c1","name":"bash","arguments":{"command":"x"},"toolNames":["read"]}"#)
            .command,
        Command::ToolCall {
            approvals: None,
            tool_call_id: "c1".into(),
            name: "bash".into(),
            arguments: json!({"command": "x"}),
            tool_names: vec!["read".into()],
        }
    );
    assert_eq!(
        ok(r#"{"type":"abort","toolCallId":"c1"}"#).command,
        Command::Abort {
            tool_call_id: "c1".into()
        }
    );
    assert_eq!(
        ok(r#"{"type":"read_artifact","artifactId":"artifact://3","offset":2,"limit":0}"#).command,
        Command::Query(Query::ReadArtifact {
            artifact_id: "artifact://3".into(),
            offset: Some(2),
            limit: Some(0)
        })
    );
    assert_eq!(
        ok(r#"{"id":"l","type":"list_artifacts"}"#).command,
        Command::Query(Query::ListArtifacts)
    );
    assert_eq!(ok(r#"{"type":"ping"}"#).command, Command::Ping);
    assert_eq!(
        ok(r#"{"type":"status"}"#).command,
        Command::Query(Query::Status)
    );
    assert_eq!(
        ok(r#"{"type":"job_view","jobId":3}"#).command,
        Command::Query(Query::JobView {
            job_id: "3".into(),
            bytes: None
        })
    );
    assert_eq!(
        ok(r#"{"type":"job_view","jobId":"12","bytes":100}"#).command,
        Command::Query(Query::JobView {
            job_id: "12".into(),
            bytes: Some(100)
        })
    );
    assert_eq!(
        ok(r#"{"type":"hello"}"#).command,
        Command::Hello {
            capabilities: None,
            protocol: None,
            settings: None
        }
    );
    assert_eq!(
        ok(r#"{"type":"hello","protocol":2,"settings":{"output":{"max_bytes":9}}}"#).command,
        Command::Hello {
            capabilities: None,
            protocol: Some(2),
            settings: Some(json!({"output": {"max_bytes": 9}}))
        }
    );
}

#[test]
fn bad_hello_fields_are_named() {
    check_err(
        r#"{"id":1,"type":"hello","protocol":"1"}"#,
        Some(json!(1)),
        "hello",
        "field `protocol` must be a whole number, got a string",
    );
    check_err(
        r#"{"type":"hello","protocol":-1}"#,
        None,
        "hello",
        "field `protocol` must be a whole number, got -1",
    );
    check_err(
        r#"{"type":"hello","settings":[]}"#,
        None,
        "hello",
        "field `settings` must be an object, got an array",
    );
}

#[test]
fn unparsable_lines() {
    check_err(
        "{not json",
        None,
        "parse",
        "Failed to parse command: key must be a string at line 1 column 2",
    );
    check_err(
        "[1]",
        None,
        "parse",
        "Failed to parse command: expected a JSON object, got an array",
    );
    check_err(
        "{}",
        None,
        "parse",
        "Failed to parse command: missing field `type`",
    );
    check_err(
        r#"{"id":"a","type":3}"#,
        Some(json!("a")),
        "parse",
        "Failed to parse command: field `type` must be a string, got a number",
    );
    assert_eq!(
        err(b"{\"type\":\"bash\",\"command\":\"\xff\"}")
            .error
            .to_string(),
        "Failed to parse command: line is not valid UTF-8 (invalid byte at offset 26)"
    );
    assert_eq!(
        parse_input_line(&InputLine::Oversized {
            bytes: 40_000_000,
            head: Vec::new()
        })
        .expect_err("too long")
        .error
        .to_string(),
        "Failed to parse command: line exceeds 32 MiB (40000000 bytes)"
    );
}

#[test]
fn the_id_of_a_line_that_is_not_a_request_is_still_echoed() {
    check_err(
        r#"{"id": "a", "type": "#,
        Some(json!("a")),
        "parse",
        "Failed to parse command: EOF while parsing a value at line 1 column 20",
    );
    check_err(
        r#"{"command": "echo \"id\": 1", "type": "#,
        None,
        "parse",
        "Failed to parse command: EOF while parsing a value at line 1 column 38",
    );
    assert_eq!(
        err(b"{\"id\":3,\"type\":\"bash\",\"command\":\"\xff\"}").id,
        Some(3.into())
    );
    let oversized = |head: &[u8]| {
        parse_input_line(&InputLine::Oversized {
            bytes: 40_000_000,
            head: head.to_vec(),
        })
        .expect_err("too long")
        .id
    };
    assert_eq!(
        oversized(br#"{"id": "big", "type": "bash""#),
        Some("big".into())
    );
    // A number that reaches the end of the kept head may go on in the part not kept.
    assert_eq!(oversized(br#"{"id": 12"#), None);
}

#[test]
fn what_json_allows_is_accepted() {
    // A lone surrogate escape reads as U+FFFD; the replacement keeps the line's length, so
    // a later error still points at the right column.
    assert_eq!(
        ok(r#"{"id":"\ud800","type":"bash","command":"echo \udc00 \ud83d\ude00"}"#),
        Request {
            id: Some("\u{FFFD}".into()),
            command: Command::Bash {
                judged: false,
                approvals: None,
                stream_id: None,
                command: "echo \u{FFFD} \u{1F600}".into(),
                timeout: None
            }
        }
    );
    check_err(
        r#"{"id":"s","type":"bash","command":"\ud800" x}"#,
        Some(json!("s")),
        "parse",
        "Failed to parse command: expected `,` or `}` at line 1 column 44",
    );
    // A number beyond f64 is the largest power of ten serde_json reads; the session clamps
    // it as a timeout.
    for (timeout, seconds) in [("1e999", 1e308), ("-1e999", -1e308)] {
        assert_eq!(
            ok(&format!(
                r#"{{"type":"bash","command":"ls","timeout":{timeout}}}"#
            ))
            .command,
            Command::Bash {
                judged: false,
                approvals: None,
                stream_id: None,
                command: "ls".into(),
                timeout: Some(seconds)
            }
        );
    }
    check_err(
        r#"{"type":"read_artifact","artifactId":"1","limit":1e999}"#,
        None,
        "read_artifact",
        "field `limit` must be a whole number of lines (0 or more), got 1e+308",
    );
}

#[test]
fn bad_fields_are_named_and_the_id_echoed() {
    check_err(
        r#"{"id":"x","type":"frobnicate"}"#,
        Some(json!("x")),
        "frobnicate",
        "Unknown command type `frobnicate` (expected one of: bash, abort_bash, tool_call, abort, read_artifact, list_artifacts, hello, ping, status, job_view, approval, secret_input, complete)",
    );
    check_err(
        r#"{"id":"x","type":"bash"}"#,
        Some(json!("x")),
        "bash",
        "missing field `command` (a string)",
    );
    check_err(
        r#"{"id":"x","type":"bash","command":1}"#,
        Some(json!("x")),
        "bash",
        "field `command` must be a string, got a number",
    );
    check_err(
        r#"{"type":"bash","command":"ls","timeout":"5"}"#,
        None,
        "bash",
        "field `timeout` must be a number, got a string",
    );
    check_err(
        r#"{"type":"tool_call","toolCallId":"c","name":"bash"}"#,
        None,
        "tool_call",
        "missing field `arguments` (an object)",
    );
    check_err(
        r#"{"type":"tool_call","toolCallId":"c","name":"bash","arguments":{},"toolNames":["a",2]}"#,
        None,
        "tool_call",
        "field `toolNames[1]` must be a string, got a number",
    );
    check_err(
        r#"{"type":"abort"}"#,
        None,
        "abort",
        "missing field `toolCallId` (a string)",
    );
    check_err(
        r#"{"type":"job_view"}"#,
        None,
        "job_view",
        "missing field `jobId` (a string or a whole number)",
    );
    check_err(
        r#"{"type":"job_view","jobId":1.5}"#,
        None,
        "job_view",
        "field `jobId` must be a string or a whole number, got a number",
    );
    check_err(
        r#"{"type":"read_artifact","artifactId":"1","offset":-1}"#,
        None,
        "read_artifact",
        "field `offset` must be a whole number of lines (0 or more), got -1",
    );
}

#[test]
fn response_names_are_the_serde_names() {
    for kind in [
        RequestType::Bash,
        RequestType::AbortBash,
        RequestType::ToolCall,
        RequestType::Abort,
        RequestType::ReadArtifact,
        RequestType::ListArtifacts,
        RequestType::Hello,
        RequestType::Ping,
        RequestType::Status,
        RequestType::JobView,
    ] {
        assert_eq!(RequestType::from_name(kind.name()), Ok(kind));
    }
}

#[test]
fn null_counts_as_absent_and_every_kind_is_named() {
    check_err(
        r#"{"type":"abort","toolCallId":null}"#,
        None,
        "abort",
        "missing field `toolCallId` (a string)",
    );
    check_err(
        r#"{"type":"tool_call","toolCallId":"c","name":"bash","arguments":[]}"#,
        None,
        "tool_call",
        "field `arguments` must be an object, got an array",
    );
    for (names, kind) in [
        ("true", "a boolean"),
        ("1.5", "a number"),
        (r#""a""#, "a string"),
        ("{}", "an object"),
    ] {
        check_err(
            &format!(
                r#"{{"type":"tool_call","toolCallId":"c","name":"bash","arguments":{{}},"toolNames":{names}}}"#
            ),
            None,
            "tool_call",
            &format!("field `toolNames` must be an array of strings, got {kind}"),
        );
    }
    check_err(
        r#"{"type":"read_artifact","artifactId":"1","limit":"3"}"#,
        None,
        "read_artifact",
        "field `limit` must be a whole number, got a string",
    );
    check_err(
        r#"{"type":"read_artifact","artifactId":"1","limit":2.5}"#,
        None,
        "read_artifact",
        "field `limit` must be a whole number of lines (0 or more), got 2.5",
    );
}

#[test]
fn a_byte_order_mark_at_the_start_of_a_line_is_ignored() {
    assert_eq!(
        parse_line(b"\xEF\xBB\xBF{\"id\":\"bom\",\"type\":\"ping\"}")
            .expect("valid request")
            .expect("not blank"),
        Request {
            id: Some("bom".into()),
            command: Command::Ping
        }
    );
    assert!(matches!(parse_line(b"\xEF\xBB\xBF"), Ok(None)));
    // Anywhere else it is no JSON; the id is still echoed.
    let inside = err(b"{\"id\":\"in\",\xEF\xBB\xBF\"type\":\"ping\"}");
    assert_eq!(inside.id, Some("in".into()));
    assert_eq!(inside.command, PARSE_COMMAND);
    let twice = err(b"\xEF\xBB\xBF\xEF\xBB\xBF{\"id\":\"two\",\"type\":\"ping\"}");
    assert_eq!(twice.command, PARSE_COMMAND);
}

/// How the response to `line` (valid or not) writes its id.
fn echoed_id(line: &str) -> Option<String> {
    parse_line(line.as_bytes())
        .map_or_else(
            |err| err.id,
            |request| request.and_then(|request| request.id),
        )
        .map(|id| serde_json::to_string(&id).expect("an id serialises"))
}

#[test]
fn a_numeric_id_is_echoed_as_it_was_written() {
    let cases = [
        (r#"{"id":1e-400,"type":"ping"}"#, "1e-400"),
        (
            r#"{"id":18446744073719551617,"type":"ping"}"#,
            "18446744073719551617",
        ),
        (r#"{"id":1e999,"type":"ping"}"#, "1e999"),
        (r#"{"id":-0,"type":"ping"}"#, "-0"),
        (r#"{"id":1.0,"type":"ping"}"#, "1.0"),
        (r#"{"id":7,"type":"ping"}"#, "7"),
        // Also when the request is refused, and from a line that is no JSON.
        (r#"{"id":1e-400,"type":"no_such_type"}"#, "1e-400"),
        (r#"{"id":1e-400,"type":"#, "1e-400"),
        // A line repaired for a lone surrogate or a huge number elsewhere.
        (
            r#"{"id":18446744073719551617,"type":"bash","command":"\ud800","timeout":1e999}"#,
            "18446744073719551617",
        ),
    ];
    for (line, written) in cases {
        assert_eq!(echoed_id(line).as_deref(), Some(written), "{line}");
    }
    let bom = "\u{FEFF}{\"id\":1e-400,\"type\":\"ping\"}";
    assert_eq!(echoed_id(bom).as_deref(), Some("1e-400"));
}
