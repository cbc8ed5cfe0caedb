//! Each side's pieces by the code they are written with (`SignIndex`), for notation: a move is
//! written with its start square when another piece written the same way has a move written
//! the same way, and finding those pieces by a scan of the side's ~400 pieces cost most of a
//! self-play ply's notation.

use crate::position::Piece;
use crate::table::PieceTable;

/// No piece on a square (`SignIndex::group`).
const NONE: u32 = u32::MAX;

/// The squares of the pieces of each *group* (colour, promoted or not, and sign class: the
/// pieces `Position::piece_sign` writes the same way) as bits with a summary word, and the
/// group of the piece on each square.
// Speed: random self-play's notation 6.8k → ~1.5k instructions a ply (issue 27).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct SignIndex {
    /// Words of bits per group: one bit per square.
    words: usize,
    /// Per group, `words` words.
    bits: Vec<u64>,
    /// Per group: bit `w` set when its word `w` is not empty.
    summary: Vec<u64>,
    /// Per square: the group of the piece there, or `NONE`.
    group: Vec<u32>,
}

impl SignIndex {
    /// An empty index for a board of `size` squares and a table of `kinds` types.
    pub(super) fn new(size: usize, kinds: usize) -> SignIndex {
        let words = size.div_ceil(64);
        assert!(words <= 64, "boards have at most 64 x 64 squares");
        SignIndex { words, bits: vec![0; kinds * 4 * words], summary: vec![0; kinds * 4], group: vec![NONE; size] }
    }

    /// The group of `p`: two pieces are in the same group exactly when they have the same
    /// colour and promotion and `piece_sign` writes them with the same code.
    #[inline]
    pub(super) fn group_of(table: &PieceTable, p: Piece) -> u32 {
        let written = if p.promoted { p.origin } else { p.kind };
        (u32::from(table.sign_class(written)) * 2 + u32::from(p.promoted)) * 2 + p.color.index() as u32
    }

    pub(super) fn clear(&mut self) {
        self.bits.fill(0);
        self.summary.fill(0);
        self.group.fill(NONE);
    }

    /// Notes that `piece` now stands on `sq`.
    #[inline]
    pub(super) fn set(&mut self, table: &PieceTable, sq: usize, piece: Option<Piece>) {
        let new = piece.map_or(NONE, |p| Self::group_of(table, p));
        let old = std::mem::replace(&mut self.group[sq], new);
        if old == new {
            return;
        }
        let (w, bit) = (sq / 64, 1u64 << (sq % 64));
        if old != NONE {
            let word = &mut self.bits[old as usize * self.words + w];
            *word &= !bit;
            if *word == 0 {
                self.summary[old as usize] &= !(1u64 << w);
            }
        }
        if new != NONE {
            self.bits[new as usize * self.words + w] |= bit;
            self.summary[new as usize] |= 1u64 << w;
        }
    }

    /// Calls `f` with the square of every piece of `group`, in increasing order.
    #[inline]
    pub(super) fn for_each(&self, group: u32, mut f: impl FnMut(usize)) {
        let base = group as usize * self.words;
        let mut summary = self.summary[group as usize];
        while summary != 0 {
            let w = summary.trailing_zeros() as usize;
            summary &= summary - 1;
            let mut bits = self.bits[base + w];
            while bits != 0 {
                f(w * 64 + bits.trailing_zeros() as usize);
                bits &= bits - 1;
            }
        }
    }

    pub(super) fn heap_bytes(&self) -> usize {
        (self.bits.len() + self.summary.len()) * 8 + self.group.len() * 4
    }
}
