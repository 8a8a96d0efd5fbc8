//! Integration tests of the `agentsh` binary: the real binary over real pipes, real shells.

mod artifact;
mod basics;
mod completions;
mod containment;
mod doctor;
mod exec;
mod faults;
mod golden;
mod interactive;
mod jobs;
mod leftovers;
mod limits;
mod mcp;
mod network;
mod policy;
mod remote;
mod rpc;
mod sandbox;
mod secrets;
mod shaping;
mod snapshot;
mod util;
