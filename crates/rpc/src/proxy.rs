//! The RPC server of a remote session (SPEC §17): each request is parsed here as the local
//! server parses it (so bad input gets the same answers), then forwarded to the far side's
//! `agentsh rpc`, whose answers and events come back under the client's ids.
//!
//! When the connection is lost, every call running on it ends with the tool error
//! `Remote connection lost: <reason>` (a `bash` request with that failure); the next request
//! opens a new connection, a new far-side session, and its result says `sessionRestarted`.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use agentsh_remote::{RawResponse, RemoteCall, RemoteError, RemoteSession, update_text};
use serde_json::value::to_raw_value;
use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::error::RpcError;
use crate::input::Incoming;
use crate::output::{Message, Output, PartialResult};
use crate::request::{Command, Request};
use crate::server::{RunningBash, Stop, ToolCalls, claim_bash, register_call};

/// How long, at end of input, aborted calls get to be answered before the connection is
/// closed regardless.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Serves requests for `remote` until they end or `stop` asks; then aborts what runs, closes
/// the connection (the far side ends every tree) and returns the stop's reason, if one came.
pub(crate) async fn serve<S: Stop>(
    remote: RemoteSession,
    output: Output,
    mut requests: mpsc::Receiver<Incoming>,
    mut stop: S,
) -> Option<S::Reason> {
    let mut proxy = Proxy {
        remote,
        output,
        calls: ToolCalls::default(),
        bash: RunningBash::default(),
        tasks: JoinSet::new(),
    };
    proxy.send_warnings();
    let signalled = loop {
        tokio::select! {
            request = requests.recv() => match request {
                Some(Ok(Some(request))) => proxy.dispatch(request),
                // A blank line: nothing to do (the far side's lease is kept by the pings).
                Some(Ok(None)) => {}
                Some(Err(err)) => {
                    proxy.output.send(&Message::failure(err.id, &err.command, &err.error));
                }
                None => break None,
            },
            Some(_) = proxy.tasks.join_next(), if !proxy.tasks.is_empty() => {}
            reason = stop.requested() => break Some(reason),
        }
    };
    for token in lock(&proxy.calls).values() {
        token.cancel();
    }
    if let Some(token) = lock(&proxy.bash).as_ref() {
        token.cancel();
    }
    let drained = tokio::time::timeout(DRAIN_TIMEOUT, async {
        while proxy.tasks.join_next().await.is_some() {}
    });
    let during = tokio::select! {
        _ = drained => None,
        reason = stop.requested() => Some(reason),
    };
    proxy.tasks.abort_all();
    proxy.remote.shutdown().await;
    signalled.or(during)
}

struct Proxy {
    remote: RemoteSession,
    output: Output,
    calls: ToolCalls,
    /// The running `bash` request's abort token.
    bash: RunningBash,
    tasks: JoinSet<()>,
}

impl Proxy {
    fn send_warnings(&self) {
        send_warnings(&self.remote, &self.output);
    }

    fn dispatch(&mut self, request: Request) {
        let Request { id, command } = request;
        let name = command.name();
        match command {
            Command::ToolCall {
                tool_call_id,
                name: tool_name,
                arguments,
                tool_names,
            } => self.tool_call(id, tool_call_id, tool_name, arguments, tool_names),
            Command::Abort { tool_call_id } => {
                let token = lock(&self.calls).get(&tool_call_id).cloned();
                if let Some(token) = token {
                    self.output.send(&Message::success(id, name, None));
                    token.cancel();
                } else {
                    self.output.send(&Message::failure(
                        id,
                        name,
                        &RpcError::NoSuchToolCall(tool_call_id),
                    ));
                }
            }
            Command::Bash {
                command,
                timeout,
                stream_id,
            } => self.bash(id, command, timeout, stream_id),
            Command::AbortBash => {
                self.output.send(&Message::success(id, name, None));
                if let Some(token) = lock(&self.bash).as_ref() {
                    token.cancel();
                }
            }
            // The link to this agentsh: answered here.
            Command::Ping => self.output.send(&Message::success(id, name, None)),
            Command::Hello {
                protocol,
                settings: None,
            } => self
                .output
                .send(&crate::hello::hello_response(id, protocol)),
            // Settings for the far side's session: it applies them (a new session there) or
            // refuses them. Once applied they are kept: a reconnect's hello carries them too.
            Command::Hello {
                protocol,
                settings: Some(settings),
            } => {
                if let Err(error) = crate::hello::check_protocol(protocol) {
                    self.output.send(&Message::failure(id, name, &error));
                    return;
                }
                let mut request = Map::new();
                request.insert("type".to_owned(), Value::from(name));
                request.insert("protocol".to_owned(), Value::from(crate::PROTOCOL));
                request.insert("settings".to_owned(), settings.clone());
                let remote = self.remote.clone();
                let output = self.output.clone();
                self.tasks.spawn(async move {
                    let answer = remote.request_raw(request).await;
                    if answer.as_ref().is_ok_and(|response| response.success) {
                        remote.keep_settings(&settings);
                    }
                    send_warnings(&remote, &output);
                    output.send(&answered(id, name, answer));
                });
            }
            Command::ListArtifacts | Command::Status => {
                let mut request = Map::new();
                request.insert("type".to_owned(), Value::from(name));
                self.forward(id, name, request);
            }
            Command::JobView { job_id, bytes } => {
                let mut request = Map::new();
                request.insert("type".to_owned(), Value::from(name));
                request.insert("jobId".to_owned(), Value::from(job_id));
                if let Some(bytes) = bytes {
                    request.insert("bytes".to_owned(), Value::from(bytes));
                }
                self.forward(id, name, request);
            }
            Command::ReadArtifact {
                artifact_id,
                offset,
                limit,
            } => {
                let mut request = Map::new();
                request.insert("type".to_owned(), Value::from(name));
                request.insert("artifactId".to_owned(), Value::from(artifact_id));
                if let Some(offset) = offset {
                    request.insert("offset".to_owned(), Value::from(offset));
                }
                if let Some(limit) = limit {
                    request.insert("limit".to_owned(), Value::from(limit));
                }
                self.forward(id, name, request);
            }
        }
    }

    /// Forwards a request whose response needs only its id put back.
    fn forward(&mut self, id: Option<Value>, name: &'static str, request: Map<String, Value>) {
        let remote = self.remote.clone();
        let output = self.output.clone();
        self.tasks.spawn(async move {
            let answer = remote.request_raw(request).await;
            send_warnings(&remote, &output);
            output.send(&answered(id, name, answer));
        });
    }

    fn bash(
        &mut self,
        id: Option<Value>,
        command: String,
        timeout: Option<f64>,
        stream_id: Option<String>,
    ) {
        const NAME: &str = "bash";
        let (abort, busy) = match claim_bash(&self.bash) {
            Ok(claimed) => claimed,
            Err(error) => return self.output.send(&Message::failure(id, NAME, &error)),
        };
        let remote = self.remote.clone();
        let output = self.output.clone();
        self.tasks.spawn(async move {
            // Streamed over the link only when the client asked for it.
            let stream = stream_id.is_some();
            let answer = remote
                .bash(&command, timeout, &abort, stream, |text| {
                    if let Some(stream_id) = &stream_id {
                        output.send(&Message::BashOutput {
                            stream_id: stream_id.clone(),
                            text: text.to_owned(),
                        });
                    }
                })
                .await;
            drop(busy);
            // `RemoteSession::bash` marked a first result after a reconnect already.
            let response = match answer {
                Ok(data) => success(id, NAME, &data),
                Err(RemoteError::Failed(error)) => failure(id, NAME, &error),
                Err(err) => failure(id, NAME, &err.to_string()),
            };
            send_warnings(&remote, &output);
            output.send(&response);
        });
    }

    fn tool_call(
        &mut self,
        id: Option<Value>,
        tool_call_id: String,
        tool_name: String,
        arguments: Value,
        tool_names: Vec<String>,
    ) {
        const NAME: &str = "tool_call";
        let (cancel, registered) = match register_call(&self.calls, &tool_call_id) {
            Ok(registered) => registered,
            Err(error) => return self.output.send(&Message::failure(id, NAME, &error)),
        };
        // Sent here, before anything can come back, as the local server does.
        self.output.send(&Message::ToolExecutionStart {
            tool_call_id: tool_call_id.clone(),
            tool_name: tool_name.clone(),
            args: arguments.clone(),
        });
        let remote = self.remote.clone();
        let output = self.output.clone();
        self.tasks.spawn(async move {
            let mut ended = false;
            let call = RemoteCall {
                name: &tool_name,
                arguments: &arguments,
                tool_names: &tool_names,
            };
            let answer = remote
                .tool_call(call, &cancel, |mut event| {
                    if let Some(message) = event_for_client(&mut event, &tool_call_id) {
                        ended |= matches!(message, Message::ToolExecutionEnd { .. });
                        output.send(&message);
                    }
                })
                .await;
            drop(registered);
            send_warnings(&remote, &output);
            let data = match answer {
                Ok(data) => data,
                Err(RemoteError::Failed(error)) => {
                    output.send(&failure(id, NAME, &error));
                    return;
                }
                Err(err) => serde_json::to_value(err.tool_result()).unwrap_or(Value::Null),
            };
            if !ended && let Ok(result) = to_raw_value(&data) {
                let is_error = data.get("isError").and_then(Value::as_bool).unwrap_or(true);
                output.send(&Message::ToolExecutionEnd {
                    tool_call_id: tool_call_id.clone(),
                    tool_name: tool_name.clone(),
                    result,
                    is_error,
                });
            }
            output.send(&success(id, NAME, &data));
        });
    }
}

/// The response to a forwarded request: the far side's, under the client's id (and with the
/// client's request type) in the local server's shape, its `data` passed on as it came; or a
/// failure naming why it could not be forwarded.
fn answered(id: Option<Value>, name: &str, answer: Result<RawResponse, RemoteError>) -> Message {
    match answer {
        Ok(RawResponse {
            success,
            error,
            data,
        }) => Message::Response {
            id,
            command: name.to_owned(),
            success,
            data,
            error: error
                .or_else(|| (!success).then(|| "the far side failed the request".to_owned())),
        },
        Err(err) => failure(id, name, &err.to_string()),
    }
}

/// A far side's event for the client: its fields in the local server's order, under the
/// client's `toolCallId`; `None` for what the client does not get (the far side's start,
/// which was sent here already, or an event of no known kind).
fn event_for_client(event: &mut Map<String, Value>, call: &str) -> Option<Message> {
    let tool_name = match event.remove("toolName") {
        Some(Value::String(name)) => name,
        _ => String::new(),
    };
    match event.get("type").and_then(Value::as_str)? {
        "tool_execution_update" => {
            let text = update_text(event)?.to_owned();
            Some(Message::ToolExecutionUpdate {
                tool_call_id: call.to_owned(),
                tool_name,
                partial_result: PartialResult::text(text),
            })
        }
        "tool_execution_end" => {
            let result = to_raw_value(event.get("result")?).ok()?;
            let is_error = event
                .get("isError")
                .and_then(Value::as_bool)
                .unwrap_or(true);
            Some(Message::ToolExecutionEnd {
                tool_call_id: call.to_owned(),
                tool_name,
                result,
                is_error,
            })
        }
        _ => None,
    }
}

fn success(id: Option<Value>, name: &str, data: &Value) -> Message {
    Message::success(id, name, to_raw_value(data).ok())
}

fn failure(id: Option<Value>, name: &str, error: &str) -> Message {
    Message::Response {
        id,
        command: name.to_owned(),
        success: false,
        data: None,
        error: Some(error.to_owned()),
    }
}

fn send_warnings(remote: &RemoteSession, output: &Output) {
    for message in remote.take_warnings() {
        output.send(&Message::Warning { message });
    }
}
