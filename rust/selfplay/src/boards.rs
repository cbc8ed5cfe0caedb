//! A game's boards as self-play records them (`BoardLog`): a board in full where the game
//! starts, then per position only the squares the move before it changed. A ply changes a few
//! of the 1,296 squares, so a game of thousands of plies keeps kilobytes instead of megabytes
//! (one full board a ply would be 2.6 KB); the boards are written out in full, one after
//! another, when their batch is encoded (`Replay`).

use taikyoku_engine::rl::actions::{grid_square, GRID_SQUARES};
use taikyoku_engine::rl::observation::{board_code, compact_board};
use taikyoku_engine::Position;

/// The header of an entry holding a whole board rather than changes.
const WHOLE: u16 = u16::MAX;

/// The compact boards (`observation::compact_board`) of a game's recorded positions, in order.
#[derive(Clone, Debug, Default)]
pub struct BoardLog {
    /// Per board, a header and its data: `WHOLE` and `GRID_SQUARES` codes, or `n` and `n`
    /// pairs (grid square, code) that differ from the board before.
    cells: Vec<u16>,
    len: usize,
    /// Scratch: the squares a move changed.
    changed: Vec<usize>,
}

/// Two logs are equal when they log the same boards the same way (the scratch aside).
impl PartialEq for BoardLog {
    fn eq(&self, other: &BoardLog) -> bool {
        (self.len, &self.cells) == (other.len, &other.cells)
    }
}

impl BoardLog {
    /// Boards logged.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no board is logged.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Logs the board of `pos` in full.
    pub fn push_whole(&mut self, pos: &Position) {
        self.cells.push(WHOLE);
        let start = self.cells.len();
        self.cells.resize(start + GRID_SQUARES, 0);
        compact_board(pos, &mut self.cells[start..]);
        self.len += 1;
    }

    /// Logs the board of `pos`, whose last move was made from the position logged last: the
    /// squares that move changed.
    pub fn push_after_move(&mut self, pos: &Position) {
        self.changed.clear();
        pos.last_move_squares(&mut self.changed);
        self.cells.push(self.changed.len() as u16);
        let geometry = &pos.variant.geometry;
        for &sq in &self.changed {
            self.cells.push(grid_square(geometry, sq, false) as u16);
            self.cells.push(pos.at(sq).map_or(0, board_code));
        }
        self.len += 1;
    }

    /// Every board in full, one after another (tests and checks; batches use `Replay`).
    pub fn boards(&self) -> Vec<u16> {
        let mut out = Vec::with_capacity(self.len * GRID_SQUARES);
        let mut replay = Replay::default();
        for _ in 0..self.len {
            replay.next_into(self, &mut out);
        }
        out
    }
}

/// Reads a log's boards in order: the last board read, and where the next one starts.
#[derive(Clone, Debug)]
pub struct Replay {
    board: Vec<u16>,
    offset: usize,
    /// Boards read so far.
    read: usize,
}

impl Default for Replay {
    /// At a log's first board.
    fn default() -> Self {
        Replay { board: vec![0; GRID_SQUARES], offset: 0, read: 0 }
    }
}

impl Replay {
    /// Boards of the log read so far (the index of the next one).
    pub fn read(&self) -> usize {
        self.read
    }

    /// Appends the next board of `log` to `out`.
    ///
    /// # Panics
    /// If every board of `log` was read.
    pub fn next_into(&mut self, log: &BoardLog, out: &mut Vec<u16>) {
        assert!(self.read < log.len, "board {} of a log of {}", self.read, log.len);
        let header = log.cells[self.offset];
        self.offset += 1;
        if header == WHOLE {
            let end = self.offset + GRID_SQUARES;
            self.board.copy_from_slice(&log.cells[self.offset..end]);
            self.offset = end;
        } else {
            let end = self.offset + 2 * header as usize;
            for change in log.cells[self.offset..end].chunks_exact(2) {
                self.board[change[0] as usize] = change[1];
            }
            self.offset = end;
        }
        self.read += 1;
        out.extend_from_slice(&self.board);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use taikyoku_engine::{variant_names, Game, Variant};

    /// Every variant: a random game logged move by move (with a whole board now and then, as
    /// after a gap) replays the boards `compact_board` gives, read at once or in two parts
    /// (a batch's boards end inside a game, the next batch's go on from there).
    #[test]
    fn logged_boards_replay_the_compact_boards() {
        for name in variant_names() {
            let variant = Variant::load(name, &[]).unwrap();
            let mut game = Game::new(variant);
            let mut rng = ChaCha8Rng::seed_from_u64(3);
            let (mut log, mut expected) = (BoardLog::default(), Vec::new());
            for ply in 0..300 {
                if ply % 97 == 0 {
                    log.push_whole(&game.position);
                } else {
                    log.push_after_move(&game.position);
                }
                let start = expected.len();
                expected.resize(start + GRID_SQUARES, 0);
                compact_board(&game.position, &mut expected[start..]);
                let moves = game.legal_moves();
                if moves.is_empty() || game.recorded_end().is_some() {
                    break;
                }
                game.play(moves[rng.gen_range(0..moves.len())]);
            }
            assert_eq!(log.boards(), expected, "{name}");
            let (mut replay, mut parts) = (Replay::default(), Vec::new());
            for _ in 0..log.len() / 2 {
                replay.next_into(&log, &mut parts);
            }
            let mut carried = replay.clone();
            while carried.read() < log.len() {
                carried.next_into(&log, &mut parts);
            }
            assert_eq!(parts, expected, "{name}");
            assert!(log.cells.len() * 20 < expected.len(), "{name}: the log is a fraction of the boards");
        }
    }
}
