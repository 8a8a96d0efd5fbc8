//! Per-command output channels: named pipes in the shell's private directory.
//!
//! agentsh opens a FIFO for reading (non-blocking) and also holds a writer of its own while a
//! command runs, so the reader never sees EOF before the shell has opened its end. When the
//! command has ended (its status arrived on the command channel, after the loop closed its
//! end), agentsh drops its writer: if no other writer is left (no background job of the command
//! kept its stdout), the FIFO is reused; otherwise it is drained — read and discarded — in the
//! background until its last writer closes, so late output never reaches a later command and
//! the job never dies of SIGPIPE. Then it returns to the pool.
//!
//! A pipe in an epoll set wakes its watcher on every write while the watcher waits; a reader
//! that takes everything buffered on each wake-up (`shell::run`) is woken once per write only
//! while it keeps up, and reads large pieces once the producer is faster.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use rustix::fs::{CWD, Mode, OFlags};
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

use crate::bootstrap::FIFO_PREFIX;

/// Kernel buffer asked for each FIFO (Linux; the default is 64 KiB). Fewer wake-ups for
/// commands that print a lot, and room for a millisecond of output between timed reads.
#[cfg(target_os = "linux")]
const PIPE_SIZE: usize = 1 << 20;

/// The read end, in tokio's epoll set or not.
enum Reader {
    Polled(AsyncFd<OwnedFd>),
    Unpolled(OwnedFd),
    /// Only while switching between the two.
    Gone,
}

pub(crate) struct Fifo {
    id: u64,
    path: PathBuf,
    reader: Reader,
    holder: Option<OwnedFd>,
    /// The reader saw EOF under its current registration (see [`Fifo::poll`]).
    stale: bool,
}

/// Opens `path` close-on-exec and non-blocking, for reading or for writing.
fn open_nonblocking(path: &Path, access: OFlags) -> io::Result<OwnedFd> {
    let flags = access | OFlags::NONBLOCK | OFlags::CLOEXEC;
    Ok(rustix::fs::open(path, flags, Mode::empty())?)
}

/// Reads once from a non-blocking descriptor.
pub(crate) fn read_fd(fd: impl AsFd, buf: &mut [u8]) -> io::Result<usize> {
    Ok(rustix::io::retry_on_intr(|| {
        rustix::io::read(&fd, &mut *buf)
    })?)
}

/// Puts `fd` into tokio's epoll set, for reading.
pub(crate) fn register(fd: OwnedFd) -> io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: the OwnedFd owns its descriptor for the whole life of the AsyncFd.
    unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }.map_err(io::Error::from)
}

impl Fifo {
    fn create(id: u64, path: PathBuf) -> io::Result<Self> {
        rustix::fs::mkfifoat(CWD, &path, Mode::from_raw_mode(0o600))?;
        let reader = open_nonblocking(&path, OFlags::RDONLY)?;
        // Failure (a lower per-user limit) is harmless: the default size is used.
        #[cfg(target_os = "linux")]
        let _ = rustix::pipe::fcntl_setpipe_size(&reader, PIPE_SIZE);
        let holder = open_nonblocking(&path, OFlags::WRONLY)?;
        Ok(Self {
            id,
            path,
            reader: Reader::Unpolled(reader),
            holder: Some(holder),
            stale: false,
        })
    }

    /// The number in the FIFO's name (`out<id>`).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The read end (`EBADF` in the instant it is being moved between the two states).
    fn reader(&self) -> io::Result<BorrowedFd<'_>> {
        match &self.reader {
            Reader::Polled(fd) => Ok(fd.get_ref().as_fd()),
            Reader::Unpolled(fd) => Ok(fd.as_fd()),
            Reader::Gone => Err(rustix::io::Errno::BADF.into()),
        }
    }

    /// Whether the reader is in the epoll set.
    pub(crate) fn is_polled(&self) -> bool {
        matches!(self.reader, Reader::Polled(_)) && !self.stale
    }

    /// Puts the reader into tokio's epoll set (anew when it saw EOF: tokio keeps a "read
    /// closed" readiness forever once it saw one). Call while agentsh's writer is open: epoll
    /// reports EOF at registration when no writer is.
    pub(crate) fn poll(&mut self) -> io::Result<()> {
        if self.is_polled() {
            return Ok(());
        }
        let fd = match std::mem::replace(&mut self.reader, Reader::Gone) {
            Reader::Polled(fd) => fd.into_inner(),
            Reader::Unpolled(fd) => fd,
            Reader::Gone => return Err(io::Error::other("FIFO reader lost")),
        };
        self.reader = Reader::Polled(register(fd)?);
        self.stale = false;
        Ok(())
    }

    /// Waits until the reader is readable and reads once (`WouldBlock` clears the readiness).
    /// Never ready while not in the epoll set.
    pub(crate) async fn read_ready(&self, buf: &mut [u8]) -> io::Result<usize> {
        let Reader::Polled(fd) = &self.reader else {
            return std::future::pending().await;
        };
        loop {
            let mut guard = fd.readable().await?;
            match guard.try_io(|fd| read_fd(fd.get_ref(), buf)) {
                Ok(result) => return result,
                Err(_would_block) => {}
            }
        }
    }

    /// Reads once without waiting (`WouldBlock` when empty).
    pub(crate) fn read_now(&self, buf: &mut [u8]) -> io::Result<usize> {
        read_fd(self.reader()?, buf)
    }

    /// Opens agentsh's own writer (before a command starts).
    fn hold(&mut self) -> io::Result<()> {
        if self.holder.is_none() {
            self.holder = Some(open_nonblocking(&self.path, OFlags::WRONLY)?);
        }
        Ok(())
    }

    /// Drops agentsh's writer: from now on EOF means every writer is gone.
    pub(crate) fn release(&mut self) {
        self.holder = None;
    }

    /// The number of bytes buffered in the FIFO right now.
    pub(crate) fn pending(&self) -> usize {
        self.reader()
            .ok()
            .and_then(|fd| rustix::io::ioctl_fionread(fd).ok())
            .and_then(|pending| usize::try_from(pending).ok())
            .unwrap_or(0)
    }

    /// Reads exactly the `count` bytes known to be buffered (fewer only if a read fails),
    /// passing them to `emit`.
    pub(crate) fn take_buffered(
        &self,
        mut count: usize,
        buf: &mut [u8],
        emit: &mut dyn FnMut(&[u8]),
    ) {
        while count > 0 {
            let want = count.min(buf.len());
            match self.read_now(&mut buf[..want]) {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    emit(&buf[..n]);
                    count -= n;
                }
            }
        }
    }

    /// Reads whatever is buffered right now, up to `limit` bytes,
    /// passing it to `emit`. Returns true at EOF (no writer left).
    pub(crate) fn drain_now(
        &self,
        buf: &mut [u8],
        limit: usize,
        emit: &mut dyn FnMut(&[u8]),
    ) -> bool {
        let mut taken = 0;
        while taken < limit {
            match self.read_now(buf) {
                Ok(0) => return true,
                Ok(n) => {
                    emit(&buf[..n]);
                    taken += n;
                }
                Err(_) => return false,
            }
        }
        false
    }
}

/// The FIFOs of one shell.
pub(crate) struct FifoPool {
    dir: PathBuf,
    next: u64,
    free: Vec<Fifo>,
    returned: Arc<Mutex<Vec<Fifo>>>,
}

impl FifoPool {
    pub(crate) fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            next: 0,
            free: Vec::new(),
            returned: Arc::default(),
        }
    }

    /// A FIFO with no writer but agentsh's own, in the epoll set, ready for the next command.
    pub(crate) fn take(&mut self) -> io::Result<Fifo> {
        self.free
            .append(&mut self.returned.lock().unwrap_or_else(PoisonError::into_inner));
        let mut fifo = if let Some(fifo) = self.free.pop() {
            fifo
        } else {
            self.next += 1;
            let name = format!("{FIFO_PREFIX}{}", self.next);
            Fifo::create(self.next, self.dir.join(name))?
        };
        fifo.hold()?;
        fifo.poll()?;
        Ok(fifo)
    }

    /// Takes a FIFO back after its command ended. Reused at once when every writer is gone;
    /// otherwise drained in the background until they are.
    pub(crate) fn give_back(&mut self, mut fifo: Fifo) {
        fifo.release();
        let mut scratch = [0u8; 4096];
        if fifo.drain_now(&mut scratch, 1 << 20, &mut |_| {}) {
            fifo.stale = true;
            self.free.push(fifo);
            return;
        }
        if fifo.poll().is_err() {
            return; // dropped: closed, and its writers get EPIPE only if they write again
        }
        let returned = Arc::clone(&self.returned);
        tokio::spawn(async move {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match fifo.read_ready(&mut buf).await {
                    Ok(0) => {
                        fifo.stale = true;
                        returned
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .push(fifo);
                        return;
                    }
                    Ok(_) => {}
                    Err(_) => return,
                }
            }
        });
    }
}
