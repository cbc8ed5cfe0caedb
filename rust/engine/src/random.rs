//! Seeded random playouts (ChaCha8: the same seed gives the same game on every machine).

use crate::game::{Game, Outcome, Termination};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Summary of one random game.
#[derive(Clone, Debug)]
pub struct Playout {
    pub plies: usize,
    pub outcome: Option<(Outcome, Termination)>,
}

/// Plays uniformly random legal moves until the game ends or `max_plies` more plies are played.
pub fn random_playout(game: &mut Game, seed: u64, max_plies: usize) -> Playout {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut moves = Vec::with_capacity(4096);
    let mut plies = 0;
    loop {
        if let Some(end) = game.end() {
            return Playout { plies, outcome: Some(end) };
        }
        if plies >= max_plies {
            return Playout { plies, outcome: None };
        }
        moves.clear();
        game.position.generate(game.side_to_move(), &mut moves);
        if let Some(end) = game.end_with_moves(&moves) {
            return Playout { plies, outcome: Some(end) };
        }
        let mv = moves[rng.gen_range(0..moves.len())];
        game.play(mv);
        plies += 1;
    }
}
