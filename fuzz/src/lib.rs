//! The fuzz targets' invariants live in `checks.rs`, which the stable regression test
//! `rust/engine/tests/fuzz_regressions.rs` also compiles (with `#[path]`), so both check the same.
mod checks;
pub use checks::*;
