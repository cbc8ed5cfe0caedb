//! The incremental move state (issue 13): every piece's moves, kept up to date move by move
//! instead of generated again every ply. A `Game` that tracks moves (`Game::track_moves`;
//! `random_playout` turns it on) keeps one in step with its position through `play` and
//! `undo`, and `Game::generate`, `legal_move_count`, `legal_move` and `choose_move` read it.
//! Full generation (`Position::generate_from`) stays the reference: pieces with the rare powers
//! keep the list it gives them, and `MoveState::check` compares the whole state with one built
//! from scratch (tests/incremental.rs does it at every ply of random games).
//!
//! # Why it is exact
//!
//! A piece's moves are a function of the piece, its square and the squares its generation
//! *reads* (and, for two rules, something global: below). If none of the squares it read
//! changed, it reads the same squares again and gives the same moves. So after a move only the
//! pieces that read one of the changed squares (the move's start, end, captures and burns) are
//! computed again, and plain pieces only in the direction that read it:
//!
//! - line atoms (slides, jumps, hops, range captures and jumps) read a segment of one line
//!   from the piece: `reach[sq][dir]` is the farthest square read in `dir`. The readers of a
//!   changed square are the pieces on its eight lines whose reach gets there, found over
//!   per-line occupancy bits: the nearest piece each way, and beyond it only pieces that see
//!   through others (`through`). The same bits give a ray's first piece with one bit scan;
//! - local atoms (leaps, lion, lion lines, igui, area, double) read squares within a small
//!   Chebyshev radius, `local[sq]`, found by scanning the rows around the change;
//! - a hook reads its first legs and the lines turning off them: `band[sq][dir]` is a leg's
//!   length, and `in_band` (or, for a piece keeping hook counts, `HookCounts::changed`) tests
//!   a change against the legs and turns;
//! - `teleport` tests protection over the whole board: such pieces are computed after every
//!   move;
//! - `max-consecutive-passes`: when a side's run of passes reaches or leaves the limit, its
//!   pieces that keep a list are computed again (only those can pass).
//!
//! The readers are looked up with the reads stored before the move, or with ones already
//! computed on the new board: either way every piece whose output could change is computed
//! again on the board after the move, whatever the order. (The two tests that look at the new
//! board, the nearest-piece rule and the hook turns, are exact for the changed square met
//! first along the piece's walk, since nothing before it changed; one is enough.)
//!
//! # Four kinds of piece
//!
//! A *plain* piece (only slides, jumps, leaps and the line atoms that read past pieces: hops,
//! range captures, range and rank jumps; atoms that never reach the same square, or only rays;
//! not trapped where it stands, and no move that may be offered promotion) keeps one count per
//! atom, in table order, and never stores its moves: a slide's or jump's moves are the squares
//! at distances k, k + 1, ... along its ray (less, where rays along one line overlap, those an
//! earlier ray gave: `Program::overlaps`), a walk's (`PlainAtom::Walk`) are found again along
//! its line when asked for. A changed square it read counts again only the atoms of that
//! direction.
//!
//! A *hook* piece (only hooks: hook mover, capricorn, longnosed goblin), under the same
//! conditions, keeps counts per leg and per turn (`hooks::HookCounts`): a changed square on a
//! turn walks that turn again, one on a leg walks the leg and the turns it gained again.
//!
//! Every other piece keeps the list that `Position::generate_from` gives it: its moves,
//! promotion twins, trap and pass filters are the reference's by construction. A listed
//! piece of the side not to move that must be generated in full waits
//! until its side is next to move (`settle`), so a piece that two moves in a row touch is
//! generated once; queries about a side need it settled (`update` settles the side to move).
//! That holds for a listed or hook piece the move puts on a square too (the piece that moved,
//! or a capture taken back): until then it reads nothing, so no reader test has to find it
//! (a hook piece's counts cost thousands of instructions, and the reply often reads or takes
//! it; a plain piece is counted at once, cheaper than waiting).
//!
//! Each side's per-square move counts sit in a tree of running sums (`CountTree`, 16 children
//! a node, three levels), so the `i`-th legal move (in `Position::generate` order) is found
//! with three reads without building the list: uniform
//! random play draws the same index, hence the same move, as it did from the full list.

use crate::geometry::{Color, DIRECTION_COUNT};
use crate::position::{color_code, Move, Piece, Position, EMPTY};
use crate::table::{Atom, Ray, Trap, UNLIMITED};
use crate::variant::Variant;
use std::sync::{Arc, OnceLock};

mod hooks;
use hooks::{HookCounts, HookProgram};

/// The board as a hook piece's counts read it (`hooks::Board`): the state's bit scans.
struct HookBoard<'a> {
    state: &'a MoveState,
    pos: &'a Position,
    own: u8,
}

impl hooks::Board for HookBoard<'_> {
    #[inline]
    fn turn(&self, t: usize, e: usize) -> (u8, u8) {
        self.state.ray(self.pos, t, e, 1, usize::MAX, self.own)
    }

    #[inline]
    fn color_at(&self, sq: usize) -> u8 {
        self.pos.color_code_at(sq)
    }

    #[inline]
    fn own(&self) -> u8 {
        self.own
    }
}

/// A plain atom: a ray (a slide, or a jump with its continuation) or a leap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PlainAtom {
    /// The square at distance `k`, then up to `extra` more free squares beyond an empty one:
    /// a slide of `max` squares is `k = 1, extra = max - 1`.
    Ray { dir: u8, k: u8, extra: u8 },
    /// One square at (dx, dy), absolute (x right, y down).
    Leap { dx: i8, dy: i8 },
    /// A line atom that reads past pieces (hop, range jump, range capture, rank jump or hop),
    /// counted over the line bits (`MoveState::walk_count`).
    Walk(Walk),
}

/// A walk along one line (`PlainAtom::Walk`): its moves are the free squares (all of them, or
/// only those before the first piece) and the enemy pieces up to the piece it stops on, or
/// the edge (`Position::generate_atom`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Walk {
    dir: u8,
    stop: Stop,
    /// It moves to the free squares beyond a piece too (not a range or rank jump).
    free_beyond: bool,
    /// A move past a piece sweeps (range capture).
    sweeps: bool,
}

/// The piece a walk stops on (the last square it reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    /// The piece after the first `n` (a hop or range jump passes `n`; never for `UNLIMITED`).
    After(u8),
    /// The first piece of a range rank not below the walker's: in `LineBits::ranked` level
    /// `l` (`Compiled::rank_levels`).
    Ranked(u8),
}

/// What the state needs of one (type, colour), compiled once per variant.
#[derive(Clone, Debug)]
struct Program {
    /// The atoms in table order when all are plain and never reach the same square, or all
    /// are rays (rays along one line may: `overlaps`).
    plain: Option<Vec<PlainAtom>>,
    /// Per absolute direction, bit `i` set when plain atom `i` is a ray that way.
    rays_in: [u64; DIRECTION_COUNT],
    /// Per absolute direction, when its only atom is a ray: (its slot, `k`, `extra`), so a
    /// reader counts it again without reading the atoms (the common case).
    lone_rays: [Option<(u8, u8, u8)>; DIRECTION_COUNT],
    /// Bit `dir` set when two rays that way may reach the same square: a ray's moves there
    /// are the squares no earlier ray gave (`MoveState::fresh_squares`), as in the reference.
    overlaps: u8,
    /// Largest leap of the plain atoms (Chebyshev), 0 without leaps.
    leap_radius: u8,
    /// An unpromoted piece of this type may choose to promote (zone or furthest rank), so some
    /// of its moves come twice: it keeps counts only while none of its moves can (`Offers`).
    offers: Option<Offers>,
    /// `PieceType::trap`.
    trap: Trap,
    /// It has an atom that reads past a piece (a jump over two or more squares, hop, range
    /// capture or jump): it can read a square that another piece hides (`LineBits::through`).
    sees_through: bool,
    /// Its atoms are all hooks (`Motion::hooks_only`): it keeps counts per turn (`HookCounts`)
    /// while none of its moves can be offered promotion and it is not trapped.
    hooks: Option<HookProgram>,
    /// Slots it takes in `MoveState::counts`: its number of atoms when plain.
    slots: usize,
}

impl Program {
    /// `level`: the index in `Compiled::rank_levels` of the type's range rank, if the line
    /// bits hold that level (`RANK_LEVELS`).
    fn compile(atoms: &[Atom], overlapping: bool, hooks_only: bool, offers: Option<Offers>, trap: Trap, level: Option<u8>) -> Program {
        let mut plain = Vec::new();
        let mut rays_in = [0u64; DIRECTION_COUNT];
        let mut leap_radius = 0u8;
        // Beyond 64 atoms the per-direction masks cannot name them all: such a type is listed.
        // Atoms that reach the same squares are plain only when all are rays: then only two
        // along one line can, and each counts what the earlier ones did not give.
        let rays_only = atoms.iter().all(|a| matches!(a, Atom::Slide { .. } | Atom::Jump { .. }));
        let mut all_plain = (!overlapping || rays_only) && atoms.len() <= 64;
        for (i, &atom) in atoms.iter().enumerate() {
            let compiled = match atom {
                Atom::Slide { .. } | Atom::Jump { .. } => {
                    let Ray { dir, k, extra } = atom.ray().expect("a slide or a jump");
                    PlainAtom::Ray { dir, k, extra }
                }
                Atom::Leap { dx, dy } => {
                    leap_radius = leap_radius.max(dx.unsigned_abs()).max(dy.unsigned_abs());
                    PlainAtom::Leap { dx, dy }
                }
                Atom::Hop { dir, pieces } | Atom::RangeJump { dir, pieces } => {
                    let free_beyond = matches!(atom, Atom::Hop { .. });
                    PlainAtom::Walk(Walk { dir, stop: Stop::After(pieces), free_beyond, sweeps: false })
                }
                // A rank beyond the levels the line bits hold keeps a list.
                Atom::RangeCapture { dir } | Atom::RankJump { dir } | Atom::RankHop { dir } if level.is_some() => {
                    let stop = Stop::Ranked(level.expect("tested"));
                    let free_beyond = !matches!(atom, Atom::RankJump { .. });
                    let sweeps = matches!(atom, Atom::RangeCapture { .. });
                    PlainAtom::Walk(Walk { dir, stop, free_beyond, sweeps })
                }
                _ => {
                    all_plain = false;
                    continue;
                }
            };
            if let PlainAtom::Ray { dir, .. } | PlainAtom::Walk(Walk { dir, .. }) = compiled {
                rays_in[dir as usize] |= 1u64.checked_shl(i as u32).unwrap_or(0);
            }
            plain.push(compiled);
        }
        let sees_through = atoms.iter().any(|a| match *a {
            Atom::Jump { k, .. } => k >= 2,
            Atom::Hop { .. } | Atom::RangeCapture { .. } | Atom::RangeJump { .. } | Atom::RankJump { .. } | Atom::RankHop { .. } => true,
            _ => false,
        });
        let hooks = HookProgram::of(atoms, hooks_only);
        let slots = if all_plain { atoms.len() } else { 0 };
        let overlaps = if overlapping { (0..DIRECTION_COUNT).filter(|&d| rays_in[d].count_ones() > 1).fold(0, |m, d| m | 1 << d) } else { 0 };
        let lone_rays = std::array::from_fn(|d| {
            let slot = rays_in[d].trailing_zeros() as usize;
            match plain.get(slot) {
                Some(&PlainAtom::Ray { k, extra, .. }) if rays_in[d].count_ones() == 1 => Some((slot as u8, k, extra)),
                _ => None,
            }
        });
        Program { plain: all_plain.then_some(plain), rays_in, lone_rays, overlaps, leap_radius, offers, trap, sees_through, hooks, slots }
    }

    /// Whether `piece` on `sq` keeps counts (else a list): see the module documentation.
    /// Before its moves are known: `Offers::touched` decides the rest.
    fn is_plain(&self, piece: Piece, rank_from_front: usize, height: usize) -> bool {
        self.plain.is_some()
            && !self.offers.is_some_and(|o| !piece.promoted && o.from & (1 << rank_from_front) != 0)
            && self.free(rank_from_front, height)
    }

    /// Whether `piece` on `sq` keeps hook counts (else a list): a hook piece none of whose
    /// moves can be offered promotion (its hooks reach too far to tell cheaply, so only a
    /// type that cannot promote, or a promoted piece), not trapped.
    fn counts_hooks(&self, piece: Piece, rank_from_front: usize, height: usize) -> bool {
        self.hooks.is_some() && self.unoffered_and_free(piece, rank_from_front, height)
    }

    /// No move of `piece` can be offered promotion (a type that cannot promote, or a promoted
    /// piece), and it is not trapped where it stands: no filter or offer runs over its moves.
    fn unoffered_and_free(&self, piece: Piece, rank_from_front: usize, height: usize) -> bool {
        (self.offers.is_none() || piece.promoted) && self.free(rank_from_front, height)
    }

    /// Not trapped where it stands (`Trap`).
    fn free(&self, rank_from_front: usize, height: usize) -> bool {
        match self.trap {
            Trap::None => true,
            Trap::FurthestRank => rank_from_front != 0,
            Trap::OwnFirstRank => rank_from_front != height - 1,
        }
    }
}

/// Where an unpromoted piece's plain moves could be offered promotion (bits of ranks counted
/// from its owner's far side; `Position::promotion_offer` and `far_promotion_offered`): none of
/// its moves is, and it keeps counts, when it stands outside `from` and no move ends on a rank
/// of `to`.
#[derive(Clone, Copy, Debug)]
struct Offers {
    /// The promotion zone (a move from there may promote by capturing, or by any move under
    /// `promotion-trigger touch`).
    from: u64,
    /// The zone, the ranks where promotion is compulsory, and the furthest rank for
    /// `farpromote`.
    to: u64,
}

impl Offers {
    fn of(variant: &Variant, kind: usize) -> Option<Offers> {
        let motion = variant.table.motion_of(kind as u16);
        let mut offers = Offers { from: 0, to: 0 };
        if motion.zone_promotion {
            let zone = variant.rules.zone().expect("zone promotion needs a zone");
            let ranks = (1u64 << zone.depth.min(63)) - 1;
            offers.from |= ranks;
            offers.to |= ranks | variant.dead_ends.get(kind).copied().unwrap_or(0);
        }
        if motion.far_promotion {
            offers.to |= 1;
        }
        (motion.zone_promotion || motion.far_promotion).then_some(offers)
    }
}

/// A variant's programs and board tables, built once per variant (`Variant::compiled`).
#[derive(Debug)]
pub struct Compiled {
    /// Index `kind * 2 + colour`.
    programs: Vec<Program>,
    /// Count slots per square: the most atoms of a plain type.
    stride: usize,
    /// The largest Chebyshev radius any atom reads around its piece.
    local_max: usize,
    /// Whether any type has a hook.
    hooks: bool,
    /// Per square: its lines and distances to the edge.
    cells: Vec<Cell>,
    /// Lines of `MoveState::lines`: those of each orientation.
    line_count: usize,
    /// The range ranks of the types that walk to a piece of a rank not below theirs (range
    /// captures, rank jumps and hops), in order: one level of `LineBits::ranked` each.
    rank_levels: Vec<u8>,
    /// Per type, bit `l` set when its range rank is at most `rank_levels[l]` (a rank walker
    /// of that level stops on it).
    rank_masks: Vec<u8>,
    /// The opening position's state, built on first use (`MoveState::new`).
    opening: OnceLock<Tables>,
}

impl Compiled {
    /// Compiles `variant`'s table for the incremental state.
    pub(crate) fn new(variant: &Variant) -> Compiled {
        let table = &variant.table;
        let ranked = |kind: usize| {
            let atoms = table.absolute_atoms(table.motion_of(kind as u16), Color::Black);
            atoms.iter().any(|a| matches!(a, Atom::RangeCapture { .. } | Atom::RankJump { .. } | Atom::RankHop { .. }))
        };
        let mut rank_levels: Vec<u8> = (0..table.len()).filter(|&k| ranked(k)).map(|k| table.motion_of(k as u16).range_rank).collect();
        rank_levels.sort_unstable();
        rank_levels.dedup();
        // The lowest ranks get the levels the line bits hold; walkers of the others keep lists.
        rank_levels.truncate(RANK_LEVELS);
        let rank_masks = (0..table.len())
            .map(|k| {
                let rank = table.motion_of(k as u16).range_rank;
                rank_levels.iter().enumerate().filter(|&(_, &level)| rank <= level).fold(0u8, |m, (l, _)| m | 1 << l)
            })
            .collect();
        let mut programs = Vec::with_capacity(table.len() * 2);
        let mut local_max = 0usize;
        let mut hooks = false;
        for (kind, ty) in table.types.iter().enumerate() {
            let motion = table.motion_of(kind as u16);
            for color in Color::BOTH {
                let atoms = table.absolute_atoms(motion, color);
                let level = rank_levels.iter().position(|&r| r == motion.range_rank).map(|l| l as u8);
                programs.push(Program::compile(atoms, motion.overlapping, motion.hooks_only, Offers::of(variant, kind), ty.trap, level));
                for &atom in atoms {
                    hooks |= matches!(atom, Atom::Hook { .. });
                    if let Read::Local(r) = local_read(atom) {
                        local_max = local_max.max(r as usize);
                    }
                }
            }
        }
        let stride = programs.iter().map(|p| p.slots).max().unwrap_or(0);
        // Ranks, files, then the diagonals where x + y and x - y are constant; bit x, or y in a file.
        let (w, h) = (variant.geometry.width, variant.geometry.height);
        // 214 lines on the largest board (`rules::MAX_SIDE`).
        assert!(h + w + 2 * (w + h - 1) <= 256, "a board of {w} x {h} has more than 256 lines");
        let cells = (0..variant.geometry.size())
            .map(|sq| {
                let (x, y) = (sq % w, sq / w);
                let places = [(y, x), (h + x, y), (h + w + x + y, x), (h + w + (w + h - 1) + x + h - 1 - y, x)];
                let edge = std::array::from_fn(|d| variant.geometry.edge(sq, d) as u8);
                Cell { places: places.map(|(line, bit)| (line as u8, bit as u8)), edge }
            })
            .collect();
        Compiled { programs, stride, local_max, hooks, cells, line_count: h + w + 2 * (w + h - 1), rank_levels, rank_masks, opening: OnceLock::new() }
    }

    #[inline]
    fn program(&self, index: u32) -> &Program {
        &self.programs[index as usize]
    }
}

/// What an atom that is not a line reads.
enum Read {
    /// Squares within this Chebyshev radius.
    Local(u8),
    /// Something else (a line atom, a hook, teleport): handled by `MoveState::refresh_listed`.
    Other,
}

/// Every atom is named here (no wildcard): a new atom does not compile until its reads are
/// stated, here or, for the others, in `MoveState::refresh_listed`.
fn local_read(atom: Atom) -> Read {
    match atom {
        Atom::Leap { dx, dy } => Read::Local(dx.unsigned_abs().max(dy.unsigned_abs())),
        Atom::Lion | Atom::Double { .. } => Read::Local(2),
        Atom::LionLine { reach, .. } => Read::Local(reach),
        Atom::Igui => Read::Local(1),
        Atom::Area { steps } => Read::Local(steps),
        Atom::Slide { .. }
        | Atom::Jump { .. }
        | Atom::Hop { .. }
        | Atom::RangeCapture { .. }
        | Atom::RangeJump { .. }
        | Atom::RankJump { .. }
        | Atom::RankHop { .. }
        | Atom::Hook { .. }
        | Atom::Teleport => Read::Other,
    }
}

/// Children per node of a `CountTree`.
const FANOUT: usize = 16;

/// A node of a `CountTree`: the running sums of its children's counts (the first child's,
/// the first two's, ...), in one cache line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(align(64))]
struct Node([u32; FANOUT]);

impl Node {
    const ZERO: Node = Node([0; FANOUT]);

    /// Adds `delta` to child `from` and the children after it: to every running sum from
    /// `from` on, without a branch.
    #[inline(always)]
    fn add_from(&mut self, from: usize, delta: u32) {
        // Per `from`: all ones in the lanes from it on.
        const FROM: [[u32; FANOUT]; FANOUT] = {
            let mut masks = [[0; FANOUT]; FANOUT];
            let mut from = 0;
            while from < FANOUT {
                let mut j = from;
                while j < FANOUT {
                    masks[from][j] = u32::MAX;
                    j += 1;
                }
                from += 1;
            }
            masks
        };
        for (sum, &mask) in self.0.iter_mut().zip(&FROM[from % FANOUT]) {
            *sum = sum.wrapping_add(delta & mask);
        }
    }

    /// The child that holds the `index`-th unit (`index` below the node's sum): the first
    /// whose running sum is above `index` (the sums rise, so a mask and a bit scan).
    #[inline(always)]
    fn child_of(&self, index: u32) -> usize {
        let mut above = 0u32;
        for (j, &sum) in self.0.iter().enumerate() {
            above |= u32::from(sum > index) << j;
        }
        above.trailing_zeros() as usize
    }

    /// The sum of the children before `child`.
    #[inline(always)]
    fn before(&self, child: usize) -> u32 {
        self.0[child.wrapping_sub(1) % FANOUT] & u32::from(child > 0).wrapping_neg()
    }
}

/// One side's move counts per square, for finding the `i`-th move: a tree of three levels of
/// `FANOUT` children (squares, blocks of 16 squares, blocks of 256: boards of up to 64 x 64
/// squares), each node holding its children's running sums. An update adds to one node per
/// level and a search reads one per level, each a fixed pass over one cache line with no
/// branch: a binary tree's loop exits and the chain of its levels' loads cost more.
#[derive(Clone, Debug, PartialEq, Eq)]
struct CountTree {
    /// Per block of `FANOUT` squares: their counts' running sums.
    squares: Vec<Node>,
    /// Per block of `FANOUT * FANOUT` squares: its blocks' running sums.
    blocks: Vec<Node>,
    /// The running sums of the large blocks: the last is the total.
    top: Node,
}

impl CountTree {
    fn new(size: usize) -> CountTree {
        assert!(size <= FANOUT * FANOUT * FANOUT, "boards have at most 64 x 64 squares");
        CountTree { squares: vec![Node::ZERO; size.div_ceil(FANOUT)], blocks: vec![Node::ZERO; size.div_ceil(FANOUT * FANOUT)], top: Node::ZERO }
    }

    fn clear(&mut self) {
        self.squares.fill(Node::ZERO);
        self.blocks.fill(Node::ZERO);
        self.top = Node::ZERO;
    }

    /// The number of moves.
    #[inline]
    fn total(&self) -> u32 {
        self.top.0[FANOUT - 1]
    }

    #[inline]
    fn add(&mut self, sq: usize, delta: i32) {
        let delta = delta as u32;
        self.squares[sq / FANOUT].add_from(sq % FANOUT, delta);
        self.blocks[sq / (FANOUT * FANOUT)].add_from(sq / FANOUT % FANOUT, delta);
        self.top.add_from(sq / (FANOUT * FANOUT), delta);
    }

    /// The number of moves on squares before `sq`.
    #[inline]
    fn before(&self, sq: usize) -> u32 {
        let (large, block) = (sq / (FANOUT * FANOUT), sq / FANOUT);
        self.top.before(large) + self.blocks[large].before(block % FANOUT) + self.squares[block].before(sq % FANOUT)
    }

    /// The square holding the `index`-th move (`index < total`) and its index there.
    #[inline]
    fn find(&self, mut index: u32) -> (usize, u32) {
        let large = self.top.child_of(index);
        index -= self.top.before(large);
        let block = large * FANOUT + self.blocks[large].child_of(index);
        index -= self.blocks[large].before(block % FANOUT);
        let sq = block * FANOUT + self.squares[block].child_of(index);
        (sq, index - self.squares[block].before(sq % FANOUT))
    }

    fn heap_bytes(&self) -> usize {
        (self.squares.len() + self.blocks.len()) * std::mem::size_of::<Node>()
    }
}

/// What the state keeps per square: together, so that looking at a piece reads one cache line
/// (32 bytes, aligned).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(align(32))]
struct Square {
    /// What the piece there keeps.
    mode: Mode,
    /// The Chebyshev radius its local atoms read (0: none).
    local: u8,
    /// The program (`kind * 2 + colour`) of the piece there.
    program: u32,
    /// The piece's number of moves.
    total: u16,
    /// The `MoveState` epoch in which the piece there was last computed in full.
    stamp: u32,
    /// Per direction: the farthest square its line atoms read that way.
    reach: [u8; DIRECTION_COUNT],
    /// Per direction: the length of a hook's first leg.
    band: [u8; DIRECTION_COUNT],
}

impl Square {
    const EMPTY: Square = Square { mode: Mode::Empty, local: 0, program: 0, total: 0, stamp: 0, reach: [0; DIRECTION_COUNT], band: [0; DIRECTION_COUNT] };
}

/// What the piece on a square keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// No piece.
    Empty,
    /// A count per atom (`MoveState::counts`).
    Plain,
    /// Its moves as `Position::generate_from` gives them (`MoveState::lists`).
    Listed,
    /// Counts per hook turn (`MoveState::hook_counts`).
    Hooks,
}

/// The bits of one line, together in one cache line (`MoveState::lines`): a rank has bit x, a
/// file bit y, the diagonals (x + y and x - y constant) bit x.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(align(64))]
struct LineBits {
    /// The squares with a piece.
    occupied: u64,
    /// The squares with a Black piece (White's are the other occupied ones).
    black: u64,
    /// The pieces that see through others (`Program::sees_through`): past the nearest piece
    /// on a line, only these can read a square.
    through: u64,
    /// Per level of `Compiled::rank_levels`: the pieces a rank walker of that level stops on.
    ranked: [u64; RANK_LEVELS],
}

/// Levels of `LineBits::ranked`: range ranks of the types with range captures, rank jumps or
/// rank hops (3 in the built-in variants; the walkers of further ranks keep lists).
const RANK_LEVELS: usize = 5;

/// Per square, what the state's line scans read about it (`Compiled::cells`): 16 bytes, four
/// to a cache line.
#[derive(Clone, Copy, Debug)]
#[repr(align(16))]
struct Cell {
    /// Per orientation (`RANK`, `FILE`, `ANTI`, `DIAG`): its line in `MoveState::lines` and
    /// its bit there.
    places: [(u8, u8); 4],
    /// Per direction: squares to the edge (`Geometry::edge`).
    edge: [u8; DIRECTION_COUNT],
}

/// Line orientations for the occupancy bits: ranks, files, and the two diagonals.
const RANK: usize = 0;
const FILE: usize = 1;
const ANTI: usize = 2;
const DIAG: usize = 3;

/// Per orientation: the direction that runs up its lines' bits, and the one that runs down.
const LINE_WAYS: [(usize, usize, usize); 4] = [(FILE, 4, 0), (ANTI, 1, 5), (RANK, 2, 6), (DIAG, 3, 7)];

/// Per direction: the orientation of its line, and whether the direction runs up its bits.
const LINE: [(usize, bool); DIRECTION_COUNT] =
    [(FILE, false), (ANTI, true), (RANK, true), (DIAG, true), (FILE, true), (ANTI, false), (RANK, false), (DIAG, false)];

/// Every piece's moves, for both sides, kept up to date by `update` after each move made or
/// taken back (see the module documentation). A `Game` holds one.
#[derive(Clone, Debug)]
pub struct MoveState {
    variant: Arc<Variant>,
    /// The variant's compiled table (`Variant::compiled`), held to skip the lazy cell's test.
    compiled: Arc<Compiled>,
    /// Everything else: a variant's opening state is kept without its variant
    /// (`Compiled::opening`), so that the variant holds no reference to itself.
    t: Tables,
}

/// The tables of a `MoveState`.
#[derive(Clone, Debug)]
struct Tables {
    /// The hash of the position the state describes: a position with another hash (edited,
    /// or moved on without `update`) is not described (`is_synced`).
    hash: u64,
    /// Per square: what the piece there keeps and reads.
    squares: Vec<Square>,
    /// Per square, `stride` slots: moves per atom of a plain piece.
    counts: Vec<u8>,
    /// Per square: a listed piece's moves.
    lists: Vec<Vec<Move>>,
    /// Per square: a hook piece's counts (`Mode::Hooks`; empty without hooks).
    hook_counts: Vec<Option<Box<HookCounts>>>,
    /// Counts of hook pieces that left their squares, for the next.
    spare_hooks: Vec<Box<HookCounts>>,
    /// Lists of pieces that left their squares, kept for the next listed piece (a few, so
    /// neither the squares nor this keep much memory).
    spare: Vec<Vec<Move>>,
    /// Per line (`Compiled::cells`): its bits.
    lines: Vec<LineBits>,
    /// Per rank: bit x set when the piece on (x, y) has local reads.
    local_rows: Vec<u64>,
    /// Pieces with hooks, and pieces computed after every move (teleport).
    hooks: SquareSet,
    volatile: SquareSet,
    /// Per square (empty without hooks): for a piece keeping hook counts, the box of squares
    /// they read (`HookCounts::board_box` of its `area`: least x, most x, least y, most y), so
    /// a change elsewhere is passed over without looking at the counts.
    hook_box: Vec<[u8; 4]>,
    /// Per colour: moves per square.
    move_counts: [CountTree; 2],
    /// Per colour, bits over squares: listed pieces of the side not to move whose reads
    /// changed, and listed or hook pieces the move put down, computed when their side is next
    /// to move (`settle`), so a piece that two moves in a row touch is computed once. Plain
    /// pieces are always up to date.
    pending: [Vec<u64>; 2],
    /// Per colour: how many bits `pending` has.
    pending_count: [u32; 2],
    /// Per colour: whether its run of passes has reached `max-consecutive-passes`.
    pass_blocked: [bool; 2],
    /// The epoch of this update (`Square::stamp`).
    epoch: u32,
    /// The squares of the move being followed (scratch).
    changed: Vec<usize>,
}

impl MoveState {
    /// The state of `pos`. Every game starts from the same position, so the opening's state is
    /// built once per variant and copied (`Compiled::opening`).
    pub fn new(pos: &Position) -> MoveState {
        let variant = pos.variant.clone();
        let opening = variant.compiled().opening.get_or_init(|| MoveState::build(&Position::initial(variant.clone())).t);
        // The hash stands for the position, as in `is_synced`.
        if pos.hash() == opening.hash {
            return MoveState { t: opening.clone(), compiled: variant.compiled().clone(), variant };
        }
        MoveState::build(pos)
    }

    /// The state of `pos`, built from scratch.
    fn build(pos: &Position) -> MoveState {
        let variant = pos.variant.clone();
        let compiled = variant.compiled();
        let size = variant.geometry.size();
        let h = variant.geometry.height;
        let words = size.div_ceil(64);
        let mut state = MoveState {
            variant: variant.clone(),
            compiled: compiled.clone(),
            t: Tables {
                hash: 0,
                squares: vec![Square::EMPTY; size],
                counts: vec![0; size * compiled.stride],
                lists: vec![Vec::new(); size],
                spare: Vec::new(),
                hook_counts: if compiled.hooks { vec![None; size] } else { Vec::new() },
                spare_hooks: Vec::new(),
                lines: vec![LineBits::default(); compiled.line_count],
                local_rows: vec![0; h],
                hooks: SquareSet::new(size),
                volatile: SquareSet::new(size),
                hook_box: if compiled.hooks { vec![[0; 4]; size] } else { Vec::new() },
                move_counts: [CountTree::new(size), CountTree::new(size)],
                pending: [vec![0; words], vec![0; words]],
                pending_count: [0; 2],
                pass_blocked: [false; 2],
                epoch: 1,
                changed: Vec::new(),
            },
        };
        state.rebuild(pos);
        state
    }

    /// Computes everything again for `pos` (after edits), keeping the allocations.
    pub fn rebuild(&mut self, pos: &Position) {
        assert!(Arc::ptr_eq(&self.variant, &pos.variant), "a move state follows positions of one variant");
        self.t.lines.fill(LineBits::default());
        self.t.local_rows.fill(0);
        self.t.hooks.clear();
        self.t.volatile.clear();
        self.t.move_counts[0].clear();
        self.t.move_counts[1].clear();
        for pending in self.t.pending.iter_mut() {
            pending.fill(0);
        }
        self.t.pending_count = [0; 2];
        for square in self.t.squares.iter_mut() {
            *square = Square { stamp: square.stamp, ..Square::EMPTY };
        }
        self.next_epoch();
        // All the occupancy bits before any piece is counted (`ray` reads them).
        for sq in 0..self.t.squares.len() {
            self.set_line_bits(sq, pos.at(sq));
        }
        for sq in 0..self.t.squares.len() {
            self.refresh(pos, sq);
        }
        self.t.pass_blocked = self.passes_blocked(pos);
        self.t.hash = pos.hash();
    }

    /// Whether the state describes `pos` (same variant, same hash: a 64-bit hash of the board,
    /// the side to move and the pass counters, so another position matches by chance only).
    pub fn is_synced(&self, pos: &Position) -> bool {
        Arc::ptr_eq(&self.variant, &pos.variant) && self.t.hash == pos.hash()
    }

    /// Brings the state from the position before `pos`'s last move to `pos` (after
    /// `Position::make`).
    pub fn follow_make(&mut self, pos: &Position) {
        let mut changed = std::mem::take(&mut self.t.changed);
        pos.last_move_squares(&mut changed);
        self.update(pos, &changed);
        self.t.changed = changed;
    }

    /// Notes the squares `pos`'s last move changed, before it is taken back; `follow_unmake`
    /// then brings the state to the position after `Position::unmake`.
    pub fn prepare_unmake(&mut self, pos: &Position) {
        pos.last_move_squares(&mut self.t.changed);
    }

    /// See `prepare_unmake`.
    pub fn follow_unmake(&mut self, pos: &Position) {
        let changed = std::mem::take(&mut self.t.changed);
        self.update(pos, &changed);
        self.t.changed = changed;
    }

    /// Brings the state up to date with `pos`, whose board differs from the one the state
    /// describes only on the squares `changed` (and in the pass counters).
    pub fn update(&mut self, pos: &Position, changed: &[usize]) {
        assert!(Arc::ptr_eq(&self.variant, &pos.variant), "a move state follows positions of one variant");
        self.next_epoch();
        for &sq in changed {
            self.set_line_bits(sq, pos.at(sq));
        }
        for &sq in changed {
            if self.t.squares[sq].stamp != self.t.epoch {
                self.place(pos, sq);
            }
        }
        for &sq in changed {
            self.refresh_readers(pos, sq);
        }
        // Teleporters: their protection test reads the whole board.
        let mut volatile = self.t.volatile.cursor();
        while let Some(sq) = volatile.next(&self.t.volatile) {
            if self.t.squares[sq].stamp != self.t.epoch {
                self.touch(pos, sq);
            }
        }
        let blocked = self.passes_blocked(pos);
        for color in Color::BOTH {
            if blocked[color.index()] != self.t.pass_blocked[color.index()] {
                for sq in pos.squares_of(color) {
                    if self.t.squares[sq].mode == Mode::Listed && self.t.squares[sq].stamp != self.t.epoch {
                        self.touch(pos, sq);
                    }
                }
            }
        }
        self.t.pass_blocked = blocked;
        self.settle(pos, pos.side_to_move());
        self.t.hash = pos.hash();
    }

    /// Computes the pieces of `color` whose computation was put off (`pending`): after this,
    /// `color`'s moves can be read. `update` does it for the side to move.
    pub fn settle(&mut self, pos: &Position, color: Color) {
        let c = color.index();
        if self.t.pending_count[c] == 0 {
            return;
        }
        for w in 0..self.t.pending[c].len() {
            while self.t.pending[c][w] != 0 {
                self.refresh(pos, w * 64 + self.t.pending[c][w].trailing_zeros() as usize);
            }
        }
        debug_assert_eq!(self.t.pending_count[c], 0);
    }

    /// Whether every piece of `color` is computed (queries about `color` need it).
    fn settled(&self, color: Color) -> bool {
        self.t.pending_count[color.index()] == 0
    }

    /// Computes the piece on `sq` again now, or, for a listed piece of the side not to move,
    /// when its side is next to move (`pending`).
    #[inline]
    fn touch(&mut self, pos: &Position, sq: usize) {
        let c = self.t.squares[sq].program as usize & 1;
        if self.t.squares[sq].mode == Mode::Listed && c != pos.side_to_move().index() {
            let (word, bit) = (sq / 64, 1u64 << (sq % 64));
            if self.t.pending[c][word] & bit == 0 {
                self.t.pending[c][word] |= bit;
                self.t.pending_count[c] += 1;
            }
        } else {
            self.refresh(pos, sq);
        }
    }

    fn passes_blocked(&self, pos: &Position) -> [bool; 2] {
        match self.variant.rules.max_consecutive_passes {
            Some(limit) => Color::BOTH.map(|c| pos.consecutive_passes(c) >= limit),
            None => [false; 2],
        }
    }

    fn next_epoch(&mut self) {
        self.t.epoch = self.t.epoch.wrapping_add(1);
        if self.t.epoch == 0 {
            self.t.squares.iter_mut().for_each(|square| square.stamp = 0);
            self.t.epoch = 1;
        }
    }

    /// Number of moves of `color`'s pieces (`Position::generate(color)` would give as many).
    #[inline]
    pub fn count(&self, color: Color) -> usize {
        assert!(self.settled(color), "{color}'s moves are not settled");
        self.t.move_counts[color.index()].total() as usize
    }

    /// Number of moves of the piece on `sq` (0 for an empty square).
    #[inline]
    pub fn moves_on(&self, sq: usize) -> usize {
        self.t.squares[sq].total as usize
    }

    /// The index in `Position::generate(color)` of the first move of `color`'s piece on `sq`.
    pub fn first_index(&self, color: Color, sq: usize) -> usize {
        debug_assert!(self.settled(color));
        self.t.move_counts[color.index()].before(sq) as usize
    }

    /// The `index`-th move (`index < count(color)`) of `Position::generate(color)`.
    pub fn nth(&self, pos: &Position, color: Color, index: usize) -> Move {
        assert!(self.settled(color), "{color}'s moves are not settled");
        assert!(index < self.count(color), "move {index} of {}", self.count(color));
        let (sq, mut rest) = self.t.move_counts[color.index()].find(index as u32);
        match self.t.squares[sq].mode {
            Mode::Listed => self.t.lists[sq][rest as usize],
            Mode::Plain => {
                let compiled = &*self.compiled;
                let program = compiled.program(self.t.squares[sq].program);
                let atoms = program.plain.as_ref().expect("a plain program");
                let counts = &self.t.counts[sq * compiled.stride..];
                for (i, &atom) in atoms.iter().enumerate() {
                    let n = counts[i] as u32;
                    if rest < n {
                        return match atom {
                            PlainAtom::Ray { dir, .. } if program.overlaps & 1 << dir != 0 => {
                                let mut fresh = self.fresh_squares(pos, sq, atoms, i);
                                for _ in 0..rest {
                                    fresh &= fresh - 1;
                                }
                                let to = sq as isize + self.variant.geometry.offset[dir as usize] * fresh.trailing_zeros() as isize;
                                Move::simple(sq as u16, to as u16, false)
                            }
                            _ => self.plain_move(pos, sq, atom, rest as usize),
                        };
                    }
                    rest -= n;
                }
                unreachable!("the counts add up to the total")
            }
            Mode::Hooks => {
                let (counts, hooks) = self.hooks_of(sq);
                Move::simple(sq as u16, counts.nth(&self.variant.geometry, sq, hooks, rest) as u16, false)
            }
            Mode::Empty => unreachable!("an empty square has no moves"),
        }
    }

    /// The counts and hooks of the hook piece on `sq` (`Mode::Hooks`).
    #[inline]
    fn hooks_of(&self, sq: usize) -> (&HookCounts, &HookProgram) {
        let counts = self.t.hook_counts[sq].as_deref().expect("a hook piece keeps counts");
        (counts, self.compiled.program(self.t.squares[sq].program).hooks.as_ref().expect("a hook program"))
    }

    /// The squares (bit `k`: distance `k`) that ray `i` of the plain piece on `sq` gives when
    /// rays overlap its way (`Program::overlaps`): those of its ray that no earlier ray that
    /// way gave.
    fn fresh_squares(&self, pos: &Position, sq: usize, atoms: &[PlainAtom], i: usize) -> u64 {
        let own = self.own(sq);
        let squares = |atom: PlainAtom| match atom {
            PlainAtom::Ray { dir, k, extra } => ray_squares(self.ray(pos, sq, dir as usize, k as usize, extra as usize, own).0, k),
            _ => unreachable!("overlapping atoms are rays"),
        };
        let PlainAtom::Ray { dir, .. } = atoms[i] else { unreachable!("overlapping atoms are rays") };
        let earlier = atoms[..i].iter().filter(|a| matches!(a, PlainAtom::Ray { dir: d, .. } if *d == dir));
        squares(atoms[i]) & !earlier.fold(0, |given, &a| given | squares(a))
    }

    /// The `j`-th move of a plain atom of the piece on `sq`.
    #[inline]
    fn plain_move(&self, pos: &Position, sq: usize, atom: PlainAtom, j: usize) -> Move {
        let g = &self.variant.geometry;
        let to = match atom {
            PlainAtom::Ray { dir, k, .. } => (sq as isize + g.offset[dir as usize] * (k as usize + j) as isize) as usize,
            PlainAtom::Leap { dx, dy } => {
                let (x, y) = g.xy(sq);
                g.square(x + dx as i32, y + dy as i32).expect("a counted leap lands on the board")
            }
            PlainAtom::Walk(walk) => {
                let (mut found, mut rest) = (None, j);
                self.walk_moves(pos, sq, walk, self.own(sq), |mv| {
                    found = Some(mv).filter(|_| rest == 0);
                    rest = rest.wrapping_sub(1);
                    found.is_none()
                });
                return found.expect("a walk gives as many moves as it counted");
            }
        };
        Move::simple(sq as u16, to as u16, false)
    }

    /// Appends every move of `color`'s pieces to `out`, in `Position::generate` order.
    pub fn moves(&self, pos: &Position, color: Color, out: &mut Vec<Move>) {
        assert!(self.settled(color), "{color}'s moves are not settled");
        for sq in pos.squares_of(color) {
            self.moves_from(pos, sq, out);
        }
    }

    /// Appends the moves of the piece on `sq` (as `Position::generate_from` gives them).
    pub fn moves_from(&self, pos: &Position, sq: usize, out: &mut Vec<Move>) {
        match self.t.squares[sq].mode {
            Mode::Listed => out.extend_from_slice(&self.t.lists[sq]),
            _ => self.for_each_move_from(pos, sq, |mv| out.push(mv)),
        }
    }

    /// Calls `f` with every move of `color`'s pieces, in `Position::generate` order, without
    /// building a list.
    pub fn for_each_move(&self, pos: &Position, color: Color, mut f: impl FnMut(Move)) {
        assert!(self.settled(color), "{color}'s moves are not settled");
        for sq in pos.squares_of(color) {
            self.for_each_move_from(pos, sq, &mut f);
        }
    }

    /// Calls `f` with every move of the piece on `sq`, in order.
    #[inline]
    pub fn for_each_move_from(&self, pos: &Position, sq: usize, mut f: impl FnMut(Move)) {
        match self.t.squares[sq].mode {
            Mode::Empty => {}
            Mode::Listed => self.t.lists[sq].iter().for_each(|&mv| f(mv)),
            Mode::Hooks => {
                let (counts, hooks) = self.hooks_of(sq);
                counts.for_each(&self.variant.geometry, sq, hooks, |to| f(Move::simple(sq as u16, to as u16, false)));
            }
            Mode::Plain => {
                let compiled = &*self.compiled;
                let program = compiled.program(self.t.squares[sq].program);
                let atoms = program.plain.as_ref().expect("a plain program");
                let counts = &self.t.counts[sq * compiled.stride..];
                let g = &self.variant.geometry;
                for (i, &atom) in atoms.iter().enumerate() {
                    let n = counts[i] as usize;
                    if n == 0 {
                        continue;
                    }
                    match atom {
                        PlainAtom::Ray { dir, .. } if program.overlaps & 1 << dir != 0 => {
                            let mut fresh = self.fresh_squares(pos, sq, atoms, i);
                            while fresh != 0 {
                                let to = sq as isize + g.offset[dir as usize] * fresh.trailing_zeros() as isize;
                                f(Move::simple(sq as u16, to as u16, false));
                                fresh &= fresh - 1;
                            }
                        }
                        PlainAtom::Ray { dir, k, .. } => {
                            let step = g.offset[dir as usize];
                            let mut to = sq as isize + step * k as isize;
                            for _ in 0..n {
                                f(Move::simple(sq as u16, to as u16, false));
                                to += step;
                            }
                        }
                        PlainAtom::Leap { .. } => f(self.plain_move(pos, sq, atom, 0)),
                        PlainAtom::Walk(walk) => self.walk_moves(pos, sq, walk, self.own(sq), |mv| {
                            f(mv);
                            true
                        }),
                    }
                }
            }
        }
    }

    /// A ray from `sq` along `d`: the square at distance `k` (if on the board and not `own`),
    /// then up to `extra` more while the squares are free, stopping on (and taking) an enemy.
    /// Returns (moves, farthest square read). The first piece on the way is a bit scan of the
    /// line's occupancy bits.
    #[inline(always)]
    fn ray(&self, pos: &Position, sq: usize, d: usize, k: usize, extra: usize, own: u8) -> (u8, u8) {
        let g = &self.variant.geometry;
        let edge = self.edge(sq, d);
        if k > edge {
            return (0, 0);
        }
        // It stops on its first piece, or on its last square, which is then empty: either way
        // it has the squares before and the one it stops on unless that holds a friend. No
        // branch on where the piece is (it changes from ray to ray).
        let stop = self.nearest_in(sq, d, k, |l| l.occupied).min(k + (edge - k).min(extra));
        let t = (sq as isize + g.offset[d] * stop as isize) as usize;
        let moves = stop - k + usize::from(pos.color_code_at(t) != own);
        (moves as u8, stop as u8)
    }

    /// The farthest square a walk from `sq` along `d` reads: the first piece `stop` picks, or
    /// the edge. It goes from piece to piece over the occupancy bits.
    #[inline]
    fn walk(&self, pos: &Position, sq: usize, d: usize, mut stop: impl FnMut(Piece) -> bool) -> u8 {
        let g = &self.variant.geometry;
        let edge = self.edge(sq, d);
        let mut k = 1;
        while k <= edge {
            let Some(at) = self.first_piece(sq, d, k) else { break };
            let t = (sq as isize + g.offset[d] * at as isize) as usize;
            if stop(pos.at(t).expect("the occupancy bits name a piece")) {
                return at as u8;
            }
            k = at + 1;
        }
        edge as u8
    }

    /// Squares from `sq` to the edge along `d` (`Geometry::edge`, from `Compiled::cells`).
    #[inline(always)]
    fn edge(&self, sq: usize, d: usize) -> usize {
        self.compiled.cells[sq].edge[d] as usize
    }

    /// The distance from `sq` to the first piece along `d` at distance `k` or more
    /// (`k <= edge(sq, d)`), from the occupancy bits.
    #[inline(always)]
    fn first_piece(&self, sq: usize, d: usize, k: usize) -> Option<usize> {
        self.first_in(sq, d, k, |l| l.occupied)
    }

    /// `first_piece` over the line bits that `bits` picks (occupancy, or a rank level).
    #[inline(always)]
    fn first_in(&self, sq: usize, d: usize, k: usize, bits: impl Fn(&LineBits) -> u64) -> Option<usize> {
        let at = self.nearest_in(sq, d, k, bits);
        (at - k < u64::BITS as usize).then_some(at)
    }

    /// `first_in`'s distance, or 64 more than `k` where there is no piece (past every edge).
    /// The scans up and down the line's bits are both made and one is taken: which way a
    /// direction runs changes from atom to atom, and a branch on it went either way at random.
    #[inline(always)]
    fn nearest_in(&self, sq: usize, d: usize, k: usize, bits: impl Fn(&LineBits) -> u64) -> usize {
        let (o, ascending) = LINE[d];
        let (line, at) = self.compiled.cells[sq].places[o];
        let (bits, at) = (bits(&self.t.lines[line as usize]), at as usize);
        // Up from bit `at + k`, or down from bit `at - k` (the shift of the way not taken may
        // be out of range: it wraps, and its scan is dropped).
        let up = bits.wrapping_shr((at + k) as u32).trailing_zeros();
        let down = bits.wrapping_shl((63 + k).wrapping_sub(at) as u32).leading_zeros();
        k + if ascending { up } else { down } as usize
    }

    /// How many of the squares at distances `1..=far` from `sq` along `d` are set in the line
    /// bits that `bits` picks.
    #[inline(always)]
    fn count_in(&self, sq: usize, d: usize, far: usize, bits: impl Fn(&LineBits) -> u64) -> usize {
        let (o, ascending) = LINE[d];
        let (line, at) = self.compiled.cells[sq].places[o];
        let (bits, at) = (bits(&self.t.lines[line as usize]), at as usize);
        let run = (1u64 << far) - 1;
        let mask = if ascending { run << (at + 1) } else { run << (at - far) };
        (bits & mask).count_ones() as usize
    }

    /// `color_code` of the owner of the piece on `sq`.
    #[inline]
    fn own(&self, sq: usize) -> u8 {
        color_code(Color::BOTH[self.t.squares[sq].program as usize & 1])
    }

    /// Sets `sq` in the line bits of its four lines (occupancy, Black's, rank levels) for
    /// `piece`, or clears it.
    fn set_line_bits(&mut self, sq: usize, piece: Option<Piece>) {
        let compiled = &*self.compiled;
        let ranked = piece.map_or(0, |p| compiled.rank_masks[p.kind as usize]);
        for &(line, bit) in &compiled.cells[sq].places {
            let (line, bit) = (&mut self.t.lines[line as usize], 1u64 << bit);
            let set = |bits: &mut u64, on: bool| *bits = if on { *bits | bit } else { *bits & !bit };
            set(&mut line.occupied, piece.is_some());
            set(&mut line.black, piece.is_some_and(|p| p.color == Color::Black));
            for (l, bits) in line.ranked.iter_mut().enumerate().take(compiled.rank_levels.len()) {
                set(bits, ranked & 1 << l != 0);
            }
        }
    }

    /// Sets or clears `sq` in the see-through bits of its four lines.
    fn set_through_bits(&mut self, sq: usize, sees_through: bool) {
        for &(line, bit) in &self.compiled.cells[sq].places {
            let through = &mut self.t.lines[line as usize].through;
            *through = if sees_through { *through | 1 << bit } else { *through & !(1 << bit) };
        }
    }

    /// A square the move changed: its new piece is computed now, or, when it keeps a list or
    /// hook counts and its side is not to move, with the other pending pieces when its side is
    /// next to move (a piece that just moved is often read by the reply, and is then computed
    /// once).
    fn place(&mut self, pos: &Position, sq: usize) {
        let Some(piece) = pos.at(sq).filter(|p| p.color != pos.side_to_move()) else {
            return self.refresh(pos, sq);
        };
        let program = piece.kind as u32 * 2 + piece.color.index() as u32;
        let g = &pos.variant.geometry;
        if self.compiled.program(program).is_plain(piece, g.rank_from_front(sq, piece.color), g.height) {
            return self.refresh(pos, sq);
        }
        // Pending, it reads nothing yet: no reader test finds it, and `settle` computes it.
        let list = self.vacate(sq);
        self.t.lists[sq] = list;
        self.t.squares[sq].program = program;
        self.t.squares[sq].mode = Mode::Listed;
        let c = piece.color.index();
        self.t.pending[c][sq / 64] |= 1u64 << (sq % 64);
        self.t.pending_count[c] += 1;
    }

    /// Computes the piece on `sq` in full (or clears the square).
    fn refresh(&mut self, pos: &Position, sq: usize) {
        let mut list = self.vacate(sq);
        let Some(piece) = pos.at(sq) else {
            self.t.squares[sq].mode = Mode::Empty;
            self.keep_spare(list);
            return;
        };
        let program = piece.kind as u32 * 2 + piece.color.index() as u32;
        self.t.squares[sq].program = program;
        // The position's variant is the state's (`update`): no reference count to touch.
        let variant = &*pos.variant;
        let g = &variant.geometry;
        let compiled = variant.compiled();
        let p = compiled.program(program);
        if p.sees_through {
            self.set_through_bits(sq, true);
        }
        let rank = g.rank_from_front(sq, piece.color);
        let plain = p.is_plain(piece, rank, g.height);
        if let Some(hooks) = p.hooks.as_ref().filter(|_| p.counts_hooks(piece, rank, g.height)) {
            self.t.squares[sq].mode = Mode::Hooks;
            self.keep_spare(list);
            let mut counts = self.t.spare_hooks.pop().unwrap_or_else(HookCounts::new);
            let mut band = [0; DIRECTION_COUNT];
            counts.compute(g, sq, hooks, &mut band, &HookBoard { state: self, pos, own: color_code(piece.color) });
            self.t.squares[sq].band = band;
            self.t.squares[sq].total = counts.total();
            self.t.hook_box[sq] = counts.board_box(g, sq);
            self.t.hook_counts[sq] = Some(counts);
            self.t.hooks.insert(sq);
        } else {
            if plain {
                self.t.squares[sq].mode = Mode::Plain;
                self.count_plain(pos, sq);
                self.set_local(sq, p.leap_radius);
            }
            if !plain || self.offered(sq, piece) {
                self.t.squares[sq].mode = Mode::Listed;
                if list.capacity() == 0 {
                    list = self.t.spare.pop().unwrap_or_default();
                }
                self.t.lists[sq] = list;
                self.refresh_listed(pos, sq, piece);
            } else {
                self.keep_spare(list);
            }
        }
        if self.t.squares[sq].total != 0 {
            self.t.move_counts[piece.color.index()].add(sq, self.t.squares[sq].total as i32);
        }
    }

    /// Takes the square's piece out of the state (stamped as computed in this epoch, no longer
    /// pending): its moves, reads and bits. Returns its list, emptied, for the next piece.
    fn vacate(&mut self, sq: usize) -> Vec<Move> {
        self.t.squares[sq].stamp = self.t.epoch;
        let (word, bit) = (sq / 64, 1u64 << (sq % 64));
        for c in 0..2 {
            if self.t.pending[c][word] & bit != 0 {
                self.t.pending[c][word] &= !bit;
                self.t.pending_count[c] -= 1;
            }
        }
        if self.t.squares[sq].mode != Mode::Empty {
            let color = self.t.squares[sq].program as usize & 1;
            if self.t.squares[sq].total != 0 {
                self.t.move_counts[color].add(sq, -(self.t.squares[sq].total as i32));
                self.t.squares[sq].total = 0;
            }
            // Only pieces that see through set their bits (`refresh`).
            if self.compiled.program(self.t.squares[sq].program).sees_through {
                self.set_through_bits(sq, false);
            }
        }
        self.t.squares[sq].reach = [0; DIRECTION_COUNT];
        self.t.squares[sq].band = [0; DIRECTION_COUNT];
        // The list goes with the piece: a square keeps no capacity once its piece leaves
        // (squares a hook mover passed over would otherwise hold hundreds of moves each).
        let mut list = std::mem::take(&mut self.t.lists[sq]);
        list.clear();
        if let Some(counts) = self.t.hook_counts.get_mut(sq).and_then(Option::take) {
            self.t.spare_hooks.push(counts);
        }
        self.t.hooks.remove(sq);
        self.t.volatile.remove(sq);
        if self.t.squares[sq].local != 0 {
            self.set_local(sq, 0);
        }
        list
    }

    /// Whether a move of the plain-counted `piece` on `sq` may be offered promotion (`Offers`):
    /// then it keeps a list instead.
    fn offered(&self, sq: usize, piece: Piece) -> bool {
        let compiled = &*self.compiled;
        let program = compiled.program(self.t.squares[sq].program);
        let Some(offers) = program.offers.filter(|_| !piece.promoted) else { return false };
        let g = &self.variant.geometry;
        let y = g.xy(sq).1;
        let rank = |y: i32| match piece.color {
            Color::Black => y,
            Color::White => g.height as i32 - 1 - y,
        };
        let atoms = program.plain.as_ref().expect("a plain program");
        let counts = &self.t.counts[sq * compiled.stride..];
        atoms.iter().enumerate().any(|(i, &atom)| {
            let n = counts[i] as i32;
            if n == 0 {
                return false;
            }
            // Along a ray the rank changes monotonically: its targets cover one range of ranks.
            let (near, far) = match atom {
                PlainAtom::Ray { dir, k, .. } => {
                    let dy = crate::geometry::DELTAS[dir as usize].1;
                    // Where rays overlap, its moves lie between `k` and the farthest square read.
                    let far = if program.overlaps & 1 << dir != 0 { self.t.squares[sq].reach[dir as usize] as i32 } else { k as i32 + n - 1 };
                    (rank(y as i32 + dy * k as i32), rank(y as i32 + dy * far))
                }
                PlainAtom::Leap { dy, .. } => (rank(y as i32 + dy as i32), rank(y as i32 + dy as i32)),
                // Its moves lie between the first square and the farthest it read.
                PlainAtom::Walk(Walk { dir, .. }) => {
                    let dy = crate::geometry::DELTAS[dir as usize].1;
                    (rank(y as i32 + dy), rank(y as i32 + dy * self.t.squares[sq].reach[dir as usize] as i32))
                }
            };
            let (lo, hi) = (near.min(far) as u32, near.max(far) as u32);
            let ranks = (u64::MAX >> (63 - hi)) & !((1u64 << lo) - 1);
            ranks & offers.to != 0
        })
    }

    /// Keeps a list that lost its piece for the next listed piece, up to a few.
    fn keep_spare(&mut self, list: Vec<Move>) {
        const SPARE: usize = 4;
        if list.capacity() > 0 && self.t.spare.len() < SPARE {
            self.t.spare.push(list);
        }
    }

    fn set_local(&mut self, sq: usize, radius: u8) {
        self.t.squares[sq].local = radius;
        let (x, y) = self.variant.geometry.xy(sq);
        if radius > 0 {
            self.t.local_rows[y as usize] |= 1 << x;
        } else {
            self.t.local_rows[y as usize] &= !(1 << x);
        }
    }

    /// Counts every plain atom of the piece new on `sq` (`refresh` puts its total in the
    /// count tree), setting every direction's reach.
    fn count_plain(&mut self, pos: &Position, sq: usize) {
        let compiled = &*self.compiled;
        let program = compiled.program(self.t.squares[sq].program);
        let atoms = program.plain.as_ref().expect("a plain program");
        let own = self.own(sq);
        let base = sq * compiled.stride;
        let mut reach = [0u8; DIRECTION_COUNT];
        // Per direction, the squares earlier rays gave (`Program::overlaps`).
        let mut given = [0u64; DIRECTION_COUNT];
        let mut total = 0u16;
        for (i, &atom) in atoms.iter().enumerate() {
            let (count, hi) = self.count_atom(pos, sq, atom, own);
            let count = match atom {
                PlainAtom::Ray { dir, k, .. } if program.overlaps & 1 << dir != 0 => fresh_of(count, k, &mut given[dir as usize]),
                _ => count,
            };
            if let PlainAtom::Ray { dir, .. } | PlainAtom::Walk(Walk { dir, .. }) = atom {
                reach[dir as usize] = reach[dir as usize].max(hi);
            }
            self.t.counts[base + i] = count;
            total += count as u16;
        }
        self.t.squares[sq].reach = reach;
        self.t.squares[sq].total = total;
    }

    /// Counts again the atoms along `d` of the plain piece on `sq` (a square it read that way
    /// changed), setting that direction's reach; `total` and the count tree follow.
    fn recount_direction(&mut self, pos: &Position, sq: usize, d: usize) {
        let compiled = &*self.compiled;
        let program = compiled.program(self.t.squares[sq].program);
        let own = self.own(sq);
        let base = sq * compiled.stride;
        let (reach, delta) = match program.lone_rays[d] {
            Some((slot, k, extra)) => {
                let (count, reach) = self.ray(pos, sq, d, k as usize, extra as usize, own);
                let slot = base + slot as usize;
                let delta = count as i32 - self.t.counts[slot] as i32;
                self.t.counts[slot] = count;
                (reach, delta)
            }
            None => {
                let atoms = program.plain.as_ref().expect("a plain program");
                let overlapping = program.overlaps & 1 << d != 0;
                let (mut reach, mut delta, mut given) = (0u8, 0i32, 0u64);
                let mut picked = program.rays_in[d];
                while picked != 0 {
                    let i = picked.trailing_zeros() as usize;
                    picked &= picked - 1;
                    let atom = atoms[i];
                    let (count, hi) = self.count_atom(pos, sq, atom, own);
                    let count = match atom {
                        PlainAtom::Ray { k, .. } if overlapping => fresh_of(count, k, &mut given),
                        _ => count,
                    };
                    reach = reach.max(hi);
                    delta += count as i32 - self.t.counts[base + i] as i32;
                    self.t.counts[base + i] = count;
                }
                (reach, delta)
            }
        };
        self.t.squares[sq].reach[d] = reach;
        if delta != 0 {
            self.t.squares[sq].total = (self.t.squares[sq].total as i32 + delta) as u16;
            self.t.move_counts[self.t.squares[sq].program as usize & 1].add(sq, delta);
        }
    }

    /// The moves of plain atom `atom` of the piece on `sq` (owner `own`) before the overlap
    /// filter (`fresh_of`), and the farthest square it reads along its line (0 for a leap).
    #[inline(always)]
    fn count_atom(&self, pos: &Position, sq: usize, atom: PlainAtom, own: u8) -> (u8, u8) {
        match atom {
            PlainAtom::Ray { dir, k, extra } => self.ray(pos, sq, dir as usize, k as usize, extra as usize, own),
            PlainAtom::Leap { dx, dy } => {
                let (x, y) = self.variant.geometry.xy(sq);
                match self.variant.geometry.square(x + dx as i32, y + dy as i32) {
                    Some(t) if pos.color_code_at(t) != own => (1, 0),
                    _ => (0, 0),
                }
            }
            PlainAtom::Walk(walk) => self.walk_count(sq, walk, own == color_code(Color::Black)),
        }
    }

    /// Generates a listed piece's moves with the reference and records what they read.
    fn refresh_listed(&mut self, pos: &Position, sq: usize, piece: Piece) {
        let variant = &*pos.variant;
        let table = &variant.table;
        let motion = table.motion_of(piece.kind);
        let atoms = table.absolute_atoms(motion, piece.color);
        let mut list = std::mem::take(&mut self.t.lists[sq]);
        pos.generate_from(sq, &mut list);
        self.t.squares[sq].total = list.len() as u16;
        self.t.lists[sq] = list;
        let mut local = 0u8;
        let mut reach = [0u8; DIRECTION_COUNT];
        for &atom in atoms {
            let line = match atom {
                Atom::Slide { .. }
                | Atom::Jump { .. }
                | Atom::Hop { .. }
                | Atom::RangeJump { .. }
                | Atom::RangeCapture { .. }
                | Atom::RankJump { .. }
                | Atom::RankHop { .. } => Some(self.line_read(pos, sq, piece, atom)),
                Atom::Hook { dir } => {
                    self.t.squares[sq].band[dir as usize] = self.walk(pos, sq, dir as usize, |_| true);
                    self.t.hooks.insert(sq);
                    None
                }
                Atom::Teleport => {
                    self.t.volatile.insert(sq);
                    None
                }
                Atom::Leap { .. } | Atom::Lion | Atom::Double { .. } | Atom::LionLine { .. } | Atom::Igui | Atom::Area { .. } => {
                    if let Read::Local(r) = local_read(atom) {
                        local = local.max(r);
                    }
                    None
                }
            };
            if let Some((dir, hi)) = line {
                reach[dir as usize] = reach[dir as usize].max(hi);
            }
        }
        self.t.squares[sq].reach = reach;
        self.set_local(sq, local);
    }

    /// A line atom of `piece` on `sq`: its direction and the farthest square it reads.
    fn line_read(&self, pos: &Position, sq: usize, piece: Piece, atom: Atom) -> (u8, u8) {
        let table = &self.variant.table;
        let own = color_code(piece.color);
        match atom {
            Atom::Slide { dir, max } => (dir, self.ray(pos, sq, dir as usize, 1, max as usize - 1, own).1),
            Atom::Jump { dir, k, then } => (dir, self.ray(pos, sq, dir as usize, k as usize, then as usize, own).1),
            Atom::Hop { dir, pieces } | Atom::RangeJump { dir, pieces } => (dir, self.walk_ends(sq, dir, Stop::After(pieces)).1 as u8),
            Atom::RangeCapture { dir } | Atom::RankJump { dir } | Atom::RankHop { dir } => {
                let range_rank = table.motion_of(piece.kind).range_rank;
                (dir, self.walk(pos, sq, dir as usize, |p| table.motion_of(p.kind).range_rank <= range_rank))
            }
            _ => unreachable!("not a line atom: {atom:?}"),
        }
    }

    /// Where a walk from `sq` along `dir` meets its first piece and where `stop` ends it (the
    /// farthest square it reads: its stop piece, or the edge), as distances.
    #[inline]
    fn walk_ends(&self, sq: usize, dir: u8, stop: Stop) -> (Option<usize>, usize) {
        let d = dir as usize;
        let edge = self.edge(sq, d);
        let first = if edge == 0 { None } else { self.first_piece(sq, d, 1) };
        let Some(first) = first else { return (None, edge) };
        let stop = match stop {
            Stop::After(UNLIMITED) => None,
            Stop::After(n) => {
                let mut at = Some(first);
                for _ in 0..n {
                    at = at.filter(|&a| a < edge).and_then(|a| self.first_piece(sq, d, a + 1));
                }
                at
            }
            Stop::Ranked(level) => self.first_in(sq, d, first, |l| l.ranked[level as usize]),
        };
        (Some(first), stop.unwrap_or(edge))
    }

    /// A walk of the piece on `sq` (of colour `black` or not): its number of moves and the
    /// farthest square it reads, from bit counts over the line.
    fn walk_count(&self, sq: usize, walk: Walk, black: bool) -> (u8, u8) {
        let d = walk.dir as usize;
        let (first, far) = self.walk_ends(sq, walk.dir, walk.stop);
        let Some(first) = first else { return (far as u8, far as u8) };
        let pieces = self.count_in(sq, d, far, |l| l.occupied);
        let blacks = self.count_in(sq, d, far, |l| l.black);
        let own = if black { blacks } else { pieces - blacks };
        // Free squares it may end on, then the enemy pieces.
        let free = if walk.free_beyond { far - pieces } else { first - 1 };
        ((free + pieces - own) as u8, far as u8)
    }

    /// Calls `f` with each move of a walk of the piece on `sq` (owner `own`) in turn, while
    /// it returns true: the squares from the piece outwards (`Position::generate_atom`).
    fn walk_moves(&self, pos: &Position, sq: usize, walk: Walk, own: u8, mut f: impl FnMut(Move) -> bool) {
        let (_, far) = self.walk_ends(sq, walk.dir, walk.stop);
        let step = self.variant.geometry.offset[walk.dir as usize];
        let mut passed = false;
        for k in 1..=far {
            let t = (sq as isize + step * k as isize) as usize;
            let c = pos.color_code_at(t);
            let moves = if c == EMPTY { !passed || walk.free_beyond } else { c != own };
            if moves && !f(Move::simple(sq as u16, t as u16, passed && walk.sweeps)) {
                return;
            }
            passed |= c != EMPTY;
        }
    }

    /// Computes again every piece that read `s` (see the module documentation).
    fn refresh_readers(&mut self, pos: &Position, s: usize) {
        let variant = &*pos.variant;
        let compiled = variant.compiled();
        let g = &variant.geometry;
        let (x, y) = g.xy(s);
        let (x, y) = (x as usize, y as usize);
        let h = g.height;
        let places = compiled.cells[s].places;
        // Each way, the nearest piece, and past it only those that see through others: a
        // piece whose ray ran through a square that is occupied now but was empty before is
        // found from that square, itself a changed one. The eight nearest are tested first,
        // together (their squares are read at once, and a mask says which read `s`); then the
        // pieces that see through, rare.
        let (mut nearest, mut reads) = ([(0usize, 0usize); 2 * LINE_WAYS.len()], 0u32);
        let (mut beyond, mut seen_through) = ([0u64; 2 * LINE_WAYS.len()], 0u32);
        for (n, (o, up, down)) in LINE_WAYS.into_iter().enumerate() {
            let (line, at) = (places[o].0 as usize, places[o].1 as usize);
            let LineBits { occupied, through, .. } = self.t.lines[line];
            let above = occupied & !((2u64 << at) - 1);
            let below = occupied & ((1u64 << at) - 1);
            // Distances to the nearest piece each way (0, which no test passes, for none).
            let up_at = if above != 0 { above.trailing_zeros() as usize - at } else { 0 };
            let down_at = if below != 0 { at - (63 - below.leading_zeros() as usize) } else { 0 };
            for (k, walk, m) in [(2 * n, up, up_at), (2 * n + 1, down, down_at)] {
                let (p, back) = ((s as isize + g.offset[walk] * m as isize) as usize, (walk + 4) % DIRECTION_COUNT);
                nearest[k] = (p, back);
                reads |= u32::from((m != 0) & self.read_back(p, back, m)) << k;
            }
            beyond[2 * n] = above & above.wrapping_sub(1) & through;
            beyond[2 * n + 1] = below & !(1u64 << (at - down_at)) & through;
            seen_through |= u32::from(beyond[2 * n] != 0) << (2 * n) | u32::from(beyond[2 * n + 1] != 0) << (2 * n + 1);
        }
        while reads != 0 {
            let (p, back) = nearest[reads.trailing_zeros() as usize];
            reads &= reads - 1;
            self.reread(pos, p, back);
        }
        while seen_through != 0 {
            let k = seen_through.trailing_zeros() as usize;
            seen_through &= seen_through - 1;
            let (o, up, down) = LINE_WAYS[k / 2];
            self.read_along(pos, s, places[o].1 as usize, if k % 2 == 0 { up } else { down }, beyond[k]);
        }
        let r = compiled.local_max;
        if r > 0 {
            let (lo, hi) = (x.saturating_sub(r), (x + r).min(g.width - 1));
            let columns = (u64::MAX >> (63 - hi)) & !((1u64 << lo) - 1);
            for row in y.saturating_sub(r)..=(y + r).min(h - 1) {
                let mut bits = self.t.local_rows[row] & columns;
                while bits != 0 {
                    let px = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let p = row * g.width + px;
                    if px.abs_diff(x).max(row.abs_diff(y)) <= self.t.squares[p].local as usize && self.t.squares[p].stamp != self.t.epoch {
                        self.touch(pos, p);
                    }
                }
            }
        }
        if compiled.hooks {
            let mut hooks = self.t.hooks.cursor();
            while let Some(p) = hooks.next(&self.t.hooks) {
                if self.t.squares[p].stamp == self.t.epoch {
                    continue;
                }
                if self.t.squares[p].mode == Mode::Hooks {
                    let [x_lo, x_hi, y_lo, y_hi] = self.t.hook_box[p];
                    // Both ranges in one test without a branch each (unsigned differences).
                    let (x, y) = (x as u8, y as u8);
                    if (x.wrapping_sub(x_lo) <= x_hi - x_lo) & (y.wrapping_sub(y_lo) <= y_hi - y_lo) {
                        self.follow_hooks(pos, p, s);
                    }
                } else if self.in_band(pos, p, s) {
                    self.touch(pos, p);
                }
            }
        }
    }

    /// Computes again the pieces on the line bits `pieces` (of the line through `s`, where `s`
    /// is bit `at`), each found from `s` along `walk`, that read `s`: those whose reach back
    /// gets there. A plain piece counts that direction again.
    #[inline]
    fn read_along(&mut self, pos: &Position, s: usize, at: usize, walk: usize, mut pieces: u64) {
        let back = (walk + 4) % DIRECTION_COUNT;
        let step = self.variant.geometry.offset[walk];
        while pieces != 0 {
            let i = pieces.trailing_zeros() as usize;
            pieces &= pieces - 1;
            let m = i.abs_diff(at);
            let p = (s as isize + step * m as isize) as usize;
            if self.read_back(p, back, m) {
                self.reread(pos, p, back);
            }
        }
    }

    /// Whether the piece on `p` read the square `m` away along `back` and is not computed yet
    /// in this update (without a branch: the readers' tests go either way at random).
    #[inline(always)]
    fn read_back(&self, p: usize, back: usize, m: usize) -> bool {
        let square = &self.t.squares[p];
        (square.reach[back] as usize >= m) & (square.stamp != self.t.epoch)
    }

    /// The piece on `p` read a changed square along `back`: computes it again. A plain piece
    /// counts that direction again.
    #[inline]
    fn reread(&mut self, pos: &Position, p: usize, back: usize) {
        // (A pending piece is marked again: `touch` ignores it.)
        match self.t.squares[p].mode {
            Mode::Plain => {
                self.recount_direction(pos, p, back);
                let program = self.compiled.program(self.t.squares[p].program);
                if program.offers.is_some() && pos.at(p).is_some_and(|piece| self.offered(p, piece)) {
                    self.refresh(pos, p);
                }
            }
            _ => self.touch(pos, p),
        }
    }

    /// The square `s` changed: brings the counts of the hook piece on `p` up to date.
    fn follow_hooks(&mut self, pos: &Position, p: usize, s: usize) {
        let variant = &*pos.variant;
        let hooks = variant.compiled().program(self.t.squares[p].program).hooks.as_ref().expect("a hook program");
        let color = self.t.squares[p].program as usize & 1;
        let own = color_code(Color::BOTH[color]);
        let mut counts = self.t.hook_counts[p].take().expect("a hook piece keeps counts");
        let mut band = self.t.squares[p].band;
        let area = counts.area();
        let delta = counts.changed(&variant.geometry, p, s, hooks, &mut band, &HookBoard { state: self, pos, own });
        if counts.area() != area {
            self.t.hook_box[p] = counts.board_box(&variant.geometry, p);
        }
        self.t.hook_counts[p] = Some(counts);
        self.t.squares[p].band = band;
        if delta != 0 {
            self.t.squares[p].total = (self.t.squares[p].total as i32 + delta) as u16;
            self.t.move_counts[color].add(p, delta);
        }
    }

    /// Whether the hook piece on `p` read `s`: `s` is on a first leg (within its length), or
    /// on a line turning off it at an empty leg square with nothing between that square and
    /// `s`. Read on the board after the move: for the changed square that comes first along
    /// the hook's walk, nothing before it changed, so this tells exactly whether it was read;
    /// that one is enough to compute the piece again.
    fn in_band(&self, pos: &Position, p: usize, s: usize) -> bool {
        let g = &self.variant.geometry;
        let ((sx, sy), (px, py)) = (g.xy(s), g.xy(p));
        let (ax, ay) = (sx - px, sy - py);
        let band = self.t.squares[p].band;
        // Diagonal legs and their turns only reach squares of the piece's colour.
        const ORTHOGONAL: u64 = 0x00FF_00FF_00FF_00FF;
        if u64::from_le_bytes(band) & ORTHOGONAL == 0 && (ax + ay) % 2 != 0 {
            return false;
        }
        (0..DIRECTION_COUNT).any(|d| {
            let leg = band[d] as i32;
            let (dx, dy) = crate::geometry::DELTAS[d];
            let along = ax * dx + ay * dy;
            let norm = dx * dx + dy * dy;
            if leg == 0 || along % norm != 0 || along < norm || along > leg * norm {
                return false;
            }
            let j = along / norm;
            let turn = (p as isize + g.offset[d] * j as isize) as usize;
            if turn == s {
                return true;
            }
            if pos.color_code_at(turn) != EMPTY {
                return false;
            }
            // From the turning square towards `s`, one king step at a time, all empty.
            let (ux, uy) = ((ax - j * dx).signum(), (ay - j * dy).signum());
            let step = uy as isize * g.width as isize + ux as isize;
            let mut t = turn as isize + step;
            while t as usize != s {
                if pos.color_code_at(t as usize) != EMPTY {
                    return false;
                }
                t += step;
            }
            true
        })
    }

    /// Compares the state with one built from scratch for `pos`: `Err` names the first
    /// difference (the differential tests call this at every ply).
    pub fn check(&self, pos: &Position) -> Result<(), String> {
        if !self.is_synced(pos) {
            return Err("the state is not synced with the position".into());
        }
        let mut settled = self.clone();
        for color in Color::BOTH {
            settled.settle(pos, color);
        }
        let this = &settled;
        let fresh = MoveState::build(pos);
        let stride = this.compiled.stride;
        for sq in 0..this.t.squares.len() {
            let name = || pos.variant.geometry.square_name(sq);
            if this.t.squares[sq].mode != fresh.t.squares[sq].mode {
                return Err(format!("{}: mode {:?}, fresh {:?}", name(), this.t.squares[sq].mode, fresh.t.squares[sq].mode));
            }
            if this.t.squares[sq].mode == Mode::Empty {
                continue;
            }
            let same = this.t.squares[sq].program == fresh.t.squares[sq].program
                && this.t.squares[sq].total == fresh.t.squares[sq].total
                && this.t.squares[sq].reach == fresh.t.squares[sq].reach
                && this.t.squares[sq].local == fresh.t.squares[sq].local
                && this.t.squares[sq].band == fresh.t.squares[sq].band
                && this.t.lists[sq] == fresh.t.lists[sq]
                && this.t.hook_counts.get(sq) == fresh.t.hook_counts.get(sq)
                && (this.t.squares[sq].mode != Mode::Plain || {
                    let atoms = this.compiled.program(this.t.squares[sq].program).slots;
                    this.t.counts[sq * stride..sq * stride + atoms] == fresh.t.counts[sq * stride..sq * stride + atoms]
                });
            if !same {
                return Err(format!(
                    "{}: total {} reach {:?} local {} counts {:?}; fresh: total {} reach {:?} local {} counts {:?}",
                    name(),
                    this.t.squares[sq].total,
                    this.t.squares[sq].reach,
                    this.t.squares[sq].local,
                    &this.t.counts[sq * stride..(sq + 1) * stride],
                    fresh.t.squares[sq].total,
                    fresh.t.squares[sq].reach,
                    fresh.t.squares[sq].local,
                    &fresh.t.counts[sq * stride..(sq + 1) * stride],
                ));
            }
        }
        let rest = |s: &MoveState| (s.t.lines.clone(), s.t.local_rows.clone(), s.t.hooks.clone(), s.t.volatile.clone(), s.t.move_counts.clone(), s.t.pass_blocked);
        if rest(this) != rest(&fresh) {
            return Err("line bits (occupancy, Black's, rank levels), local rows, hooks, teleporters, count trees or pass flags differ".into());
        }
        Ok(())
    }

    /// Bytes the state holds on the heap (the lists' spare capacity included).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let n = self.t.squares.len();
        n * (size_of::<Square>() + size_of::<Vec<Move>>())
            + self.t.counts.len()
            + self.t.lists.iter().chain(&self.t.spare).map(|l| l.capacity() * size_of::<Move>()).sum::<usize>()
            + self.t.hook_counts.len() * size_of::<Option<Box<HookCounts>>>()
            + (self.t.hook_counts.iter().flatten().count() + self.t.spare_hooks.len()) * size_of::<HookCounts>()
            + self.t.lines.len() * std::mem::size_of::<LineBits>()
            + self.t.local_rows.len() * 8
            + self.t.hooks.heap_bytes()
            + self.t.volatile.heap_bytes()
            + self.t.hook_box.len() * 4
            + self.t.move_counts.iter().map(CountTree::heap_bytes).sum::<usize>()
    }
}

/// A set of squares as bits, with a word that says which words are not empty: boards have at
/// most 64 × 64 squares (the per-line bits), so one summary word covers them, and a walk over
/// a set of a few pieces looks at a few words.
#[derive(Clone, Debug, PartialEq, Eq)]
struct SquareSet {
    words: Vec<u64>,
    /// Bit `w`: `words[w]` is not empty.
    summary: u64,
}

impl SquareSet {
    fn new(size: usize) -> SquareSet {
        assert!(size <= 64 * 64, "boards have at most 64 x 64 squares");
        SquareSet { words: vec![0; size.div_ceil(64)], summary: 0 }
    }

    fn clear(&mut self) {
        self.words.fill(0);
        self.summary = 0;
    }

    #[inline]
    fn insert(&mut self, sq: usize) {
        self.words[sq / 64] |= 1u64 << (sq % 64);
        self.summary |= 1u64 << (sq / 64);
    }

    #[inline]
    fn remove(&mut self, sq: usize) {
        let w = sq / 64;
        self.words[w] &= !(1u64 << (sq % 64));
        if self.words[w] == 0 {
            self.summary &= !(1u64 << w);
        }
    }

    /// A walk over the squares in increasing order that borrows the set only in `next`, so
    /// the caller may change the state between steps (a word is read when the walk gets to it).
    #[inline]
    fn cursor(&self) -> SquareCursor {
        SquareCursor { summary: self.summary, bits: 0, base: 0 }
    }

    fn heap_bytes(&self) -> usize {
        self.words.len() * 8
    }
}

/// See `SquareSet::cursor`.
struct SquareCursor {
    summary: u64,
    bits: u64,
    base: usize,
}

impl SquareCursor {
    #[inline]
    fn next(&mut self, set: &SquareSet) -> Option<usize> {
        while self.bits == 0 {
            if self.summary == 0 {
                return None;
            }
            let w = self.summary.trailing_zeros() as usize;
            self.summary &= self.summary - 1;
            self.bits = set.words[w];
            self.base = w * 64;
        }
        let sq = self.base + self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(sq)
    }
}

/// A ray's moves along a line where rays overlap (`Program::overlaps`): of its `count` squares
/// from distance `k`, those no earlier ray that way gave (`given`, which takes them in).
#[inline]
fn fresh_of(count: u8, k: u8, given: &mut u64) -> u8 {
    let squares = ray_squares(count, k);
    let fresh = squares & !*given;
    *given |= squares;
    fresh.count_ones() as u8
}

/// The squares (bit `k`: distance `k`) of a ray's `count` moves from distance `k`.
#[inline]
fn ray_squares(count: u8, k: u8) -> u64 {
    // A ray that starts beyond the edge (`k` past 63 too) has no squares.
    ((1u64 << count) - 1).checked_shl(k as u32).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::{CountTree, MoveState, SquareSet, LINE, LINE_WAYS};
    use crate::geometry::DIRECTION_COUNT;
    use crate::{Position, Variant};

    #[test]
    fn the_nearest_piece_is_the_first_met_walking_the_line() {
        // Every square, direction and starting distance of random positions of each variant.
        for name in crate::variant_names() {
            let variant = Variant::load(name, &[]).unwrap();
            let g = &variant.geometry;
            let mut game = crate::Game::new(variant.clone());
            for plies in [0, 150, 400] {
                crate::random::random_playout(&mut game, 9, plies);
                let pos: &Position = &game.position;
                let state = MoveState::new(pos);
                for sq in 0..g.size() {
                    for d in 0..DIRECTION_COUNT {
                        let edge = g.edge(sq, d);
                        for k in 1..=edge {
                            let walked = (k..=edge).find(|&m| pos.at((sq as isize + g.offset[d] * m as isize) as usize).is_some());
                            assert_eq!(state.first_piece(sq, d, k), walked, "{name} square {sq} direction {d} from {k}");
                            let nearest = state.nearest_in(sq, d, k, |l| l.occupied);
                            assert_eq!(nearest, walked.unwrap_or(k + 64), "{name} square {sq} direction {d} from {k}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_count_tree_finds_every_move_on_its_square() {
        for size in [1, 5, 16, 17, 64, 65, 256, 257, 17 * 17, 36 * 36, 64 * 64] {
            let mut tree = CountTree::new(size);
            let mut counts = vec![0u32; size];
            let mut seed = size as u64;
            for round in 0..3 {
                for sq in 0..size {
                    seed = crate::random::splitmix64(seed);
                    // Many squares without moves, as on a board.
                    let count = if seed % 3 == 0 { (seed >> 8) as u32 % 40 } else { 0 };
                    tree.add(sq, count as i32 - counts[sq] as i32);
                    counts[sq] = count;
                }
                let mut index = 0;
                for (sq, &count) in counts.iter().enumerate() {
                    assert_eq!(tree.before(sq), index, "size {size} round {round} square {sq}");
                    for i in 0..count {
                        assert_eq!(tree.find(index + i), (sq, i), "size {size} round {round} move {}", index + i);
                    }
                    index += count;
                }
                assert_eq!(tree.total(), index);
            }
        }
    }

    #[test]
    fn the_line_ways_are_the_directions_of_each_line() {
        for (o, up, down) in LINE_WAYS {
            assert_eq!((LINE[up], LINE[down]), ((o, true), (o, false)));
        }
    }

    #[test]
    fn a_square_set_walks_its_squares_in_order() {
        let mut set = SquareSet::new(36 * 36);
        let squares = [0, 1, 63, 64, 700, 1295];
        for &sq in squares.iter().rev() {
            set.insert(sq);
        }
        let walk = |set: &SquareSet| {
            let mut cursor = set.cursor();
            std::iter::from_fn(|| cursor.next(set)).collect::<Vec<_>>()
        };
        assert_eq!(walk(&set), squares);
        set.remove(64);
        set.remove(63);
        assert_eq!(walk(&set), [0, 1, 700, 1295]);
        // A word emptied leaves the summary, so two sets with the same squares are equal.
        let mut again = SquareSet::new(36 * 36);
        for sq in [0, 1, 700, 1295] {
            again.insert(sq);
        }
        assert_eq!(set, again);
        set.clear();
        assert_eq!(walk(&set), Vec::<usize>::new());
        assert_eq!(set, SquareSet::new(36 * 36));
    }
}
