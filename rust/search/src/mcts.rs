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

use crate::evaluation::{outcome_value, Evaluator};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use taikyoku_engine::Game;
use taikyoku_engine::Move;

/// "No child node yet".
const NONE: u32 = u32::MAX;

/// Tried edges after which a node's untried edges are sorted instead of scanned.
const SORT_AFTER: u32 = 16;

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

/// `sigma(q) = (C_VISIT + max visits) * C_SCALE * q`, q rescaled to [0, 1]: the paper's monotone
/// transform of the completed Q-values, which lets a few simulations' values outweigh the prior
/// logits more as the most visited move gathers visits.
const C_VISIT: f32 = 50.0;
const C_SCALE: f32 = 0.1;
/// A logit for a prior of 0 (so that `logit + sigma` stays finite).
const MIN_LOGIT: f32 = -1e9;

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Created when its edge was first selected; not evaluated yet.
    New,
    /// Handed out by `select_leaves`, waiting for `expand`.
    Pending,
    Expanded,
    /// The game is over here; `terminal` holds the result.
    Terminal,
}

#[derive(Clone, Copy, Debug)]
struct Node {
    /// First edge and number of edges (expanded nodes).
    edges: u32,
    len: u32,
    /// Edges `0..tried` may have been visited; the rest have not, and edge `tried` has the
    /// highest prior among them (see the module doc).
    tried: u32,
    /// Whether the untried edges are sorted by prior (highest first).
    sorted: bool,
    /// An edge's prior is its weight times this (`1 / total` of the weights at expansion): the
    /// weights are written once and not scaled in place.
    scale: f32,
    visits: u32,
    /// Descents through this node still waiting for their evaluation.
    in_flight: u32,
    state: State,
    /// Value of a terminal node for its side to move.
    terminal: f32,
    /// Sum of backed-up values for the player who moved into this node.
    value_sum: f64,
    /// The evaluator's value of this node for its side to move (expanded nodes): the Gumbel
    /// root's estimate for the moves it has not visited.
    raw_value: f32,
}

impl Node {
    fn new() -> Node {
        Node {
            edges: 0,
            len: 0,
            tried: 0,
            sorted: false,
            scale: 1.0,
            visits: 0,
            in_flight: 0,
            state: State::New,
            terminal: 0.0,
            value_sum: 0.0,
            raw_value: 0.0,
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Edge {
    mv: Move,
    /// The evaluator's weight (cleaned; at a noised root, the prior itself): the prior is
    /// `prior(node.scale)`.
    weight: f32,
    child: u32,
}

impl Edge {
    /// The edge's prior, given its node's scale.
    #[inline]
    fn prior(&self, scale: f32) -> f32 {
        self.weight * scale
    }
}

/// A leaf to evaluate, handed out by `Search::select_leaves`.
#[derive(Clone, Debug, Default)]
pub struct LeafRequest {
    /// Moves from the search root (the game given to `select_leaves`) to the leaf.
    pub path: Vec<Move>,
    /// The leaf's legal moves; `expand` takes priors in this order.
    pub moves: Vec<Move>,
    /// Nodes from the root to the leaf.
    nodes: Vec<u32>,
    /// The tree this request belongs to (a re-root or reset makes it stale).
    epoch: u64,
}

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

/// Which position the tree's root stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
enum RootKey {
    Unset,
    /// A game with this hash after this many plies.
    At {
        hash: u64,
        plies: usize,
    },
    /// Re-rooted by `advance`: the game at `plies` followed by `moves`.
    After {
        plies: usize,
        moves: Vec<Move>,
    },
}

/// The search tree plus the settings that steer it.
#[derive(Clone, Debug)]
pub struct Search {
    /// Read on every call, so it may be changed between searches.
    pub config: MctsConfig,
    nodes: Vec<Node>,
    edges: Vec<Edge>,
    /// Arenas of the previous tree, reused by the next re-root instead of reallocating.
    spare_nodes: Vec<Node>,
    spare_edges: Vec<Edge>,
    root_key: RootKey,
    root_noised: bool,
    /// The Gumbel root's state for the search from the current root (set once the root is
    /// expanded, dropped with the root).
    gumbel: Option<GumbelRoot>,
    /// The root's edges were visited out of their tried order (by a Gumbel root): PUCT must
    /// restore its invariant before selecting there.
    root_out_of_order: bool,
    epoch: u64,
    pending: u32,
    /// Simulations backed up below the root since it became the root.
    completed: u64,
}

/// How a descent ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Descent {
    /// A new position, waiting for evaluation.
    Leaf,
    /// A finished game: already backed up.
    Terminal,
    /// A leaf that is already pending: virtual loss taken back, nothing to do.
    Collision,
}

impl Search {
    /// An empty tree: the first search starts from the game it is given.
    pub fn new(config: MctsConfig) -> Search {
        let mut search = Search {
            config,
            nodes: Vec::with_capacity(1 << 12),
            edges: Vec::with_capacity(1 << 16),
            spare_nodes: Vec::new(),
            spare_edges: Vec::new(),
            root_key: RootKey::Unset,
            root_noised: false,
            gumbel: None,
            root_out_of_order: false,
            epoch: 0,
            pending: 0,
            completed: 0,
        };
        search.clear();
        search
    }

    /// Drops the tree; the next call starts from the game it is given.
    pub fn reset(&mut self) {
        self.clear();
        self.root_key = RootKey::Unset;
    }

    fn clear(&mut self) {
        self.nodes.clear();
        self.edges.clear();
        self.nodes.push(Node::new());
        self.root_noised = false;
        self.gumbel = None;
        self.root_out_of_order = false;
        self.epoch += 1;
        self.pending = 0;
        self.completed = 0;
    }

    /// Nodes in the tree (the root included).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Edges (expanded moves) in the tree.
    pub fn edge_count(&self) -> usize {
        self.edges.len()
    }

    /// Leaves handed out and not expanded yet.
    pub fn pending_leaves(&self) -> u32 {
        self.pending
    }

    /// Simulations backed up below the current root since it became the root.
    pub fn completed_simulations(&self) -> u64 {
        self.completed
    }

    /// Makes the tree's root stand for `game`: keeps it if it already does (or was re-rooted by
    /// `advance` onto `game`'s last move), starts a new tree otherwise.
    fn sync_root(&mut self, game: &Game) {
        let (hash, plies) = (game.position.hash(), game.plies());
        let matches = match &self.root_key {
            RootKey::Unset => false,
            RootKey::At { hash: h, plies: p } => *h == hash && *p == plies,
            RootKey::After { plies: p, moves } => {
                let history = game.position.history_len();
                plies == p + moves.len()
                    && history >= moves.len()
                    && game.position.moves_played().skip(history - moves.len()).eq(moves.iter().copied())
            }
        };
        if !matches {
            self.clear();
        }
        self.root_key = RootKey::At { hash, plies };
    }

    /// Descends from the root (the current state of `game`) to a leaf with virtual loss and
    /// returns up to `max_leaves` leaves to evaluate. Each descent counts against `max_leaves`;
    /// descents ending in a finished game are backed up at once and return nothing. Stops early
    /// when a descent reaches a leaf that is already pending. `game` is returned unchanged.
    ///
    /// The first call on a new root returns the root itself (empty path). Root noise is drawn
    /// from `rng` the first time the root is found expanded.
    pub fn select_leaves(&mut self, game: &mut Game, max_leaves: usize, rng: &mut ChaCha8Rng) -> Vec<LeafRequest> {
        let mut out = Vec::with_capacity(max_leaves);
        self.select_leaves_into(game, max_leaves, rng, &mut out, |_, _, _| {});
        out
    }

    /// `select_leaves`, reusing the requests (and their buffers) in `out`, and calling `at_leaf`
    /// with the game standing at each leaf (to encode it without replaying the path; `at_leaf`
    /// must leave the game as it found it). Returns the number of descents made.
    pub fn select_leaves_into<F>(
        &mut self,
        game: &mut Game,
        max_leaves: usize,
        rng: &mut ChaCha8Rng,
        out: &mut Vec<LeafRequest>,
        mut at_leaf: F,
    ) -> usize
    where
        F: FnMut(&mut Game, &LeafRequest, &mut ChaCha8Rng),
    {
        self.sync_root(game);
        if self.nodes[0].state == State::Expanded {
            match self.config.root {
                RootRule::Puct if !self.root_noised => self.add_root_noise(rng),
                RootRule::Gumbel { considered, scale } if self.gumbel.is_none() => {
                    self.start_gumbel(considered, scale, rng)
                }
                _ => {}
            }
        }
        // Descents make and take back moves by the thousand: an incremental move state (random
        // play turns it on) would cost more than it saves, and is back in step at the root.
        game.without_tracking(|game| {
            let mut leaves = 0;
            let mut descents = 0;
            while descents < max_leaves {
                if out.len() == leaves {
                    out.push(LeafRequest::default());
                }
                let request = &mut out[leaves];
                let descent = self.descend(game, request);
                if descent == Descent::Leaf {
                    at_leaf(game, request, rng);
                }
                for _ in 0..request.path.len() {
                    game.undo();
                }
                match descent {
                    Descent::Leaf => leaves += 1,
                    Descent::Terminal => {}
                    Descent::Collision => break,
                }
                descents += 1;
            }
            out.truncate(leaves);
            descents
        })
    }

    /// One descent; leaves `game` at the node reached (`request.path` plies from the root).
    fn descend(&mut self, game: &mut Game, request: &mut LeafRequest) -> Descent {
        request.path.clear();
        request.moves.clear();
        request.nodes.clear();
        request.epoch = self.epoch;
        let mut n = 0u32;
        loop {
            request.nodes.push(n);
            let node = &mut self.nodes[n as usize];
            node.in_flight += 1;
            match node.state {
                State::Expanded => {
                    let e = if n != 0 {
                        self.select_edge(n)
                    } else if self.gumbel.is_some() {
                        match self.gumbel_edge() {
                            Some(e) => e,
                            None => {
                                // This level of the schedule reads values still pending.
                                self.nodes[0].in_flight -= 1;
                                return Descent::Collision;
                            }
                        }
                    } else {
                        if self.root_out_of_order {
                            self.restore_tried_order(0);
                        }
                        self.select_edge(0)
                    };
                    let edge = self.edges[e];
                    let child = if edge.child == NONE {
                        let c = self.nodes.len() as u32;
                        self.nodes.push(Node::new());
                        self.edges[e].child = c;
                        c
                    } else {
                        edge.child
                    };
                    game.play(edge.mv);
                    request.path.push(edge.mv);
                    n = child;
                }
                State::Terminal => {
                    let value = node.terminal;
                    self.backup(&request.nodes, value);
                    return Descent::Terminal;
                }
                State::Pending => {
                    for &m in &request.nodes {
                        self.nodes[m as usize].in_flight -= 1;
                    }
                    return Descent::Collision;
                }
                State::New => {
                    let end = game.recorded_end().or_else(|| {
                        game.generate(&mut request.moves);
                        game.end_given(&request.moves)
                    });
                    if let Some((outcome, _)) = end {
                        node.state = State::Terminal;
                        node.terminal = outcome_value(outcome, game.side_to_move());
                        let value = node.terminal;
                        request.moves.clear();
                        self.backup(&request.nodes, value);
                        return Descent::Terminal;
                    }
                    node.state = State::Pending;
                    self.pending += 1;
                    return Descent::Leaf;
                }
            }
        }
    }

    /// The PUCT choice at an expanded node: an index into `edges`.
    fn select_edge(&mut self, n: u32) -> usize {
        let node = self.nodes[n as usize];
        let vl = self.config.virtual_loss;
        let parent_visits = node.visits as f32 + vl * node.in_flight as f32;
        let c = self.config.c_puct * parent_visits.max(1.0).sqrt();
        let parent_q = if node.visits > 0 { -(node.value_sum / node.visits as f64) as f32 } else { 0.0 };
        let fpu = parent_q - self.config.fpu_reduction;
        let start = node.edges as usize;
        let mut best = start;
        let mut best_score = f32::NEG_INFINITY;
        for (i, e) in self.edges[start..start + node.tried as usize].iter().enumerate() {
            let (q, visits) = if e.child == NONE {
                (fpu, 0.0)
            } else {
                let child = &self.nodes[e.child as usize];
                let loss = vl * child.in_flight as f32;
                let visits = child.visits as f32 + loss;
                if visits > 0.0 {
                    ((child.value_sum as f32 - loss) / visits, visits)
                } else {
                    (fpu, 0.0)
                }
            };
            let score = q + c * e.prior(node.scale) / (1.0 + visits);
            if score > best_score {
                best_score = score;
                best = start + i;
            }
        }
        if node.tried < node.len {
            let next = start + node.tried as usize;
            if fpu + c * self.edges[next].prior(node.scale) > best_score {
                best = next;
                self.nodes[n as usize].tried += 1;
                self.prepare_next(n);
            }
        }
        best
    }

    /// Moves the highest-prior untried edge of node `n` to position `tried` (the first of equal
    /// priors), or sorts all untried edges once the node has been tried `SORT_AFTER` times.
    fn prepare_next(&mut self, n: u32) {
        let node = &mut self.nodes[n as usize];
        if node.tried >= node.len || node.sorted {
            return;
        }
        let start = (node.edges + node.tried) as usize;
        let end = (node.edges + node.len) as usize;
        let scale = node.scale;
        if node.tried >= SORT_AFTER {
            node.sorted = true;
            self.edges[start..end].sort_unstable_by(|a, b| b.prior(scale).total_cmp(&a.prior(scale)));
            return;
        }
        let best = start + first_highest(&self.edges[start..end], scale);
        self.edges.swap(start, best);
    }

    /// Adds `value` (for the side to move at the last node) along `path`, alternating sides,
    /// and takes the path's virtual loss back.
    fn backup(&mut self, path: &[u32], value: f32) {
        let mut v = -(value as f64);
        for &n in path.iter().rev() {
            let node = &mut self.nodes[n as usize];
            node.visits += 1;
            node.in_flight -= 1;
            node.value_sum += v;
            v = -v;
        }
        if path.len() > 1 {
            self.completed += 1;
        }
    }

    /// Gives a pending leaf its priors (aligned with `leaf.moves`; normalised here, a bad or
    /// all-zero vector becomes uniform) and its value for the leaf's side to move (clamped to
    /// [-1, 1]), and backs the value up. Returns false, doing nothing, if the request is stale
    /// (the tree was re-rooted or reset after it was handed out) or was already expanded.
    ///
    /// # Panics
    /// If `priors` and `leaf.moves` differ in length.
    pub fn expand(&mut self, leaf: &LeafRequest, priors: &[f32], value: f32) -> bool {
        if leaf.epoch != self.epoch {
            return false;
        }
        let Some(&n) = leaf.nodes.last() else { return false };
        if self.nodes[n as usize].state != State::Pending {
            return false;
        }
        assert_eq!(priors.len(), leaf.moves.len(), "one prior per legal move");
        let clean = |p: f32| if p.is_finite() && p > 0.0 { p } else { 0.0 };
        // The edges are written once, while the weights are summed in order (each addition waits
        // on the one before, so the writes come free) and their highest is found; the node's
        // scale normalises them. The edges (16 bytes a move) are the search's memory traffic.
        let start = self.edges.len();
        // (Clean weights are not negative, so their bits compare as they do.)
        let (mut total, mut highest) = (0.0f32, 0u32);
        self.edges.extend(leaf.moves.iter().zip(priors).map(|(&mv, &p)| {
            let weight = clean(p);
            total += weight;
            highest = highest.max(weight.to_bits());
            Edge { mv, weight, child: NONE }
        }));
        let mut highest = f32::from_bits(highest);
        let edges = &mut self.edges[start..];
        let scale = if total > 0.0 {
            1.0 / total
        } else {
            edges.iter_mut().for_each(|edge| edge.weight = 1.0);
            highest = 1.0;
            1.0 / leaf.moves.len() as f32
        };
        // The first untried edge is the first of the highest prior (as `prepare_next` finds it).
        if !edges.is_empty() {
            let best = start + first_of_highest(edges, highest, scale);
            self.edges.swap(start, best);
        }
        let node = &mut self.nodes[n as usize];
        node.edges = start as u32;
        node.len = leaf.moves.len() as u32;
        node.tried = 0;
        node.sorted = false;
        node.scale = scale;
        node.state = State::Expanded;
        self.pending -= 1;
        let value = if value.is_finite() { value.clamp(-1.0, 1.0) } else { 0.0 };
        node.raw_value = value;
        self.backup(&leaf.nodes, value);
        true
    }

    /// Starts the Gumbel root's search from the current (expanded) root: draws the Gumbel noise
    /// of every root move and notes the visits the root's moves already have (tree reuse).
    fn start_gumbel(&mut self, considered: u32, scale: f32, rng: &mut ChaCha8Rng) {
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
    fn gumbel_edge(&mut self) -> Option<usize> {
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
    fn gumbel_pick(&self) -> Option<Move> {
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
    fn improved_policy(&self) -> Vec<f32> {
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

    /// Restores PUCT's order at node `n` after a Gumbel root visited its edges out of turn:
    /// the edges with a child first (tried), then the best untried one.
    fn restore_tried_order(&mut self, n: u32) {
        let node = self.nodes[n as usize];
        let edges = &mut self.edges[node.edges as usize..(node.edges + node.len) as usize];
        let mut tried = 0;
        for i in 0..edges.len() {
            if edges[i].child != NONE {
                edges.swap(tried, i);
                tried += 1;
            }
        }
        let node = &mut self.nodes[n as usize];
        node.tried = tried as u32;
        node.sorted = false;
        self.prepare_next(n);
        if n == 0 {
            self.root_out_of_order = false;
        }
    }

    /// Mixes Dirichlet noise into the root priors (so self-play explores).
    fn add_root_noise(&mut self, rng: &mut ChaCha8Rng) {
        self.root_noised = true;
        let root = self.nodes[0];
        let fraction = self.config.dirichlet_fraction;
        if fraction <= 0.0 || root.len < 2 {
            return;
        }
        let range = root.edges as usize..(root.edges + root.len) as usize;
        let scale = root.scale;
        // Sampled in log space: with alpha ~ 0.03 most gamma draws underflow an f64.
        let alpha = self.config.dirichlet_alpha.max(1e-6) as f64;
        let logs: Vec<f64> = range.clone().map(|_| ln_gamma_sample(alpha, rng)).collect();
        let max = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let weights: Vec<f64> = logs.iter().map(|&l| (l - max).exp()).collect();
        let total: f64 = weights.iter().sum();
        for (edge, w) in self.edges[range].iter_mut().zip(&weights) {
            let prior = edge.prior(scale);
            edge.weight = ((1.0 - fraction as f64) * prior as f64 + fraction as f64 * w / total) as f32;
        }
        self.nodes[0].scale = 1.0;
        // Tried edges stay where they are (all of them are scored); the next untried one is
        // chosen again under the new priors.
        self.nodes[0].sorted = false;
        self.prepare_next(0);
    }

    /// Runs `config.simulations` simulations from `game` with `evaluator`, one leaf at a time
    /// (no virtual loss needed on one thread). `game` is returned unchanged.
    pub fn run<E: Evaluator + ?Sized>(
        &mut self,
        game: &mut Game,
        evaluator: &mut E,
        rng: &mut ChaCha8Rng,
    ) -> RootStats {
        self.sync_root(game);
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
                self.edges.reserve(left * self.nodes[0].len as usize);
                self.nodes.reserve(left);
                reserved = true;
            }
            let descents = self.select_leaves_into(game, 1, rng, &mut requests, |game, leaf, rng| {
                value = evaluator.evaluate(game, &leaf.moves, &mut priors, rng);
            });
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

    fn root_edges(&self) -> &[Edge] {
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

    /// Moves the root to the child reached by `played` (a move of the root's side), keeping its
    /// subtree; without that child (or with `reuse_tree` off) the tree is dropped. Pending leaves
    /// are abandoned (their requests become stale).
    pub fn advance(&mut self, played: Move) {
        let child = self.root_edges().iter().find(|e| e.mv == played).map_or(NONE, |e| e.child);
        let key = match std::mem::replace(&mut self.root_key, RootKey::Unset) {
            RootKey::At { plies, .. } => RootKey::After { plies, moves: vec![played] },
            RootKey::After { plies, mut moves } => {
                moves.push(played);
                RootKey::After { plies, moves }
            }
            RootKey::Unset => RootKey::Unset,
        };
        if !self.config.reuse_tree || child == NONE || key == RootKey::Unset {
            self.reset();
            return;
        }
        self.compact(child);
        self.root_key = key;
    }

    /// Copies the subtree under `root` into the spare arenas (breadth first) and swaps them in.
    fn compact(&mut self, root: u32) {
        let fresh = |mut node: Node| {
            node.in_flight = 0;
            if node.state == State::Pending {
                node.state = State::New;
            }
            node
        };
        let mut nodes = std::mem::take(&mut self.spare_nodes);
        let mut edges = std::mem::take(&mut self.spare_edges);
        nodes.clear();
        edges.clear();
        nodes.push(fresh(self.nodes[root as usize]));
        let mut i = 0;
        while i < nodes.len() {
            let node = nodes[i];
            if node.state == State::Expanded {
                let start = edges.len() as u32;
                for j in node.edges..node.edges + node.len {
                    let mut edge = self.edges[j as usize];
                    if edge.child != NONE {
                        nodes.push(fresh(self.nodes[edge.child as usize]));
                        edge.child = nodes.len() as u32 - 1;
                    }
                    edges.push(edge);
                }
                nodes[i].edges = start;
            }
            i += 1;
        }
        self.spare_nodes = std::mem::replace(&mut self.nodes, nodes);
        self.spare_edges = std::mem::replace(&mut self.edges, edges);
        self.root_noised = false;
        self.gumbel = None;
        self.root_out_of_order = false;
        self.epoch += 1;
        self.pending = 0;
        self.completed = 0;
    }
}

/// The place of the first edge with the highest prior (`weight * scale`), as a running best
/// (`prior > best`) finds it, the first edge kept if its prior is NaN. The highest weight is
/// taken over eight lanes, then its first place is sought: one running best would wait on every
/// comparison in turn, and nodes have thousands of edges.
fn first_highest(edges: &[Edge], scale: f32) -> usize {
    const LANES: usize = 8;
    let mut lanes = [f32::NEG_INFINITY; LANES];
    let chunks = edges.chunks_exact(LANES);
    for e in chunks.remainder() {
        lanes[0] = lanes[0].max(e.weight);
    }
    for chunk in chunks {
        for (lane, e) in lanes.iter_mut().zip(chunk) {
            *lane = lane.max(e.weight);
        }
    }
    first_of_highest(edges, lanes.into_iter().fold(f32::NEG_INFINITY, f32::max), scale)
}

/// `first_highest`, given the highest weight (NaN weights aside). Scaling keeps the order of
/// the weights (rounding is monotonic), so the highest prior is the highest weight's; weights
/// that differ can round to one prior, so the search compares priors.
fn first_of_highest(edges: &[Edge], highest_weight: f32, scale: f32) -> usize {
    if edges.first().is_none_or(|e| e.prior(scale).is_nan()) {
        return 0;
    }
    let highest = highest_weight * scale;
    edges.iter().position(|e| e.prior(scale) == highest).unwrap_or(0)
}

/// The Gumbel root's state for one search.
#[derive(Clone, Debug)]
struct GumbelRoot {
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
fn halving_schedule(considered: usize, simulations: usize, len: usize) -> Vec<u32> {
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

/// A uniform draw in (0, 1] (never 0, so its logarithm is finite).
fn open_uniform(rng: &mut ChaCha8Rng) -> f64 {
    1.0 - rng.gen::<f64>()
}

/// The logarithm of a Gamma(alpha, 1) draw (Marsaglia and Tsang's method; for alpha < 1 the
/// boost Gamma(alpha) = Gamma(alpha + 1) * U^(1 / alpha), applied in log space).
fn ln_gamma_sample(alpha: f64, rng: &mut ChaCha8Rng) -> f64 {
    if alpha < 1.0 {
        return ln_gamma_sample(alpha + 1.0, rng) + open_uniform(rng).ln() / alpha;
    }
    let d = alpha - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        // Standard normal by Box-Muller.
        let x = (-2.0 * open_uniform(rng).ln()).sqrt() * (std::f64::consts::TAU * rng.gen::<f64>()).cos();
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = open_uniform(rng);
        if u.ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return (d * v).ln();
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluation::{HeuristicConfig, HeuristicEvaluator, PriorMode};
    use rand::SeedableRng;
    use std::collections::HashSet;
    use std::sync::Arc;
    use taikyoku_engine::Color;
    use taikyoku_engine::Variant;
    use taikyoku_engine::{Piece, Position};

    fn variant() -> Arc<Variant> {
        Variant::load("taikyoku", &[]).unwrap()
    }

    fn heuristic(variant: &Arc<Variant>) -> HeuristicEvaluator {
        HeuristicEvaluator::new(variant, HeuristicConfig::default())
    }

    /// A game on an otherwise empty board: (square, key, colour), Black to move.
    fn board(variant: &Arc<Variant>, pieces: &[(&str, &str, Color)]) -> Game {
        let mut pos = Position::empty(variant.clone(), Color::Black);
        for &(sq, key, color) in pieces {
            let kind = variant.table.lookup(key).unwrap();
            pos.put(variant.geometry.parse_square(sq).unwrap(), Piece { kind, origin: kind, color, promoted: false });
        }
        Game::from_position(pos)
    }

    fn sq(variant: &Variant, name: &str) -> u16 {
        variant.geometry.parse_square(name).unwrap() as u16
    }

    #[test]
    fn finds_a_free_royal_capture() {
        use Color::*;
        let variant = variant();
        // The Black rook on 18r can take White's only king on 18k; a White lion on 14r is bait.
        let pieces =
            [("18r", "R", Black), ("18k", "K", White), ("14r", "LN", White), ("20d", "G", White), ("30ee", "K", Black)];
        let config = MctsConfig { simulations: 200, ..MctsConfig::competitive() };
        for priors in [PriorMode::Uniform, HeuristicConfig::default().priors] {
            let mut game = board(&variant, &pieces);
            let mut eval = HeuristicEvaluator::new(&variant, HeuristicConfig { priors, ..HeuristicConfig::default() });
            let mut rng = ChaCha8Rng::seed_from_u64(5);
            let (mv, stats) = search(&mut game, &mut eval, config, &mut rng);
            assert_eq!((mv.from, mv.to), (sq(&variant, "18r"), sq(&variant, "18k")), "{priors:?}");
            let most = stats.visits.iter().map(|&(_, n)| n).max().unwrap();
            assert_eq!(stats.visits.iter().find(|&&(m, _)| m == mv).unwrap().1, most);
            assert!(stats.value > 0.5, "a won position: {}", stats.value);
            assert_eq!(stats.simulations, 200);
        }
    }

    #[test]
    fn visits_sum_to_simulations_and_the_game_is_unchanged() {
        let variant = variant();
        let mut game = Game::new(variant.clone());
        let (hash, plies) = (game.position.hash(), game.plies());
        let legal = game.position.legal_moves();
        let mut eval = heuristic(&variant);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let config = MctsConfig { simulations: 64, ..MctsConfig::default() };
        let (mv, stats) = search(&mut game, &mut eval, config, &mut rng);
        assert_eq!((game.position.hash(), game.plies()), (hash, plies));
        assert_eq!(game.position.compute_hash(), hash);
        assert!(legal.contains(&mv));
        assert_eq!(stats.simulations, 64);
        assert_eq!(stats.reused, 0);
        assert_eq!(stats.visits.iter().map(|&(_, n)| n).sum::<u32>(), 64);
        // Every legal move is listed once.
        let listed: HashSet<Move> = stats.visits.iter().map(|&(m, _)| m).collect();
        assert_eq!(listed, legal.iter().copied().collect());
        assert!((-1.0..=1.0).contains(&stats.value));
    }

    #[test]
    fn a_game_that_tracks_moves_searches_alike_and_keeps_its_state() {
        let variant = variant();
        let mut tracked = Game::new(variant.clone());
        taikyoku_engine::random::random_playout(&mut tracked, 3, 40);
        assert!(tracked.move_state().is_some(), "random play tracks moves");
        let mut plain = Game::from_position(tracked.position.clone());
        let config = MctsConfig { simulations: 48, ..MctsConfig::default() };
        let mut results = Vec::new();
        for game in [&mut tracked, &mut plain] {
            let mut rng = ChaCha8Rng::seed_from_u64(5);
            results.push(search(game, &mut heuristic(&variant), config, &mut rng));
        }
        assert_eq!(results[0], results[1]);
        // The state was set aside during the search and is in step again at the root.
        let state = tracked.move_state().expect("the state is back and in step");
        state.check(&tracked.position).unwrap();
        assert_eq!(tracked.legal_moves(), tracked.position.legal_moves());
    }

    /// Plays `plies` moves of self-play; returns every choice with its statistics.
    fn self_play(seed: u64, plies: usize, config: MctsConfig) -> Vec<(Move, RootStats)> {
        let variant = variant();
        let mut game = Game::new(variant.clone());
        let mut player = MctsPlayer::new(config, heuristic(&variant));
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut out = Vec::new();
        for _ in 0..plies {
            let (mv, stats) = player.choose(&mut game, &mut rng);
            player.advance(mv);
            game.play(mv);
            out.push((mv, stats));
        }
        out
    }

    #[test]
    fn the_same_seed_gives_the_same_moves_and_visits() {
        let config = MctsConfig { simulations: 48, ..MctsConfig::default() };
        let a = self_play(9, 4, config);
        let b = self_play(9, 4, config);
        assert_eq!(a, b);
        // The statistics are not trivially equal: the searches did reuse and spread visits.
        assert!(a.iter().skip(1).any(|(_, s)| s.reused > 0));
        assert!(a.iter().all(|(_, s)| s.visits.iter().filter(|&&(_, n)| n > 0).count() > 1));
    }

    #[test]
    fn tree_reuse_keeps_the_subtree() {
        let variant = variant();
        let mut game = Game::new(variant.clone());
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let config = MctsConfig { simulations: 300, ..MctsConfig::competitive() };
        let mut player = MctsPlayer::new(config, heuristic(&variant));
        let (mv, stats) = player.choose(&mut game, &mut rng);
        let child_visits = stats.visits.iter().find(|&&(m, _)| m == mv).unwrap().1;
        assert!(child_visits > 2);
        // Our move: the child becomes the root with its visits.
        player.advance(mv);
        game.play(mv);
        let kept = player.search.root_stats();
        assert_eq!(kept.visits.iter().map(|&(_, n)| n).sum::<u32>(), child_visits - 1);
        // The opponent's reply, taken from the kept subtree: one level further down.
        let (reply, grandchild_visits) = *kept.visits.iter().max_by_key(|&&(_, n)| n).unwrap();
        assert!(grandchild_visits > 1);
        player.advance(reply);
        game.play(reply);
        let (_, stats) = player.choose(&mut game, &mut rng);
        assert_eq!(stats.reused, grandchild_visits - 1);
        assert_eq!(stats.visits.iter().map(|&(_, n)| n).sum::<u32>(), stats.reused + 300);
        check_tree(&player.search);

        // Without reuse, or on a game the tree does not belong to, the search starts afresh.
        let mut fresh = MctsPlayer::new(MctsConfig { reuse_tree: false, ..config }, heuristic(&variant));
        let mut game = Game::new(variant.clone());
        let (mv, _) = fresh.choose(&mut game, &mut rng);
        fresh.advance(mv);
        game.play(mv);
        assert_eq!(fresh.choose(&mut game, &mut rng).1.reused, 0);
        let mut other = Game::new(variant.clone());
        assert_eq!(player.choose(&mut other, &mut rng).1.reused, 0);
    }

    #[test]
    fn batched_leaves_are_distinct_and_expand_backs_up() {
        let variant = variant();
        let mut game = Game::new(variant.clone());
        let hash = game.position.hash();
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let mut search = Search::new(MctsConfig::default());
        // An external evaluator: uniform priors, a value from the leaf's legal move count.
        let evaluate = |leaf: &LeafRequest| (vec![1.0; leaf.moves.len()], (leaf.moves.len() % 7) as f32 / 10.0 - 0.3);

        // A new tree: only the root can be evaluated; the second descent collides with it.
        let first = search.select_leaves(&mut game, 8, &mut rng);
        assert_eq!(first.len(), 1);
        assert!(first[0].path.is_empty());
        assert_eq!(first[0].moves, game.position.legal_moves());
        let (priors, value) = evaluate(&first[0]);
        assert!(search.expand(&first[0], &priors, value));
        assert!(!search.expand(&first[0], &priors, value), "a leaf is expanded once");

        let mut all_paths = HashSet::new();
        let mut expected = 0;
        for round in 0..6 {
            // Two batches in flight at once: virtual loss keeps every leaf distinct.
            let a = search.select_leaves(&mut game, 16, &mut rng);
            let b = search.select_leaves(&mut game, 16, &mut rng);
            assert_eq!(game.position.hash(), hash);
            assert_eq!(search.pending_leaves() as usize, a.len() + b.len());
            assert!(a.len() + b.len() >= 24, "round {round}: {} + {}", a.len(), b.len());
            for leaf in a.iter().chain(&b) {
                assert!(all_paths.insert(leaf.path.clone()), "round {round}: leaf handed out twice");
                // The leaf is reconstructible from its path.
                let mut replay = game.clone();
                for &mv in &leaf.path {
                    replay.play(mv);
                }
                assert_eq!(leaf.moves, replay.position.legal_moves());
            }
            for leaf in a.iter().chain(&b) {
                let (priors, value) = evaluate(leaf);
                assert!(search.expand(leaf, &priors, value));
                expected += 1;
            }
            assert_eq!(search.pending_leaves(), 0);
            assert_eq!(search.completed_simulations(), expected);
            let stats = search.root_stats();
            assert_eq!(stats.visits.iter().map(|&(_, n)| n as u64).sum::<u64>(), expected);
            check_tree(&search);
        }
        assert!(all_paths.iter().any(|p| p.len() >= 2), "the search went below the root's children");

        // Requests outstanding when the tree is re-rooted are stale, and the new root's
        // subtree has no leftover virtual loss.
        let stale = search.select_leaves(&mut game, 4, &mut rng);
        let mv = search.pick(&game, &mut rng).unwrap();
        search.advance(mv);
        game.play(mv);
        let (priors, value) = evaluate(&stale[0]);
        assert!(!search.expand(&stale[0], &priors, value));
        assert_eq!(search.pending_leaves(), 0);
        assert!(search.nodes.iter().all(|n| n.in_flight == 0 && n.state != State::Pending));
        let next = search.select_leaves(&mut game, 4, &mut rng);
        assert!(!next.is_empty());
        assert_eq!(search.nodes[0].in_flight as usize, next.len());
    }

    #[test]
    fn select_leaves_into_calls_back_at_the_leaf() {
        let variant = variant();
        let mut game = Game::new(variant.clone());
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        let mut search = Search::new(MctsConfig::default());
        let mut eval = heuristic(&variant);
        let mut requests = Vec::new();
        let mut results = Vec::new();
        for _ in 0..20 {
            results.clear();
            search.select_leaves_into(&mut game, 4, &mut rng, &mut requests, |game, leaf, rng| {
                let mut priors = Vec::new();
                // The game stands at the leaf: its moves are the leaf's moves.
                assert_eq!(game.plies(), leaf.path.len());
                let value = eval.evaluate(game, &leaf.moves, &mut priors, rng);
                results.push((priors, value));
            });
            assert_eq!(game.plies(), 0);
            for (leaf, (priors, value)) in requests.iter().zip(&results) {
                assert!(search.expand(leaf, priors, *value));
            }
        }
        assert!(search.completed_simulations() > 20);
    }

    #[test]
    fn root_noise_and_temperature() {
        // The gamma sampler has the right mean (E[Gamma(a)] = a), small alphas included.
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        for alpha in [0.03, 0.5, 2.5] {
            let n = 40_000;
            let mean = (0..n).map(|_| ln_gamma_sample(alpha, &mut rng).exp()).sum::<f64>() / n as f64;
            assert!((mean - alpha).abs() < 0.05 * alpha.max(0.3), "alpha {alpha}: mean {mean}");
        }
        let variant = variant();
        let mut game = Game::new(variant.clone());
        let mut eval = heuristic(&variant);
        let prior_of =
            |s: &Search| s.root_edges().iter().map(|e| (e.mv, e.prior(s.nodes[0].scale))).collect::<Vec<_>>();
        let mut quiet = Search::new(MctsConfig { simulations: 32, ..MctsConfig::competitive() });
        quiet.run(&mut game, &mut eval, &mut rng);
        let mut noisy = Search::new(MctsConfig { simulations: 32, ..MctsConfig::default() });
        noisy.run(&mut game, &mut eval, &mut rng);
        let (quiet_priors, noisy_priors) = (prior_of(&quiet), prior_of(&noisy));
        assert!((noisy_priors.iter().map(|&(_, p)| p).sum::<f32>() - 1.0).abs() < 1e-3);
        assert_ne!(quiet_priors, noisy_priors);
        // The noise changed the priors, not the selection invariant.
        check_tree(&noisy);

        // Temperature: after `temperature_plies` the most visited move; before it, samples
        // spread over the visited moves.
        let root = noisy.root_stats();
        let most = root.visits.iter().map(|&(_, n)| n).max().unwrap();
        let visits_of = |mv: Move| root.visits.iter().find(|&&(m, _)| m == mv).unwrap().1;
        noisy.config.temperature_plies = 0;
        assert_eq!(visits_of(noisy.pick(&game, &mut rng).unwrap()), most);
        noisy.config.temperature_plies = 10;
        let picks: HashSet<Move> = (0..200).map(|_| noisy.pick(&game, &mut rng).unwrap()).collect();
        assert!(picks.len() > 1);
        assert!(picks.iter().all(|&m| visits_of(m) > 0));
    }

    /// The selection invariant: visited edges are tried, the next untried edge has the highest
    /// prior of the untried ones, and sorted nodes are sorted.
    fn check_tree(search: &Search) {
        // A Gumbel root visits its edges out of PUCT's order.
        let skip = usize::from(matches!(search.config.root, RootRule::Gumbel { .. }));
        for node in search.nodes.iter().skip(skip).filter(|n| n.state == State::Expanded) {
            let edges = &search.edges[node.edges as usize..(node.edges + node.len) as usize];
            let (tried, untried) = edges.split_at(node.tried as usize);
            let prior = |e: &Edge| e.prior(node.scale);
            assert!(untried.iter().all(|e| e.child == NONE), "a visited edge outside the tried prefix");
            if let Some(next) = untried.first() {
                assert!(untried.iter().all(|e| prior(e) <= prior(next)), "the next edge is not the best untried");
            }
            if node.sorted {
                assert!(untried.windows(2).all(|w| prior(&w[0]) >= prior(&w[1])));
            }
            let total: f32 = tried.iter().chain(untried).map(prior).sum();
            assert!((total - 1.0).abs() < 1e-3, "priors sum to {total}");
        }
    }

    #[test]
    fn the_next_untried_edge_is_the_best_one() {
        let variant = variant();
        let mut game = Game::new(variant.clone());
        let mut rng = ChaCha8Rng::seed_from_u64(10);
        let mut search = Search::new(MctsConfig { simulations: 600, ..MctsConfig::default() });
        search.run(&mut game, &mut heuristic(&variant), &mut rng);
        check_tree(&search);
        assert!(search.nodes[0].sorted, "the root was tried more than SORT_AFTER times");
        assert!(search.nodes.iter().any(|n| n.state == State::Expanded && !n.sorted && n.tried > 0));
        // The first edge tried anywhere is the node's highest prior.
        for node in search.nodes.iter().filter(|n| n.state == State::Expanded) {
            let edges = &search.edges[node.edges as usize..(node.edges + node.len) as usize];
            let prior = |e: &Edge| e.prior(node.scale);
            assert!(edges.iter().all(|e| prior(e) <= prior(&edges[0])));
        }
    }

    #[test]
    fn first_highest_is_the_running_best() {
        // The running best over the priors that `first_highest` replaces: the first of equal
        // priors, the first edge kept if its prior is NaN (nothing compares above it).
        let running_best = |edges: &[Edge], scale: f32| {
            let mut best = (0, edges[0].weight * scale);
            for (i, e) in edges.iter().enumerate().skip(1) {
                if e.weight * scale > best.1 {
                    best = (i, e.weight * scale);
                }
            }
            best.0
        };
        let edges = |weights: &[f32]| -> Vec<Edge> {
            weights.iter().map(|&weight| Edge { mv: Move::new(0, 1), weight, child: NONE }).collect()
        };
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        // Scales that keep every weight apart, that round neighbours together (subnormal
        // priors), that overflow, and 0.
        for scale in [1.0, 0.3, 1e-44, 1e38, f32::INFINITY, 0.0] {
            for len in 1..40 {
                for _ in 0..50 {
                    // Few distinct values, so that ties are common; now and then a NaN or -0.0.
                    let weights: Vec<f32> = (0..len)
                        .map(|_| match rng.gen_range(0..20) {
                            0 => f32::NAN,
                            1 => -0.0,
                            k => (k % 5) as f32 * 0.25 + (k % 2) as f32 * 0.01,
                        })
                        .collect();
                    let list = edges(&weights);
                    assert_eq!(first_highest(&list, scale), running_best(&list, scale), "{weights:?} x {scale}");
                }
            }
        }
        assert_eq!(first_highest(&edges(&[0.5, 2.0, 1.0, 2.0]), 1.0), 1);
        // 0.26 and 0.5 round to one subnormal prior: the first of them is the highest prior.
        assert_eq!(first_highest(&edges(&[0.1, 0.26, 0.5]), 3e-45), 1);
        assert_eq!(first_highest(&edges(&[f32::NAN, 2.0]), 1.0), 0);
        assert_eq!(first_highest(&[], 1.0), 0);
    }

    #[test]
    fn the_halving_schedule_is_sequential_halving() {
        // 16 moves, 16 simulations: one round, each considered move visited once.
        assert_eq!(halving_schedule(16, 16, 16), vec![0; 16]);
        // 8 moves, 16 simulations (3 rounds): 8 moves once, the best 4 once more, the best 2
        // twice more.
        assert_eq!(halving_schedule(8, 16, 16), [vec![0; 8], vec![1; 4], vec![2, 2, 3, 3]].concat());
        // 16 moves, 64 simulations (4 rounds of 16): 16 x 1, then 8 moves x 2, 4 x 4, 2 x 8.
        let schedule = halving_schedule(16, 64, 64);
        let expected: Vec<u32> = [vec![0; 16], vec![1; 8], vec![2; 8], vec![3; 4], vec![4; 4], vec![5; 4], vec![6; 4]]
            .concat()
            .into_iter()
            .chain((7..15).flat_map(|l| [l, l]))
            .collect();
        assert_eq!(schedule, expected);
        // Past its budget the schedule goes on with the last two moves; one move takes them all.
        assert_eq!(&halving_schedule(4, 4, 8)[4..], &[1, 1, 2, 2]);
        assert_eq!(halving_schedule(1, 5, 3), vec![0, 1, 2]);
    }

    fn gumbel(simulations: u32, considered: u32, scale: f32) -> MctsConfig {
        MctsConfig { simulations, root: RootRule::Gumbel { considered, scale }, ..MctsConfig::competitive() }
    }

    #[test]
    fn the_gumbel_root_spreads_visits_by_halving_and_finds_the_royal_capture() {
        use Color::*;
        let variant = variant();
        let pieces =
            [("18r", "R", Black), ("18k", "K", White), ("14r", "LN", White), ("20d", "G", White), ("30ee", "K", Black)];
        let capture = (sq(&variant, "18r"), sq(&variant, "18k"));
        // Uniform priors: Gumbel samples its moves blindly, so it must consider them all to be
        // sure of the capture.
        let mut game = board(&variant, &pieces);
        let moves = game.legal_moves().len() as u32;
        let mut eval = HeuristicEvaluator::new(
            &variant,
            HeuristicConfig { priors: PriorMode::Uniform, ..HeuristicConfig::default() },
        );
        let (mv, _) = search(&mut game, &mut eval, gumbel(4 * moves, moves, 1.0), &mut ChaCha8Rng::seed_from_u64(0));
        assert_eq!((mv.from, mv.to), capture);
        // Capture priors put it among 16 considered moves whatever the noise.
        let priors = HeuristicConfig::default().priors;
        {
            for seed in 0..4 {
                let mut game = board(&variant, &pieces);
                let mut eval =
                    HeuristicEvaluator::new(&variant, HeuristicConfig { priors, ..HeuristicConfig::default() });
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let (mv, stats) = search(&mut game, &mut eval, gumbel(64, 16, 1.0), &mut rng);
                assert_eq!((mv.from, mv.to), capture, "seed {seed}");
                assert_eq!(stats.simulations, 64);
                // 16 moves visited, their visits as the schedule gives them out: 1, 3, 7 or 15
                // for those halved away, 23 for the last two.
                let mut visits: Vec<u32> = stats.visits.iter().map(|&(_, n)| n).filter(|&n| n > 0).collect();
                visits.sort_unstable();
                assert_eq!(visits, [vec![1; 8], vec![3; 4], vec![7; 2], vec![15, 15]].concat(), "{priors:?}");
                // The improved policy: a distribution over the moves, highest on the capture.
                assert_eq!(stats.policy.len(), stats.visits.len());
                assert!((stats.policy.iter().sum::<f32>() - 1.0).abs() < 1e-4);
                let best = stats.visits.iter().zip(&stats.policy).max_by(|a, b| a.1.total_cmp(b.1)).unwrap().0 .0;
                assert_eq!(best, mv);
            }
        }
    }

    #[test]
    fn gumbel_searches_are_seeded_and_scale_zero_is_deterministic() {
        let variant = variant();
        let run = |config: MctsConfig, seed: u64| {
            let mut game = Game::new(variant.clone());
            search(&mut game, &mut heuristic(&variant), config, &mut ChaCha8Rng::seed_from_u64(seed))
        };
        let noisy = gumbel(32, 8, 1.0);
        assert_eq!(run(noisy, 3), run(noisy, 3));
        let picks: HashSet<Move> = (0..12).map(|seed| run(noisy, seed).0).collect();
        assert!(picks.len() > 1, "the noise samples different moves");
        let quiet = gumbel(32, 8, 0.0);
        let first = run(quiet, 0);
        assert!((1..6).all(|seed| run(quiet, seed) == first));
        // With no noise the considered moves are the highest priors.
        let visited: HashSet<Move> = first.1.visits.iter().filter(|v| v.1 > 0).map(|v| v.0).collect();
        let mut game = Game::new(variant.clone());
        let moves = game.legal_moves();
        let mut priors = Vec::new();
        heuristic(&variant).evaluate(&mut game, &moves, &mut priors, &mut ChaCha8Rng::seed_from_u64(0));
        let mut order: Vec<usize> = (0..moves.len()).collect();
        order.sort_by(|&a, &b| priors[b].total_cmp(&priors[a]));
        let cut = priors[order[7]];
        assert!(visited.iter().all(|m| priors[moves.iter().position(|x| x == m).unwrap()] >= cut));
        assert_eq!(visited.len(), 8);
    }

    #[test]
    fn batched_gumbel_descents_wait_for_each_level() {
        let variant = variant();
        let mut game = Game::new(variant.clone());
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut search = Search::new(gumbel(16, 8, 1.0));
        let evaluate = |leaf: &LeafRequest| (vec![1.0; leaf.moves.len()], (leaf.moves.len() % 5) as f32 / 5.0 - 0.4);
        let root = search.select_leaves(&mut game, 8, &mut rng);
        assert!(search.expand(&root[0], &evaluate(&root[0]).0, 0.0));
        // Level 0: the 8 considered moves, once each, in one batch; the next descent (level 1)
        // waits for their values.
        let first = search.select_leaves(&mut game, 32, &mut rng);
        assert_eq!(first.len(), 8);
        assert_eq!(first.iter().map(|l| l.path[0]).collect::<HashSet<_>>().len(), 8);
        assert!(search.select_leaves(&mut game, 4, &mut rng).is_empty());
        for leaf in &first {
            let (priors, value) = evaluate(leaf);
            assert!(search.expand(leaf, &priors, value));
        }
        // Level 1: the best 4 of them; then level 2 waits.
        let second = search.select_leaves(&mut game, 32, &mut rng);
        assert_eq!(second.len(), 4);
        assert!(second.iter().all(|l| first.iter().any(|f| f.path[0] == l.path[0])));
        for leaf in &second {
            let (priors, value) = evaluate(leaf);
            assert!(search.expand(leaf, &priors, value));
        }
        let mut rest = 0;
        loop {
            let batch = search.select_leaves(&mut game, 32, &mut rng);
            if batch.is_empty() || search.completed_simulations() >= 16 {
                break;
            }
            for leaf in &batch {
                let (priors, value) = evaluate(leaf);
                assert!(search.expand(leaf, &priors, value));
                rest += 1;
            }
        }
        assert_eq!(rest, 4);
        // The same visits as one leaf at a time.
        let mut visits: Vec<u32> = search.root_stats().visits.iter().map(|v| v.1).filter(|&n| n > 0).collect();
        visits.sort_unstable();
        assert_eq!(visits, vec![1, 1, 1, 1, 2, 2, 4, 4]);
        check_tree(&search);
    }

    #[test]
    fn gumbel_reuses_the_tree_and_counts_this_search_alone() {
        let variant = variant();
        let mut game = Game::new(variant.clone());
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let config = MctsConfig { reuse_tree: true, ..gumbel(48, 8, 1.0) };
        let mut player = MctsPlayer::new(config, heuristic(&variant));
        for _ in 0..4 {
            let (mv, stats) = player.choose(&mut game, &mut rng);
            let total: u32 = stats.visits.iter().map(|v| v.1).sum();
            assert_eq!(total, stats.reused + 48);
            assert!(stats.visits.iter().any(|&(m, n)| m == mv && n > 0));
            check_tree(&player.search);
            player.advance(mv);
            game.play(mv);
        }
        // A PUCT search on a root that a Gumbel search visited out of order restores its order.
        let mut search = Search::new(gumbel(24, 8, 1.0));
        search.run(&mut game, &mut heuristic(&variant), &mut rng);
        search.config = MctsConfig { simulations: 24, ..MctsConfig::competitive() };
        let stats = search.run(&mut game, &mut heuristic(&variant), &mut rng);
        assert_eq!(stats.visits.iter().map(|v| v.1).sum::<u32>(), 48);
        search.config.root = RootRule::GUMBEL;
        check_tree(&search);
    }

    #[test]
    fn a_finished_game_is_a_terminal_root() {
        use Color::*;
        let variant = variant();
        // White's king is gone: Black has won; the search sees a terminal root and stops.
        let mut game = board(&variant, &[("18r", "R", Black), ("30ee", "K", Black), ("18k", "K", White)]);
        game.play(Move::new(sq(&variant, "18r") as usize, sq(&variant, "18k") as usize));
        assert!(game.recorded_end().is_some());
        let mut search = Search::new(MctsConfig::default());
        let stats = search.run(&mut game, &mut heuristic(&variant), &mut ChaCha8Rng::seed_from_u64(0));
        assert_eq!(stats.simulations, 0);
        assert!(stats.visits.is_empty());
        assert_eq!(stats.value, -1.0, "White, to move, has lost");
    }
}
