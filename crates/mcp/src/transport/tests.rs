//! The transport alone: lines in, messages for rmcp and answers out.

use rmcp::model::{EmptyResult, RequestId, ServerResult};
use tokio::io::{AsyncReadExt, DuplexStream};

use super::*;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

/// A transport reading `input` (then end of input).
struct Run {
    transport: LineTransport<DuplexStream>,
    out: DuplexStream,
    writer: JoinHandle<()>,
}

impl Run {
    async fn new(input: &[u8]) -> Self {
        let (reader, mut feed) = tokio::io::duplex(1 << 20);
        let (writer, out) = tokio::io::duplex(1 << 20);
        feed.write_all(input).await.expect("feed");
        drop(feed);
        let (transport, writer) = LineTransport::new(reader, writer, CancellationToken::new());
        Self {
            transport,
            out,
            writer,
        }
    }

    /// After `initialize` was handed on.
    async fn serving(input: &str) -> Self {
        let mut run = Self::new(format!("{INITIALIZE}\n{input}").as_bytes()).await;
        let initialize = run.receive().await.expect("the initialize request");
        assert_eq!(request_id(&initialize), RequestId::Number(0));
        run.answer(ServerJsonRpcMessage::response(
            empty(),
            RequestId::Number(0),
        ))
        .await;
        run
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        self.transport.receive().await
    }

    /// rmcp sends `message`.
    async fn answer(&mut self, message: ServerJsonRpcMessage) {
        self.transport.send(message).await.expect("sent");
    }

    /// Every message rmcp would get from here on.
    async fn rest(&mut self) -> Vec<ClientJsonRpcMessage> {
        let mut messages = Vec::new();
        while let Some(message) = self.receive().await {
            messages.push(message);
        }
        messages
    }

    /// Every line written, once the transport is gone.
    async fn written(mut self) -> Vec<String> {
        drop(self.transport);
        self.writer.await.expect("writer");
        let mut text = String::new();
        self.out.read_to_string(&mut text).await.expect("answers");
        text.lines().map(str::to_owned).collect()
    }
}

fn empty() -> ServerResult {
    ServerResult::EmptyResult(EmptyResult {})
}

fn request_id(message: &ClientJsonRpcMessage) -> RequestId {
    match message {
        ClientJsonRpcMessage::Request(request) => request.id.clone(),
        other => panic!("not a request: {other:?}"),
    }
}

fn method(message: &ClientJsonRpcMessage) -> String {
    let value = serde_json::to_value(message).expect("serialises");
    value["method"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn garbage_gets_an_error_and_the_next_message_is_read() {
    let mut run = Run::serving(
        "garbage\n\n{\"jsonrpc\":\"2.0\",\"id\":7}\n[1]\n{\"jsonrpc\":\"2.0\",\"method\":\"x/y\"}\n\u{FEFF}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n",
    )
    .await;
    let messages = run.rest().await;
    // A notification rmcp itself ignores, and the ping.
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(request_id(&messages[1]), RequestId::Number(1));
    assert_eq!(
        run.written().await[1..],
        [
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: expected value at line 1 column 1"}}"#,
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"Invalid request: a request needs a `method`"}}"#,
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: expected a JSON-RPC message (an object), got an array"}}"#,
        ]
    );
}

#[tokio::test]
async fn before_initialize_notifications_and_responses_are_dropped() {
    let mut run = Run::new(
        format!(
            "{}\n{}\n{}\n{}\n{INITIALIZE}\n{}\n",
            r#"{"jsonrpc":"2.0","method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":"r","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":"e","error":{"code":1,"message":"no"}}"#,
            r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        )
        .as_bytes(),
    )
    .await;
    let messages = run.rest().await;
    let methods: Vec<String> = messages.iter().map(method).collect();
    assert_eq!(
        methods,
        ["ping", "initialize", "notifications/initialized"],
        "{messages:?}"
    );
    assert_eq!(run.written().await, Vec::<String>::new());
}

#[tokio::test]
async fn once_serving_is_set_notifications_and_responses_go_to_rmcp() {
    let mut run = Run::new(
        concat!(
            r#"{"jsonrpc":"2.0","method":"x"}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":"r","result":{}}"#,
            "\n",
        )
        .as_bytes(),
    )
    .await;
    // The handshake ended on a first request with its own protocol version.
    run.transport.serving().store(true, Ordering::SeqCst);
    assert_eq!(run.rest().await.len(), 2);
}

#[tokio::test]
async fn an_id_in_use_by_a_running_request_is_refused_and_free_once_answered() {
    let mut run = Run::serving(concat!(
        r#"{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep 1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":"s","method":"ping"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":"t","method":"ping"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":"s","method":"ping"}"#,
        "\n",
    ))
    .await;
    let call = run.receive().await.expect("the call");
    assert_eq!(request_id(&call), RequestId::String("s".into()));
    // The ping that reuses "s" is answered here; rmcp gets the next request.
    let ping = run.receive().await.expect("a ping");
    assert_eq!(request_id(&ping), RequestId::String("t".into()));
    run.answer(ServerJsonRpcMessage::response(empty(), request_id(&call)))
        .await;
    let again = run.receive().await.expect("the ping after the call");
    assert_eq!(request_id(&again), RequestId::String("s".into()));
    assert_eq!(run.rest().await.len(), 0);
    assert_eq!(
        run.written().await[1..],
        [
            r#"{"jsonrpc":"2.0","id":"s","error":{"code":-32600,"message":"Invalid request: id \"s\" is already in use by a running request"}}"#,
            r#"{"jsonrpc":"2.0","id":"s","result":{}}"#,
        ]
    );
}

#[tokio::test]
async fn a_cancelled_request_frees_its_id() {
    let mut run = Run::serving(concat!(
        r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1.5}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
        "\n",
    ))
    .await;
    let first = run.receive().await.expect("the ping");
    let cancel = run.receive().await.expect("the cancel");
    // rmcp is told the id it knows.
    let cancel = serde_json::to_value(&cancel).expect("serialises");
    assert_eq!(
        cancel["params"]["requestId"],
        serde_json::to_value(request_id(&first)).expect("an id")
    );
    let again = run.receive().await.expect("the ping again");
    assert_ne!(request_id(&again), request_id(&first));
    run.answer(ServerJsonRpcMessage::response(empty(), request_id(&again)))
        .await;
    assert_eq!(
        run.written().await[1..],
        [r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#]
    );
}

#[tokio::test]
async fn a_number_id_is_answered_as_written() {
    let ids = [
        "1.5",
        "18446744073709551616",
        "18446744073719551617",
        "1e-400",
        "1e999",
        "1.0",
        "-0",
        "7",
        "\"7\"",
    ];
    let input = ids
        .iter()
        .map(|id| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}\n"))
        .collect::<Vec<_>>()
        .concat();
    let mut run = Run::serving(&input).await;
    for message in run.rest().await {
        run.answer(ServerJsonRpcMessage::response(
            empty(),
            request_id(&message),
        ))
        .await;
    }
    let expected: Vec<String> = ids
        .iter()
        .map(|id| format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}"))
        .collect();
    assert_eq!(run.written().await[1..], expected);
}

#[tokio::test]
async fn an_id_that_is_no_string_or_number_gets_an_error_with_a_null_id() {
    let mut run = Run::serving(concat!(
        r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#,
        "\n",
    ))
    .await;
    assert_eq!(run.rest().await.len(), 0);
    let error = |kind: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":-32600,"message":"Invalid request: the id must be a string or a number, got {kind}"}}}}"#
        )
    };
    assert_eq!(
        run.written().await[1..],
        [
            error("a boolean"),
            error("an object"),
            error("null"),
            error("an array"),
        ]
    );
}

#[tokio::test]
async fn what_json_allows_is_read_as_rpc_mode_reads_it() {
    let mut run = Run::serving(concat!(
        r#"{"jsonrpc":"2.0","id":"u","method":"tools/call","params":{"name":"bash","arguments":{"command":"echo \ud800","timeout":1e999}}}"#,
        "\n",
    ))
    .await;
    let call = run.receive().await.expect("the call");
    let call = serde_json::to_value(&call).expect("serialises");
    assert_eq!(call["id"], "u");
    assert_eq!(
        call["params"]["arguments"],
        serde_json::json!({"command": "echo \u{FFFD}", "timeout": 1e308})
    );
}

#[tokio::test]
async fn a_bad_request_with_a_number_id_is_answered_with_it_as_written() {
    let mut run = Run::serving(concat!(
        r#"{"jsonrpc":"2.0","id":1e-400,"method":5}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":1e-400,"method":"ping"}"#,
        "\n",
    ))
    .await;
    // The refused request does not hold its id.
    let ping = run.receive().await.expect("the ping");
    run.answer(ServerJsonRpcMessage::response(empty(), request_id(&ping)))
        .await;
    let written = run.written().await;
    assert!(
        written[1].starts_with(r#"{"jsonrpc":"2.0","id":1e-400,"error":{"code":-32600,"#),
        "{written:?}"
    );
    assert_eq!(written[2], r#"{"jsonrpc":"2.0","id":1e-400,"result":{}}"#);
}

#[tokio::test]
async fn an_error_of_rmcp_without_an_id_gets_a_null_id() {
    let mut run = Run::new(b"").await;
    run.answer(ServerJsonRpcMessage::error(
        ErrorData::invalid_request("no".to_owned(), None),
        None,
    ))
    .await;
    assert_eq!(
        run.written().await,
        [r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no"}}"#]
    );
}
