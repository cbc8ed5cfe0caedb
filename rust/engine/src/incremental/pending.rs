//! Pieces put off until their side is next to move (invariant 8 of the module documentation):
//! a listed piece (or a plain one whose count generates moves) of the side not to move whose
//! reads changed, and a listed or hook piece a move puts down, are computed by `settle`, so a
//! piece that two moves in a row touch is computed once.

use super::{Mode, MoveState};
use crate::geometry::Color;
use crate::position::Position;

impl MoveState {
    /// Computes the pieces of `color` whose computation was put off (`pending`): after this,
    /// `color`'s moves can be read. `update` does it for the side to move.
    pub fn settle(&mut self, pos: &Position, color: Color) {
        let c = color.index();
        if self.tables.pending_count[c] == 0 {
            return;
        }
        for w in 0..self.tables.pending[c].len() {
            while self.tables.pending[c][w] != 0 {
                self.refresh(pos, w * 64 + self.tables.pending[c][w].trailing_zeros() as usize);
            }
        }
        debug_assert_eq!(self.tables.pending_count[c], 0);
    }

    /// Whether every piece of `color` is computed (queries about `color` need it).
    pub(super) fn settled(&self, color: Color) -> bool {
        self.tables.pending_count[color.index()] == 0
    }

    /// Computes the piece on `sq` again now, or, for a listed piece (or a plain one whose
    /// count generates moves) of the side not to move, when its side is next to move
    /// (`pending`).
    #[inline]
    pub(super) fn touch(&mut self, pos: &Position, sq: usize) {
        let record = &self.tables.records[sq];
        let c = record.color_index();
        let waits = match record.mode {
            Mode::Listed => true,
            Mode::Plain => self.compiled.program(record.program).generates,
            _ => false,
        };
        if waits && c != pos.side_to_move().index() {
            let (word, bit) = (sq / 64, 1u64 << (sq % 64));
            if self.tables.pending[c][word] & bit == 0 {
                self.tables.pending[c][word] |= bit;
                self.tables.pending_count[c] += 1;
            }
        } else {
            self.refresh(pos, sq);
        }
    }

    /// A square the move changed: its new piece is computed now, or, when it keeps a list or
    /// hook counts and its side is not to move, with the other pending pieces when its side is
    /// next to move (a piece that just moved is often read by the reply, and is then computed
    /// once).
    // Speed: a listed piece waits, generated once when the reply reads it again: Taikyoku −5.4%
    // instructions (issue 13's second step); a hook piece too, 1–3% faster (ninth step); plain
    // pieces waiting were 3% slower (ninth step), so they are counted at once.
    pub(super) fn place(&mut self, pos: &Position, sq: usize) {
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
        self.tables.lists[sq] = list;
        self.tables.records[sq].program = program;
        self.tables.records[sq].mode = Mode::Listed;
        let c = piece.color.index();
        self.tables.pending[c][sq / 64] |= 1u64 << (sq % 64);
        self.tables.pending_count[c] += 1;
    }
}
