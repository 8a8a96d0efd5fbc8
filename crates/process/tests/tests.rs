//! Integration tests of `agentsh-process`, one binary (modules below), real processes only.

mod env_shell_snapshot;
mod supervisor;
