//! Fuzz target `square`: the invariants are in src/checks.rs (`taikyoku_fuzz::square`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| taikyoku_fuzz::square(data));
