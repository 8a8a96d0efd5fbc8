//! Integration tests of `agentsh-pty-runtime`, one binary (modules below): real PTYs, real
//! shells and programs, no mocks.

mod input_wait;
mod keys;
mod limits;
#[cfg(target_os = "linux")]
mod sandbox;
mod session;
mod terminal;
mod ui;
mod util;
