//! Fuzz target `rpc_line`: see `agentsh_fuzz_checks::rpc_line` for what must hold.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agentsh_fuzz_checks::rpc_line(data));
