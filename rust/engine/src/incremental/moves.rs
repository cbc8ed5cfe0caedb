//! Reading the moves out of the state, in `Position::generate` order: how many (`count`), the
//! `i`-th (`nth`, through the count tree), all of them (`moves`, `for_each_move`). Every query
//! about a side needs it settled (invariant 8 of the module documentation).

use super::hooks::{HookCounts, HookProgram};
use super::program::PlainAtom;
use super::signs::SignIndex;
use super::{Mode, MoveState};
use crate::geometry::Color;
use crate::position::{Move, Position};

impl MoveState {
    /// Number of moves of `color`'s pieces (`Position::generate(color)` would give as many).
    #[inline]
    pub fn count(&self, color: Color) -> usize {
        assert!(self.settled(color), "{color}'s moves are not settled");
        self.tables.move_counts[color.index()].total() as usize
    }

    /// Whether `color`'s moves can be read now (every piece of that side computed).
    #[inline]
    pub fn is_settled(&self, color: Color) -> bool {
        self.settled(color)
    }

    /// Number of moves of the piece on `sq` (0 for an empty square).
    #[inline]
    pub fn moves_on(&self, sq: usize) -> usize {
        self.tables.records[sq].total as usize
    }

    /// The index in `Position::generate(color)` of the first move of `color`'s piece on `sq`.
    pub fn first_index(&self, color: Color, sq: usize) -> usize {
        debug_assert!(self.settled(color));
        self.tables.move_counts[color.index()].before(sq) as usize
    }

    /// The `index`-th move (`index < count(color)`) of `Position::generate(color)`.
    pub fn nth(&self, pos: &Position, color: Color, index: usize) -> Move {
        assert!(self.settled(color), "{color}'s moves are not settled");
        assert!(index < self.count(color), "move {index} of {}", self.count(color));
        let (sq, mut rest) = self.tables.move_counts[color.index()].find(index as u32);
        match self.tables.records[sq].mode {
            Mode::Listed => self.tables.lists[sq][rest as usize],
            Mode::Plain => {
                let compiled = &*self.compiled;
                let program = compiled.program(self.tables.records[sq].program);
                let atoms = program.plain.as_ref().expect("a plain program");
                let counts = &self.tables.counts[sq * compiled.stride..];
                let index = rest as usize;
                for (i, &atom) in atoms.iter().enumerate() {
                    let n = counts[i] as u32;
                    if rest < n {
                        return match atom {
                            PlainAtom::Ray { dir, .. } if program.overlaps & 1 << dir != 0 => {
                                self.fresh_move(pos, sq, atoms, i, dir, rest as usize)
                            }
                            PlainAtom::Area { .. } => reference_moves(pos, sq)[index],
                            PlainAtom::Powers { from } => {
                                let mut moves = Vec::with_capacity(32);
                                self.powers_moves(pos, sq, from, self.slid_cells(sq), &mut moves);
                                moves[rest as usize]
                            }
                            _ => self.plain_move(pos, sq, atom, rest as usize),
                        };
                    }
                    rest -= n;
                }
                // The promotion twins follow the moves (`twins.rs`).
                self.nth_twin(pos, sq, rest as usize)
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
    pub(super) fn hooks_of(&self, sq: usize) -> (&HookCounts, &HookProgram) {
        let counts = self.tables.hook_counts[sq].as_deref().expect("a hook piece keeps counts");
        (counts, self.compiled.program(self.tables.records[sq].program).hooks.as_ref().expect("a hook program"))
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
        match self.tables.records[sq].mode {
            Mode::Listed => out.extend_from_slice(&self.tables.lists[sq]),
            _ => self.for_each_move_from(pos, sq, |mv| out.push(mv)),
        }
    }

    /// Appends the moves of the other pieces of the side of the piece on `from` written with
    /// the same code, in square order: `Position::legal_moves_of_sign`, without a scan of every
    /// piece of the side (`SignIndex`).
    pub fn moves_of_sign(&self, pos: &Position, from: usize, out: &mut Vec<Move>) {
        let Some(piece) = pos.at(from) else { return };
        assert!(self.settled(piece.color), "{}'s moves are not settled", piece.color);
        let group = SignIndex::group_of(&self.variant.table, piece);
        self.tables.signs.for_each(group, |sq| {
            if sq != from {
                self.moves_from(pos, sq, out);
            }
        });
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
        match self.tables.records[sq].mode {
            Mode::Empty => {}
            Mode::Listed => self.tables.lists[sq].iter().for_each(|&mv| f(mv)),
            Mode::Hooks => {
                let (counts, hooks) = self.hooks_of(sq);
                counts.for_each(&self.variant.geometry, sq, hooks, |to| f(Move::simple(sq as u16, to as u16, false)));
            }
            Mode::Plain => {
                let compiled = &*self.compiled;
                let program = compiled.program(self.tables.records[sq].program);
                let atoms = program.plain.as_ref().expect("a plain program");
                let counts = &self.tables.counts[sq * compiled.stride..];
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
                        PlainAtom::Powers { from } => {
                            let mut moves = Vec::with_capacity(32);
                            self.powers_moves(pos, sq, from, self.slid_cells(sq), &mut moves);
                            moves.into_iter().for_each(&mut f);
                        }
                        // The last atom: the reference's moves after the earlier atoms'.
                        PlainAtom::Area { .. } => {
                            let before: usize = counts[..i].iter().map(|&c| c as usize).sum();
                            reference_moves(pos, sq)[before..].iter().for_each(|&mv| f(mv));
                        }
                    }
                }
                if self.tables.records[sq].twin_from != 0 {
                    self.for_each_twin(pos, sq, f);
                }
            }
        }
    }
}

/// The moves of the piece on `sq` as the reference generates them: for the area move of a plain
/// piece (`PlainAtom::Area`), whose order only the breadth-first walk gives. A random draw
/// lands there seldom (its share of the side's moves), and then pays one generation of the
/// piece.
fn reference_moves(pos: &Position, sq: usize) -> Vec<Move> {
    let mut moves = Vec::with_capacity(64);
    pos.generate_from(sq, &mut moves);
    moves
}
