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
//! or `w`) and the move number (plies played + 1): `36/.../5,ln,30 w 12`.

use crate::geometry::Color;
use crate::position::{Move, Piece, Position, NO_SQUARE};
use std::fmt;

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
        let table = &self.variant.table;
        if p.promoted {
            format!("+{}", table.get(p.origin).sign)
        } else {
            table.get(p.kind).sign.clone()
        }
    }

    /// The notation after the piece code (and start square), e.g. `x7c+`.
    fn move_tail(&self, mv: Move) -> String {
        let g = &self.variant.geometry;
        let name = |sq: u16| g.square_name(sq as usize);
        let sep = |sq: u16| if self.at(sq as usize).is_some() { 'x' } else { '-' };
        let mut s = String::new();
        if mv.is_pass() {
            s.push_str(&format!("-!{}", name(mv.from)));
        } else if mv.is_igui() {
            s.push_str(&format!("x!{}", name(mv.mid)));
        } else if mv.mid != NO_SQUARE {
            s.push_str(&format!("x{}{}{}", name(mv.mid), sep(mv.to), name(mv.to)));
        } else {
            let c = if self.is_capture(mv) { 'x' } else { '-' };
            s.push_str(&format!("{}{}", c, name(mv.to)));
        }
        if self.promotes(mv) {
            s.push('+');
        }
        s
    }

    /// The move's notation in this position, with the start square only when needed.
    pub fn move_notation(&self, mv: Move) -> String {
        self.notations(&[mv], &self.legal_moves_of_sign(mv)).pop().expect("one notation")
    }

    /// Notations of many moves at once (all from the side to move), disambiguated against
    /// `rivals` (other moves of the same side, with or without `moves` themselves): one pass
    /// instead of one generation per move.
    pub fn notations(&self, moves: &[Move], rivals: &[Move]) -> Vec<String> {
        use std::collections::HashMap;
        // For each (sign, tail): up to two distinct start squares that produce it.
        let mut starts: HashMap<(String, String), [u16; 2]> = HashMap::new();
        for &r in rivals {
            let Some(p) = self.at(r.from as usize) else { continue };
            let entry = starts.entry((self.piece_sign(p), self.move_tail(r))).or_insert([r.from, NO_SQUARE]);
            if entry[0] != r.from && entry[1] == NO_SQUARE {
                entry[1] = r.from;
            }
        }
        moves
            .iter()
            .map(|&mv| {
                let sign = self.piece_sign(self.at(mv.from as usize).expect("a piece on the start square"));
                let tail = self.move_tail(mv);
                let ambiguous = starts
                    .get(&(sign.clone(), tail.clone()))
                    .map_or(false, |froms| froms.iter().any(|&f| f != NO_SQUARE && f != mv.from));
                if ambiguous {
                    format!("{sign}{}{tail}", self.variant.geometry.square_name(mv.from as usize))
                } else {
                    format!("{sign}{tail}")
                }
            })
            .collect()
    }

    /// The legal moves of the mover's side made by pieces with the same sign as the mover.
    pub fn legal_moves_of_sign(&self, mv: Move) -> Vec<Move> {
        let Some(piece) = self.at(mv.from as usize) else { return Vec::new() };
        let sign = self.piece_sign(piece);
        let mut out = Vec::new();
        for (sq, p) in self.squares() {
            if p.color == piece.color && sq != mv.from as usize && self.piece_sign(p) == sign {
                self.generate_from(sq, &mut out);
            }
        }
        out
    }

    /// Finds the legal move (for the side to move) that `text` denotes.
    pub fn parse_move(&self, text: &str) -> Result<Move, NotationError> {
        let text = text.trim();
        let parsed = parse_shape(text)?;
        let table = &self.variant.table;
        let code = parsed.sign.trim_start_matches('+');
        if !table.types.iter().any(|t| t.sign == code || t.key == code) {
            return Err(NotationError::UnknownPiece(format!("'{code}' in '{text}'")));
        }
        let g = &self.variant.geometry;
        for sq in parsed.squares.iter().flatten() {
            if g.parse_square(sq).is_none() {
                return Err(NotationError::UnknownSquare(format!("'{sq}' in '{text}'")));
            }
        }
        let wanted_tail = parsed.tail_without_promotion();
        let side = self.side_to_move();
        let mut matches = Vec::new();
        for (sq, p) in self.squares() {
            if p.color != side {
                continue;
            }
            let sign = self.piece_sign(p);
            let key_sign = if p.promoted {
                format!("+{}", table.get(p.origin).key)
            } else {
                table.get(p.kind).key.clone()
            };
            if sign != parsed.sign && key_sign != parsed.sign {
                continue;
            }
            if let Some(start) = &parsed.start {
                if g.parse_square(start) != Some(sq) {
                    continue;
                }
            }
            let mut moves = Vec::new();
            self.generate_from(sq, &mut moves);
            for mv in moves {
                let tail = self.move_tail(mv);
                if tail.trim_end_matches('+') == wanted_tail {
                    if parsed.promotes && !tail.ends_with('+') {
                        continue;
                    }
                    matches.push(mv);
                }
            }
        }
        match matches.len() {
            0 => Err(NotationError::Illegal(format!("no legal move '{text}' for {side}"))),
            1 => Ok(matches[0]),
            _ => {
                let starts: Vec<String> = matches.iter().map(|m| g.square_name(m.from as usize)).collect();
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
        format!("{} {} {}", ranks.join("/"), side, self.ply() + 1)
    }

    /// The board as rows of codes (`.` empty, White lower case), with file and rank labels.
    pub fn board_string(&self) -> String {
        let g = &self.variant.geometry;
        let table = &self.variant.table;
        let cell = |p: Option<Piece>| match p {
            None => ".".to_string(),
            Some(p) => {
                let sign = if p.promoted { format!("+{}", table.get(p.origin).sign) } else { table.get(p.kind).sign.clone() };
                if p.color == Color::White { sign.to_lowercase() } else { sign }
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
        out.push_str(&format!("{} to move, move {}", self.side_to_move(), self.ply() + 1));
        out
    }

    /// Reads a position written by `to_text`.
    pub fn from_text(variant: std::sync::Arc<crate::variant::Variant>, text: &str) -> Result<Position, String> {
        let fields: Vec<&str> = text.split_whitespace().collect();
        if fields.len() != 3 {
            return Err(format!("expected 'board side move-number', found {} fields", fields.len()));
        }
        let side = match fields[1] {
            "b" => Color::Black,
            "w" => Color::White,
            other => return Err(format!("side to move must be 'b' or 'w', not '{other}'")),
        };
        let number: u32 = fields[2]
            .parse()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| format!("move number must be a positive integer, not '{}'", fields[2]))?;
        let g = variant.geometry.clone();
        let mut pos = Position::empty(variant.clone(), side);
        let ranks: Vec<&str> = fields[0].split('/').collect();
        if ranks.len() != g.height {
            return Err(format!("expected {} ranks, found {}", g.height, ranks.len()));
        }
        for (y, rank) in ranks.iter().enumerate() {
            let mut x = 0usize;
            for cell in rank.split(',') {
                if let Ok(n) = cell.parse::<usize>() {
                    if n == 0 || n > g.width {
                        return Err(format!("rank {}: empty run of {n}", y + 1));
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
                    .ok_or_else(|| format!("rank {}: unknown piece '{cell}'", y + 1))?;
                let kind = if promoted {
                    variant
                        .table
                        .get(origin)
                        .promotes_to
                        .ok_or_else(|| format!("rank {}: '{cell}' does not promote", y + 1))?
                } else {
                    origin
                };
                if x >= g.width {
                    return Err(format!("rank {} is longer than {} squares", y + 1, g.width));
                }
                pos.put(y * g.width + x, Piece { kind, origin, color, promoted });
                x += 1;
            }
            if x != g.width {
                return Err(format!("rank {} has {} squares, expected {}", y + 1, x, g.width));
            }
        }
        pos.set_ply(number - 1);
        Ok(pos)
    }
}

/// The parts of a move's notation.
struct Shape {
    sign: String,
    start: Option<String>,
    /// The notation after the sign and start square, e.g. `x5e-6f`.
    tail: String,
    promotes: bool,
    squares: Vec<Option<String>>,
}

impl Shape {
    fn tail_without_promotion(&self) -> String {
        self.tail.trim_end_matches('+').to_string()
    }
}

/// Splits `[+]CODE[start](-|x)[!]square[(-|x)square][+]` without checking names.
fn parse_shape(text: &str) -> Result<Shape, NotationError> {
    let malformed = || {
        NotationError::Malformed(format!(
            "'{text}' (expected e.g. 'P-12h', 'ORx7c+', 'LNx!5e', 'LNx5ex6f', 'GG18r-18k')"
        ))
    };
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut sign = String::new();
    if bytes.first() == Some(&b'+') {
        sign.push('+');
        i += 1;
    }
    let code_start = i;
    while i < bytes.len() && bytes[i].is_ascii_uppercase() {
        i += 1;
    }
    if i == code_start {
        return Err(malformed());
    }
    sign.push_str(&text[code_start..i]);
    let read_square = |i: &mut usize| -> Option<String> {
        let s = *i;
        while *i < bytes.len() && bytes[*i].is_ascii_digit() {
            *i += 1;
        }
        let digits = *i - s;
        while *i < bytes.len() && bytes[*i].is_ascii_lowercase() {
            *i += 1;
        }
        if digits == 0 || *i - s == digits {
            *i = s;
            None
        } else {
            Some(text[s..*i].to_string())
        }
    };
    let start = read_square(&mut i);
    let tail_start = i;
    let mut squares = vec![start.clone()];
    let sep = |b: Option<&u8>| matches!(b, Some(b'-') | Some(b'x'));
    if !sep(bytes.get(i)) {
        return Err(malformed());
    }
    i += 1;
    if bytes.get(i) == Some(&b'!') {
        i += 1;
    }
    squares.push(Some(read_square(&mut i).ok_or_else(malformed)?));
    if sep(bytes.get(i)) {
        i += 1;
        squares.push(Some(read_square(&mut i).ok_or_else(malformed)?));
    }
    let mut promotes = false;
    if bytes.get(i) == Some(&b'+') {
        promotes = true;
        i += 1;
    }
    if i != bytes.len() {
        return Err(malformed());
    }
    Ok(Shape { sign, start, tail: text[tail_start..].to_string(), promotes, squares })
}
