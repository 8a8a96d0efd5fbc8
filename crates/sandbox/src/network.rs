//! A session's network allowlist (`sandbox.network = [hosts]`): the proxy its sandboxed
//! commands' connections go to, the port it takes inside every namespace, and the environment
//! that points commands at it.
//!
//! The namespace side (a listener made inside each sandboxed tree's network namespace and
//! handed out) is `agentsh-process`'s; the proxy (matching, resolving, HTTP and SOCKS5) is
//! `agentsh-net-proxy`'s. This module joins the two: [`SessionProxy`] is the
//! [`ProxyServer`] every tree's listener is given to, serving them all with one proxy per
//! session, started on the runtime of the session's first sandboxed spawn.

mod probe;

pub use probe::probe_network_allowlist;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use agentsh_net_proxy::{Allowlist, Link, Proxy, ProxyConfig, Resolver};
use agentsh_process::sandbox::{NetworkLink, NetworkProxy, ProxyServer};

use crate::error::SetupError;

/// The ports a session's proxy listener may take inside its namespaces: below the ephemeral
/// range (32768 and up), so that no connection a command makes inside is given it as its own
/// port, and above the well-known and common development ports.
const PORTS: std::ops::RangeInclusive<u16> = 20_000..=32_000;

/// The environment every command of a session with an allowlist gets: `HTTP_PROXY`,
/// `HTTPS_PROXY` and `ALL_PROXY` (the latter as `socks5h://`, so that names are resolved by
/// the proxy), each also in lower case, and `NO_PROXY` for the namespace's own loopback.
pub(crate) fn proxy_env(port: u16) -> BTreeMap<String, String> {
    let http = format!("http://127.0.0.1:{port}");
    let socks = format!("socks5h://127.0.0.1:{port}");
    let no_proxy = "localhost,127.0.0.1,::1".to_owned();
    let mut env = BTreeMap::new();
    for (name, value) in [
        ("HTTP_PROXY", &http),
        ("HTTPS_PROXY", &http),
        ("ALL_PROXY", &socks),
        ("NO_PROXY", &no_proxy),
    ] {
        env.insert(name.to_owned(), value.clone());
        env.insert(name.to_ascii_lowercase(), value.clone());
    }
    env
}

/// A session's network allowlist: the policy's network (port, hosts, server) and the handle
/// that ends the proxy at shutdown.
#[derive(Debug)]
pub(crate) struct SessionNetwork {
    pub(crate) proxy: NetworkProxy,
    server: Arc<SessionProxy>,
}

impl SessionNetwork {
    /// The network of a sandbox with an allowlist of `hosts` (as configured, checked at
    /// load): a port chosen for the session and the server of its proxy. The resolver is the
    /// system's, or the test map when `AGENTSH_TEST_RESOLVE` is set (a malformed one is an
    /// error).
    pub(crate) fn new(hosts: &[String]) -> Result<Self, SetupError> {
        let allowlist = Allowlist::parse(hosts)
            .map_err(|err| SetupError::Network(format!("sandbox.network: {err}")))?;
        let resolver = Resolver::from_env().map_err(|err| SetupError::Network(err.to_string()))?;
        let span = u32::from(PORTS.end() - PORTS.start()) + 1;
        let random = u32::from_str_radix(&agentsh_process::random_hex(4), 16).unwrap_or(0);
        let offset = u16::try_from(random % span).unwrap_or(0);
        let server = Arc::new(SessionProxy {
            config: ProxyConfig::new(allowlist, resolver),
            proxy: Mutex::new(ProxyState::NotStarted),
        });
        Ok(Self {
            proxy: NetworkProxy {
                port: PORTS.start() + offset,
                hosts: hosts.to_vec(),
                server: Arc::clone(&server) as Arc<dyn ProxyServer>,
            },
            server,
        })
    }

    /// Ends the proxy: every connection it serves and every listener it accepts on.
    pub(crate) fn shut_down(&self) {
        self.server.shut_down();
    }
}

impl Drop for SessionNetwork {
    /// The proxy lives as long as its session (shells a dropped session left in the cache
    /// still hold the server, not the proxy's connections).
    fn drop(&mut self) {
        self.server.shut_down();
    }
}

/// The server every sandboxed tree of a session gives its listener to: one proxy for them all,
/// started on the first listener (on the runtime of that spawn: the session's).
struct SessionProxy {
    config: ProxyConfig,
    /// The proxy, once the first listener came; `Ended` after the session's shutdown.
    proxy: Mutex<ProxyState>,
}

/// Where a session's proxy is.
enum ProxyState {
    /// No sandboxed tree has been started yet.
    NotStarted,
    Serving(Proxy),
    /// The session shut it down: a tree started later (a shell the session's end raced with)
    /// gets a link to a proxy that serves nothing, so its connections are refused.
    Ended,
}

impl std::fmt::Debug for SessionProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionProxy").finish_non_exhaustive()
    }
}

impl SessionProxy {
    fn state(&self) -> std::sync::MutexGuard<'_, ProxyState> {
        self.proxy.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn shut_down(&self) {
        if let ProxyState::Serving(proxy) = std::mem::replace(&mut *self.state(), ProxyState::Ended)
        {
            proxy.shutdown();
        }
    }
}

impl ProxyServer for SessionProxy {
    fn attach(&self, listener: std::net::TcpListener) -> Box<dyn NetworkLink> {
        let mut state = self.state();
        let runtime = tokio::runtime::Handle::current();
        let link = match &*state {
            ProxyState::Serving(proxy) => proxy.attach(listener),
            ProxyState::NotStarted => {
                let proxy = Proxy::new(self.config.clone(), runtime);
                let link = proxy.attach(listener);
                *state = ProxyState::Serving(proxy);
                link
            }
            ProxyState::Ended => {
                let proxy = Proxy::new(self.config.clone(), runtime);
                let link = proxy.attach(listener);
                proxy.shutdown();
                link
            }
        };
        Box::new(SessionLink(link))
    }
}

/// One tree's link to the session's proxy.
struct SessionLink(Link);

impl NetworkLink for SessionLink {
    fn mark(&self) -> u64 {
        self.0.mark()
    }

    fn refused_since(&self, mark: u64) -> Vec<String> {
        self.0.refused_since(mark)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_proxy_environment_names_the_port_in_both_cases() {
        let env = proxy_env(24_000);
        assert_eq!(env["HTTP_PROXY"], "http://127.0.0.1:24000");
        assert_eq!(env["https_proxy"], "http://127.0.0.1:24000");
        assert_eq!(env["ALL_PROXY"], "socks5h://127.0.0.1:24000");
        assert_eq!(env["all_proxy"], "socks5h://127.0.0.1:24000");
        assert_eq!(env["NO_PROXY"], "localhost,127.0.0.1,::1");
        assert_eq!(env["no_proxy"], "localhost,127.0.0.1,::1");
        assert_eq!(env.len(), 8);
    }

    /// A tree started after the session's end (a race with its shutdown) gets a link, not a
    /// panic, and nothing serves its connections.
    #[test]
    fn a_listener_after_shutdown_is_served_by_nothing() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(async {
            let network = SessionNetwork::new(&["example.com".to_owned()]).expect("network");
            network.shut_down();
            let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            let address = listener.local_addr().expect("address");
            let link = network.proxy.server.attach(listener);
            assert!(link.refused_since(0).is_empty());
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            // Refused, or accepted by nothing and closed: never answered.
            if let Ok(mut stream) = tokio::net::TcpStream::connect(address).await {
                use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
                let _ = stream
                    .write_all(b"CONNECT example.com:443 HTTP/1.1\r\n\r\n")
                    .await;
                let mut answer = Vec::new();
                let read = tokio::time::timeout(
                    std::time::Duration::from_secs(2),
                    stream.read_to_end(&mut answer),
                )
                .await;
                assert!(
                    read.is_err() || answer.is_empty(),
                    "{:?}",
                    String::from_utf8_lossy(&answer)
                );
            }
        });
    }

    #[test]
    fn a_session_port_is_in_its_range() {
        for _ in 0..50 {
            let network = SessionNetwork::new(&["example.com".to_owned()]).expect("network");
            assert!(
                PORTS.contains(&network.proxy.port),
                "{}",
                network.proxy.port
            );
        }
    }
}
