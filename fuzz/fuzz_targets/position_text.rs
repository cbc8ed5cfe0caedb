//! Fuzz target `position_text`: the invariants are in src/checks.rs (`taikyoku_fuzz::position_text`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| taikyoku_fuzz::position_text(data));
