//! Fuzz target `tool_args`: see `agentsh_fuzz_checks::tool_args` for what must hold.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agentsh_fuzz_checks::tool_args(data));
