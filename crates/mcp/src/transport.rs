//! The stdio transport of `agentsh mcp`: newline-delimited JSON-RPC on stdin and stdout, with
//! an answer for every request line, whatever it holds (bad requests are JSON-RPC errors, the
//! server survives any input).
//!
//! rmcp's own stdio transport drops unparsable lines without a word (to avoid error storms
//! with a peer that echoes garbage back); a person or a broken client writing to agentsh gets
//! `-32700 Parse error` (`"id": null`) instead, as JSON-RPC 2.0 asks, and `-32600 Invalid
//! request` for JSON that is no MCP message (with the request's id as written, or `null` when
//! there is none to read). Notifications and responses get no answer, a bad one included.
//! Lines are bounded (32 MiB, as RPC mode's): a longer one is discarded with a parse error.
//!
//! What else stands between the client and rmcp:
//!
//! - the lenient reading RPC mode has (`agentsh-jsonl`): a byte-order mark at the start
//!   of a line is dropped, a lone surrogate escape reads as U+FFFD, a number beyond `f64`
//!   clamps;
//! - request ids ([`crate::ids`]): a number rmcp cannot hold as written travels as a stand-in
//!   and is answered as written; an id still in use by a running request is refused;
//! - the handshake: rmcp ends the session when a notification or a response comes before
//!   `initialize`, so those are dropped until then (as they are ignored after it). Requests
//!   go through: rmcp answers a `ping`, and another request with an error, and serves on.
//!
//! Everything written to stdout goes through one writer task, so error answers never interleave
//! with rmcp's messages.

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use agentsh_jsonl::{
    AsyncLineReader, InputLine, MAX_REQUEST_LINE_BYTES, is_blank, repair, strip_bom,
};
use agentsh_protocol::json_kind;
use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ErrorData, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::ids::{RequestIds, WrittenId};

/// Newline-delimited JSON-RPC over a reader and a writer.
pub struct LineTransport<R> {
    /// The lines (at most as long as RPC mode's). What was read of a line is kept across
    /// calls: rmcp drops a pending `receive` when it has something else to do, and what it
    /// read of a line must still be there next time.
    lines: AsyncLineReader<BufReader<R>>,
    out: mpsc::UnboundedSender<Vec<u8>>,
    /// Cancelled at end of input: the server ends what is still running.
    ended: CancellationToken,
    /// The client's requests that rmcp has not answered yet.
    ids: RequestIds,
    /// Whether rmcp serves the session (past `initialize`): until then, a notification or a
    /// response would end it.
    serving: Arc<AtomicBool>,
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
                ids: RequestIds::default(),
                serving: Arc::default(),
            },
            task,
        )
    }

    /// Set once rmcp serves the session. The transport sets it when it hands rmcp an
    /// `initialize`; the one who started rmcp sets it too once the handshake returned (rmcp
    /// also starts serving on a first request that carries its protocol version itself).
    pub fn serving(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.serving)
    }

    fn is_serving(&self) -> bool {
        self.serving.load(Ordering::SeqCst)
    }

    /// Writes a JSON-RPC error answer with `id` (its JSON text as the client wrote it; `None`:
    /// `"id": null`).
    fn error(&self, id: Option<&str>, error: ErrorData) {
        let id = id.and_then(|id| RawValue::from_string(id.to_owned()).ok());
        let mut body = Map::new();
        if let Ok(error) = serde_json::to_value(error) {
            body.insert("error".to_owned(), error);
        }
        if let Some(line) = answer_line(id.as_deref(), body) {
            let _ = self.out.send(line);
        }
    }

    /// `-32700 Parse error`, `"id": null`.
    fn parse_error(&self, message: &str) {
        self.error(None, ErrorData::parse_error(message.to_owned(), None));
    }

    /// `-32600 Invalid request`, with `id` (its JSON text) or `"id": null`.
    fn invalid_request(&self, id: Option<&str>, message: &str) {
        self.error(
            id,
            ErrorData::invalid_request(format!("Invalid request: {message}"), None),
        );
    }

    /// Reads one line (without its `\n`): a message for rmcp, or `None` when there is
    /// nothing for rmcp (the line was answered here, ignored, or blank).
    fn read_line(&mut self, line: &[u8]) -> Option<ClientJsonRpcMessage> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let line = strip_bom(line);
        if is_blank(line) {
            return None;
        }
        let text = match std::str::from_utf8(line) {
            Ok(text) => text,
            Err(err) => {
                self.parse_error(&format!(
                    "Parse error: the line is not valid UTF-8 (invalid byte at offset {})",
                    err.valid_up_to()
                ));
                return None;
            }
        };
        let value = match parse_leniently(text) {
            Ok(value) => value,
            Err(err) => {
                self.parse_error(&format!("Parse error: {err}"));
                return None;
            }
        };
        let Value::Object(mut object) = value else {
            self.invalid_request(
                None,
                &format!(
                    "expected a JSON-RPC message (an object), got {}",
                    json_kind(&value)
                ),
            );
            return None;
        };
        match (object.contains_key("method"), object.remove("id")) {
            (true, None) => self.notification(object),
            (true, Some(id)) => self.request(text, object, &id),
            (false, id) if object.contains_key("result") || object.contains_key("error") => {
                self.response(object, id)
            }
            (false, id) => {
                let written = id.as_ref().and_then(|id| written_id(text, id));
                self.invalid_request(
                    written.as_ref().map(WrittenId::json).as_deref(),
                    "a request needs a `method`",
                );
                None
            }
        }
    }

    /// A notification: handed on once rmcp serves (a `notifications/cancelled` of a request
    /// ends it here too); dropped before, and when it is no MCP notification.
    fn notification(&mut self, mut object: Map<String, Value>) -> Option<ClientJsonRpcMessage> {
        if !self.is_serving() {
            tracing::debug!("dropping a notification before `initialize`");
            return None;
        }
        if object.get("method").and_then(Value::as_str) == Some("notifications/cancelled")
            && let Some(request_id) = object
                .get_mut("params")
                .and_then(|params| params.get_mut("requestId"))
            && let Some(held) = self.ids.cancelled(request_id)
            && let Ok(held) = serde_json::to_value(held)
        {
            *request_id = held;
        }
        match serde_json::from_value(Value::Object(object)) {
            Ok(message) => Some(message),
            Err(err) => {
                tracing::debug!("ignoring a notification that is no MCP message: {err}");
                None
            }
        }
    }

    /// A request: handed on under the id rmcp holds, or answered here (a bad id, an id in
    /// use, no MCP request).
    fn request(
        &mut self,
        text: &str,
        mut object: Map<String, Value>,
        id: &Value,
    ) -> Option<ClientJsonRpcMessage> {
        let Some(written) = written_id(text, id) else {
            self.invalid_request(
                None,
                &format!("the id must be a string or a number, got {}", json_kind(id)),
            );
            return None;
        };
        let written_json = written.json();
        let Ok(held) = self.ids.admit(written) else {
            self.invalid_request(
                Some(&written_json),
                &format!("id {written_json} is already in use by a running request"),
            );
            return None;
        };
        let held_json = serde_json::to_value(&held).unwrap_or(Value::Null);
        object.insert("id".to_owned(), held_json);
        match serde_json::from_value::<ClientJsonRpcMessage>(Value::Object(object)) {
            Ok(message) => {
                if let ClientJsonRpcMessage::Request(request) = &message
                    && matches!(request.request, ClientRequest::InitializeRequest(_))
                {
                    // rmcp's handshake ends with this request, whatever comes of it.
                    self.serving.store(true, Ordering::SeqCst);
                }
                Some(message)
            }
            Err(err) => {
                self.ids.answered(&held);
                self.invalid_request(Some(&written_json), &err.to_string());
                None
            }
        }
    }

    /// A response to one of the server's requests: handed on once rmcp serves; never
    /// answered.
    fn response(
        &self,
        mut object: Map<String, Value>,
        id: Option<Value>,
    ) -> Option<ClientJsonRpcMessage> {
        if !self.is_serving() {
            tracing::debug!("dropping a response before `initialize`");
            return None;
        }
        if let Some(id) = id {
            object.insert("id".to_owned(), id);
        }
        match serde_json::from_value(Value::Object(object)) {
            Ok(message) => Some(message),
            Err(err) => {
                tracing::debug!("ignoring a response that is no MCP message: {err}");
                None
            }
        }
    }
}

/// `text` as JSON, read as JSON allows (a lone surrogate escape, a number beyond `f64`).
fn parse_leniently(text: &str) -> Result<Value, serde_json::Error> {
    serde_json::from_str(text).or_else(|err| match repair(text) {
        Some(repaired) => serde_json::from_str(&repaired),
        None => Err(err),
    })
}

/// The request id `id` of the line `text`, as the client wrote it.
fn written_id(text: &str, id: &Value) -> Option<WrittenId> {
    let written = agentsh_jsonl::written_id(text, id.clone());
    WrittenId::read(id, &written.to_json())
}

/// The line of an answer with `id` (`None`: `null`) and the members of `body`, in JSON-RPC's
/// order (`jsonrpc`, `id`, then `result` or `error`).
fn answer_line(id: Option<&RawValue>, body: Map<String, Value>) -> Option<Vec<u8>> {
    #[derive(Serialize)]
    struct Answer<'a> {
        jsonrpc: &'static str,
        id: Option<&'a RawValue>,
        #[serde(flatten)]
        body: Map<String, Value>,
    }
    let mut line = serde_json::to_vec(&Answer {
        jsonrpc: "2.0",
        id,
        body,
    })
    .ok()?;
    line.push(b'\n');
    Some(line)
}

/// The line of `message`, rmcp's: an answer to a stand-in is written with the client's number,
/// an error without an id with `"id": null`.
fn message_line(
    message: &ServerJsonRpcMessage,
    written: Option<&RawValue>,
) -> serde_json::Result<Vec<u8>> {
    let anonymous = matches!(message, ServerJsonRpcMessage::Error(error) if error.id.is_none());
    if written.is_none() && !anonymous {
        let mut line = serde_json::to_vec(message)?;
        line.push(b'\n');
        return Ok(line);
    }
    let mut body = match serde_json::to_value(message)? {
        Value::Object(body) => body,
        _ => Map::new(),
    };
    body.remove("jsonrpc");
    body.remove("id");
    answer_line(written, body).ok_or_else(|| serde::ser::Error::custom("an answer line"))
}

impl<R: AsyncRead + Unpin + Send + 'static> Transport<RoleServer> for LineTransport<R> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        // Bookkeeping now, when rmcp hands the answer over: the id is free for the next
        // request the client sends once it has read this answer.
        let answered = match &item {
            ServerJsonRpcMessage::Response(response) => Some(&response.id),
            ServerJsonRpcMessage::Error(error) => error.id.as_ref(),
            _ => None,
        };
        let written = answered.and_then(|id| self.ids.answered(id));
        let line = message_line(&item, written.as_deref());
        let out = self.out.clone();
        async move {
            let line = line.map_err(io::Error::other)?;
            out.send(line)
                .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "stdout is closed"))
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            let line = match self.lines.next_line().await {
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
            if let Some(message) = self.read_line(&line) {
                return Some(message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests;
