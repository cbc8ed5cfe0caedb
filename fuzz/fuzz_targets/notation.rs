//! Fuzz target `notation`: the invariants are in src/checks.rs (`taikyoku_fuzz::notation`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| taikyoku_fuzz::notation(data));
