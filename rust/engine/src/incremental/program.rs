//! What the state needs of each piece type, compiled once per variant: a `Program` per type
//! and colour (its plain atoms, the directions they read, whether it may keep counts), and the
//! board tables the scans read (`SquareLines`). `Compiled` holds them; the variant keeps it
//! (`Compiled::of`), and each `MoveState` holds it too, so the hot paths read it without the
//! variant's cache (invariant 1 of the module documentation).

use super::hooks::HookProgram;
use super::lines::{LinePlace, SquareLines, RANK_LEVELS};
use super::local_cells::{cell, slide_cells, LocalCells, BOX_RADIUS};
use crate::geometry::{Color, DELTAS, DIRECTION_COUNT};
use crate::movegen::dead_ends;
use crate::position::Piece;
use crate::table::{footprints_meet, overlapping as table_overlapping, Atom, Ray, Trap};
use crate::variant::Variant;
use std::sync::{Arc, OnceLock};

/// A plain atom: a ray (a slide, or a jump with its continuation) or a leap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PlainAtom {
    /// The square at distance `k`, then up to `extra` more free squares beyond an empty one:
    /// a slide of `max` squares is `k = 1, extra = max - 1`.
    Ray { dir: u8, k: u8, extra: u8 },
    /// One square at (dx, dy), absolute (x right, y down).
    Leap { dx: i8, dy: i8 },
    /// A line atom that reads past pieces (hop, range jump, range capture, rank jump or hop),
    /// counted over the line bits (`MoveState::walk_count`).
    Walk(Walk),
    /// The local powers (lion, lion lines, igui, double steps; and plain jumps after them) from
    /// atom `from` on, the last atoms, reaching no square the others reach, or after slides
    /// less the simple moves to squares a slide gave (`Program::powers_meet`): their moves are
    /// counted together by generating them alone (`MoveState::powers_moves`; a lone lion over
    /// the box, `MoveState::lion_count`), and found again so when asked for.
    Powers { from: u8 },
    /// An area move of up to `steps` (at most `local_cells::BOX_RADIUS`), the last atom, after
    /// slides and walks that do not sweep: its moves are the squares it reaches that they did
    /// not give, and a pass, counted over the box around the piece (`MoveState::area_box`, in
    /// `count_plain`); the lines, first in the table, give their moves in full.
    Area { steps: u8 },
}

/// A walk along one line (`PlainAtom::Walk`): its moves are the free squares (all of them, or
/// only those before the first piece) and the enemy pieces up to the piece it stops on, or
/// the edge (`Position::generate_atom`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Walk {
    pub(super) dir: u8,
    pub(super) stop: Stop,
    /// It moves to the free squares beyond a piece too (not a range or rank jump).
    pub(super) free_beyond: bool,
    /// A move past a piece sweeps (range capture).
    pub(super) sweeps: bool,
}

/// The piece a walk stops on (the last square it reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stop {
    /// The piece after the first `n` (a hop or range jump passes `n`; never for `UNLIMITED`).
    After(u8),
    /// The first piece of a range rank not below the walker's: in `LineBits::ranked` level
    /// `l` (`Compiled::rank_levels`).
    Ranked(u8),
}

/// The one ray of a program along a direction (`Program::lone_rays`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct LoneRay {
    /// Its place among the plain atoms (its count slot).
    pub(super) slot: u8,
    /// As `PlainAtom::Ray`.
    pub(super) k: u8,
    pub(super) extra: u8,
}

/// What the state needs of one (type, colour), compiled once per variant.
#[derive(Clone, Debug)]
pub(super) struct Program {
    /// The atoms in table order when all are plain and never reach the same square, or all
    /// are rays (rays along one line may: `overlaps`).
    pub(super) plain: Option<Vec<PlainAtom>>,
    /// Per absolute direction, bit `i` set when plain atom `i` is a ray that way.
    pub(super) rays_in: [u64; DIRECTION_COUNT],
    /// Per absolute direction, when its only atom is a ray: that ray, so a reader counts it
    /// again without reading the atoms (the common case).
    // Speed: one dependent load fewer for most readers; 2–3% faster random play
    // (docs/PERFORMANCE.md, issue 13's ninth step).
    pub(super) lone_rays: [Option<LoneRay>; DIRECTION_COUNT],
    /// Bit `dir` set when two rays that way may reach the same square: a ray's moves there
    /// are the squares no earlier ray gave (`MoveState::fresh_squares`), as in the reference.
    pub(super) overlaps: u8,
    /// Largest local read of the plain atoms (a leap's or an area move's Chebyshev radius), 0
    /// without them.
    pub(super) local_radius: u8,
    /// The squares around it its local atoms read.
    pub(super) local: LocalCells,
    /// The steps of its area move when it is counted (`PlainAtom::Area`): its moves come
    /// from the reference when asked for (`MoveState::nth`).
    pub(super) counted_area: Option<u8>,
    /// Its powers reach squares its slides reach (`PlainAtom::Powers` after slides, one a
    /// direction): the reach of the powers and jumps after the slides (at most
    /// `local_cells::BOX_RADIUS`); the powers' moves to squares within it that a slide gave are
    /// not theirs (`MoveState::powers_moves`).
    pub(super) powers_meet: Option<u8>,
    /// Its powers are one lion, counted over the box around it (`MoveState::lion_count`)
    /// without generating them.
    pub(super) lone_lion: bool,
    /// Counting it generates moves (an area move or powers, `PlainAtom::Area`, `Powers`): like
    /// a listed piece, it waits until its side moves when a change it read is not its side's.
    pub(super) generates: bool,
    /// An unpromoted piece of this type may choose to promote (zone or furthest rank), so some
    /// of its moves come twice: it keeps counts only while none of its moves can (`Offers`).
    pub(super) offers: Option<Offers>,
    /// `PieceType::trap`.
    trap: Trap,
    /// It has an atom that reads past a piece (a jump over two or more squares, hop, range
    /// capture or jump): it can read a square that another piece hides (`LineBits::through`).
    pub(super) sees_through: bool,
    /// Its atoms are all hooks (`Motion::hooks_only`): it keeps counts per turn (`HookCounts`)
    /// while none of its moves can be offered promotion and it is not trapped.
    pub(super) hooks: Option<HookProgram>,
    /// Slots it takes in `Tables::counts`: its number of atoms when plain.
    pub(super) slots: usize,
}

impl Program {
    /// `level`: the index in `Compiled::rank_levels` of the type's range rank, if the line
    /// bits hold that level (`RANK_LEVELS`). `no_pass_limit`: the variant limits no passes, so a
    /// pass of an area move or a power is always a move, and they can be counted.
    fn compile(
        atoms: &[Atom],
        overlapping: bool,
        hooks_only: bool,
        offers: Option<Offers>,
        trap: Trap,
        level: Option<u8>,
        no_pass_limit: bool,
    ) -> Program {
        let mut plain = Vec::new();
        let mut rays_in = [0u64; DIRECTION_COUNT];
        let mut local_radius = 0u8;
        // Beyond 64 atoms the per-direction masks cannot name them all: such a type is listed.
        // Atoms that reach the same squares are plain only when all are rays: then only two
        // along one line can, and each counts what the earlier ones did not give.
        let rays_only = atoms.iter().all(|a| matches!(a, Atom::Slide { .. } | Atom::Jump { .. }));
        // Slides and walks that do not sweep (one a direction), then one area move: they overlap
        // only where the area move reaches their squares, which its count leaves out
        // (`PlainAtom::Area`).
        let line_dirs = atoms.iter().fold(0u16, |m, a| match a {
            Atom::Slide { dir, .. }
            | Atom::Hop { dir, .. }
            | Atom::RangeJump { dir, .. }
            | Atom::RankJump { dir }
            | Atom::RankHop { dir } => m | 1 << dir,
            _ => m,
        });
        let area_after_lines = no_pass_limit
            && matches!(atoms.last(), Some(&Atom::Area { steps }) if steps as usize <= BOX_RADIUS)
            && line_dirs.count_ones() as usize == atoms.len() - 1;
        // Lines and leaps, then local powers (lion, lion lines, igui, double steps) that reach
        // none of their squares: the powers are counted together (`PlainAtom::Powers`).
        let is_power = |a: &Atom| matches!(a, Atom::Lion | Atom::LionLine { .. } | Atom::Igui | Atom::Double { .. });
        let first_power = atoms.iter().position(is_power).unwrap_or(atoms.len());
        let (lines, powers) = atoms.split_at(first_power);
        let powers_after_lines = no_pass_limit
            && !powers.is_empty()
            && powers.iter().all(is_power)
            && (!table_overlapping(lines) || lines.iter().all(|a| matches!(a, Atom::Slide { .. } | Atom::Jump { .. })))
            && !footprints_meet(lines, powers);
        // Or slides, one a direction, then powers and plain jumps that reach some of their
        // squares (lion hawk, free eagle): the powers' moves that a slide gave are left out
        // of their count (`Program::powers_meet`). Not lion lines: they run along the slides'
        // own lines, so most changes there count the whole piece again (Dai dai's great
        // elephant made random play 0.7% slower so, issue 27).
        // Speed: random Tenjiku 1.5% fewer instructions (issue 27, item 5).
        let tail_radius = powers.iter().fold(0u8, |r, &a| match (a, local_read(a)) {
            (Atom::Jump { k, then: 0, .. }, _) => r.max(k),
            (_, Read::Local(radius)) => r.max(radius),
            (_, Read::Other) => u8::MAX,
        });
        let powers_meet = (no_pass_limit
            && !powers_after_lines
            && !powers.is_empty()
            && powers
                .iter()
                .all(|a| matches!(a, Atom::Lion | Atom::Igui | Atom::Double { .. } | Atom::Jump { then: 0, .. }))
            && lines.iter().all(|a| matches!(a, Atom::Slide { .. }))
            && !table_overlapping(lines)
            && tail_radius as usize <= BOX_RADIUS)
            .then_some(tail_radius);
        let powers_after_lines = powers_after_lines || powers_meet.is_some();
        let mut all_plain = (!overlapping || rays_only || area_after_lines || powers_after_lines) && atoms.len() <= 64;
        for (i, &atom) in atoms.iter().enumerate() {
            if i > first_power && powers_after_lines {
                // Counted with the first.
                continue;
            }
            let compiled = match atom {
                Atom::Slide { .. } | Atom::Jump { .. } => {
                    let Ray { dir, k, extra } = atom.ray().expect("a slide or a jump");
                    PlainAtom::Ray { dir, k, extra }
                }
                Atom::Leap { dx, dy } => {
                    local_radius = local_radius.max(dx.unsigned_abs()).max(dy.unsigned_abs());
                    PlainAtom::Leap { dx, dy }
                }
                Atom::Area { steps } if area_after_lines => {
                    local_radius = local_radius.max(steps);
                    PlainAtom::Area { steps }
                }
                _ if i == first_power && powers_after_lines => {
                    for &power in powers {
                        if let Read::Local(r) = local_read(power) {
                            local_radius = local_radius.max(r);
                        }
                    }
                    local_radius = local_radius.max(powers_meet.unwrap_or(0));
                    PlainAtom::Powers { from: i as u8 }
                }
                Atom::Hop { dir, pieces } | Atom::RangeJump { dir, pieces } => {
                    let free_beyond = matches!(atom, Atom::Hop { .. });
                    PlainAtom::Walk(Walk { dir, stop: Stop::After(pieces), free_beyond, sweeps: false })
                }
                // A rank beyond the levels the line bits hold keeps a list.
                Atom::RangeCapture { dir } | Atom::RankJump { dir } | Atom::RankHop { dir } if level.is_some() => {
                    let stop = Stop::Ranked(level.expect("tested"));
                    let free_beyond = !matches!(atom, Atom::RankJump { .. });
                    let sweeps = matches!(atom, Atom::RangeCapture { .. });
                    PlainAtom::Walk(Walk { dir, stop, free_beyond, sweeps })
                }
                _ => {
                    all_plain = false;
                    continue;
                }
            };
            if let PlainAtom::Ray { dir, .. } | PlainAtom::Walk(Walk { dir, .. }) = compiled {
                rays_in[dir as usize] |= 1u64.checked_shl(i as u32).unwrap_or(0);
            }
            plain.push(compiled);
        }
        let sees_through = atoms.iter().any(|a| match *a {
            Atom::Jump { k, .. } => k >= 2,
            Atom::Hop { .. }
            | Atom::RangeCapture { .. }
            | Atom::RangeJump { .. }
            | Atom::RankJump { .. }
            | Atom::RankHop { .. } => true,
            _ => false,
        });
        let hooks = HookProgram::of(atoms, hooks_only);
        let slots = if all_plain { plain.len() } else { 0 };
        let overlaps = if overlapping {
            (0..DIRECTION_COUNT).filter(|&d| rays_in[d].count_ones() > 1).fold(0, |m, d| m | 1 << d)
        } else {
            0
        };
        let lone_rays = std::array::from_fn(|d| {
            let slot = rays_in[d].trailing_zeros() as usize;
            match plain.get(slot) {
                Some(&PlainAtom::Ray { k, extra, .. }) if rays_in[d].count_ones() == 1 => {
                    Some(LoneRay { slot: slot as u8, k, extra })
                }
                _ => None,
            }
        });
        let counted_area = plain.iter().find_map(|a| match *a {
            PlainAtom::Area { steps } if all_plain => Some(steps),
            _ => None,
        });
        let generates =
            all_plain && plain.iter().any(|a| matches!(a, PlainAtom::Area { .. } | PlainAtom::Powers { .. }));
        let mut local = LocalCells::of(atoms);
        if let Some(radius) = powers_meet.filter(|_| all_plain) {
            // The jumps read their squares; and which of the powers' moves a slide gave
            // depends on the slides' squares within their reach: a change there counts the
            // piece again in full.
            for &atom in atoms {
                match atom {
                    Atom::Jump { dir, k, .. } => {
                        let (dx, dy) = DELTAS[dir as usize];
                        local.fixed |= cell(dx * k as i32, dy * k as i32);
                    }
                    Atom::Slide { dir, .. } => local.fixed |= slide_cells(dir, radius, radius),
                    _ => {}
                }
            }
        }
        if let Some(steps) = counted_area {
            // What a walk gives within the area's reach depends on squares the area move may
            // not read: those are read too, so a change there counts the piece again in full.
            for &atom in &plain {
                if let PlainAtom::Walk(Walk { dir, .. }) = atom {
                    local.fixed |= slide_cells(dir, steps, steps);
                }
            }
        }
        Program {
            plain: all_plain.then_some(plain),
            rays_in,
            lone_rays,
            overlaps,
            local_radius,
            local,
            counted_area,
            powers_meet: powers_meet.filter(|_| all_plain),
            lone_lion: all_plain && powers_after_lines && powers == [Atom::Lion],
            generates,
            // Not over an area move, whose moves come in the reference's order alone.
            offers: offers.map(|o| Offers { counted: o.counted.filter(|_| counted_area.is_none()), ..o }),
            trap,
            sees_through,
            hooks,
            slots,
        }
    }

    /// Whether `piece` on `sq` keeps counts (else a list): see the module documentation.
    /// Before its moves are known: `MoveState::offered` decides the rest.
    pub(super) fn is_plain(&self, piece: Piece, rank_from_front: usize, height: usize) -> bool {
        self.plain.is_some()
            && !self.offers.is_some_and(|o| !piece.promoted && o.from & (1 << rank_from_front) != 0)
            && self.free(rank_from_front, height)
    }

    /// Whether `piece` on `sq` keeps hook counts (else a list): a hook piece none of whose
    /// moves can be offered promotion (its hooks reach too far to tell cheaply, so only a
    /// type that cannot promote, or a promoted piece), not trapped.
    pub(super) fn counts_hooks(&self, piece: Piece, rank_from_front: usize, height: usize) -> bool {
        self.hooks.is_some() && self.unoffered_and_free(piece, rank_from_front, height)
    }

    /// No move of `piece` can be offered promotion (a type that cannot promote, or a promoted
    /// piece), and it is not trapped where it stands: no filter or offer runs over its moves.
    fn unoffered_and_free(&self, piece: Piece, rank_from_front: usize, height: usize) -> bool {
        (self.offers.is_none() || piece.promoted) && self.free(rank_from_front, height)
    }

    /// Not trapped where it stands (`Trap`).
    fn free(&self, rank_from_front: usize, height: usize) -> bool {
        match self.trap {
            Trap::None => true,
            Trap::FurthestRank => rank_from_front != 0,
            Trap::OwnFirstRank => rank_from_front != height - 1,
        }
    }
}

/// Where an unpromoted piece's plain moves could be offered promotion (bits of ranks counted
/// from its owner's far side; `Position::promotion_offer` and `far_promotion_offered`). A piece
/// outside `from` keeps counts when no move ends on a rank of `to`, or, for a type whose
/// twins are `counted`, whatever its moves reach.
#[derive(Clone, Copy, Debug)]
pub(super) struct Offers {
    /// The promotion zone (a move from there may promote by capturing, or by any move under
    /// `promotion-trigger touch`).
    from: u64,
    /// The zone, the ranks where promotion is compulsory, and the furthest rank for
    /// `farpromote`.
    pub(super) to: u64,
    /// The zone's depth, where a piece outside it counts its promotion twins (`twins.rs`):
    /// under either trigger such a piece's line move comes twice exactly when it ends in the
    /// zone, as long as none is forced (a type without dead ends) and the type has no
    /// `farpromote`; its powers' twins are the rule's own offers. Not with an area move, whose
    /// moves only the reference orders (`Program::compile` clears it).
    pub(super) counted: Option<u8>,
}

impl Offers {
    fn of(variant: &Arc<Variant>, kind: usize) -> Option<Offers> {
        let motion = variant.table.motion_of(kind as u16);
        let mut offers = Offers { from: 0, to: 0, counted: None };
        if motion.zone_promotion {
            let zone = variant.rules.zone().expect("zone promotion needs a zone");
            let ranks = (1u64 << zone.depth.min(63)) - 1;
            let dead = dead_ends(variant).get(kind).copied().unwrap_or(0);
            offers.from |= ranks;
            offers.to |= ranks | dead;
            offers.counted = (dead == 0 && !motion.far_promotion).then_some(zone.depth.min(63));
        }
        if motion.far_promotion {
            offers.to |= 1;
        }
        (motion.zone_promotion || motion.far_promotion).then_some(offers)
    }
}

/// A variant's programs and board tables, built once per variant (`Compiled::of`).
#[derive(Debug)]
pub(super) struct Compiled {
    /// Index `kind * 2 + colour`.
    programs: Vec<Program>,
    /// Count slots per square: the most atoms of a plain type.
    pub(super) stride: usize,
    /// The largest Chebyshev radius any atom reads around its piece.
    pub(super) local_max: usize,
    /// Whether any type has a hook.
    pub(super) hooks: bool,
    /// Per square: its lines and distances to the edge.
    pub(super) square_lines: Vec<SquareLines>,
    /// Lines of `Tables::lines`: those of each orientation.
    pub(super) line_count: usize,
    /// The range ranks of the types that walk to a piece of a rank not below theirs (range
    /// captures, rank jumps and hops), in order: one level of `LineBits::ranked` each.
    pub(super) rank_levels: Vec<u8>,
    /// Per type, bit `l` set when its range rank is at most `rank_levels[l]` (a rank walker
    /// of that level stops on it).
    pub(super) rank_masks: Vec<u8>,
    /// The opening position's state, built on first use (`MoveState::new`).
    pub(super) opening: OnceLock<super::Tables>,
}

impl Compiled {
    /// The compiled table of `variant`, built on first use and kept with the variant
    /// (`Variant::caches`, a slot this module alone fills).
    pub(super) fn of(variant: &Arc<Variant>) -> &Arc<Compiled> {
        variant.caches.move_state.get_or_init(|| Arc::new(Compiled::new(variant)))
    }

    /// Compiles `variant`'s table for the incremental state.
    fn new(variant: &Arc<Variant>) -> Compiled {
        let table = &variant.table;
        let ranked = |kind: usize| {
            let atoms = table.absolute_atoms(table.motion_of(kind as u16), Color::Black);
            atoms.iter().any(|a| matches!(a, Atom::RangeCapture { .. } | Atom::RankJump { .. } | Atom::RankHop { .. }))
        };
        let mut rank_levels: Vec<u8> =
            (0..table.len()).filter(|&k| ranked(k)).map(|k| table.motion_of(k as u16).range_rank).collect();
        rank_levels.sort_unstable();
        rank_levels.dedup();
        // The lowest ranks get the levels the line bits hold; walkers of the others keep lists.
        rank_levels.truncate(RANK_LEVELS);
        let rank_masks = (0..table.len())
            .map(|k| {
                let rank = table.motion_of(k as u16).range_rank;
                rank_levels.iter().enumerate().filter(|&(_, &level)| rank <= level).fold(0u8, |m, (l, _)| m | 1 << l)
            })
            .collect();
        let mut programs = Vec::with_capacity(table.len() * 2);
        let mut local_max = 0usize;
        let mut hooks = false;
        for (kind, ty) in table.types.iter().enumerate() {
            let motion = table.motion_of(kind as u16);
            for color in Color::BOTH {
                let atoms = table.absolute_atoms(motion, color);
                let level = rank_levels.iter().position(|&r| r == motion.range_rank).map(|l| l as u8);
                programs.push(Program::compile(
                    atoms,
                    motion.overlapping,
                    motion.hooks_only,
                    Offers::of(variant, kind),
                    ty.trap,
                    level,
                    variant.rules.max_consecutive_passes.is_none(),
                ));
                for &atom in atoms {
                    hooks |= matches!(atom, Atom::Hook { .. });
                    if let Read::Local(r) = local_read(atom) {
                        local_max = local_max.max(r as usize);
                    }
                }
            }
        }
        let stride = programs.iter().map(|p| p.slots).max().unwrap_or(0);
        // Ranks, files, then the diagonals where x + y and x - y are constant; bit x, or y in a file.
        let (w, h) = (variant.geometry.width, variant.geometry.height);
        // 214 lines on the largest board (`rules::MAX_SIDE`).
        assert!(h + w + 2 * (w + h - 1) <= 256, "a board of {w} x {h} has more than 256 lines");
        let square_lines = (0..variant.geometry.size())
            .map(|sq| {
                let (x, y) = (sq % w, sq / w);
                let places = [(y, x), (h + x, y), (h + w + x + y, x), (h + w + (w + h - 1) + x + h - 1 - y, x)];
                let edge = std::array::from_fn(|d| variant.geometry.edge(sq, d) as u8);
                SquareLines { places: places.map(|(line, bit)| LinePlace { line: line as u8, bit: bit as u8 }), edge }
            })
            .collect();
        Compiled {
            programs,
            stride,
            local_max,
            hooks,
            square_lines,
            line_count: h + w + 2 * (w + h - 1),
            rank_levels,
            rank_masks,
            opening: OnceLock::new(),
        }
    }

    #[inline]
    pub(super) fn program(&self, index: u32) -> &Program {
        &self.programs[index as usize]
    }
}

/// What an atom that is not a line reads.
pub(super) enum Read {
    /// Squares within this Chebyshev radius.
    Local(u8),
    /// Something else (a line atom, a hook, teleport): handled by `MoveState::refresh_listed`.
    Other,
}

/// Every atom is named here (no wildcard): a new atom does not compile until its reads are
/// stated, here or, for the others, in `MoveState::refresh_listed`.
pub(super) fn local_read(atom: Atom) -> Read {
    match atom {
        Atom::Leap { dx, dy } => Read::Local(dx.unsigned_abs().max(dy.unsigned_abs())),
        Atom::Lion | Atom::Double { .. } => Read::Local(2),
        Atom::LionLine { reach, .. } => Read::Local(reach),
        Atom::Igui => Read::Local(1),
        Atom::Area { steps } => Read::Local(steps),
        Atom::Slide { .. }
        | Atom::Jump { .. }
        | Atom::Hop { .. }
        | Atom::RangeCapture { .. }
        | Atom::RangeJump { .. }
        | Atom::RankJump { .. }
        | Atom::RankHop { .. }
        | Atom::Hook { .. }
        | Atom::Teleport => Read::Other,
    }
}
