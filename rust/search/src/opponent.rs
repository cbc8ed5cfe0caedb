//! The environments' built-in opponents: who answers an agent's move in `taikyoku.VectorEnv`
//! (`opponent="random"` or `"mcts"`). Each game's opponent draws from its own random stream,
//! so the games do not depend on how many threads step them.

use crate::evaluation::{HeuristicConfig, HeuristicEvaluator};
use crate::mcts::{search, MctsConfig};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use taikyoku_engine::{Game, Move};

/// A built-in opponent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opponent {
    /// A uniformly random legal move.
    Random,
    /// The heuristic MCTS (`MctsConfig::competitive`) with this many simulations per move.
    Mcts {
        /// Simulations per move.
        simulations: u32,
    },
}

impl Opponent {
    /// The opponent's move in `game`, whose legal moves are `moves` (not empty: the game goes
    /// on), drawing from `rng`. The MCTS opponent searches `game` and leaves it as it was.
    pub fn choose(self, game: &mut Game, moves: &[Move], rng: &mut ChaCha8Rng) -> Move {
        match self {
            Opponent::Random => moves[rng.gen_range(0..moves.len())],
            Opponent::Mcts { simulations } => {
                let variant = game.position.variant.clone();
                let mut evaluator = HeuristicEvaluator::new(&variant, HeuristicConfig::default());
                let config = MctsConfig { simulations, ..MctsConfig::competitive() };
                search(game, &mut evaluator, config, rng).0
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use taikyoku_engine::Variant;

    #[test]
    fn each_opponent_plays_a_legal_move_and_repeats_with_its_seed() {
        let variant = Variant::load("tenjiku", &[]).unwrap();
        for opponent in [Opponent::Random, Opponent::Mcts { simulations: 8 }] {
            let mut game = Game::new(variant.clone());
            let moves = game.legal_moves();
            let text = game.to_text();
            let first = opponent.choose(&mut game, &moves, &mut ChaCha8Rng::seed_from_u64(3));
            assert!(moves.contains(&first), "{opponent:?}");
            assert_eq!(game.to_text(), text, "{opponent:?} left the game as it was");
            assert_eq!(opponent.choose(&mut game, &moves, &mut ChaCha8Rng::seed_from_u64(3)), first);
        }
    }
}
