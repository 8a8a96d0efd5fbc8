//! What the server writes: responses and events, one JSON object per line, through one writer
//! thread that owns stdout so lines never interleave.

use std::io::{self, Write};
use std::thread::JoinHandle;

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::mpsc;

/// One line of output.
#[derive(Debug, Clone, Serialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum Message {
    /// The answer to a request: `{"id"?, "type": "response", "command", "success", "data"?, "error"?}`.
    Response {
        /// The request's `id`, when it could be read.
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<Value>,
        /// The request type, or `parse`.
        command: String,
        /// Whether the request was carried out.
        success: bool,
        /// The result, for requests that have one (already serialised).
        #[serde(skip_serializing_if = "Option::is_none")]
        data: Option<Box<RawValue>>,
        /// Why the request failed.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// A tool call started.
    ToolExecutionStart {
        /// The call.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The call's arguments, as given.
        args: Value,
    },
    /// A live snapshot of a running tool call's output.
    ToolExecutionUpdate {
        /// The call.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// `{"content": [{"type": "text", "text": …}]}`.
        partial_result: PartialResult,
    },
    /// A tool call ended (also when it was aborted).
    ToolExecutionEnd {
        /// The call.
        tool_call_id: String,
        /// The tool.
        tool_name: String,
        /// The tool result (SPEC §9, already serialised).
        result: Box<RawValue>,
        /// The result's `isError`.
        is_error: bool,
    },
    /// A session warning, reported once.
    Warning {
        /// The warning.
        message: String,
    },
}

/// `partialResult` of an update: `{"content": [{"type": "text", "text": …}]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PartialResult {
    /// One text block.
    pub content: [TextBlock; 1],
}

impl PartialResult {
    /// A partial result holding `text`.
    pub fn text(text: String) -> Self {
        Self {
            content: [TextBlock { kind: "text", text }],
        }
    }
}

/// `{"type": "text", "text": …}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TextBlock {
    #[serde(rename = "type")]
    kind: &'static str,
    text: String,
}

impl Message {
    /// A successful response.
    pub fn success(id: Option<Value>, command: &str, data: Option<Box<RawValue>>) -> Self {
        Self::Response {
            id,
            command: command.to_owned(),
            success: true,
            data,
            error: None,
        }
    }

    /// A failed response.
    pub fn failure(id: Option<Value>, command: &str, error: impl Into<String>) -> Self {
        Self::Response {
            id,
            command: command.to_owned(),
            success: false,
            data: None,
            error: Some(error.into()),
        }
    }
}

/// Sends lines to the writer thread. Cheap to clone; sending never blocks.
#[derive(Debug, Clone)]
pub struct Output {
    lines: mpsc::UnboundedSender<String>,
}

impl Output {
    /// Queues one message. Once the output is gone (the client closed stdout) messages are
    /// dropped.
    pub fn send(&self, message: &Message) {
        match serde_json::to_string(message) {
            Ok(mut line) => {
                line.push('\n');
                if self.lines.send(line).is_err() {
                    tracing::debug!("output closed; message dropped");
                }
            }
            // Values built from serde types with string keys always serialise.
            Err(err) => tracing::error!("cannot serialise an RPC message: {err}"),
        }
    }

    /// Queues several messages.
    pub fn send_all(&self, messages: impl IntoIterator<Item = Message>) {
        for message in messages {
            self.send(&message);
        }
    }
}

/// Starts the thread that writes every queued line to `out`, whole, in order, flushing
/// whenever the queue is empty (so each line is out before the writer waits for the next). It
/// ends when every [`Output`] is dropped and the queue is written, or when `out` fails.
pub fn spawn_writer<W: Write + Send + 'static>(mut out: W) -> io::Result<(Output, JoinHandle<()>)> {
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let handle = std::thread::Builder::new()
        .name("rpc-writer".into())
        .spawn(move || {
            let written = (|| -> io::Result<()> {
                while let Some(line) = rx.blocking_recv() {
                    out.write_all(line.as_bytes())?;
                    while let Ok(line) = rx.try_recv() {
                        out.write_all(line.as_bytes())?;
                    }
                    out.flush()?;
                }
                Ok(())
            })();
            if let Err(err) = written {
                tracing::debug!("stdout closed: {err}; later output is dropped");
            }
        })?;
    Ok((Output { lines: tx }, handle))
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use serde_json::json;

    use super::*;

    fn json_of(message: &Message) -> Value {
        serde_json::to_value(message).expect("serialisable")
    }

    #[test]
    fn data_keeps_its_field_order() {
        #[derive(Serialize)]
        struct Data {
            zeta: u8,
            alpha: u8,
        }
        let data = serde_json::value::to_raw_value(&Data { zeta: 1, alpha: 2 }).expect("raw");
        let line =
            serde_json::to_string(&Message::success(None, "bash", Some(data))).expect("json");
        assert_eq!(
            line,
            r#"{"type":"response","command":"bash","success":true,"data":{"zeta":1,"alpha":2}}"#
        );
    }

    #[test]
    fn response_shapes() {
        assert_eq!(
            json_of(&Message::success(Some(json!("1")), "abort_bash", None)),
            json!({"id": "1", "type": "response", "command": "abort_bash", "success": true})
        );
        assert_eq!(
            json_of(&Message::failure(
                None,
                "parse",
                "Failed to parse command: x"
            )),
            json!({"type": "response", "command": "parse", "success": false, "error": "Failed to parse command: x"})
        );
    }

    #[test]
    fn event_shapes_are_camel_case() {
        assert_eq!(
            json_of(&Message::ToolExecutionUpdate {
                tool_call_id: "c".into(),
                tool_name: "bash".into(),
                partial_result: PartialResult::text("so far".into()),
            }),
            json!({"type": "tool_execution_update", "toolCallId": "c", "toolName": "bash",
                   "partialResult": {"content": [{"type": "text", "text": "so far"}]}})
        );
        assert_eq!(
            json_of(&Message::ToolExecutionEnd {
                tool_call_id: "c".into(),
                tool_name: "bash".into(),
                result: RawValue::from_string("{}".into()).expect("valid JSON"),
                is_error: true,
            }),
            json!({"type": "tool_execution_end", "toolCallId": "c", "toolName": "bash", "result": {}, "isError": true})
        );
        assert_eq!(
            json_of(&Message::Warning {
                message: "w".into()
            }),
            json!({"type": "warning", "message": "w"})
        );
    }

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().expect("not poisoned").extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn lines_from_many_threads_never_interleave() {
        let sink = Shared::default();
        let (output, writer) = spawn_writer(sink.clone()).expect("thread");
        let big = "x".repeat(100_000);
        std::thread::scope(|scope| {
            for thread in 0..4 {
                let output = output.clone();
                let big = big.clone();
                scope.spawn(move || {
                    for n in 0..50 {
                        output.send(&Message::Warning {
                            message: format!("{thread}-{n}-{big}"),
                        });
                    }
                });
            }
        });
        drop(output);
        writer
            .join()
            .expect("writer ends when every sender is gone");
        let text = String::from_utf8(sink.0.lock().expect("not poisoned").clone()).expect("utf-8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 200);
        for line in lines {
            let value: Value = serde_json::from_str(line).expect("each line is one whole object");
            assert!(value["message"].as_str().expect("message").ends_with(&big));
        }
    }
}
