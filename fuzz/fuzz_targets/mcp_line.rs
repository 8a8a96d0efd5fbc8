//! Fuzz target `mcp_line`: see `agentsh_fuzz_checks::mcp_line` for what must hold.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agentsh_fuzz_checks::mcp_line(data));
