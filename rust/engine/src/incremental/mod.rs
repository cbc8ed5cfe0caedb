//! The incremental move state (issue 13): every piece's moves, kept up to date move by move
//! instead of generated again every ply. A `Game` that tracks moves (`Game::track_moves`;
//! `random_playout` turns it on) keeps one in step with its position through `play` and
//! `undo`, and `Game::generate`, `legal_move_count`, `legal_move` and `choose_move` read it.
//! Full generation (`Position::generate_from`) stays the reference: pieces with the rare powers
//! keep the list it gives them, and `MoveState::check` compares the whole state with one built
//! from scratch (tests/incremental.rs does it at every ply of random games, and the fuzz target
//! `move_state` on fuzzed tables and games).
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
//!   from the piece: `reach[dir]` of its record is the farthest square read in `dir`. The
//!   readers of a changed square are the pieces on its eight lines whose reach gets there,
//!   found over per-line occupancy bits: the nearest piece each way, and beyond it only pieces
//!   that see through others (`through`). The same bits give a ray's first piece with one bit
//!   scan;
//! - local atoms (leaps, lion, lion lines, igui, area, double) read squares within a small
//!   Chebyshev radius, `local`, found by scanning the rows around the change; of those, only
//!   the cells its atoms read (`local_cells`: a leap's square, an area move's neighbours of
//!   the empty squares it goes on from) count;
//! - a hook reads its first legs and the lines turning off them: `band[dir]` is a leg's
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
//! # Three kinds of piece
//!
//! A *plain* piece (only slides, jumps, leaps and the line atoms that read past pieces: hops,
//! range captures, range and rank jumps; atoms that never reach the same square, or only rays;
//! not trapped where it stands, and no move that may be offered promotion, or only moves into
//! the zone from outside it, whose twins it counts: `twins.rs`) keeps one count per
//! atom, in table order, and never stores its moves: a slide's or jump's moves are the squares
//! at distances k, k + 1, ... along its ray (less, where rays along one line overlap, those an
//! earlier ray gave: `Program::overlaps`), a walk's (`PlainAtom::Walk`) are found again along
//! its line when asked for. A changed square it read counts again only the atoms of that
//! direction. Slides and walks followed by one area move (fire demon, vice general) are plain
//! too where no pass limit applies: the area move counts the squares it reaches that they did
//! not give, and a pass, over the box around the piece (`PlainAtom::Area`); its moves, whose
//! order only the reference's breadth-first walk gives, come from the reference when asked for.
//! So are lines followed by local powers (lion, lion lines, igui, double steps) that reach none
//! of their squares (horned falcon, soaring eagle, lion): the powers are counted together by
//! generating them alone (`PlainAtom::Powers`; a lone lion over the box around it,
//! `lion_count`); and slides, one a direction, followed by lions, igui, double steps and plain
//! jumps that do reach some (lion hawk, free eagle): less the powers' simple moves to squares a
//! slide gave (`Program::powers_meet`). A change within the local reads of either counts the
//! whole piece again.
//!
//! A *hook* piece (only hooks: hook mover, capricorn, longnosed goblin), under the same
//! conditions, keeps counts per leg and per turn (`hooks::HookCounts`): a changed square on a
//! turn walks that turn again, one on a leg walks the leg and the turns it gained again.
//!
//! Every other piece is *listed*: it keeps the list that `Position::generate_from` gives it:
//! its moves, promotion twins, trap and pass filters are the reference's by construction. A
//! listed piece of the side not to move that must be generated in full waits until its side
//! is next to move (`settle`), so a piece that two moves in a row touch is generated once;
//! queries about a side need it settled (`update` settles the side to move). That holds for a
//! listed or hook piece the move puts on a square too (the piece that moved, or a capture
//! taken back): until then it reads nothing, so no reader test has to find it (a hook piece's
//! counts cost thousands of instructions, and the reply often reads or takes it; a plain piece
//! is counted at once, cheaper than waiting, unless counting it generates moves: an area move
//! or powers, `Program::generates`, which wait as a listed piece does when a change reads them).
//!
//! # Invariants
//!
//! After `new`, `rebuild` and `update`, with `pos` the position the state follows:
//!
//! 1. **Synced.** `Tables::hash` is `pos.hash()` and the state's variant is `pos`'s
//!    (`is_synced`); `compiled` is that variant's `Compiled` (`Compiled::of`). Kept by `update`
//!    and `rebuild` (mod.rs); the queries and `check` assume it.
//! 2. **One mode per piece.** A square's `PieceRecord::mode` is `Empty` without a piece;
//!    `Hooks` for a piece whose program keeps hook counts there (`Program::counts_hooks`);
//!    `Plain` for one that keeps counts (`Program::is_plain`) and none of whose counted moves
//!    may be offered promotion (`MoveState::offered`) or that counts its twins
//!    (`PieceRecord::twin_from`); `Listed` otherwise. Kept by `refresh`
//!    (compute.rs), and by `reread` (readers.rs) for a plain piece whose recount brings a move
//!    into the promotion ranks.
//! 3. **Line bits are the board.** Each line's `occupied`, `black` and `ranked` bits
//!    (`LineBits`) are the pieces on it; its `through` bits are the pieces that see through
//!    others. `update` sets the bits of every changed square before any piece is counted (a
//!    count scans them): lines.rs, `set_line_bits`; compute.rs for `through`.
//! 4. **Counts are the reference's.** A plain piece's slot `i` (`Tables::counts`) is atom
//!    `i`'s number of moves (less those an earlier overlapping ray gave) and, where it counts
//!    them, slot `i` of `Tables::twins` its promotion twins, a listed piece's list
//!    is `Position::generate_from`'s, a hook piece's counts are `HookCounts::compute`'s, and
//!    `total` is its number of moves. plain.rs, listed.rs, hooks.rs.
//! 5. **The count trees sum the totals.** `Tables::move_counts[c]` holds, per square, the
//!    `total` of colour `c`'s piece there: every change of a `total` passes its difference to
//!    the tree (`refresh`, `vacate` in compute.rs; `recount_direction` in plain.rs;
//!    `follow_hooks` in readers.rs). count_tree.rs.
//! 6. **Reads cover the generation.** A computed piece's `reach`, `local` with
//!    `local_cells`, `band`, hook box (`Tables::hook_box`) and its membership of `hooks` and
//!    `volatile` name every square its generation read (`local_read` and `LocalCells::of`
//!    name every atom's reads, so a new atom does not compile until they are stated). Kept
//!    where pieces are computed: compute.rs, plain.rs, listed.rs, hooks.rs, local_cells.rs.
//! 7. **Every reader of a change is computed again.** During an `update`, every piece whose
//!    reads (invariant 6) include a changed square is computed again on the new board, or
//!    marked pending: readers.rs finds them, plus the teleporters and the pass-limit pieces in
//!    `update`.
//! 8. **Pending pieces.** A bit of `Tables::pending[c]` is set exactly for a listed or hook
//!    piece, or a plain piece whose count generates moves (`Program::generates`), of colour `c`
//!    put off until its side moves; one the move put down reads nothing (its reads are cleared
//!    by `vacate`), so no reader test finds it; `pending_count[c]` counts the bits.
//!    A side with pending pieces is not *settled*, and queries about it panic: `update` settles
//!    the side to move. pending.rs.
//! 9. **Epochs.** A record's `stamp` is the current `epoch` exactly when the piece was computed
//!    (or vacated) in this update, so no piece is computed twice in one; the epoch is never 0
//!    (`next_epoch` restamps on wrap). mod.rs, compute.rs.
//!
//! `MoveState::check` (check.rs) settles a copy and compares invariants 2–6 and 8 with a state
//! built from scratch; the differential tests (tests/incremental.rs) and the fuzz target
//! compare the moves with full generation too.
//!
//! # Files
//!
//! | file | what |
//! |---|---|
//! | `mod.rs` | `MoveState` and its tables; building, following moves (`update`), the invariants |
//! | `program.rs` | what each piece type compiles to (`Program`, `PlainAtom`), per variant (`Compiled`) |
//! | `lines.rs` | the per-line bits and their scans (`ray`, `nearest_in`, `Count`) |
//! | `compute.rs` | a piece computed in full (`refresh`) or taken off (`vacate`) |
//! | `plain.rs` | plain pieces: counts per atom, recounts per direction, walks, overlaps, offers |
//! | `listed.rs` | listed pieces: the reference's list and its reads |
//! | `local_cells.rs` | the squares around a piece its local atoms read (`LocalCells`) |
//! | `hooks.rs` | hook pieces: counts per leg and turn |
//! | `readers.rs` | the pieces that read a changed square, computed again |
//! | `pending.rs` | pieces put off until their side moves (`settle`) |
//! | `moves.rs` | reading the moves out: `count`, `nth`, `moves`, `for_each_move` |
//! | `twins.rs` | plain pieces' promotion twins: counted per atom, read out after the moves |
//! | `count_tree.rs` | each side's counts per square, for `nth` (`CountTree`) |
//! | `square_set.rs` | bit sets of squares with a summary word (`SquareSet`) |
//! | `signs.rs` | each side's pieces by the code notation writes them with (`SignIndex`) |
//! | `check.rs` | `MoveState::check`: the state against one built from scratch |
//!
//! Lines marked `// Speed:` say why a piece of code is shaped as it is and what it gained, as
//! measured in docs/PERFORMANCE.md (issue 13's steps).

use crate::geometry::{Color, DIRECTION_COUNT};
use crate::position::{color_code, Move, Position};
use crate::variant::Variant;
use std::sync::Arc;

mod check;
mod compute;
mod count_tree;
mod hooks;
mod lines;
mod listed;
mod local_cells;
mod moves;
mod pending;
mod plain;
mod program;
mod readers;
mod signs;
mod square_set;
mod twins;

use count_tree::CountTree;
use hooks::HookCounts;
use lines::LineBits;
use program::Compiled;
use signs::SignIndex;
use square_set::SquareSet;

/// Every piece's moves, for both sides, kept up to date by `update` after each move made or
/// taken back (see the module documentation). A `Game` holds one.
#[derive(Clone, Debug)]
pub struct MoveState {
    variant: Arc<Variant>,
    /// The variant's compiled table (`Compiled::of`), held to skip the variant cache's test.
    // Speed: −2% instructions in random play (issue 13's fourth step).
    compiled: Arc<Compiled>,
    /// Everything else: a variant's opening state is kept without its variant
    /// (`Compiled::opening`), so that the variant holds no reference to itself.
    tables: Tables,
}

/// The tables of a `MoveState`.
#[derive(Clone, Debug)]
struct Tables {
    /// The hash of the position the state describes: a position with another hash (edited,
    /// or moved on without `update`) is not described (`is_synced`).
    hash: u64,
    /// Per square: what the piece there keeps and reads.
    records: Vec<PieceRecord>,
    /// Per square, `stride` slots: moves per atom of a plain piece.
    counts: Vec<u8>,
    /// Per square, `stride` slots: promotion twins per atom of a plain piece that counts them
    /// (`PieceRecord::twin_from`; meaningless for the others).
    twins: Vec<u8>,
    /// Per square: a listed piece's moves.
    lists: Vec<Vec<Move>>,
    /// Per square: a hook piece's counts (`Mode::Hooks`; empty without hooks).
    hook_counts: Vec<Option<Box<HookCounts>>>,
    /// Counts of hook pieces that left their squares, for the next (boxed: a box moves between
    /// this and `hook_counts` without copying the counts).
    #[allow(clippy::vec_box)]
    spare_hooks: Vec<Box<HookCounts>>,
    /// Lists of pieces that left their squares, kept for the next listed piece (a few, so
    /// neither the squares nor this keep much memory).
    spare: Vec<Vec<Move>>,
    /// Per line (`Compiled::square_lines`): its bits.
    lines: Vec<LineBits>,
    /// Per rank: bit x set when the piece on (x, y) has local reads.
    // Speed: the local readers of a change are found by scanning the rows around it, not by
    // testing every piece (issue 13's first step).
    local_rows: Vec<u64>,
    /// Per square: the cells of the box around the piece there that its local atoms read
    /// (`local_cells::LocalCells`; meaningless where `PieceRecord::local` is 0).
    local_cells: Vec<u128>,
    /// Pieces with hooks, and pieces computed after every move (teleport).
    hooks: SquareSet,
    volatile: SquareSet,
    /// Per square (empty without hooks): for a piece keeping hook counts, the box of squares
    /// they read (`HookCounts::board_box` of its `area`: least x, most x, least y, most y), so
    /// a change elsewhere is passed over without looking at the counts.
    // Speed: tested before the counts are touched, converted only when it grew (part of issue
    // 13's fifth step: random play 1.17× faster).
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
    /// The epoch of this update (`PieceRecord::stamp`).
    epoch: u32,
    /// The squares of the move being followed (scratch).
    changed: Vec<usize>,
    /// The moves of a plain piece's powers, counted (scratch; `PlainAtom::Powers`).
    powers: Vec<Move>,
    /// Each side's pieces by the code they are written with, for notation.
    signs: SignIndex,
}

/// What the state keeps about the piece on a square: together, so that looking at a piece
/// reads one cache line (32 bytes, aligned).
// Speed: see `LineBits` (L1 data misses 2.03M → 1.42M, issue 13's fourth step); a 16-byte
// record was tried in the seventh step and changed nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(align(32))]
struct PieceRecord {
    /// What the piece there keeps.
    mode: Mode,
    /// The Chebyshev radius its local atoms read (0: none).
    local: u8,
    /// The program (`kind * 2 + colour`) of the piece there.
    program: u32,
    /// The piece's number of moves (promotion twins included).
    total: u16,
    /// For a plain piece that counts its promotion twins (`twins.rs`): the distance at which a
    /// line heading to the zone enters it. 0: it counts none.
    twin_from: u8,
    /// The `Tables::epoch` in which the piece there was last computed in full.
    stamp: u32,
    /// Per direction: the farthest square its line atoms read that way.
    reach: [u8; DIRECTION_COUNT],
    /// Per direction: the length of a hook's first leg.
    band: [u8; DIRECTION_COUNT],
}

impl PieceRecord {
    const EMPTY: PieceRecord = PieceRecord {
        mode: Mode::Empty,
        local: 0,
        program: 0,
        total: 0,
        twin_from: 0,
        stamp: 0,
        reach: [0; DIRECTION_COUNT],
        band: [0; DIRECTION_COUNT],
    };

    /// The index (`Color::index`) of the colour of the piece there.
    #[inline]
    fn color_index(&self) -> usize {
        self.program as usize & 1
    }
}

/// What the piece on a square keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// No piece.
    Empty,
    /// A count per atom (`Tables::counts`).
    Plain,
    /// Its moves as `Position::generate_from` gives them (`Tables::lists`).
    Listed,
    /// Counts per hook turn (`Tables::hook_counts`).
    Hooks,
}

impl MoveState {
    /// The state of `pos`. Every game starts from the same position, so the opening's state is
    /// built once per variant and copied (`Compiled::opening`).
    // Speed: a new game copies the opening state instead of counting ~800 pieces (issue 13's
    // fourth step, part of 1.34× faster 1000-ply games).
    pub fn new(pos: &Position) -> MoveState {
        let variant = pos.variant.clone();
        let compiled = Compiled::of(&variant);
        let opening = compiled.opening.get_or_init(|| MoveState::build(&Position::initial(variant.clone())).tables);
        // The hash stands for the position, as in `is_synced`.
        if pos.hash() == opening.hash {
            return MoveState { tables: opening.clone(), compiled: compiled.clone(), variant };
        }
        MoveState::build(pos)
    }

    /// The state of `pos`, built from scratch.
    fn build(pos: &Position) -> MoveState {
        let variant = pos.variant.clone();
        let compiled = Compiled::of(&variant).clone();
        let size = variant.geometry.size();
        let h = variant.geometry.height;
        let words = size.div_ceil(64);
        let tables = Tables {
            hash: 0,
            records: vec![PieceRecord::EMPTY; size],
            counts: vec![0; size * compiled.stride],
            twins: vec![0; size * compiled.stride],
            lists: vec![Vec::new(); size],
            spare: Vec::new(),
            hook_counts: if compiled.hooks { vec![None; size] } else { Vec::new() },
            spare_hooks: Vec::new(),
            lines: vec![LineBits::default(); compiled.line_count],
            local_rows: vec![0; h],
            local_cells: vec![0; size],
            hooks: SquareSet::new(size),
            volatile: SquareSet::new(size),
            hook_box: if compiled.hooks { vec![[0; 4]; size] } else { Vec::new() },
            move_counts: [CountTree::new(size), CountTree::new(size)],
            pending: [vec![0; words], vec![0; words]],
            pending_count: [0; 2],
            pass_blocked: [false; 2],
            epoch: 1,
            changed: Vec::new(),
            powers: Vec::new(),
            signs: SignIndex::new(size, variant.table.len()),
        };
        let mut state = MoveState { variant, compiled, tables };
        state.rebuild(pos);
        state
    }

    /// Computes everything again for `pos` (after edits), keeping the allocations.
    pub fn rebuild(&mut self, pos: &Position) {
        assert!(Arc::ptr_eq(&self.variant, &pos.variant), "a move state follows positions of one variant");
        let tables = &mut self.tables;
        tables.lines.fill(LineBits::default());
        tables.local_rows.fill(0);
        tables.local_cells.fill(0);
        tables.hooks.clear();
        tables.volatile.clear();
        tables.move_counts[0].clear();
        tables.move_counts[1].clear();
        for pending in tables.pending.iter_mut() {
            pending.fill(0);
        }
        tables.pending_count = [0; 2];
        tables.signs.clear();
        for record in tables.records.iter_mut() {
            *record = PieceRecord { stamp: record.stamp, ..PieceRecord::EMPTY };
        }
        self.next_epoch();
        // All the occupancy bits before any piece is counted (`ray` reads them: invariant 3).
        for sq in 0..self.tables.records.len() {
            self.set_line_bits(sq, pos.at(sq));
            self.tables.signs.set(&self.variant.table, sq, pos.at(sq));
        }
        for sq in 0..self.tables.records.len() {
            self.refresh(pos, sq);
        }
        self.tables.pass_blocked = self.passes_blocked(pos);
        self.tables.hash = pos.hash();
    }

    /// Whether the state describes `pos` (same variant, same hash: a 64-bit hash of the board,
    /// the side to move and the pass counters, so another position matches by chance only).
    pub fn is_synced(&self, pos: &Position) -> bool {
        Arc::ptr_eq(&self.variant, &pos.variant) && self.tables.hash == pos.hash()
    }

    /// Brings the state from the position before `pos`'s last move to `pos` (after
    /// `Position::make`).
    pub fn follow_make(&mut self, pos: &Position) {
        let mut changed = std::mem::take(&mut self.tables.changed);
        pos.last_move_squares(&mut changed);
        self.update(pos, &changed);
        self.tables.changed = changed;
    }

    /// Notes the squares `pos`'s last move changed, before it is taken back; `follow_unmake`
    /// then brings the state to the position after `Position::unmake`.
    pub fn prepare_unmake(&mut self, pos: &Position) {
        pos.last_move_squares(&mut self.tables.changed);
    }

    /// See `prepare_unmake`.
    pub fn follow_unmake(&mut self, pos: &Position) {
        let changed = std::mem::take(&mut self.tables.changed);
        self.update(pos, &changed);
        self.tables.changed = changed;
    }

    /// Brings the state up to date with `pos`, whose board differs from the one the state
    /// describes only on the squares `changed` (and in the pass counters).
    pub fn update(&mut self, pos: &Position, changed: &[usize]) {
        assert!(Arc::ptr_eq(&self.variant, &pos.variant), "a move state follows positions of one variant");
        self.next_epoch();
        // Invariant 3 first: the counts below scan the bits.
        for &sq in changed {
            self.set_line_bits(sq, pos.at(sq));
            self.tables.signs.set(&self.variant.table, sq, pos.at(sq));
        }
        for &sq in changed {
            if self.tables.records[sq].stamp != self.tables.epoch {
                self.place(pos, sq);
            }
        }
        // Invariant 7.
        for &sq in changed {
            self.refresh_readers(pos, sq);
        }
        // Teleporters: their protection test reads the whole board.
        let mut volatile = self.tables.volatile.cursor();
        while let Some(sq) = volatile.next(&self.tables.volatile) {
            if self.tables.records[sq].stamp != self.tables.epoch {
                self.touch(pos, sq);
            }
        }
        let blocked = self.passes_blocked(pos);
        for color in Color::BOTH {
            if blocked[color.index()] != self.tables.pass_blocked[color.index()] {
                for sq in pos.squares_of(color) {
                    let record = &self.tables.records[sq];
                    if record.mode == Mode::Listed && record.stamp != self.tables.epoch {
                        self.touch(pos, sq);
                    }
                }
            }
        }
        self.tables.pass_blocked = blocked;
        self.settle(pos, pos.side_to_move());
        self.tables.hash = pos.hash();
    }

    /// Per colour: whether its run of passes has reached `max-consecutive-passes`.
    fn passes_blocked(&self, pos: &Position) -> [bool; 2] {
        match self.variant.rules.max_consecutive_passes {
            Some(limit) => Color::BOTH.map(|c| pos.consecutive_passes(c) >= limit),
            None => [false; 2],
        }
    }

    /// Starts an update (invariant 9).
    fn next_epoch(&mut self) {
        self.tables.epoch = self.tables.epoch.wrapping_add(1);
        if self.tables.epoch == 0 {
            self.tables.records.iter_mut().for_each(|record| record.stamp = 0);
            self.tables.epoch = 1;
        }
    }

    /// `color_code` of the owner of the piece on `sq`.
    #[inline]
    fn own(&self, sq: usize) -> u8 {
        color_code(Color::BOTH[self.tables.records[sq].color_index()])
    }

    /// Bytes the state holds on the heap (the lists' spare capacity included).
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let tables = &self.tables;
        let n = tables.records.len();
        n * (size_of::<PieceRecord>() + size_of::<Vec<Move>>())
            + tables.counts.len()
            + tables.twins.len()
            + tables.lists.iter().chain(&tables.spare).map(|l| l.capacity() * size_of::<Move>()).sum::<usize>()
            + tables.hook_counts.len() * size_of::<Option<Box<HookCounts>>>()
            + (tables.hook_counts.iter().flatten().count() + tables.spare_hooks.len()) * size_of::<HookCounts>()
            + tables.lines.len() * size_of::<LineBits>()
            + tables.local_rows.len() * 8
            + tables.local_cells.len() * 16
            + tables.hooks.heap_bytes()
            + tables.volatile.heap_bytes()
            + tables.hook_box.len() * 4
            + tables.move_counts.iter().map(CountTree::heap_bytes).sum::<usize>()
            + tables.signs.heap_bytes()
    }
}
