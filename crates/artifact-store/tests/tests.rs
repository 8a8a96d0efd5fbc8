//! Integration tests of `agentsh-artifact-store`, one binary (ripgrep style).
//!
//! Tests that need process-wide state (umask, `RLIMIT_FSIZE`) or a second process re-run this
//! binary as a child: see `child.rs`.

mod allocation;
mod child;
mod permissions;
mod read;
mod resolve;
mod retention;
mod util;
mod write_failure;
