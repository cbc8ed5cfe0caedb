//! The search as one call (`Search::run`: select, evaluate, expand until the budget is spent)
//! and what it leaves at the root: the root's edges, its statistics (`RootStats`) and the move
//! to play (`Search::pick`).

use super::tree::{Edge, Search, State, NONE};
use super::RootRule;
use crate::evaluation::Evaluator;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use taikyoku_engine::Game;
use taikyoku_engine::Move;

/// What a search knows about the root after it.
#[derive(Clone, Debug, PartialEq)]
pub struct RootStats {
    /// Every legal root move with its visit count (tried moves first, in the order tried).
    pub visits: Vec<(Move, u32)>,
    /// Mean backed-up value from the side to move's view, in [-1, 1].
    pub value: f32,
    /// Simulations run by this call.
    pub simulations: u32,
    /// Root-move visits inherited from the previous search (tree reuse).
    pub reused: u32,
    /// With a Gumbel root: the improved policy over the moves of `visits` (same order),
    /// `softmax(logit + sigma(completed q))`, summing to 1. Empty with a PUCT root.
    pub policy: Vec<f32>,
}

impl Search {
    /// Runs `config.simulations` simulations from `game` with `evaluator`, one leaf at a time
    /// (no virtual loss needed on one thread). `game` is returned unchanged.
    ///
    /// With a separable evaluator (`Evaluator::separable`, the heuristic's default) the
    /// expansion is lazy: a new leaf below the root is valued at once, and its moves are given
    /// their priors and edges when a descent first goes through it. About two leaves in three
    /// never are, so the search costs less (docs/PERFORMANCE.md).
    pub fn run<E: Evaluator + ?Sized>(
        &mut self,
        game: &mut Game,
        evaluator: &mut E,
        rng: &mut ChaCha8Rng,
    ) -> RootStats {
        let lazy = evaluator.separable();
        if self.lazy && !lazy {
            // Its valued nodes need a separable evaluator to expand.
            self.clear();
        }
        self.sync_root(game);
        if lazy {
            self.lazy = true;
            if self.nodes[0].state == State::Valued {
                // Re-rooted onto a valued node: expanded before its noise is drawn.
                self.open(0, game, evaluator);
            }
        }
        let reused = self.root_child_visits();
        let start = self.completed;
        let goal = start + self.config.simulations as u64;
        let mut requests = Vec::with_capacity(1);
        let mut priors = Vec::with_capacity(2048);
        let mut value = 0.0;
        let mut reserved = false;
        while self.completed < goal && self.nodes[0].state != State::Terminal {
            if !reserved && self.nodes[0].state == State::Expanded {
                // Each simulation expands about one node of about the root's size: room for
                // them at once, rather than the arenas doubling (and copying) on the way.
                let left = (goal - self.completed) as usize;
                reserve_copying_held(&mut self.edges, left * self.nodes[0].len as usize);
                if lazy {
                    reserve_copying_held(&mut self.waiting, left * self.nodes[0].len as usize);
                }
                reserve_copying_held(&mut self.nodes, left);
                reserved = true;
            }
            let descents = if lazy {
                // Only the root is handed out (a descent after it collides), and the game stands
                // there again: evaluated here. Every other descent completes a simulation, so
                // one call makes them all, with one request's buffers.
                let left = (goal - self.completed) as usize;
                let descents = self.descents(game, left, rng, &mut requests, |_, _, _| {}, Some(&mut *evaluator));
                if let Some(root) = requests.first() {
                    value = evaluator.evaluate(game, &root.moves, &mut priors, rng);
                }
                descents
            } else {
                self.descents(
                    game,
                    1,
                    rng,
                    &mut requests,
                    |game, leaf, rng| {
                        value = evaluator.evaluate(game, &leaf.moves, &mut priors, rng);
                    },
                    None::<&mut E>,
                )
            };
            if descents == 0 {
                break;
            }
            if let Some(leaf) = requests.first() {
                self.expand(leaf, &priors, value);
            }
        }
        let mut stats = self.root_stats();
        stats.simulations = (self.completed - start) as u32;
        stats.reused = reused;
        stats
    }

    fn root_child_visits(&self) -> u32 {
        self.root_edges().iter().filter(|e| e.child != NONE).map(|e| self.nodes[e.child as usize].visits).sum()
    }

    pub(super) fn root_edges(&self) -> &[Edge] {
        let root = &self.nodes[0];
        if root.state == State::Expanded {
            &self.edges[root.edges as usize..(root.edges + root.len) as usize]
        } else {
            &[]
        }
    }

    /// Root moves with their visits and the root's mean value (`simulations`, `reused` zero).
    pub fn root_stats(&self) -> RootStats {
        let visits = self
            .root_edges()
            .iter()
            .map(|e| (e.mv, if e.child == NONE { 0 } else { self.nodes[e.child as usize].visits }))
            .collect();
        let root = &self.nodes[0];
        let value = if root.visits > 0 { -(root.value_sum / root.visits as f64) as f32 } else { 0.0 };
        let policy = match self.config.root {
            RootRule::Gumbel { .. } => self.improved_policy(),
            RootRule::Puct => Vec::new(),
        };
        RootStats { visits, value, simulations: 0, reused: 0, policy }
    }

    /// The move to play from the root's visits: sampled with the temperature before
    /// `temperature_plies` plies of the game, the most visited one after (ties: higher prior).
    /// With a Gumbel root, the move sequential halving kept (the temperature does not apply).
    /// `None` if the root has no moves (not searched, or the game is over).
    pub fn pick(&self, game: &Game, rng: &mut ChaCha8Rng) -> Option<Move> {
        if let RootRule::Gumbel { .. } = self.config.root {
            return self.gumbel_pick();
        }
        let edges = self.root_edges();
        let visits = |e: &Edge| if e.child == NONE { 0 } else { self.nodes[e.child as usize].visits };
        let most = edges.iter().map(visits).max()?;
        let temperature = self.config.temperature;
        if temperature > 0.0 && game.plies() < self.config.temperature_plies && most > 0 {
            // (N / N_max)^(1/T), in log space so small temperatures do not overflow.
            let inv_t = 1.0 / temperature as f64;
            let weights: Vec<f64> = edges
                .iter()
                .map(|e| match visits(e) {
                    0 => 0.0,
                    n => ((n as f64 / most as f64).ln() * inv_t).exp(),
                })
                .collect();
            let total: f64 = weights.iter().sum();
            let mut r = rng.gen::<f64>() * total;
            for (e, w) in edges.iter().zip(&weights) {
                if *w > 0.0 && r < *w {
                    return Some(e.mv);
                }
                r -= w;
            }
        }
        // Edges are in the order tried, so the first of equally visited moves was tried first.
        edges.iter().find(|e| visits(e) == most).map(|e| e.mv)
    }
}

/// Room for `additional` more items in an arena, at least doubling it when it grows (as
/// `Vec::reserve`), with only the items it holds copied: a re-rooted arena holds a small subtree
/// in a large block, which `reserve`'s reallocation would copy whole.
fn reserve_copying_held<T: Copy>(arena: &mut Vec<T>, additional: usize) {
    if arena.capacity() - arena.len() < additional {
        let mut grown = Vec::with_capacity((arena.len() + additional).max(2 * arena.capacity()));
        grown.extend_from_slice(arena);
        *arena = grown;
    }
}
