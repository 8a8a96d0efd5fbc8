//! [`RemoteSession`]: a far-side session reached through a [`Transport`], reconnected when its
//! connection is lost.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agentsh_protocol::{REMOTE_LOST_PREFIX, RPC_PROTOCOL, Timeout, ToolDetails, ToolResult};
use serde_json::{Map, Value, json};
use tokio::sync::Mutex as AsyncMutex;
use tokio_util::sync::CancellationToken;

use crate::connection::{Connection, RawMessage, field};
use crate::transport::{FarSide, Transport};

/// The lease the far side is started with (SPEC §17); pings go every third of it.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// How long an orderly close waits for the far side to end its trees and exit (its own drain
/// is bounded at 10 s).
const CLOSE_GRACE: Duration = Duration::from_secs(12);

/// How a [`RemoteSession`] reaches and sets up its far side.
#[derive(Debug, Clone)]
pub struct RemoteConfig {
    /// The channel.
    pub transport: Arc<dyn Transport>,
    /// The far side's working directory and lease.
    pub far: FarSide,
    /// The settings that shape execution, sent in every `hello` (SPEC §17); `None` sends none.
    pub settings: Option<Value>,
    /// This agentsh's version, named in a protocol mismatch.
    pub version: String,
}

/// Why a remote call or connection failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RemoteError {
    /// The channel could not be opened, or the far side did not answer `hello`.
    #[error("cannot reach {target}: {reason}")]
    Connect {
        /// What the transport reaches.
        target: String,
        /// Why.
        reason: String,
    },
    /// The far side answered `hello` but refused the session (settings it cannot enforce, a
    /// protocol mismatch), or speaks another protocol.
    #[error("{target} refused the session: {reason}")]
    Refused {
        /// What the transport reaches.
        target: String,
        /// The far side's (or this side's) reason.
        reason: String,
    },
    /// The connection was lost while the call ran.
    #[error("{REMOTE_LOST_PREFIX}{0}")]
    Lost(String),
    /// The far side answered the request with `success: false`.
    #[error("{0}")]
    Failed(String),
}

impl RemoteError {
    /// The tool result of a call this failure ended: a tool error whose text is
    /// `Remote connection lost: <reason>` (a connect or refusal is said the same way: the call
    /// never reached a session), or for [`RemoteError::Failed`] the far side's own words.
    pub fn tool_result(&self) -> ToolResult {
        let text = match self {
            Self::Lost(_) | Self::Failed(_) => self.to_string(),
            other => format!("{REMOTE_LOST_PREFIX}{other}"),
        };
        let details = ToolDetails::not_run(std::path::Path::new(""), Timeout::default());
        ToolResult::new(text, details, true)
    }
}

/// A far side's answer with its `data` as it was written (see
/// [`RemoteSession::request_raw`]).
#[derive(Debug)]
pub struct RawResponse {
    /// Whether the far side carried the request out.
    pub success: bool,
    /// Why not, in its words.
    pub error: Option<String>,
    /// The answer's `data`, unparsed.
    pub data: Option<Box<serde_json::value::RawValue>>,
}

impl From<&mut RawMessage> for RawResponse {
    fn from(message: &mut RawMessage) -> Self {
        Self {
            success: field::<bool>(message, "success") == Some(true),
            error: field::<String>(message, "error"),
            data: message.remove("data"),
        }
    }
}

/// What the far side said in `hello`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FarVersion {
    /// Its `agentsh` version.
    pub agentsh: String,
    /// Its protocol number.
    pub protocol: u64,
}

/// A far-side session. Cloning shares it. Calls go over one connection; when that is lost,
/// the calls running on it end with [`RemoteError::Lost`] and the next call opens a new one
/// (a new far-side session: its first result says `sessionRestarted`).
#[derive(Debug, Clone)]
pub struct RemoteSession {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: RemoteConfig,
    connection: AsyncMutex<Option<Arc<Connection>>>,
    /// A reconnect happened that no call result has reported yet.
    restarted: AtomicBool,
    /// Connections opened so far (each a new far-side session).
    opened: AtomicU64,
    /// Far-side `toolCallId`s are this side's own, so two callers' ids never collide there.
    next_call: AtomicU64,
    warnings: Mutex<Vec<String>>,
    far_version: Mutex<Option<FarVersion>>,
    /// The settings every `hello` carries: the config's, with the sections a client's hello
    /// applied since in place of theirs.
    settings: Mutex<Option<Value>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One tool call to make on the far side.
#[derive(Debug, Clone, Copy)]
pub struct RemoteCall<'a> {
    /// The tool (`bash`, `job_output`, …).
    pub name: &'a str,
    /// Its arguments.
    pub arguments: &'a Value,
    /// The agent's other tools, for interception.
    pub tool_names: &'a [String],
}

impl RemoteSession {
    /// Opens the first connection and says `hello`: fails when the far side cannot be reached
    /// or refuses.
    pub async fn connect(config: RemoteConfig) -> Result<Self, RemoteError> {
        let settings = Mutex::new(config.settings.clone());
        let session = Self {
            inner: Arc::new(Inner {
                settings,
                config,
                connection: AsyncMutex::new(None),
                restarted: AtomicBool::new(false),
                opened: AtomicU64::new(0),
                next_call: AtomicU64::new(1),
                warnings: Mutex::default(),
                far_version: Mutex::default(),
            }),
        };
        session.connection().await?;
        Ok(session)
    }

    /// What the transport reaches (`ssh://host`), for messages.
    pub fn target(&self) -> String {
        self.inner.config.transport.describe()
    }

    /// The far side's version, from its last `hello`.
    pub fn far_version(&self) -> Option<FarVersion> {
        lock(&self.inner.far_version).clone()
    }

    /// Warnings the far side sent, not yet taken.
    pub fn take_warnings(&self) -> Vec<String> {
        let mut warnings = std::mem::take(&mut *lock(&self.inner.warnings));
        if let Ok(guard) = self.inner.connection.try_lock()
            && let Some(connection) = guard.as_ref()
        {
            warnings.extend(connection.take_warnings());
        }
        warnings
    }

    /// The live connection, opening one (and saying `hello`) if there is none or it was lost.
    async fn connection(&self) -> Result<Arc<Connection>, RemoteError> {
        let mut guard = self.inner.connection.lock().await;
        if let Some(connection) = guard.as_ref() {
            if connection.lost().is_none() {
                return Ok(Arc::clone(connection));
            }
            // Its warnings are still the user's.
            lock(&self.inner.warnings).extend(connection.take_warnings());
        }
        let reconnect = guard.is_some();
        *guard = None;
        let connection = self.open().await?;
        self.inner.opened.fetch_add(1, Ordering::Relaxed);
        if reconnect {
            self.inner.restarted.store(true, Ordering::Relaxed);
        }
        *guard = Some(Arc::clone(&connection));
        Ok(connection)
    }

    /// A new connection that has said `hello`.
    async fn open(&self) -> Result<Arc<Connection>, RemoteError> {
        let config = &self.inner.config;
        let target = config.transport.describe();
        let channel =
            config
                .transport
                .open(&config.far)
                .await
                .map_err(|err| RemoteError::Connect {
                    target: target.clone(),
                    reason: err.to_string(),
                })?;
        let connection = Connection::start(channel, &config.transport, config.far.lease);
        let mut hello = Map::new();
        hello.insert("type".to_owned(), Value::from("hello"));
        hello.insert("protocol".to_owned(), Value::from(RPC_PROTOCOL));
        if let Some(settings) = lock(&self.inner.settings).clone() {
            hello.insert("settings".to_owned(), settings);
        }
        // Bounded: a far side that never answers (a wrapper waiting on a prompt) is an error,
        // not a hang. ssh's own connect is bounded at 10 s.
        let answer = tokio::time::timeout(
            config.far.lease.max(Duration::from_secs(20)),
            connection.request_parsed(hello),
        )
        .await;
        let response = match answer {
            Ok(Ok(response)) => response,
            Ok(Err(reason)) => {
                return Err(RemoteError::Connect { target, reason });
            }
            Err(_) => {
                connection.abandon("no answer to hello");
                return Err(RemoteError::Connect {
                    target,
                    reason: "the far side did not answer hello".to_owned(),
                });
            }
        };
        if let Err(reason) = failure(&response) {
            connection.abandon("refused");
            return Err(RemoteError::Refused { target, reason });
        }
        let data = response.get("data").cloned().unwrap_or(Value::Null);
        let version = FarVersion {
            agentsh: data
                .get("agentsh")
                .and_then(Value::as_str)
                .unwrap_or("unknown")
                .to_owned(),
            protocol: data.get("protocol").and_then(Value::as_u64).unwrap_or(0),
        };
        if version.protocol != u64::from(RPC_PROTOCOL) {
            connection.abandon("protocol mismatch");
            return Err(RemoteError::Refused {
                target,
                reason: format!(
                    "Protocol mismatch: this agentsh {} speaks protocol {RPC_PROTOCOL}, the far side's agentsh {} speaks protocol {}",
                    config.version, version.agentsh, version.protocol
                ),
            });
        }
        *lock(&self.inner.far_version) = Some(version);
        Ok(connection)
    }

    /// Sends one request (an object with its `type`; the id is this side's) and returns the
    /// far side's response object, reconnecting first when the last connection was lost.
    pub async fn request(
        &self,
        request: Map<String, Value>,
    ) -> Result<Map<String, Value>, RemoteError> {
        let connection = self.connection().await?;
        connection
            .request_parsed(request)
            .await
            .map_err(RemoteError::Lost)
    }

    /// [`RemoteSession::request`] whose answer's `data` is kept as the far side wrote it
    /// (not parsed): for passing an answer on (the RPC proxy), where a whole artifact would
    /// otherwise be parsed and written out again.
    pub async fn request_raw(
        &self,
        request: Map<String, Value>,
    ) -> Result<RawResponse, RemoteError> {
        let connection = self.connection().await?;
        let mut response = connection
            .request(request)
            .await
            .map_err(RemoteError::Lost)?;
        Ok(RawResponse::from(&mut response))
    }

    /// Sends a request of type `kind` with `fields` and returns its `data` (`Null` without
    /// one); a `success: false` answer is [`RemoteError::Failed`] with the far side's error.
    pub async fn request_data(
        &self,
        kind: &str,
        mut fields: Map<String, Value>,
    ) -> Result<Value, RemoteError> {
        fields.insert("type".to_owned(), Value::from(kind));
        let mut response = self.request(fields).await?;
        failure(&response).map_err(RemoteError::Failed)?;
        Ok(response.remove("data").unwrap_or(Value::Null))
    }

    /// [`RemoteSession::request_data`] over the live connection only: when there is none (it
    /// was lost, or closed), [`RemoteError::Lost`] with the reason, and no new connection is
    /// opened. For what polls the far side (a status line), which should not reconnect by
    /// itself: the next call does, and says `sessionRestarted`.
    pub async fn request_data_if_connected(
        &self,
        kind: &str,
        mut fields: Map<String, Value>,
    ) -> Result<Value, RemoteError> {
        let connection = {
            let guard = self.inner.connection.lock().await;
            match guard.as_ref() {
                Some(connection) => match connection.lost() {
                    None => Arc::clone(connection),
                    Some(reason) => return Err(RemoteError::Lost(reason)),
                },
                None => return Err(RemoteError::Lost("the connection is closed".to_owned())),
            }
        };
        fields.insert("type".to_owned(), Value::from(kind));
        let mut response = connection
            .request_parsed(fields)
            .await
            .map_err(RemoteError::Lost)?;
        failure(&response).map_err(RemoteError::Failed)?;
        Ok(response.remove("data").unwrap_or(Value::Null))
    }

    /// Keeps `sections` (an object of settings sections, as a client's `hello` that the far
    /// side accepted carried them): every later connection's `hello` carries each in place of
    /// the section of the same name, so a reconnect starts the new far-side session with them.
    pub fn keep_settings(&self, sections: &Value) {
        let Some(sections) = sections.as_object() else {
            return;
        };
        let mut settings = lock(&self.inner.settings);
        let kept = settings.get_or_insert_with(|| Value::Object(Map::new()));
        if !kept.is_object() {
            *kept = Value::Object(Map::new());
        }
        if let Some(kept) = kept.as_object_mut() {
            for (name, section) in sections {
                kept.insert(name.clone(), section.clone());
            }
        }
    }

    /// How many connections (each a new far-side session) have been opened: 1 after
    /// [`RemoteSession::connect`], one more for each reconnect. A UI compares it around a call
    /// to tell that the call reached a new session.
    pub fn sessions_opened(&self) -> u64 {
        self.inner.opened.load(Ordering::Relaxed)
    }

    /// Whether a reconnect happened since a result last said so; taking it clears it.
    pub fn take_restarted(&self) -> bool {
        self.inner.restarted.swap(false, Ordering::Relaxed)
    }

    /// Runs a tool call on the far side. Each event (`tool_execution_start`, `…_update`,
    /// `…_end`) goes to `on_event` with the far side's `toolCallId` replaced by `None` (the
    /// caller sets its own). `cancel` resolving sends an `abort` for the call. The result's
    /// `details.sessionRestarted` is set when the call is the first after a reconnect.
    pub async fn tool_call(
        &self,
        call: RemoteCall<'_>,
        cancel: &CancellationToken,
        mut on_event: impl FnMut(Map<String, Value>) + Send,
    ) -> Result<Value, RemoteError> {
        let connection = self.connection().await?;
        let restarted = self.take_restarted();
        let call_id = format!(
            "remote-{}",
            self.inner.next_call.fetch_add(1, Ordering::Relaxed)
        );
        let mut request = Map::new();
        request.insert("type".to_owned(), Value::from("tool_call"));
        request.insert("toolCallId".to_owned(), Value::from(call_id.as_str()));
        request.insert("name".to_owned(), Value::from(call.name));
        request.insert("arguments".to_owned(), call.arguments.clone());
        if !call.tool_names.is_empty() {
            request.insert("toolNames".to_owned(), json!(call.tool_names));
        }
        let mut abort = Map::new();
        abort.insert("type".to_owned(), Value::from("abort"));
        abort.insert("toolCallId".to_owned(), Value::from(call_id.as_str()));
        let answer = run_streamed(&connection, &call_id, request, abort, cancel, |event| {
            on_event(restart_marked(event, restarted));
        })
        .await;
        let response = answer.map_err(RemoteError::Lost)?;
        failure(&response).map_err(RemoteError::Failed)?;
        let mut data = response.get("data").cloned().unwrap_or(Value::Null);
        if restarted && let Some(details) = data.get_mut("details").and_then(Value::as_object_mut) {
            details.insert("sessionRestarted".to_owned(), Value::Bool(true));
        }
        Ok(data)
    }

    /// [`RemoteSession::tool_call`] as a tool's caller wants it: `on_update` gets the text
    /// of each live update, and the answer is the tool result. A call that never got a result
    /// (the connection lost, the far side unreachable or refusing, an answer this agentsh
    /// cannot read) is the tool error that says so ([`RemoteError::tool_result`]).
    pub async fn call_tool(
        &self,
        call: RemoteCall<'_>,
        cancel: &CancellationToken,
        mut on_update: impl FnMut(&str) + Send,
    ) -> ToolResult {
        self.tool_call(call, cancel, |event| {
            if let Some(text) = update_text(&event) {
                on_update(text);
            }
        })
        .await
        .and_then(|value| {
            serde_json::from_value::<ToolResult>(value).map_err(|err| {
                RemoteError::Failed(format!(
                    "the far side sent a result this agentsh cannot read: {err}"
                ))
            })
        })
        .unwrap_or_else(|err| err.tool_result())
    }

    /// Runs a user's (bang) command on the far side: a `bash` request with `command` and
    /// `timeout`. With `stream`, its output so far is handed to `on_output` as the far side
    /// sends it (`bash_output` events: pieces at most every 50 ms, each the newest 64 KiB at
    /// most); without, nothing is streamed over the link. `cancel` resolving sends
    /// `abort_bash`; the command's own response (`cancelled: true`) still ends the call.
    /// Returns its `data` (the `BashResult` and `text`), marked `sessionRestarted` when the
    /// call is the first after a reconnect; a `success: false` answer is
    /// [`RemoteError::Failed`].
    pub async fn bash(
        &self,
        command: &str,
        timeout: Option<f64>,
        cancel: &CancellationToken,
        stream: bool,
        mut on_output: impl FnMut(&str) + Send,
    ) -> Result<Value, RemoteError> {
        let connection = self.connection().await?;
        let restarted = self.take_restarted();
        let stream_id = format!(
            "bash-{}",
            self.inner.next_call.fetch_add(1, Ordering::Relaxed)
        );
        let mut request = Map::new();
        request.insert("type".to_owned(), Value::from("bash"));
        request.insert("command".to_owned(), Value::from(command));
        if let Some(timeout) = timeout {
            request.insert("timeout".to_owned(), Value::from(timeout));
        }
        if stream {
            request.insert("streamId".to_owned(), Value::from(stream_id.as_str()));
        }
        let mut abort = Map::new();
        abort.insert("type".to_owned(), Value::from("abort_bash"));
        let answer = run_streamed(&connection, &stream_id, request, abort, cancel, |event| {
            if let Some(text) = event.get("text").and_then(Value::as_str) {
                on_output(text);
            }
        })
        .await;
        let mut response = answer.map_err(RemoteError::Lost)?;
        failure(&response).map_err(RemoteError::Failed)?;
        let mut data = response.remove("data").unwrap_or(Value::Null);
        if restarted && let Some(data) = data.as_object_mut() {
            data.insert("sessionRestarted".to_owned(), Value::Bool(true));
        }
        Ok(data)
    }

    /// Ends the session in order: the far side's input is closed, so it ends every tree and
    /// exits; waits up to 12 s for that, then kills the transport.
    pub async fn shutdown(&self) {
        let connection = self.inner.connection.lock().await.take();
        if let Some(connection) = connection {
            connection.close(CLOSE_GRACE).await;
        }
    }
}

/// Sends `request` and hands its events (those routed to `stream`: its `toolCallId` or
/// `streamId`) to `on_event` until its response comes, which it returns; `cancel` resolving
/// sends `abort` (once). Events sent before the response are delivered before it returns.
async fn run_streamed(
    connection: &Connection,
    stream: &str,
    request: Map<String, Value>,
    mut abort: Map<String, Value>,
    cancel: &CancellationToken,
    mut on_event: impl FnMut(Map<String, Value>),
) -> Result<Map<String, Value>, String> {
    let mut events = connection.events(stream);
    let response = connection.request_parsed(request);
    tokio::pin!(response);
    let cancelled = cancel.cancelled();
    tokio::pin!(cancelled);
    let (mut aborted, mut events_open) = (false, true);
    let answer = loop {
        tokio::select! {
            answer = &mut response => break answer,
            event = events.recv(), if events_open => match event {
                Some(event) => on_event(event),
                None => events_open = false,
            },
            () = &mut cancelled, if !aborted => {
                aborted = true;
                // An id of no request of ours: its answer is routed to no one.
                abort.insert("id".to_owned(), Value::from(format!("{stream}-abort")));
                let _ = connection.send(&abort);
            }
        }
    };
    while let Ok(event) = events.try_recv() {
        on_event(event);
    }
    connection.forget(stream);
    answer
}

/// An event for the caller: without the far side's `toolCallId`, and with the end's result
/// marked `sessionRestarted` when the call is the first after a reconnect.
fn restart_marked(mut event: Map<String, Value>, restarted: bool) -> Map<String, Value> {
    event.remove("toolCallId");
    if restarted
        && event.get("type").and_then(Value::as_str) == Some("tool_execution_end")
        && let Some(result) = event.get_mut("result")
    {
        mark_restarted(result);
    }
    event
}

/// Sets `details.sessionRestarted` of a tool result.
fn mark_restarted(result: &mut Value) {
    if let Some(details) = result.get_mut("details").and_then(Value::as_object_mut) {
        details.insert("sessionRestarted".to_owned(), Value::Bool(true));
    }
}

/// `Err(error)` for a `success: false` response.
fn failure(response: &Map<String, Value>) -> Result<(), String> {
    if response.get("success").and_then(Value::as_bool) == Some(true) {
        return Ok(());
    }
    Err(response
        .get("error")
        .and_then(Value::as_str)
        .unwrap_or("the far side failed the request without saying why")
        .to_owned())
}

/// The text of a `tool_execution_update` event (`partialResult.content[0].text`); `None` for
/// any other event.
pub fn update_text(event: &Map<String, Value>) -> Option<&str> {
    if event.get("type")?.as_str()? != "tool_execution_update" {
        return None;
    }
    event
        .get("partialResult")?
        .get("content")?
        .get(0)?
        .get("text")?
        .as_str()
}
