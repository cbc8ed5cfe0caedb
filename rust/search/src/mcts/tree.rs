//! The tree: nodes and edges in two arenas addressed by `u32` (see the module doc), the
//! `Search` that holds them with its settings, and the root it stands for (re-rooting onto a
//! played move keeps the subtree, copied compactly into the spare arenas).

use super::gumbel::GumbelRoot;
use super::MctsConfig;
use taikyoku_engine::Game;
use taikyoku_engine::Move;

/// "No child node yet".
pub(super) const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    /// Created when its edge was first selected; not evaluated yet.
    New,
    /// Handed out by `select_leaves`, waiting for `expand`.
    Pending,
    /// Valued by the lazy synchronous search (`Evaluator::separable`), its value backed up; its
    /// moves wait in `Search::waiting` for their priors and edges until a descent first goes
    /// through it (most leaves never see one).
    Valued,
    Expanded,
    /// The game is over here; `terminal` holds the result.
    Terminal,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Node {
    /// First edge and number of edges (expanded nodes); a valued node's first move in
    /// `Search::waiting` and number of moves.
    pub(super) edges: u32,
    pub(super) len: u32,
    /// Edges `0..tried` may have been visited; the rest have not, and edge `tried` has the
    /// highest prior among them (see the module doc).
    pub(super) tried: u32,
    /// Whether the untried edges are sorted by prior (highest first).
    pub(super) sorted: bool,
    /// An edge's prior is its weight times this (`1 / total` of the weights at expansion): the
    /// weights are written once and not scaled in place.
    pub(super) scale: f32,
    pub(super) visits: u32,
    /// Descents through this node still waiting for their evaluation.
    pub(super) in_flight: u32,
    pub(super) state: State,
    /// Value of a terminal node for its side to move.
    pub(super) terminal: f32,
    /// Sum of backed-up values for the player who moved into this node.
    pub(super) value_sum: f64,
    /// The evaluator's value of this node for its side to move (expanded and valued nodes):
    /// the Gumbel root's estimate for the moves it has not visited.
    pub(super) raw_value: f32,
}

impl Node {
    pub(super) fn new() -> Node {
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
pub(super) struct Edge {
    pub(super) mv: Move,
    /// The evaluator's weight (cleaned; at a noised root, the prior itself): the prior is
    /// `prior(node.scale)`.
    pub(super) weight: f32,
    pub(super) child: u32,
}

impl Edge {
    /// The edge's prior, given its node's scale.
    #[inline]
    pub(super) fn prior(&self, scale: f32) -> f32 {
        self.weight * scale
    }
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
    pub(super) nodes: Vec<Node>,
    pub(super) edges: Vec<Edge>,
    /// The moves of valued nodes (`State::Valued`), in the ranges their nodes name.
    pub(super) waiting: Vec<Move>,
    /// Arenas of the previous tree, reused by the next re-root instead of reallocating.
    spare_nodes: Vec<Node>,
    spare_edges: Vec<Edge>,
    spare_waiting: Vec<Move>,
    /// Whether the lazy synchronous search grew this tree: it may hold valued nodes, which
    /// only an evaluator with separable values and priors can expand.
    pub(super) lazy: bool,
    /// Scratch: the priors of a valued node being expanded.
    pub(super) priors: Vec<f32>,
    root_key: RootKey,
    pub(super) root_noised: bool,
    /// The Gumbel root's state for the search from the current root (set once the root is
    /// expanded, dropped with the root).
    pub(super) gumbel: Option<GumbelRoot>,
    /// The root's edges were visited out of their tried order (by a Gumbel root): PUCT must
    /// restore its invariant before selecting there.
    pub(super) root_out_of_order: bool,
    pub(super) epoch: u64,
    pub(super) pending: u32,
    /// Simulations backed up below the root since it became the root.
    pub(super) completed: u64,
}

impl Search {
    /// An empty tree: the first search starts from the game it is given.
    pub fn new(config: MctsConfig) -> Search {
        let mut search = Search {
            config,
            nodes: Vec::with_capacity(1 << 12),
            edges: Vec::with_capacity(1 << 16),
            waiting: Vec::new(),
            spare_nodes: Vec::new(),
            spare_edges: Vec::new(),
            spare_waiting: Vec::new(),
            lazy: false,
            priors: Vec::new(),
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

    pub(super) fn clear(&mut self) {
        self.nodes.clear();
        self.edges.clear();
        self.waiting.clear();
        self.lazy = false;
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
    pub(super) fn sync_root(&mut self, game: &Game) {
        if !self.stands_for(game) {
            self.clear();
        }
        self.root_key = RootKey::At { hash: game.position.hash(), plies: game.plies() };
    }

    /// Whether the tree's root is the current position of `game`.
    fn stands_for(&self, game: &Game) -> bool {
        let (hash, plies) = (game.position.hash(), game.plies());
        match &self.root_key {
            RootKey::Unset => false,
            RootKey::At { hash: h, plies: p } => *h == hash && *p == plies,
            RootKey::After { plies: p, moves } => {
                let history = game.position.history_len();
                plies == p + moves.len()
                    && history >= moves.len()
                    && game.position.moves_played().skip(history - moves.len()).eq(moves.iter().copied())
            }
        }
    }

    /// The number of legal moves in `game`'s current position where the tree already holds
    /// them (its root stands for the position and was expanded or valued: a tree advanced
    /// from the last search), so a player need not generate them again; `None` otherwise.
    pub fn root_move_count(&self, game: &Game) -> Option<usize> {
        let root = self.nodes.first()?;
        (matches!(root.state, State::Expanded | State::Valued) && self.stands_for(game)).then_some(root.len as usize)
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
        let mut waiting = std::mem::take(&mut self.spare_waiting);
        nodes.clear();
        edges.clear();
        waiting.clear();
        nodes.push(fresh(self.nodes[root as usize]));
        let mut i = 0;
        while i < nodes.len() {
            let node = nodes[i];
            if node.state == State::Expanded {
                // The edges in one copy, then their children renumbered in order.
                let start = edges.len();
                edges.extend_from_slice(&self.edges[node.edges as usize..(node.edges + node.len) as usize]);
                for edge in &mut edges[start..] {
                    if edge.child != NONE {
                        nodes.push(fresh(self.nodes[edge.child as usize]));
                        edge.child = nodes.len() as u32 - 1;
                    }
                }
                nodes[i].edges = start as u32;
            } else if node.state == State::Valued {
                nodes[i].edges = waiting.len() as u32;
                waiting.extend_from_slice(&self.waiting[node.edges as usize..(node.edges + node.len) as usize]);
            }
            i += 1;
        }
        self.spare_nodes = std::mem::replace(&mut self.nodes, nodes);
        self.spare_edges = std::mem::replace(&mut self.edges, edges);
        self.spare_waiting = std::mem::replace(&mut self.waiting, waiting);
        self.root_noised = false;
        self.gumbel = None;
        self.root_out_of_order = false;
        self.epoch += 1;
        self.pending = 0;
        self.completed = 0;
    }
}
