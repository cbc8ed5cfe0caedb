//! Plain pieces (module documentation, "Three kinds of piece"): one count per atom, counted from
//! the line bits, counted again one direction at a time when a square they read changes, and
//! never stored as moves: `nth` and the move list find them again from the counts. Walks
//! (hops, range captures, range and rank jumps) are counted from bit counts over their line,
//! and rays along one line that reach the same squares count only the squares no earlier ray
//! gave (`Program::overlaps`). An area move after slides and walks counts the squares they did
//! not give, over the box around the piece (`local_cells::AreaBox`).

use super::lines::Count;
use super::local_cells::{cell, slide_cells, RING};
use super::program::{LoneRay, PlainAtom, Stop, Walk};
use super::MoveState;
use crate::geometry::{Color, DELTAS, DIRECTION_COUNT};
use crate::position::{color_code, Move, Piece, Position, EMPTY, NO_SQUARE};
use crate::table::UNLIMITED;

impl MoveState {
    /// Counts every plain atom of the piece new on `sq` (`refresh` puts its total in the
    /// count tree), setting every direction's reach. Returns the cells its area move reads
    /// (`local_cells`; 0 without one).
    pub(super) fn count_plain(&mut self, pos: &Position, sq: usize) -> u128 {
        // Speed: the common pieces' loop without the area's and powers' arms, or the twins'
        // (issue 27).
        let twins = self.tables.records[sq].twin_from != 0;
        if self.compiled.program(self.tables.records[sq].program).generates {
            if twins {
                self.count_atoms::<true, true>(pos, sq)
            } else {
                self.count_atoms::<true, false>(pos, sq)
            }
        } else if twins {
            self.count_atoms::<false, true>(pos, sq)
        } else {
            self.count_atoms::<false, false>(pos, sq)
        }
    }

    /// `count_plain`, for a program that `GENERATES` or not, and a piece that counts its
    /// `TWINS` or not.
    #[inline(always)]
    fn count_atoms<const GENERATES: bool, const TWINS: bool>(&mut self, pos: &Position, sq: usize) -> u128 {
        let compiled = &*self.compiled;
        let program = compiled.program(self.tables.records[sq].program);
        let atoms = program.plain.as_ref().expect("a plain program");
        let own = self.own(sq);
        let base = sq * compiled.stride;
        let mut reach = [0u8; DIRECTION_COUNT];
        // Per direction, the squares earlier rays gave (`Program::overlaps`); and, for an area
        // move, the lines' squares within its reach.
        let mut given = [0u64; DIRECTION_COUNT];
        let (mut slid, mut area_reads) = (0u128, 0u128);
        let mut total = 0u16;
        let black = own == color_code(Color::Black);
        // The powers can reach the zone (`twins.rs`): their twins are counted from their moves.
        let twin_from = self.tables.records[sq].twin_from;
        let powers_twins = TWINS && GENERATES && twin_from <= program.local_radius;
        let mut twins_of_powers = 0;
        for (i, &atom) in atoms.iter().enumerate() {
            let count @ Count { moves, reach: hi } = match atom {
                PlainAtom::Area { steps } if GENERATES => {
                    let area = self.area_box(pos, sq, steps, black);
                    area_reads = area.reads;
                    // The squares it reaches that no line gave, and a pass. It reads no line
                    // (reach 0): its reads are local, and a change that moves a line's end
                    // within its reach is one of them, so the piece is counted again in full.
                    Count { moves: ((area.targets & !slid).count_ones() + u32::from(area.pass)) as u8, reach: 0 }
                }
                // Local reads only (reach 0): a change among them counts the piece again.
                PlainAtom::Powers { .. } if GENERATES && program.lone_lion && !powers_twins => {
                    Count { moves: self.lion_count(pos, sq, black, slid), reach: 0 }
                }
                PlainAtom::Powers { from } if GENERATES => {
                    let mut moves = std::mem::take(&mut self.tables.powers);
                    moves.clear();
                    self.powers_moves(pos, sq, from, slid, &mut moves);
                    if powers_twins {
                        twins_of_powers =
                            moves.iter().copied().filter(self.offered_powers(pos, sq, &moves)).count() as u8;
                        // Next to the zone, a pass's twin reads the squares it can step to.
                        if twin_from == 1 {
                            area_reads |= RING;
                        }
                    }
                    let count = Count { moves: moves.len() as u8, reach: 0 };
                    self.tables.powers = moves;
                    count
                }
                _ => self.count_atom(pos, sq, atom, own),
            };
            let (moves, squares) = match atom {
                PlainAtom::Ray { dir, k, .. } if program.overlaps & 1 << dir != 0 => {
                    let fresh = fresh_of(moves, k, &mut given[dir as usize]);
                    (fresh.count_ones() as u8, fresh)
                }
                PlainAtom::Ray { k, .. } if TWINS => (moves, ray_squares(moves, k)),
                _ => (moves, 0),
            };
            if TWINS {
                let twins = match atom {
                    PlainAtom::Powers { .. } => twins_of_powers,
                    _ => self.atom_twins(sq, atom, count, squares, black),
                };
                self.tables.twins[base + i] = twins;
                total += twins as u16;
            }
            if let Some(steps) = program.counted_area.or(program.powers_meet).filter(|_| GENERATES) {
                slid |= match atom {
                    PlainAtom::Ray { dir, .. } => slide_cells(dir, moves, steps),
                    PlainAtom::Walk(walk) => self.walk_cells(pos, sq, walk, own, steps, hi),
                    _ => 0,
                };
            }
            if let PlainAtom::Ray { dir, .. } | PlainAtom::Walk(Walk { dir, .. }) = atom {
                reach[dir as usize] = reach[dir as usize].max(hi);
            }
            self.tables.counts[base + i] = moves;
            total += moves as u16;
        }
        self.tables.records[sq].reach = reach;
        self.tables.records[sq].total = total;
        area_reads
    }

    /// Counts again the atoms along `d` of the plain piece on `sq` (a square it read that way
    /// changed), setting that direction's reach; `total` and the count tree follow.
    // Speed: only the changed direction, with one routine per atom (`count_atom`) shared with
    // `count_plain` (part of issue 13's fifth step); a direction with one ray reads it from
    // `Program::lone_rays` (ninth step, 2–3%).
    pub(super) fn recount_direction(&mut self, pos: &Position, sq: usize, d: usize) {
        let compiled = &*self.compiled;
        let program = compiled.program(self.tables.records[sq].program);
        let own = self.own(sq);
        let base = sq * compiled.stride;
        let (reach, delta) = match program.lone_rays[d] {
            Some(LoneRay { slot, k, extra }) => {
                let Count { moves, reach } = self.ray(pos, sq, d, k as usize, extra as usize, own);
                let slot = base + slot as usize;
                let delta = moves as i32 - self.tables.counts[slot] as i32;
                self.tables.counts[slot] = moves;
                (reach, delta)
            }
            None => {
                let atoms = program.plain.as_ref().expect("a plain program");
                let overlapping = program.overlaps & 1 << d != 0;
                let (mut reach, mut delta, mut given) = (0u8, 0i32, 0u64);
                let mut picked = program.rays_in[d];
                while picked != 0 {
                    let i = picked.trailing_zeros() as usize;
                    picked &= picked - 1;
                    let atom = atoms[i];
                    let Count { moves, reach: hi } = self.count_atom(pos, sq, atom, own);
                    let moves = match atom {
                        PlainAtom::Ray { k, .. } if overlapping => fresh_of(moves, k, &mut given).count_ones() as u8,
                        _ => moves,
                    };
                    reach = reach.max(hi);
                    delta += moves as i32 - self.tables.counts[base + i] as i32;
                    self.tables.counts[base + i] = moves;
                }
                (reach, delta)
            }
        };
        let record = &mut self.tables.records[sq];
        record.reach[d] = reach;
        if delta != 0 {
            record.total = (record.total as i32 + delta) as u16;
            self.tables.move_counts[record.color_index()].add(sq, delta);
        }
    }

    /// The moves of plain atom `atom` of the piece on `sq` (owner `own`) before the overlap
    /// filter (`fresh_of`), and the farthest square it reads along its line (0 for a leap).
    #[inline(always)]
    fn count_atom(&self, pos: &Position, sq: usize, atom: PlainAtom, own: u8) -> Count {
        match atom {
            PlainAtom::Ray { dir, k, extra } => self.ray(pos, sq, dir as usize, k as usize, extra as usize, own),
            PlainAtom::Leap { dx, dy } => {
                let (x, y) = self.variant.geometry.xy(sq);
                match self.variant.geometry.square(x + dx as i32, y + dy as i32) {
                    Some(to) if pos.color_code_at(to) != own => Count { moves: 1, reach: 0 },
                    _ => Count::NONE,
                }
            }
            PlainAtom::Walk(walk) => self.walk_count(sq, walk, own == color_code(Color::Black)),
            PlainAtom::Area { .. } | PlainAtom::Powers { .. } => {
                unreachable!("areas and powers are counted with the whole piece (`count_plain`)")
            }
        }
    }

    /// The moves of the powers (`PlainAtom::Powers`, atoms `from` on) of the plain piece on
    /// `sq`, in generation order, into `out`: generated alone, less, where they reach the
    /// slides' squares (`Program::powers_meet`), the simple moves to the cells of `slid` (the
    /// slides' squares within their reach), which the slides gave first.
    pub(super) fn powers_moves(&self, pos: &Position, sq: usize, from: u8, slid: u128, out: &mut Vec<Move>) {
        pos.generate_from_atoms(sq, from, out);
        if slid != 0 {
            let g = &self.variant.geometry;
            let (x, y) = g.xy(sq);
            out.retain(|mv| {
                let (tx, ty) = g.xy(mv.to as usize);
                !(mv.mid == NO_SQUARE && mv.mid2() == NO_SQUARE && !mv.sweep() && slid & cell(tx - x, ty - y) != 0)
            });
        }
    }

    /// The cells of the slides' squares within the powers' reach of the plain piece on `sq`
    /// whose powers meet them (`Program::powers_meet`; 0 for the others).
    pub(super) fn slid_cells(&self, sq: usize) -> u128 {
        let program = self.compiled.program(self.tables.records[sq].program);
        let Some(radius) = program.powers_meet else { return 0 };
        let counts = &self.tables.counts[sq * self.compiled.stride..];
        let atoms = program.plain.as_ref().expect("a plain program");
        atoms.iter().zip(counts).fold(0, |cells, (&atom, &moves)| match atom {
            PlainAtom::Ray { dir, .. } => cells | slide_cells(dir, moves, radius),
            _ => cells,
        })
    }

    /// The cells (`local_cells`) of the moves of a walk of the piece on `sq` within `steps`
    /// of it, the walk reading as far as `far` (its count's reach): the squares from the piece
    /// outwards, as `walk_moves` gives them.
    // Speed: at most `steps` squares read, the walk's ends already known (issue 27, item 5).
    fn walk_cells(&self, pos: &Position, sq: usize, walk: Walk, own: u8, steps: u8, far: u8) -> u128 {
        let (dx, dy) = DELTAS[walk.dir as usize];
        let step = self.variant.geometry.offset[walk.dir as usize];
        let (mut cells, mut passed) = (0, false);
        for k in 1..=steps.min(far) as isize {
            let c = pos.color_code_at((sq as isize + step * k) as usize);
            if if c == EMPTY { !passed || walk.free_beyond } else { c != own } {
                cells |= cell(dx * k as i32, dy * k as i32);
            }
            passed |= c != EMPTY;
        }
        cells
    }

    /// Whether a move of the plain-counted `piece` on `sq` may be offered promotion (`Offers`):
    /// then it keeps a list instead (invariant 2).
    pub(super) fn offered(&self, sq: usize, piece: Piece) -> bool {
        self.offered_by(sq, piece, u64::MAX)
    }

    /// `offered`, for the atoms of `picked` (bit `i`: atom `i`): after a recount of one
    /// direction only its atoms can have been brought to an offer, the others having none.
    // Speed: a recount tested every atom of the piece again, 4.8% of random Tenjiku play
    // (issue 27, item 5).
    pub(super) fn offered_by(&self, sq: usize, piece: Piece, picked: u64) -> bool {
        let compiled = &*self.compiled;
        let program = compiled.program(self.tables.records[sq].program);
        // A piece that counts its twins keeps counts wherever its moves go.
        let Some(offers) = program.offers.filter(|o| !piece.promoted && o.counted.is_none()) else { return false };
        let g = &self.variant.geometry;
        let y = g.xy(sq).1;
        let rank = |y: i32| match piece.color {
            Color::Black => y,
            Color::White => g.height as i32 - 1 - y,
        };
        let atoms = program.plain.as_ref().expect("a plain program");
        let counts = &self.tables.counts[sq * compiled.stride..];
        let reach = &self.tables.records[sq].reach;
        atoms.iter().enumerate().any(|(i, &atom)| {
            let n = counts[i] as i32;
            if n == 0 || picked >> i & 1 == 0 {
                return false;
            }
            // Along a ray the rank changes monotonically: its targets cover one range of ranks.
            let (near, far) = match atom {
                PlainAtom::Ray { dir, k, .. } => {
                    let dy = DELTAS[dir as usize].1;
                    // Where rays overlap, its moves lie between `k` and the farthest square read.
                    let far =
                        if program.overlaps & 1 << dir != 0 { reach[dir as usize] as i32 } else { k as i32 + n - 1 };
                    (rank(y + dy * k as i32), rank(y + dy * far))
                }
                PlainAtom::Leap { dy, .. } => (rank(y + dy as i32), rank(y + dy as i32)),
                // Its moves lie between the first square and the farthest it read.
                PlainAtom::Walk(Walk { dir, .. }) => {
                    let dy = DELTAS[dir as usize].1;
                    (rank(y + dy), rank(y + dy * reach[dir as usize] as i32))
                }
                // Within its local radius each way, on the board.
                PlainAtom::Area { .. } | PlainAtom::Powers { .. } => {
                    let (last, r) = (g.height as i32 - 1, program.local_radius as i32);
                    (rank((y - r).max(0)), rank((y + r).min(last)))
                }
            };
            let (lo, hi) = (near.min(far) as u32, near.max(far) as u32);
            let ranks = (u64::MAX >> (63 - hi)) & !((1u64 << lo) - 1);
            ranks & offers.to != 0
        })
    }

    /// The squares (bit `k`: distance `k`) that ray `i` of the plain piece on `sq` gives when
    /// rays overlap its way (`Program::overlaps`): those of its ray that no earlier ray that
    /// way gave.
    pub(super) fn fresh_squares(&self, pos: &Position, sq: usize, atoms: &[PlainAtom], i: usize) -> u64 {
        let own = self.own(sq);
        let squares = |atom: PlainAtom| match atom {
            PlainAtom::Ray { dir, k, extra } => {
                ray_squares(self.ray(pos, sq, dir as usize, k as usize, extra as usize, own).moves, k)
            }
            _ => unreachable!("overlapping atoms are rays"),
        };
        let PlainAtom::Ray { dir, .. } = atoms[i] else { unreachable!("overlapping atoms are rays") };
        let earlier = atoms[..i].iter().filter(|a| matches!(a, PlainAtom::Ray { dir: d, .. } if *d == dir));
        squares(atoms[i]) & !earlier.fold(0, |given, &a| given | squares(a))
    }

    /// The `j`-th move of ray `i` of the plain piece on `sq`, along `dir` where rays overlap
    /// (`Program::overlaps`): the `j`-th of its fresh squares (`fresh_squares`).
    #[inline]
    pub(super) fn fresh_move(
        &self,
        pos: &Position,
        sq: usize,
        atoms: &[PlainAtom],
        i: usize,
        dir: u8,
        j: usize,
    ) -> Move {
        let mut fresh = self.fresh_squares(pos, sq, atoms, i);
        for _ in 0..j {
            fresh &= fresh - 1;
        }
        let to = sq as isize + self.variant.geometry.offset[dir as usize] * fresh.trailing_zeros() as isize;
        Move::simple(sq as u16, to as u16, false)
    }

    /// The `j`-th move of a plain atom of the piece on `sq`.
    #[inline]
    pub(super) fn plain_move(&self, pos: &Position, sq: usize, atom: PlainAtom, j: usize) -> Move {
        let g = &self.variant.geometry;
        let to = match atom {
            PlainAtom::Ray { dir, k, .. } => {
                (sq as isize + g.offset[dir as usize] * (k as usize + j) as isize) as usize
            }
            PlainAtom::Leap { dx, dy } => {
                let (x, y) = g.xy(sq);
                g.square(x + dx as i32, y + dy as i32).expect("a counted leap lands on the board")
            }
            PlainAtom::Walk(walk) => {
                let (mut found, mut rest) = (None, j);
                self.walk_moves(pos, sq, walk, self.own(sq), |mv| {
                    found = Some(mv).filter(|_| rest == 0);
                    rest = rest.wrapping_sub(1);
                    found.is_none()
                });
                return found.expect("a walk gives as many moves as it counted");
            }
            PlainAtom::Area { .. } | PlainAtom::Powers { .. } => {
                unreachable!("an area's or powers' moves are found by `nth` and `for_each_move_from`")
            }
        };
        Move::simple(sq as u16, to as u16, false)
    }

    /// Where a walk from `sq` along `dir` meets its first piece and where `stop` ends it (the
    /// farthest square it reads: its stop piece, or the edge), as distances.
    #[inline]
    pub(super) fn walk_ends(&self, sq: usize, dir: u8, stop: Stop) -> (Option<usize>, usize) {
        let d = dir as usize;
        let edge = self.edge(sq, d);
        let first = if edge == 0 { None } else { self.first_piece(sq, d, 1) };
        let Some(first) = first else { return (None, edge) };
        let stop = match stop {
            Stop::After(UNLIMITED) => None,
            Stop::After(n) => {
                let mut at = Some(first);
                for _ in 0..n {
                    at = at.filter(|&a| a < edge).and_then(|a| self.first_piece(sq, d, a + 1));
                }
                at
            }
            Stop::Ranked(level) => self.first_in(sq, d, first, |l| l.ranked[level as usize]),
        };
        (Some(first), stop.unwrap_or(edge))
    }

    /// A walk of the piece on `sq` (of colour `black` or not): its number of moves and the
    /// farthest square it reads, from bit counts over the line.
    // Speed: two bit scans and two popcounts in place of a list (issue 13's fourth step, with
    // the overlapping rays: random play 1.25× fewer instructions).
    fn walk_count(&self, sq: usize, walk: Walk, black: bool) -> Count {
        let d = walk.dir as usize;
        let (first, far) = self.walk_ends(sq, walk.dir, walk.stop);
        let Some(first) = first else { return Count { moves: far as u8, reach: far as u8 } };
        let pieces = self.count_in(sq, d, far, |l| l.occupied);
        let blacks = self.count_in(sq, d, far, |l| l.black);
        let own = if black { blacks } else { pieces - blacks };
        // Free squares it may end on, then the enemy pieces.
        let free = if walk.free_beyond { far - pieces } else { first - 1 };
        Count { moves: (free + pieces - own) as u8, reach: far as u8 }
    }

    /// Calls `f` with each move of a walk of the piece on `sq` (owner `own`) in turn, while
    /// it returns true: the squares from the piece outwards (`Position::generate_atom`).
    pub(super) fn walk_moves(&self, pos: &Position, sq: usize, walk: Walk, own: u8, mut f: impl FnMut(Move) -> bool) {
        let (_, far) = self.walk_ends(sq, walk.dir, walk.stop);
        let step = self.variant.geometry.offset[walk.dir as usize];
        let mut passed = false;
        for k in 1..=far {
            let to = (sq as isize + step * k as isize) as usize;
            let c = pos.color_code_at(to);
            let moves = if c == EMPTY { !passed || walk.free_beyond } else { c != own };
            if moves && !f(Move::simple(sq as u16, to as u16, passed && walk.sweeps)) {
                return;
            }
            passed |= c != EMPTY;
        }
    }
}

/// A ray's moves along a line where rays overlap (`Program::overlaps`): of its `count` squares
/// from distance `k` (bit `k`: distance `k`), those no earlier ray that way gave (`given`,
/// which takes them in).
#[inline]
fn fresh_of(count: u8, k: u8, given: &mut u64) -> u64 {
    let squares = ray_squares(count, k);
    let fresh = squares & !*given;
    *given |= squares;
    fresh
}

/// The squares (bit `k`: distance `k`) of a ray's `count` moves from distance `k`.
#[inline]
pub(super) fn ray_squares(count: u8, k: u8) -> u64 {
    // A ray that starts beyond the edge (`k` past 63 too) has no squares.
    ((1u64 << count) - 1).checked_shl(k as u32).unwrap_or(0)
}
