//! Integration tests of `agentsh-process`, one binary (modules below), real processes only.

mod env;
#[cfg(target_os = "linux")]
mod limits;
#[cfg(target_os = "linux")]
mod sandbox;
mod shell;
mod supervisor;
