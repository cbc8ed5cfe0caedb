//! The rules-derived heuristic evaluator of taikyoku-search, for Python: a baseline, a reward
//! shaping term, or priors to compare a network with (MCTS self-play's priors; its leaf values
//! count the opponent's moves at the leaf's parent by default, `opponent_moves`, where these
//! count them in the position).

use crate::convert;
use crate::errors::shield;
use numpy::PyArray1;
use pyo3::prelude::*;
use taikyoku_engine::rl::actions;
use taikyoku_search::evaluation::{outcome_value, HeuristicConfig, HeuristicEvaluator};

/// The heuristic value of `game` in [-1, 1] for `color` (the side to move when None): material
/// and mobility squashed by tanh, or the result once the game is over (1 win, -1 loss, 0 draw).
#[pyfunction]
#[pyo3(signature = (game, color = None))]
pub fn heuristic_value(game: &crate::game::Game, color: Option<&str>) -> PyResult<f32> {
    let engine = &game.game;
    let view = match color {
        Some(text) => convert::color(text)?,
        None => engine.side_to_move(),
    };
    shield(|| {
        let moves = engine.legal_moves();
        if let Some((outcome, _)) = engine.end_given(&moves) {
            return Ok(outcome_value(outcome, view));
        }
        let mut evaluator = HeuristicEvaluator::new(&engine.position.variant, HeuristicConfig::default());
        let value = evaluator.static_value(&engine.position, &moves);
        Ok(if view == engine.side_to_move() { value } else { -value })
    })
}

/// The heuristic's priors over the legal actions of `game` (mover's frame): `(actions, priors)`,
/// actions sorted as `Game.legal_actions()` and priors summing to 1 (captures weighted by the
/// value they take, as MCTS self-play's default `priors="captures"`). Empty once the game is over.
#[pyfunction]
pub fn heuristic_priors<'py>(
    py: Python<'py>,
    game: &crate::game::Game,
) -> PyResult<(Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f32>>)> {
    let engine = &game.game;
    let (actions, priors) = shield(|| {
        let moves = if engine.recorded_end().is_some() { Vec::new() } else { engine.legal_moves() };
        let evaluator = HeuristicEvaluator::new(&engine.position.variant, HeuristicConfig::default());
        let mut priors = Vec::with_capacity(moves.len());
        evaluator.priors(&engine.position, &moves, &mut priors);
        let mut pairs: Vec<(i64, f32)> = moves
            .iter()
            .zip(&priors)
            .map(|(&mv, &p)| (actions::action_of(&engine.position, mv, actions::Frame::Mover) as i64, p))
            .collect();
        pairs.sort_unstable_by_key(|&(a, _)| a);
        Ok(pairs.into_iter().unzip::<i64, f32, Vec<i64>, Vec<f32>>())
    })?;
    Ok((PyArray1::from_vec_bound(py, actions), PyArray1::from_vec_bound(py, priors)))
}
