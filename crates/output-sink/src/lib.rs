#![doc = include_str!("../README.md")]
#![deny(missing_docs)]

mod head;
mod redact;
mod reference;
mod ring;
mod sanitizer;
mod sink;
mod spill;
mod tail;
mod utf8;

pub use agentsh_protocol::OutputSummary;
pub use redact::{
    DEFAULT_PATTERNS, MIN_SECRET_BYTES, Redactor, SHOWN_VALUE_START_BYTES, SecretPattern, Secrets,
    UNFINISHED_VALUE_REPLACEMENT,
};
pub use reference::sanitize;
pub use sanitizer::{MAX_HELD_LINE_BYTES, MAX_SEQUENCE_BYTES, Sanitizer};
pub use sink::{DEFAULT_OUTPUT_MAX_BYTES, OutputSink, SinkOptions};
pub use spill::{Spill, SpillError, SpillSource};
pub use tail::TailBuffer;
