//! Integration tests of agentsh-output-sink (one binary; see `memory.rs` for the allocator test).

mod golden;
mod properties;
mod redaction;
mod sink;
mod util;
