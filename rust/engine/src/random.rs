//! Seeded random playouts (ChaCha8: the same seed gives the same game on every machine).

use crate::game::{Game, Outcome, Termination};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Re-exported from its leaf module, where it was before (`taikyoku_engine::random::splitmix64`).
pub use crate::hash::splitmix64;

/// Summary of one random game.
#[derive(Clone, Debug)]
pub struct Playout {
    /// Plies this playout played (not counting those before it).
    pub plies: usize,
    /// How the game ended, or `None` when the playout's `max_plies` stopped it first.
    pub outcome: Option<(Outcome, Termination)>,
}

/// Plays uniformly random legal moves until the game ends or `max_plies` more plies are played.
/// The game keeps its moves up to date from then on (`Game::track_moves`).
pub fn random_playout(game: &mut Game, seed: u64, max_plies: usize) -> Playout {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    if game.move_state().is_none() {
        game.track_moves(true);
    }
    let mut moves = Vec::with_capacity(4096);
    let mut plies = 0;
    loop {
        if let Some(end) = game.recorded_end() {
            return Playout { plies, outcome: Some(end) };
        }
        if plies >= max_plies {
            return Playout { plies, outcome: None };
        }
        // The same draw as `moves[rng.gen_range(0..moves.len())]` over `game.legal_moves()`,
        // without building the list where the incremental move state can count the moves.
        let Some(mv) = game.choose_move(|n| rng.gen_range(0..n), &mut moves) else {
            return Playout { plies, outcome: game.end_given(&[]) };
        };
        game.play(mv);
        plies += 1;
    }
}
