//! Streaming output sanitiser and bounded output sink with spill to an artifact (SPEC §5).
//!
//! A command's stdout/stderr arrive as raw byte chunks cut anywhere. This crate turns them into
//! what a coding agent can read, with results that do not depend on where the chunks were cut:
//!
//! - **Sanitising** ([`Sanitizer`], and the one-shot reference [`sanitize`]): UTF-8 decoded
//!   incrementally (invalid bytes → U+FFFD exactly as `String::from_utf8_lossy`), control
//!   characters and ANSI escape sequences removed, `\r\n` → `\n`, a lone `\r` discards the
//!   unfinished line so progress bars collapse to their last state. The state machine is
//!   described in the docs of `src/sanitizer.rs`.
//! - **[`OutputSink`]**: counts the sanitised output, keeps its last [`DEFAULT_OUTPUT_MAX_BYTES`] (or
//!   `max_bytes`) in memory, spills the *whole* stream to a [`Spill`] (an artifact file) once
//!   that tail overflows, optionally captures the first N lines, and reports an
//!   [`OutputSummary`](agentsh_protocol::OutputSummary) with [`OutputSink::dump`].
//! - **[`TailBuffer`]**: a separate bounded tail of sanitised text for throttled live updates.
//!
//! Memory stays bounded by the limits plus a constant whatever the output size; plain text
//! passes through a vectorised fast path.
//!
//! ```
//! use agentsh_output_sink::{OutputSink, SinkOptions};
//!
//! let mut sink = OutputSink::new(SinkOptions { max_bytes: 14, ..SinkOptions::default() });
//! sink.push(b"\x1b[32mcompiling\x1b[0m 1/3\r");
//! sink.push(b"compiling 3/3\r\nwarning: \xff unused\n");
//! sink.push(b"done");
//! let summary = sink.dump(Some("Command cancelled"));
//! assert_eq!(summary.total_bytes, 38);
//! assert_eq!(summary.total_lines, 3);
//! assert!(summary.truncated);
//! // The last 14 bytes start inside the 3-byte U+FFFD: cut at the next character boundary.
//! assert_eq!(summary.output, "[Command cancelled]\n unused\ndone");
//! assert_eq!(summary.output_bytes, 12);
//! assert_eq!(summary.output_lines, 2);
//! ```
#![deny(missing_docs)]

mod head;
mod reference;
mod ring;
mod sanitizer;
mod sink;
mod spill;
mod tail;
mod utf8;

pub use agentsh_protocol::OutputSummary;
pub use reference::sanitize;
pub use sanitizer::{MAX_HELD_LINE_BYTES, MAX_SEQUENCE_BYTES, Sanitizer};
pub use sink::{DEFAULT_OUTPUT_MAX_BYTES, OutputSink, SinkOptions};
pub use spill::Spill;
pub use tail::TailBuffer;
