//! Each side's move counts per square, in a tree of running sums (`CountTree`): the `i`-th
//! move of `Position::generate` order is found with three reads, without building the list,
//! so uniform random play draws the same index, hence the same move, as from the full list
//! (invariant 5 of the module documentation: the tree's counts are the pieces' totals).

use std::mem::size_of;

/// Children per node of a `CountTree`.
const FANOUT: usize = 16;

/// A node of a `CountTree`: the running sums of its children's counts (the first child's,
/// the first two's, ...), in one cache line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(align(64))]
struct Node([u32; FANOUT]);

impl Node {
    const ZERO: Node = Node([0; FANOUT]);

    /// Adds `delta` to child `from` and the children after it: to every running sum from
    /// `from` on, without a branch.
    #[inline(always)]
    fn add_from(&mut self, from: usize, delta: u32) {
        // Per `from`: all ones in the lanes from it on.
        // Speed: the compiler does this table's pass four lanes at a time; lane-by-lane
        // compares were not vectorised, 13% more instructions and 5% slower (ninth step).
        const FROM: [[u32; FANOUT]; FANOUT] = {
            let mut masks = [[0; FANOUT]; FANOUT];
            let mut from = 0;
            while from < FANOUT {
                let mut j = from;
                while j < FANOUT {
                    masks[from][j] = u32::MAX;
                    j += 1;
                }
                from += 1;
            }
            masks
        };
        for (sum, &mask) in self.0.iter_mut().zip(&FROM[from % FANOUT]) {
            *sum = sum.wrapping_add(delta & mask);
        }
    }

    /// The child that holds the `index`-th unit (`index` below the node's sum): the first
    /// whose running sum is above `index` (the sums rise, so a mask and a bit scan).
    #[inline(always)]
    fn child_of(&self, index: u32) -> usize {
        let mut above = 0u32;
        for (j, &sum) in self.0.iter().enumerate() {
            above |= u32::from(sum > index) << j;
        }
        above.trailing_zeros() as usize
    }

    /// The sum of the children before `child`.
    #[inline(always)]
    fn before(&self, child: usize) -> u32 {
        self.0[child.wrapping_sub(1) % FANOUT] & u32::from(child > 0).wrapping_neg()
    }
}

/// One side's move counts per square, for finding the `i`-th move: a tree of three levels of
/// `FANOUT` children (squares, blocks of 16 squares, blocks of 256: boards of up to 64 x 64
/// squares), each node holding its children's running sums. An update adds to one node per
/// level and a search reads one per level, each a fixed pass over one cache line with no
/// branch: a binary tree's loop exits and the chain of its levels' loads cost more.
// Speed: in place of a Fenwick tree, random play 3–5% faster although an update runs more
// instructions (issue 13's ninth step).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct CountTree {
    /// Per block of `FANOUT` squares: their counts' running sums.
    squares: Vec<Node>,
    /// Per block of `FANOUT * FANOUT` squares: its blocks' running sums.
    blocks: Vec<Node>,
    /// The running sums of the large blocks: the last is the total.
    top: Node,
}

impl CountTree {
    pub(super) fn new(size: usize) -> CountTree {
        assert!(size <= FANOUT * FANOUT * FANOUT, "boards have at most 64 x 64 squares");
        CountTree {
            squares: vec![Node::ZERO; size.div_ceil(FANOUT)],
            blocks: vec![Node::ZERO; size.div_ceil(FANOUT * FANOUT)],
            top: Node::ZERO,
        }
    }

    pub(super) fn clear(&mut self) {
        self.squares.fill(Node::ZERO);
        self.blocks.fill(Node::ZERO);
        self.top = Node::ZERO;
    }

    /// Whether the board has one large block (at most 256 squares: Tenjiku's 16 x 16): its
    /// sums are the totals, and `top` stays zero.
    // Speed: an update adds to two nodes, not three: random Tenjiku 1% fewer instructions
    // (issue 27, item 5).
    #[inline]
    fn one_block(&self) -> bool {
        self.blocks.len() == 1
    }

    /// The number of moves.
    #[inline]
    pub(super) fn total(&self) -> u32 {
        if self.one_block() {
            self.blocks[0].0[FANOUT - 1]
        } else {
            self.top.0[FANOUT - 1]
        }
    }

    #[inline]
    pub(super) fn add(&mut self, sq: usize, delta: i32) {
        let delta = delta as u32;
        self.squares[sq / FANOUT].add_from(sq % FANOUT, delta);
        self.blocks[sq / (FANOUT * FANOUT)].add_from(sq / FANOUT % FANOUT, delta);
        if !self.one_block() {
            self.top.add_from(sq / (FANOUT * FANOUT), delta);
        }
    }

    /// The number of moves on squares before `sq`.
    #[inline]
    pub(super) fn before(&self, sq: usize) -> u32 {
        let (large, block) = (sq / (FANOUT * FANOUT), sq / FANOUT);
        self.top.before(large) + self.blocks[large].before(block % FANOUT) + self.squares[block].before(sq % FANOUT)
    }

    /// The square holding the `index`-th move (`index < total`) and its index there.
    #[inline]
    pub(super) fn find(&self, mut index: u32) -> (usize, u32) {
        let large = if self.one_block() { 0 } else { self.top.child_of(index) };
        index -= self.top.before(large);
        let block = large * FANOUT + self.blocks[large].child_of(index);
        index -= self.blocks[large].before(block % FANOUT);
        let sq = block * FANOUT + self.squares[block].child_of(index);
        (sq, index - self.squares[block].before(sq % FANOUT))
    }

    pub(super) fn heap_bytes(&self) -> usize {
        (self.squares.len() + self.blocks.len()) * size_of::<Node>()
    }
}

#[cfg(test)]
mod tests {
    use super::CountTree;

    #[test]
    fn the_count_tree_finds_every_move_on_its_square() {
        for size in [1, 5, 16, 17, 64, 65, 256, 257, 17 * 17, 36 * 36, 64 * 64] {
            let mut tree = CountTree::new(size);
            let mut counts = vec![0u32; size];
            let mut seed = size as u64;
            for round in 0..3 {
                for sq in 0..size {
                    seed = crate::hash::splitmix64(seed);
                    // Many squares without moves, as on a board.
                    let count = if seed.is_multiple_of(3) { (seed >> 8) as u32 % 40 } else { 0 };
                    tree.add(sq, count as i32 - counts[sq] as i32);
                    counts[sq] = count;
                }
                let mut index = 0;
                for (sq, &count) in counts.iter().enumerate() {
                    assert_eq!(tree.before(sq), index, "size {size} round {round} square {sq}");
                    for i in 0..count {
                        assert_eq!(tree.find(index + i), (sq, i), "size {size} round {round} move {}", index + i);
                    }
                    index += count;
                }
                assert_eq!(tree.total(), index);
            }
        }
    }
}
