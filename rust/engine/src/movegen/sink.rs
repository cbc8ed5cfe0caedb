//! Collecting one piece's moves: the `Sink` its atoms write to, the squares `Seen` when its
//! atoms overlap, and `RetainFrom` to filter the moves of one piece in place.

use crate::position::{Move, NO_SQUARE};

/// Keeps the moves from `start` on that `keep` accepts, in order.
pub(super) trait RetainFrom {
    fn retain_from(&mut self, start: usize, keep: impl FnMut(Move) -> bool);
}

impl RetainFrom for Vec<Move> {
    fn retain_from(&mut self, start: usize, mut keep: impl FnMut(Move) -> bool) {
        let mut kept = start;
        for i in start..self.len() {
            if keep(self[i]) {
                self[kept] = self[i];
                kept += 1;
            }
        }
        self.truncate(kept);
    }
}

/// Squares a single piece's generation has already produced (for pieces whose atoms overlap).
pub(super) struct Seen {
    bits: [u64; 64],
}

impl Seen {
    pub(super) fn new() -> Seen {
        Seen { bits: [0; 64] }
    }

    /// Marks (to, sweep) and returns true the first time.
    #[inline]
    fn first(&mut self, to: usize, sweep: bool) -> bool {
        let key = to * 2 + sweep as usize;
        let (word, bit) = (key / 64, 1u64 << (key % 64));
        let fresh = self.bits[word] & bit == 0;
        self.bits[word] |= bit;
        fresh
    }
}

/// Collects one piece's moves, dropping duplicates when the piece's atoms overlap.
pub(super) struct Sink<'a> {
    pub(super) out: &'a mut Vec<Move>,
    pub(super) from: u16,
    pub(super) seen: Option<&'a mut Seen>,
    /// Where this piece's moves start in `out` (multi-capture moves are deduplicated by scan).
    pub(super) start: usize,
}

impl Sink<'_> {
    /// Runs `f` with a sink for the moves of the piece on `from`, appended to `out`, with a set
    /// of the squares seen when its atoms overlap (only those pay for clearing its 512 bytes).
    #[inline(always)]
    pub(super) fn with<R>(out: &mut Vec<Move>, from: usize, overlapping: bool, f: impl FnOnce(&mut Sink) -> R) -> R {
        let mut storage;
        let seen = if overlapping {
            storage = Seen::new();
            Some(&mut storage)
        } else {
            None
        };
        let start = out.len();
        f(&mut Sink { out, from: from as u16, seen, start })
    }

    #[inline(always)]
    pub(super) fn add(&mut self, to: usize, sweep: bool) {
        if let Some(seen) = self.seen.as_deref_mut() {
            if !seen.first(to, sweep) {
                return;
            }
        }
        self.out.push(Move::simple(self.from, to as u16, sweep));
    }

    #[inline]
    pub(super) fn add_with_mid(&mut self, to: usize, mid: usize) {
        self.add_with_mids(to, mid as u16, NO_SQUARE);
    }

    /// A move capturing on `mid` (and `mid2`) on the way; igui and pass too. Overlapping
    /// atoms (lion beside lion lines, lion lines in several directions) can produce the same
    /// one: a scan of this piece's few moves drops it.
    #[inline]
    pub(super) fn add_with_mids(&mut self, to: usize, mid: u16, mid2: u16) {
        let mv = Move::with_captures(self.from as usize, to, mid, mid2);
        if self.seen.is_some() && self.out[self.start..].contains(&mv) {
            return;
        }
        self.out.push(mv);
    }
}
