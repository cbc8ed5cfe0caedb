//! A cheap heuristic evaluator for tree search: piece values derived from the rules, material,
//! mobility and capture-aware move priors.
//!
//! Nothing here is typed in per piece: a piece's value comes from what the move generator lets it
//! do, so the values follow the piece table (and its rule options) automatically.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::sync::{Arc, Mutex, OnceLock};
use taikyoku_engine::table::{Kind, NO_RANK};
use taikyoku_engine::Color;
use taikyoku_engine::Variant;
use taikyoku_engine::{Game, Outcome};
use taikyoku_engine::{Move, Piece, Position, NO_SQUARE};

/// Share of the gain of promoting (promoted value minus own value) added to an unpromoted piece.
/// Promotion comes with a piece's first capture, so it is likely but not certain.
const PROMOTION_SHARE: f32 = 0.25;

/// A royal is worth this many times the most valuable non-royal piece (plus its own mobility):
/// losing one is worse than losing any other piece, and the last one ends the game.
const ROYAL_FACTOR: f32 = 2.0;

/// Per-kind values derived from each piece's movement.
///
/// `base = (sqrt(open) + sqrt(crowded)) / 2`, where
/// - `open` is the number of distinct squares the piece reaches on an otherwise empty board, and
/// - `crowded` the number of moves it has when every other square holds an enemy piece of the
///   lowest rank (its immediate capturing power: lion double captures and range capture count).
///
/// Both are averaged over three squares (centre, own half, enemy half). The square root keeps
/// long-range pieces (a hook mover reaches all 1,295 other squares of an empty board) from
/// swamping everything else: in the crowded opening, reach matters less than it counts.
/// An unpromoted piece gets `PROMOTION_SHARE` of its promotion gain on top; royals are worth
/// `ROYAL_FACTOR` times the best non-royal piece plus their own base.
#[derive(Clone, Debug)]
pub struct PieceValues {
    /// Value of an unpromoted piece of each kind (includes the promotion bonus).
    unpromoted: Vec<f32>,
    /// Value of a piece of each kind that has already promoted (cannot promote again).
    promoted: Vec<f32>,
    open: Vec<f32>,
    crowded: Vec<f32>,
    /// Median non-royal value: the unit of the capture priors.
    reference: f32,
    /// Whether every sum of values over a board's pieces is exact in f64 (see `derive`), so a
    /// side's material can follow the moves and still be the sum taken again, bit for bit.
    exact_sums: bool,
}

/// The three sample squares for `color`, as (x, y) for Black; White's are rotated by 180° so
/// both colours see the same surroundings.
fn sample_squares(variant: &Variant, color: Color) -> [usize; 3] {
    let g = &variant.geometry;
    let (w, h) = (g.width as i32, g.height as i32);
    let black = [(w / 2, h / 2), (w / 4, 3 * h / 4), (3 * w / 4, h / 4)];
    black.map(|(x, y)| {
        let sq = g.square(x, y).expect("sample square on the board");
        match color {
            Color::Black => sq,
            Color::White => variant.rotate(sq),
        }
    })
}

/// (open, crowded) mobility of every kind for pieces of `color`, averaged over the sample squares.
fn mobilities(variant: &Arc<Variant>, color: Color) -> (Vec<f32>, Vec<f32>) {
    let table = &variant.table;
    let size = variant.geometry.size();
    let squares = sample_squares(variant, color);
    let filler = (0..table.len() as Kind)
        .find(|&k| !table.get(k).royal && table.get(k).range_rank == NO_RANK)
        .expect("the table has an unranked non-royal piece");
    let enemy = Piece { kind: filler, origin: filler, color: color.opponent(), promoted: false };
    let mut open_board = Position::empty(variant.clone(), color);
    let mut crowded_board = Position::empty(variant.clone(), color);
    for sq in 0..size {
        crowded_board.put(sq, enemy);
    }
    let mut moves = Vec::with_capacity(4096);
    let mut reached = vec![false; size];
    let mut open = Vec::with_capacity(table.len());
    let mut crowded = Vec::with_capacity(table.len());
    for kind in 0..table.len() as Kind {
        let piece = Piece { kind, origin: kind, color, promoted: false };
        let (mut open_sum, mut crowded_sum) = (0usize, 0usize);
        for &sq in &squares {
            open_board.put(sq, piece);
            moves.clear();
            open_board.generate_from(sq, &mut moves);
            for m in &moves {
                let to = m.to as usize;
                if to != sq && !reached[to] {
                    reached[to] = true;
                    open_sum += 1;
                }
            }
            for m in &moves {
                reached[m.to as usize] = false;
            }
            open_board.remove(sq);

            crowded_board.put(sq, piece);
            moves.clear();
            crowded_board.generate_from(sq, &mut moves);
            crowded_sum += moves.iter().filter(|m| !m.is_pass()).count();
            crowded_board.put(sq, enemy);
        }
        open.push(open_sum as f32 / squares.len() as f32);
        crowded.push(crowded_sum as f32 / squares.len() as f32);
    }
    (open, crowded)
}

impl PieceValues {
    /// Derives the values from the variant's rules (about 2,000 single-piece generations).
    pub fn derive(variant: &Arc<Variant>) -> PieceValues {
        let table = &variant.table;
        let (open, crowded) = mobilities(variant, Color::Black);
        let base: Vec<f32> = open.iter().zip(&crowded).map(|(o, c)| (o.sqrt() + c.sqrt()) / 2.0).collect();
        let mut unpromoted: Vec<f32> = (0..table.len())
            .map(|k| {
                let gain = table.get(k as Kind).promotes_to.map_or(0.0, |p| (base[p as usize] - base[k]).max(0.0));
                base[k] + PROMOTION_SHARE * gain
            })
            .collect();
        let mut promoted = base.clone();
        let mut non_royal: Vec<f32> =
            (0..table.len()).filter(|&k| !table.get(k as Kind).royal).map(|k| unpromoted[k]).collect();
        non_royal.sort_by(f32::total_cmp);
        let best = non_royal.last().copied().unwrap_or(1.0);
        let reference = non_royal.get(non_royal.len() / 2).copied().unwrap_or(1.0).max(f32::MIN_POSITIVE);
        for k in 0..table.len() {
            if table.get(k as Kind).royal {
                unpromoted[k] = ROYAL_FACTOR * best + base[k];
                promoted[k] = ROYAL_FACTOR * best + base[k];
            }
        }
        // Sums are exact in f64 when a board full of the largest value stays below 2^52 of the
        // smallest spacing of floats among the values (every value, an f32 no smaller, is a
        // multiple of it). In Taikyoku: spacing 2^-24 and totals below 2^16, i.e. 40 bits.
        let all = || unpromoted.iter().chain(&promoted).map(|&v| v as f64);
        let spacing = all().filter(|&v| v > 0.0).map(|v| (v as f32).next_up() as f64 - v).fold(f64::INFINITY, f64::min);
        let largest = all().fold(0.0, f64::max);
        let board = variant.geometry.size() as f64;
        let exact_sums = all().all(|v| v >= 0.0) && board * largest / spacing < (1u64 << 52) as f64;
        PieceValues { unpromoted, promoted, open, crowded, reference, exact_sums }
    }

    /// The variant's values, derived on first use and shared afterwards (keyed by variant name
    /// and rule options, which determine the piece table).
    pub fn of(variant: &Arc<Variant>) -> Arc<PieceValues> {
        type Cache = Mutex<Vec<((String, Vec<String>), Arc<PieceValues>)>>;
        static CACHE: OnceLock<Cache> = OnceLock::new();
        let key = (variant.name.clone(), variant.options.clone());
        let mut cache = CACHE.get_or_init(|| Mutex::new(Vec::new())).lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, values)) = cache.iter().find(|(k, _)| *k == key) {
            return values.clone();
        }
        let values = Arc::new(PieceValues::derive(variant));
        cache.push((key, values.clone()));
        values
    }

    /// Value of an unpromoted piece of `kind` (with its promotion bonus).
    pub fn value(&self, kind: Kind) -> f32 {
        self.unpromoted[kind as usize]
    }

    /// Value of a piece as it stands: a promoted piece has no promotion left to gain.
    #[inline]
    pub fn piece_value(&self, piece: Piece) -> f32 {
        if piece.promoted {
            self.promoted[piece.kind as usize]
        } else {
            self.unpromoted[piece.kind as usize]
        }
    }

    /// Average number of squares `kind` reaches on an empty board.
    pub fn open_mobility(&self, kind: Kind) -> f32 {
        self.open[kind as usize]
    }

    /// Average number of moves of `kind` surrounded by enemies.
    pub fn crowded_mobility(&self, kind: Kind) -> f32 {
        self.crowded[kind as usize]
    }

    /// The median non-royal value, a natural unit for "how big is this capture".
    pub fn reference(&self) -> f32 {
        self.reference
    }

    /// Total value of `color`'s pieces.
    pub fn material(&self, pos: &Position, color: Color) -> f32 {
        self.material_sum(pos, color) as f32
    }

    /// `material` before it is rounded to f32: summed in f64 so both colours' totals of the
    /// same pieces agree to f32 precision (exactly, where `exact_sums`).
    fn material_sum(&self, pos: &Position, color: Color) -> f64 {
        pos.squares_of(color).map(|sq| self.piece_value(pos.at(sq).expect("occupied square")) as f64).sum()
    }

    /// `color`'s material minus its opponent's.
    pub fn balance(&self, pos: &Position, color: Color) -> f32 {
        balance_of(Color::BOTH.map(|c| self.material_sum(pos, c)), color)
    }

    /// Value of everything `mv` captures plus, if the mover promotes, `promotion_weight` times
    /// the promotion gain (the captures are those of `Position::captures_of`, found without
    /// allocating).
    #[inline]
    pub fn move_gain(&self, pos: &Position, mv: Move, promotion_weight: f32) -> f32 {
        let mut captured = 0.0;
        let mut any = false;
        pos.for_each_capture(mv, |sq| {
            captured += self.piece_value(pos.at(sq).expect("a captured square is occupied"));
            any = true;
        });
        self.with_promotion_gain(pos, mv, captured, any, promotion_weight)
    }

    /// `move_gain` of each move of `moves` that captures, given to `f` with the move's index, in
    /// order (the others gain 0). The same figures as move by move, faster: range captures
    /// along one line come in order of distance, so the value of the pieces passed is carried
    /// from one to the next (summed in the same order).
    pub fn capture_gains(&self, pos: &Position, moves: &[Move], promotion_weight: f32, mut f: impl FnMut(usize, f32)) {
        let g = &pos.variant.geometry;
        let mut line = SweptLine { from: usize::MAX, step: 0, next: 0, distance: 0, value: 0.0, pieces: 0 };
        let mut next = 0;
        loop {
            // Most moves capture nothing: a tight scan finds the next that may.
            let i = next_capture(pos, moves, next);
            let Some(&mv) = moves.get(i) else { break };
            next = i + 1;
            // Most moves capture at most on `to`: tested first, one piece at most to value.
            if mv.mid == NO_SQUARE && !mv.sweep() {
                pos.for_each_capture(mv, |sq| {
                    let captured = self.piece_value(pos.at(sq).expect("a captured square is occupied"));
                    f(i, self.with_promotion_gain(pos, mv, captured, true, promotion_weight));
                });
                continue;
            }
            let (mut captured, mut any) = (0.0, false);
            if mv.mid != NO_SQUARE {
                pos.for_each_capture(mv, |sq| {
                    captured += self.piece_value(pos.at(sq).expect("a captured square is occupied"));
                    any = true;
                });
            } else {
                let (from, to) = (mv.from as usize, mv.to as usize);
                let (step, distance) = g.line_step(from, to);
                if (line.from, line.step) != (from, step) || line.distance > distance {
                    line = SweptLine {
                        from,
                        step,
                        next: (from as isize + step) as usize,
                        distance: 1,
                        value: 0.0,
                        pieces: 0,
                    };
                }
                while line.next != to {
                    if let Some(p) = pos.at(line.next) {
                        line.value += self.piece_value(p);
                        line.pieces += 1;
                    }
                    line.next = (line.next as isize + step) as usize;
                    line.distance += 1;
                }
                (captured, any) = (line.value, line.pieces > 0);
                if let Some(p) = pos.at(to) {
                    captured += self.piece_value(p);
                    any = true;
                }
            }
            if any {
                f(i, self.with_promotion_gain(pos, mv, captured, any, promotion_weight));
            }
        }
    }

    /// `captured` plus, if the move captures (`any`) and the mover promotes, `promotion_weight`
    /// times the promotion gain.
    #[inline]
    fn with_promotion_gain(
        &self,
        pos: &Position,
        mv: Move,
        mut captured: f32,
        any: bool,
        promotion_weight: f32,
    ) -> f32 {
        if any && promotion_weight != 0.0 {
            if let Some(mover) = pos.at(mv.from as usize) {
                if !mover.promoted {
                    if let Some(up) = pos.variant.table.get(mover.kind).promotes_to {
                        let gain = self.promoted[up as usize] - self.promoted[mover.kind as usize];
                        captured += promotion_weight * gain.max(0.0);
                    }
                }
            }
        }
        captured
    }
}

/// `color`'s material minus its opponent's, given both sides' `PieceValues::material_sum`
/// (Black's, White's): each rounded to f32 first, as `material` gives them.
fn balance_of(sums: [f64; 2], color: Color) -> f32 {
    sums[color.index()] as f32 - sums[color.opponent().index()] as f32
}

/// How the heuristic spreads its prior over the legal moves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PriorMode {
    /// Every move equally likely.
    Uniform,
    /// Weight `1 + capture_weight * gain / reference`, where `gain` is the captured value plus
    /// `promotion_weight` times the promotion gain: captures of big pieces (and royals above all)
    /// are tried first, quiet moves keep a share.
    Captures {
        /// Weight added per `PieceValues::reference` of gain (a quiet move weighs 1); 2.0 by
        /// default.
        capture_weight: f32,
        /// Factor on the mover's promotion gain within `gain` (see `PieceValues::move_gain`);
        /// 0.5 by default.
        promotion_weight: f32,
    },
}

/// Tuning of `HeuristicEvaluator`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeuristicConfig {
    /// `value = tanh(scale * (material balance + mobility term))`, in material units.
    pub scale: f32,
    /// Material units for having all the moves: the mobility term is
    /// `mobility_weight * (mine - theirs) / (mine + theirs)`.
    pub mobility_weight: f32,
    /// Prior over the legal moves; `Captures` (weights 2.0 and 0.5) by default.
    pub priors: PriorMode,
    /// Uniformly random plies played (and taken back) before evaluating; 0 evaluates the leaf.
    pub rollout_plies: u32,
    /// Where the mobility term counts the opponent's moves at a search's leaves;
    /// `OpponentMoves::Parent` by default.
    pub opponent_moves: OpponentMoves,
}

/// Where the heuristic counts the opponent's moves for a leaf's mobility term
/// (`HeuristicConfig::opponent_moves`).
///
/// It applies to the leaves the synchronous search values apart (`Evaluator::value_apart`).
/// `evaluate` (a search's root, rollouts, the batched halves) and `static_value` count both
/// sides in the position itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpponentMoves {
    /// At the parent node, before the opponent's move: each side's moves are counted at its
    /// own turn, and the count is the parent's number of edges, which the search has. A leaf
    /// costs one move generation. The default: as strong as `Leaf` in colour-swapped matches
    /// (docs/STRENGTH.md), at about 60% of the cost of a simulation.
    Parent,
    /// At the leaf: a second move generation per leaf (the only way before issue 27).
    Leaf,
}

impl OpponentMoves {
    /// The setting's name in self-play settings, Python and the command line.
    pub fn name(self) -> &'static str {
        match self {
            OpponentMoves::Parent => "parent",
            OpponentMoves::Leaf => "leaf",
        }
    }

    /// The setting named `name` (`name`'s inverse).
    pub fn from_name(name: &str) -> Option<OpponentMoves> {
        [OpponentMoves::Parent, OpponentMoves::Leaf].into_iter().find(|o| o.name() == name)
    }
}

impl Default for HeuristicConfig {
    fn default() -> Self {
        // In Taikyoku a side starts with ~1,800 units; a royal is ~40 (see `PieceValues`).
        // scale 0.02: one royal of two (or a dozen good pieces) ahead gives tanh(1) = 0.76.
        HeuristicConfig {
            scale: 0.02,
            mobility_weight: 10.0,
            priors: PriorMode::Captures { capture_weight: 2.0, promotion_weight: 0.5 },
            rollout_plies: 0,
            opponent_moves: OpponentMoves::Parent,
        }
    }
}

/// What a tree search asks of a position.
pub trait Evaluator {
    /// Fills `priors` (same length as `moves`, non-negative, summing to 1) and returns the
    /// position's value in [-1, 1] for the side to move. `moves` are the legal moves of `game`,
    /// which is not over. `game` must be left as it was given.
    fn evaluate(&mut self, game: &mut Game, moves: &[Move], priors: &mut Vec<f32>, rng: &mut ChaCha8Rng) -> f32;

    /// Whether the value and the priors may be asked apart (`value_apart`, `priors_apart`), each
    /// for less than `evaluate` and without random draws. The synchronous search (`Search::run`)
    /// then expands lazily: a new leaf below the root is valued at once, and its moves get their
    /// priors when a descent first goes through it, which most leaves never see. Where the two
    /// give `evaluate`'s numbers, the searches are the same, for less. False by default.
    fn separable(&self) -> bool {
        false
    }

    /// The value of a new leaf below the root: `evaluate`'s, or one that uses what the search
    /// knows of the leaf's parent: `parent_moves`, the number of the parent node's moves (the
    /// opponent's, before its move; the heuristic's `OpponentMoves::Parent`). Asked only where
    /// `separable`.
    fn value_apart(&mut self, _game: &mut Game, _moves: &[Move], _parent_moves: usize) -> f32 {
        unreachable!("value_apart of an evaluator that is not separable")
    }

    /// The priors `evaluate` would give. Asked only where `separable`.
    fn priors_apart(&mut self, _game: &Game, _moves: &[Move], _priors: &mut Vec<f32>) {
        unreachable!("priors_apart of an evaluator that is not separable")
    }
}

/// Material + mobility value, capture-aware priors, optional short random rollouts.
#[derive(Clone, Debug)]
pub struct HeuristicEvaluator {
    /// The variant's derived piece values, shared through `PieceValues::of`.
    pub values: Arc<PieceValues>,
    /// Value scale, mobility weight, prior mode and rollout length.
    pub config: HeuristicConfig,
    /// Reused move buffers: the opponent's moves, the rollout's moves.
    buffer: Vec<Move>,
    rollout: Vec<Move>,
    /// Both sides' material of the positions `evaluate` evaluated recently (`material_sums`).
    material: MaterialCache,
}

/// Both sides' material (`PieceValues::material_sum`) of positions recently evaluated, by hash
/// (the 64-bit position hash stands for the position, as in the repetition rules), one entry per
/// slot (128 KiB, allocated on first use). A search evaluates a leaf one move after
/// a position it evaluated before (its parent), so the leaf's material is the parent's, followed
/// through the move.
#[derive(Clone, Debug, Default)]
struct MaterialCache {
    slots: Vec<Option<(u64, [f64; 2])>>,
}

impl MaterialCache {
    const SLOTS: usize = 1 << 12;

    fn slot(hash: u64) -> usize {
        (hash as usize) & (Self::SLOTS - 1)
    }

    fn get(&self, hash: u64) -> Option<[f64; 2]> {
        self.slots.get(Self::slot(hash))?.filter(|&(h, _)| h == hash).map(|(_, sums)| sums)
    }

    fn put(&mut self, hash: u64, sums: [f64; 2]) {
        if self.slots.is_empty() {
            self.slots = vec![None; Self::SLOTS];
        }
        self.slots[Self::slot(hash)] = Some((hash, sums));
    }
}

impl HeuristicEvaluator {
    /// An evaluator for `variant`; its piece values are derived on the variant's first use, then
    /// shared.
    pub fn new(variant: &Arc<Variant>, config: HeuristicConfig) -> HeuristicEvaluator {
        HeuristicEvaluator {
            values: PieceValues::of(variant),
            config,
            buffer: Vec::with_capacity(4096),
            rollout: Vec::with_capacity(4096),
            material: MaterialCache::default(),
        }
    }

    /// Black's and White's `PieceValues::material_sum` in `pos`: where the sums are exact, from
    /// the position before the last move if it was evaluated recently (the value of what the
    /// move removed and of the mover's change taken off and added: exact too, so the same
    /// bits as the sums taken again), and taken again otherwise.
    fn material_sums(&mut self, pos: &Position) -> [f64; 2] {
        let values = &self.values;
        let full = || Color::BOTH.map(|color| values.material_sum(pos, color));
        if !values.exact_sums {
            return full();
        }
        let hash = pos.hash();
        if let Some(sums) = self.material.get(hash) {
            return sums;
        }
        let followed = pos.last_change().and_then(|change| {
            let mut sums = self.material.get(change.hash_before)?;
            let value = |p: Piece| values.piece_value(p) as f64;
            for &(_, p) in change.removed {
                sums[p.color.index()] -= value(p);
            }
            sums[change.moved.color.index()] -= value(change.moved);
            if let Some(p) = change.arrived {
                sums[p.color.index()] += value(p);
            }
            Some(sums)
        });
        let sums = followed.unwrap_or_else(full);
        self.material.put(hash, sums);
        sums
    }

    /// Static value of `pos` for its side to move, given that side's legal moves.
    pub fn static_value(&mut self, pos: &Position, moves: &[Move]) -> f32 {
        let material = self.values.balance(pos, pos.side_to_move());
        self.value_of(pos, material, moves)
    }

    /// `static_value` of a search's leaf, the same bits, its material followed from its
    /// parent's where `evaluate` evaluated that (`material_sums`).
    fn leaf_value(&mut self, pos: &Position, moves: &[Move]) -> f32 {
        let material = balance_of(self.material_sums(pos), pos.side_to_move());
        self.value_of(pos, material, moves)
    }

    /// The value for the side to move, given its material balance and its moves (the
    /// opponent's are counted here).
    fn value_of(&mut self, pos: &Position, material: f32, moves: &[Move]) -> f32 {
        self.buffer.clear();
        pos.generate(pos.side_to_move().opponent(), &mut self.buffer);
        self.value_from_counts(material, moves.len(), self.buffer.len())
    }

    /// The value for the side to move, given its material balance and the number of its moves
    /// (`mine`) and of its opponent's (`theirs`).
    pub(crate) fn value_from_counts(&self, material: f32, mine: usize, theirs: usize) -> f32 {
        let (mine, theirs) = (mine as f32, theirs as f32);
        let mobility = if mine + theirs > 0.0 { (mine - theirs) / (mine + theirs) } else { 0.0 };
        (self.config.scale * (material + self.config.mobility_weight * mobility)).tanh()
    }

    /// Prior weights for `moves` in `pos`, normalised to sum to 1.
    pub fn priors(&self, pos: &Position, moves: &[Move], priors: &mut Vec<f32>) {
        priors.clear();
        if moves.is_empty() {
            return;
        }
        match self.config.priors {
            PriorMode::Uniform => priors.resize(moves.len(), 1.0 / moves.len() as f32),
            PriorMode::Captures { capture_weight, promotion_weight } => {
                let unit = capture_weight / self.values.reference();
                // Each move weighs `1 + unit * gain`, summed in order; a move that captures
                // nothing gains 0 (weight 1, unless the configured weight is not finite).
                let quiet = 1.0 + unit * 0.0;
                priors.resize(moves.len(), quiet);
                let (mut total, mut summed) = (0.0, 0);
                self.values.capture_gains(pos, moves, promotion_weight, |i, gain| {
                    let w = 1.0 + unit * gain;
                    total = add_repeatedly(total, quiet, i - summed) + w;
                    priors[i] = w;
                    summed = i + 1;
                });
                total = add_repeatedly(total, quiet, moves.len() - summed);
                let inv = 1.0 / total;
                priors.iter_mut().for_each(|p| *p *= inv);
            }
        }
    }

    /// Value after up to `rollout_plies` random plies, for the side to move at the start.
    fn rollout_value(&mut self, game: &mut Game, moves: &[Move], rng: &mut ChaCha8Rng) -> f32 {
        let start = game.side_to_move();
        let mut played = 0;
        let mut current = std::mem::take(&mut self.rollout);
        let value = loop {
            let legal: &[Move] = if played == 0 { moves } else { &current };
            if let Some((outcome, _)) = game.end_given(legal) {
                break outcome_value(outcome, start);
            }
            if played == self.config.rollout_plies {
                let v = self.static_value(&game.position, legal);
                break if game.side_to_move() == start { v } else { -v };
            }
            let mv = legal[rng.gen_range(0..legal.len())];
            game.play(mv);
            played += 1;
            current.clear();
            game.generate(&mut current);
        };
        for _ in 0..played {
            game.undo();
        }
        self.rollout = current;
        value
    }
}

/// The index of the first move of `moves` from `i` on that may capture
/// (`Position::may_capture`), or `moves.len()`.
#[inline]
fn next_capture(pos: &Position, moves: &[Move], mut i: usize) -> usize {
    while moves.get(i).is_some_and(|&mv| !pos.may_capture(mv)) {
        i += 1;
    }
    i
}

/// The line a range capture sweeps (`PieceValues::capture_gains`): the next square not yet
/// summed, its distance from `from`, and the value and number of the pieces before it.
struct SweptLine {
    from: usize,
    step: isize,
    next: usize,
    distance: usize,
    value: f32,
    pieces: u32,
}

/// `total + w + w + ...` with `n` additions of `w` in turn, in f32: the priors' sum, bit for
/// bit. Runs of ones (the quiet moves) take one addition where that is exact: adding ones to a
/// float below 2^24 rounds nothing while the sum stays below the next power of two.
fn add_repeatedly(mut total: f32, w: f32, n: usize) -> f32 {
    const EXACT: usize = 1 << 24;
    if w == 1.0 && (0.0..EXACT as f32).contains(&total) && n < EXACT {
        // The power of two above `total`: there the spacing of floats doubles.
        let top = if total == 0.0 { EXACT as f32 } else { f32::from_bits(((total.to_bits() >> 23) + 1) << 23) };
        if (total as f64 + n as f64) < top as f64 {
            return total + n as f32;
        }
    }
    for _ in 0..n {
        total += w;
    }
    total
}

/// A finished game's value for `view`: win 1, loss -1, draw or no result 0.
pub fn outcome_value(outcome: Outcome, view: Color) -> f32 {
    outcome.value_for(view) as f32
}

impl Evaluator for HeuristicEvaluator {
    fn evaluate(&mut self, game: &mut Game, moves: &[Move], priors: &mut Vec<f32>, rng: &mut ChaCha8Rng) -> f32 {
        self.priors(&game.position, moves, priors);
        if self.config.rollout_plies == 0 {
            self.leaf_value(&game.position, moves)
        } else {
            self.rollout_value(game, moves, rng)
        }
    }

    /// Without rollouts (which draw), the priors and the value are computed apart.
    fn separable(&self) -> bool {
        self.config.rollout_plies == 0
    }

    fn value_apart(&mut self, game: &mut Game, moves: &[Move], parent_moves: usize) -> f32 {
        match self.config.opponent_moves {
            OpponentMoves::Leaf => self.leaf_value(&game.position, moves),
            OpponentMoves::Parent => {
                let pos = &game.position;
                let material = balance_of(self.material_sums(pos), pos.side_to_move());
                self.value_from_counts(material, moves.len(), parent_moves)
            }
        }
    }

    fn priors_apart(&mut self, game: &Game, moves: &[Move], priors: &mut Vec<f32>) {
        self.priors(&game.position, moves, priors);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn variant() -> Arc<Variant> {
        Variant::load("taikyoku", &[]).unwrap()
    }

    #[test]
    fn values_follow_the_moves() {
        let variant = variant();
        let values = PieceValues::of(&variant);
        let v = |key: &str| values.value(variant.table.lookup(key).unwrap());
        assert!(v("P") < v("G"), "pawn {} < gold {}", v("P"), v("G"));
        assert!(v("G") < v("R"), "gold {} < rook {}", v("G"), v("R"));
        assert!(v("R") < v("LN"), "rook {} < lion {}", v("R"), v("LN"));
        // Derived, not typed: a pawn steps to one square, a gold to six.
        let pawn = variant.table.lookup("P").unwrap();
        assert_eq!(values.open_mobility(pawn), 1.0);
        assert_eq!(values.open_mobility(variant.table.lookup("G").unwrap()), 6.0);
        // The lion's double captures count when it is surrounded.
        assert!(values.crowded_mobility(variant.table.lookup("LN").unwrap()) > 80.0);
        let king = values.value(variant.table.lookup("K").unwrap());
        for k in 0..variant.table.len() as Kind {
            assert!(values.value(k) > 0.0);
            if k != variant.table.lookup("K").unwrap() {
                assert!(values.value(k) <= king, "{} worth more than the king", variant.table.get(k).name);
            }
        }
        // Promotion potential: a pawn (promotes to gold) is worth more than a step-forward piece
        // that cannot promote would be, i.e. more than its own base.
        assert!(values.value(pawn) > 1.0);
        // A promoted piece is worth its promoted kind's base.
        let gold = variant.table.lookup("G").unwrap();
        let promoted_pawn = Piece { kind: gold, origin: pawn, color: Color::White, promoted: true };
        assert!(values.piece_value(promoted_pawn) <= values.value(gold));
    }

    #[test]
    fn mobility_is_the_same_for_both_colours() {
        let variant = variant();
        let black = mobilities(&variant, Color::Black);
        let white = mobilities(&variant, Color::White);
        assert_eq!(black, white);
    }

    #[test]
    fn opening_is_balanced_and_value_flips_with_the_side() {
        let variant = variant();
        let mut eval = HeuristicEvaluator::new(&variant, HeuristicConfig::default());
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut game = Game::new(variant.clone());
        let moves = game.position.legal_moves();
        let mut priors = Vec::new();
        let v = eval.evaluate(&mut game, &moves, &mut priors, &mut rng);
        assert!(v.abs() < 1e-6, "opening value {v}");
        assert_eq!(priors.len(), moves.len());
        assert!((priors.iter().sum::<f32>() - 1.0).abs() < 1e-4);

        // Take a White lion off: Black is ahead, and the same board with White to move is
        // exactly as bad for White.
        let lion = variant.table.lookup("LN").unwrap();
        let sq = game.position.squares_of(Color::White).find(|&s| game.position.at(s).unwrap().kind == lion).unwrap();
        game.position.remove(sq);
        game.reset_history();
        let black_moves = game.position.legal_moves();
        let for_black = eval.evaluate(&mut game, &black_moves, &mut priors, &mut rng);
        game.position.set_side(Color::White);
        game.reset_history();
        let white_moves = game.position.legal_moves();
        let for_white = eval.evaluate(&mut game, &white_moves, &mut priors, &mut rng);
        assert!(for_black > 0.01, "{for_black}");
        assert!((for_black + for_white).abs() < 1e-6, "{for_black} vs {for_white}");
    }

    #[test]
    fn capture_priors_prefer_the_biggest_capture() {
        let variant = variant();
        let table = &variant.table;
        let g = &variant.geometry;
        let mut pos = Position::empty(variant.clone(), Color::Black);
        let put = |pos: &mut Position, name: &str, key: &str, color| {
            let kind = table.lookup(key).unwrap();
            pos.put(g.parse_square(name).unwrap(), Piece { kind, origin: kind, color, promoted: false });
        };
        // A Black rook on 18r can take a White pawn (18o) or a White lion (14r).
        put(&mut pos, "18r", "R", Color::Black);
        put(&mut pos, "18o", "P", Color::White);
        put(&mut pos, "14r", "LN", Color::White);
        put(&mut pos, "1jj", "K", Color::Black);
        put(&mut pos, "36a", "K", Color::White);
        let eval = HeuristicEvaluator::new(&variant, HeuristicConfig::default());
        let moves = pos.legal_moves();
        let mut priors = Vec::new();
        eval.priors(&pos, &moves, &mut priors);
        let prior_to = |name: &str| {
            let to = g.parse_square(name).unwrap() as u16;
            priors[moves.iter().position(|m| m.to == to && m.from == g.parse_square("18r").unwrap() as u16).unwrap()]
        };
        let quiet = prior_to("18p");
        assert!(prior_to("14r") > prior_to("18o"));
        assert!(prior_to("18o") > quiet);
        let uniform = HeuristicEvaluator::new(
            &variant,
            HeuristicConfig { priors: PriorMode::Uniform, ..HeuristicConfig::default() },
        );
        uniform.priors(&pos, &moves, &mut priors);
        assert!(priors.iter().all(|&p| (p - 1.0 / moves.len() as f32).abs() < 1e-7));
    }

    #[test]
    fn move_gain_counts_exactly_the_captured_pieces() {
        let variant = variant();
        let values = PieceValues::of(&variant);
        let mut game = Game::new(variant.clone());
        let mut checked_sweeps = 0;
        for seed in 0..6 {
            taikyoku_engine::random::random_playout(&mut game, seed, 60);
            if game.recorded_end().is_some() {
                break;
            }
            let pos = &game.position;
            let moves = pos.legal_moves();
            for &mv in &moves {
                let expected: f32 = pos.captures_of(mv).iter().map(|&sq| values.piece_value(pos.at(sq).unwrap())).sum();
                let gain = values.move_gain(pos, mv, 0.0);
                assert!((gain - expected).abs() <= 1e-3 * expected.max(1.0), "{mv:?}: {gain} vs {expected}");
                checked_sweeps += (mv.sweep() && expected > 0.0) as usize;
            }
            // The list form carries range captures along their lines: the same bits, move by move,
            // in generation order and in any other.
            let reversed: Vec<Move> = moves.iter().rev().copied().collect();
            for (list, weight) in [(&moves, 0.0), (&moves, 0.5), (&reversed, 0.5)] {
                let mut gains = vec![0.0f32.to_bits(); list.len()];
                values.capture_gains(pos, list, weight, |i, gain| gains[i] = gain.to_bits());
                let one_by_one: Vec<u32> = list.iter().map(|&mv| values.move_gain(pos, mv, weight).to_bits()).collect();
                assert_eq!(gains, one_by_one);
            }
        }
        assert!(checked_sweeps > 0, "no range capture was checked");
    }

    #[test]
    fn runs_of_ones_sum_as_one_by_one() {
        let one_by_one = |mut total: f32, w: f32, n: usize| {
            for _ in 0..n {
                total += w;
            }
            total
        };
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        // Totals near powers of two (where the spacing of floats doubles), fractions, zero.
        let mut totals = vec![0.0f32, 1.0, 0.5, 3.75, 1e-30, 2047.3, 8_388_607.5, 16_777_215.0, 16_777_216.0];
        for _ in 0..3000 {
            let near = (2.0f32).powi(rng.gen_range(-3..25));
            totals.push(near * rng.gen_range(0.9..1.1));
            totals.push(near - rng.gen_range(0..40) as f32);
        }
        for &total in &totals {
            for n in [0usize, 1, 2, 3, 7, 100, 1500, 40_000] {
                for w in [1.0f32, 0.5, 1.0 + 1e-7] {
                    let expected = one_by_one(total, w, n);
                    assert_eq!(add_repeatedly(total, w, n).to_bits(), expected.to_bits(), "{total} + {w} x {n}");
                }
            }
        }
    }

    #[test]
    fn priors_are_the_normalised_weights_summed_in_order() {
        let variant = variant();
        let evaluator = HeuristicEvaluator::new(&variant, HeuristicConfig::default());
        let PriorMode::Captures { capture_weight, promotion_weight } = evaluator.config.priors else { unreachable!() };
        let mut game = Game::new(variant.clone());
        taikyoku_engine::random::random_playout(&mut game, 4, 300);
        let moves = game.position.legal_moves();
        let mut priors = Vec::new();
        evaluator.priors(&game.position, &moves, &mut priors);
        // The definition, move by move.
        let unit = capture_weight / evaluator.values.reference();
        let weights: Vec<f32> = moves
            .iter()
            .map(|&mv| 1.0 + unit * evaluator.values.move_gain(&game.position, mv, promotion_weight))
            .collect();
        let total = weights.iter().fold(0.0f32, |t, &w| t + w);
        let expected: Vec<u32> = weights.iter().map(|&w| (w * (1.0 / total)).to_bits()).collect();
        assert_eq!(priors.iter().map(|p| p.to_bits()).collect::<Vec<_>>(), expected);
        assert!(weights.iter().any(|&w| w > 1.0), "no capture among {} moves", moves.len());
    }

    #[test]
    fn material_followed_through_moves_is_the_sum_taken_again() {
        for name in taikyoku_engine::variant_names() {
            let variant = Variant::load(name, &[]).unwrap();
            let mut eval = HeuristicEvaluator::new(&variant, HeuristicConfig::default());
            assert!(eval.values.exact_sums, "{name}: sums of values are not exact");
            let mut reference = HeuristicEvaluator::new(&variant, HeuristicConfig::default());
            let mut game = Game::new(variant.clone());
            let mut rng = ChaCha8Rng::seed_from_u64(5);
            let (mut followed, mut captures) = (0, 0);
            for ply in 0..400 {
                let pos = &game.position;
                let moves = pos.legal_moves();
                if moves.is_empty() || game.recorded_end().is_some() {
                    break;
                }
                let from_parent = eval.material.get(pos.hash()).is_none()
                    && pos.last_change().is_some_and(|c| eval.material.get(c.hash_before).is_some());
                let value = eval.leaf_value(pos, &moves);
                let sums = eval.material.get(pos.hash()).expect("the leaf is kept");
                let taken_again = Color::BOTH.map(|color| eval.values.material_sum(pos, color));
                assert_eq!(sums.map(f64::to_bits), taken_again.map(f64::to_bits), "{name} ply {ply}");
                // The evaluator's value is the static value, bit for bit.
                assert_eq!(value.to_bits(), reference.static_value(pos, &moves).to_bits(), "{name} ply {ply}");
                followed += from_parent as usize;
                game.play(moves[rng.gen_range(0..moves.len())]);
                captures += game.position.last_change().unwrap().removed.len();
            }
            assert!(followed > 300 && captures > 20, "{name}: {followed} followed, {captures} captures");
        }
        // Without exact sums, the sums are taken again every time; `static_value` keeps nothing.
        let variant = variant();
        let mut eval = HeuristicEvaluator::new(&variant, HeuristicConfig::default());
        let mut game = Game::new(variant.clone());
        let moves = game.position.legal_moves();
        eval.static_value(&game.position, &moves);
        assert!(eval.material.slots.is_empty());
        Arc::make_mut(&mut eval.values).exact_sums = false;
        eval.material_sums(&game.position);
        game.play(moves[0]);
        eval.material_sums(&game.position);
        assert!(eval.material.slots.is_empty());
    }

    #[test]
    fn rollouts_leave_the_game_unchanged() {
        let variant = variant();
        let config = HeuristicConfig { rollout_plies: 8, ..HeuristicConfig::default() };
        let mut eval = HeuristicEvaluator::new(&variant, config);
        let mut game = Game::new(variant.clone());
        let moves = game.position.legal_moves();
        let hash = game.position.hash();
        let mut priors = Vec::new();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let v = eval.evaluate(&mut game, &moves, &mut priors, &mut rng);
        assert!((-1.0..=1.0).contains(&v));
        assert_eq!(game.position.hash(), hash);
        assert_eq!(game.plies(), 0);
        // Same seed, same rollout.
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        assert_eq!(eval.evaluate(&mut game, &moves, &mut priors, &mut rng), v);
    }
}
