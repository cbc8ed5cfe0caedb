//! Many games stepped together by action, in parallel (rayon), with automatic reset: the native
//! core of the Python `VectorEnv`.

use crate::game::{Game, Outcome};
use crate::position::Move;
use crate::rl::actions::{legal_pairs, Frame};
use crate::variant::Variant;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::sync::Arc;

/// What an action that is not legal does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IllegalAction {
    /// Refuse the whole step; nothing changes.
    Raise,
    /// The seed's rule: the player who made it loses at once.
    Lose,
}

impl IllegalAction {
    /// The name the Python API uses (`"raise"`, `"lose"`).
    pub fn name(self) -> &'static str {
        match self {
            IllegalAction::Raise => "raise",
            IllegalAction::Lose => "lose",
        }
    }
}

/// One game's result of a step.
#[derive(Clone, Debug)]
pub struct StepOutcome {
    /// From the view of the player who moved: 1 win, -1 loss, 0 otherwise.
    pub reward: f32,
    /// The step ended the game with a result (win, loss or draw).
    pub terminated: bool,
    /// The step ended the game at its ply limit (no result).
    pub truncated: bool,
    /// The finished game (before the automatic reset), when the step ended it.
    pub finished: Option<Game>,
}

/// An illegal action under `IllegalAction::Raise`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IllegalActionError {
    /// Index of the game that got it.
    pub env: usize,
    /// The refused action.
    pub action: u32,
}

/// N games of one variant with their legal actions, kept sorted by action.
pub struct VecEnv {
    variant: Arc<Variant>,
    games: Vec<Game>,
    legal: Vec<Vec<(u32, Move)>>,
    /// The frame actions are encoded in.
    pub frame: Frame,
    /// Ply limit of each game started after a reset (`None`: no limit).
    pub max_plies: Option<u32>,
    /// What an action that is not legal does.
    pub illegal: IllegalAction,
}

fn fresh(variant: &Arc<Variant>, max_plies: Option<u32>) -> Game {
    let mut game = Game::new(variant.clone());
    game.max_plies = max_plies;
    game
}

fn legal_of(game: &Game, frame: Frame) -> Vec<(u32, Move)> {
    legal_pairs(&game.position, &game.legal_moves(), frame)
}

impl VecEnv {
    /// `count` games at the variant's initial position, with their legal actions.
    pub fn new(
        variant: Arc<Variant>,
        count: usize,
        frame: Frame,
        max_plies: Option<u32>,
        illegal: IllegalAction,
    ) -> VecEnv {
        let games: Vec<Game> = (0..count).map(|_| fresh(&variant, max_plies)).collect();
        let legal = games.iter().map(|g| legal_of(g, frame)).collect();
        VecEnv { variant, games, legal, frame, max_plies, illegal }
    }

    /// Number of games.
    pub fn len(&self) -> usize {
        self.games.len()
    }

    /// Whether there are no games.
    pub fn is_empty(&self) -> bool {
        self.games.is_empty()
    }

    /// The variant every game plays.
    pub fn variant(&self) -> &Arc<Variant> {
        &self.variant
    }

    /// The games in env order, as they stand after the last step's automatic resets.
    pub fn games(&self) -> &[Game] {
        &self.games
    }

    /// Legal (action, move) pairs of game `i`, sorted by action.
    pub fn legal(&self, i: usize) -> &[(u32, Move)] {
        &self.legal[i]
    }

    /// Starts every game again from the initial position.
    pub fn reset(&mut self) {
        let (variant, max_plies, frame) = (self.variant.clone(), self.max_plies, self.frame);
        self.games.par_iter_mut().zip(self.legal.par_iter_mut()).for_each(|(game, legal)| {
            *game = fresh(&variant, max_plies);
            *legal = legal_of(game, frame);
        });
    }

    /// The first illegal action, if any.
    pub fn find_illegal(&self, actions: &[u32]) -> Option<IllegalActionError> {
        actions.iter().enumerate().find_map(|(env, &action)| {
            let legal = self.legal[env].binary_search_by_key(&action, |&(a, _)| a).is_ok();
            (!legal).then_some(IllegalActionError { env, action })
        })
    }

    /// Plays one action in every game; finished games start again at once.
    pub fn step(&mut self, actions: &[u32]) -> Result<Vec<StepOutcome>, IllegalActionError> {
        assert_eq!(actions.len(), self.games.len(), "one action per game");
        if self.illegal == IllegalAction::Raise {
            if let Some(error) = self.find_illegal(actions) {
                return Err(error);
            }
        }
        let (variant, max_plies, frame) = (self.variant.clone(), self.max_plies, self.frame);
        Ok(self
            .games
            .par_iter_mut()
            .zip(self.legal.par_iter_mut())
            .zip(actions.par_iter())
            .map(|((game, legal), &action)| {
                let mover = game.side_to_move();
                match legal.binary_search_by_key(&action, |&(a, _)| a) {
                    Ok(index) => game.play(legal[index].1),
                    Err(_) => game.forfeit(),
                }
                let moves = game.legal_moves();
                let end = game.end_given(&moves);
                match end {
                    None => {
                        *legal = legal_pairs(&game.position, &moves, frame);
                        StepOutcome { reward: 0.0, terminated: false, truncated: false, finished: None }
                    }
                    Some((outcome, _)) => {
                        let finished = std::mem::replace(game, fresh(&variant, max_plies));
                        *legal = legal_of(game, frame);
                        StepOutcome {
                            reward: outcome.value_for(mover) as f32,
                            terminated: outcome != Outcome::Truncated,
                            truncated: outcome == Outcome::Truncated,
                            finished: Some(finished),
                        }
                    }
                }
            })
            .collect())
    }

    /// A uniformly random legal action per game, from `rng`.
    pub fn random_actions(&self, rng: &mut ChaCha8Rng) -> Vec<u32> {
        self.legal.iter().map(|legal| legal[rng.gen_range(0..legal.len())].0).collect()
    }
}

/// A generator of the `random_actions` stream from a seed.
pub fn action_rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Termination;
    use crate::geometry::Color;

    #[test]
    fn step_plays_and_refuses_illegal_actions_without_change() {
        let variant = Variant::load("taikyoku", &[]).unwrap();
        let mut env = VecEnv::new(variant, 3, Frame::Mover, Some(4), IllegalAction::Raise);
        let mut rng = action_rng(1);
        let hashes: Vec<u64> = env.games().iter().map(|g| g.position.hash()).collect();
        let mut bad = env.random_actions(&mut rng);
        bad[1] = 0; // from the top-left corner to itself: never legal in the opening
        assert_eq!(env.step(&bad).unwrap_err(), IllegalActionError { env: 1, action: 0 });
        assert_eq!(hashes, env.games().iter().map(|g| g.position.hash()).collect::<Vec<_>>());
        for ply in 1..=4 {
            let actions = env.random_actions(&mut rng);
            let out = env.step(&actions).unwrap();
            let done = ply == 4;
            assert!(out.iter().all(|o| o.truncated == done && !o.terminated && o.finished.is_some() == done));
        }
        // Auto-reset: every game is back at the start.
        assert!(env.games().iter().all(|g| g.plies() == 0));
    }

    #[test]
    fn illegal_action_loses_under_the_seed_rule() {
        let variant = Variant::load("taikyoku", &[]).unwrap();
        let mut env = VecEnv::new(variant, 2, Frame::Mover, None, IllegalAction::Lose);
        let mut actions = env.random_actions(&mut action_rng(2));
        actions[0] = 0;
        let out = env.step(&actions).unwrap();
        assert_eq!((out[0].reward, out[0].terminated), (-1.0, true));
        let finished = out[0].finished.as_ref().unwrap();
        assert_eq!(finished.recorded_end(), Some((Outcome::Win(Color::White), Termination::IllegalMove)));
        assert_eq!((out[1].reward, out[1].terminated), (0.0, false));
    }
}
