//! The Gumbel root (see the module doc): the Gumbel noise drawn once per search, sequential
//! halving as a schedule of visits, the root move each simulation takes, the move played, and
//! the improved policy `softmax(logit + sigma(completed q))`.

use super::noise::open_uniform;
use super::tree::{Edge, Search, NONE};
use rand_chacha::ChaCha8Rng;
use taikyoku_engine::Move;

/// `sigma(q) = (C_VISIT + max visits) * C_SCALE * q`, q rescaled to [0, 1]: the paper's monotone
/// transform of the completed Q-values, which lets a few simulations' values outweigh the prior
/// logits more as the most visited move gathers visits.
const C_VISIT: f32 = 50.0;
const C_SCALE: f32 = 0.1;
/// A logit for a prior of 0 (so that `logit + sigma` stays finite).
const MIN_LOGIT: f32 = -1e9;

impl Search {
    /// Starts the Gumbel root's search from the current (expanded) root: draws the Gumbel noise
    /// of every root move and notes the visits the root's moves already have (tree reuse).
    pub(super) fn start_gumbel(&mut self, considered: u32, scale: f32, rng: &mut ChaCha8Rng) {
        let root = self.nodes[0];
        let edges = &self.edges[root.edges as usize..(root.edges + root.len) as usize];
        let logits: Vec<f32> = edges.iter().map(|e| logit(e.prior(root.scale))).collect();
        // Gumbel(0, 1) = -ln(-ln U), U uniform in (0, 1].
        let noisy: Vec<f32> = logits
            .iter()
            .map(|&l| {
                let g = if scale > 0.0 { -(-open_uniform(rng).ln()).max(f64::MIN_POSITIVE).ln() as f32 } else { 0.0 };
                l + scale * g
            })
            .collect();
        let before =
            edges.iter().map(|e| if e.child == NONE { 0 } else { self.nodes[e.child as usize].visits }).collect();
        let considered = (considered.max(1) as usize).min(edges.len());
        self.gumbel = Some(GumbelRoot { noisy, before, considered, schedule: Vec::new() });
        self.root_out_of_order = true;
    }

    /// The root move the next simulation takes under the Gumbel root: the best (by
    /// `g + logit + sigma(q)`) of the moves with as many visits in this search as the schedule
    /// asks for. `None` when that level of the schedule starts while descents are still
    /// pending (their values decide it). The root's own `in_flight` counts the descent asking.
    pub(super) fn gumbel_edge(&mut self) -> Option<usize> {
        let root = self.nodes[0];
        let outstanding = root.in_flight - 1;
        let index = (self.completed + u64::from(outstanding)) as usize;
        let simulations = self.config.simulations as usize;
        let gumbel = self.gumbel.as_mut().expect("a Gumbel root");
        if gumbel.schedule.len() <= index {
            gumbel.schedule = halving_schedule(gumbel.considered, simulations, (index + 1).max(simulations));
        }
        let level = gumbel.schedule[index];
        if outstanding > 0 && index > 0 && gumbel.schedule[index - 1] != level {
            return None;
        }
        let sigma = self.root_sigma();
        let gumbel = self.gumbel.as_ref().expect("a Gumbel root");
        let start = root.edges as usize;
        let searched = |i: usize| match self.edges[start + i].child {
            NONE => 0,
            c => {
                let child = &self.nodes[c as usize];
                child.visits + child.in_flight - gumbel.before[i]
            }
        };
        let score = |i: usize| gumbel.noisy[i] + sigma[i];
        let best = (0..root.len as usize)
            .filter(|&i| searched(i) == level)
            .max_by(|&a, &b| score(a).total_cmp(&score(b)).then(b.cmp(&a)));
        // (The schedule always finds a move at its level; should it not, the leader goes deeper.)
        let best = best.or_else(|| {
            let most = (0..root.len as usize).map(searched).max()?;
            (0..root.len as usize)
                .filter(|&i| searched(i) == most)
                .max_by(|&a, &b| score(a).total_cmp(&score(b)).then(b.cmp(&a)))
        })?;
        Some(start + best)
    }

    /// The Gumbel root's move: of the moves searched most in this search, the one with the
    /// highest `g + logit + sigma(q)` (first of equals). Without a search (no simulation ran) the
    /// highest `g + logit`.
    pub(super) fn gumbel_pick(&self) -> Option<Move> {
        let edges = self.root_edges();
        if edges.is_empty() {
            return None;
        }
        let sigma = self.root_sigma();
        let (noisy, before): (Vec<f32>, Vec<u32>) = match &self.gumbel {
            Some(g) => (g.noisy.clone(), g.before.clone()),
            None => (edges.iter().map(|e| logit(e.prior(self.nodes[0].scale))).collect(), vec![0; edges.len()]),
        };
        let searched = |i: usize| match edges[i].child {
            NONE => 0,
            c => self.nodes[c as usize].visits - before[i],
        };
        let most = (0..edges.len()).map(searched).max()?;
        let score = |i: usize| noisy[i] + sigma[i];
        (0..edges.len())
            .filter(|&i| searched(i) == most)
            .max_by(|&a, &b| score(a).total_cmp(&score(b)).then(b.cmp(&a)))
            .map(|i| edges[i].mv)
    }

    /// `sigma(completed q)` of every root edge, in edge order: q is a visited move's mean value
    /// for the root's side to move, and for an unvisited move the root's mixed value (its own
    /// evaluation mixed with the visited moves' q, weighted by their priors); the completed
    /// values are rescaled to [0, 1] over the root's moves, then scaled by
    /// `(C_VISIT + most visits) * C_SCALE`.
    fn root_sigma(&self) -> Vec<f32> {
        let root = self.nodes[0];
        let edges = self.root_edges();
        let stats = |e: &Edge| match e.child {
            NONE => None,
            c => {
                let child = &self.nodes[c as usize];
                (child.visits > 0).then(|| (child.visits, (child.value_sum / child.visits as f64) as f32))
            }
        };
        let (mut visits, mut most, mut prior_sum, mut weighted) = (0u64, 0u32, 0f64, 0f64);
        for e in edges {
            if let Some((n, q)) = stats(e) {
                let prior = f64::from(e.prior(root.scale)).max(f64::from(f32::MIN_POSITIVE));
                visits += u64::from(n);
                most = most.max(n);
                prior_sum += prior;
                weighted += prior * f64::from(q);
            }
        }
        let own = f64::from(root.raw_value);
        let mixed =
            if visits > 0 { (own + visits as f64 * weighted / prior_sum) / (visits as f64 + 1.0) } else { own } as f32;
        let completed: Vec<f32> = edges.iter().map(|e| stats(e).map_or(mixed, |(_, q)| q)).collect();
        let low = completed.iter().copied().fold(f32::INFINITY, f32::min);
        let high = completed.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let range = (high - low).max(1e-8);
        let factor = (C_VISIT + most as f32) * C_SCALE;
        completed.into_iter().map(|q| factor * (q - low) / range).collect()
    }

    /// The Gumbel root's improved policy, `softmax(logit + sigma(completed q))` over the root's
    /// moves in edge order (empty when the root is not expanded).
    pub(super) fn improved_policy(&self) -> Vec<f32> {
        let root = self.nodes[0];
        let edges = self.root_edges();
        if edges.is_empty() {
            return Vec::new();
        }
        let sigma = self.root_sigma();
        let scores: Vec<f32> = edges.iter().zip(&sigma).map(|(e, s)| logit(e.prior(root.scale)) + s).collect();
        let high = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let weights: Vec<f64> = scores.iter().map(|&s| f64::from(s - high).exp()).collect();
        let total: f64 = weights.iter().sum();
        weights.iter().map(|w| (w / total) as f32).collect()
    }
}

/// The Gumbel root's state for one search.
#[derive(Clone, Debug)]
pub(super) struct GumbelRoot {
    /// `logit + scale * g` of each root edge (edge order): the part of a move's score drawn
    /// once per search.
    noisy: Vec<f32>,
    /// Each root edge's visits when the search began (tree reuse): the schedule counts the
    /// visits of this search.
    before: Vec<u32>,
    /// Moves considered: `considered` of the config, at most the root's moves.
    considered: usize,
    /// `halving_schedule` of this search (grown if the search runs past its budget).
    schedule: Vec<u32>,
}

/// A prior's logit (its logarithm; `MIN_LOGIT` for 0).
fn logit(prior: f32) -> f32 {
    if prior > 0.0 {
        prior.ln().max(MIN_LOGIT)
    } else {
        MIN_LOGIT
    }
}

/// Sequential halving as a schedule: for simulation `k` (of `len`), the visits (in this search)
/// of the move it goes to. `considered` moves get one round after another; each round gives
/// the moves left `max(1, simulations / (rounds * left))` visits each, `rounds` being
/// `ceil(log2(considered))`, then halves them (never below 2). Every move at a level is visited
/// once before the next level starts, so a level's order is decided by the values of the
/// levels before it.
pub(super) fn halving_schedule(considered: usize, simulations: usize, len: usize) -> Vec<u32> {
    if considered <= 1 {
        return (0..len as u32).collect();
    }
    let rounds = considered.next_power_of_two().trailing_zeros() as usize;
    let mut schedule = Vec::with_capacity(len);
    let (mut level, mut left) = (0u32, considered);
    while schedule.len() < len {
        for _ in 0..(simulations / (rounds * left)).max(1) {
            schedule.extend(std::iter::repeat_n(level, left));
            level += 1;
        }
        left = (left / 2).max(2);
    }
    schedule.truncate(len);
    schedule
}
