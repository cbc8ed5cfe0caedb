//! The rare powers, each an out-of-line call from `generate_atom`: the lion, lion lines,
//! double steps, area moves and teleport (with the protection rule it obeys).

use super::sink::Sink;
use crate::geometry::{Color, DELTAS};
use crate::position::{color_code, Move, Position, EMPTY, NO_SQUARE};

impl Position {
    /// Lion power: every square within two king steps (steps and jumps), capturing an adjacent
    /// enemy first and then stepping on (double capture, or igui when stepping back), and a
    /// pass when an adjacent square is empty.
    pub(super) fn lion(&self, sq: usize, color: Color, sink: &mut Sink) {
        let g = &self.variant.geometry;
        let (x, y) = g.xy(sq);
        let mut can_pass = false;
        for dy in -2..=2 {
            for dx in -2..=2 {
                if (dx, dy) == (0, 0) {
                    continue;
                }
                if let Some(t) = g.square(x + dx, y + dy) {
                    match self.at(t) {
                        None => {
                            sink.add(t, false);
                            can_pass |= dx.abs() <= 1 && dy.abs() <= 1;
                        }
                        Some(p) if p.color != color => sink.add(t, false),
                        Some(_) => {}
                    }
                }
            }
        }
        for &(adx, ady) in DELTAS.iter() {
            let Some(a) = g.square(x + adx, y + ady) else { continue };
            if !matches!(self.at(a), Some(p) if p.color != color) {
                continue;
            }
            // Capture on `a`, then a second step from `a` (back to `sq` is igui).
            for &(bdx, bdy) in DELTAS.iter() {
                let Some(t) = g.square(x + adx + bdx, y + ady + bdy) else { continue };
                if t == sq || self.enterable(t, color) {
                    sink.add_with_mid(t, a);
                }
            }
        }
        if can_pass {
            sink.add_with_mid(sq, NO_SQUARE as usize);
        }
    }

    /// Two steps along the directions of `dirs` (absolute), capturing on either (`double`).
    #[inline(never)]
    pub(super) fn double(&self, sq: usize, dirs: u8, color: Color, sink: &mut Sink) {
        let g = &self.variant.geometry;
        for d1 in (0..8).filter(|d| dirs & (1 << d) != 0) {
            if g.edge(sq, d1) == 0 {
                continue;
            }
            let s1 = (sq as isize + g.offset[d1]) as usize;
            let first = self.at(s1);
            if matches!(first, Some(p) if p.color == color) {
                continue;
            }
            sink.add(s1, false);
            let captured = first.is_some();
            for d2 in (0..8).filter(|d| dirs & (1 << d) != 0) {
                if g.edge(s1, d2) == 0 {
                    continue;
                }
                let s2 = (s1 as isize + g.offset[d2]) as usize;
                let mid = if captured { s1 as u16 } else { NO_SQUARE };
                if s2 == sq {
                    sink.add_with_mids(sq, mid, NO_SQUARE); // igui, or a pass
                } else if self.enterable(s2, color) {
                    if captured {
                        sink.add_with_mids(s2, mid, NO_SQUARE);
                    } else {
                        sink.add(s2, false);
                    }
                }
            }
        }
    }

    /// Area move: up to `steps` king steps over empty squares in any directions, ending on any
    /// of them or capturing on the first enemy reached (which ends the move); coming back to
    /// its own square is a pass. Only where it ends matters, so a breadth-first search over
    /// the empty squares around it gives every move once.
    #[inline(never)]
    pub(super) fn area(&self, sq: usize, steps: usize, color: Color, sink: &mut Sink) {
        let g = &self.variant.geometry;
        // A 9×9 box around the piece holds every path of up to 4 steps (the table allows 2 to
        // 4); each reached square is kept with its index in the box, and the box index of a
        // neighbour is a fixed offset.
        // Speed: the box's reached cells are bits of two words and the depths share one queue
        // (no arrays to clear), the board's edges one mask per square: an area call 5.1k -> 3.8k
        // instructions in random Tenjiku play, 5% of a ply; each square's neighbours read from
        // the position's colour masks, a quarter less again (92M -> 69M instructions in
        // `playout 20000 tenjiku`) (issue 27, item 5). The moves come in the same order as
        // before (the same breadth-first walk), so the games are the same.
        const SIDE: isize = 9;
        const CENTRE: u32 = 4 * 9 + 4;
        let box_offset = DELTAS.map(|(dx, dy)| dy as isize * SIDE + dx as isize);
        // Bit `c % 64` of word `c / 64`: a `u128` shifted by a variable costs several times more.
        let mut reached = [0u64; 2];
        reached[CENTRE as usize / 64] |= 1 << (CENTRE % 64);
        // Breadth first: the squares of one depth, then those of the next (empty squares the
        // move may go on from), each `square << 8 | cell`; at most the 80 other cells.
        let mut queue = [0u32; 81];
        queue[0] = (sq as u32) << 8 | CENTRE;
        let (mut head, mut tail) = (0, 1);
        // Its own square holds the mover, so no step below comes back to it: it passes by
        // stepping off to an empty neighbour and back, which takes two steps.
        let pass = steps >= 2
            && g.neighbour_dirs(sq)
                & !self.neighbours_of_color(sq, Color::Black)
                & !self.neighbours_of_color(sq, Color::White)
                != 0;
        for _ in 1..=steps {
            let end = tail;
            while head < end {
                let (from, cell) = ((queue[head] >> 8) as usize, (queue[head] & 0xff) as isize);
                head += 1;
                // The neighbours' colours from the position's masks: only the directions to an
                // empty or enemy square are looked at, in direction order.
                // Speed: no colour read per neighbour, and a crowded square's friends are passed
                // over at once (issue 27, item 5).
                let enemies = self.neighbours_of_color(from, color.opponent());
                let mut open = g.neighbour_dirs(from) & !self.neighbours_of_color(from, color);
                while open != 0 {
                    let d = open.trailing_zeros() as usize;
                    open &= open - 1;
                    let c = (cell + box_offset[d]) as u32;
                    let (word, bit) = (c as usize / 64, 1u64 << (c % 64));
                    if reached[word] & bit != 0 {
                        continue;
                    }
                    reached[word] |= bit;
                    let t = (from as isize + g.offset[d]) as usize;
                    sink.add(t, false);
                    if enemies & (1 << d) == 0 {
                        queue[tail] = (t as u32) << 8 | c;
                        tail += 1;
                    }
                }
            }
        }
        if pass {
            sink.add_with_mids(sq, NO_SQUARE, NO_SQUARE);
        }
    }

    /// Lion power along one line: with s1, s2, s3 the squares along `d`, jumps to each, igui
    /// and pass (via s1), a step on after capturing on s1 or s2, and the retreat s2 → s1.
    /// `every_step` (`lionline(D,n,n)`, Dai dai): any path of up to `reach` unit steps, each
    /// ending on an empty or enemy square and capturing it. Otherwise (`lionline(D,n)`,
    /// Taishin) two legs, the second only after a capture: s3 after capturing s1 jumps s2.
    /// A move is identified by its end and the squares it captures (docs/PIECE_TABLE.md).
    #[inline(never)]
    pub(super) fn lion_line(&self, sq: usize, d: usize, reach: usize, every_step: bool, color: Color, sink: &mut Sink) {
        let g = &self.variant.geometry;
        let n = g.edge(sq, d).min(reach);
        if n == 0 {
            return;
        }
        let own = color_code(color);
        let s: [usize; 3] = std::array::from_fn(|i| (sq as isize + g.offset[d] * (i as isize + 1)) as usize);
        // Per square along the line: 0 off the line's reach, else its colour code.
        let code = |i: usize| if i < n { self.color_code_at(s[i]) } else { own };
        let enemy = |i: usize| i < n && code(i) != EMPTY && code(i) != own;
        let open = |i: usize| i < n && code(i) != own;
        let mid = |i: usize| s[i] as u16;
        // Ending on s1: a step; igui or pass; the retreat after capturing on s2.
        if open(0) {
            sink.add(s[0], false);
            if reach >= 3 && enemy(1) {
                sink.add_with_mids(s[0], mid(1), NO_SQUARE);
            }
        }
        if enemy(0) {
            sink.add_with_mids(sq, mid(0), NO_SQUARE);
        } else if code(0) == EMPTY {
            sink.add_with_mids(sq, NO_SQUARE, NO_SQUARE);
        }
        // Ending on s2: a jump, or a step through s1 capturing there.
        if open(1) {
            sink.add(s[1], false);
            if enemy(0) {
                sink.add_with_mids(s[1], mid(0), NO_SQUARE);
            }
        }
        // Ending on s3: a jump; through s2 capturing there; or three steps capturing on the way.
        if reach >= 3 && open(2) {
            sink.add(s[2], false);
            if enemy(1) {
                sink.add_with_mids(s[2], mid(1), NO_SQUARE);
            }
            if every_step && enemy(0) && open(1) {
                let second = if enemy(1) { mid(1) } else { NO_SQUARE };
                sink.add_with_mids(s[2], mid(0), second);
            } else if !every_step && enemy(0) {
                sink.add_with_mid(s[2], s[0]);
            }
        }
    }

    /// `teleport`: every empty or enemy square of the board, except an enemy royal that is
    /// protected, i.e. that a piece of its side could capture the mover on after the capture
    /// (seed 001, Taishin's emperor).
    #[inline(never)]
    pub(super) fn teleport(&self, sq: usize, color: Color, sink: &mut Sink) {
        for t in 0..self.variant.geometry.size() {
            match self.at(t) {
                _ if t == sq => {}
                None => sink.add(t, false),
                Some(p) if p.color != color => {
                    if !(self.variant.table.get(p.kind).royal && self.protected_after(Move::new(sq, t))) {
                        sink.add(t, false);
                    }
                }
                Some(_) => {}
            }
        }
    }

    /// Whether the side whose piece `capture` takes could take the mover back on its square.
    /// A teleporting defender counts as able to (its own protection rule is not looked at:
    /// that would recurse, and a piece that reaches every square is read as protecting it).
    fn protected_after(&self, capture: Move) -> bool {
        let to = capture.to as usize;
        let Some(defender) = self.at(to).map(|p| p.color) else { return false };
        let mut after = self.scratch_copy();
        after.make(capture);
        let mut moves = Vec::with_capacity(256);
        let protected = after.squares_of(defender).any(|s| {
            let kind = after.at(s).expect("occupied").kind;
            if after.variant.table.motion_of(kind).teleports {
                return true;
            }
            moves.clear();
            after.generate_from(s, &mut moves);
            moves.iter().any(|&m| {
                let mut hit = false;
                after.for_each_capture(m, |c| hit |= c == to);
                hit
            })
        });
        protected
    }
}
