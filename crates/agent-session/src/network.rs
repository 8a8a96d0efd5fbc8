//! A session's network allowlist (`sandbox.network = [hosts]`): the proxy its sandboxed
//! commands' connections go to, the port it takes inside every namespace, and the environment
//! that points commands at it.
//!
//! The namespace side (a listener made inside each sandboxed tree's network namespace and
//! handed out) is `agentsh-process`'s; the proxy (matching, resolving, HTTP and SOCKS5) is
//! `agentsh-net-proxy`'s. This module joins the two: [`SessionGate`] is the
//! [`NetworkGate`] every tree's listener is given to, serving them all with one proxy per
//! session, started on the runtime of the session's first sandboxed spawn.

mod probe;

pub use probe::probe_network_allowlist;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use agentsh_net_proxy::{Allowlist, Link, Proxy, ProxyConfig, Resolver};
use agentsh_process::sandbox::{NetworkGate, NetworkLink, NetworkProxy};

use crate::error::SessionError;

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

/// A session's network allowlist: the policy's network (port, hosts, gate) and the handle
/// that ends the proxy at shutdown.
#[derive(Debug)]
pub(crate) struct SessionNetwork {
    pub(crate) proxy: NetworkProxy,
    gate: Arc<SessionGate>,
}

impl SessionNetwork {
    /// The network of a sandbox with an allowlist of `hosts` (as configured, checked at
    /// load): a port chosen for the session and the gate of its proxy. The resolver is the
    /// system's, or the test map when `AGENTSH_TEST_RESOLVE` is set (a malformed one is an
    /// error).
    pub(crate) fn new(hosts: &[String]) -> Result<Self, SessionError> {
        let allowlist = Allowlist::parse(hosts)
            .map_err(|err| SessionError::Network(format!("sandbox.network: {err}")))?;
        let resolver =
            Resolver::from_env().map_err(|err| SessionError::Network(err.to_string()))?;
        let span = u32::from(PORTS.end() - PORTS.start()) + 1;
        let random = u32::from_str_radix(&agentsh_process::random_hex(4), 16).unwrap_or(0);
        let offset = u16::try_from(random % span).unwrap_or(0);
        let gate = Arc::new(SessionGate {
            config: Mutex::new(Some(ProxyConfig::new(allowlist, resolver))),
            proxy: Mutex::new(None),
        });
        Ok(Self {
            proxy: NetworkProxy {
                port: PORTS.start() + offset,
                hosts: hosts.to_vec(),
                gate: Arc::clone(&gate) as Arc<dyn NetworkGate>,
            },
            gate,
        })
    }

    /// Ends the proxy: every connection it serves and every listener it accepts on.
    pub(crate) fn shut_down(&self) {
        self.gate.shut_down();
    }
}

impl Drop for SessionNetwork {
    /// The proxy lives as long as its session (shells a dropped session left in the cache
    /// still hold the gate, not the proxy's connections).
    fn drop(&mut self) {
        self.gate.shut_down();
    }
}

/// The gate every sandboxed tree of a session gives its listener to: one proxy for them all,
/// started on the first listener (on the runtime of that spawn: the session's).
struct SessionGate {
    /// The configuration, until the proxy is started.
    config: Mutex<Option<ProxyConfig>>,
    proxy: Mutex<Option<Proxy>>,
}

impl std::fmt::Debug for SessionGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionGate").finish_non_exhaustive()
    }
}

impl SessionGate {
    fn shut_down(&self) {
        let proxy = self
            .proxy
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(proxy) = proxy {
            proxy.shutdown();
        }
    }
}

impl NetworkGate for SessionGate {
    fn attach(&self, listener: std::net::TcpListener) -> Box<dyn NetworkLink> {
        let mut proxy = self.proxy.lock().unwrap_or_else(PoisonError::into_inner);
        let proxy = proxy.get_or_insert_with(|| {
            let config = self
                .config
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take()
                .expect("the configuration is taken once, by the proxy it starts");
            Proxy::new(config, tokio::runtime::Handle::current())
        });
        Box::new(SessionLink(proxy.attach(listener)))
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
