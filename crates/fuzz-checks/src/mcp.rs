//! `agentsh mcp`'s transport: the lines a client writes, up to rmcp and back.

use std::io::Cursor;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use agentsh_jsonl::{is_blank, strip_bom};
use agentsh_mcp::{CancellationToken, LineTransport};
use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ErrorData, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;

use crate::{lenient_json, number_token, written_answer_id};

/// How the ids of the lines the check adds start, before a number that makes the mark one
/// the input does not hold (so that no line of its own looks like one of the check's).
const MARK: &str = "agentsh-fuzz-check";

/// The code of the answer the check gives, as rmcp would, to a request the transport handed
/// on.
const HANDLED: i32 = -32603;

/// Every line of `data` (split at `\n`, as the server frames its input) through the transport
/// of `agentsh mcp`, a request handed on being answered at once as rmcp would answer it
/// (except a `tools/call`, which stays running, as a long command does):
///
/// - the transport reads to the end of input, whatever came (it never ends the session);
/// - a blank line gets nothing, a line that is no JSON gets `-32700` with `"id": null`, JSON
///   that is no object `-32600` with `"id": null`;
/// - a request gets exactly one answer: rmcp's, or `-32600` (a bad message, an id in use);
/// - a notification or a response gets none;
/// - every answer is one line, a JSON-RPC 2.0 error object with an `id` member: the
///   request's id, a number as the line wrote it, or `null` when it has none that JSON-RPC
///   allows.
pub fn mcp_line(data: &[u8]) {
    // Among more marks than the input has bytes, one is not in it.
    let mark = (0..=data.len())
        .map(|n| format!("{MARK}{n}-"))
        .find(|mark| {
            !data
                .windows(mark.len())
                .any(|window| window == mark.as_bytes())
        })
        .expect("a mark the input does not hold");
    let lines: Vec<&[u8]> = data.split(|&byte| byte == b'\n').collect();
    // After each line, a request the transport answers itself (its answer ends the line's
    // answers) and a `ping` it hands on (its arrival ends the line's messages).
    let mut input = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        input.extend_from_slice(line);
        input.extend_from_slice(
            format!(
                "\n{{\"jsonrpc\":\"2.0\",\"id\":\"{mark}{n}\"}}\n\
                 {{\"jsonrpc\":\"2.0\",\"id\":\"{mark}ping-{n}\",\"method\":\"ping\"}}\n"
            )
            .as_bytes(),
        );
    }
    let (messages, output) = run(input, &mark);
    let answers = answers_by_line(&output, lines.len(), &mark);
    let handed = messages_by_line(&messages, lines.len(), &mark);
    for (n, line) in lines.iter().enumerate() {
        check_line(line, &answers[n], handed[n]);
    }
}

/// Runs the transport over `input` to its end: the messages it handed on and what it wrote.
fn run(input: Vec<u8>, mark: &str) -> (Vec<Value>, Vec<u8>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let written = Shared::default();
        let ended = CancellationToken::new();
        let (mut transport, writer) =
            LineTransport::new(Cursor::new(input), written.clone(), ended.clone());
        let mut messages = Vec::new();
        while let Some(message) = Transport::<RoleServer>::receive(&mut transport).await {
            let value = serde_json::to_value(&message).expect("a message is JSON");
            if let ClientJsonRpcMessage::Request(request) = message {
                let is_check_ping = value["id"].as_str().is_some_and(|id| id.starts_with(mark));
                if !is_check_ping && value["method"] != "tools/call" {
                    let answer = ServerJsonRpcMessage::error(
                        ErrorData::internal_error("answered by the check", None),
                        Some(request.id),
                    );
                    Transport::<RoleServer>::send(&mut transport, answer)
                        .await
                        .expect("the writer is there");
                }
            }
            messages.push(value);
        }
        assert!(ended.is_cancelled(), "the transport ended before its input");
        drop(transport);
        writer.await.expect("the writer task");
        let output = written
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        (messages, output)
    })
}

/// The answers written, as JSON-RPC error objects with their id's text, grouped by the line
/// they answer (the check's own answers divide them).
fn answers_by_line(output: &[u8], lines: usize, mark: &str) -> Vec<Vec<(Option<String>, i64)>> {
    let mut groups = vec![Vec::new()];
    for line in output.split_inclusive(|&byte| byte == b'\n') {
        assert!(line.ends_with(b"\n"), "an answer without its newline");
        let text = std::str::from_utf8(line).expect("an answer is UTF-8");
        let Some(Value::Object(answer)) = lenient_json(text) else {
            panic!("an answer that is no JSON object: {text}");
        };
        assert_eq!(answer.get("jsonrpc"), Some(&Value::from("2.0")), "{text}");
        assert!(answer.get("result").is_none(), "{text}");
        let error = answer.get("error").and_then(Value::as_object);
        let code = error
            .and_then(|error| error.get("code"))
            .and_then(Value::as_i64)
            .unwrap_or_else(|| panic!("an answer without an error code: {text}"));
        assert!(
            error
                .and_then(|error| error.get("message"))
                .is_some_and(Value::is_string),
            "{text}"
        );
        let id =
            written_answer_id(text).unwrap_or_else(|| panic!("an answer without an id: {text}"));
        let id = (id != "null").then_some(id);
        let ends_line = id
            .as_deref()
            .is_some_and(|id| id == format!("\"{mark}{}\"", groups.len() - 1));
        if ends_line {
            assert_eq!(code, -32600, "{text}");
            groups.push(Vec::new());
        } else {
            groups.last_mut().expect("a group").push((id, code));
        }
    }
    assert_eq!(
        groups.len(),
        lines + 1,
        "a line of the check's went unanswered"
    );
    groups.pop();
    groups
}

/// How many messages each line handed on (the check's `ping`s divide them).
fn messages_by_line(messages: &[Value], lines: usize, mark: &str) -> Vec<usize> {
    let mut counts = vec![0];
    for message in messages {
        let ping = format!("{mark}ping-{}", counts.len() - 1);
        if message["id"].as_str() == Some(ping.as_str()) {
            counts.push(0);
        } else {
            *counts.last_mut().expect("a count") += 1;
        }
    }
    assert_eq!(
        counts.len(),
        lines + 1,
        "a `ping` of the check's was not handed on"
    );
    counts.pop();
    counts
}

/// What one line got: `answers` (id text, code) and `handed` messages.
fn check_line(line: &[u8], answers: &[(Option<String>, i64)], handed: usize) {
    let body = strip_bom(line.strip_suffix(b"\r").unwrap_or(line));
    let said = || {
        format!(
            "line {:?}: answers {answers:?}, handed {handed}",
            String::from_utf8_lossy(line)
        )
    };
    if is_blank(body) {
        assert!(answers.is_empty() && handed == 0, "{}", said());
        return;
    }
    let text = std::str::from_utf8(body).ok();
    let Some(value) = text.and_then(lenient_json) else {
        assert_eq!(answers, [(None, -32700)], "{}", said());
        assert_eq!(handed, 0, "{}", said());
        return;
    };
    let Value::Object(object) = value else {
        assert_eq!(answers, [(None, -32600)], "{}", said());
        assert_eq!(handed, 0, "{}", said());
        return;
    };
    let id = object.get("id");
    let is_request = object.contains_key("method") && id.is_some();
    let is_other = object.contains_key("method")
        || object.contains_key("result")
        || object.contains_key("error");
    if !is_request && is_other {
        assert!(answers.is_empty() && handed <= 1, "{}", said());
        return;
    }
    if is_request {
        // Handed on and answered (a `tools/call` runs on, unanswered), or refused.
        assert!(handed <= 1, "{}", said());
        let running = handed == 1 && object.get("method") == Some(&Value::from("tools/call"));
        assert_eq!(answers.len(), usize::from(!running), "{}", said());
    } else {
        // No message at all: refused.
        assert_eq!((answers.len(), handed), (1, 0), "{}", said());
    }
    if let Some((echoed, code)) = answers.first() {
        assert!(
            [-32600, HANDLED].contains(&i32::try_from(*code).unwrap_or(0)),
            "{}",
            said()
        );
        let expected = match id {
            Some(id @ (Value::String(_) | Value::Number(_))) => Some(id),
            _ => None,
        };
        let echoed_value = echoed.as_deref().and_then(lenient_json);
        assert_eq!(echoed_value.as_ref(), expected, "{}", said());
        if let (Some(token), Some(echoed)) = (
            text.zip(expected)
                .and_then(|(text, id)| number_token(text, id)),
            echoed,
        ) {
            assert_eq!(echoed, token, "{}", said());
        }
    }
}

/// A writer whose bytes the check reads once the transport is done.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl tokio::io::AsyncWrite for Shared {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
