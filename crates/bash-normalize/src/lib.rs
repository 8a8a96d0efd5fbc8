//! Extracts a trailing | head / | tail limit from a shell command, and applies head/tail line limits.
#![deny(missing_docs)]
