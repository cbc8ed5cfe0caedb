//! Fuzz target `replay`: the invariants are in src/checks.rs (`taikyoku_fuzz::replay`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| taikyoku_fuzz::replay(data));
