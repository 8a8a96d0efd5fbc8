//! The proxy's settings.

use std::time::Duration;

use crate::{Allowlist, Resolver};

/// The default [`ProxyConfig::head_timeout`]: 30 s.
pub const DEFAULT_HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// The default [`ProxyConfig::idle_timeout`]: 120 s.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// The default [`ProxyConfig::connect_timeout`]: 30 s.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// What the proxy allows and how long it waits.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    /// The hosts connections may reach.
    pub allowlist: Allowlist,
    /// Where names are resolved.
    pub resolver: Resolver,
    /// How long a new connection may take to send its first request head (or SOCKS5
    /// greeting and request), and any later head once its first byte came.
    pub head_timeout: Duration,
    /// How long a kept-alive connection may wait between requests, and a request body
    /// between two reads.
    pub idle_timeout: Duration,
    /// How long resolving a name, or connecting to one address, may take.
    pub connect_timeout: Duration,
}

impl ProxyConfig {
    /// The settings with the default timeouts: 30 s for heads, 120 s idle, 30 s to connect.
    pub fn new(allowlist: Allowlist, resolver: Resolver) -> Self {
        Self {
            allowlist,
            resolver,
            head_timeout: DEFAULT_HEAD_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
        }
    }
}
