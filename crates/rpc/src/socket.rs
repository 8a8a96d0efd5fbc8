//! The RPC protocol on a Unix socket: a private listening socket, one session per connection.

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agentsh_seam::{CallHost, CancellationToken, Handle};
use rustix::fs::Mode;
use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType};
use tokio::net::UnixStream;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::output::{self, Message};
use crate::server::{Server, TokenStop};
use crate::{REQUEST_QUEUE, input};

/// Connections waiting to be accepted.
const BACKLOG: i32 = 64;

/// How long, after a connection's server ended, its last lines get to reach a client that
/// does not read them before the connection is closed regardless.
const WRITER_GRACE: Duration = Duration::from_secs(2);

/// How long accepting pauses after it failed (no descriptors left, no memory), so that a
/// lasting failure does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// The socket file's mode: the user's alone.
const SOCKET_MODE: u32 = 0o600;

/// Why [`listen`] did not listen. Each names the path.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    /// A socket is there and a server accepts connections on it.
    #[error("cannot listen on {}: another agentsh is listening there", .0.display())]
    Live(PathBuf),
    /// Something that is not a socket is there; it is left as it is.
    #[error("cannot listen on {}: it exists and is not a socket (left as it is)", .0.display())]
    NotASocket(PathBuf),
    /// A system call failed.
    #[error("cannot listen on {}: {what}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// What was being done (`bind`, `removing a stale socket`, …).
        what: &'static str,
        /// The error.
        #[source]
        source: io::Error,
    },
}

/// A listening Unix socket made by [`listen`]. Dropping it closes it and removes its socket
/// file, if the file at its path is still the one it made (the same inode): a socket another
/// process put there since is left alone.
#[derive(Debug)]
pub struct Listener {
    inner: tokio::net::UnixListener,
    path: PathBuf,
    /// Device and inode of the socket file it made.
    file: (u64, u64),
}

impl Listener {
    /// The next connection.
    pub async fn accept(&self) -> io::Result<UnixStream> {
        self.inner.accept().await.map(|(stream, _)| stream)
    }

    /// The path it listens on.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Ok(meta) = std::fs::symlink_metadata(&self.path)
            && (meta.dev(), meta.ino()) == self.file
            && let Err(err) = std::fs::remove_file(&self.path)
        {
            tracing::warn!("cannot remove {}: {err}", self.path.display());
        }
    }
}

/// Listens on `path`, a socket file of mode 0600. Must be called within a tokio runtime.
///
/// - Nothing at `path`: the socket is made there.
/// - A socket nobody listens on (connecting is refused: a server that died): it is replaced.
/// - A socket a server accepts on: [`ListenError::Live`].
/// - Anything else (a file, a directory, a symbolic link): [`ListenError::NotASocket`]; it is
///   never removed.
///
/// The mode is set on the socket before it is bound (`fchmod`), and `bind` creates the file
/// with that mode (masked by the umask), so the file is never more open than 0600, not even
/// for a moment; binding also never replaces a file, so nothing appears at `path` between the
/// check and the bind that is then lost. (A umask that takes the user's bits, or a system
/// that ignores a socket's mode before `bind`, is corrected with a `chmod` right after.)
pub fn listen(path: &Path) -> Result<Listener, ListenError> {
    let fail = |what: &'static str| {
        move |source: io::Error| ListenError::Io {
            path: path.to_owned(),
            what,
            source,
        }
    };
    let errno = |what: &'static str| move |err: rustix::io::Errno| fail(what)(err.into());
    if existing(path)? == Existing::Stale {
        remove_stale(path)?;
    }
    let address = SocketAddrUnix::new(path).map_err(errno("the path as a socket address"))?;
    let socket = new_socket().map_err(errno("socket"))?;
    rustix::fs::fchmod(&socket, Mode::from_raw_mode(SOCKET_MODE)).map_err(errno("fchmod"))?;
    rustix::net::bind(&socket, &address).map_err(|err| match err {
        // Something appeared at `path` since it was checked: say what.
        rustix::io::Errno::ADDRINUSE => match existing(path) {
            Err(err) => err,
            Ok(_) => ListenError::Live(path.to_owned()),
        },
        err => errno("bind")(err),
    })?;
    // The file at `path` is ours now: a failure from here on removes it again.
    let made = (|| {
        rustix::net::listen(&socket, BACKLOG).map_err(errno("listen"))?;
        let meta = std::fs::symlink_metadata(path).map_err(fail("stat after bind"))?;
        if meta.permissions().mode() & 0o777 != SOCKET_MODE {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(SOCKET_MODE))
                .map_err(fail("chmod"))?;
        }
        Ok(meta)
    })()
    .and_then(|meta| {
        let inner = std::os::unix::net::UnixListener::from(socket);
        let inner = tokio::net::UnixListener::from_std(inner)
            .map_err(fail("registering with the runtime"))?;
        Ok((meta, inner))
    });
    match made {
        Ok((meta, inner)) => Ok(Listener {
            inner,
            path: path.to_owned(),
            file: (meta.dev(), meta.ino()),
        }),
        Err(err) => {
            let _ = std::fs::remove_file(path);
            Err(err)
        }
    }
}

/// A Unix stream socket, non-blocking and close-on-exec.
fn new_socket() -> rustix::io::Result<OwnedFd> {
    rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::CLOEXEC | SocketFlags::NONBLOCK,
        None,
    )
}

/// What a connection attempt to a socket file says about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Probe {
    /// A server accepts connections (or its queue is full).
    Live,
    /// Connecting is refused: nobody listens (or the file went away).
    Stale,
    /// Connecting failed otherwise (no permission, …): it cannot be told.
    Unknown(rustix::io::Errno),
}

/// Connects to `path` without waiting: a server that is there is connected to at once (the
/// kernel queues the connection), or its queue is full.
fn probe(path: &Path) -> Probe {
    let connected = SocketAddrUnix::new(path).and_then(|address| {
        let socket = new_socket()?;
        rustix::net::connect(&socket, &address)
    });
    match connected {
        Ok(()) | Err(rustix::io::Errno::AGAIN) => Probe::Live,
        Err(rustix::io::Errno::CONNREFUSED | rustix::io::Errno::NOENT) => Probe::Stale,
        Err(err) => Probe::Unknown(err),
    }
}

/// What is at a path [`listen`] may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Existing {
    /// Nothing.
    Nothing,
    /// A socket nobody listens on.
    Stale,
}

/// What is at `path`: nothing or a stale socket, else the error that refuses it.
fn existing(path: &Path) -> Result<Existing, ListenError> {
    let io_error = |what, source| ListenError::Io {
        path: path.to_owned(),
        what,
        source,
    };
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Existing::Nothing),
        Err(err) => return Err(io_error("stat", err)),
    };
    if !meta.file_type().is_socket() {
        return Err(ListenError::NotASocket(path.to_owned()));
    }
    match probe(path) {
        Probe::Stale => Ok(Existing::Stale),
        Probe::Live => Err(ListenError::Live(path.to_owned())),
        Probe::Unknown(err) => Err(io_error("connecting to the socket there", err.into())),
    }
}

/// Removes the stale socket at `path` (gone already is fine).
fn remove_stale(path: &Path) -> Result<(), ListenError> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(ListenError::Io {
            path: path.to_owned(),
            what: "removing a stale socket",
            source,
        }),
    }
}

/// Serves one session on a connected socket until the client closes its side or `shutdown` is
/// cancelled, then ends every running call, shuts the session down (every tree ended) and
/// returns once the answers are written (or, to a client that does not read them, after 2 s).
///
/// Requests are read and answered as on stdio: the same framing, parsing and messages, lines
/// never interleaved, the session's warnings as `warning` events. `host`, if given, is told of
/// every call ([`CallHost`]). Must be called within a tokio runtime.
pub async fn serve_connection(
    stream: UnixStream,
    session: Handle,
    host: Option<Arc<dyn CallHost>>,
    shutdown: CancellationToken,
) {
    let (read, write) = stream.into_split();
    let (output, writer) = output::spawn_task_writer(write);
    let (requests_tx, requests) = mpsc::channel(REQUEST_QUEUE);
    let reader = tokio::spawn(input::read_async(read, requests_tx));
    let server = Server::new(Arc::clone(&session), output, host).judging_bash();
    // A task of its own: should the server panic (a host's hook panicking, say), the session
    // is still shut down and its trees ended.
    let served = tokio::spawn(server.serve(requests, TokenStop::new(shutdown))).await;
    if let Err(err) = served {
        tracing::error!("an RPC connection's server panicked: {err}");
        session.shutdown().await;
    }
    reader.abort();
    finish_writing(writer).await;
}

/// Accepts connections on `listener` until `shutdown` is cancelled, each served by
/// [`serve_connection`] with a session of its own from `new_session` (called on tokio's
/// blocking pool: making a session may take the rc snapshot). A connection whose session
/// cannot be made gets one `warning` event saying why (`new_session`'s error) and is closed.
///
/// On `shutdown` it stops accepting and removes the socket file (drops `listener`), then
/// waits until every connection has ended its calls and shut its session down. Must be called
/// within a tokio runtime.
pub async fn serve_listener<F, E>(
    listener: Listener,
    new_session: F,
    host: Option<Arc<dyn CallHost>>,
    shutdown: CancellationToken,
) where
    F: Fn() -> Result<Handle, E> + Send + Sync + 'static,
    E: std::fmt::Display + Send + 'static,
{
    let new_session = Arc::new(new_session);
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(stream) => {
                    connections.spawn(connection(
                        stream,
                        Arc::clone(&new_session),
                        host.clone(),
                        shutdown.clone(),
                    ));
                }
                Err(err) => {
                    tracing::warn!("cannot accept on {}: {err}", listener.path().display());
                    tokio::select! {
                        () = shutdown.cancelled() => break,
                        () = tokio::time::sleep(ACCEPT_BACKOFF) => {}
                    }
                }
            },
            Some(ended) = connections.join_next(), if !connections.is_empty() => {
                report_panic(ended);
            }
        }
    }
    drop(listener);
    while let Some(ended) = connections.join_next().await {
        report_panic(ended);
    }
}

/// For a host that shows the calls (the interactive mode's `--listen`): binds `path` now, as
/// [`listen`] does (so a live or foreign socket is an error before anything else starts),
/// then serves it on the runtime as [`serve_listener`] does, telling `host` of every call,
/// until `shutdown` is cancelled. Must be called within a tokio runtime.
pub fn listen_for_host<F, E>(
    path: &Path,
    new_session: F,
    host: Arc<dyn CallHost>,
    shutdown: CancellationToken,
) -> Result<tokio::task::JoinHandle<()>, ListenError>
where
    F: Fn() -> Result<Handle, E> + Send + Sync + 'static,
    E: std::fmt::Display + Send + 'static,
{
    let listener = listen(path)?;
    Ok(tokio::spawn(serve_listener(
        listener,
        new_session,
        Some(host),
        shutdown,
    )))
}

/// One accepted connection: its session, then serving it.
async fn connection<F, E>(
    stream: UnixStream,
    new_session: Arc<F>,
    host: Option<Arc<dyn CallHost>>,
    shutdown: CancellationToken,
) where
    F: Fn() -> Result<Handle, E> + Send + Sync + 'static,
    E: std::fmt::Display + Send + 'static,
{
    let made = tokio::task::spawn_blocking(move || new_session()).await;
    let error = match made {
        Ok(Ok(session)) => return serve_connection(stream, session, host, shutdown).await,
        Ok(Err(err)) => err.to_string(),
        Err(err) => format!("internal error: {err}"),
    };
    tracing::warn!("a connection's session cannot start: {error}");
    let (output, writer) = output::spawn_task_writer(stream);
    output.send(&Message::Warning {
        message: format!("cannot start a session: {error}"),
    });
    drop(output);
    finish_writing(writer).await;
}

/// Waits for a connection's writer to write what is queued, at most [`WRITER_GRACE`].
async fn finish_writing(writer: tokio::task::JoinHandle<()>) {
    let abort = writer.abort_handle();
    if tokio::time::timeout(WRITER_GRACE, writer).await.is_err() {
        tracing::debug!("a client does not read its last answers; closing the connection");
        abort.abort();
    }
}

/// Logs a connection task that panicked.
fn report_panic(ended: Result<(), tokio::task::JoinError>) {
    if let Err(err) = ended
        && err.is_panic()
    {
        tracing::error!("an RPC connection's task panicked: {err}");
    }
}
