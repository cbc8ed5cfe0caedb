//! A position: the board, the side to move, make and undo.

use crate::geometry::{Color, DIRECTION_COUNT};
use crate::hash::splitmix64;
use crate::table::Kind;
/// A piece on the board: defined beside the types it is made of (`table`), named here too.
pub use crate::table::Piece;
use crate::variant::Variant;
use std::sync::Arc;

/// `Position::color_code_at` of an empty square.
pub const EMPTY: u8 = 0;

/// The code of a colour in `Position::color_code_at`.
#[inline]
pub fn color_code(color: Color) -> u8 {
    1 + color as u8
}

/// Sentinel for "no square" in `Move::mid` and `Move::mid2`.
pub const NO_SQUARE: u16 = u16::MAX;

/// A move. Its whole effect follows from these fields and the board:
/// - the piece on `from` ends on `to` (`to == from` for igui and pass);
/// - `mid` (if set) is a square whose piece is captured on the way (lion double move, igui),
///   `mid2()` a second one (the Dai dai lion dog's three-step capture);
/// - `sweep()`: every piece strictly between `from` and `to` is removed (range capture);
/// - `promote()`: the mover chooses to promote (promotion in a zone);
/// - a piece on `to` (other than the mover) is captured.
///
/// Eight bytes: the generator pushes about a thousand per ply, so `mid2` and the two flags share
/// one `u16` (squares are below 2^11).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Move {
    /// Start square (index `y * width + x`).
    pub from: u16,
    /// End square; equal to `from` for igui and pass.
    pub to: u16,
    /// Square captured on the way (lion double move, igui), or `NO_SQUARE`.
    pub mid: u16,
    /// `mid2` in the low 11 bits (`MID2_NONE`: none), `SWEEP`, `PROMOTE`.
    bits: u16,
}

const MID2_NONE: u16 = 0x7FF;
const SWEEP: u16 = 1 << 14;
const PROMOTE: u16 = 1 << 15;

impl Move {
    /// A move from `from` to `to` with no capture on the way and no sweep.
    #[inline]
    pub fn new(from: usize, to: usize) -> Move {
        Move { from: from as u16, to: to as u16, mid: NO_SQUARE, bits: MID2_NONE }
    }

    /// A move from `from` to `to` capturing on `mid` (and `mid2`, or `NO_SQUARE`) on the way.
    #[inline]
    pub fn with_captures(from: usize, to: usize, mid: u16, mid2: u16) -> Move {
        Move { from: from as u16, to: to as u16, mid, bits: if mid2 == NO_SQUARE { MID2_NONE } else { mid2 } }
    }

    /// The generator's simple move (no capture on the way), branch-free.
    #[inline(always)]
    pub(crate) fn simple(from: u16, to: u16, sweep: bool) -> Move {
        Move { from, to, mid: NO_SQUARE, bits: MID2_NONE | (sweep as u16) << 14 }
    }

    /// This move with the range-capture flag set as given.
    #[inline]
    pub fn with_sweep(self, sweep: bool) -> Move {
        Move { bits: if sweep { self.bits | SWEEP } else { self.bits & !SWEEP }, ..self }
    }

    /// This move choosing to promote, or not (promotion in a zone).
    #[inline]
    pub fn with_promotion(self, promote: bool) -> Move {
        Move { bits: if promote { self.bits | PROMOTE } else { self.bits & !PROMOTE }, ..self }
    }

    /// A second square captured on the way, after `mid` (three-step moves), or `NO_SQUARE`.
    #[inline]
    pub fn mid2(&self) -> u16 {
        match self.bits & MID2_NONE {
            MID2_NONE => NO_SQUARE,
            sq => sq,
        }
    }

    /// Range capture: every piece strictly between `from` and `to` is removed.
    #[inline]
    pub fn sweep(&self) -> bool {
        self.bits & SWEEP != 0
    }

    /// The mover chooses to promote (promotion in a zone, where a move that may promote comes
    /// twice). Promotion by capture needs no flag: it follows from the move, see
    /// `Position::promotes`.
    #[inline]
    pub fn promote(&self) -> bool {
        self.bits & PROMOTE != 0
    }

    /// Whether the piece stays on its square without capturing (a lion pass).
    pub fn is_pass(&self) -> bool {
        self.from == self.to && self.mid == NO_SQUARE
    }

    /// Whether the piece captures on `mid` and stays on its square.
    pub fn is_igui(&self) -> bool {
        self.from == self.to && self.mid != NO_SQUARE
    }
}

/// The effect of fire demons on one move (`Position::burns`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Burns {
    squares: [u16; 8],
    len: u8,
    /// The mover is burned where it stops (it leaves the board).
    pub mover: bool,
}

impl Burns {
    /// Nothing burns.
    pub const NONE: Burns = Burns { squares: [0; 8], len: 0, mover: false };

    /// The squares of the enemies the mover burns.
    pub fn squares(&self) -> impl Iterator<Item = usize> + '_ {
        self.squares[..self.len as usize].iter().map(|&sq| sq as usize)
    }
}

/// `Position::quiet_hashes`: the hash after each quiet move of one piece.
pub(crate) struct QuietHashes {
    /// The hash with the piece lifted off its square, the turn passed, and its run of passes
    /// ended (a move that goes somewhere is not a pass).
    base: u64,
    piece: Piece,
    /// Whether a simple move to an empty square is quiet without asking `burns`.
    shortcut: bool,
}

impl QuietHashes {
    /// `pos.quiet_hash_after(mv)` for a move of this piece, `pos` the position it came from.
    #[inline]
    pub(crate) fn after(&self, pos: &Position, mv: Move) -> Option<u64> {
        let to = mv.to as usize;
        if self.shortcut && mv.mid == NO_SQUARE && mv.bits == MID2_NONE && to != mv.from as usize {
            return if pos.board[to].is_some() { None } else { Some(self.base ^ piece_key(to, self.piece)) };
        }
        pos.quiet_hash_after(mv)
    }
}

/// What the last move changed (`Position::last_change`).
#[derive(Clone, Copy, Debug)]
pub struct LastChange<'a> {
    /// The position's hash before the move.
    pub hash_before: u64,
    /// The piece that moved, as it was on its start square.
    pub moved: Piece,
    /// The piece on the move's end square now: the mover, promoted if it did; `None` if it
    /// burned itself.
    pub arrived: Option<Piece>,
    /// The pieces the move captured or burned, with their squares.
    pub removed: &'a [(u16, Piece)],
}

/// What `make` changed, for `unmake`.
#[derive(Clone, Debug)]
struct Undo {
    mv: Move,
    moved: Piece,
    captured_from: usize,
    hash: u64,
    royals: [u16; 2],
    passes: [u8; 2],
}

/// A position with the history needed to undo moves.
#[derive(Clone, Debug)]
pub struct Position {
    /// The variant (board, piece table, rules) the position is played under, shared.
    pub variant: Arc<Variant>,
    board: Vec<Option<Piece>>,
    /// One bit per square for each colour's pieces: generation visits pieces, not squares.
    occupied: [Vec<u64>; 2],
    /// Per square: 0 empty, 1 + colour index otherwise. The generator's hot loops read this.
    colors: Vec<u8>,
    /// Per square: bit `dir` (Black) and bit `8 + dir` (White) set where the neighbouring
    /// square in absolute direction `dir` holds a piece of that colour. The generator skips a
    /// piece's blocked lines with one mask instead of looking at their first squares. Always
    /// `NEIGHBOUR_SLOTS` long: the slots past the board are 0, and the first of them takes the
    /// updates of off-board neighbours (`Geometry::around`).
    neighbours: Vec<u16>,
    side: Color,
    /// Plies before this position, counted from the first position of its text (move number - 1).
    plies_before: u32,
    hash: u64,
    royals: [u16; 2],
    /// Each side's passes in a row (kept only under `max-consecutive-passes`, else 0).
    passes: [u8; 2],
    /// The variant limits passes in a row (a copy of the rule, read on the hot paths).
    counts_passes: bool,
    /// Pieces captured by the moves in `undo`, in order.
    captured: Vec<(u16, Piece)>,
    undo: Vec<Undo>,
}

/// The length of `Position::neighbours`: more than the squares of the largest board (52×52).
const NEIGHBOUR_SLOTS: usize = 4096;

/// The board of a variant's opening position, built once (kept in `Variant::caches`): a new game
/// copies it rather than placing hundreds of pieces one by one (`Position::initial`).
#[derive(Clone, Debug, Default)]
pub struct OpeningBoard {
    board: Vec<Option<Piece>>,
    occupied: [Vec<u64>; 2],
    colors: Vec<u8>,
    neighbours: Vec<u16>,
    hash: u64,
    royals: [u16; 2],
}

/// The hash key of a piece on a square: it covers everything that tells two pieces apart.
#[inline]
fn piece_key(sq: usize, p: Piece) -> u64 {
    let code = (p.kind as u64) | (p.origin as u64) << 16 | (p.color as u64) << 32 | (p.promoted as u64) << 33;
    // SplitMix64 of (piece, square): Zobrist-style keys without a 3M-entry table.
    splitmix64(code << 12 ^ sq as u64 ^ 0x5555_0000_0000_0000)
}

const WHITE_TO_MOVE_KEY: u64 = 0xA3B1_95C4_27D8_E1F6;

/// The hash key of `color` having passed `count` times in a row (0 for none, so variants
/// without a pass limit hash as before).
#[inline]
fn passes_key(color: Color, count: u8) -> u64 {
    if count == 0 {
        0
    } else {
        splitmix64(0x9A55_0000_0000_0000 ^ (color as u64) << 8 ^ count as u64)
    }
}

impl Position {
    /// An empty board.
    pub fn empty(variant: Arc<Variant>, side: Color) -> Position {
        let size = variant.geometry.size();
        let mut pos = Position {
            variant,
            board: vec![None; size],
            occupied: [vec![0; size.div_ceil(64)], vec![0; size.div_ceil(64)]],
            colors: vec![EMPTY; size],
            neighbours: vec![0; NEIGHBOUR_SLOTS],
            side: Color::Black,
            plies_before: 0,
            hash: 0,
            royals: [0, 0],
            passes: [0, 0],
            counts_passes: false,
            captured: Vec::new(),
            undo: Vec::new(),
        };
        pos.counts_passes = pos.variant.rules.max_consecutive_passes.is_some();
        pos.set_side(side);
        pos
    }

    /// A copy of the board and counters without the undo history (it cannot be unmade), at the
    /// cost of the board alone however long the game: for look-ahead tests, and all that
    /// describing its moves needs (their notation, captures and promotions: the Python `Move`s of
    /// one list share one).
    pub fn scratch_copy(&self) -> Position {
        Position {
            variant: self.variant.clone(),
            board: self.board.clone(),
            occupied: self.occupied.clone(),
            colors: self.colors.clone(),
            neighbours: self.neighbours.clone(),
            side: self.side,
            plies_before: self.plies_before,
            hash: self.hash,
            royals: self.royals,
            passes: self.passes,
            counts_passes: self.counts_passes,
            captured: Vec::new(),
            undo: Vec::new(),
        }
    }

    /// How many times in a row `color` has passed (counted only in variants with a
    /// `max-consecutive-passes` rule; 0 otherwise).
    pub fn consecutive_passes(&self, color: Color) -> u8 {
        self.passes[color.index()]
    }

    /// Sets `color`'s count of passes in a row (editing, and position texts). Ignored in a
    /// variant without a pass limit.
    pub fn set_consecutive_passes(&mut self, color: Color, count: u8) {
        if !self.counts_passes {
            return;
        }
        let i = color.index();
        self.hash ^= passes_key(color, self.passes[i]) ^ passes_key(color, count);
        self.passes[i] = count;
    }

    /// `color`'s count of passes in a row after its move `mv`.
    #[inline]
    fn passes_after(&self, color: Color, mv: Move) -> u8 {
        if mv.is_pass() {
            self.passes[color.index()].saturating_add(1)
        } else {
            0
        }
    }

    /// The change `mv` makes to the hash through the mover's count of passes in a row.
    #[inline]
    fn passes_hash_delta(&self, color: Color, mv: Move) -> u64 {
        if !self.counts_passes {
            return 0;
        }
        passes_key(color, self.passes[color.index()]) ^ passes_key(color, self.passes_after(color, mv))
    }

    /// The variant's initial position, Black to move.
    pub fn initial(variant: Arc<Variant>) -> Position {
        // Placed piece by piece once per variant; every later game copies the board.
        let opening = variant
            .caches
            .opening_board
            .get_or_init(|| {
                let mut pos = Position::empty(variant.clone(), Color::Black);
                for (sq, kind, color) in variant.initial_pieces() {
                    pos.put(sq, Piece { kind, origin: kind, color, promoted: false });
                }
                let Position { board, occupied, colors, neighbours, hash, royals, .. } = pos;
                OpeningBoard { board, occupied, colors, neighbours, hash, royals }
            })
            .clone();
        let OpeningBoard { board, occupied, colors, neighbours, hash, royals } = opening;
        let counts_passes = variant.rules.max_consecutive_passes.is_some();
        Position {
            variant,
            board,
            occupied,
            colors,
            neighbours,
            side: Color::Black,
            plies_before: 0,
            hash,
            royals,
            passes: [0, 0],
            counts_passes,
            captured: Vec::new(),
            undo: Vec::new(),
        }
    }

    /// The piece on `sq`, if any.
    #[inline]
    pub fn at(&self, sq: usize) -> Option<Piece> {
        self.board[sq]
    }

    /// `EMPTY`, or `color_code(colour)` of the piece on `sq`.
    #[inline]
    pub fn color_code_at(&self, sq: usize) -> u8 {
        self.colors[sq]
    }

    /// The absolute directions in which the square next to `sq` holds a piece of `color`.
    #[inline]
    pub fn neighbours_of_color(&self, sq: usize, color: Color) -> u8 {
        (self.neighbours[sq] >> (8 * color.index())) as u8
    }

    /// The side whose turn it is.
    #[inline]
    pub fn side_to_move(&self) -> Color {
        self.side
    }

    /// Sets the side to move, keeping the hash in step. Editing; not a move.
    pub fn set_side(&mut self, side: Color) {
        if side != self.side {
            self.hash ^= WHITE_TO_MOVE_KEY;
            self.side = side;
        }
    }

    /// The move number the position text writes: 1 at the start, one more after every ply
    /// (the seed numbers moves; we count plies). It carries on from a position read from text.
    pub fn move_number(&self) -> u32 {
        self.plies_before + 1
    }

    /// Sets the move number (1 or more) of an edited or read position.
    pub fn set_move_number(&mut self, number: u32) {
        self.plies_before = number.max(1) - 1;
    }

    /// The 64-bit hash of the pieces and the side to move, kept up to date by every change;
    /// repetitions compare these.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// Number of royal pieces (kings, crown princes) a side has.
    pub fn royal_count(&self, color: Color) -> usize {
        self.royals[color.index()] as usize
    }

    /// The square of `color`'s royal when it has exactly one (a *sole* royal), else `None`.
    pub fn sole_royal(&self, color: Color) -> Option<usize> {
        if self.royal_count(color) != 1 {
            return None;
        }
        self.squares_of(color).find(|&sq| self.is_royal(self.board[sq].expect("occupied")))
    }

    /// How many moves can be undone.
    pub fn history_len(&self) -> usize {
        self.undo.len()
    }

    /// Every occupied square with its piece, both sides, in square order.
    pub fn squares(&self) -> impl Iterator<Item = (usize, Piece)> + '_ {
        self.board.iter().enumerate().filter_map(|(sq, p)| p.map(|p| (sq, p)))
    }

    /// The squares of one side's pieces, in square order.
    pub fn squares_of(&self, color: Color) -> impl Iterator<Item = usize> + '_ {
        self.occupied[color.index()].iter().enumerate().flat_map(|(w, &bits)| {
            let mut bits = bits;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let b = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                Some(w * 64 + b)
            })
        })
    }

    /// Calls `f` with the square and piece of every piece of `color`, in square order:
    /// `squares_of` as a plain loop, for scans that look at every piece (notation's).
    #[inline]
    pub fn for_each_piece_of(&self, color: Color, mut f: impl FnMut(usize, Piece)) {
        for (w, &word) in self.occupied[color.index()].iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let sq = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if let Some(piece) = self.board[sq] {
                    f(sq, piece);
                }
            }
        }
    }

    /// Writes a square, keeping the occupancy bits in step (no hash or royal bookkeeping).
    #[inline]
    fn set_raw(&mut self, sq: usize, piece: Option<Piece>) {
        // Read as colour codes (`colors` follows `board`): two small integers to compare.
        let (old, new) = (self.colors[sq], piece.map_or(EMPTY, |p| color_code(p.color)));
        if old != new {
            let bit = 1u64 << (sq % 64);
            for code in [old, new] {
                if code != EMPTY {
                    self.occupied[code as usize - 1][sq / 64] ^= bit;
                }
            }
            self.colors[sq] = new;
            // A colour code's bit as a neighbour sees it (Black's byte, White's); the masks
            // follow the board, so flipping the two codes' bits sets and clears at once.
            const MASK_BIT: [u16; 4] = [0, 1, 1 << 8, 0];
            let flip = MASK_BIT[old as usize % 4] ^ MASK_BIT[new as usize % 4];
            let around = self.variant.geometry.around(sq);
            // A fixed length, so the indices below need no bounds checks.
            let masks: &mut [u16; NEIGHBOUR_SLOTS] = (&mut self.neighbours[..]).try_into().expect("neighbour slots");
            for (d, &n) in around.iter().enumerate() {
                // Seen from the neighbour, `sq` lies in the opposite direction. An off-board
                // neighbour is the spare slot past the board, cleared after.
                masks[n as usize % NEIGHBOUR_SLOTS] ^= flip << ((d + 4) % DIRECTION_COUNT);
            }
            masks[self.board.len() % NEIGHBOUR_SLOTS] = 0;
        }
        self.board[sq] = piece;
    }

    fn is_royal(&self, p: Piece) -> bool {
        self.variant.table.get(p.kind).royal
    }

    /// Puts a piece on a square (replacing what was there). Editing; not a move.
    pub fn put(&mut self, sq: usize, piece: Piece) {
        self.remove(sq);
        self.hash ^= piece_key(sq, piece);
        if self.is_royal(piece) {
            self.royals[piece.color.index()] += 1;
        }
        self.set_raw(sq, Some(piece));
    }

    /// Removes and returns the piece on a square. Editing; not a move.
    pub fn remove(&mut self, sq: usize) -> Option<Piece> {
        let piece = self.board[sq]?;
        self.set_raw(sq, None);
        self.hash ^= piece_key(sq, piece);
        if self.is_royal(piece) {
            self.royals[piece.color.index()] -= 1;
        }
        Some(piece)
    }

    /// Forgets the undo history (after editing the board).
    pub fn clear_history(&mut self) {
        self.undo.clear();
        self.captured.clear();
    }

    /// The squares whose pieces a move removes, in order: `mid`, `mid2`, the swept squares,
    /// `to`, then the enemies its fire demon burns (a mover burned itself is `burns(mv).mover`).
    pub fn captures_of(&self, mv: Move) -> Vec<usize> {
        let mut out = Vec::new();
        self.for_each_capture(mv, |sq| out.push(sq));
        out.extend(self.burns(mv).squares());
        out
    }

    /// What fire demons (`burn` types) do when `mv` stops (the TSA reading, docs/RULES.md):
    /// if an enemy burner stands next to the square where the mover stops (and survives the
    /// move's captures), the mover is burned and burns nothing; otherwise a burning mover (its
    /// type before promotion) burns every adjacent enemy that does not burn.
    pub fn burns(&self, mv: Move) -> Burns {
        let mut burns = Burns { squares: [0; 8], len: 0, mover: false };
        if !self.variant.table.has_burners {
            return burns;
        }
        let table = &self.variant.table;
        let (from, to) = (mv.from as usize, mv.to as usize);
        let Some(mover) = self.board[from] else { return burns };
        // Only enemies next to where it stops burn or are burned: most moves stop by none.
        // Speed: no capture list and no eight squares looked at then, 2.5% of random Tenjiku
        // play before (issue 27, item 5).
        let mut near = self.neighbours_of_color(to, mover.color.opponent());
        if near == 0 {
            return burns;
        }
        let mut captured = [usize::MAX; 48];
        let mut n = 0;
        self.for_each_capture(mv, |sq| {
            captured[n] = sq;
            n += 1;
        });
        let g = &self.variant.geometry;
        let mut enemies = [0u16; 8];
        let mut count = 0;
        while near != 0 {
            let d = near.trailing_zeros() as usize;
            near &= near - 1;
            let a = (to as isize + g.offset[d]) as usize;
            if a == from || captured[..n].contains(&a) {
                continue;
            }
            match self.board[a] {
                Some(p) if p.color != mover.color => {
                    if table.get(p.kind).burns {
                        burns.mover = true;
                    } else {
                        enemies[count] = a as u16;
                        count += 1;
                    }
                }
                _ => {}
            }
        }
        if !burns.mover && table.get(mover.kind).burns {
            burns.squares = enemies;
            burns.len = count as u8;
        }
        burns
    }

    /// Whether `mv` may capture: it captures on the way or sweeps (`for_each_capture` looks
    /// along it), or it ends on a piece. Most moves do none of these; one byte tells.
    #[inline]
    pub fn may_capture(&self, mv: Move) -> bool {
        mv.mid != NO_SQUARE || mv.sweep() || (mv.to != mv.from && self.colors[mv.to as usize] != EMPTY)
    }

    /// Calls `f` with each square whose piece `mv` removes, in the order of `captures_of`
    /// (without allocating: the hot paths use this).
    #[inline]
    pub fn for_each_capture(&self, mv: Move, mut f: impl FnMut(usize)) {
        // Most moves capture at most on `to`: one byte tells, inline (priors test every move).
        if mv.mid == NO_SQUARE && !mv.sweep() {
            let to = mv.to as usize;
            if to != mv.from as usize && self.colors[to] != EMPTY {
                f(to);
            }
        } else {
            self.for_each_capture_on_the_way(mv, &mut f);
        }
    }

    /// `for_each_capture` for moves that capture on the way or sweep.
    #[inline(never)]
    fn for_each_capture_on_the_way(&self, mv: Move, f: &mut dyn FnMut(usize)) {
        let (from, to) = (mv.from as usize, mv.to as usize);
        if mv.mid != NO_SQUARE && self.board[mv.mid as usize].is_some() {
            f(mv.mid as usize);
        }
        if mv.mid2() != NO_SQUARE && self.board[mv.mid2() as usize].is_some() {
            f(mv.mid2() as usize);
        }
        if mv.sweep() {
            let (step, _) = self.variant.geometry.line_step(from, to);
            let mut sq = from as isize + step;
            while sq != to as isize {
                if self.board[sq as usize].is_some() {
                    f(sq as usize);
                }
                sq += step;
            }
        }
        if to != from && self.board[to].is_some() {
            f(to);
        }
    }

    /// Whether a move removes any piece.
    pub fn is_capture(&self, mv: Move) -> bool {
        let mut any = false;
        self.for_each_capture(mv, |_| any = true);
        any
    }

    /// Whether the mover changes type with this move: by its first capture, if its type
    /// promotes (promotion by capture), by the move's choice (promotion in a zone, or on the
    /// furthest rank), or by capturing a piece that confers a type (`confers=`).
    pub fn promotes(&self, mv: Move) -> bool {
        match self.board[mv.from as usize] {
            Some(p) => {
                let after = self.after_move(p, self.is_capture(mv), mv.promote(), self.conferred_by(mv));
                after.kind != p.kind || after.promoted != p.promoted
            }
            None => false,
        }
    }

    /// The type the last conferring piece (`confers=`) that `mv` captures confers, if any.
    #[inline]
    fn conferred_by(&self, mv: Move) -> Option<Kind> {
        if !self.variant.table.has_conferrers {
            return None;
        }
        let mut conferred = None;
        self.for_each_capture(mv, |sq| {
            if let Some(kind) = self.board[sq].and_then(|p| self.variant.table.get(p.kind).confers) {
                conferred = Some(kind);
            }
        });
        conferred
    }

    /// The mover as it stands after its move (the one definition `make`, `hash_after` and
    /// `promotes` share):
    /// - capturing a piece that confers a type (`conferred`) turns it into that type, as the
    ///   promoted form of the type's first origin (so the text `+DV` reads it back), unless it
    ///   is royal or promotes to a royal type: those promote normally;
    /// - else it promotes, if its type promotes and it has not yet, when the move captures
    ///   (promotion by capture) or chooses to (`chosen`: in a zone, or on the furthest rank).
    #[inline]
    fn after_move(&self, mut piece: Piece, captures: bool, chosen: bool, conferred: Option<Kind>) -> Piece {
        let table = &self.variant.table;
        if let Some(target) = conferred {
            let ty = table.get(piece.kind);
            let potentially_royal = ty.royal || ty.promotes_to.is_some_and(|t| table.get(t).royal);
            if !potentially_royal {
                let origin = table.origins_of(target).next();
                return Piece {
                    kind: target,
                    origin: origin.unwrap_or(target),
                    color: piece.color,
                    promoted: origin.is_some(),
                };
            }
        }
        let promotes = chosen || (captures && self.variant.rules.promotes_on_capture());
        if promotes && !piece.promoted {
            if let Some(promoted) = table.get(piece.kind).promotes_to {
                piece.kind = promoted;
                piece.promoted = true;
            }
        }
        piece
    }

    /// The hash `make(mv)` would give, without making it (repetition-forbidding variants test
    /// every legal move with it).
    pub fn hash_after(&self, mv: Move) -> u64 {
        let (from, to) = (mv.from as usize, mv.to as usize);
        let moved = self.board[from].expect("hash_after: no piece on the start square");
        let conferred = self.conferred_by(mv);
        let mut hash = self.hash ^ WHITE_TO_MOVE_KEY ^ self.passes_hash_delta(moved.color, mv);
        let mut captures = false;
        self.for_each_capture(mv, |sq| {
            hash ^= piece_key(sq, self.board[sq].expect("captured square is occupied"));
            captures = true;
        });
        let burns = self.burns(mv);
        for sq in burns.squares() {
            hash ^= piece_key(sq, self.board[sq].expect("burned square is occupied"));
        }
        hash ^= piece_key(from, moved);
        if burns.mover {
            hash
        } else {
            hash ^ piece_key(to, self.after_move(moved, captures, mv.promote(), conferred))
        }
    }

    /// The hash after `mv` when it only moves the mover (no capture, promotion or burning),
    /// else `None`: pieces never come back, so only such a move can recreate an earlier
    /// position (the repetition rules ask this of every legal move).
    #[inline]
    pub fn quiet_hash_after(&self, mv: Move) -> Option<u64> {
        let (from, to) = (mv.from as usize, mv.to as usize);
        if mv.mid != NO_SQUARE || mv.promote() || (to != from && self.board[to].is_some()) {
            return None;
        }
        if mv.sweep() || (self.variant.table.has_burners && self.burns(mv) != Burns::NONE) {
            // A range capture only sweeps over pieces; a burn removes some.
            return None;
        }
        let moved = self.board[from]?;
        let hash = self.hash ^ WHITE_TO_MOVE_KEY;
        let hash = if to == from { hash } else { hash ^ piece_key(from, moved) ^ piece_key(to, moved) };
        Some(if self.counts_passes { hash ^ self.passes_hash_delta(moved.color, mv) } else { hash })
    }

    /// `quiet_hash_after` for the moves of the piece on `from`, with its part of the work done
    /// once: the repetition rules ask it of every legal move.
    pub(crate) fn quiet_hashes(&self, from: usize) -> QuietHashes {
        let piece = self.board[from].expect("quiet_hashes: no piece on the start square");
        let passes = if self.variant.rules.max_consecutive_passes.is_some() {
            passes_key(piece.color, self.passes[piece.color.index()]) ^ passes_key(piece.color, 0)
        } else {
            0
        };
        QuietHashes {
            base: self.hash ^ WHITE_TO_MOVE_KEY ^ passes ^ piece_key(from, piece),
            piece,
            // Burning can remove pieces after any move: then every move asks `burns`.
            shortcut: !self.variant.table.has_burners,
        }
    }

    /// Plays a move (assumed pseudo-legal for the side to move).
    pub fn make(&mut self, mv: Move) {
        let from = mv.from as usize;
        let to = mv.to as usize;
        let moved = self.board[from].expect("make: no piece on the start square");
        let record = Undo {
            mv,
            moved,
            captured_from: self.captured.len(),
            hash: self.hash,
            royals: self.royals,
            passes: self.passes,
        };
        let burns = self.burns(mv);
        let conferred = self.conferred_by(mv);
        if self.counts_passes {
            self.set_consecutive_passes(moved.color, self.passes_after(moved.color, mv));
        }
        let mut victims = [0u16; 48];
        let mut n = 0;
        self.for_each_capture(mv, |sq| {
            victims[n] = sq as u16;
            n += 1;
        });
        let captures = n > 0;
        for sq in burns.squares() {
            victims[n] = sq as u16;
            n += 1;
        }
        for &sq in &victims[..n] {
            let p = self.remove(sq as usize).expect("captured square is occupied");
            self.captured.push((sq, p));
        }
        let piece = self.remove(from).expect("mover present");
        if !burns.mover {
            self.put(to, self.after_move(piece, captures, mv.promote(), conferred));
        }
        self.undo.push(record);
        self.plies_before += 1;
        self.set_side(self.side.opponent());
    }

    /// Takes back the last move; returns it, or `None` when there is nothing to undo.
    pub fn unmake(&mut self) -> Option<Move> {
        let record = self.undo.pop()?;
        let mv = record.mv;
        self.set_raw(mv.to as usize, None);
        self.set_raw(mv.from as usize, Some(record.moved));
        for i in record.captured_from..self.captured.len() {
            let (sq, p) = self.captured[i];
            self.set_raw(sq as usize, Some(p));
        }
        self.captured.truncate(record.captured_from);
        self.side = self.side.opponent();
        self.plies_before -= 1;
        self.hash = record.hash;
        self.royals = record.royals;
        self.passes = record.passes;
        Some(mv)
    }

    /// The squares the last move changed, into `out`: its start and end, and every square it
    /// captured or burned on (nothing without a last move). The incremental move state
    /// (`incremental::MoveState`) computes again only what read them.
    pub fn last_move_squares(&self, out: &mut Vec<usize>) {
        out.clear();
        if let Some(record) = self.undo.last() {
            out.push(record.mv.from as usize);
            out.push(record.mv.to as usize);
            out.extend(self.captured[record.captured_from..].iter().map(|&(sq, _)| sq as usize));
        }
    }

    /// What the last move changed (`None` without one), so a sum over the pieces can follow
    /// it instead of being taken again (the search's material).
    pub fn last_change(&self) -> Option<LastChange<'_>> {
        let record = self.undo.last()?;
        Some(LastChange {
            hash_before: record.hash,
            moved: record.moved,
            arrived: self.board[record.mv.to as usize],
            removed: &self.captured[record.captured_from..],
        })
    }

    /// The last move played, if any.
    pub fn last_move(&self) -> Option<Move> {
        self.undo.last().map(|u| u.mv)
    }

    /// The moves played, oldest first.
    pub fn moves_played(&self) -> impl DoubleEndedIterator<Item = Move> + ExactSizeIterator + '_ {
        self.undo.iter().map(|u| u.mv)
    }

    /// Recomputes the hash from scratch (tests check the incremental one against it).
    pub fn compute_hash(&self) -> u64 {
        let mut h = if self.side == Color::White { WHITE_TO_MOVE_KEY } else { 0 };
        h ^= passes_key(Color::Black, self.passes[0]) ^ passes_key(Color::White, self.passes[1]);
        for (sq, p) in self.squares() {
            h ^= piece_key(sq, p);
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::DELTAS;

    /// The neighbour masks, recomputed from the board.
    fn fresh_neighbours(pos: &Position) -> Vec<u16> {
        let g = &pos.variant.geometry;
        let mut masks = vec![0u16; NEIGHBOUR_SLOTS];
        for sq in 0..g.size() {
            let (x, y) = g.xy(sq);
            for (d, &(dx, dy)) in DELTAS.iter().enumerate() {
                if let Some(p) = g.square(x + dx, y + dy).and_then(|n| pos.at(n)) {
                    masks[sq] |= 1 << (d + 8 * p.color.index());
                }
            }
        }
        masks
    }

    #[test]
    fn neighbour_masks_follow_make_and_unmake() {
        for name in crate::variant_names() {
            let variant = Variant::load(name, &[]).unwrap();
            let mut pos = Position::initial(variant);
            let mut moves = Vec::new();
            let mut seed = 1u64;
            for ply in 0..400 {
                assert_eq!(pos.neighbours, fresh_neighbours(&pos), "{name} ply {ply}");
                moves.clear();
                pos.generate(pos.side_to_move(), &mut moves);
                if moves.is_empty() {
                    break;
                }
                seed = splitmix64(seed);
                pos.make(moves[seed as usize % moves.len()]);
                if ply % 5 == 0 {
                    pos.unmake();
                    assert_eq!(pos.neighbours, fresh_neighbours(&pos), "{name} ply {ply} taken back");
                    pos.make(moves[seed as usize % moves.len()]);
                }
            }
        }
    }

    #[test]
    fn last_change_tells_what_the_move_changed() {
        let (mut captures, mut promotions) = (0, 0);
        for name in crate::variant_names() {
            let variant = Variant::load(name, &[]).unwrap();
            let mut pos = Position::initial(variant);
            assert!(pos.last_change().is_none());
            let mut moves = Vec::new();
            let mut seed = 3u64;
            for ply in 0..400 {
                moves.clear();
                pos.generate(pos.side_to_move(), &mut moves);
                if moves.is_empty() {
                    break;
                }
                seed = splitmix64(seed);
                let mv = moves[seed as usize % moves.len()];
                let (before, hash) = (pos.board.clone(), pos.hash());
                pos.make(mv);
                let change = pos.last_change().unwrap();
                assert_eq!(change.hash_before, hash, "{name} ply {ply}");
                assert_eq!(Some(change.moved), before[mv.from as usize], "{name} ply {ply}");
                // The board now is the board before, less the mover and what it removed, plus
                // the mover where it arrived.
                let mut expected = before.clone();
                expected[mv.from as usize] = None;
                for &(sq, p) in change.removed {
                    assert_eq!(expected[sq as usize], Some(p), "{name} ply {ply}");
                    expected[sq as usize] = None;
                }
                expected[mv.to as usize] = change.arrived;
                assert_eq!(expected, pos.board, "{name} ply {ply}: {mv:?}");
                if let Some(arrived) = change.arrived {
                    assert_eq!((arrived.color, arrived.origin), (change.moved.color, change.moved.origin));
                    promotions += (arrived.promoted && !change.moved.promoted) as usize;
                }
                captures += change.removed.len();
            }
        }
        assert!(captures > 100 && promotions > 10, "{captures} captures, {promotions} promotions");
    }

    #[test]
    fn every_game_starts_from_the_board_placed_piece_by_piece() {
        for name in crate::variant_names() {
            let variant = Variant::load(name, &[]).unwrap();
            let mut placed = Position::empty(variant.clone(), Color::Black);
            for (sq, kind, color) in variant.initial_pieces() {
                placed.put(sq, Piece { kind, origin: kind, color, promoted: false });
            }
            // Whichever call builds the variant's opening board (variants are shared between
            // tests), every call copies the same one.
            for round in 0..2 {
                let pos = Position::initial(variant.clone());
                let parts = |p: &Position| {
                    (p.board.clone(), p.occupied.clone(), p.colors.clone(), p.neighbours.clone(), p.royals)
                };
                assert!(parts(&pos) == parts(&placed), "{name}, round {round}");
                assert_eq!((pos.hash(), pos.compute_hash()), (placed.hash(), placed.hash()), "{name}, round {round}");
                assert_eq!((pos.side_to_move(), pos.plies_before, pos.passes), (Color::Black, 0, [0, 0]));
                assert_eq!(pos.counts_passes, variant.rules.max_consecutive_passes.is_some());
                assert!(pos.undo.is_empty() && pos.captured.is_empty());
            }
        }
    }
}
