//! Observations: a game written as a 36×36×P tensor (row, column, plane), channel-last, in the
//! frame of `actions` (docs/ACTIONS.md lists the planes). Smaller boards are padded into the
//! top-left corner; the `on_board` plane marks the real squares.
//!
//! Two layouts:
//! - one-hot: a plane per piece type for the mover and for the opponent, then the promoted
//!   flags and the constant planes;
//! - compact: the piece type (1-based, 0 for none) of the mover's and the opponent's piece on a
//!   square, for embedding layers, then the same flags and constants.

use crate::game::Game;
use crate::geometry::Color;
use crate::position::{Piece, Position};
use crate::rl::actions::{board_square, grid_square, Frame, GRID_SQUARES};
use crate::variant::Variant;

/// Planes after the piece planes, in this order (both layouts).
const TRAILING: [&str; 5] = ["on_board", "repetitions", "white_to_move", "move_number_high", "move_number_low"];

/// Two more, last, in a variant that limits passes in a row (Taishin): each side's current run
/// decides whether it may pass.
const PASS_PLANES: [&str; 2] = ["mover_passes", "opponent_passes"];

/// The pass planes a variant has: all of `PASS_PLANES`, or none.
fn pass_planes(variant: &Variant) -> usize {
    if variant.rules.max_consecutive_passes.is_some() {
        PASS_PLANES.len()
    } else {
        0
    }
}

/// The layout of an observation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// A 0/1 plane per piece type for each side.
    OneHot,
    /// A plane per side holding the piece type (1-based, 0 for none), for embedding layers.
    Compact,
}

/// A value an observation can be written as (uint8, uint16, float32).
pub trait Cell: Copy + Send + Sync + PartialEq {
    /// The value of an unset entry.
    const ZERO: Self;
    /// Converts a plane value (`u8` saturates at 255).
    fn from_u16(value: u16) -> Self;
}

impl Cell for u8 {
    const ZERO: Self = 0;
    #[inline]
    fn from_u16(value: u16) -> Self {
        value.min(255) as u8
    }
}

impl Cell for u16 {
    const ZERO: Self = 0;
    #[inline]
    fn from_u16(value: u16) -> Self {
        value
    }
}

impl Cell for f32 {
    const ZERO: Self = 0.0;
    #[inline]
    fn from_u16(value: u16) -> Self {
        value as f32
    }
}

/// Plane names of a variant in a layout, in order.
pub fn plane_names(variant: &Variant, layout: Layout) -> Vec<String> {
    let mut names = Vec::new();
    match layout {
        Layout::OneHot => {
            for side in ["mover", "opponent"] {
                for kind in 0..variant.table.len() {
                    names.push(format!("{side}/{}", variant.table.get(kind as u16).key));
                }
            }
            names.push("mover_promoted".into());
            names.push("opponent_promoted".into());
        }
        Layout::Compact => {
            names.push("mover_piece".into());
            names.push("opponent_piece".into());
            names.push("promoted".into());
        }
    }
    names.extend(TRAILING.iter().map(|name| name.to_string()));
    names.extend(PASS_PLANES[..pass_planes(variant)].iter().map(|name| name.to_string()));
    names
}

/// Number of planes of a variant in a layout.
pub fn plane_count(variant: &Variant, layout: Layout) -> usize {
    let pieces = match layout {
        Layout::OneHot => 2 * variant.table.len() + 2,
        Layout::Compact => 3,
    };
    pieces + TRAILING.len() + pass_planes(variant)
}

/// Values of one observation, element count `GRID_SQUARES * plane_count`.
pub fn observation_len(variant: &Variant, layout: Layout) -> usize {
    GRID_SQUARES * plane_count(variant, layout)
}

/// Where an observation writes: straight into a buffer, or into a buffer reused from step to
/// step, remembering the entries it set so the next write clears only those (an observation is
/// ~99% zeros: clearing 800 KB per step would cost more than everything else).
trait Target<T> {
    fn set(&mut self, index: usize, value: T);
    /// Zeros a range (one cell's planes).
    fn clear(&mut self, range: std::ops::Range<usize>);
}

impl<T: Cell> Target<T> for [T] {
    #[inline]
    fn set(&mut self, index: usize, value: T) {
        self[index] = value;
    }

    #[inline]
    fn clear(&mut self, range: std::ops::Range<usize>) {
        self[range].fill(T::ZERO);
    }
}

struct Tracked<'a, T> {
    out: &'a mut [T],
    written: &'a mut Vec<u32>,
}

impl<T: Cell> Target<T> for Tracked<'_, T> {
    #[inline]
    fn set(&mut self, index: usize, value: T) {
        self.out[index] = value;
        self.written.push(index as u32);
    }

    #[inline]
    fn clear(&mut self, range: std::ops::Range<usize>) {
        self.out[range].fill(T::ZERO);
    }
}

/// Writes `game` into `out` (length `observation_len`). When `zeroed` is false the buffer is
/// cleared first; pass true for freshly zero-allocated memory to skip that pass.
pub fn write<T: Cell>(game: &Game, frame: Frame, layout: Layout, out: &mut [T], zeroed: bool) {
    write_for(game, game.side_to_move(), frame, layout, out, zeroed);
}

/// Rewrites an observation in a reused buffer: clears the entries listed in `written` (those
/// set by the previous call with this buffer, or none for a zeroed buffer), writes `game`, and
/// lists the entries it set.
pub fn rewrite<T: Cell>(game: &Game, frame: Frame, layout: Layout, out: &mut [T], written: &mut Vec<u32>) {
    assert_eq!(out.len(), observation_len(&game.position.variant, layout), "observation buffer of the wrong size");
    for &index in written.iter() {
        out[index as usize] = T::ZERO;
    }
    written.clear();
    write_into(game, game.side_to_move(), frame, layout, &mut Tracked { out, written }, false);
}

/// Writes `game` as `viewer` sees it, into a zeroed buffer (or one cleared first when `zeroed`
/// is false): the piece planes and the frame are `viewer`'s (the `mover` planes hold its pieces,
/// the mover frame turns the board to it) and so are the pass planes (its run, then the other
/// side's); the other constant planes keep the game's meaning (`white_to_move` says who is to
/// move). For the side to move it is `write`; for the other side, what the PettingZoo env shows
/// the waiting agent.
pub fn write_for<T: Cell>(game: &Game, viewer: Color, frame: Frame, layout: Layout, out: &mut [T], zeroed: bool) {
    assert_eq!(out.len(), observation_len(&game.position.variant, layout), "observation buffer of the wrong size");
    write_into(game, viewer, frame, layout, out, !zeroed);
}

/// What an observation shows: the pieces with the side to move and the counters.
struct Snapshot<F> {
    /// The piece on a board square, if any.
    piece_at: F,
    side: Color,
    /// Whose view: the side to move, except for `write_for`.
    viewer: Color,
    repetitions: u32,
    move_number: u32,
    /// Passes in a row: the side to move's, the other side's.
    passes: [u8; 2],
}

fn write_into<T: Cell, O: Target<T> + ?Sized>(
    game: &Game,
    viewer: Color,
    frame: Frame,
    layout: Layout,
    out: &mut O,
    clear: bool,
) {
    let pos = &game.position;
    let snapshot = Snapshot {
        piece_at: |sq| pos.at(sq),
        side: pos.side_to_move(),
        viewer,
        repetitions: game.repetitions().saturating_sub(1),
        move_number: pos.move_number(),
        passes: [pos.consecutive_passes(viewer), pos.consecutive_passes(viewer.opponent())],
    };
    write_snapshot(&pos.variant, snapshot, frame, layout, out, clear);
}

/// Writes a snapshot cell by cell, clearing each cell's planes first when `clear`: a buffer
/// cleared as a whole (800 KB) has left the cache by the time its cells are written.
fn write_snapshot<T: Cell, O: Target<T> + ?Sized, F: Fn(usize) -> Option<Piece>>(
    variant: &Variant,
    snapshot: Snapshot<F>,
    frame: Frame,
    layout: Layout,
    out: &mut O,
    clear: bool,
) {
    let planes = plane_count(variant, layout);
    let side = snapshot.side;
    let viewer = snapshot.viewer;
    let flip = frame.flips(viewer);
    let geometry = &variant.geometry;
    let kinds = variant.table.len();
    let extra = pass_planes(variant);
    let first = planes - TRAILING.len() - extra;
    let move_number = snapshot.move_number.min(u16::MAX as u32) as u16;
    let all = [
        T::from_u16(1),
        T::from_u16(snapshot.repetitions.min(u16::MAX as u32) as u16),
        T::from_u16((side == Color::White) as u16),
        T::from_u16(move_number >> 8),
        T::from_u16(move_number & 0xff),
        T::from_u16(snapshot.passes[0] as u16),
        T::from_u16(snapshot.passes[1] as u16),
    ];
    // The constant planes that are not zero, as (plane, value): the same for every cell.
    let mut constants = [(0, T::ZERO); TRAILING.len() + PASS_PLANES.len()];
    let mut count = 0;
    for (i, &value) in all[..TRAILING.len() + extra].iter().enumerate() {
        if value != T::ZERO {
            constants[count] = (first + i, value);
            count += 1;
        }
    }
    let constants = &constants[..count];
    for grid in 0..GRID_SQUARES {
        let cell = grid * planes;
        if clear {
            out.clear(cell..cell + planes);
        }
        let Some(sq) = board_square(geometry, grid, flip) else { continue };
        if let Some(piece) = (snapshot.piece_at)(sq) {
            let theirs = piece.color != viewer;
            match layout {
                Layout::OneHot => {
                    out.set(cell + theirs as usize * kinds + piece.kind as usize, T::from_u16(1));
                    if piece.promoted {
                        out.set(cell + 2 * kinds + theirs as usize, T::from_u16(1));
                    }
                }
                Layout::Compact => {
                    out.set(cell + theirs as usize, T::from_u16(piece.kind + 1));
                    if piece.promoted {
                        out.set(cell + 2, T::from_u16(1));
                    }
                }
            }
        }
        for &(plane, value) in constants {
            out.set(cell + plane, value);
        }
    }
}

/// The compact board of a position: one `u16` per square of the padded 36×36 grid in the
/// absolute frame (row-major), 0 for an empty square, else
/// `(kind + 1) << 2 | promoted << 1 | color` (color 0 Black, 1 White). Datasets store it.
pub fn compact_board(pos: &Position, out: &mut [u16]) {
    assert_eq!(out.len(), GRID_SQUARES, "a compact board has 1296 squares");
    out.fill(0);
    let geometry = &pos.variant.geometry;
    for (sq, piece) in pos.squares() {
        out[grid_square(geometry, sq, false)] = board_code(piece);
    }
}

/// `compact_board` of `pos`, from `before`, the compact board of the position before its last
/// move: only the squares that move changed are read (self-play records one board per ply).
pub fn compact_board_after(pos: &Position, before: &[u16], out: &mut [u16]) {
    assert_eq!(out.len(), GRID_SQUARES, "a compact board has 1296 squares");
    out.copy_from_slice(before);
    update_compact_board(pos, out);
}

/// `compact_board_after` in place: `board` holds the compact board of the position before
/// `pos`'s last move and is left holding `pos`'s.
pub fn update_compact_board(pos: &Position, board: &mut [u16]) {
    assert_eq!(board.len(), GRID_SQUARES, "a compact board has 1296 squares");
    let mut changed = Vec::with_capacity(4);
    pos.last_move_squares(&mut changed);
    for sq in changed {
        board[grid_square(&pos.variant.geometry, sq, false)] = pos.at(sq).map_or(0, board_code);
    }
}

/// The compact code of one piece (see `compact_board`).
pub fn board_code(piece: Piece) -> u16 {
    ((piece.kind + 1) << 2) | ((piece.promoted as u16) << 1) | piece.color.index() as u16
}

/// The pieces of a compact board, on the variant's squares. Codes that name no piece type of the
/// variant, or pieces in the padding, are errors (corrupt data).
pub fn board_pieces(variant: &Variant, board: &[u16]) -> Result<Vec<(usize, Piece)>, BoardError> {
    if board.len() != GRID_SQUARES {
        return Err(BoardError::Length(board.len()));
    }
    let geometry = &variant.geometry;
    let mut pieces = Vec::new();
    for (grid, &code) in board.iter().enumerate() {
        if code == 0 {
            continue;
        }
        let kind = (code >> 2) as usize;
        if kind == 0 || kind > variant.table.len() {
            return Err(BoardError::UnknownCode { grid, code, variant: variant.name.clone() });
        }
        let sq = crate::rl::actions::board_square(geometry, grid, false).ok_or(BoardError::Padding {
            grid,
            width: geometry.width,
            height: geometry.height,
        })?;
        let color = if code & 1 == 0 { Color::Black } else { Color::White };
        let kind = (kind - 1) as crate::table::Kind;
        pieces.push((sq, Piece { kind, origin: kind, color, promoted: code & 2 != 0 }));
    }
    Ok(pieces)
}

/// Why a stored compact board cannot be decoded (corrupt data or a wrong buffer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoardError {
    /// The board does not have `GRID_SQUARES` codes; carries how many it has.
    Length(usize),
    /// A code names no piece type of the variant.
    UnknownCode {
        /// The grid square (0..GRID_SQUARES).
        grid: usize,
        /// The code found.
        code: u16,
        /// The variant's name.
        variant: String,
    },
    /// A piece stands in the padding outside the variant's board.
    Padding {
        /// The grid square.
        grid: usize,
        /// The board's width.
        width: usize,
        /// The board's height.
        height: usize,
    },
    /// The observation buffer has the wrong length.
    Buffer {
        /// The observation's length.
        expected: usize,
        /// The buffer's length.
        found: usize,
    },
}

impl std::fmt::Display for BoardError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Length(n) => write!(f, "a compact board has {GRID_SQUARES} squares, not {n}"),
            Self::UnknownCode { grid, code, variant } => {
                write!(f, "square {grid}: code {code} names no piece type of {variant}")
            }
            Self::Padding { grid, width, height } => {
                write!(f, "square {grid}: a piece in the padding outside the {width}x{height} board")
            }
            Self::Buffer { expected, found } => {
                write!(f, "observation buffer of the wrong size ({found}, expected {expected})")
            }
        }
    }
}

impl std::error::Error for BoardError {}

/// Writes the observation of a stored position (compact board, side to move, earlier
/// occurrences, move number, the side to move's and the other side's passes in a row) into a
/// zeroed buffer: datasets decode to the same planes as games.
#[allow(clippy::too_many_arguments)]
pub fn write_board<T: Cell>(
    variant: &Variant,
    board: &[u16],
    white_to_move: bool,
    repetitions: u32,
    move_number: u32,
    passes: [u8; 2],
    frame: Frame,
    layout: Layout,
    out: &mut [T],
) -> Result<(), BoardError> {
    if out.len() != observation_len(variant, layout) {
        return Err(BoardError::Buffer { expected: observation_len(variant, layout), found: out.len() });
    }
    let mut at = vec![None; variant.geometry.width * variant.geometry.height];
    for (sq, piece) in board_pieces(variant, board)? {
        at[sq] = Some(piece);
    }
    let side = if white_to_move { Color::White } else { Color::Black };
    let snapshot = Snapshot { piece_at: |sq| at[sq], side, viewer: side, repetitions, move_number, passes };
    write_snapshot(variant, snapshot, frame, layout, out, false);
    Ok(())
}

/// Writes many games into consecutive observations of `out`, in parallel on the current rayon
/// pool. Every game must be of the same variant.
pub fn write_batch<T: Cell>(games: &[&Game], frame: Frame, layout: Layout, out: &mut [T], zeroed: bool) {
    use rayon::prelude::*;
    if games.is_empty() {
        return;
    }
    let len = observation_len(&games[0].position.variant, layout);
    assert_eq!(out.len(), len * games.len(), "batch buffer of the wrong size");
    out.par_chunks_mut(len).zip(games.par_iter()).for_each(|(chunk, game)| write(game, frame, layout, chunk, zeroed));
}

/// `rewrite` for many games and their reused buffers, in parallel on the current rayon pool.
pub fn rewrite_batch<T: Cell>(games: &[Game], frame: Frame, layout: Layout, out: &mut [T], written: &mut [Vec<u32>]) {
    use rayon::prelude::*;
    if games.is_empty() {
        return;
    }
    let len = observation_len(&games[0].position.variant, layout);
    assert_eq!(out.len(), len * games.len(), "batch buffer of the wrong size");
    out.par_chunks_mut(len)
        .zip(games.par_iter())
        .zip(written.par_iter_mut())
        .for_each(|((chunk, game), written)| rewrite(game, frame, layout, chunk, written));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Variant;

    #[test]
    fn one_hot_marks_every_piece_once() {
        let variant = Variant::load("taikyoku", &[]).unwrap();
        let game = Game::new(variant.clone());
        let planes = plane_count(&variant, Layout::OneHot);
        assert_eq!(plane_names(&variant, Layout::OneHot).len(), planes);
        let mut out = vec![0u8; observation_len(&variant, Layout::OneHot)];
        write(&game, Frame::Mover, Layout::OneHot, &mut out, true);
        let kinds = variant.table.len();
        let piece_ones: usize =
            out.chunks(planes).map(|cell| cell[..2 * kinds].iter().map(|&v| v as usize).sum::<usize>()).sum();
        assert_eq!(piece_ones, 804);
        // Every square is on the board and it is Black's first move.
        assert!(out.chunks(planes).all(|cell| cell[planes - 5] == 1 && cell[planes - 3] == 0 && cell[planes - 1] == 1));
    }

    #[test]
    fn mover_frame_makes_the_opening_look_the_same_for_both_sides() {
        let variant = Variant::load("taikyoku", &[]).unwrap();
        let mut black = Game::new(variant.clone());
        let mut white = Game::new(variant.clone());
        white.position.set_side(Color::White);
        white.reset_history();
        let len = observation_len(&variant, Layout::Compact);
        let (mut a, mut b) = (vec![0u16; len], vec![0u16; len]);
        write(&black, Frame::Mover, Layout::Compact, &mut a, false);
        write(&white, Frame::Mover, Layout::Compact, &mut b, false);
        let planes = plane_count(&variant, Layout::Compact);
        // Piece planes agree (the setup is symmetric); only the side-to-move plane differs.
        for (ca, cb) in a.chunks(planes).zip(b.chunks(planes)) {
            assert_eq!(ca[..3], cb[..3]);
            assert_eq!((ca[5], cb[5]), (0, 1));
        }
        black.position.set_side(Color::White);
        black.reset_history();
        write(&black, Frame::Absolute, Layout::Compact, &mut a, false);
        write(&white, Frame::Absolute, Layout::Compact, &mut b, false);
        assert_eq!(a, b);
    }

    #[test]
    fn compact_boards_decode_to_the_same_observation() {
        let variant = Variant::load("taikyoku", &[]).unwrap();
        let mut game = Game::new(variant.clone());
        crate::random::random_playout(&mut game, 3, 400);
        let mut board = vec![0u16; GRID_SQUARES];
        compact_board(&game.position, &mut board);
        let len = observation_len(&variant, Layout::OneHot);
        let (mut direct, mut decoded) = (vec![0u8; len], vec![0u8; len]);
        write(&game, Frame::Mover, Layout::OneHot, &mut direct, true);
        let white = game.side_to_move() == Color::White;
        let repetitions = game.repetitions() - 1;
        write_board(
            &variant,
            &board,
            white,
            repetitions,
            game.position.move_number(),
            [0, 0],
            Frame::Mover,
            Layout::OneHot,
            &mut decoded,
        )
        .unwrap();
        assert!(direct == decoded);
        board[5] = 4 * 999;
        assert!(write_board(&variant, &board, white, 0, 1, [0, 0], Frame::Mover, Layout::OneHot, &mut decoded).is_err());
    }

    #[test]
    fn a_compact_board_follows_a_move_as_it_is_built_afresh() {
        // Every variant (Tenjiku's fire demons burn, Dai dai's lions capture twice): ply after
        // ply, the board updated from the one before equals the board built from the position.
        for name in crate::variant_names() {
            let variant = Variant::load(name, &[]).unwrap();
            let mut game = Game::new(variant.clone());
            let mut rng = crate::hash::splitmix64(7);
            let (mut before, mut after, mut fresh) =
                (vec![0u16; GRID_SQUARES], vec![0u16; GRID_SQUARES], vec![0u16; GRID_SQUARES]);
            compact_board(&game.position, &mut before);
            for ply in 0..600 {
                let moves = game.legal_moves();
                if moves.is_empty() || game.recorded_end().is_some() {
                    break;
                }
                rng = crate::hash::splitmix64(rng);
                game.play(moves[rng as usize % moves.len()]);
                compact_board_after(&game.position, &before, &mut after);
                compact_board(&game.position, &mut fresh);
                assert!(after == fresh, "{name} ply {ply}");
                std::mem::swap(&mut before, &mut after);
            }
        }
    }

    #[test]
    fn the_side_to_move_sees_what_write_writes() {
        let variant = Variant::load("taishin", &[]).unwrap();
        let mut game = Game::new(variant.clone());
        crate::random::random_playout(&mut game, 5, 90);
        let len = observation_len(&variant, Layout::OneHot);
        let (mut direct, mut seen, mut other) = (vec![0u8; len], vec![7u8; len], vec![0u8; len]);
        write(&game, Frame::Mover, Layout::OneHot, &mut direct, true);
        write_for(&game, game.side_to_move(), Frame::Mover, Layout::OneHot, &mut seen, false);
        assert!(direct == seen);
        write_for(&game, game.side_to_move().opponent(), Frame::Mover, Layout::OneHot, &mut other, true);
        assert!(direct != other);
    }

    #[test]
    fn rewrite_in_a_reused_buffer_equals_a_fresh_write() {
        let variant = Variant::load("taikyoku", &[]).unwrap();
        let mut game = Game::new(variant.clone());
        let len = observation_len(&variant, Layout::OneHot);
        let (mut reused, mut written) = (vec![0u8; len], Vec::new());
        for seed in 0..3 {
            crate::random::random_playout(&mut game, seed, 150);
            rewrite(&game, Frame::Mover, Layout::OneHot, &mut reused, &mut written);
            let mut fresh = vec![0u8; len];
            write(&game, Frame::Mover, Layout::OneHot, &mut fresh, true);
            assert!(reused == fresh, "seed {seed}");
        }
    }
}
