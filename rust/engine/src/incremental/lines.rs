//! The per-line bits (`LineBits`) and the scans over them: a ray's first piece and count, a
//! walk's stop, the pieces between two squares. Every rank, file and diagonal is one 64-bit
//! word per kind of bit, so "the first piece along this direction" is one shift and one bit
//! scan (invariant 3 of the module documentation: the bits are the board's).

use super::MoveState;
use crate::geometry::{Color, DIRECTION_COUNT};
use crate::position::{Piece, Position};

/// What a count of a ray, walk or turn gives: its moves and the farthest square it read (a
/// distance from the piece along its line).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Count {
    pub(super) moves: u8,
    pub(super) reach: u8,
}

impl Count {
    /// Nothing read, no move (a ray that starts past the edge, a blocked leap).
    pub(super) const NONE: Count = Count { moves: 0, reach: 0 };
}

/// The bits of one line, together in one cache line (`Tables::lines`): a rank has bit x, a
/// file bit y, the diagonals (x + y and x - y constant) bit x.
// Speed: one record a line, one per square for the pieces (`PieceRecord`) and the squares'
// places (`SquareLines`): L1 data misses 2.03M → 1.42M in `playout 20000` (issue 13's
// fourth step).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(align(64))]
pub(super) struct LineBits {
    /// The squares with a piece.
    pub(super) occupied: u64,
    /// The squares with a Black piece (White's are the other occupied ones).
    pub(super) black: u64,
    /// The pieces that see through others (`Program::sees_through`): past the nearest piece
    /// on a line, only these can read a square.
    pub(super) through: u64,
    /// Per level of `Compiled::rank_levels`: the pieces a rank walker of that level stops on.
    pub(super) ranked: [u64; RANK_LEVELS],
}

/// Levels of `LineBits::ranked`: range ranks of the types with range captures, rank jumps or
/// rank hops (3 in the built-in variants; the walkers of further ranks keep lists).
pub(super) const RANK_LEVELS: usize = 5;

/// A square's place on one of its four lines (`SquareLines::places`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct LinePlace {
    /// Its line in `Tables::lines`.
    pub(super) line: u8,
    /// Its bit there.
    pub(super) bit: u8,
}

/// Per square, what the state's line scans read about it (`Compiled::square_lines`): 16 bytes,
/// four to a cache line.
// Speed: with the 32-byte `PieceRecord` and the 64-byte `LineBits`, L1 data misses 2.03M →
// 1.42M in `playout 20000` (issue 13's fourth step).
#[derive(Clone, Copy, Debug)]
#[repr(align(16))]
pub(super) struct SquareLines {
    /// Per orientation (`RANK`, `FILE`, `ANTI`, `DIAG`): its line in `Tables::lines` and its
    /// bit there.
    pub(super) places: [LinePlace; 4],
    /// Per direction: squares to the edge (`Geometry::edge`).
    pub(super) edge: [u8; DIRECTION_COUNT],
}

/// Line orientations for the occupancy bits: ranks, files, and the two diagonals.
pub(super) const RANK: usize = 0;
pub(super) const FILE: usize = 1;
pub(super) const ANTI: usize = 2;
pub(super) const DIAG: usize = 3;

/// The two directions along the lines of one orientation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct LineWays {
    pub(super) orientation: usize,
    /// The direction that runs up the lines' bits.
    pub(super) up: usize,
    /// The one that runs down.
    pub(super) down: usize,
}

/// Per orientation: the direction that runs up its lines' bits, and the one that runs down.
pub(super) const LINE_WAYS: [LineWays; 4] = [
    LineWays { orientation: FILE, up: 4, down: 0 },
    LineWays { orientation: ANTI, up: 1, down: 5 },
    LineWays { orientation: RANK, up: 2, down: 6 },
    LineWays { orientation: DIAG, up: 3, down: 7 },
];

/// The line a direction runs along.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct DirectionLine {
    pub(super) orientation: usize,
    /// Whether the direction runs up the line's bits.
    pub(super) ascending: bool,
}

/// Per direction: the orientation of its line, and whether the direction runs up its bits.
pub(super) const LINE: [DirectionLine; DIRECTION_COUNT] = {
    const fn way(orientation: usize, ascending: bool) -> DirectionLine {
        DirectionLine { orientation, ascending }
    }
    [
        way(FILE, false),
        way(ANTI, true),
        way(RANK, true),
        way(DIAG, true),
        way(FILE, true),
        way(ANTI, false),
        way(RANK, false),
        way(DIAG, false),
    ]
};

impl MoveState {
    /// A ray from `sq` along `d`: the square at distance `k` (if on the board and not `own`),
    /// then up to `extra` more while the squares are free, stopping on (and taking) an enemy.
    /// The first piece on the way is a bit scan of the line's occupancy bits.
    #[inline(always)]
    pub(super) fn ray(&self, pos: &Position, sq: usize, d: usize, k: usize, extra: usize, own: u8) -> Count {
        let g = &self.variant.geometry;
        let edge = self.edge(sq, d);
        if k > edge {
            return Count::NONE;
        }
        // It stops on its first piece, or on its last square, which is then empty: either way
        // it has the squares before and the one it stops on unless that holds a friend.
        // Speed: no branch on where the piece is (it changes from ray to ray); random play 5%
        // faster (issue 13's eighth step).
        let stop = self.nearest_in(sq, d, k, |l| l.occupied).min(k + (edge - k).min(extra));
        let to = (sq as isize + g.offset[d] * stop as isize) as usize;
        let moves = stop - k + usize::from(pos.color_code_at(to) != own);
        Count { moves: moves as u8, reach: stop as u8 }
    }

    /// The farthest square a walk from `sq` along `d` reads: the first piece `stop` picks, or
    /// the edge. It goes from piece to piece over the occupancy bits.
    #[inline]
    pub(super) fn walk_reach(&self, pos: &Position, sq: usize, d: usize, mut stop: impl FnMut(Piece) -> bool) -> u8 {
        let g = &self.variant.geometry;
        let edge = self.edge(sq, d);
        let mut k = 1;
        while k <= edge {
            let Some(at) = self.first_piece(sq, d, k) else { break };
            let to = (sq as isize + g.offset[d] * at as isize) as usize;
            if stop(pos.at(to).expect("the occupancy bits name a piece")) {
                return at as u8;
            }
            k = at + 1;
        }
        edge as u8
    }

    /// Squares from `sq` to the edge along `d` (`Geometry::edge`, from `Compiled::square_lines`).
    #[inline(always)]
    pub(super) fn edge(&self, sq: usize, d: usize) -> usize {
        self.compiled.square_lines[sq].edge[d] as usize
    }

    /// The distance from `sq` to the first piece along `d` at distance `k` or more
    /// (`k <= edge(sq, d)`), from the occupancy bits.
    #[inline(always)]
    pub(super) fn first_piece(&self, sq: usize, d: usize, k: usize) -> Option<usize> {
        self.first_in(sq, d, k, |l| l.occupied)
    }

    /// `first_piece` over the line bits that `bits` picks (occupancy, or a rank level).
    #[inline(always)]
    pub(super) fn first_in(&self, sq: usize, d: usize, k: usize, bits: impl Fn(&LineBits) -> u64) -> Option<usize> {
        let at = self.nearest_in(sq, d, k, bits);
        (at - k < u64::BITS as usize).then_some(at)
    }

    /// `first_in`'s distance, or 64 more than `k` where there is no piece (past every edge).
    // Speed: the scans up and down the line's bits are both made and one is taken: which way
    // a direction runs changes from atom to atom, and a branch on it went either way at random
    // (part of the eighth step's 5%).
    #[inline(always)]
    pub(super) fn nearest_in(&self, sq: usize, d: usize, k: usize, bits: impl Fn(&LineBits) -> u64) -> usize {
        let DirectionLine { orientation, ascending } = LINE[d];
        let LinePlace { line, bit } = self.compiled.square_lines[sq].places[orientation];
        let (bits, at) = (bits(&self.tables.lines[line as usize]), bit as usize);
        // Up from bit `at + k`, or down from bit `at - k` (the shift of the way not taken may
        // be out of range: it wraps, and its scan is dropped).
        let up = bits.wrapping_shr((at + k) as u32).trailing_zeros();
        let down = bits.wrapping_shl((63 + k).wrapping_sub(at) as u32).leading_zeros();
        k + if ascending { up } else { down } as usize
    }

    /// How many of the squares at distances `1..=far` from `sq` along `d` are set in the line
    /// bits that `bits` picks.
    #[inline(always)]
    pub(super) fn count_in(&self, sq: usize, d: usize, far: usize, bits: impl Fn(&LineBits) -> u64) -> usize {
        let DirectionLine { orientation, ascending } = LINE[d];
        let LinePlace { line, bit } = self.compiled.square_lines[sq].places[orientation];
        let (bits, at) = (bits(&self.tables.lines[line as usize]), bit as usize);
        let run = (1u64 << far) - 1;
        let mask = if ascending { run << (at + 1) } else { run << (at - far) };
        (bits & mask).count_ones() as usize
    }

    /// Sets `sq` in the line bits of its four lines (occupancy, Black's, rank levels) for
    /// `piece`, or clears it.
    pub(super) fn set_line_bits(&mut self, sq: usize, piece: Option<Piece>) {
        let compiled = &*self.compiled;
        let ranked = piece.map_or(0, |p| compiled.rank_masks[p.kind as usize]);
        for &LinePlace { line, bit } in &compiled.square_lines[sq].places {
            let (line, bit) = (&mut self.tables.lines[line as usize], 1u64 << bit);
            let set = |bits: &mut u64, on: bool| *bits = if on { *bits | bit } else { *bits & !bit };
            set(&mut line.occupied, piece.is_some());
            set(&mut line.black, piece.is_some_and(|p| p.color == Color::Black));
            for (l, bits) in line.ranked.iter_mut().enumerate().take(compiled.rank_levels.len()) {
                set(bits, ranked & 1 << l != 0);
            }
        }
    }

    /// Sets or clears `sq` in the see-through bits of its four lines.
    pub(super) fn set_through_bits(&mut self, sq: usize, sees_through: bool) {
        let SquareLines { places, .. } = &self.compiled.square_lines[sq];
        for &LinePlace { line, bit } in places {
            let through = &mut self.tables.lines[line as usize].through;
            *through = if sees_through { *through | 1 << bit } else { *through & !(1 << bit) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{DirectionLine, LineWays, LINE, LINE_WAYS};
    use crate::geometry::DIRECTION_COUNT;
    use crate::incremental::MoveState;
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
                            let walked = (k..=edge)
                                .find(|&m| pos.at((sq as isize + g.offset[d] * m as isize) as usize).is_some());
                            assert_eq!(
                                state.first_piece(sq, d, k),
                                walked,
                                "{name} square {sq} direction {d} from {k}"
                            );
                            let nearest = state.nearest_in(sq, d, k, |l| l.occupied);
                            assert_eq!(nearest, walked.unwrap_or(k + 64), "{name} square {sq} direction {d} from {k}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_line_ways_are_the_directions_of_each_line() {
        for LineWays { orientation, up, down } in LINE_WAYS {
            assert_eq!(
                (LINE[up], LINE[down]),
                (DirectionLine { orientation, ascending: true }, DirectionLine { orientation, ascending: false })
            );
        }
    }
}
