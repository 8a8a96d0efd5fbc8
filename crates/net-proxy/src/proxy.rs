//! The proxy: its settings, the listeners it serves (one [`Link`] each), the connections it
//! holds open, and the refusals recorded per listener.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::runtime::Handle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::config::ProxyConfig;
use crate::ctx::{Ctx, Refusals};
use crate::io::{Fill, Inbound};
use crate::{Allowlist, http, socks};

/// The allowlist proxy: serves the listeners given to [`Proxy::attach`] on a tokio runtime.
/// Clones share it.
#[derive(Clone)]
pub struct Proxy {
    shared: Arc<Shared>,
}

/// What the clones of a proxy and its links share. Dropped with the last of them, it ends
/// every accept loop and connection.
struct Shared {
    config: Arc<ProxyConfig>,
    runtime: Handle,
    /// Cancelled on shutdown: ends every task of the proxy.
    stop: CancellationToken,
    open: Arc<AtomicUsize>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("allowlist", &self.shared.config.allowlist.display())
            .field("open_connections", &self.open_connections())
            .finish_non_exhaustive()
    }
}

impl Proxy {
    /// A proxy that serves on `runtime` (a handle: the caller may be on any thread).
    pub fn new(config: ProxyConfig, runtime: Handle) -> Self {
        Self {
            shared: Arc::new(Shared {
                config: Arc::new(config),
                runtime,
                stop: CancellationToken::new(),
                open: Arc::new(AtomicUsize::new(0)),
            }),
        }
    }

    /// Serves the connections accepted on `listener` (blocking or not) until the returned
    /// [`Link`] is dropped. Callable from any thread, inside the runtime or outside it.
    pub fn attach(&self, listener: std::net::TcpListener) -> Link {
        let link = self.shared.stop.child_token();
        let refusals = Arc::new(Refusals::default());
        let ctx = Ctx {
            config: Arc::clone(&self.shared.config),
            refusals: Arc::clone(&refusals),
        };
        let accept = Accept {
            link: link.clone(),
            all: self.shared.stop.clone(),
            open: Arc::clone(&self.shared.open),
            ctx,
        };
        self.shared.runtime.spawn(accept.run(listener));
        Link {
            _shared: Arc::clone(&self.shared),
            stop: link,
            refusals,
        }
    }

    /// How many connections are open now.
    pub fn open_connections(&self) -> usize {
        self.shared.open.load(Ordering::SeqCst)
    }

    /// Ends every accept loop and every connection now. Dropping the last clone of the proxy
    /// and the last of its links does the same.
    pub fn shutdown(&self) {
        self.shared.stop.cancel();
    }

    /// The hosts connections may reach.
    pub fn allowlist(&self) -> &Allowlist {
        &self.shared.config.allowlist
    }
}

/// One listener served by a [`Proxy`] (one per sandboxed network namespace), and the
/// refusals of the connections accepted on it.
///
/// Dropping it stops accepting and closes the listener; connections already accepted go on
/// until either side closes them.
pub struct Link {
    _shared: Arc<Shared>,
    stop: CancellationToken,
    refusals: Arc<Refusals>,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link")
            .field("stopped", &self.stop.is_cancelled())
            .finish_non_exhaustive()
    }
}

impl Link {
    /// A mark of now, for [`Link::refused_since`].
    pub fn mark(&self) -> u64 {
        self.refusals.mark()
    }

    /// The `host:port`s refused on this listener's connections since `mark`: each once, in
    /// the order of their first refusal since then; a name as the client wrote it,
    /// lower-cased; an IPv6 address in brackets (`[::1]:443`).
    pub fn refused_since(&self, mark: u64) -> Vec<String> {
        self.refusals.since(mark)
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// One listener's accept loop.
struct Accept {
    /// Cancelled when the link is dropped (or the proxy shut down).
    link: CancellationToken,
    /// Cancelled when the proxy is shut down.
    all: CancellationToken,
    open: Arc<AtomicUsize>,
    ctx: Ctx,
}

/// Counts an open connection while it lives.
struct OpenGuard(Arc<AtomicUsize>);

impl OpenGuard {
    fn new(open: &Arc<AtomicUsize>) -> Self {
        open.fetch_add(1, Ordering::SeqCst);
        Self(Arc::clone(open))
    }
}

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Accept {
    async fn run(self, listener: std::net::TcpListener) {
        let listener = match listener
            .set_nonblocking(true)
            .and_then(|()| TcpListener::from_std(listener))
        {
            Ok(listener) => listener,
            Err(err) => {
                tracing::warn!(%err, "the proxy cannot serve this listener");
                return;
            }
        };
        loop {
            let accepted = tokio::select! {
                biased;
                () = self.link.cancelled() => return,
                accepted = listener.accept() => accepted,
            };
            match accepted {
                Ok((stream, _)) => {
                    let guard = OpenGuard::new(&self.open);
                    let all = self.all.clone();
                    let ctx = self.ctx.clone();
                    tokio::spawn(async move {
                        let _guard = guard;
                        tokio::select! {
                            biased;
                            () = all.cancelled() => {}
                            () = serve(stream, ctx) => {}
                        }
                    });
                }
                Err(err) if err.kind() == std::io::ErrorKind::InvalidInput => {
                    tracing::warn!(%err, "the proxy's listener does not listen");
                    return;
                }
                Err(err) => {
                    // Out of descriptors, most likely: wait a little rather than spin.
                    tracing::warn!(%err, "the proxy cannot accept a connection");
                    tokio::select! {
                        () = self.link.cancelled() => return,
                        () = tokio::time::sleep(Duration::from_millis(50)) => {}
                    }
                }
            }
        }
    }
}

/// Serves one client: SOCKS5 when its first byte is 5, else HTTP.
async fn serve(stream: TcpStream, ctx: Ctx) {
    let _ = stream.set_nodelay(true);
    let deadline = Instant::now() + ctx.config.head_timeout;
    let (read, write) = stream.into_split();
    let mut inbound = Inbound::new(read);
    if !matches!(inbound.fill(Some(deadline), None).await, Fill::Data) {
        return;
    }
    if inbound.buf[0] == socks::VERSION {
        socks::serve(inbound, write, &ctx, deadline).await;
    } else {
        http::serve(inbound, write, &ctx, deadline).await;
    }
}
