//! The one move generator: it reads each piece's atoms from the variant's table.
//!
//! Moves into check are legal in Taikyoku shogi, so the moves generated here are the legal
//! moves; only the trapped-piece rule filters them.

use crate::geometry::{Color, DELTAS, DIRECTION_COUNT};
use crate::position::{color_code, Move, Piece, Position, EMPTY, NO_SQUARE};
use crate::rules::{Zone, ZoneTrigger};
use crate::table::{Atom, Kind, Motion, Ray, Trap, UNLIMITED};
use crate::variant::Variant;
use std::sync::Arc;

/// Bit `i` set where slide `i` of `bits` (`Motion::slide_bits`: one direction bit each, 0 past
/// the last) is open (its direction set in `open`), without a branch: the slides' bytes that
/// keep a bit of `open` are found eight at a time, and their top bits gathered into one byte.
#[inline(always)]
fn open_slides(bits: &[u8; DIRECTION_COUNT], open: u8) -> u8 {
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    let kept = u64::from_le_bytes(*bits) & (open as u64 * 0x0101_0101_0101_0101);
    // The top bit of each byte that is not zero (adding 0x7F carries into it from the low seven
    // bits; the top bit itself is or-ed in).
    let nonzero = (((kept & LOW7) + LOW7) | kept) & !LOW7;
    // Byte i's top bit, shifted to bit 8i, lands in bit 56 + i of the product.
    ((nonzero >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8
}

/// What a rank-limited line does with the pieces it passes (`Position::rank_line`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RankLine {
    /// `rangecap`: removes them.
    Capture,
    /// `rankjump`: leaves them, and stops beyond them only to capture.
    Jump,
    /// `rankhop`: leaves them, and may stop on any square beyond them.
    Hop,
}

/// What the zone rule offers a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Offer {
    /// No promotion.
    None,
    /// A choice: the move comes twice.
    Optional,
    /// Promotion is compulsory (the piece would be stuck).
    Forced,
}

/// The zone rule's view of one piece on its square (`Position::zone_test`).
pub(crate) struct ZoneTest {
    color: Color,
    depth: usize,
    trigger: ZoneTrigger,
    /// `dead_ends` of the piece's type: ranks (from the front) it would be stuck on.
    dead_ends: u64,
    /// The piece stands in the zone.
    from_in_zone: bool,
}

/// Keeps the moves from `start` on that `keep` accepts, in order.
trait RetainFrom {
    fn retain_from(&mut self, start: usize, keep: impl FnMut(Move) -> bool);
}

impl RetainFrom for Vec<Move> {
    fn retain_from(&mut self, start: usize, mut keep: impl FnMut(Move) -> bool) {
        let mut kept = start;
        for i in start..self.len() {
            if keep(self[i]) {
                self[kept] = self[i];
                kept += 1;
            }
        }
        self.truncate(kept);
    }
}

/// Squares a single piece's generation has already produced (for pieces whose atoms overlap).
struct Seen {
    bits: [u64; 64],
}

impl Seen {
    fn new() -> Seen {
        Seen { bits: [0; 64] }
    }

    /// Marks (to, sweep) and returns true the first time.
    #[inline]
    fn first(&mut self, to: usize, sweep: bool) -> bool {
        let key = to * 2 + sweep as usize;
        let (word, bit) = (key / 64, 1u64 << (key % 64));
        let fresh = self.bits[word] & bit == 0;
        self.bits[word] |= bit;
        fresh
    }
}

/// Collects one piece's moves, dropping duplicates when the piece's atoms overlap.
struct Sink<'a> {
    out: &'a mut Vec<Move>,
    from: u16,
    seen: Option<&'a mut Seen>,
    /// Where this piece's moves start in `out` (multi-capture moves are deduplicated by scan).
    start: usize,
}

impl Sink<'_> {
    /// Runs `f` with a sink for the moves of the piece on `from`, appended to `out`, with a set
    /// of the squares seen when its atoms overlap (only those pay for clearing its 512 bytes).
    #[inline(always)]
    fn with<R>(out: &mut Vec<Move>, from: usize, overlapping: bool, f: impl FnOnce(&mut Sink) -> R) -> R {
        let mut storage;
        let seen = if overlapping {
            storage = Seen::new();
            Some(&mut storage)
        } else {
            None
        };
        let start = out.len();
        f(&mut Sink { out, from: from as u16, seen, start })
    }

    #[inline(always)]
    fn add(&mut self, to: usize, sweep: bool) {
        if let Some(seen) = self.seen.as_deref_mut() {
            if !seen.first(to, sweep) {
                return;
            }
        }
        self.out.push(Move::simple(self.from, to as u16, sweep));
    }

    #[inline]
    fn add_with_mid(&mut self, to: usize, mid: usize) {
        self.add_with_mids(to, mid as u16, NO_SQUARE);
    }

    /// A move capturing on `mid` (and `mid2`) on the way; igui and pass too. Overlapping
    /// atoms (lion beside lion lines, lion lines in several directions) can produce the same
    /// one: a scan of this piece's few moves drops it.
    #[inline]
    fn add_with_mids(&mut self, to: usize, mid: u16, mid2: u16) {
        let mv = Move::with_captures(self.from as usize, to, mid, mid2);
        if self.seen.is_some() && self.out[self.start..].contains(&mv) {
            return;
        }
        self.out.push(mv);
    }
}

/// Per piece type of `variant`, bit `r` set when the type, alone on rank `r` counted from its
/// owner's far side, would have no move at all: where promotion in a zone is compulsory (the
/// `promotion-forced dead-end` rule). Empty unless the variant promotes in a zone under that
/// rule. Found from the generator itself on first use and kept with the variant
/// (`Variant::caches`).
#[inline]
pub fn dead_ends(variant: &Arc<Variant>) -> &[u64] {
    match variant.caches.dead_ends.get() {
        Some(ends) => ends,
        None => find_dead_ends(variant),
    }
}

/// `dead_ends`, found: a lone piece of each type on each rank of an empty board, generated.
/// That generation asks for the dead ends too (the zone rule reads them), and sees none while
/// they are found, as a variant's generation did before they were known.
#[cold]
fn find_dead_ends(variant: &Arc<Variant>) -> &[u64] {
    thread_local! {
        static FINDING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    if FINDING.get() {
        return &[];
    }
    /// Clears `FINDING` however the search ends.
    struct Found;
    impl Drop for Found {
        fn drop(&mut self) {
            FINDING.set(false);
        }
    }
    variant.caches.dead_ends.get_or_init(|| {
        if !variant.rules.zone().is_some_and(|z| z.forced_dead_end) {
            return Vec::new();
        }
        FINDING.set(true);
        let _found = Found;
        let g = &variant.geometry;
        let mut dead_ends = vec![0u64; variant.table.len()];
        let mut moves = Vec::new();
        for (kind, bits) in dead_ends.iter_mut().enumerate() {
            for rank in 0..g.height {
                let sq = rank * g.width + g.width / 2;
                let mut pos = Position::empty(variant.clone(), Color::Black);
                let kind = kind as Kind;
                pos.put(sq, Piece { kind, origin: kind, color: Color::Black, promoted: false });
                moves.clear();
                pos.generate_from(sq, &mut moves);
                if moves.is_empty() {
                    *bits |= 1 << rank;
                }
            }
        }
        dead_ends
    })
}

impl Position {
    /// All legal moves of the side to move.
    pub fn legal_moves(&self) -> Vec<Move> {
        let mut out = Vec::with_capacity(2048);
        self.generate(self.side_to_move(), &mut out);
        out
    }

    /// Whether the side to move has a legal move (stops at the first piece that has one).
    pub fn has_legal_move(&self) -> bool {
        self.has_move_where(|_| true)
    }

    /// Whether the side to move has a move that `keep` accepts (stops at the first piece that
    /// has one; `Game` adds its history rules this way).
    pub fn has_move_where(&self, mut keep: impl FnMut(Move) -> bool) -> bool {
        let mut moves = Vec::with_capacity(64);
        self.squares_of(self.side_to_move()).any(|sq| {
            moves.clear();
            self.generate_from(sq, &mut moves);
            moves.iter().any(|&mv| keep(mv))
        })
    }

    /// Whether `mv` is a legal move of the side to move (generates only the mover's moves).
    pub fn is_legal(&self, mv: Move) -> bool {
        let from = mv.from as usize;
        if from >= self.variant.geometry.size() || !matches!(self.at(from), Some(p) if p.color == self.side_to_move()) {
            return false;
        }
        let mut moves = Vec::with_capacity(256);
        self.generate_from(from, &mut moves);
        moves.contains(&mv)
    }

    /// All moves of `color`'s pieces, as if it were `color`'s turn.
    pub fn generate(&self, color: Color, out: &mut Vec<Move>) {
        for sq in self.squares_of(color) {
            self.generate_from(sq, out);
        }
    }

    /// The moves of the piece on `sq` (none if the square is empty), as if its side were to move.
    #[inline(always)]
    pub fn generate_from(&self, sq: usize, out: &mut Vec<Move>) {
        let Some(piece) = self.at(sq) else { return };
        let table = &self.variant.table;
        let motion = table.motion_of(piece.kind);
        // The directions whose first square is on the board and not a friend's: a slide or a
        // hook in any other direction has no move, and most pieces of an opening have none.
        let inside = self.variant.geometry.neighbour_dirs(sq);
        let open = inside & !self.neighbours_of_color(sq, piece.color);
        if motion.only_lines && motion.line_dirs[piece.color.index()] & open == 0 {
            return;
        }
        // Trapped pieces stand on the first or last rank: a square with squares both above
        // and below it traps nothing.
        const UP_AND_DOWN: u8 = 1 << 0 | 1 << 4;
        let free = motion.trap == Trap::None || inside & UP_AND_DOWN == UP_AND_DOWN;
        if !free || !(motion.plain_slider || motion.rays_only) {
            self.generate_piece(sq, piece, motion, open, out);
            return;
        }
        let start = out.len();
        if motion.plain_slider {
            self.slides(sq, piece.color, open, motion, out);
        } else {
            self.rays(sq, piece.color, open, table.absolute_rays(motion, piece.color), out);
        }
        self.offer_zone_promotions(sq, piece, motion, start, out);
    }

    /// Each of `atoms` in turn into `sink` (one set of squares seen for all). The one place
    /// `generate_atom` is inlined, so the compiler inlines the powers it calls once too.
    #[inline(never)]
    fn atoms_into(&self, sq: usize, color: Color, range_rank: u8, open: u8, atoms: &[Atom], sink: &mut Sink) {
        for &atom in atoms {
            self.generate_atom(sq, color, range_rank, open, atom, sink);
        }
    }

    /// `generate_from` for the pieces the inline loop does not take: every kind of atom,
    /// deduplication, promotion offers, the pass limit and trapped pieces.
    #[inline(never)]
    fn generate_piece(&self, sq: usize, piece: Piece, motion: &Motion, open: u8, out: &mut Vec<Move>) {
        let table = &self.variant.table;
        let g = &self.variant.geometry;
        let trapped = match motion.trap {
            Trap::None => false,
            Trap::FurthestRank => g.rank_from_front(sq, piece.color) == 0,
            Trap::OwnFirstRank => {
                if g.rank_from_front(sq, piece.color) == g.height - 1 {
                    return;
                }
                false
            }
        };
        let start = out.len();
        let atoms = table.absolute_atoms(motion, piece.color);
        if motion.plain_slider {
            self.slides(sq, piece.color, open, motion, out);
        } else if motion.hooks_only {
            self.hooks(sq, piece.color, open, atoms, out);
        } else {
            Sink::with(out, sq, motion.overlapping, |sink| {
                self.atoms_into(sq, piece.color, motion.range_rank, open, atoms, sink)
            });
        }
        self.offer_zone_promotions(sq, piece, motion, start, out);
        if motion.far_promotion && !piece.promoted {
            self.offer_far_promotions(piece, start, out);
        }
        // The run is 0 in variants without a pass limit: one test of local data per piece.
        let passes = self.consecutive_passes(piece.color);
        if passes > 0 && self.variant.rules.max_consecutive_passes.is_some_and(|limit| passes >= limit) {
            out.retain_from(start, |mv| !mv.is_pass());
        }
        if trapped {
            // A trapped piece may only leave by capturing.
            out.retain_from(start, |mv| self.is_capture(mv));
        }
    }

    /// The moves of a piece whose atoms are all hooks (`Motion::hooks_only`): those of
    /// `generate_atom` in the same order, with the same moves dropped as repeats, without the
    /// set. A square two hooks reach lies `a` squares along one hook's line `d` and `b` along
    /// the other's `e`; the hook that came first in the table reached it if its line was free
    /// for `b` squares and its turn there ran at least `a` squares, which it records.
    #[inline(never)]
    fn hooks(&self, sq: usize, color: Color, open: u8, atoms: &[Atom], out: &mut Vec<Move>) {
        const MOST: usize = 64;
        let g = &self.variant.geometry;
        let own = color_code(color);
        let step = |t: usize, d: usize| (t as isize + g.offset[d]) as usize;
        // Per direction of a hook already generated: the free squares of its line, and at each
        // of them how far each turn (0: `d + 2`, 1: `d + 6`) ran, its capture included.
        let mut done = 0u8;
        let mut free = [0usize; DIRECTION_COUNT];
        let mut turns = [[[0u8; MOST]; 2]; DIRECTION_COUNT];
        for &atom in atoms {
            let Atom::Hook { dir } = atom else { continue };
            let d = dir as usize;
            let (mut t, mut a) = (sq, 0);
            while open & (1 << d) != 0 && a < g.edge(sq, d) {
                t = step(t, d);
                a += 1;
                let c = self.color_code_at(t);
                if c != EMPTY {
                    if c != own {
                        out.push(Move::simple(sq as u16, t as u16, false));
                    }
                    break;
                }
                out.push(Move::simple(sq as u16, t as u16, false));
                free[d] = a;
                for (side, e) in [(d + 2) % DIRECTION_COUNT, (d + 6) % DIRECTION_COUNT].into_iter().enumerate() {
                    // The earlier hook along `e` turned towards `d` on its side `back`.
                    let earlier = done & (1 << e) != 0;
                    let back = usize::from((e + 2) % DIRECTION_COUNT != d);
                    let (mut x, mut reach) = (t, 0);
                    for b in 1..=g.edge(t, e) {
                        x = step(x, e);
                        let cx = self.color_code_at(x);
                        if cx == own {
                            break;
                        }
                        reach = b;
                        if !(earlier && b <= free[e] && a <= turns[e][back][b] as usize) {
                            out.push(Move::simple(sq as u16, x as u16, false));
                        }
                        if cx != EMPTY {
                            break;
                        }
                    }
                    turns[d][side][a] = reach as u8;
                }
            }
            done |= 1 << d;
        }
    }

    /// The moves of a plain slider (`Motion::plain_slider`; `open`: the directions whose first
    /// square is on the board and not a friend's). The same moves in the same order as
    /// `generate_atom`, without its dispatch and deduplication.
    #[inline(always)]
    fn slides(&self, sq: usize, color: Color, open: u8, motion: &Motion, out: &mut Vec<Move>) {
        let g = &self.variant.geometry;
        let own = color_code(color);
        let bits = &motion.slide_bits[color.index()];
        // The open slides are taken in table order from a mask, not tested one by one: which
        // directions are open changes from piece to piece, and a branch per slide would be
        // mispredicted at random.
        let mut slides = open_slides(bits, open);
        while slides != 0 {
            let i = slides.trailing_zeros() as usize;
            slides &= slides - 1;
            let (d, max) = (bits[i].trailing_zeros() as usize, motion.slide_max[i]);
            let mut t = (sq as isize + g.offset[d]) as usize;
            out.push(Move::simple(sq as u16, t as u16, false));
            if max == 1 || self.color_code_at(t) != EMPTY {
                continue;
            }
            for _ in 1..g.edge(sq, d).min(max as usize) {
                t = (t as isize + g.offset[d]) as usize;
                let c = self.color_code_at(t);
                if c != own {
                    out.push(Move::simple(sq as u16, t as u16, false));
                }
                if c != EMPTY {
                    break;
                }
            }
        }
    }

    /// The moves of a piece whose atoms are all slides and jumps (`Motion::rays_only`), in
    /// `generate_atom`'s order: ray by ray, each square from near to far. Only rays along one
    /// line can reach the same square, so a ray gives the squares (bits of distances) no
    /// earlier ray along its line gave, instead of consulting a set of squares.
    /// `open`: the directions whose first square is on the board and not a friend's.
    #[inline(never)]
    fn rays(&self, sq: usize, color: Color, open: u8, rays: &[Ray], out: &mut Vec<Move>) {
        let g = &self.variant.geometry;
        let own = color_code(color);
        let mut given = [0u64; DIRECTION_COUNT];
        for &Ray { dir, k, extra } in rays {
            let (d, k) = (dir as usize, k as usize);
            // Most rays of a crowded board end on their first square.
            if k == 1 && open & (1 << d) == 0 {
                continue;
            }
            let edge = g.edge(sq, d);
            if k > edge {
                continue;
            }
            let step = g.offset[d];
            let mut t = sq as isize + step * k as isize;
            let mut reached = 0u64;
            for distance in k..=edge.min(k + extra as usize) {
                let c = self.color_code_at(t as usize);
                if c != own {
                    reached |= 1 << distance;
                }
                if c != EMPTY {
                    break;
                }
                t += step;
            }
            let mut fresh = reached & !given[d];
            given[d] |= reached;
            while fresh != 0 {
                let to = sq as isize + step * fresh.trailing_zeros() as isize;
                out.push(Move::simple(sq as u16, to as u16, false));
                fresh &= fresh - 1;
            }
        }
    }

    /// `farpromote`: each non-capturing move to the piece's furthest rank comes twice,
    /// promoting (`Move::promote`) and not (a capture there promotes anyway, by the capture
    /// rule).
    #[inline(never)]
    fn offer_far_promotions(&self, piece: Piece, start: usize, out: &mut Vec<Move>) {
        for i in start..out.len() {
            if self.far_promotion_offered(piece, out[i]) {
                out.push(out[i].with_promotion(true));
            }
        }
    }

    /// Whether `mv` of `piece` may promote by `farpromote`: an unpromoted such piece moving
    /// to its furthest rank without capturing.
    fn far_promotion_offered(&self, piece: Piece, mv: Move) -> bool {
        self.variant.table.get(piece.kind).far_promotion
            && !piece.promoted
            && self.variant.geometry.rank_from_front(mv.to as usize, piece.color) == 0
            && !self.is_capture(mv)
    }

    /// `offer_promotions` for the moves of `piece` from `start` on, when its type may be offered
    /// promotion in the variant's zone and it has not promoted (one inline test for the rest).
    #[inline(always)]
    fn offer_zone_promotions(&self, sq: usize, piece: Piece, motion: &Motion, start: usize, out: &mut Vec<Move>) {
        if motion.zone_promotion && !piece.promoted {
            if let Some(zone) = self.variant.rules.zone() {
                self.offer_promotions(sq, piece, zone, start, out);
            }
        }
    }

    /// Promotion in a zone: each of the piece's moves (from `start` in `out`) that may promote
    /// is offered twice, declining and promoting (`Move::promote`), or once, promoting, where
    /// the piece would otherwise be stuck for good.
    #[inline(never)]
    fn offer_promotions(&self, sq: usize, piece: Piece, zone: &Zone, start: usize, out: &mut Vec<Move>) {
        if piece.promoted || self.variant.table.get(piece.kind).promotes_to.is_none() {
            return;
        }
        let test = self.zone_test(piece, zone, sq);
        let end = out.len();
        for i in start..end {
            let steps = &out[start..end];
            match self.promotion_offer(&test, out[i], || steps) {
                Offer::Forced => out[i] = out[i].with_promotion(true),
                Offer::Optional => out.push(out[i].with_promotion(true)),
                Offer::None => {}
            }
        }
    }

    /// What the zone rule needs of a piece standing on `from`, found once for all its moves.
    fn zone_test(&self, piece: Piece, zone: &Zone, from: usize) -> ZoneTest {
        let depth = zone.depth as usize;
        ZoneTest {
            color: piece.color,
            depth,
            trigger: zone.trigger,
            dead_ends: dead_ends(&self.variant).get(piece.kind as usize).copied().unwrap_or(0),
            from_in_zone: self.variant.geometry.rank_from_front(from, piece.color) < depth,
        }
    }

    /// Whether a move of a piece (unpromoted, of a promoting type; `test` from `zone_test`) may
    /// or must promote under the zone rule: it must where the piece would be stuck for good
    /// (`dead_ends`). The squares a move passes through count as well as its end
    /// (seed 004, lines 148-150: a lion next to the zone promotes with igui, or a pass, into the
    /// zone and back): the square it captures on the way, and for a pass an empty zone square
    /// next to it that the piece can step to (`piece_moves` gives the piece's moves; called
    /// only for passes).
    #[inline]
    pub(crate) fn promotion_offer<M: AsRef<[Move]>>(
        &self,
        test: &ZoneTest,
        mv: Move,
        piece_moves: impl FnOnce() -> M,
    ) -> Offer {
        let g = &self.variant.geometry;
        let in_zone = |sq: u16| sq != NO_SQUARE && g.rank_from_front(sq as usize, test.color) < test.depth;
        let to_rank = g.rank_from_front(mv.to as usize, test.color);
        if test.dead_ends & (1 << to_rank) != 0 {
            return Offer::Forced;
        }
        let path_in_zone = to_rank < test.depth
            || in_zone(mv.mid)
            || in_zone(mv.mid2())
            || (mv.is_pass() && {
                let (x, y) = g.xy(mv.from as usize);
                piece_moves().as_ref().iter().any(|m| {
                    let (tx, ty) = g.xy(m.to as usize);
                    m.mid == NO_SQUARE
                        && (tx - x).abs() <= 1
                        && (ty - y).abs() <= 1
                        && m.to != m.from
                        && self.at(m.to as usize).is_none()
                        && in_zone(m.to)
                })
            });
        // Written as the rule reads: entering the zone, or capturing with a start or path in it.
        #[allow(clippy::nonminimal_bool)]
        let may = match test.trigger {
            ZoneTrigger::Touch => test.from_in_zone || path_in_zone,
            ZoneTrigger::EnterOrCapture => {
                (!test.from_in_zone && path_in_zone) || ((test.from_in_zone || path_in_zone) && self.is_capture(mv))
            }
        };
        if may {
            Offer::Optional
        } else {
            Offer::None
        }
    }

    /// Whether `mv` is the declining twin of a move that may promote (written with `=`).
    pub fn declines_promotion(&self, mv: Move) -> bool {
        let Some(piece) = self.at(mv.from as usize) else { return false };
        if !mv.promote() && self.far_promotion_offered(piece, mv) {
            return true;
        }
        let Some(zone) = self.variant.rules.zone() else { return false };
        !mv.promote()
            && !piece.promoted
            && self.variant.table.get(piece.kind).promotes_to.is_some()
            && self.promotion_offer(&self.zone_test(piece, zone, mv.from as usize), mv, || {
                let mut moves = Vec::new();
                self.generate_from(mv.from as usize, &mut moves);
                moves
            }) == Offer::Optional
    }

    /// Whether `sq` may be entered by a piece of `color`: empty or an enemy.
    #[inline]
    fn enterable(&self, sq: usize, color: Color) -> bool {
        match self.at(sq) {
            None => true,
            Some(p) => p.color != color,
        }
    }

    /// One atom, its direction already absolute (`Atom::absolute`). The common atoms are
    /// generated inline; the rare powers are out-of-line calls, so this stays small enough to
    /// inline into `generate_from` (the hot loop).
    #[inline(always)]
    fn generate_atom(&self, sq: usize, color: Color, range_rank: u8, open: u8, atom: Atom, sink: &mut Sink) {
        let g = &self.variant.geometry;
        match atom {
            Atom::Slide { dir, max } => {
                if open & (1 << dir) != 0 {
                    if max == 1 {
                        // `open` says the square is on the board and empty or an enemy's.
                        sink.add((sq as isize + g.offset[dir as usize]) as usize, false);
                    } else {
                        self.slide(sq, dir as usize, max as usize, color, sink);
                    }
                }
            }
            Atom::Jump { dir, k, then } => {
                let d = dir as usize;
                let k = k as usize;
                if k > g.edge(sq, d) {
                    return;
                }
                let landing = (sq as isize + g.offset[d] * k as isize) as usize;
                match self.at(landing) {
                    None => {
                        sink.add(landing, false);
                        if then > 0 {
                            self.slide(landing, d, then as usize, color, sink);
                        }
                    }
                    Some(p) if p.color != color => sink.add(landing, false),
                    Some(_) => {}
                }
            }
            Atom::Leap { dx, dy } => {
                let (x, y) = g.xy(sq);
                if let Some(t) = g.square(x + dx as i32, y + dy as i32) {
                    if self.enterable(t, color) {
                        sink.add(t, false);
                    }
                }
            }
            Atom::Hop { dir, pieces } => {
                let mut passed = 0u8;
                self.walk(sq, dir as usize, |t, occupant| match occupant {
                    None => {
                        sink.add(t, false);
                        true
                    }
                    Some(p) => {
                        if p.color != color {
                            sink.add(t, false);
                        }
                        passed += 1;
                        passed <= pieces
                    }
                });
            }
            Atom::RangeCapture { dir } => self.rank_line(sq, dir as usize, color, range_rank, RankLine::Capture, sink),
            Atom::RangeJump { dir, pieces } => {
                let mut passed = 0u8;
                self.walk(sq, dir as usize, |t, occupant| match occupant {
                    None => {
                        if passed == 0 {
                            sink.add(t, false);
                        }
                        true
                    }
                    Some(p) => {
                        if p.color != color {
                            sink.add(t, false);
                        }
                        // It captures beyond at most `pieces` pieces, never stops beyond them.
                        passed = passed.saturating_add(1);
                        passed <= pieces
                    }
                });
            }
            Atom::Hook { dir } if open & (1 << dir) != 0 => {
                let d = dir as usize;
                self.walk(sq, d, |t, occupant| match occupant {
                    None => {
                        sink.add(t, false);
                        // Turn 90° either way here and range on.
                        self.slide(t, (d + 2) % 8, UNLIMITED as usize, color, sink);
                        self.slide(t, (d + 6) % 8, UNLIMITED as usize, color, sink);
                        true
                    }
                    Some(p) => {
                        if p.color != color {
                            sink.add(t, false);
                        }
                        false
                    }
                });
            }
            Atom::Hook { .. } => {}
            Atom::Lion => self.lion(sq, color, sink),
            Atom::LionLine { dir, reach, every_step } => {
                self.lion_line(sq, dir as usize, reach as usize, every_step, color, sink)
            }
            Atom::Teleport => self.teleport(sq, color, sink),
            Atom::RankJump { dir } => self.rank_line(sq, dir as usize, color, range_rank, RankLine::Jump, sink),
            Atom::RankHop { dir } => self.rank_line(sq, dir as usize, color, range_rank, RankLine::Hop, sink),
            Atom::Area { steps } => self.area(sq, steps as usize, color, sink),
            Atom::Double { dirs } => self.double(sq, dirs, color, sink),
            Atom::Igui => {
                for d in 0..8 {
                    if g.edge(sq, d) > 0 {
                        let a = (sq as isize + g.offset[d]) as usize;
                        if matches!(self.at(a), Some(p) if p.color != color) {
                            sink.add_with_mid(sq, a);
                        }
                    }
                }
            }
        }
    }

    /// Visits the squares from `sq` along absolute direction `d` to the board's edge, with their
    /// occupants, while `visit` returns true.
    #[inline(always)]
    fn walk(&self, sq: usize, d: usize, mut visit: impl FnMut(usize, Option<Piece>) -> bool) {
        let g = &self.variant.geometry;
        let mut t = sq as isize;
        for _ in 0..g.edge(sq, d) {
            t += g.offset[d];
            if !visit(t as usize, self.at(t as usize)) {
                return;
            }
        }
    }

    /// Up to `max` free squares from `sq` in absolute direction `d`, capturing at the first enemy.
    #[inline(always)]
    fn slide(&self, sq: usize, d: usize, max: usize, color: Color, sink: &mut Sink) {
        let g = &self.variant.geometry;
        let n = g.edge(sq, d).min(max);
        let own = color_code(color);
        let mut t = sq as isize;
        for _ in 0..n {
            t += g.offset[d];
            let c = self.color_code_at(t as usize);
            if c == EMPTY {
                sink.add(t as usize, false);
            } else {
                if c != own {
                    sink.add(t as usize, false);
                }
                return;
            }
        }
    }

    /// Lion power: every square within two king steps (steps and jumps), capturing an adjacent
    /// enemy first and then stepping on (double capture, or igui when stepping back), and a
    /// pass when an adjacent square is empty.
    fn lion(&self, sq: usize, color: Color, sink: &mut Sink) {
        let g = &self.variant.geometry;
        let (x, y) = g.xy(sq);
        let mut can_pass = false;
        for dy in -2..=2 {
            for dx in -2..=2 {
                if (dx, dy) == (0, 0) {
                    continue;
                }
                if let Some(t) = g.square(x + dx, y + dy) {
                    match self.at(t) {
                        None => {
                            sink.add(t, false);
                            can_pass |= dx.abs() <= 1 && dy.abs() <= 1;
                        }
                        Some(p) if p.color != color => sink.add(t, false),
                        Some(_) => {}
                    }
                }
            }
        }
        for &(adx, ady) in DELTAS.iter() {
            let Some(a) = g.square(x + adx, y + ady) else { continue };
            if !matches!(self.at(a), Some(p) if p.color != color) {
                continue;
            }
            // Capture on `a`, then a second step from `a` (back to `sq` is igui).
            for &(bdx, bdy) in DELTAS.iter() {
                let Some(t) = g.square(x + adx + bdx, y + ady + bdy) else { continue };
                if t == sq || self.enterable(t, color) {
                    sink.add_with_mid(t, a);
                }
            }
        }
        if can_pass {
            sink.add_with_mid(sq, NO_SQUARE as usize);
        }
    }

    /// A line that passes pieces of strictly lower rank than the mover's (`range_rank`): it never
    /// passes one of its own rank or higher, but may capture it.
    /// - `Capture` (`rangecap`, Taikyoku's range capture): it removes every piece it passes,
    ///   friend or foe, and may stop on any empty square or enemy on the way (a sweep);
    /// - `Jump` (`rankjump`, Tenjiku's range jump): the passed pieces stay; beyond the first
    ///   piece it only captures;
    /// - `Hop` (`rankhop`): `Jump` that may also stop on empty squares beyond.
    #[inline(never)]
    fn rank_line(&self, sq: usize, d: usize, color: Color, range_rank: u8, kind: RankLine, sink: &mut Sink) {
        let table = &self.variant.table;
        let sweeps = kind == RankLine::Capture;
        let stops_beyond = kind != RankLine::Jump;
        let mut passed = false;
        self.walk(sq, d, |t, occupant| match occupant {
            None => {
                if !passed || stops_beyond {
                    sink.add(t, passed && sweeps);
                }
                true
            }
            Some(p) => {
                if p.color != color {
                    sink.add(t, passed && sweeps);
                }
                passed = true;
                // Only pieces of strictly lower rank (a larger number) can be passed.
                table.motion_of(p.kind).range_rank > range_rank
            }
        });
    }

    /// Two steps along the directions of `dirs` (absolute), capturing on either (`double`).
    #[inline(never)]
    fn double(&self, sq: usize, dirs: u8, color: Color, sink: &mut Sink) {
        let g = &self.variant.geometry;
        for d1 in (0..8).filter(|d| dirs & (1 << d) != 0) {
            if g.edge(sq, d1) == 0 {
                continue;
            }
            let s1 = (sq as isize + g.offset[d1]) as usize;
            let first = self.at(s1);
            if matches!(first, Some(p) if p.color == color) {
                continue;
            }
            sink.add(s1, false);
            let captured = first.is_some();
            for d2 in (0..8).filter(|d| dirs & (1 << d) != 0) {
                if g.edge(s1, d2) == 0 {
                    continue;
                }
                let s2 = (s1 as isize + g.offset[d2]) as usize;
                let mid = if captured { s1 as u16 } else { NO_SQUARE };
                if s2 == sq {
                    sink.add_with_mids(sq, mid, NO_SQUARE); // igui, or a pass
                } else if self.enterable(s2, color) {
                    if captured {
                        sink.add_with_mids(s2, mid, NO_SQUARE);
                    } else {
                        sink.add(s2, false);
                    }
                }
            }
        }
    }

    /// Area move: up to `steps` king steps over empty squares in any directions, ending on any
    /// of them or capturing on the first enemy reached (which ends the move); coming back to
    /// its own square is a pass. Only where it ends matters, so a breadth-first search over
    /// the empty squares around it gives every move once.
    #[inline(never)]
    fn area(&self, sq: usize, steps: usize, color: Color, sink: &mut Sink) {
        let g = &self.variant.geometry;
        // A 9×9 box around the piece holds every path of up to 4 steps; each reached square is
        // kept with its index in the box, and the box index of a neighbour is a fixed offset.
        const SIDE: isize = 9;
        const CENTRE: usize = 4 * 9 + 4;
        let box_offset = DELTAS.map(|(dx, dy)| dy as isize * SIDE + dx as isize);
        let mut reached = [false; 81];
        reached[CENTRE] = true;
        // The squares reached at the last depth (empty ones: the move may go on from them).
        let mut frontier = [(0usize, 0usize); 81];
        let mut next = [(0usize, 0usize); 81];
        frontier[0] = (sq, CENTRE);
        let mut len = 1;
        let mut pass = false;
        for depth in 1..=steps {
            let mut next_len = 0;
            for &(from, cell) in &frontier[..len] {
                for d in 0..8 {
                    if g.edge(from, d) == 0 {
                        continue;
                    }
                    let t = (from as isize + g.offset[d]) as usize;
                    if t == sq {
                        pass |= depth >= 2;
                        continue;
                    }
                    let cell = (cell as isize + box_offset[d]) as usize;
                    if reached[cell] {
                        continue;
                    }
                    match self.color_code_at(t) {
                        EMPTY => {
                            reached[cell] = true;
                            sink.add(t, false);
                            next[next_len] = (t, cell);
                            next_len += 1;
                        }
                        c if c != color_code(color) => {
                            reached[cell] = true;
                            sink.add(t, false);
                        }
                        _ => {}
                    }
                }
            }
            std::mem::swap(&mut frontier, &mut next);
            len = next_len;
        }
        if pass {
            sink.add_with_mids(sq, NO_SQUARE, NO_SQUARE);
        }
    }

    /// Lion power along one line: with s1, s2, s3 the squares along `d`, jumps to each, igui
    /// and pass (via s1), a step on after capturing on s1 or s2, and the retreat s2 → s1.
    /// `every_step` (`lionline(D,n,n)`, Dai dai): any path of up to `reach` unit steps, each
    /// ending on an empty or enemy square and capturing it. Otherwise (`lionline(D,n)`,
    /// Taishin) two legs, the second only after a capture: s3 after capturing s1 jumps s2.
    /// A move is identified by its end and the squares it captures (docs/PIECE_TABLE.md).
    #[inline(never)]
    fn lion_line(&self, sq: usize, d: usize, reach: usize, every_step: bool, color: Color, sink: &mut Sink) {
        let g = &self.variant.geometry;
        let n = g.edge(sq, d).min(reach);
        if n == 0 {
            return;
        }
        let own = color_code(color);
        let s: [usize; 3] = std::array::from_fn(|i| (sq as isize + g.offset[d] * (i as isize + 1)) as usize);
        // Per square along the line: 0 off the line's reach, else its colour code.
        let code = |i: usize| if i < n { self.color_code_at(s[i]) } else { own };
        let enemy = |i: usize| i < n && code(i) != EMPTY && code(i) != own;
        let open = |i: usize| i < n && code(i) != own;
        let mid = |i: usize| s[i] as u16;
        // Ending on s1: a step; igui or pass; the retreat after capturing on s2.
        if open(0) {
            sink.add(s[0], false);
            if reach >= 3 && enemy(1) {
                sink.add_with_mids(s[0], mid(1), NO_SQUARE);
            }
        }
        if enemy(0) {
            sink.add_with_mids(sq, mid(0), NO_SQUARE);
        } else if code(0) == EMPTY {
            sink.add_with_mids(sq, NO_SQUARE, NO_SQUARE);
        }
        // Ending on s2: a jump, or a step through s1 capturing there.
        if open(1) {
            sink.add(s[1], false);
            if enemy(0) {
                sink.add_with_mids(s[1], mid(0), NO_SQUARE);
            }
        }
        // Ending on s3: a jump; through s2 capturing there; or three steps capturing on the way.
        if reach >= 3 && open(2) {
            sink.add(s[2], false);
            if enemy(1) {
                sink.add_with_mids(s[2], mid(1), NO_SQUARE);
            }
            if every_step && enemy(0) && open(1) {
                let second = if enemy(1) { mid(1) } else { NO_SQUARE };
                sink.add_with_mids(s[2], mid(0), second);
            } else if !every_step && enemy(0) {
                sink.add_with_mid(s[2], s[0]);
            }
        }
    }

    /// `teleport`: every empty or enemy square of the board, except an enemy royal that is
    /// protected, i.e. that a piece of its side could capture the mover on after the capture
    /// (seed 001, Taishin's emperor).
    #[inline(never)]
    fn teleport(&self, sq: usize, color: Color, sink: &mut Sink) {
        for t in 0..self.variant.geometry.size() {
            match self.at(t) {
                _ if t == sq => {}
                None => sink.add(t, false),
                Some(p) if p.color != color => {
                    if !(self.variant.table.get(p.kind).royal && self.protected_after(Move::new(sq, t))) {
                        sink.add(t, false);
                    }
                }
                Some(_) => {}
            }
        }
    }

    /// Whether the side whose piece `capture` takes could take the mover back on its square.
    /// A teleporting defender counts as able to (its own protection rule is not looked at:
    /// that would recurse, and a piece that reaches every square is read as protecting it).
    fn protected_after(&self, capture: Move) -> bool {
        let to = capture.to as usize;
        let Some(defender) = self.at(to).map(|p| p.color) else { return false };
        let mut after = self.scratch_copy();
        after.make(capture);
        let mut moves = Vec::with_capacity(256);
        let protected = after.squares_of(defender).any(|s| {
            let kind = after.at(s).expect("occupied").kind;
            if after.variant.table.motion_of(kind).teleports {
                return true;
            }
            moves.clear();
            after.generate_from(s, &mut moves);
            moves.iter().any(|&m| {
                let mut hit = false;
                after.for_each_capture(m, |c| hit |= c == to);
                hit
            })
        });
        protected
    }

    /// Whether `color` is in check: it has exactly one royal and the opponent could capture it
    /// with its next move. (Moving into check is legal; this is information, and the
    /// perpetual-check rule.)
    pub fn in_check(&self, color: Color) -> bool {
        self.sole_royal(color).is_some_and(|royal| self.attacks(color.opponent(), royal))
    }

    /// Whether any piece of `by` could capture on `sq` with its next move.
    pub fn attacks(&self, by: Color, sq: usize) -> bool {
        let mut moves = Vec::new();
        self.generate(by, &mut moves);
        moves.iter().any(|&m| self.captures_of(m).contains(&sq))
    }
}

#[cfg(test)]
mod tests {
    use super::{open_slides, Seen, Sink};
    use crate::geometry::Color;
    use crate::hash::splitmix64;
    use crate::position::{Move, Piece, Position, NO_SQUARE};
    use crate::table::Motion;
    use crate::variant::Variant;

    /// The general path's moves of the piece on `sq`: every atom through `generate_atom` with
    /// the directions `open` (all of them: none skipped), repeats dropped by the set.
    fn general_moves(pos: &Position, sq: usize, open: u8) -> Vec<Move> {
        let piece = pos.at(sq).unwrap();
        let motion = pos.variant.table.motion_of(piece.kind);
        let (mut out, mut seen) = (Vec::new(), Seen::new());
        let mut sink = Sink { out: &mut out, from: sq as u16, seen: Some(&mut seen), start: 0 };
        for &atom in pos.variant.table.absolute_atoms(motion, piece.color) {
            pos.generate_atom(sq, piece.color, motion.range_rank, open, atom, &mut sink);
        }
        out
    }

    /// Checks every piece of `pos` (both colours) whose motion `takes` a fast path: `fast`
    /// (given the square, colour, open directions and motion) against the general path, run
    /// with `general_open` of the open directions. Returns how many pieces it checked.
    fn check_fast_path(
        pos: &Position,
        context: &str,
        takes: impl Fn(&Motion) -> bool,
        general_open: impl Fn(u8) -> u8,
        fast: impl Fn(usize, Color, u8, &Motion) -> Vec<Move>,
    ) -> usize {
        let mut checked = 0;
        for color in Color::BOTH {
            for sq in pos.squares_of(color) {
                let piece = pos.at(sq).unwrap();
                let motion = pos.variant.table.motion_of(piece.kind);
                if !takes(motion) {
                    continue;
                }
                let open = pos.variant.geometry.neighbour_dirs(sq) & !pos.neighbours_of_color(sq, color);
                let name = &pos.variant.table.get(piece.kind).name;
                let general = general_moves(pos, sq, general_open(open));
                assert_eq!(
                    fast(sq, color, open, motion),
                    general,
                    "{context}: {name} on {}",
                    pos.variant.geometry.square_name(sq)
                );
                checked += 1;
            }
        }
        checked
    }

    /// Runs `check` every 150 plies of random games (seeds 1 to `seeds`, at most `stops` times
    /// each) in `variant`. Returns the sum of what it returned.
    fn along_random_games(
        variant: &std::sync::Arc<Variant>,
        seeds: u64,
        stops: usize,
        check: fn(&Position, &str) -> usize,
    ) -> usize {
        let mut checked = 0;
        for seed in 1..=seeds {
            let mut game = crate::game::Game::new(variant.clone());
            for _ in 0..stops {
                if crate::random::random_playout(&mut game, seed, 150).plies == 0 {
                    break;
                }
                checked += check(&game.position, &format!("{} seed {seed} ply {}", variant.name, game.plies()));
            }
        }
        checked
    }

    /// Checks every hooks-only piece of `pos`: `hooks` against the general path, no direction
    /// skipped.
    fn check_hooks(pos: &Position, context: &str) -> usize {
        check_fast_path(
            pos,
            context,
            |m| m.hooks_only,
            |_| 0xFF,
            |sq, color, open, motion| {
                let mut fast = Vec::new();
                pos.hooks(sq, color, open, pos.variant.table.absolute_atoms(motion, color), &mut fast);
                fast
            },
        )
    }

    #[test]
    fn open_slides_are_the_slides_whose_direction_is_open() {
        let mut seed = 5u64;
        for _ in 0..20_000 {
            // Up to eight slides in distinct directions, in any order, then zeros.
            seed = splitmix64(seed);
            let mut dirs: Vec<u8> = (0..8).collect();
            for i in (1..8).rev() {
                dirs.swap(i, (seed >> (3 * i)) as usize % (i + 1));
            }
            let n = (seed >> 40) as usize % 9;
            let mut bits = [0u8; 8];
            for (bit, &d) in bits.iter_mut().zip(&dirs[..n]) {
                *bit = 1 << d;
            }
            let open = (seed >> 48) as u8;
            let expected = (0..8).filter(|&i| open & bits[i] != 0).fold(0u8, |m, i| m | 1 << i);
            assert_eq!(open_slides(&bits, open), expected, "{bits:?} open {open:08b}");
        }
        assert_eq!(open_slides(&[1, 2, 4, 8, 16, 32, 64, 128], 0xFF), 0xFF);
        assert_eq!(open_slides(&[128, 1, 0, 0, 0, 0, 0, 0], 0x80), 0b01);
        assert_eq!(open_slides(&[0; 8], 0xFF), 0);
    }

    #[test]
    fn hooks_only_pieces_move_as_the_general_path() {
        let mut checked = 0;
        // Random games of every variant (and Dai dai's goblin without its step).
        for (name, options) in
            [("taikyoku", vec![]), ("daidai", vec!["long-nosed-goblin-no-step".to_string()]), ("taishin", vec![])]
        {
            let variant = Variant::load(name, &options).unwrap();
            checked += along_random_games(&variant, 3, 12, check_hooks);
        }
        // Open boards: hook movers, capricorns and goblins among a few scattered pieces, where
        // the quadrants two hooks share are wide.
        let variant = Variant::load("taikyoku", &[]).unwrap();
        let kinds: Vec<_> =
            ["HM", "CA", "LO", "P", "GG", "FL"].iter().map(|k| variant.table.lookup(k).unwrap()).collect();
        let mut r = 7u64;
        for board in 0..300 {
            let mut pos = Position::empty(variant.clone(), Color::Black);
            for i in 0..(4 + board % 40) {
                r = splitmix64(r);
                let kind = kinds[if i < 3 { i } else { (r >> 20) as usize % kinds.len() }];
                let color = if r >> 40 & 1 == 0 { Color::Black } else { Color::White };
                pos.put(r as usize % variant.geometry.size(), Piece { kind, origin: kind, color, promoted: false });
            }
            checked += check_hooks(&pos, &format!("open board {board}"));
        }
        assert!(checked > 1000, "only {checked} pieces checked");
    }

    /// Checks every slides-and-jumps piece of `pos` (`Motion::rays_only`): `rays` against the
    /// general path.
    fn check_rays(pos: &Position, context: &str) -> usize {
        check_fast_path(
            pos,
            context,
            |m| m.rays_only,
            |open| open,
            |sq, color, open, motion| {
                let mut fast = Vec::new();
                let rays = pos.variant.table.absolute_rays(motion, color);
                pos.rays(sq, color, open, rays, &mut fast);
                fast
            },
        )
    }

    #[test]
    fn slide_and_jump_pieces_move_as_the_general_path() {
        let mut checked = 0;
        for name in crate::variant::variant_names() {
            let variant = Variant::load(name, &[]).unwrap();
            checked += along_random_games(&variant, 2, 8, check_rays);
            // Open boards: each such type, of either colour, among a few scattered pieces, so
            // that its rays run long and rays along one line overlap.
            let kinds: Vec<_> =
                (0..variant.table.len() as u16).filter(|&k| variant.table.motion_of(k).rays_only).collect();
            assert!(!kinds.is_empty(), "{name} has pieces of slides and jumps");
            let mut r = 11u64;
            for (board, &kind) in kinds.iter().cycle().take(8 * kinds.len()).enumerate() {
                let mut pos = Position::empty(variant.clone(), Color::Black);
                let size = variant.geometry.size();
                for _ in 0..(board % 30) {
                    r = splitmix64(r);
                    let other = (r >> 24) as u16 % variant.table.len() as u16;
                    let color = if r >> 40 & 1 == 0 { Color::Black } else { Color::White };
                    pos.put(r as usize % size, Piece { kind: other, origin: other, color, promoted: false });
                }
                r = splitmix64(r);
                let color = if r >> 40 & 1 == 0 { Color::Black } else { Color::White };
                pos.put(r as usize % size, Piece { kind, origin: kind, color, promoted: false });
                checked += check_rays(&pos, &format!("{name} open board {board}"));
            }
        }
        assert!(checked > 1500, "only {checked} pieces checked");
    }

    /// An empty Taikyoku board with the given pieces: (square, key, colour).
    fn board(pieces: &[(&str, &str, Color)]) -> Position {
        let variant = Variant::load("taikyoku", &[]).unwrap();
        let mut pos = Position::empty(variant.clone(), Color::Black);
        for &(sq, key, color) in pieces {
            let kind = variant.table.lookup(key).unwrap();
            let sq = variant.geometry.parse_square(sq).unwrap();
            pos.put(sq, Piece { kind, origin: kind, color, promoted: false });
        }
        pos
    }

    fn moves(pos: &Position, sq: &str) -> Vec<Move> {
        let mut out = Vec::new();
        pos.generate_from(pos.variant.geometry.parse_square(sq).unwrap(), &mut out);
        out
    }

    fn targets(pos: &Position, sq: &str) -> Vec<String> {
        let mut t: Vec<String> =
            moves(pos, sq).iter().map(|m| pos.variant.geometry.square_name(m.to as usize)).collect();
        t.sort();
        t
    }

    /// A Dai dai board (17×17) with the given pieces.
    fn daidai(pieces: &[(&str, &str, Color)]) -> Position {
        let variant = Variant::load("daidai", &[]).unwrap();
        let mut pos = Position::empty(variant.clone(), Color::Black);
        for &(sq, key, color) in pieces {
            let kind = variant.table.lookup(key).unwrap();
            pos.put(variant.geometry.parse_square(sq).unwrap(), Piece { kind, origin: kind, color, promoted: false });
        }
        pos
    }

    #[test]
    fn lion_line_captures_on_every_step_of_the_line() {
        use Color::*;
        // The worked example of `lionline(D,n,n)` (docs/PIECE_TABLE.md): a black lion dog on 9i, white
        // pawns on 9h, 9g and 9f. Each forward move as (end, captured squares in order).
        let pos = daidai(&[("9i", "Lion dog", Black), ("9h", "P", White), ("9g", "P", White), ("9f", "P", White)]);
        let list = moves(&pos, "9i");
        let name = |sq: usize| pos.variant.geometry.square_name(sq);
        let mut forward: Vec<(String, Vec<String>)> = list
            .iter()
            .filter(|m| pos.captures_of(**m).iter().any(|&sq| ["9h", "9g", "9f"].contains(&name(sq).as_str())))
            .map(|&m| (name(m.to as usize), pos.captures_of(m).into_iter().map(name).collect()))
            .collect();
        forward.sort();
        let expected = [
            ("9f", vec!["9f"]),             // jump to the third square
            ("9f", vec!["9g", "9f"]),       // jump to the second, capture, step on
            ("9f", vec!["9h", "9g", "9f"]), // three steps, three captures
            ("9g", vec!["9g"]),             // jump to the second square
            ("9g", vec!["9h", "9g"]),       // two steps
            ("9h", vec!["9g", "9h"]),       // out two, back one
            ("9h", vec!["9h"]),             // a step
            ("9i", vec!["9h"]),             // igui
        ];
        let expected: Vec<(String, Vec<String>)> =
            expected.iter().map(|(to, c)| (to.to_string(), c.iter().map(|s| s.to_string()).collect())).collect();
        assert_eq!(forward, expected);
        // The other seven directions are empty: three plain moves each, and one pass.
        assert_eq!(list.len(), 8 + 21 + 1, "{list:?}");
        assert_eq!(list.iter().filter(|m| m.is_pass()).count(), 1);
        // A friend on the first square: no igui, no pass through it, no step, but the jumps.
        let pos = daidai(&[("9i", "Lion dog", Black), ("9h", "P", Black), ("9g", "P", White)]);
        let forward: Vec<Move> = moves(&pos, "9i")
            .into_iter()
            .filter(|m| {
                m.to != m.from && pos.variant.geometry.xy(m.to as usize).0 == pos.variant.geometry.xy(m.from as usize).0
            })
            .collect();
        let ends: Vec<String> =
            forward.iter().filter(|m| (m.to as usize) < (m.from as usize)).map(|m| name(m.to as usize)).collect();
        assert!(
            !ends.contains(&"9h".to_string()) && ends.contains(&"9g".to_string()) && ends.contains(&"9f".to_string()),
            "{ends:?}"
        );
    }

    /// A Taishin board (25×25) with the given pieces, `side` to move.
    fn taishin(side: Color, pieces: &[(&str, &str, Color)]) -> Position {
        let variant = Variant::load("taishin", &[]).unwrap();
        let mut pos = Position::empty(variant.clone(), side);
        for &(sq, key, color) in pieces {
            let kind = variant.table.lookup(key).unwrap();
            let piece = variant.table.placement(kind, false, color).unwrap();
            pos.put(variant.geometry.parse_square(sq).unwrap(), piece);
        }
        pos
    }

    /// (end, captured squares) of each move, sorted.
    fn effects(pos: &Position, list: &[Move]) -> Vec<(String, Vec<String>)> {
        let name = |sq: usize| pos.variant.geometry.square_name(sq);
        let mut out: Vec<(String, Vec<String>)> =
            list.iter().map(|&m| (name(m.to as usize), pos.captures_of(m).into_iter().map(name).collect())).collect();
        out.sort();
        out
    }

    fn owned(list: &[(&str, &[&str])]) -> Vec<(String, Vec<String>)> {
        list.iter().map(|(to, c)| (to.to_string(), c.iter().map(|s| s.to_string()).collect())).collect()
    }

    #[test]
    fn taishin_lion_dog_captures_at_most_twice() {
        use Color::*;
        // The same example for Taishin's `lionline(D,n)` (docs/PIECE_TABLE.md): white pawns on 9h, 9g, 9f.
        let pos = taishin(Black, &[("9i", "LD", Black), ("9h", "P", White), ("9g", "P", White), ("9f", "P", White)]);
        let list = moves(&pos, "9i");
        let forward: Vec<Move> = list.iter().copied().filter(|&m| pos.is_capture(m)).collect();
        assert_eq!(
            effects(&pos, &forward),
            owned(&[
                ("9f", &["9f"]),
                ("9f", &["9g", "9f"]),
                ("9f", &["9h", "9f"]), // take 9h, jump over 9g: the Dai dai version takes all three
                ("9g", &["9g"]),
                ("9g", &["9h", "9g"]),
                ("9h", &["9g", "9h"]),
                ("9h", &["9h"]),
                ("9i", &["9h"]),
            ])
        );
        assert_eq!(list.len(), 8 + 21 + 1, "{list:?}");
        // After capturing on the first square it may jump a friend on the second.
        let pos = taishin(Black, &[("9i", "LD", Black), ("9h", "P", White), ("9g", "P", Black)]);
        let ends = effects(&pos, &moves(&pos, "9i"));
        assert!(ends.contains(&("9f".to_string(), vec!["9h".to_string()])), "{ends:?}");
    }

    #[test]
    fn range_jump_over_at_most_two_pieces() {
        use Color::*;
        // Gaps note §2.3: a black great general on 13m; file 13 ahead: 13k a black pawn, 13i,
        // 13h and 13g white pawns.
        let pos = taishin(
            Black,
            &[("13m", "GG", Black), ("13k", "P", Black), ("13i", "P", White), ("13h", "P", White), ("13g", "P", White)],
        );
        let file: Vec<String> =
            targets(&pos, "13m").into_iter().filter(|t| t.starts_with("13") && t.as_str() < "13m").collect();
        assert_eq!(file, ["13h", "13i", "13l"]);
    }

    #[test]
    fn emperor_cannot_capture_a_protected_royal() {
        use Color::*;
        // Gaps note §2.4: a black emperor on 25y, a white king on 13b, a white pawn on 1a.
        let protected =
            taishin(Black, &[("25y", "Emperor", Black), ("13b", "K", White), ("13a", "G", White), ("1a", "P", White)]);
        let t = targets(&protected, "25y");
        assert!(t.contains(&"1a".to_string()) && t.contains(&"13a".to_string()) && !t.contains(&"13b".to_string()));
        // Every square but its own and the king's: 625 - 2.
        assert_eq!(t.len(), 623);
        // With the gold on 10a nothing protects the king: the emperor may take it.
        let open = taishin(Black, &[("25y", "Emperor", Black), ("13b", "K", White), ("10a", "G", White)]);
        assert!(targets(&open, "25y").contains(&"13b".to_string()));
        // The king is not in check from a protected position either.
        assert!(!protected.attacks(Black, protected.variant.geometry.parse_square("13b").unwrap()));
    }

    #[test]
    fn capturing_a_deva_or_dark_spirit_confers_its_type() {
        use Color::*;
        let kind_after = |mover: &str, promoted: bool, victims: &[(&str, &str)], to: &str| {
            let variant = Variant::load("taishin", &[]).unwrap();
            let mut pieces = vec![("13m", mover, Black)];
            pieces.extend(victims.iter().map(|&(sq, key)| (sq, key, White)));
            let mut pos = taishin(Black, &pieces);
            if promoted {
                let kind = variant.table.lookup(mover).unwrap();
                pos.put(
                    variant.geometry.parse_square("13m").unwrap(),
                    variant.table.placement(kind, true, Black).unwrap(),
                );
            }
            let g = &pos.variant.geometry;
            let (to, mids): (usize, Vec<usize>) =
                (g.parse_square(to).unwrap(), victims.iter().map(|(sq, _)| g.parse_square(sq).unwrap()).collect());
            let mv = moves(&pos, "13m")
                .into_iter()
                .find(|&m| m.to as usize == to && pos.captures_of(m).len() == mids.len())
                .expect("the capture is legal");
            assert!(pos.promotes(mv));
            pos.make(mv);
            assert_eq!(pos.hash(), pos.compute_hash());
            let p = pos.at(to).unwrap();
            (pos.variant.table.get(p.kind).name.clone(), p.promoted)
        };
        // An unpromoted rook takes a deva: a teaching king, not a dragon king.
        assert_eq!(kind_after("R", false, &[("13l", "DV")], "13l"), ("Teaching king".into(), true));
        // A dragon king (a promoted rook) takes a dark spirit: a divine dragon.
        assert_eq!(kind_after("R", true, &[("13l", "DS")], "13l"), ("Divine dragon".into(), true));
        // A lion takes a deva, then a dark spirit: the second capture decides.
        assert_eq!(kind_after("LN", false, &[("13l", "DV"), ("13k", "DS")], "13k"), ("Divine dragon".into(), true));
        // A king promotes as usual; a drunk elephant (it promotes to a prince) too.
        assert_eq!(kind_after("K", false, &[("13l", "DV")], "13l"), ("Emperor".into(), true));
        assert_eq!(kind_after("DE", false, &[("13l", "DV")], "13l"), ("Prince".into(), true));
    }

    #[test]
    fn pawn_may_decline_promotion_on_the_last_rank() {
        use Color::*;
        let pos = taishin(Black, &[("13b", "P", Black), ("5e", "K", White)]);
        let list = moves(&pos, "13b");
        assert_eq!(list.len(), 2);
        let written: Vec<String> = list.iter().map(|&m| pos.move_notation(m)).collect();
        assert_eq!(written, ["P-13a=", "P-13a+"]);
        for (mv, text) in list.iter().zip(&written) {
            assert_eq!(pos.parse_move(text), Ok(*mv));
        }
        assert!(pos.parse_move("P-13a").is_err(), "a bare move is ambiguous");
        // Declined, it stays a pawn with no moves; a capture there promotes, one move.
        let mut declined = pos.clone();
        declined.make(list[0]);
        assert!(moves(&declined, "13a").is_empty());
        let pos = taishin(Black, &[("13b", "P", Black), ("13a", "P", White)]);
        let list = moves(&pos, "13b");
        assert_eq!(list.len(), 1);
        assert!(pos.promotes(list[0]) && pos.move_notation(list[0]).ends_with('+'));
    }

    #[test]
    fn a_fourth_pass_in_a_row_is_not_legal() {
        use Color::*;
        let mut pos = taishin(Black, &[("13m", "LN", Black), ("1a", "K", White), ("25y", "K", Black)]);
        let pass = |pos: &Position| pos.legal_moves().into_iter().find(|m| m.is_pass());
        for n in 1..=3u8 {
            let mv = pass(&pos).expect("a pass");
            pos.make(mv);
            assert_eq!(pos.consecutive_passes(Black), n);
            assert_eq!(pos.hash(), pos.compute_hash());
            let text = pos.to_text();
            assert!(text.ends_with(&format!("passes={n},0")), "{text}");
            let back = Position::from_text(pos.variant.clone(), &text).unwrap();
            assert_eq!((back.hash(), back.to_text()), (pos.hash(), text));
            let white = pos.legal_moves().into_iter().find(|m| !m.is_pass()).unwrap();
            pos.make(white);
        }
        assert!(pass(&pos).is_none(), "the fourth pass");
        // Any other move starts the count again.
        let king = pos.variant.geometry.parse_square("25y").unwrap() as u16;
        let step = pos.legal_moves().into_iter().find(|m| m.from == king).unwrap();
        pos.make(step);
        assert_eq!(pos.consecutive_passes(Black), 0);
        pos.unmake();
        assert_eq!(pos.consecutive_passes(Black), 3);
        // The same board without the counter is a different position.
        assert!(Position::from_text(
            pos.variant.clone(),
            "25/25/25/25/25/25/25/25/25/25/25/25/25/25/25/25/25/25/25/25/25/25/25/25/25 b 1 passes=4,0"
        )
        .is_err());
    }

    #[test]
    fn slide_stops_before_a_friend_and_on_an_enemy() {
        use Color::*;
        // Lance on 18r: forward is towards rank a.
        let pos = board(&[("18r", "L", Black), ("18o", "P", Black)]);
        assert_eq!(targets(&pos, "18r"), ["18p", "18q"]);
        let pos = board(&[("18r", "L", Black), ("18o", "P", White)]);
        assert_eq!(targets(&pos, "18r"), ["18o", "18p", "18q"]);
        // White's lance goes the other way.
        let pos = board(&[("18r", "L", White), ("18u", "P", Black)]);
        assert_eq!(targets(&pos, "18r"), ["18s", "18t", "18u"]);
    }

    #[test]
    fn no_duplicates_for_overlapping_atoms() {
        // Hook mover: every square of the board but its own, each once.
        let pos = board(&[("18r", "HM", Color::Black)]);
        let list = moves(&pos, "18r");
        assert_eq!(list.len(), 36 * 36 - 1);
        let mut unique = list.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), list.len());
    }

    #[test]
    fn hop_passes_up_to_its_count() {
        use Color::*;
        // Teaching king: hop(all,3). Forward file 18: pieces on 18q, 18p, 18o, 18n.
        let pos = board(&[
            ("18r", "Teaching king", Black),
            ("18q", "P", Black),
            ("18p", "P", White),
            ("18o", "P", Black),
            ("18n", "P", White),
            ("18m", "P", White),
        ]);
        let t = targets(&pos, "18r");
        assert!(t.contains(&"18p".to_string()) && t.contains(&"18n".to_string()));
        assert!(!t.contains(&"18q".to_string()) && !t.contains(&"18o".to_string()));
        // After passing three pieces it may take the fourth but not pass it.
        assert!(!t.contains(&"18m".to_string()));
    }

    #[test]
    fn range_capture_respects_ranks() {
        use Color::*;
        // Great general (rank 1) flies over a vice general (rank 2), not over a king.
        let pos = board(&[("18r", "GG", Black), ("18p", "VG", White), ("18n", "P", Black), ("18k", "K", White)]);
        let list = moves(&pos, "18r");
        let to = |name: &str| pos.variant.geometry.parse_square(name).unwrap() as u16;
        let take_king = list.iter().find(|m| m.to == to("18k")).expect("captures the king by landing");
        assert!(take_king.sweep());
        assert_eq!(pos.captures_of(*take_king).len(), 3);
        assert!(!list.iter().any(|m| m.to == to("18j")));
        // A vice general may not fly over a great general.
        let pos = board(&[("18r", "VG", Black), ("17q", "GG", White), ("16p", "P", White)]);
        let t = targets(&pos, "18r");
        assert!(t.contains(&"17q".to_string()) && !t.contains(&"16p".to_string()));
    }

    #[test]
    fn lion_moves() {
        use Color::*;
        let pos = board(&[("18r", "LN", Black), ("18q", "P", White)]);
        let list = moves(&pos, "18r");
        let from = pos.variant.geometry.parse_square("18r").unwrap() as u16;
        let mid = pos.variant.geometry.parse_square("18q").unwrap() as u16;
        // 24 plain destinations, 1 pass, and 8 second steps after taking 18q (one is igui).
        assert_eq!(list.iter().filter(|m| m.mid == NO_SQUARE && m.to != from).count(), 24);
        assert!(list.iter().any(|m| m.is_pass()));
        assert_eq!(list.iter().filter(|m| m.mid == mid).count(), 8);
        assert!(list.iter().any(|m| m.is_igui() && m.mid == mid));
        // No pass when every neighbour is occupied.
        let mut crowded = vec![("18r", "LN", Black)];
        for sq in ["17q", "18q", "19q", "17r", "19r", "17s", "18s", "19s"] {
            crowded.push((sq, "P", Black));
        }
        assert!(!moves(&board(&crowded), "18r").iter().any(|m| m.is_pass()));
    }

    #[test]
    fn trapped_pieces_only_capture() {
        use Color::*;
        // Running wolf on Black's furthest rank: sideways moves only when they capture.
        let pos = board(&[("18a", "RW", Black), ("15a", "P", White)]);
        assert_eq!(targets(&pos, "18a"), ["15a"]);
        let pos = board(&[("18b", "RW", Black)]);
        assert!(targets(&pos, "18b").len() > 3);
    }
}
