//! Fuzz target `piece_table`: the invariants are in src/checks.rs (`taikyoku_fuzz::piece_table`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| taikyoku_fuzz::piece_table(data));
