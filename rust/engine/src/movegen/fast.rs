//! The whole-piece fast paths: the moves of a plain slider (`slides`), of a piece of hooks
//! alone (`hooks`) and of one of slides and jumps alone (`rays`), each the same moves in the
//! same order as the general path (`generate_atom` with a set of squares seen), without it.

use crate::geometry::{Color, DIRECTION_COUNT};
use crate::position::{color_code, Move, Position, EMPTY};
use crate::table::{Atom, Motion, Ray};

/// Bit `i` set where slide `i` of `bits` (`Motion::slide_bits`: one direction bit each, 0 past
/// the last) is open (its direction set in `open`), without a branch: the slides' bytes that
/// keep a bit of `open` are found eight at a time, and their top bits gathered into one byte.
#[inline(always)]
pub(super) fn open_slides(bits: &[u8; DIRECTION_COUNT], open: u8) -> u8 {
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    let kept = u64::from_le_bytes(*bits) & (open as u64 * 0x0101_0101_0101_0101);
    // The top bit of each byte that is not zero (adding 0x7F carries into it from the low seven
    // bits; the top bit itself is or-ed in).
    let nonzero = (((kept & LOW7) + LOW7) | kept) & !LOW7;
    // Byte i's top bit, shifted to bit 8i, lands in bit 56 + i of the product.
    ((nonzero >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56) as u8
}

impl Position {
    /// The moves of a piece whose atoms are all hooks (`Motion::hooks_only`): those of
    /// `generate_atom` in the same order, with the same moves dropped as repeats, without the
    /// set. A square two hooks reach lies `a` squares along one hook's line `d` and `b` along
    /// the other's `e`; the hook that came first in the table reached it if its line was free
    /// for `b` squares and its turn there ran at least `a` squares, which it records.
    #[inline(never)]
    pub(super) fn hooks(&self, sq: usize, color: Color, open: u8, atoms: &[Atom], out: &mut Vec<Move>) {
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
    pub(super) fn slides(&self, sq: usize, color: Color, open: u8, motion: &Motion, out: &mut Vec<Move>) {
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
    pub(super) fn rays(&self, sq: usize, color: Color, open: u8, rays: &[Ray], out: &mut Vec<Move>) {
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
}
