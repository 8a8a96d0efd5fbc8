//! Integration tests of `agentsh-agent-session`, compiled into one binary.

mod jobs;
mod sandbox;
mod session;
mod tool;
mod ui;
mod world;
