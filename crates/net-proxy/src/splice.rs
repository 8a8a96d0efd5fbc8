//! Moving bytes between two sockets without copying them through this process: `splice(2)`
//! from the source socket into a pipe, and from the pipe into the destination socket (Linux).
//!
//! Why: on loopback, and on any fast link, a relay that reads into a buffer and writes it out
//! copies every byte twice more than a direct connection; with `splice` the kernel moves page
//! references instead, and a download through the proxy runs at nearly the speed of a direct
//! one. When a pipe cannot be had (the descriptor limit, a kernel without `splice`), callers
//! fall back to copying.

use std::io;
use std::os::fd::OwnedFd;

use rustix::pipe::{PipeFlags, SpliceFlags};
use tokio::io::Interest;
use tokio::net::TcpStream;

/// The pipe's size asked for: large moves per system call (the kernel may give less, e.g. once
/// a user's pipes hold more than `pipe-user-pages-soft`; that only makes moves smaller).
const PIPE_SIZE: usize = 1024 * 1024;

/// A pipe between two sockets, empty between [`fill`](Pipe::fill) and [`drain`](Pipe::drain)
/// pairs.
pub(crate) struct Pipe {
    read: OwnedFd,
    write: OwnedFd,
    /// Its capacity: the most one fill moves.
    size: usize,
}

impl Pipe {
    /// A new non-blocking pipe, as large as the kernel lets it be up to [`PIPE_SIZE`].
    pub(crate) fn new() -> io::Result<Self> {
        let (read, write) = rustix::pipe::pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK)?;
        let size = rustix::pipe::fcntl_setpipe_size(&write, PIPE_SIZE)
            .or_else(|_| rustix::pipe::fcntl_getpipe_size(&write))?;
        Ok(Self { read, write, size })
    }

    /// Moves what `from` has to give (waiting for it) into the pipe; 0 at `from`'s end.
    /// Cancel-safe: nothing has moved until it returns.
    pub(crate) async fn fill(&self, from: &TcpStream) -> io::Result<usize> {
        loop {
            from.readable().await?;
            let moved = from.try_io(Interest::READABLE, || {
                rustix::pipe::splice(
                    from,
                    None,
                    &self.write,
                    None,
                    self.size,
                    SpliceFlags::MOVE | SpliceFlags::NONBLOCK,
                )
                .map_err(io::Error::from)
            });
            match moved {
                Ok(n) => return Ok(n),
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
                Err(err) => return Err(err),
            }
        }
    }

    /// Moves the `n` bytes the pipe holds into `to`, waiting while it cannot take them.
    pub(crate) async fn drain(&self, to: &TcpStream, mut n: usize) -> io::Result<()> {
        while n > 0 {
            to.writable().await?;
            let moved = to.try_io(Interest::WRITABLE, || {
                rustix::pipe::splice(
                    &self.read,
                    None,
                    to,
                    None,
                    n,
                    SpliceFlags::MOVE | SpliceFlags::NONBLOCK,
                )
                .map_err(io::Error::from)
            });
            match moved {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(moved) => n -= moved,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {}
                Err(err) => return Err(err),
            }
        }
        Ok(())
    }
}

/// Moves everything `from` sends to `to` through `pipe`; at `from`'s end, shuts `to`'s
/// sending side (the other direction may go on).
async fn one_way(from: &TcpStream, to: &TcpStream, pipe: &Pipe) -> io::Result<()> {
    loop {
        let n = pipe.fill(from).await?;
        if n == 0 {
            let _ = rustix::net::shutdown(to, rustix::net::Shutdown::Write);
            return Ok(());
        }
        pipe.drain(to, n).await?;
    }
}

/// Relays both ways between `a` and `b` until both directions ended, or one failed.
pub(crate) async fn both_ways(a: &TcpStream, b: &TcpStream, up: &Pipe, down: &Pipe) {
    if let Err(err) = tokio::try_join!(one_way(a, b, up), one_way(b, a, down)) {
        tracing::trace!(%err, "spliced tunnel ended");
    }
}
