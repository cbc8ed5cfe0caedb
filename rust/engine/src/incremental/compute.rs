//! A piece computed in full (`refresh`): its mode chosen (invariant 2 of the module
//! documentation), its moves counted or listed, its reads recorded (invariant 6), its total
//! passed to the count tree (invariant 5); and a piece taken off its square (`vacate`).

use super::hooks::{Board, HookCounts};
use super::lines::Count;
use super::{Mode, MoveState};
use crate::geometry::DIRECTION_COUNT;
use crate::position::{color_code, Move, Position};

impl MoveState {
    /// Computes the piece on `sq` in full (or clears the square).
    pub(super) fn refresh(&mut self, pos: &Position, sq: usize) {
        // The count tree gets the difference at the end, not the old total out and the new in.
        // Speed: one tree update a piece computed again instead of two (issue 27, item 5).
        let record = &self.tables.records[sq];
        let before = (record.mode != Mode::Empty).then(|| (record.color_index(), record.total as i32));
        let mut list = self.take_out(sq);
        let Some(piece) = pos.at(sq) else {
            self.tables.records[sq].mode = Mode::Empty;
            self.keep_spare(list);
            if let Some((color, total)) = before.filter(|&(_, total)| total != 0) {
                self.tables.move_counts[color].add(sq, -total);
            }
            return;
        };
        let program = piece.kind as u32 * 2 + piece.color.index() as u32;
        self.tables.records[sq].program = program;
        // The position's variant is the state's (`update`), and the compiled table the state's
        // own: no reference count to touch, no cache to test.
        // Speed: one of issue 13's third step's smaller changes; the held table, −2% instructions
        // (fourth step).
        let g = &pos.variant.geometry;
        let p = self.compiled.program(program);
        let (sees_through, local_radius, fixed_cells) = (p.sees_through, p.local_radius, p.local.fixed);
        let rank = g.rank_from_front(sq, piece.color);
        let plain = p.is_plain(piece, rank, g.height);
        let counts_hooks = p.hooks.is_some() && p.counts_hooks(piece, rank, g.height);
        // Where it counts its promotion twins (`twins.rs`): outside the zone, as `is_plain`
        // requires, the rank is at least the depth.
        let twin_from = match p.offers.and_then(|o| o.counted) {
            Some(depth) if plain && !piece.promoted => (rank + 1 - depth as usize) as u8,
            _ => 0,
        };
        if sees_through {
            self.set_through_bits(sq, true);
        }
        if counts_hooks {
            self.tables.records[sq].mode = Mode::Hooks;
            self.keep_spare(list);
            let mut counts = self.tables.spare_hooks.pop().unwrap_or_else(HookCounts::new);
            let mut band = [0; DIRECTION_COUNT];
            let hooks = self.compiled.program(program).hooks.as_ref().expect("a hook program");
            counts.compute(g, sq, hooks, &mut band, &HookBoard { state: self, pos, own: color_code(piece.color) });
            self.tables.records[sq].band = band;
            self.tables.records[sq].total = counts.total();
            self.tables.hook_box[sq] = counts.board_box(g, sq);
            self.tables.hook_counts[sq] = Some(counts);
            self.tables.hooks.insert(sq);
        } else {
            if plain {
                self.tables.records[sq].mode = Mode::Plain;
                self.tables.records[sq].twin_from = twin_from;
                let area = self.count_plain(pos, sq);
                // (`take_out` cleared the radius: most plain pieces read nothing locally.)
                if local_radius > 0 {
                    self.set_local(sq, local_radius, fixed_cells | area);
                }
            }
            if !plain || self.offered(sq, piece) {
                self.tables.records[sq].mode = Mode::Listed;
                if list.capacity() == 0 {
                    list = self.tables.spare.pop().unwrap_or_default();
                }
                self.tables.lists[sq] = list;
                self.refresh_listed(pos, sq, piece);
            } else {
                self.keep_spare(list);
            }
        }
        let (color, total) = (piece.color.index(), self.tables.records[sq].total as i32);
        match before {
            Some((old_color, old)) if old_color == color => {
                if total != old {
                    self.tables.move_counts[color].add(sq, total - old);
                }
            }
            _ => {
                if let Some((old_color, old)) = before.filter(|&(_, old)| old != 0) {
                    self.tables.move_counts[old_color].add(sq, -old);
                }
                if total != 0 {
                    self.tables.move_counts[color].add(sq, total);
                }
            }
        }
    }

    /// Takes the square's piece out of the state (stamped as computed in this epoch, no longer
    /// pending): its moves, reads and bits. Returns its list, emptied, for the next piece.
    pub(super) fn vacate(&mut self, sq: usize) -> Vec<Move> {
        let record = &self.tables.records[sq];
        if record.mode != Mode::Empty && record.total != 0 {
            self.tables.move_counts[record.color_index()].add(sq, -(record.total as i32));
        }
        self.take_out(sq)
    }

    /// `vacate`, leaving the square's count in the count tree (invariant 5 holds again once the
    /// caller has passed the difference).
    fn take_out(&mut self, sq: usize) -> Vec<Move> {
        let tables = &mut self.tables;
        tables.records[sq].stamp = tables.epoch;
        let (word, bit) = (sq / 64, 1u64 << (sq % 64));
        for c in 0..2 {
            if tables.pending[c][word] & bit != 0 {
                tables.pending[c][word] &= !bit;
                tables.pending_count[c] -= 1;
            }
        }
        if tables.records[sq].mode != Mode::Empty {
            tables.records[sq].total = 0;
            // Only pieces that see through set their bits (`refresh`).
            // Speed: see-through and local bits cleared only where set (issue 13's third step).
            if self.compiled.program(self.tables.records[sq].program).sees_through {
                self.set_through_bits(sq, false);
            }
        }
        let tables = &mut self.tables;
        tables.records[sq].reach = [0; DIRECTION_COUNT];
        tables.records[sq].band = [0; DIRECTION_COUNT];
        tables.records[sq].twin_from = 0;
        // The list goes with the piece: a square keeps no capacity once its piece leaves
        // (squares a hook mover passed over would otherwise hold hundreds of moves each).
        let mut list = std::mem::take(&mut tables.lists[sq]);
        list.clear();
        if let Some(counts) = tables.hook_counts.get_mut(sq).and_then(Option::take) {
            tables.spare_hooks.push(counts);
        }
        tables.hooks.remove(sq);
        tables.volatile.remove(sq);
        if tables.records[sq].local != 0 {
            self.set_local(sq, 0, 0);
        }
        list
    }

    /// Keeps a list that lost its piece for the next listed piece, up to a few.
    // Speed: a listed piece computed again reuses an allocation (not measured on its own).
    fn keep_spare(&mut self, list: Vec<Move>) {
        const SPARE: usize = 4;
        if list.capacity() > 0 && self.tables.spare.len() < SPARE {
            self.tables.spare.push(list);
        }
    }

    /// Sets the radius and the cells (`LocalCells`) of the local reads of the piece on `sq`,
    /// and its bit in `local_rows`.
    pub(super) fn set_local(&mut self, sq: usize, radius: u8, cells: u128) {
        self.tables.records[sq].local = radius;
        self.tables.local_cells[sq] = cells;
        let (x, y) = self.variant.geometry.xy(sq);
        if radius > 0 {
            self.tables.local_rows[y as usize] |= 1 << x;
        } else {
            self.tables.local_rows[y as usize] &= !(1 << x);
        }
    }
}

/// The board as a hook piece's counts read it (`hooks::Board`): the state's bit scans.
pub(super) struct HookBoard<'a> {
    pub(super) state: &'a MoveState,
    pub(super) pos: &'a Position,
    /// The hook piece's colour code.
    pub(super) own: u8,
}

impl Board for HookBoard<'_> {
    #[inline]
    fn turn(&self, from: usize, e: usize) -> Count {
        self.state.ray(self.pos, from, e, 1, usize::MAX, self.own)
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
