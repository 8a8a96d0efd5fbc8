#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod allowlist;
mod body;
mod dial;
mod head;
mod host;
mod http;
mod io;
mod proxy;
mod resolver;
mod socks;
mod special;

pub use allowlist::{Allowlist, AllowlistError};
pub use proxy::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_HEAD_TIMEOUT, DEFAULT_IDLE_TIMEOUT, Link, Proxy, ProxyConfig,
};
pub use resolver::{Resolver, ResolverError, TEST_RESOLVE_ENV};
pub use special::is_special_address;
