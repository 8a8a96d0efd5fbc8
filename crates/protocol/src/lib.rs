//! Plain data shared by every agentsh crate.
//!
//! This crate has no I/O and no async: it holds the serde types that cross crate boundaries
//! (a command's [`BashResult`], the [`OutputSummary`] of a sink, the [`InterceptionDetails`] of a
//! blocked command) and every user-visible text the specification fixes, each in one place:
//! sizes ([`format_size`]), durations ([`format_seconds`]), annotations ([`timeout_annotation`],
//! [`CANCELLED_ANNOTATION`]), the truncation notice ([`truncation_notice`]) and the outcome lines.
//!
//! The renderer depends on this crate only, so nothing here may pull in a runtime.
//!
//! ```
//! use agentsh_protocol::{format_size, truncation_notice};
//!
//! assert_eq!(format_size(51_200), "50.0KB");
//! assert_eq!(
//!     truncation_notice(9_001, 10_000, 10_000, 51_200, Some("7")),
//!     "[Showing lines 9001-10000 of 10000 (50.0KB limit). Full: artifact://7]"
//! );
//! ```
#![deny(missing_docs)]

mod lines;
mod result;
mod text;

pub use lines::count_lines;

pub use result::{BashResult, InterceptionDetails, OutputSummary};
pub use text::{
    CANCELLED_ANNOTATION, COMMAND_ABORTED, MISSING_EXIT_STATUS, NO_OUTPUT, blocked_text,
    cwd_missing_text, cwd_not_directory_text, exit_code_text, format_seconds, format_size,
    timeout_annotation, truncation_notice,
};
