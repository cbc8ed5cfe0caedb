//! The readers of a changed square, computed again (invariant 7 of the module documentation):
//! the pieces on its four lines whose reach gets there (the nearest each way, and past it only
//! those that see through others), the pieces with local reads around it, and the hook pieces
//! whose legs or turns read it.

use super::compute::HookBoard;
use super::lines::{LineBits, LinePlace, LineWays, LINE_WAYS};
use super::local_cells::LocalCells;
use super::{Mode, MoveState};
use crate::geometry::{Color, DELTAS, DIRECTION_COUNT};
use crate::position::{color_code, Position, EMPTY};

/// A piece that may have read a changed square: where it stands, and the direction from it
/// back towards the square.
#[derive(Clone, Copy)]
struct Reader {
    at: usize,
    back: usize,
}

impl MoveState {
    /// Computes again every piece that read `s` (see the module documentation).
    pub(super) fn refresh_readers(&mut self, pos: &Position, s: usize) {
        let g = &pos.variant.geometry;
        let (x, y) = g.xy(s);
        let (x, y) = (x as usize, y as usize);
        let h = g.height;
        // The state's own compiled table: no reference count to touch, no cache to test (as in
        // `refresh`).
        let compiled = &*self.compiled;
        let (places, local_max, has_hooks) = (compiled.square_lines[s].places, compiled.local_max, compiled.hooks);
        // Each way, the nearest piece, and past it only those that see through others: a
        // piece whose ray ran through a square that is occupied now but was empty before is
        // found from that square, itself a changed one.
        // Speed: the eight nearest are tested together (their records are read at once, and a
        // mask says which read `s`), then the pieces that see through, rare: the loads overlap
        // and eight branches that went either way become one loop; 2–4% faster random play
        // (issue 13's ninth step).
        let (mut nearest, mut reads) = ([Reader { at: 0, back: 0 }; 2 * LINE_WAYS.len()], 0u32);
        let (mut beyond, mut seen_through) = ([0u64; 2 * LINE_WAYS.len()], 0u32);
        for (n, LineWays { orientation, up, down }) in LINE_WAYS.into_iter().enumerate() {
            let LinePlace { line, bit } = places[orientation];
            let (line, at) = (line as usize, bit as usize);
            let LineBits { occupied, through, .. } = self.tables.lines[line];
            let above = occupied & !((2u64 << at) - 1);
            let below = occupied & ((1u64 << at) - 1);
            // Distances to the nearest piece each way (0, which no test passes, for none).
            let up_at = if above != 0 { above.trailing_zeros() as usize - at } else { 0 };
            let down_at = if below != 0 { at - (63 - below.leading_zeros() as usize) } else { 0 };
            for (k, walk, m) in [(2 * n, up, up_at), (2 * n + 1, down, down_at)] {
                let reader = Reader {
                    at: (s as isize + g.offset[walk] * m as isize) as usize,
                    back: (walk + 4) % DIRECTION_COUNT,
                };
                nearest[k] = reader;
                reads |= u32::from((m != 0) & self.read_back(reader.at, reader.back, m)) << k;
            }
            beyond[2 * n] = above & above.wrapping_sub(1) & through;
            beyond[2 * n + 1] = below & !(1u64 << (at - down_at)) & through;
            seen_through |= u32::from(beyond[2 * n] != 0) << (2 * n) | u32::from(beyond[2 * n + 1] != 0) << (2 * n + 1);
        }
        while reads != 0 {
            let Reader { at, back } = nearest[reads.trailing_zeros() as usize];
            reads &= reads - 1;
            self.reread(pos, at, back);
        }
        while seen_through != 0 {
            let k = seen_through.trailing_zeros() as usize;
            seen_through &= seen_through - 1;
            let LineWays { orientation, up, down } = LINE_WAYS[k / 2];
            self.read_along(
                pos,
                s,
                places[orientation].bit as usize,
                if k.is_multiple_of(2) { up } else { down },
                beyond[k],
            );
        }
        let r = local_max;
        if r > 0 {
            let (lo, hi) = (x.saturating_sub(r), (x + r).min(g.width - 1));
            let columns = (u64::MAX >> (63 - hi)) & !((1u64 << lo) - 1);
            for row in y.saturating_sub(r)..=(y + r).min(h - 1) {
                let mut bits = self.tables.local_rows[row] & columns;
                while bits != 0 {
                    let px = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let p = row * g.width + px;
                    let record = &self.tables.records[p];
                    if px.abs_diff(x).max(row.abs_diff(y)) <= record.local as usize
                        && record.stamp != self.tables.epoch
                        && LocalCells::reads(
                            self.tables.local_cells[p],
                            x as isize - px as isize,
                            y as isize - row as isize,
                        )
                    {
                        self.touch(pos, p);
                    }
                }
            }
        }
        if has_hooks {
            let mut hooks = self.tables.hooks.cursor();
            while let Some(p) = hooks.next(&self.tables.hooks) {
                if self.tables.records[p].stamp == self.tables.epoch {
                    continue;
                }
                if self.tables.records[p].mode == Mode::Hooks {
                    let [x_lo, x_hi, y_lo, y_hi] = self.tables.hook_box[p];
                    // Both ranges in one test without a branch each (unsigned differences).
                    // Speed: 1.4–1.7% less time in 1000-ply games (issue 13's fifth step).
                    let (x, y) = (x as u8, y as u8);
                    if (x.wrapping_sub(x_lo) <= x_hi - x_lo) & (y.wrapping_sub(y_lo) <= y_hi - y_lo) {
                        self.follow_hooks(pos, p, s);
                    }
                } else if self.in_band(pos, p, s) {
                    self.touch(pos, p);
                }
            }
        }
    }

    /// Computes again the pieces on the line bits `pieces` (of the line through `s`, where `s`
    /// is bit `at`), each found from `s` along `walk`, that read `s`: those whose reach back
    /// gets there. A plain piece counts that direction again.
    #[inline]
    fn read_along(&mut self, pos: &Position, s: usize, at: usize, walk: usize, mut pieces: u64) {
        let back = (walk + 4) % DIRECTION_COUNT;
        let step = self.variant.geometry.offset[walk];
        while pieces != 0 {
            let i = pieces.trailing_zeros() as usize;
            pieces &= pieces - 1;
            let m = i.abs_diff(at);
            let p = (s as isize + step * m as isize) as usize;
            if self.read_back(p, back, m) {
                self.reread(pos, p, back);
            }
        }
    }

    /// Whether the piece on `p` read the square `m` away along `back` and is not computed yet
    /// in this update.
    // Speed: without a branch: the readers' tests go either way at random (issue 13's ninth
    // step, with the eight nearest tested together).
    #[inline(always)]
    fn read_back(&self, p: usize, back: usize, m: usize) -> bool {
        let record = &self.tables.records[p];
        (record.reach[back] as usize >= m) & (record.stamp != self.tables.epoch)
    }

    /// The piece on `p` read a changed square along `back`: computes it again. A plain piece
    /// counts that direction again.
    #[inline]
    fn reread(&mut self, pos: &Position, p: usize, back: usize) {
        // (A pending piece is marked again: `touch` ignores it.)
        match self.tables.records[p].mode {
            Mode::Plain => {
                self.recount_direction(pos, p, back);
                let program = self.compiled.program(self.tables.records[p].program);
                if program.offers.is_some() {
                    if self.tables.records[p].twin_from != 0 {
                        self.recount_twins(pos, p, back);
                    } else if pos.at(p).is_some_and(|piece| self.offered_by(p, piece, program.rays_in[back])) {
                        self.refresh(pos, p);
                    }
                }
            }
            _ => self.touch(pos, p),
        }
    }

    /// The square `s` changed: brings the counts of the hook piece on `p` up to date.
    fn follow_hooks(&mut self, pos: &Position, p: usize, s: usize) {
        let g = &pos.variant.geometry;
        let hooks = self.compiled.program(self.tables.records[p].program).hooks.as_ref().expect("a hook program");
        let color = self.tables.records[p].color_index();
        let own = color_code(Color::BOTH[color]);
        let mut counts = self.tables.hook_counts[p].take().expect("a hook piece keeps counts");
        let mut band = self.tables.records[p].band;
        let area = counts.area();
        let delta = counts.changed(g, p, s, hooks, &mut band, &HookBoard { state: self, pos, own });
        if counts.area() != area {
            self.tables.hook_box[p] = counts.board_box(g, p);
        }
        self.tables.hook_counts[p] = Some(counts);
        self.tables.records[p].band = band;
        if delta != 0 {
            self.tables.records[p].total = (self.tables.records[p].total as i32 + delta) as u16;
            self.tables.move_counts[color].add(p, delta);
        }
    }

    /// Whether the listed hook piece on `p` read `s`: `s` is on a first leg (within its
    /// length), or on a line turning off it at an empty leg square with nothing between that
    /// square and `s`. Read on the board after the move: for the changed square that comes
    /// first along the hook's walk, nothing before it changed, so this tells exactly whether it
    /// was read; that one is enough to compute the piece again.
    fn in_band(&self, pos: &Position, p: usize, s: usize) -> bool {
        let g = &self.variant.geometry;
        let ((sx, sy), (px, py)) = (g.xy(s), g.xy(p));
        let (ax, ay) = (sx - px, sy - py);
        let band = self.tables.records[p].band;
        // Diagonal legs and their turns only reach squares of the piece's colour.
        // Speed: a peacock passes over the other colour's squares at once (issue 13's fifth step).
        const ORTHOGONAL: u64 = 0x00FF_00FF_00FF_00FF;
        if u64::from_le_bytes(band) & ORTHOGONAL == 0 && (ax + ay) % 2 != 0 {
            return false;
        }
        (0..DIRECTION_COUNT).any(|d| {
            let leg = band[d] as i32;
            let (dx, dy) = DELTAS[d];
            let along = ax * dx + ay * dy;
            let norm = dx * dx + dy * dy;
            if leg == 0 || along % norm != 0 || along < norm || along > leg * norm {
                return false;
            }
            let j = along / norm;
            let turn = (p as isize + g.offset[d] * j as isize) as usize;
            if turn == s {
                return true;
            }
            if pos.color_code_at(turn) != EMPTY {
                return false;
            }
            // From the turning square towards `s`, one king step at a time, all empty.
            let (ux, uy) = ((ax - j * dx).signum(), (ay - j * dy).signum());
            let step = uy as isize * g.width as isize + ux as isize;
            let mut at = turn as isize + step;
            while at as usize != s {
                if pos.color_code_at(at as usize) != EMPTY {
                    return false;
                }
                at += step;
            }
            true
        })
    }
}
