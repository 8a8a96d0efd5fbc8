//! Reading requests from stdin or a socket: framing, parsing, and handing them to the
//! dispatcher.

use std::io;
use std::os::fd::OwnedFd;

use rustix::fs::{FileType, OFlags};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncReadExt, Interest};
use tokio::net::unix::OwnedReadHalf;
use tokio::sync::mpsc;

use agentsh_jsonl::{LineReader, LineSplitter, MAX_REQUEST_LINE_BYTES};
use agentsh_protocol::wire::Request;

use crate::request::{RequestError, parse_input_line};

/// What the dispatcher receives for each line: a request, `None` for a blank line (no
/// request, but input all the same: it renews a lease), or why the line is no request.
pub type Incoming = Result<Option<Request>, RequestError>;

/// Bytes read from stdin at a time.
const READ_BYTES: usize = 64 * 1024;

/// Stdin, made non-blocking and registered with the runtime. Only for pipes and sockets: their
/// open file is the client's channel to us alone. A terminal or a file is shared with whoever
/// else uses it, and non-blocking mode would leak to them. Dropping it restores the flags.
pub struct AsyncStdin {
    fd: AsyncFd<OwnedFd>,
    restore_flags: OFlags,
}

impl AsyncStdin {
    /// Stdin as an [`AsyncStdin`], or `None` (not a pipe or socket, or a call failed) for the
    /// blocking reader. Must be called within a runtime.
    pub fn open() -> Option<Self> {
        let stdin = rustix::stdio::stdin();
        let kind = FileType::from_raw_mode(rustix::fs::fstat(stdin).ok()?.st_mode);
        if kind != FileType::Fifo && kind != FileType::Socket {
            return None;
        }
        // A close-on-exec copy (above the standard descriptors) that the AsyncFd owns; it
        // shares fd 0's open file, and with it the flags.
        let fd = rustix::io::fcntl_dupfd_cloexec(stdin, 3).ok()?;
        let flags = rustix::fs::fcntl_getfl(&fd).ok()?;
        rustix::fs::fcntl_setfl(&fd, flags | OFlags::NONBLOCK).ok()?;
        // SAFETY: the OwnedFd owns its descriptor for the whole life of the AsyncFd.
        match unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) } {
            Ok(fd) => Some(Self {
                fd,
                restore_flags: flags,
            }),
            Err(err) => {
                let err: io::Error = err.into();
                tracing::debug!("stdin cannot be polled ({err}); reading it on a thread");
                // Undo the change above.
                let _ = rustix::fs::fcntl_setfl(stdin, flags);
                None
            }
        }
    }

    /// Reads what is there, waiting until something is; `Ok(0)` at end of input.
    async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut ready = self.fd.readable().await?;
            match ready
                .try_io(|fd| rustix::io::read(fd.get_ref(), &mut *buf).map_err(io::Error::from))
            {
                Ok(Err(err)) if err.kind() == io::ErrorKind::Interrupted => {}
                Ok(result) => return result,
                Err(_would_block) => {}
            }
        }
    }
}

impl Drop for AsyncStdin {
    fn drop(&mut self) {
        // Our copy shares fd 0's open file: this undoes the change for everyone who has it.
        let _ = rustix::fs::fcntl_setfl(self.fd.get_ref(), self.restore_flags);
    }
}

/// Where requests are read from asynchronously: a non-blocking stdin or a socket.
pub trait Source: Send {
    /// What it is, for a log line (`stdin`).
    const NAME: &'static str;

    /// Reads what is there, waiting until something is; `Ok(0)` at end of input.
    fn read_some(&mut self, buf: &mut [u8]) -> impl Future<Output = io::Result<usize>> + Send;
}

impl Source for AsyncStdin {
    const NAME: &'static str = "stdin";

    async fn read_some(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.read(buf).await
    }
}

impl Source for OwnedReadHalf {
    const NAME: &'static str = "the connection";

    async fn read_some(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.read(buf).await
    }
}

/// The reader task: lines from a non-blocking stdin or a socket until end of input (or until
/// the dispatcher is gone). Dropping `requests` tells the dispatcher that input ended.
pub async fn read_async<S: Source>(mut source: S, requests: mpsc::Sender<Incoming>) {
    let mut splitter = LineSplitter::new(MAX_REQUEST_LINE_BYTES);
    let mut buf = vec![0u8; READ_BYTES];
    loop {
        let n = match source.read_some(&mut buf).await {
            Ok(n) => n,
            Err(err) => {
                tracing::warn!("cannot read {}: {err}; treating it as closed", S::NAME);
                0
            }
        };
        if n == 0 {
            if let Some(line) = splitter.finish() {
                let _ = requests.send(parse_input_line(&line)).await;
            }
            return;
        }
        let mut chunk = &buf[..n];
        while !chunk.is_empty() {
            let (used, line) = splitter.push(chunk);
            chunk = &chunk[used..];
            if let Some(line) = line
                && requests.send(parse_input_line(&line)).await.is_err()
            {
                return;
            }
        }
    }
}

/// The reader thread: lines from a blocking stdin (a terminal, a file).
pub fn read_blocking(requests: &mpsc::Sender<Incoming>) {
    let mut lines = LineReader::new(io::stdin().lock(), MAX_REQUEST_LINE_BYTES);
    loop {
        let line = match lines.next_line() {
            Ok(Some(line)) => line,
            Ok(None) => return,
            Err(err) => {
                tracing::warn!("cannot read stdin: {err}; treating it as closed");
                return;
            }
        };
        if requests.blocking_send(parse_input_line(&line)).is_err() {
            return;
        }
    }
}
