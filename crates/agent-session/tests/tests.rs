//! Integration tests of `agentsh-agent-session`, compiled into one binary.

mod config;
mod jobs;
mod session;
mod tool;
mod ui;
mod world;
