//! Promotion offers: in the zone (`Offer`, `ZoneTest`, `Position::promotion_offer`) and on the
//! furthest rank (`farpromote`), and the ranks where a type would be stuck (`dead_ends`),
//! where promotion in the zone is compulsory.

use crate::geometry::Color;
use crate::position::{Move, Piece, Position, NO_SQUARE};
use crate::rules::{Zone, ZoneTrigger};
use crate::table::{Kind, Motion};
use crate::variant::Variant;
use std::sync::Arc;

/// What the zone rule offers a move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Offer {
    /// No promotion.
    None,
    /// A choice: the move comes twice.
    Optional,
    /// Promotion is compulsory (the piece would be stuck).
    Forced,
}

/// The zone rule's view of one piece on its square (`Position::zone_test`).
pub(crate) struct ZoneTest {
    color: Color,
    depth: usize,
    trigger: ZoneTrigger,
    /// `dead_ends` of the piece's type: ranks (from the front) it would be stuck on.
    dead_ends: u64,
    /// The piece stands in the zone.
    from_in_zone: bool,
}

/// Per piece type of `variant`, bit `r` set when the type, alone on rank `r` counted from its
/// owner's far side, would have no move at all: where promotion in a zone is compulsory (the
/// `promotion-forced dead-end` rule). Empty unless the variant promotes in a zone under that
/// rule. Found from the generator itself on first use and kept with the variant
/// (`Variant::caches`).
#[inline]
pub fn dead_ends(variant: &Arc<Variant>) -> &[u64] {
    match variant.caches.dead_ends.get() {
        Some(ends) => ends,
        None => find_dead_ends(variant),
    }
}

/// `dead_ends`, found: a lone piece of each type on each rank of an empty board, generated.
/// That generation asks for the dead ends too (the zone rule reads them), and sees none while
/// they are found, as a variant's generation did before they were known.
#[cold]
fn find_dead_ends(variant: &Arc<Variant>) -> &[u64] {
    thread_local! {
        static FINDING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    if FINDING.get() {
        return &[];
    }
    /// Clears `FINDING` however the search ends.
    struct Found;
    impl Drop for Found {
        fn drop(&mut self) {
            FINDING.set(false);
        }
    }
    variant.caches.dead_ends.get_or_init(|| {
        if !variant.rules.zone().is_some_and(|z| z.forced_dead_end) {
            return Vec::new();
        }
        FINDING.set(true);
        let _found = Found;
        let g = &variant.geometry;
        let mut dead_ends = vec![0u64; variant.table.len()];
        let mut moves = Vec::new();
        // One empty board, each piece put on it and taken off again.
        let mut pos = Position::empty(variant.clone(), Color::Black);
        for (kind, bits) in dead_ends.iter_mut().enumerate() {
            for rank in 0..g.height {
                let sq = rank * g.width + g.width / 2;
                let kind = kind as Kind;
                pos.put(sq, Piece { kind, origin: kind, color: Color::Black, promoted: false });
                moves.clear();
                pos.generate_from(sq, &mut moves);
                pos.remove(sq);
                if moves.is_empty() {
                    *bits |= 1 << rank;
                }
            }
        }
        dead_ends
    })
}

impl Position {
    /// `farpromote`: each non-capturing move to the piece's furthest rank comes twice,
    /// promoting (`Move::promote`) and not (a capture there promotes anyway, by the capture
    /// rule).
    #[inline(never)]
    pub(super) fn offer_far_promotions(&self, piece: Piece, start: usize, out: &mut Vec<Move>) {
        for i in start..out.len() {
            if self.far_promotion_offered(piece, out[i]) {
                out.push(out[i].with_promotion(true));
            }
        }
    }

    /// Whether `mv` of `piece` may promote by `farpromote`: an unpromoted such piece moving
    /// to its furthest rank without capturing.
    fn far_promotion_offered(&self, piece: Piece, mv: Move) -> bool {
        self.variant.table.get(piece.kind).far_promotion
            && !piece.promoted
            && self.variant.geometry.rank_from_front(mv.to as usize, piece.color) == 0
            && !self.is_capture(mv)
    }

    /// `offer_promotions` for the moves of `piece` from `start` on, when its type may be offered
    /// promotion in the variant's zone and it has not promoted (one inline test for the rest).
    #[inline(always)]
    pub(super) fn offer_zone_promotions(
        &self,
        sq: usize,
        piece: Piece,
        motion: &Motion,
        start: usize,
        out: &mut Vec<Move>,
    ) {
        if motion.zone_promotion && !piece.promoted {
            if let Some(zone) = self.variant.rules.zone() {
                self.offer_promotions(sq, piece, zone, start, out);
            }
        }
    }

    /// Promotion in a zone: each of the piece's moves (from `start` in `out`) that may promote
    /// is offered twice, declining and promoting (`Move::promote`), or once, promoting, where
    /// the piece would otherwise be stuck for good.
    #[inline(never)]
    fn offer_promotions(&self, sq: usize, piece: Piece, zone: &Zone, start: usize, out: &mut Vec<Move>) {
        if piece.promoted || self.variant.table.get(piece.kind).promotes_to.is_none() {
            return;
        }
        let test = self.zone_test(piece, zone, sq);
        let end = out.len();
        for i in start..end {
            let steps = &out[start..end];
            match self.promotion_offer(&test, out[i], || steps) {
                Offer::Forced => out[i] = out[i].with_promotion(true),
                Offer::Optional => out.push(out[i].with_promotion(true)),
                Offer::None => {}
            }
        }
    }

    /// What the zone rule needs of a piece standing on `from`, found once for all its moves.
    pub(crate) fn zone_test(&self, piece: Piece, zone: &Zone, from: usize) -> ZoneTest {
        let depth = zone.depth as usize;
        ZoneTest {
            color: piece.color,
            depth,
            trigger: zone.trigger,
            dead_ends: dead_ends(&self.variant).get(piece.kind as usize).copied().unwrap_or(0),
            from_in_zone: self.variant.geometry.rank_from_front(from, piece.color) < depth,
        }
    }

    /// Whether a move of a piece (unpromoted, of a promoting type; `test` from `zone_test`) may
    /// or must promote under the zone rule: it must where the piece would be stuck for good
    /// (`dead_ends`). The squares a move passes through count as well as its end
    /// (seed 004, lines 148-150: a lion next to the zone promotes with igui, or a pass, into the
    /// zone and back): the square it captures on the way, and for a pass an empty zone square
    /// next to it that the piece can step to (`piece_moves` gives the piece's moves; called
    /// only for passes).
    #[inline]
    pub(crate) fn promotion_offer<M: AsRef<[Move]>>(
        &self,
        test: &ZoneTest,
        mv: Move,
        piece_moves: impl FnOnce() -> M,
    ) -> Offer {
        let g = &self.variant.geometry;
        let in_zone = |sq: u16| sq != NO_SQUARE && g.rank_from_front(sq as usize, test.color) < test.depth;
        let to_rank = g.rank_from_front(mv.to as usize, test.color);
        if test.dead_ends & (1 << to_rank) != 0 {
            return Offer::Forced;
        }
        let path_in_zone = to_rank < test.depth
            || in_zone(mv.mid)
            || in_zone(mv.mid2())
            || (mv.is_pass() && {
                let (x, y) = g.xy(mv.from as usize);
                piece_moves().as_ref().iter().any(|m| {
                    let (tx, ty) = g.xy(m.to as usize);
                    m.mid == NO_SQUARE
                        && (tx - x).abs() <= 1
                        && (ty - y).abs() <= 1
                        && m.to != m.from
                        && self.at(m.to as usize).is_none()
                        && in_zone(m.to)
                })
            });
        // Written as the rule reads: entering the zone, or capturing with a start or path in it.
        #[allow(clippy::nonminimal_bool)]
        let may = match test.trigger {
            ZoneTrigger::Touch => test.from_in_zone || path_in_zone,
            ZoneTrigger::EnterOrCapture => {
                (!test.from_in_zone && path_in_zone) || ((test.from_in_zone || path_in_zone) && self.is_capture(mv))
            }
        };
        if may {
            Offer::Optional
        } else {
            Offer::None
        }
    }

    /// Whether `mv` is the declining twin of a move that may promote (written with `=`).
    pub fn declines_promotion(&self, mv: Move) -> bool {
        let Some(piece) = self.at(mv.from as usize) else { return false };
        if !mv.promote() && self.far_promotion_offered(piece, mv) {
            return true;
        }
        let Some(zone) = self.variant.rules.zone() else { return false };
        !mv.promote()
            && !piece.promoted
            && self.variant.table.get(piece.kind).promotes_to.is_some()
            && self.promotion_offer(&self.zone_test(piece, zone, mv.from as usize), mv, || {
                let mut moves = Vec::new();
                self.generate_from(mv.from as usize, &mut moves);
                moves
            }) == Offer::Optional
    }
}
