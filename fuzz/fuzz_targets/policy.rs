//! Fuzz target `policy`: see `agentsh_fuzz_checks::policy` for what must hold.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agentsh_fuzz_checks::policy(data));
