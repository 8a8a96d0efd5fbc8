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
//! While a command prints a lot, the reader leaves the epoll set ([`Fifo::unpoll`]) and reads on
//! a short timer instead: a pipe in an epoll set wakes its watcher on every write, and a
//! pipeline writes 4–8 KiB at a time, so the wake-ups would cost more than the bytes.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

use crate::bootstrap::FIFO_PREFIX;

/// Kernel buffer asked for each FIFO (Linux; the default is 64 KiB). Fewer wake-ups for
/// commands that print a lot, and room for a millisecond of output between timed reads.
#[cfg(target_os = "linux")]
const PIPE_SIZE: libc::c_int = 1 << 20;

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

fn open_raw(path: &Path, flags: libc::c_int) -> io::Result<OwnedFd> {
    let c_path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains NUL"))?;
    // SAFETY: `c_path` is NUL-terminated.
    let fd = unsafe { libc::open(c_path.as_ptr(), flags | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the descriptor was just opened and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Reads once from a non-blocking descriptor.
pub(crate) fn read_fd(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        // SAFETY: `buf` is writable for its length.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// Puts `fd` into tokio's epoll set, for reading.
pub(crate) fn register(fd: OwnedFd) -> io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: the OwnedFd owns its descriptor for the whole life of the AsyncFd.
    unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }.map_err(io::Error::from)
}

impl Fifo {
    fn create(id: u64, path: PathBuf) -> io::Result<Self> {
        let c_path = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains NUL"))?;
        // SAFETY: `c_path` is NUL-terminated.
        if unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let reader = open_raw(&path, libc::O_RDONLY | libc::O_NONBLOCK)?;
        #[cfg(target_os = "linux")]
        // SAFETY: fcntl on our descriptor; failure (a lower per-user limit) is harmless.
        unsafe {
            libc::fcntl(reader.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_SIZE);
        }
        let holder = open_raw(&path, libc::O_WRONLY | libc::O_NONBLOCK)?;
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

    fn raw_fd(&self) -> RawFd {
        match &self.reader {
            Reader::Polled(fd) => fd.get_ref().as_raw_fd(),
            Reader::Unpolled(fd) => fd.as_raw_fd(),
            Reader::Gone => -1,
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

    /// Takes the reader out of the epoll set (see the module docs).
    pub(crate) fn unpoll(&mut self) {
        if let Reader::Polled(_) = self.reader
            && let Reader::Polled(fd) = std::mem::replace(&mut self.reader, Reader::Gone)
        {
            self.reader = Reader::Unpolled(fd.into_inner());
        }
    }

    /// Waits until the reader is readable and reads once (`WouldBlock` clears the readiness).
    /// Never ready while unpolled.
    pub(crate) async fn read_ready(&self, buf: &mut [u8]) -> io::Result<usize> {
        let Reader::Polled(fd) = &self.reader else {
            return std::future::pending().await;
        };
        loop {
            let mut guard = fd.readable().await?;
            match guard.try_io(|fd| read_fd(fd.get_ref().as_raw_fd(), buf)) {
                Ok(result) => return result,
                Err(_would_block) => {}
            }
        }
    }

    /// Reads once without waiting (`WouldBlock` when empty).
    pub(crate) fn read_now(&self, buf: &mut [u8]) -> io::Result<usize> {
        read_fd(self.raw_fd(), buf)
    }

    /// Opens agentsh's own writer (before a command starts).
    fn hold(&mut self) -> io::Result<()> {
        if self.holder.is_none() {
            self.holder = Some(open_raw(&self.path, libc::O_WRONLY | libc::O_NONBLOCK)?);
        }
        Ok(())
    }

    /// Drops agentsh's writer: from now on EOF means every writer is gone.
    pub(crate) fn release(&mut self) {
        self.holder = None;
    }

    /// The number of bytes buffered in the FIFO right now.
    pub(crate) fn pending(&self) -> usize {
        let mut pending: libc::c_int = 0;
        // SAFETY: FIONREAD writes one c_int through the valid pointer.
        let rc = unsafe { libc::ioctl(self.raw_fd(), libc::FIONREAD, &raw mut pending) };
        if rc == 0 {
            usize::try_from(pending).unwrap_or(0)
        } else {
            0
        }
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
            match read_fd(self.raw_fd(), &mut buf[..want]) {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    emit(&buf[..n]);
                    count -= n;
                }
            }
        }
    }

    /// Reads whatever is buffered right now (after [`Fifo::release`]), up to `limit` bytes,
    /// passing it to `emit`. Returns true at EOF (no writer left).
    pub(crate) fn drain_now(
        &self,
        buf: &mut [u8],
        limit: usize,
        emit: &mut dyn FnMut(&[u8]),
    ) -> bool {
        let mut taken = 0;
        while taken < limit {
            match read_fd(self.raw_fd(), buf) {
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
