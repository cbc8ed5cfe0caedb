//! PUCT Monte Carlo tree search with root Dirichlet noise, a temperature schedule and tree reuse,
//! and a Gumbel root (sequential halving) for small simulation budgets.
//!
//! The search is split into two halves so that a batched evaluator (a neural network behind
//! Python) can drive it: `Search::select_leaves` descends with virtual loss and hands out leaves
//! to evaluate, `Search::expand` takes their priors and values back. The synchronous search
//! (`Search::run`, `MctsPlayer`) is a loop over the same two halves with an `Evaluator`.
//!
//! Memory: nodes and edges live in two arenas addressed by `u32`. An expanded node owns a
//! contiguous range of edges (move, weight, child index; a node's scale turns the weights into
//! priors); a child node exists only once its edge has been selected, so the ~250–1,500 moves
//! of a Taikyoku position cost 16 bytes each.
//!
//! Lazy expansion: with an evaluator whose values and priors come apart (`Evaluator::separable`:
//! the heuristic without rollouts), the synchronous search values a new leaf below the root at
//! once and keeps its moves (`Search::waiting`, 8 bytes each); their priors and edges are made
//! when a descent first goes through it (`State::Valued`). Most leaves never see one. The
//! searches are those of the eager expansion where the values are the same numbers (the
//! heuristic with `OpponentMoves::Leaf`); a value apart may also use what the search knows of
//! the leaf's parent (`Evaluator::value_apart`: the heuristic's default `OpponentMoves::Parent`).
//!
//! An unvisited edge's score is the first-play value plus its prior term, so among the
//! unvisited edges the one with the highest prior always scores highest. Each node keeps its
//! tried edges first and the best untried one right after them: selection scores the edges tried
//! so far plus that one, not every legal move. The next untried edge is found by a linear scan
//! when needed (most nodes are tried only a few times, so sorting ~1,000 edges per expansion
//! would cost more); a node tried `SORT_AFTER` times gets its untried edges sorted once.
//!
//! Values: a node's `value_sum` is seen by the player who moved *into* it (the side to move at
//! its parent), so a parent maximises its children's mean values directly.
//!
//! Gumbel root (`RootRule::Gumbel`, Danihelka et al., "Policy improvement by planning with
//! Gumbel", ICLR 2022): with ~100-1,500 legal moves and 8-64 simulations, PUCT hardly looks past
//! the prior. The Gumbel root samples `considered` moves without replacement (the top of
//! `g + logit`, g Gumbel noise), spreads the budget over them by sequential halving (each round
//! gives the moves left the same visits, then keeps the better half by `g + logit + sigma(q)`),
//! and plays the last one standing. Below the root the search is PUCT as usual. The improved
//! policy `softmax(logit + sigma(completed q))` (`RootStats::policy`) is a better training target
//! than visit counts. Which root move a simulation takes depends only on the schedule and on the
//! values already backed up, so batched descents (virtual loss) wait, at the start of each level
//! of the schedule, for the leaves that level's scores read.
//!
//! The search is a folder of concepts:
//! - this file: the settings (`MctsConfig`, `RootRule`) and the one-call entry points (`search`,
//!   `MctsPlayer`);
//! - `tree`: the arenas (nodes, edges), `Search` that holds them, and re-rooting (tree reuse);
//! - `select`: the descent, PUCT selection, expansion and backup (`select_leaves` / `expand`);
//! - `root`: the synchronous loop (`Search::run`), the root's statistics and the move played;
//! - `gumbel`: the Gumbel root (sequential halving, the improved policy);
//! - `noise`: the random draws at the root (Dirichlet noise, the uniform and gamma samplers).

mod gumbel;
mod noise;
mod root;
mod select;
#[cfg(test)]
mod tests;
mod tree;

pub use root::RootStats;
pub use select::LeafRequest;
pub use tree::Search;

use crate::evaluation::Evaluator;
use rand_chacha::ChaCha8Rng;
use taikyoku_engine::Game;
use taikyoku_engine::Move;

/// Search settings. `Default` is for self-play (noise, temperature); `MctsConfig::competitive`
/// for playing strength (neither).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MctsConfig {
    /// New simulations per move (leaf evaluations or terminal backups below the root).
    pub simulations: u32,
    /// Weight of the prior term `P * sqrt(N_parent) / (1 + N_child)`.
    pub c_puct: f32,
    /// An unvisited move's value is the parent's mean value minus this (first-play urgency).
    /// 0 by default: with near-uniform priors over ~1,000 moves the prior term is ~0.001, so a
    /// reduction larger than the spread of the values pins the search to one line (measured:
    /// 0.2 with the heuristic evaluator sent all 800 simulations down a single child). Sharper
    /// priors (a trained network) can afford the usual 0.2–0.4.
    pub fpu_reduction: f32,
    /// Losses counted per pending descent through a node, so a batch spreads over the tree.
    pub virtual_loss: f32,
    /// Concentration of the root noise. The AlphaZero rule of thumb (~10 / legal moves) gives
    /// 0.01–0.04 for Taikyoku's 250–1,500 moves.
    pub dirichlet_alpha: f32,
    /// Share of noise mixed into the root priors (0 disables the noise).
    pub dirichlet_fraction: f32,
    /// Visit counts are raised to `1 / temperature` to sample the move (0 = most visited).
    pub temperature: f32,
    /// From this game ply on the most visited move is played, whatever the temperature.
    pub temperature_plies: usize,
    /// Keep the subtree of the played move for the next search.
    pub reuse_tree: bool,
    /// How the root spreads its simulations: PUCT (as every other node) or Gumbel.
    pub root: RootRule,
}

/// How the root's simulations are spread over its moves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RootRule {
    /// PUCT, with the Dirichlet noise and the temperature of the config.
    Puct,
    /// Gumbel-top-k sampling of `considered` moves and sequential halving over them (see the
    /// module doc). The noise and the temperature of the config do not apply: the Gumbel noise,
    /// scaled by `scale` (0: none, the search is then deterministic), does their work.
    Gumbel {
        /// Moves sampled at the root (at most the legal moves), at least 1 (16 is usual).
        considered: u32,
        /// Scale of the Gumbel noise: 1 samples moves in proportion to the improved policy.
        scale: f32,
    },
}

impl RootRule {
    /// Gumbel with the paper's 16 considered moves and unit noise.
    pub const GUMBEL: RootRule = RootRule::Gumbel { considered: 16, scale: 1.0 };
}

impl Default for MctsConfig {
    fn default() -> Self {
        MctsConfig {
            simulations: 400,
            c_puct: 1.5,
            fpu_reduction: 0.0,
            virtual_loss: 1.0,
            dirichlet_alpha: 0.03,
            dirichlet_fraction: 0.25,
            temperature: 1.0,
            temperature_plies: 30,
            reuse_tree: true,
            root: RootRule::Puct,
        }
    }
}

impl MctsConfig {
    /// No noise, always the most visited move: for matches rather than training games.
    pub fn competitive() -> MctsConfig {
        MctsConfig { dirichlet_fraction: 0.0, temperature: 0.0, temperature_plies: 0, ..MctsConfig::default() }
    }
}

/// One search from `game` with a fresh tree: the move to play and the root statistics.
///
/// # Panics
/// If the game is over.
pub fn search<E: Evaluator + ?Sized>(
    game: &mut Game,
    evaluator: &mut E,
    config: MctsConfig,
    rng: &mut ChaCha8Rng,
) -> (Move, RootStats) {
    let mut search = Search::new(config);
    let stats = search.run(game, evaluator, rng);
    let mv = search.pick(game, rng).expect("search on a finished game");
    (mv, stats)
}

/// A player that keeps its tree between moves.
#[derive(Clone, Debug)]
pub struct MctsPlayer<E: Evaluator> {
    /// Evaluates the leaves of every search.
    pub evaluator: E,
    /// The tree kept between moves, with its settings.
    pub search: Search,
}

impl<E: Evaluator> MctsPlayer<E> {
    /// A player with an empty tree.
    pub fn new(config: MctsConfig, evaluator: E) -> MctsPlayer<E> {
        MctsPlayer { evaluator, search: Search::new(config) }
    }

    /// Searches `game` (reusing the tree if it was advanced to this position) and picks a move.
    /// Does not play it: call `advance` with every move played, by either side.
    ///
    /// # Panics
    /// If the game is over.
    pub fn choose(&mut self, game: &mut Game, rng: &mut ChaCha8Rng) -> (Move, RootStats) {
        assert!(game.recorded_end().is_none(), "choose on a finished game");
        let stats = self.search.run(game, &mut self.evaluator, rng);
        let mv = self.search.pick(game, rng).expect("choose: the side to move has no legal move");
        (mv, stats)
    }

    /// Follows a move played in the game (by either side) down the tree.
    pub fn advance(&mut self, played: Move) {
        self.search.advance(played);
    }

    /// Forgets the tree (new game).
    pub fn reset(&mut self) {
        self.search.reset();
    }
}
