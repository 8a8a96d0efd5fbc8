//! The stdio transport of `agentsh mcp`: newline-delimited JSON-RPC on stdin and stdout, with
//! an answer for every line that is not a message (bad requests are JSON-RPC errors, the
//! server survives any input).
//!
//! rmcp's own stdio transport drops unparsable lines without a word (to avoid error storms
//! with a peer that echoes garbage back); a person or a broken client writing to agentsh gets
//! `-32700 Parse error` (id null) instead, as JSON-RPC 2.0 asks, and `-32600 Invalid request`
//! with the request's id for JSON that is no MCP message. A notification that is no MCP
//! notification is ignored (a notification gets no answer). Lines are bounded (32 MiB, as RPC
//! mode's): a longer one is discarded with a parse error.
//!
//! Everything written to stdout goes through one writer task, so error answers never interleave
//! with rmcp's messages.

use std::future::Future;
use std::io;

use agentsh_seam::{AsyncLineReader, InputLine, MAX_REQUEST_LINE_BYTES};
use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ErrorData, RequestId, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Newline-delimited JSON-RPC over a reader and a writer.
pub struct LineTransport<R> {
    /// The lines (at most as long as RPC mode's). What was read of a line is kept across
    /// calls: rmcp drops a pending `receive` when it has something else to do, and what it
    /// read of a line must still be there next time.
    lines: AsyncLineReader<BufReader<R>>,
    out: mpsc::UnboundedSender<Vec<u8>>,
    /// Cancelled at end of input: the server ends what is still running.
    ended: CancellationToken,
}

impl<R: AsyncRead + Unpin + Send> LineTransport<R> {
    /// The transport, and the writer task that owns `writer` (it ends, flushed, once the
    /// transport is dropped).
    pub fn new<W>(reader: R, writer: W, ended: CancellationToken) -> (Self, JoinHandle<()>)
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (out, mut lines) = mpsc::unbounded_channel::<Vec<u8>>();
        let task = tokio::spawn(async move {
            let mut writer = writer;
            while let Some(line) = lines.recv().await {
                if writer.write_all(&line).await.is_err() || writer.flush().await.is_err() {
                    // The client is gone: nothing more can be said.
                    return;
                }
            }
        });
        (
            Self {
                lines: AsyncLineReader::new(BufReader::new(reader), MAX_REQUEST_LINE_BYTES),
                out,
                ended,
            },
            task,
        )
    }

    fn answer(&self, message: &ServerJsonRpcMessage) {
        if let Ok(mut line) = serde_json::to_vec(message) {
            line.push(b'\n');
            let _ = self.out.send(line);
        }
    }

    /// `-32700 Parse error` with `"id": null`, as JSON-RPC 2.0 writes it (rmcp's error type
    /// leaves a missing id out).
    fn parse_error(&self, message: &str) {
        let answer = serde_json::json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": ErrorData::parse_error(message.to_owned(), None),
        });
        if let Ok(mut line) = serde_json::to_vec(&answer) {
            line.push(b'\n');
            let _ = self.out.send(line);
        }
    }
}

/// The id of a request that could be read as JSON but is no message.
fn request_id(value: &Value) -> Option<RequestId> {
    serde_json::from_value(value.get("id")?.clone()).ok()
}

impl<R: AsyncRead + Unpin + Send + 'static> Transport<RoleServer> for LineTransport<R> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let line = serde_json::to_vec(&item).map(|mut line| {
            line.push(b'\n');
            line
        });
        let out = self.out.clone();
        async move {
            let line = line.map_err(io::Error::other)?;
            out.send(line)
                .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "stdout is closed"))
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            let taken = match self.lines.next_line().await {
                Ok(Some(InputLine::Complete(line))) => line,
                Ok(Some(InputLine::Oversized { bytes, .. })) => {
                    self.parse_error(&format!(
                        "Parse error: a line of {bytes} bytes, over the {MAX_REQUEST_LINE_BYTES}-byte limit"
                    ));
                    continue;
                }
                // End of input, or it cannot be read.
                Ok(None) | Err(_) => {
                    self.ended.cancel();
                    return None;
                }
            };
            let mut line = taken.as_slice();
            line = line.strip_suffix(b"\r").unwrap_or(line);
            line = line.strip_prefix(UTF8_BOM).unwrap_or(line);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let error = match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
                Ok(message) => return Some(message),
                Err(err) => err,
            };
            match serde_json::from_slice::<Value>(line) {
                Err(_) => self.parse_error(&format!("Parse error: {error}")),
                // A notification gets no answer, a bad one included.
                Ok(value) if value.get("id").is_none() && value.get("method").is_some() => {
                    tracing::debug!("ignoring a notification that is no MCP message: {error}");
                }
                Ok(value) => self.answer(&ServerJsonRpcMessage::error(
                    ErrorData::invalid_request(format!("Invalid request: {error}"), None),
                    request_id(&value),
                )),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn answers_to(input: &'static [u8]) -> (Vec<ClientJsonRpcMessage>, String) {
        let (reader, mut feed) = tokio::io::duplex(1 << 16);
        let (writer, mut out) = tokio::io::duplex(1 << 16);
        feed.write_all(input).await.expect("feed");
        drop(feed);
        let (mut transport, task) = LineTransport::new(reader, writer, CancellationToken::new());
        let mut messages = Vec::new();
        while let Some(message) = transport.receive().await {
            messages.push(message);
        }
        drop(transport);
        task.await.expect("writer");
        let mut text = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut out, &mut text)
            .await
            .expect("answers");
        (messages, text)
    }

    #[tokio::test]
    async fn garbage_gets_an_error_and_the_next_message_is_read() {
        let (messages, answers) = answers_to(
            b"garbage\n\n{\"jsonrpc\":\"2.0\",\"id\":7}\n{\"jsonrpc\":\"2.0\",\"method\":\"x/y\"}\n\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n",
        )
        .await;
        // The ping, and a notification rmcp itself ignores.
        assert_eq!(messages.len(), 2, "{answers}");
        let lines: Vec<Value> = answers
            .lines()
            .map(|line| serde_json::from_str(line).expect("JSON answers"))
            .collect();
        assert_eq!(lines.len(), 2, "{answers}");
        assert_eq!(lines[0]["error"]["code"], -32700);
        assert_eq!(lines[0].get("id"), Some(&Value::Null));
        assert_eq!(lines[1]["error"]["code"], -32600);
        assert_eq!(lines[1]["id"], 7);
    }
}
