//! The seed's move notation and a one-line position text format.
//!
//! Moves: `P-12h` (move), `ORx7c+` (capture and promote), `+CCx7c` (a promoted piece),
//! `LNx!5e` (igui: capture on 5e without moving), `LNx5ex6f` / `LNx5e-6f` (lion double move:
//! first the captured square, then the destination), `LN-!18r` (pass: the lion's own square).
//! The start square follows the piece code only when the move would otherwise be ambiguous:
//! `GG18r-18k`.
//!
//! Positions: ranks from the top separated by `/`, cells separated by `,`; a number is a run of
//! empty squares, a piece is its table key (upper case Black, lower case White) with `+` in
//! front when promoted (key of the piece it was before promotion). Then the side to move (`b`
//! or `w`) and the move number (plies played + 1, at most 2^31): `36/.../5,ln,30 w 12`. In a
//! variant that limits passes in a row, a fourth field gives each side's current run when one
//! is not zero: `... w 12 passes=2,0` (Black has passed twice in a row).
//!
//! A game's text (`Game::to_text`, `Game::from_text`) may go on with `moves` and moves in
//! notation, played from that position: `... b 12 moves P-12h p-13x`. `Game::to_text` writes
//! the position after the last irreversible move and the moves since, so the history rules
//! (repetitions, Dai dai's forbidden repetitions, perpetual check) read the same history.

use crate::geometry::{Color, Geometry};
use crate::position::{Move, Piece, Position, NO_SQUARE};
use std::fmt;

/// Why `Position::parse_move` or `WrittenMove::parse` refused a move's text; each variant
/// carries a message that quotes the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotationError {
    /// The text does not have the shape of a move.
    Malformed(String),
    /// The piece code is not in the table.
    UnknownPiece(String),
    /// A square name is not on the board.
    UnknownSquare(String),
    /// Well formed, but no legal move matches.
    Illegal(String),
    /// Several legal moves match: the start square is needed.
    Ambiguous(String),
}

impl fmt::Display for NotationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotationError::Malformed(m) => write!(f, "malformed move notation: {m}"),
            NotationError::UnknownPiece(m) => write!(f, "unknown piece: {m}"),
            NotationError::UnknownSquare(m) => write!(f, "unknown square: {m}"),
            NotationError::Illegal(m) => write!(f, "illegal move: {m}"),
            NotationError::Ambiguous(m) => write!(f, "ambiguous move: {m}"),
        }
    }
}

impl std::error::Error for NotationError {}

impl Position {
    /// The code a piece is written with: its sign, or `+` and its origin's sign when promoted.
    pub fn piece_sign(&self, p: Piece) -> String {
        let (promoted, sign) = self.sign_parts(p);
        if promoted {
            format!("+{sign}")
        } else {
            sign.to_string()
        }
    }

    /// `piece_sign` in parts, without building the string: (promoted, the sign after `+`).
    fn sign_parts(&self, p: Piece) -> (bool, &str) {
        let table = &self.variant.table;
        (p.promoted, &table.get(if p.promoted { p.origin } else { p.kind }).sign)
    }

    /// What a move's notation says after the piece code and start square.
    pub fn written_action(&self, mv: Move) -> WrittenAction {
        let (from, to) = (mv.from as usize, mv.to as usize);
        let action = if mv.is_pass() {
            Action::Pass { at: from }
        } else if mv.is_igui() {
            Action::Igui { victim: mv.mid as usize }
        } else if mv.mid != NO_SQUARE {
            let second = (mv.mid2() != NO_SQUARE).then_some(mv.mid2() as usize);
            Action::Double { first: mv.mid as usize, second, to, capture: self.at(to).is_some() }
        } else {
            // `x` whenever the move removes an enemy piece, by burning too (RULES.md §7).
            Action::Simple { to, capture: self.is_capture(mv) || self.burns(mv).squares().next().is_some() }
        };
        WrittenAction { action, promotes: self.promotes(mv), declines: self.declines_promotion(mv) }
    }

    /// The move's notation in this position, with the start square only when needed: when
    /// another piece of the mover's side with the same sign has a move written the same way.
    /// (`notations` for many moves at once; this writes only the rivals that could collide.)
    pub fn move_notation(&self, mv: Move) -> String {
        self.move_notation_among(mv, &self.legal_moves_of_sign(mv))
    }

    /// `move_notation`, given the moves it tells `mv` from: `rivals`, the moves of the other
    /// pieces of the mover's side written with the same sign, as `legal_moves_of_sign` gives
    /// them (a caller that keeps every piece's moves, `Game::move_notation`, reads them).
    pub fn move_notation_among(&self, mv: Move, rivals: &[Move]) -> String {
        let piece = self.at(mv.from as usize).expect("a piece on the start square");
        let written = self.written_action(mv);
        // Two moves written the same way end on the same square, or capture the same victim
        // by igui (from different squares: a pass is written with its own square).
        let target = |m: Move| if m.is_igui() { m.mid } else { m.to };
        let ambiguous =
            rivals.iter().any(|&r| target(r) == target(mv) && self.written_action(r).action == written.action);
        self.notation_text(piece, mv, &written, ambiguous)
    }

    /// Calls `f` with the square of every other piece of `piece`'s side written with the same
    /// code (`piece_sign`) as `piece`, which stands on `from`. This scans every piece of the
    /// side: the loop compares two numbers per piece, and a sign class only for types that
    /// share their sign with another.
    #[inline]
    fn for_each_same_sign(&self, from: usize, piece: Piece, mut f: impl FnMut(usize)) {
        let table = &self.variant.table;
        let sign_key = |p: Piece| if p.promoted { p.origin } else { p.kind };
        let key = sign_key(piece);
        let shared = table.shares_sign(key);
        self.for_each_piece_of(piece.color, |sq, p| {
            if p.promoted == piece.promoted
                && sq != from
                && (sign_key(p) == key || shared && table.sign_class(sign_key(p)) == table.sign_class(key))
            {
                f(sq);
            }
        });
    }

    /// A move's notation from its parts: the piece's code, the start square when `ambiguous`,
    /// the rest.
    fn notation_text(&self, piece: Piece, mv: Move, written: &WrittenAction, ambiguous: bool) -> String {
        let g = &self.variant.geometry;
        let mut text = String::with_capacity(16);
        let (promoted, sign) = self.sign_parts(piece);
        if promoted {
            text.push('+');
        }
        text.push_str(sign);
        if ambiguous {
            g.write_square_name(mv.from as usize, &mut text);
        }
        written.write_to(g, &mut text);
        text
    }

    /// Notations of many moves at once (all from the side to move), disambiguated against
    /// `rivals` (other moves of the same side, with or without `moves` themselves): one pass
    /// instead of one generation per move.
    pub fn notations(&self, moves: &[Move], rivals: &[Move]) -> Vec<String> {
        use std::collections::HashMap;
        // For each (sign, action): up to two distinct start squares that produce it.
        let mut starts: HashMap<(String, Action), [u16; 2]> = HashMap::new();
        for &r in rivals {
            let Some(p) = self.at(r.from as usize) else { continue };
            let entry =
                starts.entry((self.piece_sign(p), self.written_action(r).action)).or_insert([r.from, NO_SQUARE]);
            if entry[0] != r.from && entry[1] == NO_SQUARE {
                entry[1] = r.from;
            }
        }
        moves
            .iter()
            .map(|&mv| {
                let piece = self.at(mv.from as usize).expect("a piece on the start square");
                let written = self.written_action(mv);
                let ambiguous = starts
                    .get(&(self.piece_sign(piece), written.action))
                    .is_some_and(|froms| froms.iter().any(|&f| f != NO_SQUARE && f != mv.from));
                self.notation_text(piece, mv, &written, ambiguous)
            })
            .collect()
    }

    /// The moves of the other pieces of the mover's side written with the same sign as the
    /// mover (the moves `move_notation` disambiguates against).
    pub fn legal_moves_of_sign(&self, mv: Move) -> Vec<Move> {
        let Some(piece) = self.at(mv.from as usize) else { return Vec::new() };
        let mut out = Vec::new();
        self.for_each_same_sign(mv.from as usize, piece, |sq| self.generate_from(sq, &mut out));
        out
    }

    /// Finds the legal move (for the side to move) that `text` denotes.
    pub fn parse_move(&self, text: &str) -> Result<Move, NotationError> {
        let text = text.trim();
        let parsed = WrittenMove::parse(text, &self.variant.geometry)?;
        let table = &self.variant.table;
        let code = parsed.code.trim_start_matches('+');
        if !table.types.iter().any(|t| t.written_as(code)) {
            return Err(NotationError::UnknownPiece(format!("'{code}' in '{text}'")));
        }
        let side = self.side_to_move();
        let g = &self.variant.geometry;
        let mut matches = Vec::new();
        let mut moves = Vec::new();
        for sq in self.squares_of(side) {
            let p = self.at(sq).expect("an occupied square");
            // A promoted piece is written `+` and its origin's code.
            let written = if p.promoted { table.get(p.origin) } else { table.get(p.kind) };
            if p.promoted != parsed.code.starts_with('+') || !written.written_as(code) {
                continue;
            }
            if parsed.start.is_some_and(|start| start != sq) {
                continue;
            }
            moves.clear();
            self.generate_from(sq, &mut moves);
            for &mv in &moves {
                let written = self.written_action(mv);
                // A trailing `+` (or `=`) is optional on input, but if given the move must
                // promote (or decline).
                if written.action == parsed.action
                    && (written.promotes || !parsed.promotes)
                    && (written.declines || !parsed.declines)
                {
                    matches.push(mv);
                }
            }
        }
        match matches.len() {
            0 => Err(NotationError::Illegal(format!("no legal move '{text}' for {side}"))),
            1 => Ok(matches[0]),
            2 if matches[0].from == matches[1].from && matches[0].promote() != matches[1].promote() => {
                Err(NotationError::Ambiguous(format!(
                    "'{text}' may promote or not: end it with '+' to promote or '=' to decline"
                )))
            }
            _ => {
                let mut starts: Vec<String> = matches.iter().map(|m| g.square_name(m.from as usize)).collect();
                starts.dedup();
                Err(NotationError::Ambiguous(format!(
                    "'{text}' could start from {}; add the start square",
                    starts.join(" or ")
                )))
            }
        }
    }

    /// The one-line text of the position (see the module docs).
    pub fn to_text(&self) -> String {
        let g = &self.variant.geometry;
        let table = &self.variant.table;
        let mut ranks = Vec::with_capacity(g.height);
        for y in 0..g.height {
            let mut cells: Vec<String> = Vec::new();
            let mut empty = 0;
            for x in 0..g.width {
                match self.at(y * g.width + x) {
                    None => empty += 1,
                    Some(p) => {
                        if empty > 0 {
                            cells.push(empty.to_string());
                            empty = 0;
                        }
                        let key = &table.get(if p.promoted { p.origin } else { p.kind }).key;
                        let key = if p.color == Color::White { key.to_lowercase() } else { key.clone() };
                        cells.push(if p.promoted { format!("+{key}") } else { key });
                    }
                }
            }
            if empty > 0 {
                cells.push(empty.to_string());
            }
            ranks.push(cells.join(","));
        }
        let side = if self.side_to_move() == Color::Black { 'b' } else { 'w' };
        let mut text = format!("{} {} {}", ranks.join("/"), side, self.move_number());
        let passes = [self.consecutive_passes(Color::Black), self.consecutive_passes(Color::White)];
        if passes != [0, 0] {
            text.push_str(&format!(" passes={},{}", passes[0], passes[1]));
        }
        text
    }

    /// The board as rows of codes (`.` empty, White lower case), with file and rank labels.
    pub fn board_string(&self) -> String {
        let g = &self.variant.geometry;
        let table = &self.variant.table;
        let cell = |p: Option<Piece>| match p {
            None => ".".to_string(),
            Some(p) => {
                let sign =
                    if p.promoted { format!("+{}", table.get(p.origin).sign) } else { table.get(p.kind).sign.clone() };
                if p.color == Color::White {
                    sign.to_lowercase()
                } else {
                    sign
                }
            }
        };
        let mut out = String::new();
        out.push_str("    ");
        for x in 0..g.width {
            out.push_str(&format!("{:>4}", g.width - x));
        }
        out.push('\n');
        for y in 0..g.height {
            out.push_str(&format!("{:>4}", crate::geometry::Geometry::rank_name(y)));
            for x in 0..g.width {
                out.push_str(&format!("{:>4}", cell(self.at(y * g.width + x))));
            }
            out.push('\n');
        }
        out.push_str(&format!("{} to move, move {}", self.side_to_move(), self.move_number()));
        out
    }

    /// Reads a position written by `to_text`.
    pub fn from_text(
        variant: std::sync::Arc<crate::variant::Variant>,
        text: &str,
    ) -> Result<Position, PositionTextError> {
        use PositionTextError as E;
        let fields: Vec<&str> = text.split_whitespace().collect();
        if fields.len() != 3 && fields.len() != 4 {
            return Err(E::Fields(fields.len()));
        }
        // Each side's passes in a row, where the variant limits them (`passes=B,W`).
        let passes = match fields.get(3) {
            None => [0, 0],
            Some(field) => {
                let limit = variant.rules.max_consecutive_passes.unwrap_or(0);
                field
                    .strip_prefix("passes=")
                    .and_then(|counts| counts.split_once(','))
                    .and_then(|(b, w)| Some([b.parse::<u8>().ok()?, w.parse::<u8>().ok()?]))
                    .filter(|counts| counts.iter().all(|&c| c <= limit))
                    .ok_or_else(|| E::Passes(field.to_string()))?
            }
        };
        let side = match fields[1] {
            "b" => Color::Black,
            "w" => Color::White,
            other => return Err(E::Side(other.to_string())),
        };
        // At most 2^31: the ply counter is a u32 and the game must be able to go on from here
        // (`b 4294967295` made the next move's `to_text` overflow: fuzz/regressions/position_text).
        let number: u32 = fields[2]
            .parse()
            .ok()
            .filter(|&n| (1..=MAX_MOVE_NUMBER).contains(&n))
            .ok_or_else(|| E::MoveNumber(fields[2].to_string()))?;
        let g = variant.geometry.clone();
        let mut pos = Position::empty(variant.clone(), side);
        let ranks: Vec<&str> = fields[0].split('/').collect();
        if ranks.len() != g.height {
            return Err(E::RankCount { expected: g.height, found: ranks.len() });
        }
        for (y, rank) in ranks.iter().enumerate() {
            let rank_number = y + 1;
            let mut x = 0usize;
            for cell in rank.split(',') {
                if let Ok(n) = cell.parse::<usize>() {
                    if n == 0 || n > g.width {
                        return Err(E::EmptyRun { rank: rank_number, run: n });
                    }
                    x += n;
                    continue;
                }
                let (promoted, key) = match cell.strip_prefix('+') {
                    Some(rest) => (true, rest),
                    None => (false, cell),
                };
                let color = if key.chars().any(|c| c.is_ascii_lowercase()) { Color::White } else { Color::Black };
                let origin = variant
                    .table
                    .by_key(&key.to_uppercase())
                    .ok_or_else(|| E::UnknownPiece { rank: rank_number, cell: cell.to_string() })?;
                let kind = if promoted {
                    variant
                        .table
                        .get(origin)
                        .promotes_to
                        .ok_or_else(|| E::DoesNotPromote { rank: rank_number, cell: cell.to_string() })?
                } else {
                    origin
                };
                if x >= g.width {
                    return Err(E::RankTooLong { rank: rank_number, width: g.width });
                }
                pos.put(y * g.width + x, Piece { kind, origin, color, promoted });
                x += 1;
            }
            if x != g.width {
                return Err(E::RankLength { rank: rank_number, found: x, expected: g.width });
            }
        }
        pos.set_move_number(number);
        pos.set_consecutive_passes(Color::Black, passes[0]);
        pos.set_consecutive_passes(Color::White, passes[1]);
        Ok(pos)
    }
}

/// The largest move number a position text may give (the ply counter is a `u32`).
pub const MAX_MOVE_NUMBER: u32 = 1 << 31;

/// Why `Position::from_text` (or `Game::from_text`) refused a position text. Ranks count from 1
/// at the top.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PositionTextError {
    /// Not the fields `board side move-number [passes=B,W]`; carries how many there were.
    Fields(usize),
    /// A move after `moves` cannot be played (`Game::from_text`).
    Move {
        /// Which move, from 1.
        number: usize,
        /// The move as written.
        written: String,
        /// Why it cannot be played.
        reason: String,
    },
    /// The passes field is not `passes=B,W` with counts within the variant's pass limit.
    Passes(String),
    /// The side to move is neither `b` nor `w`.
    Side(String),
    /// The move number is not an integer in 1..=`MAX_MOVE_NUMBER`.
    MoveNumber(String),
    /// The board does not have the variant's number of ranks.
    RankCount {
        /// Ranks of the variant's board.
        expected: usize,
        /// Ranks in the text.
        found: usize,
    },
    /// A run of empty squares is zero or longer than a rank.
    EmptyRun {
        /// The rank.
        rank: usize,
        /// The run as written.
        run: usize,
    },
    /// A cell names no piece of the table.
    UnknownPiece {
        /// The rank.
        rank: usize,
        /// The cell as written.
        cell: String,
    },
    /// A cell marks as promoted (`+`) a piece that does not promote.
    DoesNotPromote {
        /// The rank.
        rank: usize,
        /// The cell as written.
        cell: String,
    },
    /// A piece stands past the end of the rank.
    RankTooLong {
        /// The rank.
        rank: usize,
        /// Squares in a rank.
        width: usize,
    },
    /// The rank's cells do not add up to its width.
    RankLength {
        /// The rank.
        rank: usize,
        /// Squares the text gives.
        found: usize,
        /// Squares in a rank.
        expected: usize,
    },
}

impl fmt::Display for PositionTextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Fields(n) => {
                write!(f, "expected 'board side move-number [passes=B,W] [moves M1 M2 ...]', found {n} fields")
            }
            Self::Move { number, written, reason } => write!(f, "move {number} after 'moves' ('{written}'): {reason}"),
            Self::Passes(s) => {
                write!(f, "'{s}' is not 'passes=B,W' with each side's passes in a row within the variant's limit")
            }
            Self::Side(s) => write!(f, "side to move must be 'b' or 'w', not '{s}'"),
            Self::MoveNumber(s) => {
                write!(f, "move number must be a positive integer up to {MAX_MOVE_NUMBER}, not '{s}'")
            }
            Self::RankCount { expected, found } => write!(f, "expected {expected} ranks, found {found}"),
            Self::EmptyRun { rank, run } => write!(f, "rank {rank}: empty run of {run}"),
            Self::UnknownPiece { rank, cell } => write!(f, "rank {rank}: unknown piece '{cell}'"),
            Self::DoesNotPromote { rank, cell } => write!(f, "rank {rank}: '{cell}' does not promote"),
            Self::RankTooLong { rank, width } => write!(f, "rank {rank} is longer than {width} squares"),
            Self::RankLength { rank, found, expected } => {
                write!(f, "rank {rank} has {found} squares, expected {expected}")
            }
        }
    }
}

impl std::error::Error for PositionTextError {}

/// What a move does, as its notation writes it after the piece code (docs/RULES.md §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// `-12h` (a move) or `x12h` (it removes any piece: on `to`, or swept on the way).
    Simple {
        /// The square it ends on.
        to: usize,
        /// Whether it removes any piece (written `x`, else `-`).
        capture: bool,
    },
    /// `x!12h`: capture on the adjacent square without moving (igui).
    Igui {
        /// The square of the captured piece.
        victim: usize,
    },
    /// `-!12h`: pass, written with the mover's own square.
    Pass {
        /// The mover's square.
        at: usize,
    },
    /// `x12hx12i` / `x12h-12i`: capture on `first`, then go on to `to` (capturing there too
    /// when `capture`); `x9hx9gx9f`: capture on `first` and `second`, then go on to `to` (the
    /// Dai dai lion dog's three steps).
    Double {
        /// The square of the first capture.
        first: usize,
        /// The square of a second capture on the way, if any.
        second: Option<usize>,
        /// The square it ends on.
        to: usize,
        /// Whether it also captures on `to`.
        capture: bool,
    },
}

/// An action with its promotion mark (`+` promotes, `=` declines an offered promotion).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WrittenAction {
    /// What the move does.
    pub action: Action,
    /// Whether the move promotes the mover (written as a trailing `+`).
    pub promotes: bool,
    /// Whether the move declines a promotion it could make (written as a trailing `=`, as in
    /// Western shogi notation; only where promotion is a choice).
    pub declines: bool,
}

impl WrittenAction {
    /// The text after the piece code and start square.
    pub fn write(&self, g: &Geometry) -> String {
        let mut text = String::with_capacity(12);
        self.write_to(g, &mut text);
        text
    }

    /// `write`, appended to `out`.
    pub fn write_to(&self, g: &Geometry, out: &mut String) {
        let sep = |capture: bool| if capture { 'x' } else { '-' };
        match self.action {
            Action::Simple { to, capture } => {
                out.push(sep(capture));
                g.write_square_name(to, out);
            }
            Action::Igui { victim } => {
                out.push_str("x!");
                g.write_square_name(victim, out);
            }
            Action::Pass { at } => {
                out.push_str("-!");
                g.write_square_name(at, out);
            }
            Action::Double { first, second, to, capture } => {
                out.push('x');
                g.write_square_name(first, out);
                if let Some(second) = second {
                    out.push('x');
                    g.write_square_name(second, out);
                }
                out.push(sep(capture));
                g.write_square_name(to, out);
            }
        }
        if self.promotes {
            out.push('+');
        } else if self.declines {
            out.push('=');
        }
    }
}

/// A move's notation read without a position: `[+]CODE[start]action[+]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrittenMove {
    /// The piece code as written, with its `+` when promoted (`LN`, `+FL`).
    pub code: String,
    /// The start square, written only when the move would otherwise be ambiguous.
    pub start: Option<usize>,
    /// What the text says the move does.
    pub action: Action,
    /// A trailing `+` was written.
    pub promotes: bool,
    /// A trailing `=` was written.
    pub declines: bool,
}

/// A cursor over the bytes of a move's notation.
struct Reader<'a> {
    text: &'a str,
    at: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        self.at += found as usize;
        found
    }

    /// A square: one or two digits, then a rank letter, doubled for ranks past `z` (`aa` is
    /// rank 27). `x` is also the capture mark: `xx` is read as one rank only when that rank is
    /// on the board, so `12xx13f` is `12x`, `x`, `13f` (rank `xx` would be the 50th).
    fn square(&mut self, g: &Geometry) -> Result<Option<usize>, NotationError> {
        let bytes = self.text.as_bytes();
        let start = self.at;
        let mut i = start;
        while i < bytes.len() && i - start < 2 && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i == start || i >= bytes.len() || !bytes[i].is_ascii_lowercase() {
            return Ok(None);
        }
        let letter = bytes[i];
        let mut end = i + 1;
        if bytes.get(end) == Some(&letter) && (letter != b'x' || (letter - b'a') as usize + 26 < g.height) {
            end += 1;
        }
        let name = &self.text[start..end];
        let square = g.parse_square(name).ok_or_else(|| {
            NotationError::UnknownSquare(format!(
                "'{name}' in '{}' is not on the {}x{} board",
                self.text, g.width, g.height
            ))
        })?;
        self.at = end;
        Ok(Some(square))
    }
}

impl WrittenMove {
    /// Reads the notation grammar of docs/RULES.md §7 (squares checked against `g`).
    pub fn parse(text: &str, g: &Geometry) -> Result<WrittenMove, NotationError> {
        let malformed = || {
            NotationError::Malformed(format!(
                "'{text}' (expected e.g. 'P-12h', 'ORx7c+', 'LNx!5e', 'LNx5ex6f', 'LN-!18r', 'GG18r-18k')"
            ))
        };
        let mut r = Reader { text, at: 0 };
        let promoted = r.eat(b'+');
        let code_start = r.at;
        while r.peek().is_some_and(|b| b.is_ascii_uppercase()) {
            r.at += 1;
        }
        if r.at == code_start {
            return Err(malformed());
        }
        let code = text[..r.at].to_string();
        debug_assert_eq!(promoted, code.starts_with('+'));
        let start = r.square(g)?;
        let capture = match r.peek() {
            Some(b'x') => true,
            Some(b'-') => false,
            _ => return Err(malformed()),
        };
        r.at += 1;
        let action = if r.eat(b'!') {
            let square = r.square(g)?.ok_or_else(malformed)?;
            if capture {
                Action::Igui { victim: square }
            } else {
                Action::Pass { at: square }
            }
        } else {
            let to = r.square(g)?.ok_or_else(malformed)?;
            // After a capture, up to two more legs: `x` (capture) or `-`; only the last may be `-`.
            let mut legs: Vec<(usize, bool)> = Vec::with_capacity(2);
            while capture && legs.last().is_none_or(|&(_, c)| c) && legs.len() < 2 {
                let Some(sep @ (b'x' | b'-')) = r.peek() else { break };
                r.at += 1;
                legs.push((r.square(g)?.ok_or_else(malformed)?, sep == b'x'));
            }
            match legs[..] {
                [] => Action::Simple { to, capture },
                [(end, capture)] => Action::Double { first: to, second: None, to: end, capture },
                [(second, true), (end, capture)] => {
                    Action::Double { first: to, second: Some(second), to: end, capture }
                }
                _ => return Err(malformed()),
            }
        };
        let promotes = r.eat(b'+');
        let declines = !promotes && r.eat(b'=');
        if r.at != text.len() {
            return Err(malformed());
        }
        Ok(WrittenMove { code, start, action, promotes, declines })
    }
}
