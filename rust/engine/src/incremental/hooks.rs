//! Hook pieces' moves as counts, one per turn (issue 13): the second kind of piece of the
//! module documentation, whose counts are `compute`'s (invariant 4) and whose reads are its
//! legs' `band` and its `area` (invariant 6).
//!
// Speed: in place of the reference's list generated again whenever a square it read changed,
// random play 1.59× fewer instructions (issue 13's third step).
//!
//! A hook mover or a longnosed goblin has hundreds of moves, and a move elsewhere on the board
//! changes only a few of them: most changed squares lie on one or two of its turns, not on a
//! first leg. So such a piece keeps, per first leg, how many squares are free, and per turn
//! (a leg square and a side) how many moves it gives and how far it reads. A changed square
//! that a turn read walks that turn again; one on a leg walks the leg again, emptying the
//! turns of the squares it lost and walking those of the squares it gained.
//!
//! The moves are those of `Position::hooks`, in its order, with its rule for repeats: the
//! square `a` squares along hook `d` and `b` along the perpendicular hook `e` is reached by
//! `d`'s turn at `a` and by `e`'s turn at `b`; only the hook that comes first in the table
//! gives it. So each turn keeps its *kept* moves (those the earlier hook did not give), and a
//! turn of the earlier hook that grows or shrinks hands squares to or takes them from the
//! later hook's turns.

use super::lines::Count;
use crate::geometry::{Geometry, DELTAS, DIRECTION_COUNT};
use crate::position::EMPTY;
use crate::table::Atom;

/// Legs and turns are shorter than a board side, and boards are at most 64 squares wide (the
/// state's per-line bits).
const MOST: usize = 64;

/// A type's hooks for one colour (`Motion::hooks_only`).
#[derive(Clone, Debug)]
pub(super) struct HookProgram {
    /// The absolute directions of the first legs, in table order.
    dirs: Vec<u8>,
    /// Per direction: its place in `dirs` (`u8::MAX`: no hook that way).
    rank: [u8; DIRECTION_COUNT],
    /// Whether it has orthogonal hooks, and diagonal ones (`leg_and_turn` looks at those axes).
    axes: [bool; 2],
}

impl HookProgram {
    /// The hooks of `atoms` when all of them are hooks in different directions.
    pub(super) fn of(atoms: &[Atom], hooks_only: bool) -> Option<HookProgram> {
        if !hooks_only {
            return None;
        }
        let mut program = HookProgram { dirs: Vec::new(), rank: [u8::MAX; DIRECTION_COUNT], axes: [false; 2] };
        for &atom in atoms {
            let Atom::Hook { dir } = atom else { return None };
            program.rank[dir as usize] = program.dirs.len() as u8;
            program.dirs.push(dir);
            program.axes[dir as usize % 2] = true;
        }
        Some(program)
    }

    /// Whether there is a hook along `d`.
    #[inline]
    fn has(&self, d: usize) -> bool {
        self.rank[d] != u8::MAX
    }

    /// Whether `e` is a hook that comes before `d`'s.
    #[inline]
    fn earlier(&self, e: usize, d: usize) -> bool {
        self.rank[e] < self.rank[d]
    }
}

/// What the counts read of the board around a hook piece.
pub(super) trait Board {
    /// A turn (a slide) from the free square `from` along `e`: its moves and the squares it
    /// read. It stops before a friend of the piece (reading it) and on an enemy (taking it).
    fn turn(&self, from: usize, e: usize) -> Count;
    /// The colour code on `sq`.
    fn color_at(&self, sq: usize) -> u8;
    /// The piece's colour code.
    fn own(&self) -> u8;
}

/// The direction of turn `side` off a leg along `d`: side 0 turns to `d + 2`, side 1 to `d + 6`
/// (as `Position::hooks` takes them).
#[inline]
fn turn(d: usize, side: usize) -> usize {
    (d + 2 + 4 * side) % DIRECTION_COUNT
}

/// The farthest square turn `side` of leg square `a` of hook `d` reads, `r` along it, from
/// the piece.
#[inline]
fn reached(d: usize, side: usize, a: usize, r: u8) -> (i32, i32) {
    let ((dx, dy), (ex, ey)) = (DELTAS[d], DELTAS[turn(d, side)]);
    (dx * a as i32 + ex * r as i32, dy * a as i32 + ey * r as i32)
}

/// The direction of a step (`dx`, `dy` in -1..=1, not both 0).
#[inline]
fn direction_of(dx: i32, dy: i32) -> usize {
    const BY_STEP: [u8; 9] = [7, 0, 1, 6, u8::MAX, 2, 5, 4, 3];
    BY_STEP[((dy + 1) * 3 + dx + 1) as usize] as usize
}

/// A way to reach a square from a hook piece: `a >= 1` squares along the first leg `d`, then
/// `b >= 1` along its turn `side` (`turn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Way {
    d: usize,
    side: usize,
    a: usize,
    b: usize,
}

/// The ways to reach (`ax`, `ay`) from a piece (`Way`), at most four, over the orthogonal axes
/// and over the diagonal ones (a square of the piece's colour), each axis first; `axes`
/// (orthogonal, diagonal) picks which.
// Speed: found from the square's coordinates instead of projecting it onto every hook (part of
// issue 13's fifth step: random play 1.17× faster).
#[inline]
fn leg_and_turn(ax: i32, ay: i32, axes: [bool; 2]) -> ([Way; 4], usize) {
    let mut ways = [Way { d: 0, side: 0, a: 0, b: 0 }; 4];
    let mut count = 0;
    // Per family: the two coordinates and, for each, its direction when positive and negative.
    let (alpha, beta) = ((ax + ay) / 2, (ax - ay) / 2);
    let diagonal = axes[1] && (ax + ay) % 2 == 0;
    for ((u, u_dirs), (v, v_dirs), on) in
        [((ax, (2, 6)), (ay, (4, 0)), axes[0]), ((alpha, (3, 7)), (beta, (1, 5)), diagonal)]
    {
        if !on || u == 0 || v == 0 {
            continue;
        }
        let du = if u > 0 { u_dirs.0 } else { u_dirs.1 };
        let dv = if v > 0 { v_dirs.0 } else { v_dirs.1 };
        for (d, e, a, b) in [(du, dv, u, v), (dv, du, v, u)] {
            let side = usize::from(turn(d, 0) != e);
            debug_assert_eq!(turn(d, side), e, "the axes are perpendicular");
            ways[count] = Way { d, side, a: a.unsigned_abs() as usize, b: b.unsigned_abs() as usize };
            count += 1;
        }
    }
    (ways, count)
}

/// The side of `e`'s turns that goes along `d` (perpendicular to `e`).
#[inline]
fn side_along(e: usize, d: usize) -> usize {
    usize::from(turn(e, 0) != d)
}

#[inline]
fn step(g: &Geometry, sq: usize, d: usize, n: usize) -> usize {
    (sq as isize + g.offset[d] * n as isize) as usize
}

/// A hook piece's moves as counts (see the module documentation). Entries past a leg's free
/// squares are zero, so two states of the same position are equal (`area` aside).
#[derive(Clone, Debug)]
pub(super) struct HookCounts {
    /// A box around every square it reads, relative to the piece: (least x, most x, least
    /// y, most y). It may be larger than needed (turns that shrank leave it as it was until
    /// the piece is computed again); a changed square outside it changes nothing.
    area: [i32; 4],
    /// Per direction: the free squares of the first leg.
    leg: [u8; DIRECTION_COUNT],
    /// Per direction: 1 when the leg ends on an enemy (its last move, a capture).
    capture: [u8; DIRECTION_COUNT],
    /// Per direction: the moves of its hook (leg, kept turns, capture).
    sums: [u16; DIRECTION_COUNT],
    /// Per direction, side and leg square `a` (1-based): the turn's moves, captures included.
    moves: [[[u8; MOST]; 2]; DIRECTION_COUNT],
    /// The same: how far the turn read (one more than its moves where a friend stopped it).
    read: [[[u8; MOST]; 2]; DIRECTION_COUNT],
    /// The same: the turn's moves that an earlier hook did not give.
    kept: [[[u8; MOST]; 2]; DIRECTION_COUNT],
}

impl PartialEq for HookCounts {
    /// The counts, not `area` (a bound that may be wider than needed).
    fn eq(&self, other: &HookCounts) -> bool {
        (self.leg, self.capture, self.sums) == (other.leg, other.capture, other.sums)
            && (self.moves, self.read, self.kept) == (other.moves, other.read, other.kept)
    }
}

impl HookCounts {
    const ZERO: HookCounts = HookCounts {
        area: [0; 4],
        leg: [0; DIRECTION_COUNT],
        capture: [0; DIRECTION_COUNT],
        sums: [0; DIRECTION_COUNT],
        moves: [[[0; MOST]; 2]; DIRECTION_COUNT],
        read: [[[0; MOST]; 2]; DIRECTION_COUNT],
        kept: [[[0; MOST]; 2]; DIRECTION_COUNT],
    };

    pub(super) fn new() -> Box<HookCounts> {
        Box::new(HookCounts::ZERO)
    }

    /// Widens `area` to the square at (dx, dy) from the piece.
    #[inline]
    fn include(&mut self, (dx, dy): (i32, i32)) {
        self.area = [self.area[0].min(dx), self.area[1].max(dx), self.area[2].min(dy), self.area[3].max(dy)];
    }

    /// The box around what it reads, relative to the piece (`area`).
    pub(super) fn area(&self) -> [i32; 4] {
        self.area
    }

    /// `area` in board coordinates for the piece on `p` (least x, most x, least y, most y),
    /// clipped to the board: the state tests changes against it before looking at the counts.
    pub(super) fn board_box(&self, g: &Geometry, p: usize) -> [u8; 4] {
        let (px, py) = g.xy(p);
        let clip = |v: i32, most: usize| v.clamp(0, most as i32 - 1) as u8;
        let [x_lo, x_hi, y_lo, y_hi] = self.area;
        [clip(px + x_lo, g.width), clip(px + x_hi, g.width), clip(py + y_lo, g.height), clip(py + y_hi, g.height)]
    }

    /// The piece's number of moves.
    pub(super) fn total(&self) -> u16 {
        self.sums.iter().sum()
    }

    /// Computes everything for the piece on `sq`, and what each leg reads (`band`: up to the
    /// first piece, or the edge; 0 without a hook that way).
    pub(super) fn compute(
        &mut self,
        g: &Geometry,
        sq: usize,
        program: &HookProgram,
        band: &mut [u8; DIRECTION_COUNT],
        board: &impl Board,
    ) {
        // Back to zeros (the counts may have been another piece's, of another type): whole
        // tables at once.
        // Speed: one 3 KB fill, not 48 short `memset` calls; 2–4% faster (issue 13's ninth step).
        *self = HookCounts::ZERO;
        for &d in &program.dirs {
            let d = d as usize;
            let edge = g.edge(sq, d);
            let (mut a, mut capture, mut sum) = (0, 0, 0u16);
            while a < edge {
                let leg_sq = step(g, sq, d, a + 1);
                match board.color_at(leg_sq) {
                    EMPTY => {}
                    c => {
                        capture = u8::from(c != board.own());
                        break;
                    }
                }
                a += 1;
                for side in 0..2 {
                    let Count { moves: m, reach: r } = board.turn(leg_sq, turn(d, side));
                    self.moves[d][side][a] = m;
                    self.read[d][side][a] = r;
                    self.include(reached(d, side, a, r));
                    let k = self.kept_of(program, d, side, a);
                    self.kept[d][side][a] = k;
                    sum += k as u16;
                }
            }
            self.leg[d] = a as u8;
            self.capture[d] = capture;
            self.sums[d] = sum + a as u16 + capture as u16;
            band[d] = (a + 1).min(edge) as u8;
            let (dx, dy) = DELTAS[d];
            self.include((dx * band[d] as i32, dy * band[d] as i32));
        }
    }

    /// Turn `side` of leg square `a` of hook `d`: its moves `m`, and the lengths of the earlier
    /// hook's turns that could give its squares (at `b = 1..` up to `m` and that hook's leg; none
    /// without an earlier hook that way). Its square `b` was given earlier when `a <= shared[b - 1]`.
    #[inline]
    fn turn_overlap(&self, program: &HookProgram, d: usize, side: usize, a: usize) -> (usize, &[u8]) {
        let e = turn(d, side);
        let m = self.moves[d][side][a] as usize;
        let shared = if program.earlier(e, d) { m.min(self.leg[e] as usize) } else { 0 };
        (m, &self.moves[e][side_along(e, d)][1..=shared])
    }

    /// The squares `b` of a turn that the earlier hook did not give, in order.
    #[inline]
    fn kept_squares(&self, program: &HookProgram, d: usize, side: usize, a: usize) -> impl Iterator<Item = usize> + '_ {
        let (m, shared) = self.turn_overlap(program, d, side, a);
        (1..=m).filter(move |&b| shared.get(b - 1).is_none_or(|&reach| a > reach as usize))
    }

    /// The kept moves of a turn (`kept_squares`, counted without walking them).
    fn kept_of(&self, program: &HookProgram, d: usize, side: usize, a: usize) -> u8 {
        let (m, shared) = self.turn_overlap(program, d, side, a);
        m as u8 - shared.iter().map(|&reach| u8::from(a <= reach as usize)).sum::<u8>()
    }

    /// The square `s` changed: walks again the leg and the turns that read it, and returns
    /// the change in the piece's number of moves (`band` as for `compute`). The reads are the
    /// stored ones: from before the move, or from a walk on the board after it, and either way
    /// a leg or turn whose moves could change is walked again. The caller passes over the
    /// squares outside `area` (the state's `hook_box`): no leg or turn reads them.
    pub(super) fn changed(
        &mut self,
        g: &Geometry,
        p: usize,
        s: usize,
        program: &HookProgram,
        band: &mut [u8; DIRECTION_COUNT],
        board: &impl Board,
    ) -> i32 {
        let ((sx, sy), (px, py)) = (g.xy(s), g.xy(p));
        let (ax, ay) = (sx - px, sy - py);
        let mut delta = 0;
        // On a first leg: `s` lies along one direction, within the leg's band.
        if (ax == 0 || ay == 0 || ax.abs() == ay.abs()) && (ax, ay) != (0, 0) {
            let d = direction_of(ax.signum(), ay.signum());
            if program.has(d) && ax.abs().max(ay.abs()) <= band[d] as i32 {
                delta += self.set_leg(g, p, d, program, band, board);
            }
        }
        // On a turn: `s` lies `a` squares along a leg `d`, then `b` along its turn.
        let (ways, count) = leg_and_turn(ax, ay, program.axes);
        for &Way { d, side, a, b } in &ways[..count] {
            if !program.has(d) || a > self.leg[d] as usize || b > self.read[d][side][a] as usize {
                continue;
            }
            let Count { moves, reach } = board.turn(step(g, p, d, a), turn(d, side));
            delta += self.set_turn(program, d, side, a, moves, reach);
        }
        delta
    }

    /// Walks the leg along `d` again: the turns of leg squares it lost are emptied (handing
    /// their squares back to the later hook's turns) and those of squares it gained are walked.
    /// Returns the change in the piece's number of moves.
    fn set_leg(
        &mut self,
        g: &Geometry,
        p: usize,
        d: usize,
        program: &HookProgram,
        band: &mut [u8; DIRECTION_COUNT],
        board: &impl Board,
    ) -> i32 {
        // The first piece along the leg, or the edge (a slide's read).
        let first = board.turn(p, d).reach as usize;
        let stop = if first == 0 { EMPTY } else { board.color_at(step(g, p, d, first)) };
        let (leg, capture) = if stop == EMPTY { (first, 0) } else { (first - 1, u8::from(stop != board.own())) };
        let old = self.leg[d] as usize;
        let mut delta = 0;
        for a in leg + 1..=old {
            for side in 0..2 {
                delta += self.set_turn(program, d, side, a, 0, 0);
            }
        }
        for a in old + 1..=leg {
            let leg_sq = step(g, p, d, a);
            for side in 0..2 {
                let Count { moves, reach } = board.turn(leg_sq, turn(d, side));
                delta += self.set_turn(program, d, side, a, moves, reach);
            }
        }
        let moves = leg as i32 - old as i32 + capture as i32 - self.capture[d] as i32;
        self.sums[d] = (self.sums[d] as i32 + moves) as u16;
        (self.leg[d], self.capture[d]) = (leg as u8, capture);
        band[d] = (leg + 1).min(g.edge(p, d)) as u8;
        let (dx, dy) = DELTAS[d];
        self.include((dx * band[d] as i32, dy * band[d] as i32));
        delta + moves
    }

    /// Stores a turn walked again; returns the change in the piece's number of moves.
    fn set_turn(&mut self, program: &HookProgram, d: usize, side: usize, a: usize, m: u8, r: u8) -> i32 {
        let old = self.moves[d][side][a];
        self.moves[d][side][a] = m;
        self.read[d][side][a] = r;
        self.include(reached(d, side, a, r));
        let k = self.kept_of(program, d, side, a);
        let mut delta = k as i32 - self.kept[d][side][a] as i32;
        self.kept[d][side][a] = k;
        self.sums[d] = (self.sums[d] as i32 + delta) as u16;
        // The later hook's turns towards `d`, at its leg squares `b` between the old and new
        // length: the square `a` along `d` was given or is given by this turn now.
        let e = turn(d, side);
        if old != m && program.earlier(d, e) {
            let back = side_along(e, d);
            let (lo, hi) = (old.min(m) as usize, old.max(m) as usize);
            let mut gained = 0i32;
            for b in lo + 1..=hi.min(self.leg[e] as usize) {
                if a <= self.moves[e][back][b] as usize {
                    let change = if b <= m as usize { -1i32 } else { 1 };
                    self.kept[e][back][b] = (self.kept[e][back][b] as i32 + change) as u8;
                    gained += change;
                }
            }
            self.sums[e] = (self.sums[e] as i32 + gained) as u16;
            delta += gained;
        }
        delta
    }

    /// The destination of the piece's `index`-th move (`index < total()`), in
    /// `Position::hooks` order.
    pub(super) fn nth(&self, g: &Geometry, p: usize, program: &HookProgram, mut index: u32) -> usize {
        for &d in &program.dirs {
            let d = d as usize;
            if index >= self.sums[d] as u32 {
                index -= self.sums[d] as u32;
                continue;
            }
            for a in 1..=self.leg[d] as usize {
                if index == 0 {
                    return step(g, p, d, a);
                }
                index -= 1;
                for side in 0..2 {
                    let k = self.kept[d][side][a] as u32;
                    if index < k {
                        let b = self
                            .kept_squares(program, d, side, a)
                            .nth(index as usize)
                            .expect("kept counts its squares");
                        return step(g, step(g, p, d, a), turn(d, side), b);
                    }
                    index -= k;
                }
            }
            debug_assert!(index == 0 && self.capture[d] == 1);
            return step(g, p, d, self.leg[d] as usize + 1);
        }
        unreachable!("the index is below the total")
    }

    /// Calls `f` with the destination of every move, in order.
    pub(super) fn for_each(&self, g: &Geometry, p: usize, program: &HookProgram, mut f: impl FnMut(usize)) {
        for &d in &program.dirs {
            let d = d as usize;
            for a in 1..=self.leg[d] as usize {
                let leg_sq = step(g, p, d, a);
                f(leg_sq);
                for side in 0..2 {
                    self.kept_squares(program, d, side, a).for_each(|b| f(step(g, leg_sq, turn(d, side), b)));
                }
            }
            if self.capture[d] == 1 {
                f(step(g, p, d, self.leg[d] as usize + 1));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direction_of_names_each_step() {
        for (d, &(dx, dy)) in DELTAS.iter().enumerate() {
            assert_eq!(direction_of(dx, dy), d);
        }
    }

    /// `leg_and_turn` against the projections it replaced: every way to write (ax, ay) as `a`
    /// squares along a direction `d`, then `b` along a turn of `d`, found by trying them all.
    #[test]
    fn leg_and_turn_finds_every_way_and_only_those() {
        for axes in [[true, false], [false, true], [true, true]] {
            for ax in -12..=12 {
                for ay in -12..=12 {
                    let (ways, count) = leg_and_turn(ax, ay, axes);
                    let mut found: Vec<_> = ways[..count].to_vec();
                    let mut expected = Vec::new();
                    for d in (0..DIRECTION_COUNT).filter(|&d| axes[d % 2]) {
                        for side in 0..2 {
                            let ((dx, dy), (ex, ey)) = (DELTAS[d], DELTAS[turn(d, side)]);
                            for a in 1..=12i32 {
                                for b in 1..=12i32 {
                                    if (a * dx + b * ex, a * dy + b * ey) == (ax, ay) {
                                        expected.push(Way { d, side, a: a as usize, b: b as usize });
                                    }
                                }
                            }
                        }
                    }
                    found.sort_unstable();
                    expected.sort_unstable();
                    assert_eq!(found, expected, "({ax}, {ay}) over axes {axes:?}");
                }
            }
        }
    }
}
