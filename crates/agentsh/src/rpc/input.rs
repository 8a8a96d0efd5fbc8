//! Reading requests from stdin: framing, parsing, and handing them to the dispatcher.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::sync::mpsc;

use super::framing::{Frame, Framer, LineReader, MAX_LINE_BYTES};
use super::request::{Request, RequestError, parse_frame};

/// What the dispatcher receives for each line.
pub type Incoming = Result<Request, RequestError>;

/// Bytes read from stdin at a time.
const READ_BYTES: usize = 64 * 1024;

/// Stdin, made non-blocking and registered with the runtime. Only for pipes and sockets: their
/// open file is the client's channel to us alone. A terminal or a file is shared with whoever
/// else uses it, and non-blocking mode would leak to them. Dropping it restores the flags.
pub struct AsyncStdin {
    fd: AsyncFd<OwnedFd>,
    restore_flags: libc::c_int,
}

impl AsyncStdin {
    /// Stdin as an [`AsyncStdin`], or `None` (not a pipe or socket, or a call failed) for the
    /// blocking reader. Must be called within a runtime.
    pub fn open() -> Option<Self> {
        // SAFETY: fstat on fd 0 into a zeroed stat buffer.
        let mut stat: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(libc::STDIN_FILENO, &raw mut stat) } != 0 {
            return None;
        }
        let kind = stat.st_mode & libc::S_IFMT;
        if kind != libc::S_IFIFO && kind != libc::S_IFSOCK {
            return None;
        }
        // SAFETY: duplicating fd 0 (close-on-exec); the copy is owned below.
        let copy = unsafe { libc::fcntl(libc::STDIN_FILENO, libc::F_DUPFD_CLOEXEC, 3) };
        if copy < 0 {
            return None;
        }
        // SAFETY: `copy` is a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(copy) };
        // SAFETY: fcntl on our own descriptor.
        let flags = unsafe { libc::fcntl(copy, libc::F_GETFL) };
        if flags < 0 || unsafe { libc::fcntl(copy, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
            return None;
        }
        // SAFETY: the OwnedFd owns its descriptor for the whole life of the AsyncFd.
        match unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) } {
            Ok(fd) => Some(Self {
                fd,
                restore_flags: flags,
            }),
            Err(err) => {
                let err: io::Error = err.into();
                tracing::debug!("stdin cannot be polled ({err}); reading it on a thread");
                // SAFETY: fcntl on fd 0: undo the change above.
                unsafe { libc::fcntl(libc::STDIN_FILENO, libc::F_SETFL, flags) };
                None
            }
        }
    }

    /// Reads what is there, waiting until something is; `Ok(0)` at end of input.
    async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut ready = self.fd.readable().await?;
            match ready.try_io(|fd| {
                // SAFETY: reading into a valid buffer of `buf.len()` bytes.
                let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
                if n < 0 {
                    Err(io::Error::last_os_error())
                } else {
                    Ok(n.unsigned_abs())
                }
            }) {
                Ok(Err(err)) if err.kind() == io::ErrorKind::Interrupted => {}
                Ok(result) => return result,
                Err(_would_block) => {}
            }
        }
    }
}

impl Drop for AsyncStdin {
    fn drop(&mut self) {
        // SAFETY: fcntl on our own descriptor (it shares fd 0's open file).
        unsafe { libc::fcntl(self.fd.as_raw_fd(), libc::F_SETFL, self.restore_flags) };
    }
}

/// Parses one line; `None` for a line that carries no request (blank).
fn incoming(frame: &Frame) -> Option<Incoming> {
    match parse_frame(frame) {
        Ok(None) => None,
        Ok(Some(request)) => Some(Ok(request)),
        Err(err) => Some(Err(err)),
    }
}

/// The reader task: lines from a non-blocking stdin until end of input (or until the
/// dispatcher is gone). Dropping `requests` tells the dispatcher that input ended.
pub async fn read_async(stdin: AsyncStdin, requests: mpsc::Sender<Incoming>) {
    let mut framer = Framer::new(MAX_LINE_BYTES);
    let mut buf = vec![0u8; READ_BYTES];
    loop {
        let n = match stdin.read(&mut buf).await {
            Ok(n) => n,
            Err(err) => {
                tracing::warn!("cannot read stdin: {err}; treating it as closed");
                0
            }
        };
        if n == 0 {
            if let Some(request) = framer.finish().as_ref().and_then(incoming) {
                let _ = requests.send(request).await;
            }
            return;
        }
        let mut chunk = &buf[..n];
        while !chunk.is_empty() {
            let (used, frame) = framer.push(chunk);
            chunk = &chunk[used..];
            if let Some(request) = frame.as_ref().and_then(incoming)
                && requests.send(request).await.is_err()
            {
                return;
            }
        }
    }
}

/// The reader thread: lines from a blocking stdin (a terminal, a file).
pub fn read_blocking(requests: &mpsc::Sender<Incoming>) {
    let mut lines = LineReader::new(io::stdin().lock(), MAX_LINE_BYTES);
    loop {
        let frame = match lines.next_frame() {
            Ok(Some(frame)) => frame,
            Ok(None) => return,
            Err(err) => {
                tracing::warn!("cannot read stdin: {err}; treating it as closed");
                return;
            }
        };
        if let Some(request) = incoming(&frame)
            && requests.blocking_send(request).is_err()
        {
            return;
        }
    }
}
