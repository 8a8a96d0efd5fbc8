//! Fuzz target `normalize`: see `agentsh_fuzz_checks::normalize` for what must hold.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agentsh_fuzz_checks::normalize(data));
