//! Promotion twins counted by plain pieces (`Offers::counted`). In a zone variant, a move of an
//! unpromoted piece standing outside the zone may promote exactly when it ends in the zone,
//! and then comes twice: the generator appends the promoting twin after all of the piece's
//! moves, in their order (`Position::offer_promotions`). So a plain piece that would otherwise
//! keep a list whenever a line reaches the zone keeps, per atom, how many of its moves end
//! there (`Tables::twins`): along a line heading to the zone they are its last moves, from the
//! distance `PieceRecord::twin_from` on, and a leap's one move is in the zone or not. Powers
//! (lion, lion lines, double steps), generated to be counted anyway, count the moves the rule
//! itself offers (`Position::promotion_offer`: a path square in the zone, or a pass next to
//! it), when their reach gets to the zone.
// Speed: the range-jumping generals, chariot soldiers, water buffaloes, free kings, horned
// falcons and soaring eagles of Tenjiku kept lists, generated in full after every change they
// read, whenever a line reached the zone: random Tenjiku 361.6M -> 322.1M instructions with
// the lines, 293.1M -> 277.9M with the powers (issue 27, item 5).

use super::lines::Count;
use super::plain::ray_squares;
use super::program::{PlainAtom, Walk};
use super::MoveState;
use crate::geometry::{Color, DELTAS};
use crate::movegen::Offer;
use crate::position::{Move, Position};

impl MoveState {
    /// How many moves of plain atom `atom` of the piece on `sq` (of colour `black` or not) end
    /// in the zone: `moves` of them in all, reading up to `reach`; for a ray, `squares` are its
    /// moves' distances (bit `k`: distance `k`, those an earlier overlapping ray gave left out).
    #[inline(always)]
    pub(super) fn atom_twins(&self, sq: usize, atom: PlainAtom, count: Count, squares: u64, black: bool) -> u8 {
        let from = self.tables.records[sq].twin_from as u32;
        // How many ranks towards the zone one step of `dy` goes.
        let ahead = |dy: i32| if black { -dy } else { dy };
        match atom {
            PlainAtom::Ray { dir, .. } if ahead(DELTAS[dir as usize].1) == 1 => (squares >> from).count_ones() as u8,
            PlainAtom::Leap { dy, .. } => u8::from(count.moves != 0 && ahead(dy as i32) >= from as i32),
            PlainAtom::Walk(walk) if ahead(DELTAS[walk.dir as usize].1) == 1 && count.reach as u32 >= from => {
                self.walk_twins(sq, walk, black, from as usize)
            }
            _ => 0,
        }
    }

    /// Counts again the twins of the atoms along `d` of the plain piece on `sq`, after their
    /// moves (`recount_direction`); `total` and the count tree follow.
    pub(super) fn recount_twins(&mut self, pos: &Position, sq: usize, d: usize) {
        let black = self.tables.records[sq].color_index() == Color::Black.index();
        // Only lines heading to the zone have twins.
        if DELTAS[d].1 != if black { -1 } else { 1 } {
            return;
        }
        let compiled = &*self.compiled;
        let program = compiled.program(self.tables.records[sq].program);
        let atoms = program.plain.as_ref().expect("a plain program");
        let reach = self.tables.records[sq].reach[d];
        let base = sq * compiled.stride;
        let mut delta = 0i32;
        let mut picked = program.rays_in[d];
        while picked != 0 {
            let i = picked.trailing_zeros() as usize;
            picked &= picked - 1;
            let moves = self.tables.counts[base + i];
            let squares = match atoms[i] {
                PlainAtom::Ray { dir, .. } if program.overlaps & 1 << dir != 0 => self.fresh_squares(pos, sq, atoms, i),
                PlainAtom::Ray { k, .. } => ray_squares(moves, k),
                _ => 0,
            };
            // (A walk's reach is at most the direction's.)
            let twins = self.atom_twins(sq, atoms[i], Count { moves, reach }, squares, black);
            delta += twins as i32 - self.tables.twins[base + i] as i32;
            self.tables.twins[base + i] = twins;
        }
        if delta != 0 {
            let record = &mut self.tables.records[sq];
            record.total = (record.total as i32 + delta) as u16;
            self.tables.move_counts[record.color_index()].add(sq, delta);
        }
    }

    /// The moves of a walk of the piece on `sq` at distance `from` or more (`walk_count`'s,
    /// over that stretch of the line).
    fn walk_twins(&self, sq: usize, walk: Walk, black: bool, from: usize) -> u8 {
        let d = walk.dir as usize;
        let (first, far) = self.walk_ends(sq, walk.dir, walk.stop);
        let Some(first) = first else { return (far + 1 - from) as u8 };
        let before = from - 1;
        let pieces = self.count_in(sq, d, far, |l| l.occupied) - self.count_in(sq, d, before, |l| l.occupied);
        let blacks = self.count_in(sq, d, far, |l| l.black) - self.count_in(sq, d, before, |l| l.black);
        let own = if black { blacks } else { pieces - blacks };
        let free = if walk.free_beyond { far - before - pieces } else { first.saturating_sub(from) };
        (free + pieces - own) as u8
    }

    /// The `index`-th promotion twin of the plain piece on `sq` (`index` below its number of
    /// twins).
    pub(super) fn nth_twin(&self, pos: &Position, sq: usize, mut index: usize) -> Move {
        let compiled = &*self.compiled;
        let atoms = compiled.program(self.tables.records[sq].program).plain.as_ref().expect("a plain program");
        let base = sq * compiled.stride;
        for i in 0..atoms.len() {
            let twins = self.tables.twins[base + i] as usize;
            if index < twins {
                return self.twin(pos, sq, atoms, i, index);
            }
            index -= twins;
        }
        unreachable!("the counts and twins add up to the total")
    }

    /// Calls `f` with the promotion twins of the plain piece on `sq`, in the generator's order.
    pub(super) fn for_each_twin(&self, pos: &Position, sq: usize, mut f: impl FnMut(Move)) {
        let compiled = &*self.compiled;
        let atoms = compiled.program(self.tables.records[sq].program).plain.as_ref().expect("a plain program");
        for i in 0..atoms.len() {
            for t in 0..self.tables.twins[sq * compiled.stride + i] as usize {
                f(self.twin(pos, sq, atoms, i, t));
            }
        }
    }

    /// Twin `t` of atom `i` of the plain piece on `sq`, promoting: a line's or leap's twins
    /// are its last moves (those into the zone), the powers' those the rule offers.
    fn twin(&self, pos: &Position, sq: usize, atoms: &[PlainAtom], i: usize, t: usize) -> Move {
        let slot = sq * self.compiled.stride + i;
        // A line's or leap's `t`-th twin doubles its move `j`.
        let j = || (self.tables.counts[slot] - self.tables.twins[slot]) as usize + t;
        let overlaps = self.compiled.program(self.tables.records[sq].program).overlaps;
        let mv = match atoms[i] {
            PlainAtom::Ray { dir, .. } if overlaps & 1 << dir != 0 => self.fresh_move(pos, sq, atoms, i, dir, j()),
            PlainAtom::Powers { from } => {
                let mut moves = Vec::with_capacity(32);
                self.powers_moves(pos, sq, from, self.slid_cells(sq), &mut moves);
                let mut offered = moves.iter().copied().filter(self.offered_powers(pos, sq, &moves));
                offered.nth(t).expect("the powers give as many twins as counted")
            }
            atom => self.plain_move(pos, sq, atom, j()),
        };
        mv.with_promotion(true)
    }

    /// Which of the moves of the powers of the piece on `sq` (`moves`, all of them, in order)
    /// may promote: `Position::promotion_offer`, the rule itself, where a path square is in
    /// the zone. A pass may promote next to the zone (`twin_from` 1) when the piece can step
    /// to an empty zone square: only then is its whole list generated, once.
    pub(super) fn offered_powers<'a>(
        &'a self,
        pos: &'a Position,
        sq: usize,
        moves: &[Move],
    ) -> impl Fn(&Move) -> bool + 'a {
        let piece = pos.at(sq).expect("a piece on the square");
        let zone = self.variant.rules.zone().expect("twins are counted in a zone");
        let test = pos.zone_test(piece, zone, sq);
        let mut all = Vec::new();
        if self.tables.records[sq].twin_from == 1 && moves.iter().any(Move::is_pass) {
            pos.generate_from(sq, &mut all);
        }
        move |&mv| pos.promotion_offer(&test, mv, || all.as_slice()) == Offer::Optional
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Mode, MoveState};
    use crate::geometry::Color;
    use crate::position::{Move, Piece, Position};
    use crate::variant::Variant;

    /// Tenjiku (zone of 5 ranks): a lone piece of a type that counts its twins, facing the zone
    /// up an open board from `rank` (from Black's front), keeps counts: its moves are the
    /// reference's, promoting twins included, and those are its moves into the zone, from
    /// `rank - 4` squares on along the lines heading there (a knight's leap of two ranks from
    /// the 6th rank).
    #[test]
    fn a_piece_facing_the_zone_counts_its_twins() {
        let dead_piece = ["promotion-dead-piece".to_string()];
        let cases: [(&str, &[String], usize); 7] = [
            ("FK", &[], 7),
            ("RG", &[], 7),
            ("BG", &[], 9),
            ("CS", &[], 7),
            ("WB", &[], 6),
            ("DH", &[], 8),
            ("N", &dead_piece, 6),
        ];
        for (key, options, rank) in cases {
            let variant = Variant::load("tenjiku", options).unwrap();
            let piece = |key: &str, color| {
                let kind = variant.table.lookup(key).unwrap();
                Piece { kind, origin: kind, color, promoted: false }
            };
            let g = &variant.geometry;
            let mut pos = Position::empty(variant.clone(), Color::Black);
            pos.put(g.size() - 1, piece("K", Color::Black));
            pos.put(0, piece("K", Color::White));
            let sq = rank * g.width + 8;
            pos.put(sq, piece(key, Color::Black));
            let state = MoveState::new(&pos);
            let record = &state.tables.records[sq];
            assert_eq!((record.mode, record.twin_from as usize), (Mode::Plain, rank - 4), "{key}");
            let mut reference = Vec::new();
            pos.generate_from(sq, &mut reference);
            let mut counted = Vec::new();
            state.moves_from(&pos, sq, &mut counted);
            assert_eq!(counted, reference, "{key}");
            assert_eq!(state.moves_on(sq), reference.len(), "{key}");
            let in_zone = |m: &Move| g.rank_from_front(m.to as usize, Color::Black) < 5;
            let into_zone: Vec<Move> = reference.iter().copied().filter(|m| !m.promote() && in_zone(m)).collect();
            let twins: Vec<Move> = reference.iter().filter(|m| m.promote()).map(|m| m.with_promotion(false)).collect();
            assert!(!twins.is_empty() && twins == into_zone, "{key}: into the zone {into_zone:?}, twins {twins:?}");
        }
    }
}
