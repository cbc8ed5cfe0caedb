//! Fuzz target `move_state`: the invariants are in src/checks.rs (`taikyoku_fuzz::move_state`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| taikyoku_fuzz::move_state(data));
