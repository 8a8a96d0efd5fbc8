//! The mode as the host of other agents' calls (`--listen`): a server that the program
//! composes with the mode (an RPC socket, one session per connection) tells it of each call,
//! which then appears live in the transcript.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use agentsh_seam::{CallEnd, CallHooks, CallHost, CallObserver, HostedCall, HostedCallKind, lock};
use tokio::sync::mpsc::UnboundedSender;

use crate::approval::TuiApprover;
use crate::host::{AppEvent, CallKey, HostedKind, HostedStart, PtySize, UiPtyHost};

/// The mode as the host of its connections' calls: each call becomes a transcript entry, its
/// PTY program the overlay, its updates and end events of the loop, its approval requests
/// questions for the person (asked together with the client).
pub(crate) struct TuiCallHost {
    events: UnboundedSender<AppEvent>,
    size: Arc<PtySize>,
    /// Keys of hosted calls: far above the mode's own, so the two never meet.
    next_key: AtomicU64,
    /// Connection numbers by session id, in order of their first call.
    connections: Mutex<HashMap<String, u64>>,
}

/// Where hosted calls' keys start.
const HOSTED_KEYS: CallKey = 1 << 48;

impl TuiCallHost {
    pub(crate) fn new(events: UnboundedSender<AppEvent>, size: Arc<PtySize>) -> Self {
        Self {
            events,
            size,
            next_key: AtomicU64::new(HOSTED_KEYS),
            connections: Mutex::new(HashMap::new()),
        }
    }
}

impl CallHost for TuiCallHost {
    fn call_started(&self, call: HostedCall) -> CallHooks {
        let key = self.next_key.fetch_add(1, Ordering::Relaxed);
        let connection = {
            let mut connections = lock(&self.connections);
            let next = connections.len() as u64 + 1;
            *connections.entry(call.session.id()).or_insert(next)
        };
        let (kind, appends) = match call.kind {
            HostedCallKind::Tool { name, arguments } => {
                (HostedKind::Tool { name, arguments }, false)
            }
            HostedCallKind::Bash { command } => (HostedKind::Bash { command }, true),
        };
        let _ = self.events.send(AppEvent::Hosted(Box::new(HostedStart {
            key,
            connection,
            session: call.session,
            kind,
            cancel: call.cancel,
        })));
        CallHooks {
            pty_host: Some(Arc::new(UiPtyHost {
                key,
                events: self.events.clone(),
                size: Arc::clone(&self.size),
            })),
            observer: Some(Box::new(Observer {
                key,
                events: self.events.clone(),
                appends,
                finished: false,
            })),
            approver: Some(Arc::new(TuiApprover {
                call: key,
                connection: Some(connection),
                events: self.events.clone(),
            })),
        }
    }
}

/// Follows one hosted call for the loop.
struct Observer {
    key: CallKey,
    events: UnboundedSender<AppEvent>,
    /// A `bash` request: its updates are pieces to append, not tails.
    appends: bool,
    finished: bool,
}

impl CallObserver for Observer {
    fn update(&mut self, text: &str) {
        let event = if self.appends {
            AppEvent::BangOutput(self.key, text.to_owned())
        } else {
            AppEvent::ToolUpdate(self.key, text.to_owned())
        };
        let _ = self.events.send(event);
    }

    fn finished(mut self: Box<Self>, end: CallEnd<'_>) {
        self.finished = true;
        let event = match end {
            CallEnd::Tool(outcome) => AppEvent::ToolDone(self.key, outcome.clone()),
            CallEnd::Bash(result) => AppEvent::BangDone(
                self.key,
                match result {
                    Ok(data) => Ok(data.result.clone()),
                    Err(err) => Err(err.to_string()),
                },
            ),
        };
        let _ = self.events.send(event);
    }
}

impl Drop for Observer {
    fn drop(&mut self) {
        // A call whose task panicked or was dropped never finished: its entry says so.
        if !self.finished {
            let _ = self.events.send(AppEvent::BangDone(
                self.key,
                Err("the call ended without a result (its task failed)".to_owned()),
            ));
        }
    }
}
