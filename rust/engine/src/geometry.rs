//! Board geometry: colours, directions, squares and their names.
//!
//! Internal coordinates: `x` counts columns from the left as Black sees the board, `y` counts
//! rows from the top (Black's far side). A square index is `y * width + x`. Square names follow
//! the seed's notation: the file is counted from the right (`width - x`), the rank is a letter
//! from the top (`a`..`z`, then `aa`, `bb`, ... `jj`): `1a` is the top right corner.

use std::fmt;

/// A side. Black moves first and starts at the bottom of the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Color {
    /// Moves first; sets up at the bottom of the board (ranks `y`–`jj` in Taikyoku).
    Black = 0,
    /// Moves second; its setup is Black's rotated by 180°, at the top.
    White = 1,
}

impl Color {
    /// Both sides in index order, Black first.
    pub const BOTH: [Color; 2] = [Color::Black, Color::White];

    /// The other side.
    pub fn opponent(self) -> Color {
        match self {
            Color::Black => Color::White,
            Color::White => Color::Black,
        }
    }

    /// 0 for Black, 1 for White: the index into per-colour arrays.
    pub fn index(self) -> usize {
        self as usize
    }

    /// `"black"` or `"white"`, as the Python API and the datasets write it.
    pub fn name(self) -> &'static str {
        match self {
            Color::Black => "black",
            Color::White => "white",
        }
    }

    /// Reads `black`/`b`/`sente` or `white`/`w`/`gote`, in any case.
    pub fn parse(text: &str) -> Option<Color> {
        match text.to_ascii_lowercase().as_str() {
            "black" | "b" | "sente" => Some(Color::Black),
            "white" | "w" | "gote" => Some(Color::White),
            _ => None,
        }
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The eight directions, clockwise from forward. As a *relative* direction (in piece tables)
/// index 0 is the owner's forward; as an *absolute* direction index 0 is up the board
/// (Black's forward). White's absolute direction is its relative one turned by 180°.
pub const DIRECTION_COUNT: usize = 8;

/// Absolute (dx, dy) of each direction: N, NE, E, SE, S, SW, W, NW (x right, y down).
pub const DELTAS: [(i32, i32); DIRECTION_COUNT] =
    [(0, -1), (1, -1), (1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1)];

/// Turns a direction relative to the owner into an absolute one.
#[inline]
pub fn absolute_direction(relative: u8, color: Color) -> usize {
    match color {
        Color::Black => relative as usize,
        Color::White => (relative as usize + 4) % DIRECTION_COUNT,
    }
}

/// Board shape with the per-square distances to the edge that the move generator uses
/// instead of bounds checks.
#[derive(Clone, Debug)]
pub struct Geometry {
    /// Files (columns, `x`); a variant's rules allow 1 to 36.
    pub width: usize,
    /// Ranks (rows, `y`); a variant's rules allow 1 to 36.
    pub height: usize,
    /// `edge[sq * 8 + dir]`: how many squares lie beyond `sq` in absolute direction `dir`.
    edge: Vec<u8>,
    /// `offset[dir]`: the index difference of one step in absolute direction `dir`.
    pub offset: [isize; DIRECTION_COUNT],
    /// `inside[sq]`: bit `dir` set where the square next to `sq` in direction `dir` is on the
    /// board.
    inside: Vec<u8>,
    /// `around[sq][dir]`: the square next to `sq` in direction `dir`, or `size()` off the board
    /// (a spare slot), so a per-square table can be updated around `sq` without a test.
    around: Vec<[u16; DIRECTION_COUNT]>,
    /// `coords[sq]`: `(x, y)`, so the hot paths do not divide.
    coords: Vec<(u8, u8)>,
}

impl Geometry {
    /// Precomputes the edge distances of a `width`×`height` board. Panics above 52 on a side,
    /// where rank names (`a`..`zz`) run out.
    pub fn new(width: usize, height: usize) -> Geometry {
        assert!(width <= 52 && height <= 52, "board too large for square names");
        let mut edge = vec![0u8; width * height * DIRECTION_COUNT];
        for y in 0..height {
            for x in 0..width {
                for (dir, &(dx, dy)) in DELTAS.iter().enumerate() {
                    let mut n = 0u8;
                    let (mut cx, mut cy) = (x as i32 + dx, y as i32 + dy);
                    while cx >= 0 && cy >= 0 && (cx as usize) < width && (cy as usize) < height {
                        n += 1;
                        cx += dx;
                        cy += dy;
                    }
                    edge[(y * width + x) * DIRECTION_COUNT + dir] = n;
                }
            }
        }
        let offset = DELTAS.map(|(dx, dy)| dy as isize * width as isize + dx as isize);
        let inside = edge
            .chunks(DIRECTION_COUNT)
            .map(|e| (0..DIRECTION_COUNT).filter(|&d| e[d] > 0).map(|d| 1u8 << d).sum())
            .collect();
        let coords = (0..width * height).map(|sq| ((sq % width) as u8, (sq / width) as u8)).collect();
        let around = (0..width * height)
            .map(|sq| {
                std::array::from_fn(|d| {
                    let on_board = edge[sq * DIRECTION_COUNT + d] > 0;
                    if on_board {
                        (sq as isize + offset[d]) as u16
                    } else {
                        (width * height) as u16
                    }
                })
            })
            .collect();
        Geometry { width, height, edge, offset, inside, around, coords }
    }

    /// Number of squares: square indices run from 0 to `size() - 1`.
    #[inline]
    pub fn size(&self) -> usize {
        self.width * self.height
    }

    /// How many squares lie beyond `sq` in absolute direction `dir` (0 on that edge).
    #[inline]
    pub fn edge(&self, sq: usize, dir: usize) -> usize {
        self.edge[sq * DIRECTION_COUNT + dir] as usize
    }

    /// The directions in which `sq` has a neighbouring square (bit `dir`).
    #[inline]
    pub fn neighbour_dirs(&self, sq: usize) -> u8 {
        self.inside[sq]
    }

    /// The squares next to `sq` by absolute direction, `size()` where a direction leaves the
    /// board.
    #[inline]
    pub fn around(&self, sq: usize) -> &[u16; DIRECTION_COUNT] {
        &self.around[sq]
    }

    /// The `(x, y)` of a square: column from the left and row from the top, as Black sees the
    /// board.
    #[inline]
    pub fn xy(&self, sq: usize) -> (i32, i32) {
        match self.coords.get(sq) {
            Some(&(x, y)) => (x as i32, y as i32),
            // Off the board: what the arithmetic gives (names in error messages).
            None => ((sq % self.width) as i32, (sq / self.width) as i32),
        }
    }

    /// The index step from `from` towards `to` along their line (a rank, file or diagonal)
    /// and how many steps apart they are.
    #[inline]
    pub fn line_step(&self, from: usize, to: usize) -> (isize, usize) {
        let ((fx, fy), (tx, ty)) = (self.xy(from), self.xy(to));
        let (dx, dy) = ((tx - fx).signum(), (ty - fy).signum());
        (dy as isize * self.width as isize + dx as isize, (tx - fx).abs().max((ty - fy).abs()) as usize)
    }

    /// The square at (x, y), if it is on the board.
    #[inline]
    pub fn square(&self, x: i32, y: i32) -> Option<usize> {
        if x >= 0 && y >= 0 && (x as usize) < self.width && (y as usize) < self.height {
            Some(y as usize * self.width + x as usize)
        } else {
            None
        }
    }

    /// The row index, counted from the owner's far side: 0 is the furthest rank.
    pub fn rank_from_front(&self, sq: usize, color: Color) -> usize {
        let y = self.xy(sq).1 as usize;
        match color {
            Color::Black => y,
            Color::White => self.height - 1 - y,
        }
    }

    /// The letters of row `y` counted from the top (0 is `a`, 26 is `aa`).
    pub fn rank_name(y: usize) -> String {
        let letter = (b'a' + (y % 26) as u8) as char;
        std::iter::repeat_n(letter, y / 26 + 1).collect()
    }

    /// The seed's name of a square: `12h`, `1a`, `36jj`.
    pub fn square_name(&self, sq: usize) -> String {
        let mut name = String::with_capacity(4);
        self.write_square_name(sq, &mut name);
        name
    }

    /// `square_name`, appended to `out` (notation writes a move's squares into one string).
    pub fn write_square_name(&self, sq: usize, out: &mut String) {
        let (x, y) = self.xy(sq);
        let file = self.width - x as usize;
        let mut place = 1;
        while place * 10 <= file {
            place *= 10;
        }
        while place > 0 {
            out.push(char::from(b'0' + (file / place % 10) as u8));
            place /= 10;
        }
        let y = y as usize;
        let letter = char::from(b'a' + (y % 26) as u8);
        (0..=y / 26).for_each(|_| out.push(letter));
    }

    /// Parses a square name; `None` if it is malformed or off the board.
    pub fn parse_square(&self, name: &str) -> Option<usize> {
        let name = name.trim();
        let digits = name.bytes().take_while(|b| b.is_ascii_digit()).count();
        // No leading zero: `05r` would read as `5r`, a second spelling that prints back
        // differently (and lets notation that is not canonical through). Found by fuzzing.
        if digits == 0 || digits > 2 || name.starts_with('0') {
            return None;
        }
        let file: usize = name[..digits].parse().ok()?;
        let y = Self::parse_rank(&name[digits..])?;
        self.square_from_file_rank(file, y + 1)
    }

    /// Row index of a rank name (`a` = 0, `aa` = 26).
    pub fn parse_rank(rank: &str) -> Option<usize> {
        let bytes = rank.as_bytes();
        let first = *bytes.first()?;
        if !first.is_ascii_lowercase() || bytes.iter().any(|&b| b != first) || bytes.len() > 2 {
            return None;
        }
        Some((first - b'a') as usize + 26 * (bytes.len() - 1))
    }

    /// The square of (file, rank), both counted from 1 (file from the right, rank from the top).
    pub fn square_from_file_rank(&self, file: usize, rank: usize) -> Option<usize> {
        if file == 0 || rank == 0 || file > self.width || rank > self.height {
            return None;
        }
        Some((rank - 1) * self.width + (self.width - file))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn square_names_follow_the_seed() {
        let g = Geometry::new(36, 36);
        assert_eq!(g.square_name(35), "1a");
        assert_eq!(g.square_name(0), "36a");
        assert_eq!(g.square_name(36 * 36 - 36), "36jj");
        assert_eq!(g.square_name(7 * 36 + (36 - 12)), "12h");
        for sq in 0..g.size() {
            assert_eq!(g.parse_square(&g.square_name(sq)), Some(sq));
        }
        assert_eq!(g.parse_square("37a"), None);
        assert_eq!(g.parse_square("1kk"), None);
        assert_eq!(g.parse_square("1ab"), None);
        assert_eq!(g.parse_square("a1"), None);
        assert_eq!(g.parse_square("0a"), None);
        assert_eq!(g.parse_square("05r"), None);
    }

    #[test]
    fn edge_distances() {
        let g = Geometry::new(36, 36);
        let corner = g.parse_square("36a").unwrap();
        assert_eq!(g.edge(corner, 0), 0);
        assert_eq!(g.edge(corner, 2), 35);
        assert_eq!(g.edge(corner, 3), 35);
        assert_eq!(g.edge(corner, 4), 35);
        assert_eq!(g.edge(corner, 6), 0);
    }

    #[test]
    fn white_directions_are_turned() {
        assert_eq!(absolute_direction(0, Color::White), 4);
        assert_eq!(absolute_direction(6, Color::White), 2);
        assert_eq!(absolute_direction(6, Color::Black), 6);
    }
}
