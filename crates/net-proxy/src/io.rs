//! The client's side of a connection: its bytes read into a buffer, the task that copies an
//! upstream's answers back, the raw tunnel, and a polite close.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::splice::Pipe;

/// Size of the buffer that copies an upstream's bytes to the client. Downloads dominate: a large
/// buffer lets each read and write move much (on loopback, 1 MiB matches a blocking relay where
/// 256 KiB falls short). Its pages are only touched as far as the largest read fills it.
const DOWN_BUFFER: usize = 1024 * 1024;
/// Size of the buffer that copies a tunnel's client bytes to the upstream.
const UP_BUFFER: usize = 64 * 1024;
/// How much more is read from a client at a time while its head or body arrives.
const READ_SIZE: usize = 16 * 1024;
/// After an answer that closes the connection, how long the client's remaining bytes are
/// read and dropped (so that closing does not reset the connection before it reads it).
const LINGER: Duration = Duration::from_secs(1);
/// The most bytes dropped while lingering.
const LINGER_BYTES: usize = 1024 * 1024;

/// The read half of a client's connection and the bytes read but not yet used.
pub(crate) struct Inbound {
    pub(crate) read: OwnedReadHalf,
    pub(crate) buf: Vec<u8>,
}

/// What one [`Inbound::fill`] brought.
pub(crate) enum Fill {
    /// More bytes are in the buffer.
    Data,
    /// The client will send nothing more.
    Eof,
    /// The upstream's answers are over (the pump ended first).
    UpstreamDone(PumpEnd),
    /// The deadline passed.
    TimedOut,
    /// The connection failed.
    Failed,
}

impl Inbound {
    pub(crate) fn new(read: OwnedReadHalf) -> Self {
        Self {
            read,
            buf: Vec::with_capacity(READ_SIZE),
        }
    }

    /// Reads more bytes into the buffer, unless `until` passes or `pump` ends first.
    pub(crate) async fn fill(&mut self, until: Option<Instant>, pump: Option<&mut Pump>) -> Fill {
        self.buf.reserve(READ_SIZE);
        let deadline = async {
            match until {
                Some(until) => tokio::time::sleep_until(until).await,
                None => std::future::pending().await,
            }
        };
        let upstream = async {
            match pump {
                Some(pump) => pump.finished().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            read = self.read.read_buf(&mut self.buf) => match read {
                Ok(0) => Fill::Eof,
                Ok(_) => Fill::Data,
                Err(_) => Fill::Failed,
            },
            end = upstream => Fill::UpstreamDone(end),
            () = deadline => Fill::TimedOut,
        }
    }

    /// Reads until the buffer holds `n` bytes; false on end, failure or deadline.
    pub(crate) async fn need(&mut self, n: usize, until: Instant) -> bool {
        while self.buf.len() < n {
            if !matches!(self.fill(Some(until), None).await, Fill::Data) {
                return false;
            }
        }
        true
    }

    /// Drops the first `n` bytes of the buffer.
    pub(crate) fn consume(&mut self, n: usize) {
        self.buf.drain(..n.min(self.buf.len()));
    }
}

/// How a pump ended.
pub(crate) enum PumpEnd {
    /// Asked to stop: the client's write half is back, usable.
    Stopped(OwnedWriteHalf),
    /// The upstream closed (or failed) after every byte it sent was passed on.
    UpstreamClosed(OwnedWriteHalf),
    /// The client cannot be written to, or a stop cut a write short.
    ClientGone,
}

/// The task that copies an upstream's answers to the client, unparsed, while requests go the
/// other way. Dropping it ends the task.
pub(crate) struct Pump {
    handle: JoinHandle<PumpEnd>,
    stop: Option<oneshot::Sender<()>>,
}

impl Pump {
    /// Starts copying `upstream` to `client` on the current runtime.
    pub(crate) fn start(mut upstream: OwnedReadHalf, mut client: OwnedWriteHalf) -> Self {
        let (stop, mut stopped) = oneshot::channel::<()>();
        let handle = tokio::spawn(async move {
            // Spliced in the kernel when a pipe can be had.
            if let Ok(pipe) = Pipe::new() {
                loop {
                    let n = tokio::select! {
                        biased;
                        _ = &mut stopped => return PumpEnd::Stopped(client),
                        filled = pipe.fill(upstream.as_ref()) => match filled {
                            Ok(0) | Err(_) => return PumpEnd::UpstreamClosed(client),
                            Ok(n) => n,
                        },
                    };
                    tokio::select! {
                        biased;
                        _ = &mut stopped => return PumpEnd::ClientGone,
                        drained = pipe.drain(client.as_ref(), n) => if drained.is_err() {
                            return PumpEnd::ClientGone;
                        },
                    }
                }
            }
            let mut buf = vec![0; DOWN_BUFFER];
            loop {
                let n = tokio::select! {
                    biased;
                    _ = &mut stopped => return PumpEnd::Stopped(client),
                    read = upstream.read(&mut buf) => match read {
                        Ok(0) | Err(_) => return PumpEnd::UpstreamClosed(client),
                        Ok(n) => n,
                    },
                };
                tokio::select! {
                    biased;
                    _ = &mut stopped => return PumpEnd::ClientGone,
                    written = client.write_all(&buf[..n]) => if written.is_err() {
                        return PumpEnd::ClientGone;
                    },
                }
            }
        });
        Self {
            handle,
            stop: Some(stop),
        }
    }

    /// Waits for the pump to end by itself. Cancel-safe; not to be awaited again once it
    /// returned.
    pub(crate) async fn finished(&mut self) -> PumpEnd {
        (&mut self.handle).await.unwrap_or(PumpEnd::ClientGone)
    }

    /// Stops the pump and takes the client's write half back (none when it is unusable).
    pub(crate) async fn stop(mut self) -> Option<OwnedWriteHalf> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.finished().await {
            PumpEnd::Stopped(client) | PumpEnd::UpstreamClosed(client) => Some(client),
            PumpEnd::ClientGone => None,
        }
    }
}

impl Drop for Pump {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

/// Copies both ways between the client and `upstream` until both sides are done: first the
/// bytes the client sent already, then everything — spliced in the kernel when two pipes can
/// be had, else through buffers.
pub(crate) async fn tunnel(inbound: Inbound, write: OwnedWriteHalf, mut upstream: TcpStream) {
    if !inbound.buf.is_empty() && upstream.write_all(&inbound.buf).await.is_err() {
        return;
    }
    let Ok(mut client) = inbound.read.reunite(write) else {
        return;
    };
    if let (Ok(up), Ok(down)) = (Pipe::new(), Pipe::new()) {
        crate::splice::both_ways(&client, &upstream, &up, &down).await;
        return;
    }
    if let Err(err) =
        tokio::io::copy_bidirectional_with_sizes(&mut client, &mut upstream, UP_BUFFER, DOWN_BUFFER)
            .await
    {
        tracing::trace!(%err, "tunnel ended");
    }
}

/// Writes `bytes` to the client within `limit`; false when it could not.
pub(crate) async fn send(write: &mut OwnedWriteHalf, bytes: &[u8], limit: Duration) -> bool {
    matches!(
        tokio::time::timeout(limit, write.write_all(bytes)).await,
        Ok(Ok(()))
    )
}

/// Ends the client's connection after a last answer: shuts its write side, then reads and
/// drops what the client still sends for a moment, so that the answer is not lost to a reset.
pub(crate) async fn linger_close(mut write: OwnedWriteHalf, mut inbound: Inbound) {
    let _ = tokio::time::timeout(LINGER, write.shutdown()).await;
    let until = Instant::now() + LINGER;
    let mut dropped = 0;
    while dropped < LINGER_BYTES {
        dropped += inbound.buf.len();
        inbound.buf.clear();
        if !matches!(inbound.fill(Some(until), None).await, Fill::Data) {
            break;
        }
    }
}
