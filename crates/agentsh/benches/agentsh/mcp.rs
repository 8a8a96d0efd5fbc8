//! The `mcp` group: an MCP `tools/call` of `bash` `true` through `agentsh mcp`, driven by raw
//! JSON-RPC lines (no SDK in the timing), against `agentsh rpc`'s `bash` `true` round trip in the
//! same run (goal ≤ 1.2×: the MCP layer adds little to the executor's round trip).

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{
    AGENTSH, Env, Paired, RPC_BLOCK, RPC_CALLS, RpcServer, WARM_UP_CALLS, end_at_eof, paired,
    spawn_piped,
};

/// An `agentsh mcp` server after the handshake, answering `tools/call` requests one at a time.
pub(crate) struct McpServer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
    next_id: u64,
}

impl McpServer {
    /// Starts `agentsh mcp`, initializes the session and warms it up (the first call starts the
    /// shell).
    pub(crate) fn start(env: &Env, binary: &Path) -> Self {
        let (child, stdin, stdout) = spawn_piped(env.binary(binary, &["mcp"]));
        let mut server = Self {
            child,
            stdin,
            stdout,
            line: String::new(),
            next_id: 0,
        };
        let init = server.request(
            "initialize",
            &json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "agentsh-bench", "version": "0"}
            }),
        );
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        server
            .stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .expect("write");
        for _ in 0..WARM_UP_CALLS {
            server.call();
        }
        server
    }

    /// Sends one request and reads lines until its response (notifications are skipped).
    fn request(&mut self, method: &str, params: &Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        // One write per line, as a client does (and as the RPC driver's few writes come close to).
        let mut request =
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
        request.push('\n');
        self.stdin.write_all(request.as_bytes()).expect("write");
        loop {
            self.line.clear();
            assert!(
                self.stdout.read_line(&mut self.line).expect("read") > 0,
                "agentsh mcp ended"
            );
            let message: Value = serde_json::from_str(&self.line).expect("a JSON-RPC line");
            if message.get("method").is_none() && message["id"] == id {
                return message;
            }
        }
    }

    /// One `bash` `true` tool call, timed.
    pub(crate) fn call(&mut self) -> Duration {
        let start = Instant::now();
        let response = self.request(
            "tools/call",
            &json!({"name": "bash", "arguments": {"command": "true"}}),
        );
        let elapsed = start.elapsed();
        assert_eq!(response["result"]["isError"], false, "{response}");
        elapsed
    }

    pub(crate) fn stop(self) {
        let Self { child, stdin, .. } = self;
        end_at_eof(child, stdin);
    }
}

/// The MCP round trip against the RPC one, sampled alternately in blocks.
pub(crate) fn round_trip(env: &Env) -> Paired {
    let mut mcp = McpServer::start(env, Path::new(AGENTSH));
    let mut rpc = RpcServer::start(env, Path::new(AGENTSH));
    let timings = paired(RPC_CALLS, RPC_BLOCK, || mcp.call(), || rpc.call());
    mcp.stop();
    rpc.stop();
    timings
}

/// The MCP `bash` round trip against the same tool over RPC (`tool_call`, the same work: the
/// tool path with normalisation, interception and the tool result).
pub(crate) fn round_trip_vs_tool_call(env: &Env) -> Paired {
    let mut mcp = McpServer::start(env, Path::new(AGENTSH));
    let mut rpc = RpcServer::start(env, Path::new(AGENTSH));
    let timings = paired(RPC_CALLS, RPC_BLOCK, || mcp.call(), || rpc.tool_true());
    mcp.stop();
    rpc.stop();
    timings
}
