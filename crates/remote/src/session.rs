//! [`RemoteHandle`]: a far-side session reached through a [`Transport`], reconnected when its
//! connection is lost.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agentsh_protocol::wire::{Capabilities, Command, HelloData};
use agentsh_protocol::{REMOTE_LOST_PREFIX, RPC_PROTOCOL};
use agentsh_seam::{EventHub, HandleError, Reach, lock};
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::sync::Mutex as AsyncMutex;

use crate::connection::{Answer, Connection};
use crate::transport::{FarSide, Transport};

/// The lease the far side is started with; pings go every third of it.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// How long an orderly close waits for the far side to end its trees and exit (its own drain
/// is bounded at 10 s).
const CLOSE_GRACE: Duration = Duration::from_secs(12);

/// How a [`RemoteHandle`] reaches and sets up its far side.
#[derive(Debug, Clone)]
pub struct RemoteConfig {
    /// The channel.
    pub transport: Arc<dyn Transport>,
    /// The far side's working directory and lease.
    pub far: FarSide,
    /// The settings that shape execution, sent in every `hello`; `None` sends none.
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
pub struct RemoteHandle {
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
    /// The context texts of users' commands run through this handle (the far side keeps its
    /// own copy; this one outlives a lost connection).
    context: Mutex<Vec<String>>,
    /// The far side's session events, for this side's subscribers (across reconnects).
    events: EventHub,
}

impl RemoteHandle {
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
                context: Mutex::default(),
                events: EventHub::new(),
            }),
        };
        session.connection().await?;
        // What the hello said: nobody can subscribe before this returns the handle. Taken here,
        // not when the task first runs, so a subscription made before then is told too.
        let answerers = session.inner.events.answerers();
        let told = *answerers.borrow() > 0;
        tokio::spawn(tell_answerers(
            Arc::downgrade(&session.inner),
            answerers,
            told,
        ));
        Ok(session)
    }

    /// The far side's session events, for this side's subscribers.
    pub(crate) fn events(&self) -> &EventHub {
        &self.inner.events
    }

    /// What this side can do, as every `hello` tells the far side: approval requests come back
    /// here (to each call's approver); hidden input is answered here while a subscriber that
    /// answers secrets is held.
    pub(crate) fn capabilities(&self) -> Capabilities {
        Capabilities {
            approvals: true,
            secret_input: self.inner.events.secrets_answerable(),
        }
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
    pub(crate) async fn connection(&self) -> Result<Arc<Connection>, RemoteError> {
        let mut guard = self.inner.connection.lock().await;
        if let Some(connection) = guard.as_ref() {
            if connection.lost().is_none() {
                return Ok(Arc::clone(connection));
            }
            // Its warnings are still the user's.
            lock(&self.inner.warnings).extend(connection.take_warnings());
        }
        // A session was open before (its connection lost, or a reconnect that failed since):
        // the one opened now is new to the model.
        let reconnect = guard.is_some() || self.inner.opened.load(Ordering::Relaxed) > 0;
        *guard = None;
        let connection = self.open().await?;
        self.inner.opened.fetch_add(1, Ordering::Relaxed);
        if reconnect {
            self.inner.restarted.store(true, Ordering::Relaxed);
        }
        *guard = Some(Arc::clone(&connection));
        Ok(connection)
    }

    /// The live connection as `reach` allows: a lost one is reopened only for
    /// [`Reach::Reconnect`]; for [`Reach::IfConnected`] it is [`RemoteError::Lost`].
    async fn reach(&self, reach: Reach) -> Result<Arc<Connection>, RemoteError> {
        if reach == Reach::Reconnect {
            return self.connection().await;
        }
        let guard = self.inner.connection.lock().await;
        match guard.as_ref() {
            Some(connection) => match connection.lost() {
                None => Ok(Arc::clone(connection)),
                Some(reason) => Err(RemoteError::Lost(reason)),
            },
            None => Err(RemoteError::Lost("the connection is closed".to_owned())),
        }
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
        let connection = Connection::start(
            channel,
            &config.transport,
            config.far.lease,
            self.inner.events.clone(),
        );
        let hello = Command::Hello {
            protocol: Some(u64::from(RPC_PROTOCOL)),
            settings: lock(&self.inner.settings).clone(),
            capabilities: Some(self.capabilities()),
        };
        // Bounded: a far side that never answers (a wrapper waiting on a prompt) is an error,
        // not a hang. ssh's own connect is bounded at 10 s.
        let answer = tokio::time::timeout(
            config.far.lease.max(Duration::from_secs(20)),
            connection.request(hello),
        )
        .await;
        let answer = match answer {
            Ok(Ok(answer)) => answer,
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
        let data = match answer.into_data::<HelloData>() {
            Ok(data) => data,
            Err(reason) => {
                connection.abandon("refused");
                return Err(RemoteError::Refused { target, reason });
            }
        };
        let version = FarVersion {
            agentsh: data.agentsh,
            protocol: data.protocol,
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

    /// Sends `command` over the connection `reach` allows and returns its `data` read as a
    /// `T`; a `success: false` answer (or `data` this agentsh cannot read) is
    /// [`RemoteError::Failed`] with the reason.
    pub async fn request<T: DeserializeOwned>(
        &self,
        command: Command,
        reach: Reach,
    ) -> Result<T, RemoteError> {
        let connection = self.reach(reach).await?;
        connection
            .request(command)
            .await
            .map_err(RemoteError::Lost)?
            .into_data()
            .map_err(RemoteError::Failed)
    }

    /// Sends `command` over the connection `reach` allows and returns its answer's `data` as
    /// the far side wrote it, for passing it on (a whole artifact is not parsed and written
    /// out again); a `success: false` answer is [`RemoteError::Failed`] with the reason.
    pub(crate) async fn request_raw(
        &self,
        command: Command,
        reach: Reach,
    ) -> Result<Option<Box<RawValue>>, RemoteError> {
        let connection = self.reach(reach).await?;
        connection
            .request(command)
            .await
            .map_err(RemoteError::Lost)?
            .checked()
            .map_err(RemoteError::Failed)
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
    /// [`RemoteHandle::connect`], one more for each reconnect.
    pub fn sessions_opened(&self) -> u64 {
        self.inner.opened.load(Ordering::Relaxed)
    }

    /// Whether a reconnect happened since a result last said so; taking it clears it.
    pub(crate) fn take_restarted(&self) -> bool {
        self.inner.restarted.swap(false, Ordering::Relaxed)
    }

    /// A fresh id of this side's for a far-side call or stream (`remote-1`, `bash-2`): two
    /// callers' ids never collide there.
    pub(crate) fn next_call_id(&self, prefix: &str) -> String {
        format!(
            "{prefix}-{}",
            self.inner.next_call.fetch_add(1, Ordering::Relaxed)
        )
    }

    /// The context texts of users' commands run through this handle.
    pub(crate) fn context(&self) -> &Mutex<Vec<String>> {
        &self.inner.context
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

/// Tells the far side, with a `hello` that carries only capabilities, each time this side
/// turns from having no subscriber that answers hidden input to having one, or back, so that
/// its results say where the person answers; `told` is what the far side was last told. A lost
/// connection is not reopened for it: the next connection's `hello` says it. Ends with the
/// session.
async fn tell_answerers(
    session: std::sync::Weak<Inner>,
    mut answerers: tokio::sync::watch::Receiver<usize>,
    mut told: bool,
) {
    while answerers.changed().await.is_ok() {
        let answerable = *answerers.borrow_and_update() > 0;
        if answerable == told {
            continue;
        }
        let Some(inner) = session.upgrade() else {
            return;
        };
        let session = RemoteHandle { inner };
        let hello = Command::Hello {
            protocol: Some(u64::from(RPC_PROTOCOL)),
            settings: None,
            capabilities: Some(session.capabilities()),
        };
        if let Ok(connection) = session.reach(Reach::IfConnected).await {
            let _ = connection.request(hello).await;
        }
        told = answerable;
    }
}

impl Answer {
    /// Its `data` as it was written (`None` without one); `Err` with the far side's reason for
    /// a `success: false` answer.
    pub(crate) fn checked(self) -> Result<Option<Box<RawValue>>, String> {
        if self.success {
            return Ok(self.data);
        }
        Err(self
            .error
            .unwrap_or_else(|| "the far side failed the request without saying why".to_owned()))
    }

    /// Its `data` read as a `T` (`null` when it has none); `Err` with the far side's reason for
    /// a `success: false` answer, or with why its `data` cannot be read.
    pub(crate) fn into_data<T: DeserializeOwned>(self) -> Result<T, String> {
        let data = self.checked()?;
        let raw = data.as_deref().map_or("null", RawValue::get);
        serde_json::from_str(raw)
            .map_err(|err| format!("the far side sent an answer this agentsh cannot read: {err}"))
    }
}

impl From<RemoteError> for HandleError {
    fn from(error: RemoteError) -> Self {
        match error {
            RemoteError::Lost(reason) => Self::Lost(reason),
            RemoteError::Failed(reason) => Self::Failed(reason),
            other @ (RemoteError::Connect { .. } | RemoteError::Refused { .. }) => {
                Self::Unreachable(other.to_string())
            }
        }
    }
}
