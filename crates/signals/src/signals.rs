//! SIGINT, SIGTERM and SIGHUP, the same for every surface: caught, so that agentsh ends every
//! command's tree and shuts down cleanly, then exits 128 + the signal (130, 143, 129), as a
//! shell reports a command killed by it; and [`Stop`], how a server is asked to stop.

use std::io;

use tokio::signal::unix::{Signal, SignalKind, signal};

/// Exit status after SIGINT (128 + 2, as shells report Ctrl-C).
pub const EXIT_INTERRUPTED: u8 = 130;
/// Exit status after SIGTERM (128 + 15).
const EXIT_TERMINATED: u8 = 143;
/// Exit status after SIGHUP (128 + 1).
const EXIT_HUNG_UP: u8 = 129;

/// The three signals, caught: from [`Signals::install`] on, none of them ends the process by
/// its default disposition.
pub struct Signals {
    interrupt: Signal,
    terminate: Signal,
    hangup: Signal,
}

impl Signals {
    /// Catches the three signals. Must be called within a tokio runtime (with its signal driver
    /// enabled); a signal that arrives before the first [`recv`](Self::recv) is kept for it.
    pub fn install() -> io::Result<Self> {
        Ok(Self {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    /// Waits for the next of the signals; returns the exit status it calls for.
    pub async fn recv(&mut self) -> u8 {
        tokio::select! {
            Some(()) = self.interrupt.recv() => EXIT_INTERRUPTED,
            Some(()) = self.terminate.recv() => EXIT_TERMINATED,
            Some(()) = self.hangup.recv() => EXIT_HUNG_UP,
            // The runtime is shutting down: no signal will come.
            else => std::future::pending().await,
        }
    }
}

impl std::fmt::Debug for Signals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Signals")
    }
}

/// What asks a server to stop before its input ends: for `agentsh rpc`, the signals.
pub trait Stop: Send {
    /// What a stop request carries back to the caller (the binary: the exit status it calls
    /// for).
    type Reason: Send;

    /// Waits for the next stop request. The first ends serving: every running call is
    /// cancelled and answered, then the session is shut down. One that comes while the calls
    /// are still answering stops that wait (the session is still shut down, every tree ended).
    /// Dropping the future before it is ready must lose no request.
    fn requested(&mut self) -> impl Future<Output = Self::Reason> + Send;
}

impl Stop for Signals {
    type Reason = u8;

    fn requested(&mut self) -> impl Future<Output = u8> + Send {
        self.recv()
    }
}
