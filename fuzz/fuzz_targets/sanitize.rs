//! Fuzz target `sanitize`: see `agentsh_fuzz_checks::sanitize` for what must hold.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agentsh_fuzz_checks::sanitize(data));
