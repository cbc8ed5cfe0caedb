//! MCTS self-play guided by an external evaluator (a neural network called from Python):
//! many games search at once, and their leaves are gathered into one batch per call, so the
//! network sees full batches. Each game keeps its own seeded stream and tree, so its moves do
//! not depend on which other games share a batch.

use crate::play::{game_seed, root_visits, GameRecord};
use crate::settings::{MctsSettings, Players, Settings};
use crate::{run_shards, Control, RunError, Summary};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;
use taikyoku_engine::rl::actions::{action_of, Frame};
use taikyoku_search::mcts::{LeafRequest, Search};
use taikyoku_engine::rl::observation::{observation_len, write, Layout};
use taikyoku_engine::{Game, Variant};

struct Slot {
    record: GameRecord,
    game: Game,
    rng: ChaCha8Rng,
    search: Search,
    /// Simulations completed when the current move's search began.
    move_start: u64,
    requests: Vec<LeafRequest>,
    /// Descents made by the last gather (0: the search can make no progress).
    descents: usize,
}

/// A batch of leaves to evaluate: observations (mover's frame, one-hot uint8) and the legal
/// actions of each leaf, in the order the priors must follow.
#[derive(Default)]
pub struct LeafBatch {
    pub observations: Vec<u8>,
    pub actions: Vec<u32>,
    /// `actions[offsets[i]..offsets[i + 1]]` belong to leaf `i`.
    pub offsets: Vec<usize>,
}

impl LeafBatch {
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A network that evaluates leaves in batches.
pub trait BatchEvaluator {
    /// Priors aligned with `batch.actions` and one value per leaf (from the leaf's side to move).
    fn evaluate(&mut self, batch: &LeafBatch) -> Result<(Vec<f32>, Vec<f32>), RunError>;
}

/// Generates (or resumes) the dataset of `settings` (MCTS players with `settings.network` set)
/// in `out`: each shard's games are played `concurrent` at a time, their leaves evaluated in
/// batches by `evaluator`.
pub fn run(
    out: &std::path::Path,
    settings: &Settings,
    concurrent: usize,
    evaluator: &mut dyn BatchEvaluator,
    control: Control,
) -> Result<Summary, RunError> {
    let Players::Mcts(mcts) = &settings.players else {
        return Err(RunError::Usage("an evaluator guides MCTS: use players='mcts'".into()));
    };
    let Some(network) = &settings.network else {
        return Err(RunError::Usage("a network-guided run needs settings.network".into()));
    };
    let variant = Variant::load(&settings.variant, &settings.options).map_err(|e| RunError::Usage(e.to_string()))?;
    let leaves = network.leaves_per_game as usize;
    run_shards(out, settings, control, |games| {
        let mut driver = NetworkSelfPlay::new(variant.clone(), settings.clone(), mcts.clone(), games, concurrent, leaves);
        let mut records = Vec::new();
        while !driver.done() {
            if control.stopped() {
                return Ok(None);
            }
            let batch = driver.gather();
            // A round may have nothing to evaluate (every search done): no call then.
            let (priors, values) = if batch.is_empty() { (Vec::new(), Vec::new()) } else { evaluator.evaluate(&batch)? };
            driver.apply(&priors, &values, &batch.offsets).map_err(RunError::Usage)?;
            for record in driver.take_finished() {
                (control.progress)(&record);
                records.push(record);
            }
        }
        Ok(Some(records))
    })
}

/// Games `first..last` of a run, played concurrently `concurrent` at a time.
pub struct NetworkSelfPlay {
    variant: Arc<Variant>,
    settings: Settings,
    mcts: MctsSettings,
    leaves_per_game: usize,
    concurrent: usize,
    next_game: u64,
    last_game: u64,
    slots: Vec<Slot>,
    finished: Vec<GameRecord>,
    /// (slot, request index) of each leaf of the batch handed out.
    pending: Vec<(usize, usize)>,
}

impl NetworkSelfPlay {
    pub fn new(
        variant: Arc<Variant>,
        settings: Settings,
        mcts: MctsSettings,
        games: std::ops::Range<u64>,
        concurrent: usize,
        leaves_per_game: usize,
    ) -> NetworkSelfPlay {
        let mut driver = NetworkSelfPlay {
            variant,
            settings,
            mcts,
            leaves_per_game: leaves_per_game.max(1),
            concurrent: concurrent.max(1),
            next_game: games.start,
            last_game: games.end,
            slots: Vec::new(),
            finished: Vec::new(),
            pending: Vec::new(),
        };
        driver.fill();
        driver
    }

    fn fill(&mut self) {
        while self.slots.len() < self.concurrent && self.next_game < self.last_game {
            let game_id = self.next_game;
            self.next_game += 1;
            let seed = game_seed(self.settings.seed, game_id);
            let mut game = Game::new(self.variant.clone());
            game.max_plies = Some(self.settings.max_plies);
            let record = GameRecord::new(game_id, seed);
            let search = Search::new(self.mcts.engine_config());
            self.slots.push(Slot { record, game, rng: ChaCha8Rng::seed_from_u64(seed), search, move_start: 0, requests: Vec::new(), descents: 0 });
        }
        // Games already over at the start (none in practice) finish at once.
        self.settle();
    }

    /// True when every game has finished.
    pub fn done(&self) -> bool {
        self.slots.is_empty()
    }

    /// Finished games, in the order they finished.
    pub fn take_finished(&mut self) -> Vec<GameRecord> {
        std::mem::take(&mut self.finished)
    }

    /// Descends every game's tree and returns the leaves to evaluate.
    pub fn gather(&mut self) -> LeafBatch {
        let mut batch = LeafBatch { offsets: vec![0], ..LeafBatch::default() };
        self.pending.clear();
        let len = observation_len(&self.variant, Layout::OneHot);
        for (index, slot) in self.slots.iter_mut().enumerate() {
            let goal = slot.move_start + self.mcts.simulations as u64;
            let wanted = (goal.saturating_sub(slot.search.completed_simulations()) as usize).min(self.leaves_per_game);
            if wanted == 0 {
                slot.requests.clear();
                slot.descents = 0;
                continue;
            }
            let (observations, actions, offsets) = (&mut batch.observations, &mut batch.actions, &mut batch.offsets);
            slot.descents = slot.search.select_leaves_into(&mut slot.game, wanted, &mut slot.rng, &mut slot.requests, |game, leaf, _| {
                let start = observations.len();
                observations.resize(start + len, 0);
                write(game, Frame::Mover, Layout::OneHot, &mut observations[start..], true);
                actions.extend(leaf.moves.iter().map(|&m| action_of(&game.position, m, Frame::Mover)));
                offsets.push(actions.len());
            });
            self.pending.extend((0..slot.requests.len()).map(|r| (index, r)));
        }
        batch
    }

    /// Applies the evaluations of the last batch (`priors[offsets[i]..offsets[i+1]]` and
    /// `values[i]` for leaf `i`, values from the leaf's side to move), then plays a move in
    /// every game whose search is complete.
    pub fn apply(&mut self, priors: &[f32], values: &[f32], offsets: &[usize]) -> Result<(), String> {
        if values.len() != self.pending.len() || offsets.len() != self.pending.len() + 1 {
            return Err(format!("expected evaluations of {} leaves, got {} values", self.pending.len(), values.len()));
        }
        for (i, &(slot, request)) in self.pending.iter().enumerate() {
            let slot = &mut self.slots[slot];
            let leaf = &slot.requests[request];
            let these = &priors[offsets[i]..offsets[i + 1]];
            if these.len() != leaf.moves.len() {
                return Err(format!("leaf {i}: {} priors for {} legal actions", these.len(), leaf.moves.len()));
            }
            slot.search.expand(leaf, these, values[i]);
        }
        self.pending.clear();
        for slot in &mut self.slots {
            let goal = slot.move_start + self.mcts.simulations as u64;
            // A search that can make no more progress also moves on.
            let stuck = slot.descents == 0;
            if slot.search.completed_simulations() >= goal || stuck {
                play_searched_move(slot);
            }
        }
        self.settle();
        Ok(())
    }

    /// Moves finished games out and starts the next ones.
    fn settle(&mut self) {
        let mut index = 0;
        while index < self.slots.len() {
            if let Some(end) = self.slots[index].game.end_now() {
                let mut slot = self.slots.remove(index);
                slot.record.finish(end);
                self.finished.push(slot.record);
            } else {
                index += 1;
            }
        }
        if self.slots.len() < self.concurrent && self.next_game < self.last_game {
            self.fill();
        }
    }
}

fn play_searched_move(slot: &mut Slot) {
    let Some(mv) = slot.search.pick(&slot.game, &mut slot.rng) else {
        return;
    };
    // The root's statistics list every legal move.
    let stats = slot.search.root_stats();
    let visits = root_visits(&slot.game.position, &stats);
    slot.record.record_move(&slot.game, mv, stats.visits.len(), visits, Some(stats.value));
    slot.game.play(mv);
    slot.search.advance(mv);
    slot.move_start = slot.search.completed_simulations();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Players;

    /// Plays games with a stand-in network (uniform priors, value from a simple count).
    fn play(concurrent: usize, leaves: usize) -> Vec<GameRecord> {
        let variant = Variant::load("taikyoku", &[]).unwrap();
        let mcts = MctsSettings { simulations: 8, ..MctsSettings::default() };
        let settings = Settings { players: Players::Mcts(mcts.clone()), max_plies: 5, games: 3, ..Settings::default() };
        let mut driver = NetworkSelfPlay::new(variant, settings, mcts, 0..3, concurrent, leaves);
        let mut finished = Vec::new();
        while !driver.done() {
            let batch = driver.gather();
            let priors = vec![1.0; batch.actions.len()];
            let values: Vec<f32> = (0..batch.len()).map(|i| ((batch.offsets[i + 1] - batch.offsets[i]) % 7) as f32 / 7.0).collect();
            driver.apply(&priors, &values, &batch.offsets).unwrap();
            finished.extend(driver.take_finished());
        }
        finished.sort_by_key(|r| r.game_id);
        finished
    }

    #[test]
    fn games_do_not_depend_on_their_batch_mates() {
        let alone = play(1, 4);
        assert_eq!(alone.len(), 3);
        assert!(alone.iter().all(|r| r.plies() == 5 && r.termination == "max_plies"));
        let sums: Vec<u32> = alone.iter().flat_map(|r| r.positions.iter().map(|p| p.visits.iter().map(|v| v.1).sum::<u32>())).collect();
        assert!(sums.iter().all(|&s| s >= 7), "{sums:?}");
        assert_eq!(alone, play(3, 4));
    }

    #[test]
    fn wrong_evaluations_are_refused() {
        let variant = Variant::load("taikyoku", &[]).unwrap();
        let mcts = MctsSettings { simulations: 4, ..MctsSettings::default() };
        let settings = Settings { players: Players::Mcts(mcts.clone()), ..Settings::default() };
        let mut driver = NetworkSelfPlay::new(variant, settings, mcts, 0..1, 1, 2);
        let batch = driver.gather();
        assert!(driver.apply(&[], &[0.0], &[0, 0]).is_err());
        let priors = vec![1.0; batch.actions.len()];
        assert!(driver.apply(&priors, &vec![0.0; batch.len()], &batch.offsets).is_ok());
    }
}
