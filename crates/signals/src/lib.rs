#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod signals;

pub use signals::{EXIT_INTERRUPTED, Signals, Stop};
