//! MCTS self-play guided by an external evaluator (a neural network, called from Python), laid
//! out to keep an accelerator busy.
//!
//! - The games in play are split into two halves. While the evaluator works on one half's batch
//!   of leaves, the other half's trees take in their last evaluations, play the moves whose
//!   search is done and descend to their next leaves, on all threads (double buffering): a
//!   network sees back-to-back batches, and the trees are walked while it runs.
//! - Leaf observations are written straight into the caller's two buffers (one per half), reused
//!   from batch to batch: only the entries that change are rewritten.
//! - Games come from one queue of game ids; a shard is written as soon as its last game ends.
//! - Each game keeps its own seeded stream and tree, and the batches are decided by the
//!   pipeline's steps, never by timing: the same seed and a deterministic evaluator give the
//!   same dataset whatever the thread count.

use crate::dataset::{ShardBuilder, Writer};
use crate::play::{game_seed, GameRecord};
use crate::settings::{MctsSettings, Players, Settings};
use crate::{Control, RunError, Summary};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::Instant;
use taikyoku_engine::rl::actions::{action_of, legal_actions, Frame};
use taikyoku_engine::rl::observation::{observation_len, rewrite, Cell, Layout};
use taikyoku_engine::Move;
use taikyoku_engine::{Game, Variant};
use taikyoku_search::mcts::{LeafRequest, MctsConfig, RootStats, Search};

/// One game in play.
struct Slot {
    record: GameRecord,
    game: Game,
    rng: ChaCha8Rng,
    search: Search,
    /// Simulations completed when the current move's search began.
    move_start: u64,
    requests: Vec<LeafRequest>,
    /// The legal actions of each request's leaf, concatenated, and where each leaf's end.
    actions: Vec<u32>,
    ends: Vec<usize>,
    /// Descents made by the last gather (0: the search can make no progress).
    descents: usize,
}

/// A batch handed to the evaluator: the observations of `leaves` leaves (the first rows of
/// buffer `half`), their legal actions concatenated, `offsets[i]..offsets[i + 1]` those of leaf
/// `i` (CSR).
pub struct Batch<'a, O> {
    /// Which of the two buffers (and halves of the games) the batch comes from: 0 or 1.
    pub half: usize,
    /// Leaves in the batch, at least 1.
    pub leaves: usize,
    /// `leaves` observations back to back, each `observation_len(variant, layout)` values, in
    /// the mover's frame.
    pub observations: &'a [O],
    /// Every leaf's legal actions (mover's frame), leaf after leaf.
    pub actions: &'a [u32],
    /// `leaves + 1` indices into `actions`, from 0 to `actions.len()`.
    pub offsets: &'a [usize],
}

/// A network that evaluates batches of leaves.
pub trait BatchEvaluator<O> {
    /// Priors aligned with `batch.actions` and one value per leaf (from the leaf's side to move),
    /// as `check_evaluation` states the contract.
    fn evaluate(&mut self, batch: &Batch<O>) -> Result<(Vec<f32>, Vec<f32>), RunError>;
}

/// Checks an evaluator's answer to `batch` against the contract, the one definition every
/// caller of an evaluator uses (self-play's pipeline and `search_position`):
///
/// - one prior per legal action and one value per leaf;
/// - priors finite and non-negative (any scale: each leaf's are normalised);
/// - each leaf's priors with a positive float32 sum (not all zero, not overflowing);
/// - values finite, in [-1, 1].
///
/// The error names the rule broken and the first entry that breaks it (its leaf, action and
/// place in the flat arrays).
pub fn check_evaluation<O>(batch: &Batch<O>, priors: &[f32], values: &[f32]) -> Result<(), RunError> {
    let broken =
        |rule: &str, what: String| Err(RunError::Usage(format!("the evaluator broke its contract: {rule}; {what}")));
    if values.len() != batch.leaves || priors.len() != batch.actions.len() {
        return broken(
            "it must return one prior per legal action and one value per position",
            format!(
                "it returned {} priors and {} values for {} legal actions of {} positions",
                priors.len(),
                values.len(),
                batch.actions.len(),
                batch.leaves
            ),
        );
    }
    for leaf in 0..batch.leaves {
        let (start, end) = (batch.offsets[leaf], batch.offsets[leaf + 1]);
        let mut sum = 0.0f32;
        for (i, &p) in priors[start..end].iter().enumerate() {
            if !(p.is_finite() && p >= 0.0) {
                return broken(
                    "priors must be finite and non-negative (not NaN, infinite or negative)",
                    format!(
                        "position {leaf}'s prior for action {} (priors[{}]) is {}",
                        batch.actions[start + i],
                        start + i,
                        crate::settings::show_real(p.into())
                    ),
                );
            }
            sum += p;
        }
        if end > start && !(sum > 0.0 && sum.is_finite()) {
            let why = if sum == 0.0 { "are all zero" } else { "sum to infinity in float32 (scale them down)" };
            return broken(
                "each position's priors must have a positive, finite float32 sum",
                format!("position {leaf}'s {} priors (priors[{start}:{end}]) {why}", end - start),
            );
        }
    }
    if let Some((leaf, &v)) = values.iter().enumerate().find(|(_, v)| !(v.is_finite() && (-1.0..=1.0).contains(*v))) {
        return broken(
            "values must be finite numbers in [-1, 1] (not NaN or infinite), from the view of the side to move",
            format!("position {leaf}'s value (values[{leaf}]) is {}", crate::settings::show_real(v.into())),
        );
    }
    Ok(())
}

/// How the games are played and their leaves written.
struct Setup {
    variant: Arc<Variant>,
    settings: Settings,
    mcts: MctsSettings,
    leaves_per_game: usize,
    layout: Layout,
}

/// Half of the games in play, with the bookkeeping of its buffer.
struct Half {
    slots: Vec<Slot>,
    capacity: usize,
    /// Entries of each buffer row set by its last write.
    written: Vec<Vec<u32>>,
    /// The batch gathered last, waiting for its evaluation.
    actions: Vec<u32>,
    offsets: Vec<usize>,
    /// Rows of each slot in the batch.
    rows: Vec<std::ops::Range<usize>>,
}

impl Half {
    fn new(capacity: usize, rows: usize) -> Half {
        Half {
            slots: Vec::new(),
            capacity,
            written: vec![Vec::new(); rows],
            actions: Vec::new(),
            offsets: vec![0],
            rows: Vec::new(),
        }
    }

    fn leaves(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Starts games from the queue in free slots.
    fn fill(&mut self, setup: &Setup, queue: &mut VecDeque<u64>) {
        while self.slots.len() < self.capacity {
            let Some(game_id) = queue.pop_front() else { break };
            let seed = game_seed(setup.settings.seed, game_id);
            let mut game = Game::new(setup.variant.clone());
            game.max_plies = Some(setup.settings.max_plies);
            self.slots.push(Slot {
                record: GameRecord::new(game_id, seed),
                game,
                rng: ChaCha8Rng::seed_from_u64(seed),
                search: Search::new(setup.mcts.engine_config()),
                move_start: 0,
                requests: Vec::new(),
                actions: Vec::new(),
                ends: Vec::new(),
                descents: 0,
            });
        }
    }

    /// Moves finished games to `finished`, in slot order.
    fn settle(&mut self, finished: &mut Vec<GameRecord>) {
        let mut index = 0;
        while index < self.slots.len() {
            if let Some(end) = self.slots[index].game.end() {
                let mut slot = self.slots.remove(index);
                slot.record.finish(end);
                finished.push(slot.record);
            } else {
                index += 1;
            }
        }
    }

    /// Descends every tree to its next leaves and writes their observations into `buffer` (rows
    /// of `observation_len`), in parallel over the games.
    fn gather<O: Cell>(&mut self, setup: &Setup, buffer: &mut [O]) {
        let (simulations, leaves_per_game) = (setup.mcts.simulations as u64, setup.leaves_per_game);
        // 1. Descents, and each leaf's legal actions, with the game standing at the leaf.
        self.slots.par_iter_mut().for_each(|slot| {
            slot.actions.clear();
            slot.ends.clear();
            let wanted = ((slot.move_start + simulations).saturating_sub(slot.search.completed_simulations()) as usize)
                .min(leaves_per_game);
            if wanted == 0 {
                slot.requests.clear();
                slot.descents = 0;
                return;
            }
            let (actions, ends) = (&mut slot.actions, &mut slot.ends);
            slot.descents = slot.search.select_leaves_into(
                &mut slot.game,
                wanted,
                &mut slot.rng,
                &mut slot.requests,
                |game, leaf, _| {
                    actions.extend(leaf.moves.iter().map(|&m| action_of(&game.position, m, Frame::Mover)));
                    ends.push(actions.len());
                },
            );
        });
        // 2. Rows and offsets, in slot order.
        self.rows.clear();
        self.actions.clear();
        self.offsets.truncate(1);
        let mut row = 0;
        for slot in &self.slots {
            self.rows.push(row..row + slot.requests.len());
            row += slot.requests.len();
            let base = self.actions.len();
            self.actions.extend_from_slice(&slot.actions);
            self.offsets.extend(slot.ends.iter().map(|&end| base + end));
        }
        // 3. Observations: each game replays the path to each of its leaves and writes it.
        let len = observation_len(&setup.variant, setup.layout);
        let mut rows_of_slots: Vec<(&mut [O], &mut [Vec<u32>])> = Vec::with_capacity(self.slots.len());
        let (mut rest, mut written) = (&mut buffer[..row * len], &mut self.written[..row]);
        for range in &self.rows {
            let (mine, others) = std::mem::take(&mut rest).split_at_mut(range.len() * len);
            let (my_written, other_written) = std::mem::take(&mut written).split_at_mut(range.len());
            rows_of_slots.push((mine, my_written));
            rest = others;
            written = other_written;
        }
        let layout = setup.layout;
        self.slots.par_iter_mut().zip(rows_of_slots.into_par_iter()).for_each(|(slot, (rows, written))| {
            for ((request, out), written) in slot.requests.iter().zip(rows.chunks_mut(len)).zip(written.iter_mut()) {
                for &mv in &request.path {
                    slot.game.play(mv);
                }
                rewrite(&slot.game, Frame::Mover, layout, out, written);
                for _ in &request.path {
                    slot.game.undo();
                }
            }
        });
    }

    /// Takes in the evaluations of the last batch, then plays a move in every game whose search
    /// is done, in parallel over the games.
    fn apply(&mut self, setup: &Setup, priors: &[f32], values: &[f32]) -> Result<(), RunError> {
        // Checked as they came back (`check_evaluation`); an empty evaluation plays finished searches.
        if values.len() != self.leaves() || priors.len() != self.actions.len() {
            return Err(RunError::Usage("an evaluation does not fit its batch".into()));
        }
        let (simulations, store_legal) = (setup.mcts.simulations as u64, setup.settings.store_legal_actions);
        let offsets = &self.offsets;
        self.slots.par_iter_mut().zip(self.rows.par_iter()).for_each(|(slot, rows)| {
            for (request, leaf) in slot.requests.iter().zip(rows.clone()) {
                slot.search.expand(request, &priors[offsets[leaf]..offsets[leaf + 1]], values[leaf]);
            }
            // A search that can make no more progress also moves on.
            if slot.search.completed_simulations() >= slot.move_start + simulations || slot.descents == 0 {
                play_searched_move(slot, store_legal);
            }
        });
        self.actions.clear();
        self.offsets.truncate(1);
        Ok(())
    }
}

fn play_searched_move(slot: &mut Slot, store_legal: bool) {
    let Some(mv) = slot.search.pick(&slot.game, &mut slot.rng) else {
        return;
    };
    // The root's statistics list every legal move.
    let stats = slot.search.root_stats();
    let legal: Vec<_> = stats.visits.iter().map(|&(m, _)| m).collect();
    let actions = store_legal.then(|| legal_actions(&slot.game.position, &legal, Frame::Mover));
    slot.record.record_move(&slot.game, mv, legal.len(), actions, Some(&stats));
    slot.game.play(mv);
    slot.search.advance(mv);
    slot.move_start = slot.search.completed_simulations();
}

/// Rows each of the two buffers needs: the leaves of half the games in play.
pub fn rows_per_buffer(concurrent: usize, leaves_per_game: usize) -> usize {
    concurrent.div_ceil(2) * leaves_per_game
}

/// Generates (or resumes) the dataset of `settings` (MCTS players with `settings.network` set)
/// in `store`. `concurrent` games are in play at once; their leaves' observations (mover's frame,
/// `layout`) are written into `buffers`, each of `rows_per_buffer` rows. `evaluator` is called on
/// the calling thread, for one half's batch, while the other half's trees are worked on by
/// `pool`'s threads: a caller in Python calls the network on its own thread, where Ctrl-C
/// reaches it even while it blocks.
#[allow(clippy::too_many_arguments)]
pub fn run<O: Cell>(
    store: Arc<dyn crate::Store>,
    settings: &Settings,
    concurrent: usize,
    layout: Layout,
    buffers: [&mut [O]; 2],
    evaluator: &mut dyn BatchEvaluator<O>,
    pool: &rayon::ThreadPool,
    control: Control,
) -> Result<Summary, RunError> {
    let Players::Mcts(mcts) = &settings.players else {
        return Err(RunError::Usage("an evaluator guides MCTS: use players='mcts'".into()));
    };
    let Some(network) = &settings.network else {
        return Err(RunError::Usage("a network-guided run needs settings.network".into()));
    };
    settings.validate().map_err(|e| RunError::Usage(e.to_string()))?;
    let variant = Variant::load(&settings.variant, &settings.options).map_err(|e| RunError::Usage(e.to_string()))?;
    let leaves_per_game = network.leaves_per_game as usize;
    let rows = rows_per_buffer(concurrent, leaves_per_game);
    let len = observation_len(&variant, layout);
    if buffers.iter().any(|b| b.len() < rows * len) {
        return Err(RunError::Usage(format!("each observation buffer needs {rows} rows of {len} values")));
    }
    let setup = Setup { variant, settings: settings.clone(), mcts: mcts.clone(), leaves_per_game, layout };
    let started = Instant::now();
    let (writer, missing) = Writer::open(store, settings)?;
    let queue: VecDeque<u64> = missing.iter().flat_map(|&index| settings.shard_games(index)).collect();
    // Each shard in progress, built as its games end; written when its last game ends.
    let mut pending: BTreeMap<u64, ShardBuilder> = BTreeMap::new();
    let mut sink = |record: GameRecord| -> Result<(), RunError> {
        (control.progress)(&record);
        let index = record.game_id / settings.games_per_shard;
        let shard = match pending.entry(index) {
            std::collections::btree_map::Entry::Occupied(entry) => entry.into_mut(),
            std::collections::btree_map::Entry::Vacant(entry) => entry.insert(ShardBuilder::new(settings, index)?),
        };
        if shard.add(record)? {
            writer.commit(&pending.remove(&index).expect("the shard just completed"))?;
        }
        Ok(())
    };
    let result = play(&setup, queue, concurrent, buffers, evaluator, pool, control.stop, &mut sink);
    match result {
        Ok(()) => writer.finish(started),
        Err(e) => {
            writer.abandon();
            Err(e)
        }
    }
}

/// The pipeline: evaluate half `h` (on this thread) while the other half takes in its
/// evaluation and gathers anew (on `pool`), then swap. Finished games go to `sink` in a
/// deterministic order.
#[allow(clippy::too_many_arguments)]
fn play<O: Cell>(
    setup: &Setup,
    mut queue: VecDeque<u64>,
    concurrent: usize,
    buffers: [&mut [O]; 2],
    evaluator: &mut dyn BatchEvaluator<O>,
    pool: &rayon::ThreadPool,
    stop: &std::sync::atomic::AtomicBool,
    sink: &mut dyn FnMut(GameRecord) -> Result<(), RunError>,
) -> Result<(), RunError> {
    let rows = rows_per_buffer(concurrent, setup.leaves_per_game);
    let mut halves = [Half::new(concurrent.div_ceil(2), rows), Half::new(concurrent / 2, rows)];
    let [buffer_0, buffer_1] = buffers;
    let mut buffers = [buffer_0, buffer_1];
    // The evaluation of each half's batch, not yet taken in.
    let mut evaluations: [Option<(Vec<f32>, Vec<f32>)>; 2] = [None, None];
    let mut finished = Vec::new();
    for half in halves.iter_mut() {
        half.fill(setup, &mut queue);
    }
    pool.install(|| halves[0].gather(setup, buffers[0]));
    let mut h = 0;
    loop {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(RunError::Interrupted);
        }
        let other = 1 - h;
        let [half_0, half_1] = &mut halves;
        let (this, that) = if h == 0 { (&*half_0, half_1) } else { (&*half_1, half_0) };
        let [buffer_0, buffer_1] = &mut buffers;
        let (this_buffer, that_buffer): (&[O], &mut [O]) =
            if h == 0 { (buffer_0, buffer_1) } else { (buffer_1, buffer_0) };
        let previous = evaluations[other].take();
        let len = observation_len(&setup.variant, setup.layout);
        let mut evaluate = || -> Result<Option<(Vec<f32>, Vec<f32>)>, RunError> {
            if this.leaves() == 0 {
                return Ok(None);
            }
            let observations = &this_buffer[..this.leaves() * len];
            let batch =
                Batch { half: h, leaves: this.leaves(), observations, actions: &this.actions, offsets: &this.offsets };
            let (priors, values) = evaluator.evaluate(&batch)?;
            check_evaluation(&batch, &priors, &values)?;
            Ok(Some((priors, values)))
        };
        let mut done_there = Vec::new();
        let queue = &mut queue;
        let work = || -> Result<(), RunError> {
            if let Some((priors, values)) = previous {
                that.apply(setup, &priors, &values)?;
            }
            that.settle(&mut done_there);
            that.fill(setup, queue);
            that.gather(setup, that_buffer);
            Ok(())
        };
        // The evaluator on this thread, the trees on the pool's (a scope spawned from a thread
        // outside the pool runs this closure here and waits for the spawned work).
        let mut worked = Ok(());
        let evaluated = pool.in_place_scope(|scope| {
            scope.spawn(|_| worked = work());
            evaluate()
        });
        worked?;
        let in_play = !halves[h].slots.is_empty();
        evaluations[h] = match evaluated? {
            Some(evaluation) => Some(evaluation),
            // Nothing to evaluate, games still in play (every search done): their moves are
            // played when this half next takes in an evaluation.
            None if in_play => Some((Vec::new(), Vec::new())),
            None => None,
        };
        finished.append(&mut done_there);
        for record in finished.drain(..) {
            sink(record)?;
        }
        if halves.iter().all(|half| half.slots.is_empty()) && queue.is_empty() {
            return Ok(());
        }
        h = other;
    }
}

/// One search from `game` guided by `evaluator`: the move it chooses and the root's statistics.
/// Up to `leaves` leaves are evaluated per call (spread by virtual loss), their observations
/// (mover's frame, `layout`) written into `buffer` (`leaves` rows of `observation_len`); the
/// tree is searched with the settings of `config` (a fresh tree, `config.simulations`
/// simulations). `game` is returned unchanged. The same search as self-play's.
///
/// # Errors
/// `RunError::Usage` if the game is over, the buffer is too small, or the evaluator's answer
/// does not fit the batch; the evaluator's own errors as it returns them.
pub fn search_position<O: Cell>(
    game: &Game,
    config: MctsConfig,
    leaves: usize,
    layout: Layout,
    buffer: &mut [O],
    evaluator: &mut dyn BatchEvaluator<O>,
    rng: &mut ChaCha8Rng,
) -> Result<(Move, RootStats), RunError> {
    if game.end().is_some() {
        return Err(RunError::Usage("the game is over: no move to search".into()));
    }
    let leaves = leaves.max(1);
    let len = observation_len(&game.position.variant, layout);
    if buffer.len() < leaves * len {
        return Err(RunError::Usage(format!("the observation buffer needs {leaves} rows of {len} values")));
    }
    let mut game = game.clone();
    let mut search = Search::new(config);
    let (mut requests, mut actions, mut offsets) = (Vec::new(), Vec::new(), vec![0usize]);
    let mut written = vec![Vec::new(); leaves];
    let goal = u64::from(config.simulations);
    loop {
        let wanted = (goal.saturating_sub(search.completed_simulations()) as usize).min(leaves);
        // The root itself is evaluated first (no simulation is counted for it).
        let wanted = if search.node_count() == 1 && search.pending_leaves() == 0 { wanted.max(1) } else { wanted };
        if wanted == 0 {
            break;
        }
        actions.clear();
        offsets.truncate(1);
        let mut row = 0;
        let descents = search.select_leaves_into(&mut game, wanted, rng, &mut requests, |game, leaf, _| {
            actions.extend(leaf.moves.iter().map(|&m| action_of(&game.position, m, Frame::Mover)));
            offsets.push(actions.len());
            rewrite(game, Frame::Mover, layout, &mut buffer[row * len..(row + 1) * len], &mut written[row]);
            row += 1;
        });
        if descents == 0 {
            break;
        }
        if requests.is_empty() {
            continue;
        }
        let batch = Batch {
            half: 0,
            leaves: requests.len(),
            observations: &buffer[..requests.len() * len],
            actions: &actions,
            offsets: &offsets,
        };
        let (priors, values) = evaluator.evaluate(&batch)?;
        check_evaluation(&batch, &priors, &values)?;
        for (i, request) in requests.iter().enumerate() {
            search.expand(request, &priors[offsets[i]..offsets[i + 1]], values[i]);
        }
    }
    let mv = search.pick(&game, rng).ok_or_else(|| RunError::Usage("the search found no move".into()))?;
    let mut stats = search.root_stats();
    stats.simulations = search.completed_simulations() as u32;
    Ok((mv, stats))
}

/// Plays games `games` of `settings` with `evaluate(batch)` (one-hot observations), without
/// writing anything: for tests and small experiments. The trees are worked on by `pool`.
pub fn play_games(
    settings: &Settings,
    games: std::ops::Range<u64>,
    concurrent: usize,
    pool: &rayon::ThreadPool,
    evaluate: &mut dyn FnMut(&Batch<u8>) -> (Vec<f32>, Vec<f32>),
) -> Result<Vec<GameRecord>, RunError> {
    let Players::Mcts(mcts) = &settings.players else { return Err(RunError::Usage("MCTS players only".into())) };
    let variant = Variant::load(&settings.variant, &settings.options).map_err(|e| RunError::Usage(e.to_string()))?;
    let leaves_per_game = settings.network.as_ref().map_or(1, |n| n.leaves_per_game as usize);
    let layout = Layout::OneHot;
    let rows = rows_per_buffer(concurrent, leaves_per_game);
    let len = observation_len(&variant, layout);
    let setup = Setup { variant, settings: settings.clone(), mcts: mcts.clone(), leaves_per_game, layout };
    let (mut a, mut b) = (vec![0u8; rows * len], vec![0u8; rows * len]);
    struct Closure<'a>(&'a mut dyn FnMut(&Batch<u8>) -> (Vec<f32>, Vec<f32>));
    impl BatchEvaluator<u8> for Closure<'_> {
        fn evaluate(&mut self, batch: &Batch<u8>) -> Result<(Vec<f32>, Vec<f32>), RunError> {
            Ok((self.0)(batch))
        }
    }
    let stop = std::sync::atomic::AtomicBool::new(false);
    let mut records = Vec::new();
    play(&setup, games.collect(), concurrent, [&mut a, &mut b], &mut Closure(evaluate), pool, &stop, &mut |r| {
        records.push(r);
        Ok(())
    })?;
    records.sort_by_key(|r| r.game_id);
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::NetworkSettings;

    /// A stand-in network: uniform priors, a value from the position's legal-move count.
    fn stand_in(batch: &Batch<u8>) -> (Vec<f32>, Vec<f32>) {
        let priors = vec![1.0; batch.actions.len()];
        let values = (0..batch.leaves).map(|i| ((batch.offsets[i + 1] - batch.offsets[i]) % 7) as f32 / 7.0).collect();
        (priors, values)
    }

    fn settings(leaves: u32) -> Settings {
        let mcts = MctsSettings { simulations: 8, ..MctsSettings::default() };
        Settings {
            players: Players::Mcts(mcts),
            max_plies: 5,
            games: 5,
            network: Some(NetworkSettings {
                name: "stand-in".into(),
                leaves_per_game: leaves,
                observation: "onehot".into(),
            }),
            ..Settings::default()
        }
    }

    fn play_on(threads: usize, concurrent: usize) -> Vec<GameRecord> {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        play_games(&settings(4), 0..5, concurrent, &pool, &mut stand_in).unwrap()
    }

    #[test]
    fn games_do_not_depend_on_their_batch_mates_or_the_threads() {
        let alone = play_on(1, 1);
        assert_eq!(alone.len(), 5);
        assert!(alone.iter().all(|r| r.plies() == 5 && r.termination == "max_plies"));
        let sums: Vec<u32> =
            alone.iter().flat_map(|r| r.positions.iter().map(|p| p.visits.iter().map(|v| v.1).sum::<u32>())).collect();
        assert!(sums.iter().all(|&s| s >= 7), "{sums:?}");
        assert_eq!(alone, play_on(2, 3));
        assert_eq!(alone, play_on(3, 8));
    }

    #[test]
    fn the_observations_handed_out_are_the_leaves() {
        use taikyoku_engine::rl::observation::{write, Layout};
        // With one leaf per game and one simulation, the first batch is the opening itself.
        let variant = Variant::load("taikyoku", &[]).unwrap();
        let mut opening = vec![0u8; observation_len(&variant, Layout::OneHot)];
        write(&Game::new(variant.clone()), Frame::Mover, Layout::OneHot, &mut opening, true);
        let mut first = true;
        let mut check = |batch: &Batch<u8>| {
            if first {
                assert_eq!(batch.leaves, 1);
                assert!(batch.observations == &opening[..]);
                first = false;
            }
            stand_in(batch)
        };
        play_games(&settings(1), 0..1, 1, &one_thread(), &mut check).unwrap();
    }

    #[test]
    fn a_one_position_search_is_the_search_with_an_evaluator() {
        use taikyoku_engine::Move;
        use taikyoku_search::evaluation::Evaluator;
        use taikyoku_search::mcts::{MctsConfig, RootRule};
        /// The stand-in network as an `Evaluator` of the plain search.
        struct StandIn;
        impl Evaluator for StandIn {
            fn evaluate(&mut self, _: &mut Game, moves: &[Move], priors: &mut Vec<f32>, _: &mut ChaCha8Rng) -> f32 {
                priors.clear();
                priors.resize(moves.len(), 1.0);
                (moves.len() % 7) as f32 / 7.0
            }
        }
        let variant = Variant::load("tenjiku", &[]).unwrap();
        let mut game = Game::new(variant.clone());
        game.play(game.legal_moves()[3]);
        let len = observation_len(&variant, Layout::Compact);
        struct Batched;
        impl BatchEvaluator<u16> for Batched {
            fn evaluate(&mut self, batch: &Batch<u16>) -> Result<(Vec<f32>, Vec<f32>), RunError> {
                Ok(stand_in_u16(batch))
            }
        }
        for root in [RootRule::Puct, RootRule::Gumbel { considered: 8, scale: 1.0 }] {
            let config = MctsConfig { simulations: 40, root, ..MctsConfig::competitive() };
            // One leaf per call: the same tree, move and statistics as the plain search.
            let mut buffer = vec![0u16; len];
            let found = search_position(
                &game,
                config,
                1,
                Layout::Compact,
                &mut buffer,
                &mut Batched,
                &mut ChaCha8Rng::seed_from_u64(2),
            )
            .unwrap();
            let expected = taikyoku_search::mcts::search(
                &mut game.clone(),
                &mut StandIn,
                config,
                &mut ChaCha8Rng::seed_from_u64(2),
            );
            assert_eq!(found.0, expected.0, "{root:?}");
            assert_eq!(found.1.visits, expected.1.visits, "{root:?}");
            assert_eq!(found.1.policy, expected.1.policy, "{root:?}");
            assert_eq!(found.1.simulations, 40);
            // Eight leaves per call: all simulations, the move among the visited ones.
            let mut buffer = vec![0u16; 8 * len];
            let (mv, stats) = search_position(
                &game,
                config,
                8,
                Layout::Compact,
                &mut buffer,
                &mut Batched,
                &mut ChaCha8Rng::seed_from_u64(2),
            )
            .unwrap();
            assert_eq!(stats.visits.iter().map(|v| v.1).sum::<u32>(), 40);
            assert!(stats.visits.iter().any(|&(m, n)| m == mv && n > 0));
        }
        // A finished game, or a buffer too small, is refused.
        let mut small = vec![0u16; len - 1];
        let config = MctsConfig::competitive();
        assert!(search_position(
            &game,
            config,
            1,
            Layout::Compact,
            &mut small,
            &mut Batched,
            &mut ChaCha8Rng::seed_from_u64(0)
        )
        .is_err());
    }

    fn stand_in_u16(batch: &Batch<u16>) -> (Vec<f32>, Vec<f32>) {
        let priors = vec![1.0; batch.actions.len()];
        let values = (0..batch.leaves).map(|i| ((batch.offsets[i + 1] - batch.offsets[i]) % 7) as f32 / 7.0).collect();
        (priors, values)
    }

    fn one_thread() -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap()
    }

    #[test]
    fn wrong_evaluations_are_refused_naming_the_rule_and_the_entry() {
        let mut short = |batch: &Batch<u8>| (Vec::new(), vec![0.0; batch.leaves]);
        let error = play_games(&settings(2), 0..1, 1, &one_thread(), &mut short).unwrap_err();
        assert!(matches!(&error, RunError::Usage(m) if m.contains("one prior per legal action")), "{error}");
        let batch = Batch::<u8> { half: 0, leaves: 2, observations: &[], actions: &[7, 9, 4], offsets: &[0, 2, 3] };
        let check =
            |priors: &[f32], values: &[f32]| check_evaluation(&batch, priors, values).map_err(|e| e.to_string());
        assert_eq!(check(&[0.5, 0.0, 2.0], &[1.0, -1.0]), Ok(()));
        let error = check(&[0.5, -0.25, 2.0], &[0.0, 0.0]).unwrap_err();
        assert!(error.contains("non-negative") && error.contains("action 9 (priors[1]) is -0.25"), "{error}");
        let error = check(&[0.5, 1.0, f32::NAN], &[0.0, 0.0]).unwrap_err();
        assert!(error.contains("position 1's prior for action 4 (priors[2]) is nan"), "{error}");
        let error = check(&[0.0, 0.0, 1.0], &[0.0, 0.0]).unwrap_err();
        assert!(
            error.contains("positive, finite float32 sum") && error.contains("priors[0:2]) are all zero"),
            "{error}"
        );
        let error = check(&[3e38, 3e38, 1.0], &[0.0, 0.0]).unwrap_err();
        assert!(error.contains("sum to infinity"), "{error}");
        let error = check(&[1.0, 1.0, 1.0], &[0.0, 7.0]).unwrap_err();
        assert!(error.contains("[-1, 1]") && error.contains("position 1's value (values[1]) is 7.0"), "{error}");
        // A leaf without legal actions has no priors to sum.
        let empty = Batch::<u8> { half: 0, leaves: 1, observations: &[], actions: &[], offsets: &[0, 0] };
        assert_eq!(check_evaluation(&empty, &[], &[0.0]), Ok(()));
    }
}
