#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod allowlist;
mod host;
mod resolver;
mod special;

pub use allowlist::{Allowlist, AllowlistError};
pub use resolver::{Resolver, ResolverError, TEST_RESOLVE_ENV};
pub use special::is_special_address;
