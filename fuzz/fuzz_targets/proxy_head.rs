//! Fuzz target `proxy_head`: see `agentsh_fuzz_checks::proxy_head` for what must hold.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| agentsh_fuzz_checks::proxy_head(data));
