//! Playing one self-play game into records: every randomness from the game's own ChaCha8 stream.

use crate::boards::BoardLog;
use crate::settings::{MctsSettings, Players, Settings};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;
use taikyoku_engine::random::splitmix64;
use taikyoku_engine::rl::actions::{action_of, legal_actions, Frame};
use taikyoku_engine::{Color, Game, Move, Outcome, Position, Termination, Variant};
use taikyoku_search::evaluation::HeuristicEvaluator;
use taikyoku_search::mcts::{MctsPlayer, RootStats};

/// One position of a game, as the positions table stores it.
#[derive(Clone, Debug, PartialEq)]
pub struct PositionRecord {
    /// Moves played before this position, 0-based.
    pub ply: u32,
    /// Side to move.
    pub white_to_move: bool,
    /// Earlier occurrences of this position in the game.
    pub repetitions: u8,
    /// The side to move's and the other side's passes in a row (0 without a pass limit).
    pub passes: [u8; 2],
    /// The action played (mover's frame).
    pub action: u32,
    /// Number of legal moves here (the support of a policy target).
    pub legal_moves: u32,
    /// MCTS root visits as (action, count), by action; empty for the random player.
    pub visits: Vec<(u32, u32)>,
    /// MCTS root value from the mover's view (`None` for the random player).
    pub root_value: Option<f32>,
    /// A Gumbel root's improved policy as (action, probability), by action, over every legal
    /// move; empty for other players.
    pub policy: Vec<(u32, f32)>,
    /// The legal actions here (mover's frame, sorted), when the run stores them
    /// (`Settings::store_legal_actions`).
    pub legal_actions: Option<Vec<u32>>,
}

/// One finished game.
#[derive(Clone, Debug, PartialEq)]
pub struct GameRecord {
    /// Index of the game in the run, `0 … games - 1`.
    pub game_id: u64,
    /// This game's own seed, derived from the master seed and `game_id` (`game_seed`).
    pub seed: u64,
    /// "black", "white", "draw", or `None` when truncated by the ply limit.
    pub result: Option<&'static str>,
    /// The same, as the engine's outcome (`Truncated` until the game is finished).
    pub outcome: Outcome,
    /// Why the game ended: `"royal_capture"`, `"repetition"`, `"perpetual_check"`,
    /// `"no_moves"` or `"max_plies"`; `""` until it is finished.
    pub termination: &'static str,
    /// The moves played, as actions in the frame of the side that played each.
    pub actions: Vec<u32>,
    /// The same moves in notation, e.g. `"VGx30u+"`.
    pub moves: Vec<String>,
    /// One per move played, by ply; the final position has none.
    pub positions: Vec<PositionRecord>,
    /// The positions' boards (`observation::compact_board`, 36×36, absolute frame), in the
    /// order of `positions`: logged as the squares each move changed.
    pub boards: BoardLog,
}

impl GameRecord {
    /// A game about to start.
    pub fn new(game_id: u64, seed: u64) -> GameRecord {
        GameRecord {
            game_id,
            seed,
            result: None,
            outcome: Outcome::Truncated,
            termination: "",
            actions: Vec::new(),
            moves: Vec::new(),
            positions: Vec::new(),
            boards: BoardLog::default(),
        }
    }

    /// Records `mv`, about to be played in `game`, which has `legal_moves` legal moves
    /// (`legal_actions`: their actions, when the run stores them), chosen by the search that
    /// ended with `searched` (none for random players).
    pub fn record_move(
        &mut self,
        game: &Game,
        mv: Move,
        legal_moves: usize,
        legal_actions: Option<Vec<u32>>,
        searched: Option<&RootStats>,
    ) {
        let pos = &game.position;
        let ply = pos.move_number() - 1;
        match self.positions.last() {
            // The last position recorded is the one before this position's last move.
            Some(last) if last.ply + 1 == ply && pos.last_move().is_some() => self.boards.push_after_move(pos),
            _ => self.boards.push_whole(pos),
        }
        let action = action_of(pos, mv, Frame::Mover);
        let (visits, root_value, policy) = match searched {
            Some(stats) => (root_visits(pos, stats), Some(stats.value), root_policy(pos, stats)),
            None => (Vec::new(), None, Vec::new()),
        };
        self.positions.push(PositionRecord {
            ply,
            white_to_move: pos.side_to_move() == Color::White,
            repetitions: game.repetitions().saturating_sub(1).min(255) as u8,
            passes: [pos.consecutive_passes(pos.side_to_move()), pos.consecutive_passes(pos.side_to_move().opponent())],
            action,
            legal_moves: legal_moves as u32,
            visits,
            root_value,
            policy,
            legal_actions,
        });
        self.moves.push(game.move_notation(mv));
        self.actions.push(action);
    }

    /// Records how the game ended.
    pub fn finish(&mut self, (outcome, termination): (Outcome, Termination)) {
        self.outcome = outcome;
        self.result = outcome.result_name();
        self.termination = termination.name();
    }

    /// Moves recorded so far (half-moves).
    pub fn plies(&self) -> u32 {
        self.actions.len() as u32
    }

    /// The final outcome from the view of the side to move at `ply`: 1, -1, or 0.
    pub fn outcome_for(&self, white_to_move: bool) -> i8 {
        self.outcome.value_for(if white_to_move { Color::White } else { Color::Black })
    }
}

/// The seed of game `index` of a run: SplitMix64 of the master seed and the index, so any game
/// can be replayed alone and no two games share a stream.
pub fn game_seed(master: u64, index: u64) -> u64 {
    splitmix64(master ^ splitmix64(index))
}

/// One position searched with the heuristic evaluator as `settings` say
/// (`MctsSettings::position_config`, `MctsSettings::heuristic_config`): the chosen move and the
/// root's statistics. `game` is left as it was.
pub fn search_heuristic(game: &mut Game, settings: &MctsSettings, rng: &mut ChaCha8Rng) -> (Move, RootStats) {
    let variant = game.position.variant.clone();
    let mut evaluator = HeuristicEvaluator::new(&variant, settings.heuristic_config());
    taikyoku_search::mcts::search(game, &mut evaluator, settings.position_config(), rng)
}

/// MCTS root visits as (action, count) pairs, by action, without unvisited moves.
pub fn root_visits(pos: &Position, stats: &RootStats) -> Vec<(u32, u32)> {
    let mut visits: Vec<(u32, u32)> =
        stats.visits.iter().filter(|v| v.1 > 0).map(|&(m, count)| (action_of(pos, m, Frame::Mover), count)).collect();
    visits.sort_unstable();
    visits
}

/// A Gumbel root's improved policy as (action, probability) pairs, by action (empty without one).
pub fn root_policy(pos: &Position, stats: &RootStats) -> Vec<(u32, f32)> {
    let mut policy: Vec<(u32, f32)> =
        stats.visits.iter().zip(&stats.policy).map(|(&(m, _), &p)| (action_of(pos, m, Frame::Mover), p)).collect();
    policy.sort_unstable_by_key(|&(a, _)| a);
    policy
}

/// Plays game `game_id` of a run with `settings`; `None` if `halted` says to stop (it is
/// asked before every ply).
pub fn play_game(
    variant: &Arc<Variant>,
    settings: &Settings,
    game_id: u64,
    halted: &dyn Fn() -> bool,
) -> Option<GameRecord> {
    let seed = game_seed(settings.seed, game_id);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut game = Game::new(variant.clone());
    game.max_plies = Some(settings.max_plies);
    // Random players read every position's moves and never search: keep them up to date
    // move by move (the same moves, in the same order, as full generation).
    if matches!(settings.players, Players::Random) {
        game.track_moves(true);
    }
    let mut mcts = match &settings.players {
        Players::Random => None,
        Players::Mcts(mcts) => {
            Some(MctsPlayer::new(mcts.engine_config(), HeuristicEvaluator::new(variant, mcts.heuristic_config())))
        }
    };
    let mut record = GameRecord::new(game_id, seed);
    let mut legal = Vec::with_capacity(2048);
    // A random player that stores no legal actions needs only their number and the move it
    // draws: the incremental state gives both without listing the moves (the same move for
    // the same draw, `Game::legal_move`).
    let listed = mcts.is_some() || settings.store_legal_actions;
    loop {
        legal.clear();
        // A search's tree advanced to this position already counted its moves (the list is
        // needed only to store the actions).
        let known = mcts.as_ref().filter(|_| !settings.store_legal_actions);
        let count = match known.and_then(|player| player.search.root_move_count(&game)) {
            Some(count) => count,
            None if listed => {
                game.generate(&mut legal);
                legal.len()
            }
            None => game.legal_move_count(),
        };
        // `end_given(&legal)`, which reads only whether the list is empty.
        if let Some(end) = if count == 0 { game.end_given(&[]) } else { game.recorded_end() } {
            record.finish(end);
            return Some(record);
        }
        if halted() {
            return None;
        }
        let (mv, stats) = match mcts.as_mut() {
            None if listed => (legal[rng.gen_range(0..count)], None),
            None => (game.legal_move(rng.gen_range(0..count)), None),
            Some(player) => {
                let (mv, stats) = player.choose(&mut game, &mut rng);
                (mv, Some(stats))
            }
        };
        let actions = settings.store_legal_actions.then(|| legal_actions(&game.position, &legal, Frame::Mover));
        record.record_move(&game, mv, count, actions, stats.as_ref());
        game.play(mv);
        if let Some(player) = mcts.as_mut() {
            player.advance(mv);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::MctsSettings;

    #[test]
    fn same_seed_same_game_and_seeds_differ_per_game() {
        let variant = Variant::load("taikyoku", &[]).unwrap();
        let settings = Settings { max_plies: 60, ..Settings::default() };
        let play = |id| play_game(&variant, &settings, id, &|| false).unwrap();
        let a = play(3);
        assert_eq!(a, play(3));
        assert_ne!(a.actions, play(4).actions);
        assert_eq!((a.plies(), a.result, a.termination), (60, None, "max_plies"));
        assert_eq!(a.positions.len(), 60);
        assert!(a.positions.iter().enumerate().all(|(i, p)| p.ply == i as u32 && p.white_to_move == (i % 2 == 1)));
    }

    #[test]
    fn mcts_games_record_visits() {
        let variant = Variant::load("taikyoku", &[]).unwrap();
        let mcts = MctsSettings { simulations: 16, ..MctsSettings::default() };
        let settings = Settings { players: Players::Mcts(mcts), max_plies: 4, ..Settings::default() };
        let record = play_game(&variant, &settings, 0, &|| false).unwrap();
        assert_eq!(record.plies(), 4);
        for p in &record.positions {
            assert!(p.root_value.is_some());
            assert!(p.visits.iter().map(|&(_, c)| c).sum::<u32>() >= 16);
            assert!(p.visits.iter().any(|&(a, _)| a == p.action));
        }
        assert_eq!(record, play_game(&variant, &settings, 0, &|| false).unwrap());
        assert_eq!(play_game(&variant, &settings, 0, &|| true), None, "a halted game gives no record");
    }
}
