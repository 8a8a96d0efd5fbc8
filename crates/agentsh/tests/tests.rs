//! Integration tests of the `agentsh` binary: the real binary over real pipes, real shells.

mod exec;
mod faults;
mod golden;
mod rpc;
mod util;
