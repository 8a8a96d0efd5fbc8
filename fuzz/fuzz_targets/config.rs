//! Fuzz target `config`: see `agentsh_fuzz_checks::config` for what must hold.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agentsh_fuzz_checks::config(data));
