//! Integration tests of `agentsh-config`, compiled into one binary.

mod config;
mod config_docs;
