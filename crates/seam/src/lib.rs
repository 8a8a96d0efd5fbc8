#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod approval;
mod events;
mod handle;
mod host;

use std::sync::{Mutex, MutexGuard, PoisonError};

pub use agentsh_protocol::wire;
pub use agentsh_protocol::{InputRequest, JobEnd};
pub use approval::{Approver, FirstAnswer};
pub use events::{EventHub, SessionEvent, Subscription};
pub use handle::{
    BangCall, BangPolicy, Handle, HandleError, Reach, SessionHandle, ToolCall, answer_data,
};
pub use host::{CallEnd, CallHooks, CallHost, CallObserver, HostedCall, HostedCallKind};
pub use serde_json::value::RawValue;
pub use serde_json::{Value, json};
pub use tokio_util::sync::CancellationToken;

/// A boxed future that can be sent between threads: what the handle's methods return, so
/// that a surface holds any handle as `Arc<dyn SessionHandle>`.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// An interactive UI that can show a PTY command: it receives the running command's
/// controller and drives it (draws its terminal on its updates, sends keys, resizes) until the
/// command exits.
pub trait PtyHost: Send + Sync {
    /// A PTY command started. `program` holds its controller: for a session here,
    /// `agentsh-pty-runtime`'s `PtyController`, which stays valid until the command exits.
    fn attach(&self, call_id: &str, program: PtyAttachment);

    /// The size `(cols, rows)` the host will show the PTY at, when it knows it: the command
    /// then starts at that size (clamped to 20–400 columns × 5–200 rows), so what it runs
    /// first sees the host's width, with no race against a resize after
    /// [`attach`](Self::attach). `None` (the default): 120×40.
    fn size(&self) -> Option<(u16, u16)> {
        None
    }
}

/// What a [`PtyHost`] is handed for a PTY command: the command's controller, kept opaque here
/// so that the seam (and every surface and far side built on it) needs no PTY code; the host,
/// which draws the terminal, takes it out as the type it knows.
pub struct PtyAttachment(Box<dyn std::any::Any + Send>);

impl PtyAttachment {
    /// Hands `controller` over.
    pub fn new<T: std::any::Any + Send>(controller: T) -> Self {
        Self(Box::new(controller))
    }

    /// The controller, when it is a `T`; else the attachment back.
    pub fn take<T: std::any::Any>(self) -> Result<T, Self> {
        self.0
            .downcast::<T>()
            .map(|controller| *controller)
            .map_err(Self)
    }
}

impl std::fmt::Debug for PtyAttachment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PtyAttachment")
    }
}

/// `future`'s output if it is ready at its first poll (a session here answers a status or a
/// look at once), else the future, to be awaited elsewhere (a far side's answer takes a round
/// trip). What polls the future gives up nothing: the future, returned, goes on where it was.
pub fn ready_now<T>(mut future: BoxFuture<'_, T>) -> Result<T, BoxFuture<'_, T>> {
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut context) {
        std::task::Poll::Ready(value) => Ok(value),
        std::task::Poll::Pending => Err(future),
    }
}

/// Locks `mutex`, also when a thread panicked while holding it: every mutex of the surfaces
/// and sessions guards plain data (maps, lists, flags) that stays consistent across a panic.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
