//! Listed pieces (module documentation, "Three kinds of piece"): every piece that is neither
//! plain nor keeps hook counts keeps the list the reference generator gives it, and records
//! what that generation read (invariant 6): the reach of its line atoms, the radius of its
//! local ones, its hooks' legs, and whether it reads the whole board (teleport).

use super::program::{local_read, Read, Stop};
use super::MoveState;
use crate::geometry::{Color, DIRECTION_COUNT};
use crate::position::{color_code, Piece, Position};
use crate::table::Atom;

impl MoveState {
    /// Generates a listed piece's moves with the reference and records what they read.
    pub(super) fn refresh_listed(&mut self, pos: &Position, sq: usize, piece: Piece) {
        let variant = &*pos.variant;
        let table = &variant.table;
        let motion = table.motion_of(piece.kind);
        let atoms = table.absolute_atoms(motion, piece.color);
        let mut list = std::mem::take(&mut self.tables.lists[sq]);
        pos.generate_from(sq, &mut list);
        self.tables.records[sq].total = list.len() as u16;
        self.tables.lists[sq] = list;
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
                    self.tables.records[sq].band[dir as usize] = self.walk_reach(pos, sq, dir as usize, |_| true);
                    self.tables.hooks.insert(sq);
                    None
                }
                Atom::Teleport => {
                    self.tables.volatile.insert(sq);
                    None
                }
                Atom::Leap { .. }
                | Atom::Lion
                | Atom::Double { .. }
                | Atom::LionLine { .. }
                | Atom::Igui
                | Atom::Area { .. } => {
                    if let Read::Local(r) = local_read(atom) {
                        local = local.max(r);
                    }
                    None
                }
            };
            if let Some(LineRead { dir, reach: hi }) = line {
                reach[dir as usize] = reach[dir as usize].max(hi);
            }
        }
        self.tables.records[sq].reach = reach;
        let cells = self.compiled.program(self.tables.records[sq].program).local;
        let black = piece.color == Color::Black;
        let area = if cells.area > 0 { self.area_box(pos, sq, cells.area, black).reads } else { 0 };
        self.set_local(sq, local, cells.fixed | area);
    }

    /// A line atom of `piece` on `sq`: its direction and the farthest square it reads.
    fn line_read(&self, pos: &Position, sq: usize, piece: Piece, atom: Atom) -> LineRead {
        let table = &self.variant.table;
        let own = color_code(piece.color);
        let (dir, reach) = match atom {
            Atom::Slide { dir, max } => (dir, self.ray(pos, sq, dir as usize, 1, max as usize - 1, own).reach),
            Atom::Jump { dir, k, then } => (dir, self.ray(pos, sq, dir as usize, k as usize, then as usize, own).reach),
            Atom::Hop { dir, pieces } | Atom::RangeJump { dir, pieces } => {
                (dir, self.walk_ends(sq, dir, Stop::After(pieces)).1 as u8)
            }
            Atom::RangeCapture { dir } | Atom::RankJump { dir } | Atom::RankHop { dir } => {
                let range_rank = table.motion_of(piece.kind).range_rank;
                (dir, self.walk_reach(pos, sq, dir as usize, |p| table.motion_of(p.kind).range_rank <= range_rank))
            }
            _ => unreachable!("not a line atom: {atom:?}"),
        };
        LineRead { dir, reach }
    }
}

/// What a line atom reads: along `dir`, up to the square `reach` away.
struct LineRead {
    dir: u8,
    reach: u8,
}
