//! One atom of a piece's moves (`generate_atom`), and the lines the common atoms walk:
//! slides, hops, range jumps, hooks and the rank-limited lines (`rank_line`).

use super::sink::Sink;
use crate::geometry::Color;
use crate::position::{color_code, Piece, Position, EMPTY};
use crate::table::{Atom, UNLIMITED};

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

impl Position {
    /// Whether `sq` may be entered by a piece of `color`: empty or an enemy.
    #[inline]
    pub(super) fn enterable(&self, sq: usize, color: Color) -> bool {
        match self.at(sq) {
            None => true,
            Some(p) => p.color != color,
        }
    }

    /// One atom, its direction already absolute (`Atom::absolute`). The common atoms are
    /// generated inline; the rare powers are out-of-line calls, so this stays small enough to
    /// inline into `generate_from` (the hot loop).
    #[inline(always)]
    pub(super) fn generate_atom(&self, sq: usize, color: Color, range_rank: u8, open: u8, atom: Atom, sink: &mut Sink) {
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
}
