//! The one move generator: it reads each piece's atoms from the variant's table.
//!
//! Moves into check are legal in Taikyoku shogi, so the moves generated here are the legal
//! moves; only the trapped-piece rule filters them.
//!
//! The generator is a folder of concepts:
//! - this file: the entry points (`legal_moves`, `generate_from`, ...), the general path of one
//!   piece (`generate_piece`), and `in_check`;
//! - `sink`: how one piece's moves are collected (`Sink`, the squares `Seen`);
//! - `fast`: the whole-piece fast paths (plain sliders, hooks-only and rays-only pieces);
//! - `atoms`: one atom (`generate_atom`) and the lines it walks (slides, hops, rank lines);
//! - `powers`: the rare powers (lion, lion lines, double steps, area moves, teleport);
//! - `promotion`: the promotion offers (zone and furthest rank) and the types' dead ends.

mod atoms;
mod fast;
mod powers;
mod promotion;
mod sink;
#[cfg(test)]
mod tests;

pub use promotion::dead_ends;
pub(crate) use promotion::Offer;

use crate::geometry::Color;
use crate::position::{Move, Piece, Position};
use crate::table::{Atom, Motion, Trap};
use sink::{RetainFrom, Sink};

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

    /// The moves that the atoms of the piece on `sq` from atom `from` on give alone, in
    /// generation order, duplicates among them dropped: the moves they give in `generate_from`
    /// when no earlier atom reaches their squares (the incremental state counts a piece's last
    /// local powers this way). No promotion offers or filters.
    pub(crate) fn generate_from_atoms(&self, sq: usize, from: u8, out: &mut Vec<Move>) {
        let Some(piece) = self.at(sq) else { return };
        let motion = self.variant.table.motion_of(piece.kind);
        let atoms = &self.variant.table.absolute_atoms(motion, piece.color)[from as usize..];
        let open = self.variant.geometry.neighbour_dirs(sq) & !self.neighbours_of_color(sq, piece.color);
        Sink::with(out, sq, motion.overlapping, |sink| {
            self.atoms_into(sq, piece.color, motion.range_rank, open, atoms, sink)
        });
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
