//! Piece tables: the rules of a variant as data (format: docs/PIECE_TABLE.md).
//!
//! A table line names a piece, its promotion and attributes, and its movement as a list of
//! atoms. `as(KEY)` references and rule options are resolved here, so the move generator only
//! ever sees plain atoms with owner-relative directions.

use crate::geometry::{absolute_direction, Color, DIRECTION_COUNT};
use std::collections::HashMap;
use std::fmt;

/// Index of a piece type in its variant's table.
pub type Kind = u16;

/// A piece on the board. `kind` is how it moves now; `origin` is what it was set up as (the
/// notation writes a promoted piece as `+` and its origin's code).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    /// The type it moves as now (its promoted type once promoted).
    pub kind: Kind,
    /// The type it was set up as; equals `kind` until it promotes.
    pub origin: Kind,
    /// Its owner.
    pub color: Color,
    /// Whether it has promoted: a promoted piece never promotes again.
    pub promoted: bool,
}

/// "Unlimited" for slide lengths and jump continuations.
pub const UNLIMITED: u8 = u8::MAX;

/// Rank of pieces that are neither royal nor range capturers: any range capturer may fly over them.
pub const NO_RANK: u8 = u8::MAX;

/// One movement atom, directions relative to the owner (0 = forward, clockwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Atom {
    /// 1..=max free squares in a line (`max` = UNLIMITED for ranging).
    Slide {
        /// Direction: 0 forward, then clockwise (absolute in `PieceTable::absolute_atoms`).
        dir: u8,
        /// Longest slide in squares: 1 for a step, `UNLIMITED` for ranging.
        max: u8,
    },
    /// Jump to exactly the `k`-th square, then optionally up to `then` more free squares.
    Jump {
        /// Direction, as in `Slide`.
        dir: u8,
        /// Distance of the landing square (2 or more); the squares before it are ignored.
        k: u8,
        /// Free squares it may go on from an empty landing square: 0 for a plain jump,
        /// `UNLIMITED` for jumprange.
        then: u8,
    },
    /// Jump to (dx right, dy forward); the table adds the mirror image.
    Leap {
        /// Squares to the owner's right (absolute form: the `x` offset, positive rightward as
        /// Black sees the board).
        dx: i8,
        /// Squares forward (absolute form: the `y` offset, positive down the board).
        dy: i8,
    },
    /// Ranging that may pass over up to `pieces` pieces.
    Hop {
        /// Direction, as in `Slide`.
        dir: u8,
        /// Most pieces it may pass over (friend or foe; they stay on the board).
        pieces: u8,
    },
    /// Range capture: fly over lower-ranked pieces, removing them.
    RangeCapture {
        /// Direction, as in `Slide`.
        dir: u8,
    },
    /// Ranging, capturing beyond up to `pieces` pieces of either colour (`UNLIMITED`: any
    /// number; Taishin's jumping generals: 2), which stay on the board.
    RangeJump {
        /// Direction, as in `Slide`.
        dir: u8,
        /// Most pieces it may pass over to capture.
        pieces: u8,
    },
    /// Ranging with one optional 90° turn.
    Hook {
        /// Direction of the first leg, as in `Slide`; the turn is 90° either way.
        dir: u8,
    },
    /// Two king steps, double capture, igui, pass, jump within two squares.
    Lion,
    /// Lion power along one line: jumps to every square within `reach` along `dir`, igui and
    /// pass, a retreat to the first square after capturing on the second, and captures on the
    /// way (docs/PIECE_TABLE.md).
    LionLine {
        /// Direction, as in `Slide`.
        dir: u8,
        /// Squares along the line it reaches: 2 or 3.
        reach: u8,
        /// Every unit step may capture (Dai dai's three-step lion dog, `lionline(D,n,n)`);
        /// otherwise two legs, the second only after a capture (Taishin, `lionline(D,n)`).
        /// The two readings differ only at reach 3; reach 2 is always stored as `true`.
        every_step: bool,
    },
    /// Capture an adjacent piece without moving.
    Igui,
    /// Tenjiku range jump: ranging, and when capturing it may jump over any number of pieces
    /// of lower rank (they stay); it never passes a piece of its own rank or higher.
    RankJump {
        /// Direction, as in `Slide`.
        dir: u8,
    },
    /// `RankJump` that may also stop on an empty square beyond the pieces it jumped (the
    /// "may always jump" reading).
    RankHop {
        /// Direction, as in `Slide`.
        dir: u8,
    },
    /// Up to `steps` king steps in any directions over empty squares, stopping at the first
    /// capture; back on its own square is a pass (vice general, fire demon).
    Area {
        /// Most king steps.
        steps: u8,
    },
    /// Two steps, each along a direction of `dirs`, capturing on either (the free eagle's
    /// double cat-sword move): igui and pass when the second step comes back.
    Double {
        /// Bit `d` set: direction `d` (as in `Slide`) may be stepped.
        dirs: u8,
    },
    /// To any square of the board, empty or enemy, but not to capture a protected enemy
    /// royal (Taishin's emperor).
    Teleport,
}

impl Atom {
    /// The direction of a line atom that yields nothing when its first square is off the
    /// board or holds a friend (slides and hooks; the others jump or pass over pieces).
    pub fn first_square_dir(self) -> Option<u8> {
        match self {
            Atom::Slide { dir, .. } | Atom::Hook { dir } => Some(dir),
            _ => None,
        }
    }

    /// A slide or a jump as a `Ray`; `None` for the other atoms.
    pub fn ray(self) -> Option<Ray> {
        match self {
            // `limit(D, 0)` moves nowhere: its square lies beyond every edge.
            Atom::Slide { dir, max: 0 } => Some(Ray { dir, k: u8::MAX, extra: 0 }),
            Atom::Slide { dir, max } => Some(Ray { dir, k: 1, extra: max - 1 }),
            Atom::Jump { dir, k, then } => Some(Ray { dir, k, extra: then }),
            _ => None,
        }
    }

    /// The atom with its direction made absolute for `color` (leaps become x-right, y-down).
    pub fn absolute(self, color: Color) -> Atom {
        let turn = |dir: u8| absolute_direction(dir, color) as u8;
        match self {
            Atom::Slide { dir, max } => Atom::Slide { dir: turn(dir), max },
            Atom::Jump { dir, k, then } => Atom::Jump { dir: turn(dir), k, then },
            Atom::Leap { dx, dy } => match color {
                Color::Black => Atom::Leap { dx, dy: -dy },
                Color::White => Atom::Leap { dx: -dx, dy },
            },
            Atom::Hop { dir, pieces } => Atom::Hop { dir: turn(dir), pieces },
            Atom::RangeCapture { dir } => Atom::RangeCapture { dir: turn(dir) },
            Atom::RangeJump { dir, pieces } => Atom::RangeJump { dir: turn(dir), pieces },
            Atom::Hook { dir } => Atom::Hook { dir: turn(dir) },
            Atom::Lion => Atom::Lion,
            Atom::LionLine { dir, reach, every_step } => Atom::LionLine { dir: turn(dir), reach, every_step },
            Atom::RankJump { dir } => Atom::RankJump { dir: turn(dir) },
            Atom::RankHop { dir } => Atom::RankHop { dir: turn(dir) },
            Atom::Area { steps } => Atom::Area { steps },
            // White's directions are Black's turned by 4: rotate the mask.
            Atom::Double { dirs } => {
                Atom::Double { dirs: if color == Color::White { dirs.rotate_left(4) } else { dirs } }
            }
            Atom::Igui => Atom::Igui,
            Atom::Teleport => Atom::Teleport,
        }
    }
}

/// Where a piece's movement freezes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trap {
    /// Never frozen: moves the same on every square.
    None,
    /// On the furthest rank it may only make capturing moves.
    FurthestRank,
    /// On its own first rank it may not move at all (mountain witch).
    OwnFirstRank,
}

/// One piece type: a table line with its `as(...)` references and rule options resolved.
#[derive(Clone, Debug)]
pub struct PieceType {
    /// Unique table key: the legend code (`LN`, `LHD`), or the English name for a
    /// promoted-only piece. Position texts write pieces by key.
    pub key: String,
    /// The code used in notation (`HD` for both howling dogs).
    pub sign: String,
    /// English name as in the seed (`Lion`, `Free bird`).
    pub name: String,
    /// Kanji name, as the sources give it (Taikyoku: the promotion table of docs/RULES.md §1).
    pub kanji: String,
    /// The type it becomes with its first capture; `None` if it never promotes.
    pub promotes_to: Option<Kind>,
    /// Losing a side's last royal piece loses the game (king, crown prince).
    pub royal: bool,
    /// Range-capture rank: 0 royal, 1 great general, 2 vice general, 3 the others; NO_RANK else.
    pub range_rank: u8,
    /// Where its movement freezes (docs/RULES.md §5).
    pub trap: Trap,
    /// Its moves, owner-relative, without duplicates (`igui` is dropped beside `lion`).
    pub atoms: Vec<Atom>,
    /// Whether two atoms can reach the same square, so generation must drop duplicates.
    pub overlapping: bool,
    /// Marked `promoted-only` in the table: it appears only by promotion, never in a setup.
    pub promoted_only: bool,
    /// Other names the sources give the same piece (`alias` lines): `lookup` accepts them, and
    /// those written in upper-case letters (`FK`) are also read as codes in notation.
    pub aliases: Vec<String>,
    /// Fire demon burning (`burn`): where it stops, adjacent enemies are removed (but other
    /// burners), and an enemy that stops next to it is removed (docs/PIECE_TABLE.md).
    pub burns: bool,
    /// `confers=NAME`: a piece that captures this one becomes NAME (Taishin's deva and dark
    /// spirit), unless the capturer is royal or promotes to a royal type.
    pub confers: Option<Kind>,
    /// `farpromote`: besides promoting by capture, it may promote with a non-capturing move
    /// to its furthest rank, a choice (Taishin's pawn, stone and iron generals).
    pub far_promotion: bool,
}

impl PieceType {
    /// Whether notation may write this type with `code` (its sign, key or an upper-case alias).
    pub fn written_as(&self, code: &str) -> bool {
        self.sign == code || self.key == code || self.aliases.iter().any(|a| a == code && is_code(a))
    }
}

/// Upper-case letters A-Z only: a legend code (keys, signs, code aliases).
fn is_code(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_uppercase())
}

/// A piece-table error, with its line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableError {
    /// 1-based line of the table file.
    pub line: usize,
    /// What is wrong, for a person to read.
    pub message: String,
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "piece table line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for TableError {}

/// What the move generator needs of a piece type, compact and contiguous for the hot loop.
#[derive(Clone, Copy, Debug)]
pub struct Motion {
    start: u32,
    len: u32,
    /// `PieceType::range_rank`.
    pub range_rank: u8,
    /// `PieceType::trap`.
    pub trap: Trap,
    /// `PieceType::overlapping`.
    pub overlapping: bool,
    /// The variant promotes in a zone and this type promotes: its moves may come twice
    /// (set by `Variant` from the rules, so the generator tests one flag it already holds).
    pub zone_promotion: bool,
    /// `PieceType::far_promotion`.
    pub far_promotion: bool,
    /// It has a `teleport` atom: its captures of royals need the protection test.
    pub teleports: bool,
    /// Per colour, the absolute directions of its slides and hooks (`Atom::first_square_dir`).
    pub line_dirs: [u8; 2],
    /// All its atoms are slides and hooks: it has no move when each of their first squares
    /// is off the board or holds a friend.
    pub only_lines: bool,
    /// All its atoms are slides in different directions and it has no `farpromote`:
    /// generation takes a short loop with nothing to deduplicate (most pieces of the big
    /// variants), inline unless the piece is trapped or may be offered promotion in a zone.
    pub plain_slider: bool,
    /// A plain slider's slides, in table order: per colour their absolute directions as bits
    /// (`1 << dir`; 0 past the last slide), so the generator's loop has a fixed length.
    pub slide_bits: [[u8; DIRECTION_COUNT]; 2],
    /// The longest slide of each of `slide_bits`.
    pub slide_max: [u8; DIRECTION_COUNT],
    /// All its atoms are hooks, in different directions (hook mover, longnosed goblin): the
    /// only squares two of them reach are in the quadrant between two perpendicular hooks,
    /// which the generator tells apart without a set.
    pub hooks_only: bool,
    /// All its atoms are slides and jumps, and it is not a plain slider and has no
    /// `farpromote`: the generator reads its `PieceTable::absolute_rays` in one short loop,
    /// without the per-atom dispatch and the set of squares seen.
    pub rays_only: bool,
}

/// A slide or a jump as the generator reads it (`PieceTable::absolute_rays`): the square at
/// distance `k` along absolute direction `dir` if it is on the board and not a friend's, then
/// from an empty one up to `extra` more, stopping on the first piece (taken if an enemy's). A
/// slide of `max` squares is `k = 1, extra = max - 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Ray {
    /// Absolute direction (`PieceTable::absolute_rays`).
    pub dir: u8,
    /// Distance of the first square (1 for a slide, 2 or more for a jump).
    pub k: u8,
    /// Free squares it may go on beyond an empty first square (a ranging slide: to the edge).
    pub extra: u8,
}

impl Motion {
    fn plain_slider(t: &PieceType) -> bool {
        !t.overlapping
            && t.atoms.len() <= DIRECTION_COUNT
            && !t.far_promotion
            && t.atoms.iter().all(|a| matches!(a, Atom::Slide { .. }))
    }
}

/// A parsed piece table.
#[derive(Clone, Debug)]
pub struct PieceTable {
    /// Every piece type in file order; a `Kind` indexes it.
    pub types: Vec<PieceType>,
    motions: Vec<Motion>,
    /// Every type's atoms with *absolute* directions, one array per colour (see `Motion`).
    absolute_atoms: [Vec<Atom>; 2],
    /// `absolute_atoms` as rays, where they are slides and jumps (`Motion::rays_only`).
    absolute_rays: [Vec<Ray>; 2],
    by_key: HashMap<String, Kind>,
    by_name: HashMap<String, Kind>,
    /// Every option named in the table, with the pieces it changes.
    pub options: Vec<(String, String)>,
    /// Whether any type burns: `Position::make` looks for burning only then.
    pub has_burners: bool,
    /// Whether any type confers its promotion on its capturer (`confers=`).
    pub has_conferrers: bool,
}

fn direction_group(name: &str) -> Option<&'static [u8]> {
    // Relative directions: 0 f, 1 fr, 2 r, 3 br, 4 b, 5 bl, 6 l, 7 fl.
    Some(match name {
        "f" => &[0],
        "fr" => &[1],
        "r" => &[2],
        "br" => &[3],
        "b" => &[4],
        "bl" => &[5],
        "l" => &[6],
        "fl" => &[7],
        "orth" => &[0, 2, 4, 6],
        "diag" => &[1, 3, 5, 7],
        "all" => &[0, 1, 2, 3, 4, 5, 6, 7],
        "side" => &[2, 6],
        "vert" => &[0, 4],
        "fdiag" => &[1, 7],
        "bdiag" => &[3, 5],
        "fwd" => &[0, 1, 7],
        "bwd" => &[3, 4, 5],
        "leftward" => &[5, 6, 7],
        "rightward" => &[1, 2, 3],
        _ => return None,
    })
}

fn parse_directions(text: &str) -> Result<Vec<u8>, String> {
    let mut dirs = Vec::new();
    for part in text.split('+') {
        let group = direction_group(part.trim()).ok_or_else(|| format!("unknown direction '{part}'"))?;
        for &d in group {
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
    }
    Ok(dirs)
}

fn parse_number(text: &str) -> Result<u8, String> {
    text.trim().parse::<u8>().map_err(|_| format!("'{text}' is not a number"))
}

/// A movement token before `as(...)` references are resolved.
enum Token {
    Atoms(Vec<Atom>),
    As(String),
}

fn parse_token(token: &str) -> Result<Token, String> {
    let (name, args) = match token.find('(') {
        Some(open) => {
            if !token.ends_with(')') {
                return Err(format!("unclosed '(' in '{token}'"));
            }
            (&token[..open], token[open + 1..token.len() - 1].split(',').map(str::trim).collect::<Vec<_>>())
        }
        None => (token, Vec::new()),
    };
    let want = |n: usize| -> Result<(), String> {
        if args.len() == n {
            Ok(())
        } else {
            Err(format!("'{name}' takes {n} argument(s), got '{token}'"))
        }
    };
    let each = |f: &dyn Fn(u8) -> Atom| -> Result<Token, String> {
        Ok(Token::Atoms(parse_directions(args[0])?.into_iter().map(f).collect()))
    };
    match name {
        "step" => {
            want(1)?;
            each(&|dir| Atom::Slide { dir, max: 1 })
        }
        "limit" => {
            want(2)?;
            let max = parse_number(args[1])?;
            each(&|dir| Atom::Slide { dir, max })
        }
        "range" => {
            want(1)?;
            each(&|dir| Atom::Slide { dir, max: UNLIMITED })
        }
        "jump" => {
            want(2)?;
            let k = parse_number(args[1])?;
            each(&|dir| Atom::Jump { dir, k, then: 0 })
        }
        "jumprange" => {
            want(2)?;
            let k = parse_number(args[1])?;
            each(&|dir| Atom::Jump { dir, k, then: UNLIMITED })
        }
        "jumplimit" => {
            want(3)?;
            let k = parse_number(args[1])?;
            let then = parse_number(args[2])?;
            each(&|dir| Atom::Jump { dir, k, then })
        }
        "hop" => {
            want(2)?;
            let pieces = parse_number(args[1])?;
            each(&|dir| Atom::Hop { dir, pieces })
        }
        "rangecap" => {
            want(1)?;
            each(&|dir| Atom::RangeCapture { dir })
        }
        "rangejump" => {
            // `rangejump(D)`: over any number of pieces; `rangejump(D,n)`: over at most n.
            let pieces = match args.len() {
                1 => UNLIMITED,
                _ => {
                    want(2)?;
                    parse_number(args[1]).ok().filter(|&n| (1..UNLIMITED).contains(&n)).ok_or_else(|| {
                        format!("'{token}': rangejump(D,n) needs a count of pieces from 1 to {}", UNLIMITED - 1)
                    })?
                }
            };
            each(&|dir| Atom::RangeJump { dir, pieces })
        }
        "hook" => {
            want(1)?;
            each(&|dir| Atom::Hook { dir })
        }
        "leap" => {
            want(2)?;
            // -128 is refused: the mirror image and White's turn negate the offsets, and -128
            // has no negation in i8 (fuzz/regressions/piece_table/leap-minus-128-*).
            let offset = |text: &str| {
                text.parse::<i8>().ok().filter(|&v| v != i8::MIN).ok_or_else(|| format!("bad leap '{token}'"))
            };
            let (dx, dy) = (offset(args[0])?, offset(args[1])?);
            let mut atoms = vec![Atom::Leap { dx, dy }];
            if dx != 0 {
                atoms.push(Atom::Leap { dx: -dx, dy });
            }
            Ok(Token::Atoms(atoms))
        }
        "lion" => {
            want(0)?;
            Ok(Token::Atoms(vec![Atom::Lion]))
        }
        "lionline" => {
            // `lionline(D,n,n)`: every step may capture (Dai dai); `lionline(D,n)`: two legs
            // (Taishin). At n = 2 they are the same moves, stored the same way.
            let every_step = match args.len() {
                2 => false,
                _ => {
                    want(3)?;
                    if parse_number(args[2])? != parse_number(args[1])? {
                        return Err(format!("'{token}': in lionline(D,n,n) both counts are the reach"));
                    }
                    true
                }
            };
            let reach = parse_number(args[1])?;
            if !(2..=3).contains(&reach) {
                return Err(format!("'{token}': lionline needs a reach of 2 or 3"));
            }
            let every_step = every_step || reach == 2;
            each(&|dir| Atom::LionLine { dir, reach, every_step })
        }
        "rankjump" => {
            want(1)?;
            each(&|dir| Atom::RankJump { dir })
        }
        "rankhop" => {
            want(1)?;
            each(&|dir| Atom::RankHop { dir })
        }
        "area" => {
            want(1)?;
            let steps = parse_number(args[0])?;
            if !(2..=4).contains(&steps) {
                return Err(format!("'{token}': area(n) needs n from 2 to 4"));
            }
            Ok(Token::Atoms(vec![Atom::Area { steps }]))
        }
        "double" => {
            want(1)?;
            let dirs = parse_directions(args[0])?.into_iter().fold(0u8, |mask, d| mask | 1 << d);
            Ok(Token::Atoms(vec![Atom::Double { dirs }]))
        }
        "igui" => {
            want(0)?;
            Ok(Token::Atoms(vec![Atom::Igui]))
        }
        "teleport" => {
            want(0)?;
            Ok(Token::Atoms(vec![Atom::Teleport]))
        }
        "as" => {
            want(1)?;
            Ok(Token::As(args[0].to_string()))
        }
        _ => Err(format!("unknown movement atom '{token}'")),
    }
}

fn tokenize_moves(text: &str) -> Result<Vec<Token>, String> {
    // Split on spaces outside parentheses ("as(Free king)" keeps its space).
    let mut tokens = Vec::new();
    let mut depth = 0;
    let mut current = String::new();
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if c.is_whitespace() && depth == 0 {
            if !current.is_empty() {
                tokens.push(parse_token(&current)?);
                current.clear();
            }
        } else {
            current.push(c);
        }
    }
    if depth != 0 {
        return Err("unbalanced parentheses".into());
    }
    if !current.is_empty() {
        tokens.push(parse_token(&current)?);
    }
    Ok(tokens)
}

fn normalize(name: &str) -> String {
    name.trim().to_lowercase().replace(['’', '\''], "'").replace('-', " ")
}

/// Squares an atom reaches from the centre of an empty, unbounded board (for overlap detection).
fn footprint(atom: &Atom) -> Vec<(i32, i32)> {
    const REACH: i32 = 40;
    let delta = |dir: u8| -> (i32, i32) {
        let (dx, dy) = crate::geometry::DELTAS[dir as usize];
        (dx, dy)
    };
    let ray = |dir: u8, from: i32, to: i32| -> Vec<(i32, i32)> {
        let (dx, dy) = delta(dir);
        (from..=to).map(|i| (dx * i, dy * i)).collect()
    };
    let lim = |m: u8| if m == UNLIMITED { REACH } else { m as i32 };
    match *atom {
        Atom::Slide { dir, max } => ray(dir, 1, lim(max)),
        Atom::Jump { dir, k, then } => ray(dir, k as i32, k as i32 + lim(then).min(REACH)),
        Atom::Leap { dx, dy } => vec![(dx as i32, -(dy as i32))],
        Atom::Hop { dir, .. } | Atom::RangeCapture { dir } | Atom::RangeJump { dir, .. } => ray(dir, 1, REACH),
        // Hooks reach squares by several paths; lions and igui are deduplicated by hand.
        // Every lion line passes on its start square: always deduplicated.
        Atom::LionLine { dir, reach, .. } => {
            let mut squares = ray(dir, 1, reach as i32);
            squares.push((0, 0));
            squares
        }
        Atom::RankJump { dir } | Atom::RankHop { dir } => ray(dir, 1, REACH),
        // Area moves and double steps reach squares by several paths, and pass: deduplicated.
        Atom::Area { .. } | Atom::Double { .. } => {
            let mut squares: Vec<(i32, i32)> = (-2..=2).flat_map(|x| (-2..=2).map(move |y| (x, y))).collect();
            squares.push((0, 0));
            squares
        }
        Atom::Hook { .. } | Atom::Lion | Atom::Igui => (-2..=2).flat_map(|x| (-2..=2).map(move |y| (x, y))).collect(),
        // Everywhere: any other atom beside it overlaps.
        Atom::Teleport => {
            (-REACH..=REACH).flat_map(|x| (-REACH..=REACH).map(move |y| (x, y))).filter(|&s| s != (0, 0)).collect()
        }
    }
}

impl PieceTable {
    /// Parses a table; `options` names the rule options to apply.
    pub fn parse(text: &str, options: &[String]) -> Result<PieceTable, TableError> {
        struct Raw {
            line: usize,
            key: String,
            sign: String,
            name: String,
            kanji: String,
            promotes: String,
            royal: bool,
            burns: bool,
            far_promotion: bool,
            promoted_only: bool,
            confers: String,
            range_rank: u8,
            trap: Trap,
            moves: String,
        }
        let err = |line: usize, message: String| TableError { line: line + 1, message };
        let mut raws: Vec<Raw> = Vec::new();
        let mut replacements: Vec<(usize, String, String, String)> = Vec::new();
        let mut promotion_replacements: Vec<(usize, String, String, String)> = Vec::new();
        let mut aliases: Vec<(usize, String, String)> = Vec::new();
        let mut all_options = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.split('|').map(str::trim).collect();
            if let Some(rest) = line.strip_prefix("option ") {
                let (head, value) = rest.split_once('|').ok_or_else(|| err(n, "option line needs '|'".into()))?;
                let (option, key) =
                    head.trim().split_once(' ').ok_or_else(|| err(n, "option line needs NAME KEY".into()))?;
                // `option NAME KEY promotes-to | TARGET` replaces the promotion, else the moves.
                let (key, target) = match key.trim().strip_suffix(" promotes-to") {
                    Some(key) => (key.trim(), &mut promotion_replacements),
                    None => (key.trim(), &mut replacements),
                };
                all_options.push((option.to_string(), key.to_string()));
                target.push((n, option.to_string(), key.to_string(), value.trim().to_string()));
                continue;
            }
            if let Some(rest) = line.strip_prefix("alias ") {
                let (key, name) = rest.split_once('|').ok_or_else(|| err(n, "alias line needs KEY | Name".into()))?;
                let name = name.trim();
                if name.is_empty() {
                    return Err(err(n, "alias line needs a name after '|'".into()));
                }
                aliases.push((n, key.trim().to_string(), name.to_string()));
                continue;
            }
            if fields.len() != 6 {
                return Err(err(n, format!("expected 6 '|'-separated fields, found {}", fields.len())));
            }
            let mut raw = Raw {
                line: n,
                key: fields[0].to_string(),
                sign: fields[0].to_string(),
                name: fields[1].to_string(),
                kanji: fields[2].to_string(),
                promotes: fields[3].to_string(),
                royal: false,
                burns: false,
                far_promotion: false,
                promoted_only: false,
                confers: String::new(),
                range_rank: NO_RANK,
                trap: Trap::None,
                moves: fields[5].to_string(),
            };
            for attribute in fields[4].split_whitespace() {
                match attribute {
                    "royal" => {
                        raw.royal = true;
                        raw.range_rank = 0;
                    }
                    "burn" => raw.burns = true,
                    "farpromote" => raw.far_promotion = true,
                    "promoted-only" => raw.promoted_only = true,
                    a if a.starts_with("confers=") => raw.confers = a["confers=".len()..].to_string(),
                    "trapped" => raw.trap = Trap::FurthestRank,
                    "stuck" => raw.trap = Trap::OwnFirstRank,
                    a if a.starts_with("rank=") => {
                        raw.range_rank = parse_number(&a[5..]).map_err(|m| err(n, m))?;
                    }
                    a if a.starts_with("sign=") => raw.sign = a[5..].to_string(),
                    a => return Err(err(n, format!("unknown attribute '{a}'"))),
                }
            }
            if raws.iter().any(|r| r.key == raw.key) {
                return Err(err(n, format!("duplicate key '{}'", raw.key)));
            }
            raws.push(raw);
        }
        // Options the table does not offer are left alone: the variant checks every option
        // against what its rules file and its table offer (`Variant::from_sources`).
        for (n, option, key, moves) in replacements {
            if options.contains(&option) {
                let raw = raws
                    .iter_mut()
                    .find(|r| r.key == key)
                    .ok_or_else(|| err(n, format!("option '{option}' names unknown piece '{key}'")))?;
                raw.moves = moves;
            }
        }
        for (n, option, key, promotes) in promotion_replacements {
            if options.contains(&option) {
                let raw = raws
                    .iter_mut()
                    .find(|r| r.key == key)
                    .ok_or_else(|| err(n, format!("option '{option}' names unknown piece '{key}'")))?;
                raw.promotes = promotes;
            }
        }

        let by_key: HashMap<String, Kind> = raws.iter().enumerate().map(|(i, r)| (r.key.clone(), i as Kind)).collect();
        let mut by_name = HashMap::new();
        for (i, r) in raws.iter().enumerate() {
            by_name.entry(normalize(&r.name)).or_insert(i as Kind);
        }
        let mut aliases_of: Vec<Vec<String>> = vec![Vec::new(); raws.len()];
        for (n, key, alias) in &aliases {
            let kind = *by_key.get(key).ok_or_else(|| err(*n, format!("alias of unknown piece '{key}'")))?;
            // An alias names one piece: it may not be another piece's key, name or alias.
            let clash = by_key.get(alias).or_else(|| by_name.get(&normalize(alias))).filter(|&&k| k != kind);
            if let Some(&other) = clash {
                return Err(err(*n, format!("alias '{alias}' already names '{}'", raws[other as usize].key)));
            }
            by_name.insert(normalize(alias), kind);
            aliases_of[kind as usize].push(alias.clone());
        }
        let tokens: Vec<Vec<Token>> =
            raws.iter().map(|r| tokenize_moves(&r.moves).map_err(|m| err(r.line, m))).collect::<Result<_, _>>()?;

        // Resolve as(KEY) depth-first, rejecting cycles. Each type is resolved once (`done`):
        // without it a chain of types each naming the next twice took exponential time
        // (fuzz/regressions/piece_table/as-chain-exponential).
        fn resolve(
            i: usize,
            tokens: &[Vec<Token>],
            by_key: &HashMap<String, Kind>,
            by_name: &HashMap<String, Kind>,
            stack: &mut Vec<usize>,
            done: &mut [Option<Vec<Atom>>],
        ) -> Result<Vec<Atom>, String> {
            if let Some(atoms) = &done[i] {
                return Ok(atoms.clone());
            }
            if stack.contains(&i) {
                return Err("as(...) references form a cycle".into());
            }
            stack.push(i);
            let mut atoms = Vec::new();
            for token in &tokens[i] {
                match token {
                    Token::Atoms(list) => atoms.extend(list.iter().copied()),
                    Token::As(key) => {
                        let target = by_key
                            .get(key)
                            .or_else(|| by_name.get(&normalize(key)))
                            .ok_or_else(|| format!("as({key}) names an unknown piece"))?;
                        atoms.extend(resolve(*target as usize, tokens, by_key, by_name, stack, done)?);
                    }
                }
            }
            stack.pop();
            let mut unique = Vec::new();
            for a in atoms {
                if !unique.contains(&a) {
                    unique.push(a);
                }
            }
            // Lion power includes igui: an `igui` beside `lion` made every igui move twice
            // (fuzz/regressions/piece_table/lion-igui).
            if unique.contains(&Atom::Lion) {
                unique.retain(|&a| a != Atom::Igui);
            }
            done[i] = Some(unique.clone());
            Ok(unique)
        }

        let mut types = Vec::with_capacity(raws.len());
        let mut done = vec![None; raws.len()];
        for (i, r) in raws.iter().enumerate() {
            let atoms =
                resolve(i, &tokens, &by_key, &by_name, &mut Vec::new(), &mut done).map_err(|m| err(r.line, m))?;
            if atoms.is_empty() {
                return Err(err(r.line, format!("piece '{}' has no moves", r.key)));
            }
            // `promotes to` and `confers=` name a piece by key or name, as `as(...)` does.
            let named = |target: &str, what: &str| {
                by_key
                    .get(target)
                    .or_else(|| by_name.get(&normalize(target)))
                    .copied()
                    .ok_or_else(|| err(r.line, format!("{what} unknown piece '{target}'")))
            };
            let promotes_to = match r.promotes.as_str() {
                "-" | "" => None,
                target => Some(named(target, "promotes to")?),
            };
            let confers = match r.confers.as_str() {
                "" => None,
                target => Some(named(target, "confers")?),
            };
            if r.far_promotion && promotes_to.is_none() {
                return Err(err(r.line, format!("'{}' has farpromote but does not promote", r.key)));
            }
            let overlapping = {
                let mut seen = std::collections::HashSet::new();
                let mut overlap =
                    atoms.iter().any(|a| matches!(a, Atom::Hook { .. } | Atom::Area { .. } | Atom::Double { .. }));
                for a in &atoms {
                    for sq in footprint(a) {
                        overlap |= !seen.insert(sq);
                    }
                }
                overlap
            };
            types.push(PieceType {
                key: r.key.clone(),
                sign: r.sign.clone(),
                name: r.name.clone(),
                kanji: r.kanji.clone(),
                promotes_to,
                royal: r.royal,
                range_rank: r.range_rank,
                trap: r.trap,
                atoms,
                overlapping,
                promoted_only: r.promoted_only,
                aliases: std::mem::take(&mut aliases_of[i]),
                burns: r.burns,
                confers,
                far_promotion: r.far_promotion,
            });
        }
        for (t, r) in types.iter().zip(&raws) {
            // A set-up piece is written by its key in position texts (lower case for White) and
            // by its sign in notation (upper-case letters): `_P` or `Pa` could not be read back
            // (fuzz/regressions/piece_table/key-*). A promoted-only piece is written as the
            // promoted form of its origin, so its key may be its name.
            if !t.promoted_only && (!is_code(&t.key) || !is_code(&t.sign)) {
                return Err(err(
                    r.line,
                    format!(
                        "key '{}' and sign '{}' must be upper-case letters A-Z (a piece that only appears by \
                         promotion is marked `promoted-only`)",
                        t.key, t.sign
                    ),
                ));
            }
            if t.promoted_only && t.promotes_to.is_some() {
                return Err(err(r.line, format!("promoted-only piece '{}' cannot promote again", t.key)));
            }
        }
        let mut motions = Vec::with_capacity(types.len());
        let mut absolute_atoms = [Vec::new(), Vec::new()];
        let mut absolute_rays = [Vec::new(), Vec::new()];
        for t in &types {
            let plain_slider = Motion::plain_slider(t);
            let rays_only = !plain_slider
                && !t.far_promotion
                && !t.atoms.is_empty()
                && t.atoms.iter().all(|a| matches!(a, Atom::Slide { .. } | Atom::Jump { .. }));
            // A plain slider's (relative direction, longest slide), in table order.
            let plain_slides: Vec<(u8, u8)> = t
                .atoms
                .iter()
                .filter(|_| plain_slider)
                .filter_map(|a| match *a {
                    Atom::Slide { dir, max } => Some((dir, max)),
                    _ => None,
                })
                .collect();
            motions.push(Motion {
                start: absolute_atoms[0].len() as u32,
                len: t.atoms.len() as u32,
                range_rank: t.range_rank,
                trap: t.trap,
                overlapping: t.overlapping,
                zone_promotion: false,
                far_promotion: t.far_promotion,
                teleports: t.atoms.contains(&Atom::Teleport),
                line_dirs: Color::BOTH.map(|color| {
                    t.atoms.iter().filter_map(|a| a.absolute(color).first_square_dir()).fold(0, |dirs, d| dirs | 1 << d)
                }),
                only_lines: t.atoms.iter().all(|a| a.first_square_dir().is_some()),
                plain_slider,
                slide_bits: Color::BOTH.map(|color| {
                    let mut bits = [0; DIRECTION_COUNT];
                    for (bit, slide) in bits.iter_mut().zip(&plain_slides) {
                        *bit = 1 << absolute_direction(slide.0, color);
                    }
                    bits
                }),
                slide_max: {
                    let mut max = [0; DIRECTION_COUNT];
                    for (m, slide) in max.iter_mut().zip(&plain_slides) {
                        *m = slide.1;
                    }
                    max
                },
                hooks_only: !t.atoms.is_empty()
                    && t.atoms.iter().all(|a| matches!(a, Atom::Hook { .. }))
                    && t.atoms
                        .iter()
                        .filter_map(|a| a.first_square_dir())
                        .fold(0u8, |dirs, d| dirs | 1 << d)
                        .count_ones()
                        == t.atoms.len() as u32,
                rays_only,
            });
            for color in Color::BOTH {
                absolute_atoms[color.index()].extend(t.atoms.iter().map(|a| a.absolute(color)));
                absolute_rays[color.index()]
                    .extend(t.atoms.iter().map(|a| a.absolute(color).ray().unwrap_or_default()));
            }
        }
        let has_burners = types.iter().any(|t| t.burns);
        let has_conferrers = types.iter().any(|t| t.confers.is_some());
        Ok(PieceTable {
            types,
            motions,
            absolute_atoms,
            absolute_rays,
            by_key,
            by_name,
            options: all_options,
            has_burners,
            has_conferrers,
        })
    }

    /// Marks the types that promote as offering promotion in a zone (`Motion::zone_promotion`).
    pub(crate) fn mark_zone_promotion(&mut self) {
        for (motion, t) in self.motions.iter_mut().zip(&self.types) {
            motion.zone_promotion = t.promotes_to.is_some();
        }
    }

    /// A type's atoms with absolute directions for `color` (the generator's view).
    #[inline]
    pub fn absolute_atoms(&self, motion: &Motion, color: Color) -> &[Atom] {
        &self.absolute_atoms[color.index()][motion.start as usize..(motion.start + motion.len) as usize]
    }

    /// A `Motion::rays_only` type's atoms as rays, with absolute directions for `color`.
    #[inline]
    pub fn absolute_rays(&self, motion: &Motion, color: Color) -> &[Ray] {
        &self.absolute_rays[color.index()][motion.start as usize..(motion.start + motion.len) as usize]
    }

    /// The generator's compact view of a type, for `absolute_atoms`.
    #[inline]
    pub fn motion_of(&self, kind: Kind) -> &Motion {
        &self.motions[kind as usize]
    }

    /// Number of piece types: every `Kind` is below it.
    pub fn len(&self) -> usize {
        self.types.len()
    }

    /// Whether the table has no piece types.
    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }

    /// The type of `kind`; panics if `kind` is not in the table.
    pub fn get(&self, kind: Kind) -> &PieceType {
        &self.types[kind as usize]
    }

    /// Exact, case-sensitive key lookup (`LN`, `Free bird`); `lookup` also takes names and signs.
    pub fn by_key(&self, key: &str) -> Option<Kind> {
        self.by_key.get(key).copied()
    }

    /// Looks a piece up by key (`LN`), notation sign (`HD` is ambiguous and not accepted) or
    /// English name (`Lion`, case-insensitive).
    pub fn lookup(&self, text: &str) -> Option<Kind> {
        let text = text.trim();
        self.by_key
            .get(text)
            .or_else(|| self.by_key.get(&text.to_uppercase()))
            .or_else(|| self.by_name.get(&normalize(text)))
            .copied()
    }

    /// The piece that placing `kind` (a key or name looked up by `lookup`) puts on the board:
    /// `promoted` asks for the promoted side of a set-up type; a promoted-only type is placed as
    /// the promoted form of the first type that promotes to it.
    pub fn placement(&self, kind: Kind, promoted: bool, color: Color) -> Result<Piece, PlacementError> {
        let ty = self.get(kind);
        if ty.promoted_only {
            let origin = self.origins_of(kind).next().ok_or_else(|| PlacementError::NoOrigin(ty.name.clone()))?;
            Ok(Piece { kind, origin, color, promoted: true })
        } else if promoted {
            let to = ty.promotes_to.ok_or_else(|| PlacementError::DoesNotPromote(ty.name.clone()))?;
            Ok(Piece { kind: to, origin: kind, color, promoted: true })
        } else {
            Ok(Piece { kind, origin: kind, color, promoted: false })
        }
    }

    /// The unpromoted pieces that promote to `kind`, in table order.
    pub fn origins_of(&self, kind: Kind) -> impl Iterator<Item = Kind> + '_ {
        self.types.iter().enumerate().filter(move |(_, t)| t.promotes_to == Some(kind)).map(|(i, _)| i as Kind)
    }
}

/// Why `PieceTable::placement` cannot place a piece; each carries the type's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlacementError {
    /// A promoted-only type that no type promotes to.
    NoOrigin(String),
    /// `promoted` was asked of a type that does not promote.
    DoesNotPromote(String),
}

impl fmt::Display for PlacementError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoOrigin(name) => write!(f, "no piece promotes to '{name}'"),
            Self::DoesNotPromote(name) => write!(f, "{name} does not promote"),
        }
    }
}

impl std::error::Error for PlacementError {}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "
# comment
K  | King   | 玉将 | -  | royal | limit(all,2)
B  | Bishop | 角行 | DH |       | range(diag)
DH | Dragon horse | 龍馬 | - | | range(diag) step(orth)
N  | Knight | 桂馬 | -  | trapped | leap(1,2)
X  | Copy   | 写   | -  |        | as(B) step(f)
option long-king K | limit(all,3)
";

    #[test]
    fn parses_atoms_and_attributes() {
        let t = PieceTable::parse(SAMPLE, &[]).unwrap();
        assert_eq!(t.len(), 5);
        let k = t.get(t.lookup("K").unwrap());
        assert!(k.royal);
        assert_eq!(k.range_rank, 0);
        assert_eq!(k.atoms.len(), 8);
        assert_eq!(k.atoms[0], Atom::Slide { dir: 0, max: 2 });
        let b = t.lookup("bishop").unwrap();
        assert_eq!(t.get(b).promotes_to, t.lookup("DH"));
        let n = t.get(t.lookup("Knight").unwrap());
        assert_eq!(n.trap, Trap::FurthestRank);
        assert_eq!(n.atoms, vec![Atom::Leap { dx: 1, dy: 2 }, Atom::Leap { dx: -1, dy: 2 }]);
        let x = t.get(t.lookup("X").unwrap());
        assert_eq!(x.atoms.len(), 5);
        assert!(!x.overlapping);
        assert!(!t.get(t.lookup("DH").unwrap()).overlapping);
    }

    #[test]
    fn options_replace_moves() {
        let t = PieceTable::parse(SAMPLE, &["long-king".to_string()]).unwrap();
        assert_eq!(t.get(0).atoms[0], Atom::Slide { dir: 0, max: 3 });
        // An option the table does not offer changes nothing here (the variant refuses it).
        let same = PieceTable::parse(SAMPLE, &["nonsense".to_string()]).unwrap();
        assert_eq!(same.get(0).atoms, PieceTable::parse(SAMPLE, &[]).unwrap().get(0).atoms);
    }

    #[test]
    fn errors_name_the_line() {
        let e = PieceTable::parse("K | King | k | - | | fly(all)", &[]).unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains("fly(all)"));
        let e = PieceTable::parse("K | King | k | Q | | step(all)", &[]).unwrap_err();
        assert!(e.message.contains("unknown piece 'Q'"));
    }
}
