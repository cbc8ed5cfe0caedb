//! `MoveState::check`: the state against one built from scratch for the same position, the
//! invariants of the module documentation checked field by field (the differential tests and
//! the fuzz target `move_state` call it after every move).

use super::{Mode, MoveState};
use crate::geometry::Color;
use crate::position::Position;

impl MoveState {
    /// Compares the state with one built from scratch for `pos`: `Err` names the first
    /// difference (the differential tests call this at every ply). A copy is settled first
    /// (invariant 8): the pieces put off are compared as computed.
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
        for sq in 0..this.tables.records.len() {
            let name = || pos.variant.geometry.square_name(sq);
            let (mine, theirs) = (&this.tables.records[sq], &fresh.tables.records[sq]);
            // Invariant 2.
            if mine.mode != theirs.mode {
                return Err(format!("{}: mode {:?}, fresh {:?}", name(), mine.mode, theirs.mode));
            }
            if mine.mode == Mode::Empty {
                continue;
            }
            let counts = |state| slots(state, sq, stride);
            // Invariants 4 and 6 (the hook box aside: a bound that may be wider than needed).
            let same = mine.program == theirs.program
                && mine.total == theirs.total
                && mine.reach == theirs.reach
                && mine.local == theirs.local
                && (mine.local == 0 || this.tables.local_cells[sq] == fresh.tables.local_cells[sq])
                && mine.band == theirs.band
                && this.tables.lists[sq] == fresh.tables.lists[sq]
                && this.tables.hook_counts.get(sq) == fresh.tables.hook_counts.get(sq)
                && mine.twin_from == theirs.twin_from
                && (mine.mode != Mode::Plain || {
                    let atoms = this.compiled.program(mine.program).slots;
                    counts(this)[..atoms] == counts(&fresh)[..atoms]
                        && (mine.twin_from == 0
                            || this.tables.twins[sq * stride..][..atoms] == fresh.tables.twins[sq * stride..][..atoms])
                });
            if !same {
                return Err(format!(
                    "{}: total {} reach {:?} local {} counts {:?}; fresh: total {} reach {:?} local {} counts {:?}",
                    name(),
                    mine.total,
                    mine.reach,
                    mine.local,
                    counts(this),
                    theirs.total,
                    theirs.reach,
                    theirs.local,
                    counts(&fresh),
                ));
            }
        }
        // Invariants 3, 5 and 6 (the sets of hook pieces and teleporters), and the pass flags.
        let rest = |state: &MoveState| {
            let tables = &state.tables;
            (
                tables.lines.clone(),
                tables.local_rows.clone(),
                tables.hooks.clone(),
                tables.volatile.clone(),
                tables.move_counts.clone(),
                tables.pass_blocked,
                tables.signs.clone(),
            )
        };
        if rest(this) != rest(&fresh) {
            return Err("line bits (occupancy, Black's, rank levels), local rows, hooks, teleporters, count trees, pass flags or sign index differ".into());
        }
        Ok(())
    }
}

/// The count slots of the square `sq` (`stride` of them).
fn slots(state: &MoveState, sq: usize, stride: usize) -> &[u8] {
    &state.tables.counts[sq * stride..(sq + 1) * stride]
}
