//! From a requested `host:port` to a connected upstream: the allowlist check, one resolution,
//! the special-address filter, and the connection, or the refusal with its text.

use std::io;
use std::net::{IpAddr, SocketAddr};

use tokio::net::TcpStream;

use crate::config::ProxyConfig;
use crate::host::{Host, target};
use crate::special::is_special_address;

/// Why a request was not connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RefusalKind {
    /// The host is not listed, or not canonical.
    NotListed,
    /// A listed name resolved only to addresses it may not lead to.
    ResolvesTo,
    /// A listed name did not resolve.
    Unresolved,
    /// The upstream could not be reached.
    ConnectFailed(io::ErrorKind),
}

/// A request that was not connected, with the text the client is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub(crate) kind: RefusalKind,
    /// `host:port` as refusals are recorded.
    pub(crate) target: String,
    /// What the client is told.
    pub(crate) message: String,
}

impl Refusal {
    /// A host that is not listed (or not canonical) on `port`.
    pub(crate) fn not_listed(config: &ProxyConfig, host: &str, port: u16) -> Self {
        let target = target(host, port);
        let message = format!(
            "agentsh sandbox: {target} is not in the allowed hosts ({})",
            config.allowlist.display()
        );
        Self {
            kind: RefusalKind::NotListed,
            target,
            message,
        }
    }

    /// Whether the link records it (a refusal by the allowlist, not a failure).
    pub(crate) fn recorded(&self) -> bool {
        matches!(self.kind, RefusalKind::NotListed | RefusalKind::ResolvesTo)
    }

    /// The HTTP status line's code and reason.
    pub(crate) fn http_status(&self) -> &'static str {
        match self.kind {
            RefusalKind::NotListed | RefusalKind::ResolvesTo => "403 Forbidden",
            RefusalKind::Unresolved | RefusalKind::ConnectFailed(_) => "502 Bad Gateway",
        }
    }

    /// The SOCKS5 reply code.
    pub(crate) fn socks_reply(&self) -> u8 {
        match self.kind {
            RefusalKind::NotListed | RefusalKind::ResolvesTo => 2,
            RefusalKind::Unresolved => 4,
            RefusalKind::ConnectFailed(kind) => match kind {
                io::ErrorKind::ConnectionRefused => 5,
                io::ErrorKind::HostUnreachable | io::ErrorKind::TimedOut => 4,
                io::ErrorKind::NetworkUnreachable => 3,
                _ => 1,
            },
        }
    }
}

/// Checks `host` (as written, without brackets) on `port` and connects to it: an IP address
/// that is listed as is; a listed name through the addresses of one resolution that are not
/// special (or are listed themselves), tried in order.
pub(crate) async fn dial(
    config: &ProxyConfig,
    host: &str,
    port: u16,
) -> Result<TcpStream, Refusal> {
    let parsed = match Host::parse(host) {
        Ok(parsed) if config.allowlist.allows_host(&parsed, port) => parsed,
        _ => return Err(Refusal::not_listed(config, host, port)),
    };
    let shown = host.to_ascii_lowercase();
    let addrs = match parsed {
        Host::Ip(ip) => vec![ip],
        Host::Name(name) => {
            let found = tokio::time::timeout(config.connect_timeout, config.resolver.lookup(&name))
                .await
                .unwrap_or_default();
            let Some(&first) = found.first() else {
                return Err(Refusal {
                    kind: RefusalKind::Unresolved,
                    target: target(host, port),
                    message: format!("agentsh sandbox: cannot resolve {shown}"),
                });
            };
            let kept: Vec<IpAddr> = found
                .iter()
                .copied()
                .filter(|&addr| {
                    !is_special_address(addr) || config.allowlist.allows_address(addr, port)
                })
                .collect();
            if kept.is_empty() {
                return Err(Refusal {
                    kind: RefusalKind::ResolvesTo,
                    target: target(host, port),
                    message: format!(
                        "agentsh sandbox: {shown} resolves to {first}, which is not listed"
                    ),
                });
            }
            kept
        }
    };
    let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
    for addr in addrs {
        let addr = SocketAddr::new(addr.to_canonical(), port);
        match tokio::time::timeout(config.connect_timeout, TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => {
                let _ = stream.set_nodelay(true);
                return Ok(stream);
            }
            Ok(Err(err)) => last = err,
            Err(_) => last = io::Error::new(io::ErrorKind::TimedOut, "connection timed out"),
        }
        tracing::debug!(%addr, err = %last, "upstream connect failed");
    }
    let target = target(host, port);
    Err(Refusal {
        kind: RefusalKind::ConnectFailed(last.kind()),
        message: format!("agentsh sandbox: cannot connect to {target}: {last}"),
        target,
    })
}
