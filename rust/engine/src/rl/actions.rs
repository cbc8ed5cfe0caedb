//! Action encoding: every legal move of every variant is one integer in one fixed space
//! (docs/ACTIONS.md). The space never depends on the variant, so it stays stable when smaller
//! boards arrive: they are padded into the top-left corner of the 36×36 grid.
//!
//! - `from * 1296 + to` for moves whose effect is fixed by their start and end squares (steps,
//!   slides, jumps, range captures, hook moves, lion jumps, passes as `from == to`);
//! - `MOVE_BLOCK + from * TEMPLATE_COUNT + template` for moves that also capture on the way
//!   (lion double captures, igui, and the three-step lion moves of the other variants);
//! - either of those plus `PROMOTION_BLOCK` for a move that chooses to promote (promotion in a
//!   zone, Tenjiku: the same squares are also a move that declines). Promotion by capture is
//!   no choice, so Taikyoku and Dai dai never use this block.
//!
//! Squares are numbered `row * 36 + column` in the chosen frame: the absolute frame is the board
//! as Black sees it; the mover's frame rotates it 180° when White is to move.

use crate::geometry::{Color, Geometry};
use crate::position::{Move, Position, NO_SQUARE};
use std::sync::OnceLock;

/// Side of the padded square grid every variant is encoded in.
pub const GRID: usize = 36;
/// Squares of the padded grid.
pub const GRID_SQUARES: usize = GRID * GRID;
/// Actions `from * 1296 + to`.
pub const MOVE_BLOCK: usize = GRID_SQUARES * GRID_SQUARES;
/// Multi-leg templates per start square (see [`templates`]).
pub const TEMPLATE_COUNT: usize = 672;
/// Where the promoting actions start: a move that chooses to promote is its unpromoted action
/// plus this (the size of the first two blocks, 2,550,528).
pub const PROMOTION_BLOCK: usize = MOVE_BLOCK + GRID_SQUARES * TEMPLATE_COUNT;
/// Size of the action space: every action without and with the promotion bit.
pub const NUM_ACTIONS: usize = 2 * PROMOTION_BLOCK;

/// Which way the board is seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Frame {
    /// As the side to move sees it: rotated 180° when White is to move (one network for both).
    Mover,
    /// As Black sees it, whoever is to move.
    Absolute,
}

impl Frame {
    /// Reads `mover` or `absolute`.
    pub fn parse(text: &str) -> Option<Frame> {
        match text {
            "mover" => Some(Frame::Mover),
            "absolute" => Some(Frame::Absolute),
            _ => None,
        }
    }

    /// The name `parse` reads.
    pub fn name(self) -> &'static str {
        match self {
            Frame::Mover => "mover",
            Frame::Absolute => "absolute",
        }
    }

    /// Whether squares are rotated for this side to move.
    pub fn flips(self, side: Color) -> bool {
        self == Frame::Mover && side == Color::White
    }
}

/// An offset `(rows, columns)` in the frame; rows grow downward, so forward is negative for the
/// mover in the mover's frame.
pub type Offset = (i8, i8);

/// A multi-leg move relative to its start square: the squares it captures on the way (one or
/// two, in increasing `(row, column)` order) and where it ends (which may be the start: igui).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Template {
    /// How many entries of `captures` are used (1 or 2).
    pub capture_count: u8,
    /// Unused slots are `(0, 0)`.
    pub captures: [Offset; 2],
    /// Where the mover ends; `(0, 0)` is its start square (igui).
    pub end: Offset,
}

impl Template {
    /// The used entries of `captures`.
    pub fn captured(&self) -> &[Offset] {
        &self.captures[..self.capture_count as usize]
    }

    fn new(captured: &[Offset], end: Offset) -> Template {
        let mut captures = [(0, 0); 2];
        captures[..captured.len()].copy_from_slice(captured);
        captures[..captured.len()].sort_unstable();
        Template { capture_count: captured.len() as u8, captures, end }
    }
}

/// The template table, in increasing order: every distinct effect of a path of two or three
/// king steps that captures on at least one of its intermediate stops (never on the start, and
/// the end is not counted as an intermediate capture). This covers the lion (two steps, igui),
/// the lion dog and furious fiend (three steps in a line), the fire demon's demon move, and the
/// partial lions (horned falcon, soaring eagle, free eagle, ...) of all four variants.
pub fn templates() -> &'static [Template] {
    static TABLE: OnceLock<Vec<Template>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let steps: Vec<Offset> =
            (-1..=1i8).flat_map(|dy| (-1..=1i8).map(move |dx| (dy, dx))).filter(|&d| d != (0, 0)).collect();
        let mut table = Vec::new();
        for legs in 2..=3usize {
            for path in 0..steps.len().pow(legs as u32) {
                let mut stops = Vec::with_capacity(legs);
                let (mut y, mut x, mut code) = (0i8, 0i8, path);
                for _ in 0..legs {
                    let (dy, dx) = steps[code % 8];
                    code /= 8;
                    y += dy;
                    x += dx;
                    stops.push((y, x));
                }
                let end = stops[legs - 1];
                let middle = &stops[..legs - 1];
                // Every non-empty subset of the intermediate stops.
                for mask in 1..(1u32 << middle.len()) {
                    let captured: Vec<Offset> =
                        (0..middle.len()).filter(|i| mask & (1 << i) != 0).map(|i| middle[i]).collect();
                    let distinct = captured.len() < 2 || captured[0] != captured[1];
                    if distinct && !captured.contains(&(0, 0)) && !captured.contains(&end) {
                        table.push(Template::new(&captured, end));
                    }
                }
            }
        }
        table.sort_unstable();
        table.dedup();
        assert_eq!(table.len(), TEMPLATE_COUNT, "the template table is part of the action space");
        table
    })
}

/// Index of a template in [`templates`], if the effect is in the table.
pub fn template_index(captured: &[Offset], end: Offset) -> Option<usize> {
    if captured.is_empty() || captured.len() > 2 {
        return None;
    }
    templates().binary_search(&Template::new(captured, end)).ok()
}

/// A square of the board in the padded grid of the frame.
#[inline]
pub fn grid_square(geometry: &Geometry, sq: usize, flip: bool) -> usize {
    let (x, y) = geometry.xy(sq);
    let (x, y) = if flip { (geometry.width as i32 - 1 - x, geometry.height as i32 - 1 - y) } else { (x, y) };
    y as usize * GRID + x as usize
}

/// The board square at a grid square of the frame (`None` in the padding).
pub fn board_square(geometry: &Geometry, grid: usize, flip: bool) -> Option<usize> {
    let (x, y) = ((grid % GRID) as i32, (grid / GRID) as i32);
    if x >= geometry.width as i32 || y >= geometry.height as i32 {
        return None;
    }
    let (x, y) = if flip { (geometry.width as i32 - 1 - x, geometry.height as i32 - 1 - y) } else { (x, y) };
    geometry.square(x, y)
}

fn offset(from: usize, to: usize) -> Offset {
    (((to / GRID) as i32 - (from / GRID) as i32) as i8, ((to % GRID) as i32 - (from % GRID) as i32) as i8)
}

/// The action of a legal move of `pos`.
///
/// Panics if a move captures on the way in a way no template describes: the template table is
/// designed to make that impossible, and the random-game tests check it.
pub fn action_of(pos: &Position, mv: Move, frame: Frame) -> u32 {
    let geometry = &pos.variant.geometry;
    let flip = frame.flips(pos.side_to_move());
    let from = grid_square(geometry, mv.from as usize, flip);
    let to = grid_square(geometry, mv.to as usize, flip);
    let promotion = if mv.promote() { PROMOTION_BLOCK } else { 0 };
    if mv.mid == NO_SQUARE {
        return (promotion + from * GRID_SQUARES + to) as u32;
    }
    let mid = offset(from, grid_square(geometry, mv.mid as usize, flip));
    let end = offset(from, to);
    let template = if mv.mid2() == NO_SQUARE {
        template_index(&[mid], end)
    } else {
        template_index(&[mid, offset(from, grid_square(geometry, mv.mid2() as usize, flip))], end)
    }
    .expect("every multi-leg move has a template");
    (promotion + MOVE_BLOCK + from * TEMPLATE_COUNT + template) as u32
}

/// The legal moves of `pos` with their actions, sorted by action.
///
/// Sorting a thousand moves by comparison costs several times their generation. The generator
/// lists a piece's moves together and the pieces in board order, so the one-step actions
/// (`from * 1296 + to`, the first block) come out in order by taking the runs of one start
/// square in the frame's order, and each run's end squares through a bitmap; the few
/// multi-leg and promoting actions, in the later blocks, are sorted apart. A list of any other
/// shape is sorted as a whole: the result is the same.
pub fn legal_pairs(pos: &Position, moves: &[Move], frame: Frame) -> Vec<(u32, Move)> {
    sorted_by_runs(pos, moves, frame).unwrap_or_else(|| {
        let mut pairs: Vec<(u32, Move)> = moves.iter().map(|&mv| (action_of(pos, mv, frame), mv)).collect();
        pairs.sort_unstable_by_key(|&(action, _)| action);
        pairs
    })
}

/// `legal_pairs` from the runs of one start square, or None if `moves` is not made of such
/// runs in board order (or lists one action twice).
fn sorted_by_runs(pos: &Position, moves: &[Move], frame: Frame) -> Option<Vec<(u32, Move)>> {
    if moves.len() > u16::MAX as usize {
        return None;
    }
    // The frame turns the board for White: its last square comes first, so the runs are read
    // from the end (the order within a run does not matter).
    if frame.flips(pos.side_to_move()) {
        by_runs(pos, moves, frame, (0..moves.len()).rev())
    } else {
        by_runs(pos, moves, frame, 0..moves.len())
    }
}

fn by_runs(
    pos: &Position,
    moves: &[Move],
    frame: Frame,
    order: impl Iterator<Item = usize>,
) -> Option<Vec<(u32, Move)>> {
    let geometry = &pos.variant.geometry;
    let flip = frame.flips(pos.side_to_move());
    let mut pairs = Vec::with_capacity(moves.len());
    let mut later = Vec::new();
    // The end squares of the current run, and the words of `ends` it touched (a piece reaches a
    // few rows, not the board).
    let mut ends = [0u64; GRID_SQUARES.div_ceil(64)];
    let mut move_at = [0u16; GRID_SQUARES];
    let (mut low, mut high) = (ends.len(), 0);
    let mut run_from = None;
    let mut flush = |from: usize, ends: &mut [u64], low: usize, high: usize, move_at: &[u16]| {
        for word in low..=high.min(ends.len() - 1) {
            let mut bits = std::mem::take(&mut ends[word]);
            while bits != 0 {
                let to = word * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                pairs.push(((from + to) as u32, moves[move_at[to] as usize]));
            }
        }
    };
    for i in order {
        let mv = moves[i];
        if run_from.is_none_or(|(square, _)| square != mv.from) {
            if let Some((_, from)) = run_from {
                flush(from, &mut ends, low, high, &move_at);
                (low, high) = (ends.len(), 0);
            }
            run_from = Some((mv.from, grid_square(geometry, mv.from as usize, flip) * GRID_SQUARES));
        }
        if mv.mid != NO_SQUARE || mv.promote() {
            later.push((action_of(pos, mv, frame), mv));
            continue;
        }
        let to = grid_square(geometry, mv.to as usize, flip);
        let (word, bit) = (to / 64, 1 << (to % 64));
        if ends[word] & bit != 0 {
            return None;
        }
        ends[word] |= bit;
        move_at[to] = i as u16;
        low = low.min(word);
        high = high.max(word);
    }
    if let Some((_, from)) = run_from {
        flush(from, &mut ends, low, high, &move_at);
    }
    if !pairs.is_sorted_by_key(|&(action, _)| action) {
        return None;
    }
    later.sort_unstable_by_key(|&(action, _)| action);
    pairs.append(&mut later);
    Some(pairs)
}

/// The sorted actions of `moves` (the legal moves of `pos`).
pub fn legal_actions(pos: &Position, moves: &[Move], frame: Frame) -> Vec<u32> {
    legal_pairs(pos, moves, frame).into_iter().map(|(action, _)| action).collect()
}

/// The legal move of `pos` whose action is `action`, if any.
pub fn move_of(pos: &Position, moves: &[Move], action: u32, frame: Frame) -> Option<Move> {
    moves.iter().copied().find(|&mv| action_of(pos, mv, frame) == action)
}

/// What an action means, independent of any position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ActionShape {
    /// A move from one grid square to another (`from == to` is a pass).
    Simple {
        /// Start grid square.
        from: usize,
        /// End grid square.
        to: usize,
    },
    /// A multi-leg move from a grid square following a template.
    MultiLeg {
        /// Start grid square.
        from: usize,
        /// Captures and end, relative to `from`.
        template: Template,
    },
}

/// Decodes an action into its grid squares (`None` past the end of the space); whether it
/// promotes is `promotes(action)`.
pub fn shape(action: u32) -> Option<ActionShape> {
    let action = action as usize;
    if action >= NUM_ACTIONS {
        return None;
    }
    let action = action % PROMOTION_BLOCK;
    if action < MOVE_BLOCK {
        Some(ActionShape::Simple { from: action / GRID_SQUARES, to: action % GRID_SQUARES })
    } else {
        let rest = action - MOVE_BLOCK;
        Some(ActionShape::MultiLeg { from: rest / TEMPLATE_COUNT, template: templates()[rest % TEMPLATE_COUNT] })
    }
}

/// Whether an action is in the promotion block (a move that chooses to promote).
pub fn promotes(action: u32) -> bool {
    (PROMOTION_BLOCK..NUM_ACTIONS).contains(&(action as usize))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::Variant;

    #[test]
    fn template_table_is_fixed() {
        let table = templates();
        assert_eq!(table.len(), TEMPLATE_COUNT);
        assert!(table.windows(2).all(|w| w[0] < w[1]));
        // Lion igui: capture the square in front, stay.
        assert!(template_index(&[(-1, 0)], (0, 0)).is_some());
        // Lion dog: capture the first and second squares in a line, end on the third.
        assert!(template_index(&[(-1, 0), (-2, 0)], (-3, 0)).is_some());
        // Order of the captures does not matter.
        assert_eq!(template_index(&[(-1, 1), (-1, 0)], (0, 1)), template_index(&[(-1, 0), (-1, 1)], (0, 1)));
        // Beyond three king steps: not in the table.
        assert!(template_index(&[(-1, 0)], (-4, 0)).is_none());
        // The table is symmetric under the 180° rotation of the mover's frame.
        for t in table {
            let flipped: Vec<Offset> = t.captured().iter().map(|&(y, x)| (-y, -x)).collect();
            assert!(template_index(&flipped, (-t.end.0, -t.end.1)).is_some());
        }
        // The first template: one capture, smallest offsets first.
        assert_eq!(table[0], Template { capture_count: 1, captures: [(-2, -2), (0, 0)], end: (-3, -3) });
    }

    #[test]
    fn squares_round_trip_in_both_frames() {
        let variant = Variant::load("taikyoku", &[]).unwrap();
        let g = &variant.geometry;
        for sq in [0, 35, 36, 700, 1295] {
            for flip in [false, true] {
                assert_eq!(board_square(g, grid_square(g, sq, flip), flip), Some(sq));
            }
        }
        assert_eq!(grid_square(g, 0, true), 1295);
    }

    #[test]
    fn actions_are_distinct_and_invert() {
        let variant = Variant::load("taikyoku", &[]).unwrap();
        let mut game = crate::Game::new(variant);
        crate::random::random_playout(&mut game, 7, 300);
        for frame in [Frame::Mover, Frame::Absolute] {
            let moves = game.position.legal_moves();
            let actions = legal_actions(&game.position, &moves, frame);
            assert!(actions.windows(2).all(|w| w[0] < w[1]), "no two legal moves share an action");
            for &mv in &moves {
                let action = action_of(&game.position, mv, frame);
                assert!((action as usize) < NUM_ACTIONS);
                assert_eq!(move_of(&game.position, &moves, action, frame), Some(mv));
            }
        }
    }

    #[test]
    fn pairs_sorted_from_runs_equal_a_full_sort() {
        // Every variant (promotion offers, multi-leg moves, area movers), both sides to move
        // and both frames, along random games: the run-based order is the sorted order.
        for name in ["taikyoku", "tenjiku", "daidai", "taishin"] {
            let variant = Variant::load(name, &[]).unwrap();
            let mut game = crate::Game::new(variant);
            let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(3);
            let (mut shortcuts, mut lists) = (0, 0);
            for _ in 0..400 {
                let moves = game.legal_moves();
                if moves.is_empty() || game.end_given(&moves).is_some() {
                    break;
                }
                for frame in [Frame::Mover, Frame::Absolute] {
                    let mut expected: Vec<(u32, Move)> =
                        moves.iter().map(|&mv| (action_of(&game.position, mv, frame), mv)).collect();
                    expected.sort_unstable_by_key(|&(action, _)| action);
                    shortcuts += sorted_by_runs(&game.position, &moves, frame).is_some() as usize;
                    lists += 1;
                    assert_eq!(legal_pairs(&game.position, &moves, frame), expected, "{name}");
                }
                game.play(moves[rand::Rng::gen_range(&mut rng, 0..moves.len())]);
            }
            assert_eq!(shortcuts, lists, "{name}: the generator lists a piece's moves together, pieces in board order");
        }
    }
}
