//! The two halves of a simulation: the descent with virtual loss to a leaf (`select_leaves`),
//! PUCT selection over the tried edges and the best untried one, and the expansion of a
//! leaf with its priors (`expand`) with the backup of its value. For an evaluator whose values
//! and priors come apart (`Evaluator::separable`), the synchronous search's lazy expansion: a
//! new leaf is valued at once, and given its priors and edges when a descent first goes
//! through it (`open`).

use super::tree::{Edge, Node, Search, State, NONE};
use super::RootRule;
use crate::evaluation::{outcome_value, Evaluator};
use rand_chacha::ChaCha8Rng;
use taikyoku_engine::Game;
use taikyoku_engine::Move;

/// Tried edges after which a node's untried edges are sorted instead of scanned.
const SORT_AFTER: u32 = 16;

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

/// How a descent ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Descent {
    /// A new position, waiting for evaluation.
    Leaf,
    /// A finished game: already backed up.
    Terminal,
    /// A new position valued at once by the lazy search: already backed up.
    Valued,
    /// A leaf that is already pending: virtual loss taken back, nothing to do.
    Collision,
}

impl Search {
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
    ///
    /// A tree grown by the lazy synchronous search (`Search::run` with a separable evaluator)
    /// holds nodes valued without priors, which only such an evaluator can expand: it is
    /// dropped here.
    pub fn select_leaves_into<F>(
        &mut self,
        game: &mut Game,
        max_leaves: usize,
        rng: &mut ChaCha8Rng,
        out: &mut Vec<LeafRequest>,
        at_leaf: F,
    ) -> usize
    where
        F: FnMut(&mut Game, &LeafRequest, &mut ChaCha8Rng),
    {
        if self.lazy {
            self.clear();
        }
        self.descents(game, max_leaves, rng, out, at_leaf, None::<&mut dyn Evaluator>)
    }

    /// `select_leaves_into`, expanding lazily with `lazy` where it is given: a new leaf below
    /// the root is then valued at once, and only the root is handed out.
    pub(super) fn descents<F, E>(
        &mut self,
        game: &mut Game,
        max_leaves: usize,
        rng: &mut ChaCha8Rng,
        out: &mut Vec<LeafRequest>,
        mut at_leaf: F,
        mut lazy: Option<&mut E>,
    ) -> usize
    where
        F: FnMut(&mut Game, &LeafRequest, &mut ChaCha8Rng),
        E: Evaluator + ?Sized,
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
                let descent = self.descend(game, request, lazy.as_deref_mut());
                if descent == Descent::Leaf {
                    at_leaf(game, request, rng);
                }
                for _ in 0..request.path.len() {
                    game.undo();
                }
                match descent {
                    Descent::Leaf => leaves += 1,
                    Descent::Terminal | Descent::Valued => {}
                    Descent::Collision => break,
                }
                descents += 1;
            }
            out.truncate(leaves);
            descents
        })
    }

    /// One descent; leaves `game` at the node reached (`request.path` plies from the root).
    /// With `lazy`, a valued node on the way is expanded and a new leaf below the root valued.
    fn descend<E: Evaluator + ?Sized>(
        &mut self,
        game: &mut Game,
        request: &mut LeafRequest,
        mut lazy: Option<&mut E>,
    ) -> Descent {
        request.path.clear();
        request.moves.clear();
        request.nodes.clear();
        request.epoch = self.epoch;
        let mut n = 0u32;
        loop {
            request.nodes.push(n);
            if self.nodes[n as usize].state == State::Valued {
                let evaluator = lazy.as_deref_mut().expect("only the lazy search grows valued nodes");
                self.open(n, game, evaluator);
            }
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
                State::Valued => unreachable!("expanded above"),
                State::New => {
                    // The root is always expanded at once: its noise and statistics need its
                    // edges. A lazy leaf below it is valued at once, its moves generated
                    // straight into `waiting`, where they wait for its priors.
                    let lazy = lazy.filter(|_| n != 0);
                    let start = if lazy.is_some() { self.waiting.len() } else { 0 };
                    let moves = if lazy.is_some() { &mut self.waiting } else { &mut request.moves };
                    let end = game.recorded_end().or_else(|| {
                        game.generate(moves);
                        game.end_given(&moves[start..])
                    });
                    if let Some((outcome, _)) = end {
                        moves.truncate(start);
                        let node = &mut self.nodes[n as usize];
                        node.state = State::Terminal;
                        node.terminal = outcome_value(outcome, game.side_to_move());
                        let value = node.terminal;
                        self.backup(&request.nodes, value);
                        return Descent::Terminal;
                    }
                    if let Some(evaluator) = lazy {
                        // The parent was expanded to come here: its edges are its moves.
                        let parent = request.nodes[request.nodes.len() - 2];
                        let parent_moves = self.nodes[parent as usize].len as usize;
                        let value = clean_value(evaluator.value_apart(game, &self.waiting[start..], parent_moves));
                        let node = &mut self.nodes[n as usize];
                        node.state = State::Valued;
                        node.raw_value = value;
                        node.edges = start as u32;
                        node.len = (self.waiting.len() - start) as u32;
                        self.backup(&request.nodes, value);
                        return Descent::Valued;
                    }
                    let node = &mut self.nodes[n as usize];
                    node.state = State::Pending;
                    self.pending += 1;
                    return Descent::Leaf;
                }
            }
        }
    }

    /// Expands the valued node `n`, where `game` stands: `evaluator` gives its waiting moves
    /// their priors, as `evaluate` would have when it was valued.
    pub(super) fn open<E: Evaluator + ?Sized>(&mut self, n: u32, game: &Game, evaluator: &mut E) {
        let node = self.nodes[n as usize];
        let (waiting, mut priors) = (std::mem::take(&mut self.waiting), std::mem::take(&mut self.priors));
        let moves = &waiting[node.edges as usize..(node.edges + node.len) as usize];
        evaluator.priors_apart(game, moves, &mut priors);
        assert_eq!(priors.len(), moves.len(), "one prior per legal move");
        self.write_edges(n, moves, &priors);
        (self.waiting, self.priors) = (waiting, priors);
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
    pub(super) fn prepare_next(&mut self, n: u32) {
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
        self.write_edges(n, &leaf.moves, priors);
        self.pending -= 1;
        let value = clean_value(value);
        self.nodes[n as usize].raw_value = value;
        self.backup(&leaf.nodes, value);
        true
    }

    /// Gives node `n` its edges: `moves` with their `priors` (normalised here, a bad or
    /// all-zero vector becomes uniform), the first untried one first.
    fn write_edges(&mut self, n: u32, moves: &[Move], priors: &[f32]) {
        let clean = |p: f32| if p.is_finite() && p > 0.0 { p } else { 0.0 };
        // The edges are written once, while the weights are summed in order (each addition waits
        // on the one before, so the writes come free) and their highest is found; the node's
        // scale normalises them. The edges (16 bytes a move) are the search's memory traffic.
        let start = self.edges.len();
        // (Clean weights are not negative, so their bits compare as they do.)
        let (mut total, mut highest) = (0.0f32, 0u32);
        self.edges.extend(moves.iter().zip(priors).map(|(&mv, &p)| {
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
            1.0 / moves.len() as f32
        };
        // The first untried edge is the first of the highest prior (as `prepare_next` finds it).
        if !edges.is_empty() {
            let best = start + first_of_highest(edges, highest, scale);
            self.edges.swap(start, best);
        }
        let node = &mut self.nodes[n as usize];
        node.edges = start as u32;
        node.len = moves.len() as u32;
        node.tried = 0;
        node.sorted = false;
        node.scale = scale;
        node.state = State::Expanded;
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
}

/// An evaluator's value as the tree keeps it: clamped to [-1, 1], 0 if not a number.
fn clean_value(value: f32) -> f32 {
    if value.is_finite() {
        value.clamp(-1.0, 1.0)
    } else {
        0.0
    }
}

/// The place of the first edge with the highest prior (`weight * scale`), as a running best
/// (`prior > best`) finds it, the first edge kept if its prior is NaN. The highest weight is
/// taken over eight lanes, then its first place is sought: one running best would wait on every
/// comparison in turn, and nodes have thousands of edges.
pub(super) fn first_highest(edges: &[Edge], scale: f32) -> usize {
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
