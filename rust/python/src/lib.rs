//! `taikyoku._core`: thin pyo3 bindings of taikyoku-engine and taikyoku-selfplay, one module
//! per concern. Python-side sugar lives in python/taikyoku/.
//!
//! - `errors`: the exceptions, engine errors mapped onto them, panics caught at the boundary;
//! - `convert`: arguments (integers, option names) checked and converted, once;
//! - `workers`: the fork-safe thread pools every parallel call runs on;
//! - `variants`: variants by name or loaded from files, what describes them;
//! - `pieces`: `Piece`, `Move`, `PieceType` and the piece tables;
//! - `game`: the `Game` class; `observations`: actions and observations as numpy arrays;
//! - `pooled`: observation arrays in reused memory (`ObservationWriter`);
//! - `vector`: `VectorEnvCore`; `selfplay`: self-play runs, dataset decoding, the MCTS opponent;
//! - `search`: the heuristic evaluator's value and priors.

// pyo3 0.22's #[pyfunction]/#[pymethods] expansion converts a returned PyErr into PyErr (a false
// positive of the macros); the numpy and tuple types of the Python-facing signatures are what they
// are.
#![allow(clippy::useless_conversion, clippy::type_complexity)]

mod convert;
mod errors;
mod game;
mod observations;
mod pieces;
mod pooled;
mod search;
mod selfplay;
mod store;
mod variants;
mod vector;
mod workers;

use pyo3::prelude::*;
use taikyoku_engine::rl::actions;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<game::Game>()?;
    m.add_class::<pieces::Move>()?;
    m.add_class::<pieces::Piece>()?;
    m.add_class::<pieces::PieceType>()?;
    m.add_class::<vector::VectorEnvCore>()?;
    m.add_class::<pooled::ObservationWriter>()?;
    m.add_class::<pooled::ObservationMemory>()?;
    m.add_function(wrap_pyfunction!(pieces::piece_types, m)?)?;
    m.add_function(wrap_pyfunction!(variants::rule_options, m)?)?;
    m.add_function(wrap_pyfunction!(variants::variants, m)?)?;
    m.add_function(wrap_pyfunction!(variants::check_variant, m)?)?;
    m.add_function(wrap_pyfunction!(variants::load_variant, m)?)?;
    m.add_function(wrap_pyfunction!(variants::register_variant, m)?)?;
    m.add_function(wrap_pyfunction!(variants::variant_texts, m)?)?;
    m.add_function(wrap_pyfunction!(variants::variant_info, m)?)?;
    m.add_function(wrap_pyfunction!(game::_restore_game, m)?)?;
    m.add_function(wrap_pyfunction!(game::random_game, m)?)?;
    m.add_function(wrap_pyfunction!(search::heuristic_value, m)?)?;
    m.add_function(wrap_pyfunction!(search::heuristic_priors, m)?)?;
    m.add_function(wrap_pyfunction!(observations::plane_names, m)?)?;
    m.add_function(wrap_pyfunction!(game::encode_observations, m)?)?;
    m.add_function(wrap_pyfunction!(observations::action_templates, m)?)?;
    m.add_function(wrap_pyfunction!(selfplay::selfplay_run, m)?)?;
    m.add_function(wrap_pyfunction!(selfplay::selfplay_settings, m)?)?;
    m.add_function(wrap_pyfunction!(selfplay::selfplay_shards, m)?)?;
    m.add_class::<selfplay::DatasetWriter>()?;
    m.add_function(wrap_pyfunction!(selfplay::decode_positions, m)?)?;
    m.add_function(wrap_pyfunction!(selfplay::replay_legal_actions, m)?)?;
    m.add_function(wrap_pyfunction!(selfplay::dataset_schema, m)?)?;
    m.add_function(wrap_pyfunction!(selfplay::check_dataset, m)?)?;
    m.add("MCTS_LIMITS", selfplay::mcts_limits(m.py())?)?;
    m.add("SCHEMA_VERSION", taikyoku_selfplay::tables::SCHEMA_VERSION)?;
    m.add("READABLE_SCHEMA_VERSIONS", taikyoku_selfplay::tables::READABLE_SCHEMA_VERSIONS.to_vec())?;
    m.add("DEFAULT_SHARD_POSITIONS", taikyoku_selfplay::settings::DEFAULT_SHARD_POSITIONS)?;
    m.add("ROWS_PER_BATCH", taikyoku_selfplay::tables::ROWS_PER_BATCH)?;
    m.add_function(wrap_pyfunction!(selfplay::mcts_search, m)?)?;
    m.add("NUM_ACTIONS", actions::NUM_ACTIONS)?;
    m.add("MOVE_BLOCK", actions::MOVE_BLOCK)?;
    m.add("PROMOTION_BLOCK", actions::PROMOTION_BLOCK)?;
    m.add("TEMPLATE_COUNT", actions::TEMPLATE_COUNT)?;
    m.add("GRID", actions::GRID)?;
    m.add("FRAMES", convert::names::<taikyoku_engine::Frame>())?;
    m.add("ILLEGAL_ACTIONS", convert::names::<taikyoku_engine::rl::vector::IllegalAction>())?;
    m.add("FORMATS", convert::names::<taikyoku_selfplay::Format>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
