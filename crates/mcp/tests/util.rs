//! An MCP client in JSON-RPC lines, over an in-memory pipe to [`agentsh_mcp::serve`].

use std::collections::VecDeque;
use std::sync::Arc;

use agentsh_mcp::{CancellationToken, McpOptions, Stop, ToolSpec};
use agentsh_test_support::session::{FakeSession, LIVENESS};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::task::JoinHandle;

/// The agent's other tools, as `--tools` gives them.
pub const OTHER_TOOLS: [&str; 2] = ["Read", "Edit"];

/// A stop a test asks for.
pub struct TestStop(pub CancellationToken);

impl Stop for TestStop {
    type Reason = &'static str;

    fn requested(&mut self) -> impl Future<Output = &'static str> + Send {
        let stop = self.0.clone();
        async move {
            stop.cancelled().await;
            "stopped"
        }
    }
}

/// The options the binary serves with: its tools, their real schemas, the default limit.
pub fn options() -> McpOptions {
    McpOptions {
        tools: agentsh_protocol::tool_specs(agentsh_protocol::DEFAULT_OUTPUT_MAX_BYTES)
            .into_iter()
            .map(|(name, description, input_schema)| ToolSpec {
                name: name.to_owned(),
                description,
                input_schema,
            })
            .collect(),
        tool_names: OTHER_TOOLS.map(str::to_owned).to_vec(),
        output_max_bytes: agentsh_protocol::DEFAULT_OUTPUT_MAX_BYTES,
        yield_after: Some(45.0),
    }
}

/// A client of a server that serves a [`FakeSession`].
pub struct Mcp {
    pub session: Arc<FakeSession>,
    input: Option<DuplexStream>,
    output: Lines<BufReader<DuplexStream>>,
    /// Messages read while looking for another, oldest first.
    seen: VecDeque<Value>,
    pub stop: CancellationToken,
    server: Option<JoinHandle<Option<&'static str>>>,
    next_id: u64,
}

impl Mcp {
    /// A server serving a fresh fake session; nothing said yet.
    pub fn start() -> Self {
        let session = FakeSession::new();
        let (input, server_input) = tokio::io::duplex(1 << 16);
        let (server_output, output) = tokio::io::duplex(1 << 16);
        let stop = CancellationToken::new();
        let server = tokio::spawn(agentsh_mcp::serve(
            session.handle(),
            options(),
            server_input,
            server_output,
            TestStop(stop.clone()),
        ));
        Self {
            session,
            input: Some(input),
            output: BufReader::new(output).lines(),
            seen: VecDeque::new(),
            stop,
            server: Some(server),
            next_id: 1,
        }
    }

    /// A server past the handshake, the client declaring `capabilities`.
    pub async fn initialized_with(capabilities: Value) -> Self {
        let mut mcp = Self::start();
        let result = mcp.initialize(capabilities).await;
        assert_eq!(result["serverInfo"]["name"], "agentsh", "{result}");
        mcp
    }

    /// A server past the handshake, with a client of no capabilities.
    pub async fn initialized() -> Self {
        Self::initialized_with(json!({})).await
    }

    /// `initialize` (protocol 2025-06-18) and `notifications/initialized`: the result.
    pub async fn initialize(&mut self, capabilities: Value) -> Value {
        let response = self
            .request(
                "initialize",
                json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": capabilities,
                    "clientInfo": {"name": "surface-tests", "version": "1"}
                }),
            )
            .await;
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        response["result"].clone()
    }

    /// Writes `line` and a newline.
    pub async fn send_line(&mut self, line: &str) {
        let input = self.input.as_mut().expect("input is open");
        input
            .write_all(format!("{line}\n").as_bytes())
            .await
            .expect("the server reads");
    }

    /// Writes `message` as one line.
    pub async fn send(&mut self, message: &Value) {
        self.send_line(&message.to_string()).await;
    }

    /// A fresh request id.
    pub fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Sends request `method` with `params` under `id` (no wait).
    pub async fn send_request(&mut self, id: u64, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
    }

    /// Sends request `method` with `params` and waits for its response (the whole message).
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.id();
        self.send_request(id, method, params).await;
        self.response(id).await
    }

    /// `tools/call` of `name` with `arguments`: the response.
    pub async fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
            .await
    }

    /// The next message the server writes (from those already read first).
    pub async fn next(&mut self) -> Value {
        if let Some(message) = self.seen.pop_front() {
            return message;
        }
        self.read().await
    }

    /// Reads one line from the server.
    async fn read(&mut self) -> Value {
        let line = tokio::time::timeout(LIVENESS, self.output.next_line())
            .await
            .expect("the server writes within the liveness limit")
            .expect("the pipe reads")
            .expect("the server's output is open");
        serde_json::from_str(&line).unwrap_or_else(|err| panic!("{err}: {line}"))
    }

    /// The first message (already read or next) that `wanted` picks; those passed over are
    /// kept for later.
    pub async fn find(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        if let Some(at) = self.seen.iter().position(&wanted) {
            return self.seen.remove(at).expect("found");
        }
        loop {
            let message = self.read().await;
            if wanted(&message) {
                return message;
            }
            self.seen.push_back(message);
        }
    }

    /// The response to request `id`.
    pub async fn response(&mut self, id: u64) -> Value {
        self.find(|message| message["id"] == json!(id) && message.get("method").is_none())
            .await
    }

    /// The next notification `method`.
    pub async fn notification(&mut self, method: &str) -> Value {
        self.find(|message| message["method"] == method && message.get("id").is_none())
            .await
    }

    /// The messages read but not taken yet.
    pub fn unclaimed(&self) -> Vec<Value> {
        self.seen.iter().cloned().collect()
    }

    /// Closes the server's input (end of input).
    pub fn close_input(&mut self) {
        self.input = None;
    }

    /// Waits for the server to end: what it returned.
    pub async fn finished(&mut self) -> Option<&'static str> {
        let server = self.server.take().expect("the server runs");
        tokio::time::timeout(LIVENESS, server)
            .await
            .expect("the server ends within the liveness limit")
            .expect("the server does not panic")
    }
}

/// A `tools/call` response's result, checked to be one.
pub fn result(response: &Value) -> &Value {
    assert!(response.get("error").is_none(), "an error: {response}");
    &response["result"]
}

/// The one text block of a tool result.
pub fn text(result: &Value) -> &str {
    let content = result["content"].as_array().expect("content");
    assert_eq!(content.len(), 1, "{result}");
    assert_eq!(content[0]["type"], "text", "{result}");
    content[0]["text"].as_str().expect("text")
}
