//! Integration tests of `agentsh-rc-snapshot`, one binary (modules below), real shells and real
//! processes only.

#[cfg(target_os = "linux")]
mod sandbox;
mod snapshot;
mod snapshot_shared;
