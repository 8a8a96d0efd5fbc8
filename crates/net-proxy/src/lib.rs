#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod allowlist;
mod body;
mod config;
mod ctx;
mod dial;
#[doc(hidden)]
pub mod fuzzing;
mod head;
mod host;
mod http;
mod io;
mod proxy;
mod resolver;
mod socks;
mod special;
mod splice;

pub use allowlist::{Allowlist, AllowlistError};
pub use config::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_HEAD_TIMEOUT, DEFAULT_IDLE_TIMEOUT, ProxyConfig,
};
pub use proxy::{Link, Proxy};
pub use resolver::{Resolver, ResolverError, TEST_RESOLVE_ENV};
pub use special::is_special_address;
