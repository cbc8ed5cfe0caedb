//! Fuzz target `rules`: the invariants are in src/checks.rs (`taikyoku_fuzz::rules`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| taikyoku_fuzz::rules(data));
