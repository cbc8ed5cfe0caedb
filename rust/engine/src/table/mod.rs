//! Piece tables: the rules of a variant as data (format: docs/PIECE_TABLE.md).
//!
//! A table line names a piece, its promotion and attributes, and its movement as a list of
//! atoms. `as(KEY)` references and rule options are resolved here, so the move generator only
//! ever sees plain atoms with owner-relative directions.

//!
//! - `grammar`: the movement strings (directions, atoms, `as(KEY)`), and each atom's footprint;
//! - `parse`: `PieceTable::parse`, a table's text to the types, in named steps;
//! - here: the types the generator reads (`Atom`, `PieceType`, `Motion`, `PieceTable`) and
//!   lookups by key and name.

mod grammar;
mod parse;

use crate::geometry::{absolute_direction, Color, DIRECTION_COUNT};
use grammar::normalize;
pub(crate) use parse::{footprints_meet, overlapping};
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
    /// Per type, the first type written with the same sign (`sign_class`) and whether another
    /// type is (`shares_sign`).
    sign_classes: Vec<(Kind, bool)>,
}

impl PieceTable {
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

    /// The first type (in file order) written with `kind`'s sign: two types share a sign
    /// exactly when they share a class (both howling dogs are `HD`), a comparison of numbers
    /// where notation looks for another piece written the same way.
    #[inline]
    pub fn sign_class(&self, kind: Kind) -> Kind {
        self.sign_classes[kind as usize].0
    }

    /// Whether another type is written with `kind`'s sign.
    #[inline]
    pub fn shares_sign(&self, kind: Kind) -> bool {
        self.sign_classes[kind as usize].1
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
