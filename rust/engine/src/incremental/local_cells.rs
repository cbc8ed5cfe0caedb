//! Which squares around a piece its local atoms read (invariant 6 of the module
//! documentation): bits of the 9×9 box centred on it (`LocalCells`), so that a change within
//! its radius that it did not read leaves it alone. A leap reads one square, a lion line the
//! squares along its line, the lion, igui and double steps the squares they step to; an area
//! move reads the neighbours of the empty squares it can go on from, which depend on the board
//! (`MoveState::area_box`). A read farther than the box (a leap of more than 4) counts as
//! read without a bit (`LocalCells::reads`).
// Speed: a fire demon's area of 3 reads a 7×7 box by radius, but on a crowded board only its
// neighbours and a few squares beyond (issue 27, item 5).

use super::MoveState;
use crate::geometry::DELTAS;
use crate::position::Position;
use crate::table::Atom;

/// The box's half side: the largest area move (`area(4)`) reads this far.
pub(super) const BOX_RADIUS: usize = 4;
const SIDE: usize = 2 * BOX_RADIUS + 1;
/// Every cell of the box.
const ALL: u128 = (1 << (SIDE * SIDE)) - 1;
/// The cells of the box's first and last columns.
const FIRST_COLUMN: u128 = column_mask(0);
const LAST_COLUMN: u128 = column_mask(SIDE - 1);

const fn column_mask(x: usize) -> u128 {
    let mut mask = 0;
    let mut y = 0;
    while y < SIDE {
        mask |= 1 << (y * SIDE + x);
        y += 1;
    }
    mask
}

/// The bit of the cell (dx, dy) from the centre, if it is in the box.
pub(super) fn cell(dx: i32, dy: i32) -> u128 {
    let r = BOX_RADIUS as i32;
    if dx.abs() > r || dy.abs() > r {
        return 0;
    }
    1 << ((dy + r) as usize * SIDE + (dx + r) as usize)
}

/// The cells within Chebyshev distance `r` of the centre.
const fn square_cells(r: usize) -> u128 {
    let mut cells = 0;
    let mut y = BOX_RADIUS - r;
    while y <= BOX_RADIUS + r {
        let mut x = BOX_RADIUS - r;
        while x <= BOX_RADIUS + r {
            cells |= 1 << (y * SIDE + x);
            x += 1;
        }
        y += 1;
    }
    cells
}
const CENTRE: u128 = square_cells(0);
/// The centre's neighbours.
pub(super) const RING: u128 = square_cells(1) & !CENTRE;
/// The squares a lion reaches: within two of the centre.
const LION: u128 = square_cells(2) & !CENTRE;

/// The cells a king step from `cells`, and `cells`.
#[inline]
fn dilate(cells: u128) -> u128 {
    let across = cells | (cells << 1 & !FIRST_COLUMN) | (cells >> 1 & !LAST_COLUMN);
    (across | across << SIDE | across >> SIDE) & ALL
}

/// The local reads of one piece type and colour (`Program::local`): the cells its atoms read
/// whatever the board, and the largest area move, whose reads depend on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct LocalCells {
    pub(super) fixed: u128,
    /// Steps of its area move (0: none).
    pub(super) area: u8,
}

impl LocalCells {
    /// The cells `atoms` (absolute) read. Every atom is named, as in `program::local_read`
    /// (which gives the radii): a new one does not compile until its reads are stated.
    pub(super) fn of(atoms: &[Atom]) -> LocalCells {
        let mut local = LocalCells::default();
        for &atom in atoms {
            match atom {
                Atom::Leap { dx, dy } => local.fixed |= cell(dx as i32, dy as i32),
                Atom::Lion => local.fixed |= square_cells(2),
                Atom::Igui => local.fixed |= square_cells(1),
                Atom::LionLine { dir, reach, .. } => {
                    let (dx, dy) = DELTAS[dir as usize];
                    local.fixed |= (1..=reach as i32).fold(0, |m, k| m | cell(dx * k, dy * k));
                }
                Atom::Double { dirs } => {
                    let steps = DELTAS.iter().enumerate().filter(|&(d, _)| dirs & (1 << d) != 0);
                    for (_, &(dx, dy)) in steps.clone() {
                        local.fixed |= cell(dx, dy);
                        local.fixed |= steps.clone().fold(0, |m, (_, &(ex, ey))| m | cell(dx + ex, dy + ey));
                    }
                }
                // Beyond the box a bit could not say what it reads.
                Atom::Area { steps } if steps as usize > BOX_RADIUS => local.fixed = ALL,
                Atom::Area { steps } => local.area = local.area.max(steps),
                Atom::Slide { .. }
                | Atom::Jump { .. }
                | Atom::Hop { .. }
                | Atom::RangeCapture { .. }
                | Atom::RangeJump { .. }
                | Atom::RankJump { .. }
                | Atom::RankHop { .. }
                | Atom::Hook { .. }
                | Atom::Teleport => {}
            }
        }
        local
    }

    /// Whether a piece whose local reads are `cells` read the square (dx, dy) from it.
    #[inline(always)]
    pub(super) fn reads(cells: u128, dx: isize, dy: isize) -> bool {
        let r = BOX_RADIUS as isize;
        if dx.abs() > r || dy.abs() > r {
            return true;
        }
        cells >> ((dy + r) as usize * SIDE + (dx + r) as usize) & 1 != 0
    }
}

/// The cells of the first `count` squares of a slide along `dir`, as far as `steps` (and
/// the box).
#[inline]
pub(super) fn slide_cells(dir: u8, count: u8, steps: u8) -> u128 {
    // Per direction and length: the cells of a slide's first squares.
    // Speed: a table, not a cell computed per square: 5M instructions, 2% of random Tenjiku
    // play (issue 27, item 5).
    const SLIDES: [[u128; BOX_RADIUS + 1]; 8] = {
        let mut slides = [[0; BOX_RADIUS + 1]; 8];
        let mut dir = 0;
        while dir < 8 {
            let (dx, dy) = DELTAS[dir];
            let mut k = 1;
            while k <= BOX_RADIUS {
                let (x, y) =
                    ((BOX_RADIUS as i32 + dx * k as i32) as usize, (BOX_RADIUS as i32 + dy * k as i32) as usize);
                slides[dir][k] = slides[dir][k - 1] | 1 << (y * SIDE + x);
                k += 1;
            }
            dir += 1;
        }
        slides
    };
    SLIDES[dir as usize][count.min(steps).min(BOX_RADIUS as u8) as usize]
}

/// An area move on the board, over the box around its piece (`MoveState::area_box`).
pub(super) struct AreaBox {
    /// The cells it reads.
    pub(super) reads: u128,
    /// The cells it may end on (empty or enemy).
    pub(super) targets: u128,
    /// It may pass (step off to an empty neighbour and back).
    pub(super) pass: bool,
}

/// The box around a square on the board (`MoveState::box_cells`).
pub(super) struct BoxCells {
    /// The cells on the board.
    pub(super) board: u128,
    /// The empty ones.
    pub(super) empty: u128,
    /// Those holding the owner's pieces.
    pub(super) own: u128,
}

impl MoveState {
    /// The cells of the box around `sq` within `radius` rows (at most `BOX_RADIUS`; the rows
    /// beyond count as off the board), for the owner Black or not, from the line bits.
    pub(super) fn box_cells(&self, pos: &Position, sq: usize, radius: usize, black: bool) -> BoxCells {
        let g = &pos.variant.geometry;
        let (x, y) = g.xy(sq);
        let (x, y) = (x as usize, y as usize);
        let r = BOX_RADIUS;
        let near = |bits: u64| if x >= r { bits >> (x - r) } else { bits << (r - x) };
        // The box's columns on the board, and per row its empty and own cells (a rank is
        // line `y`).
        let columns = near((1u64 << g.width) - 1) & ((1 << SIDE) - 1);
        // From the last row up, each shifted one row on (a shift by a constant: a `u128`
        // shifted by a variable costs several times more), then all to the first row's place.
        // Speed: 520 -> ~200 instructions a box (issue 27, item 5).
        let (first, last) = (y.saturating_sub(radius), (y + radius).min(g.height - 1));
        let (mut board, mut empty, mut own) = (0u128, 0u128, 0u128);
        for row in (first..=last).rev() {
            let line = &self.tables.lines[row];
            let owned = if black { line.black } else { line.occupied & !line.black };
            board = board << SIDE | columns as u128;
            empty = empty << SIDE | (columns & !near(line.occupied)) as u128;
            own = own << SIDE | (columns & near(owned)) as u128;
        }
        let shift = (first + r - y) * SIDE;
        BoxCells { board: board << shift, empty: empty << shift, own: own << shift }
    }

    /// The moves of a lion (`Position::lion`) on `sq`, for the owner Black or not, less its
    /// simple moves to the cells of `given` (squares an earlier atom gave), counted over the
    /// box: a move to each square within two that is not its own, each step on from an
    /// enemy it captures next to it (to a square not its own, or back: igui), and a pass when
    /// a neighbour is empty.
    // Speed: a lion counted without generating its moves (issue 27, item 5).
    pub(super) fn lion_count(&self, pos: &Position, sq: usize, black: bool, given: u128) -> u8 {
        let BoxCells { board, empty, own } = self.box_cells(pos, sq, 2, black);
        let open = board & !own;
        let mut moves = (LION & open & !given).count_ones();
        let mut enemies = RING & open & !empty;
        while enemies != 0 {
            let a = enemies & enemies.wrapping_neg();
            enemies &= enemies - 1;
            moves += (dilate(a) & !a & (open | CENTRE)).count_ones();
        }
        (moves + u32::from(RING & empty != 0)) as u8
    }

    /// An area move of `steps` (at most `BOX_RADIUS`) from `sq`, for the owner Black or not,
    /// on the board the line bits describe: the breadth-first walk of `Position::area` done on
    /// all the cells at once. It goes on from its square and from each empty square it reaches
    /// in fewer than `steps` steps; it reads their neighbours and may end on those that are
    /// empty or enemy.
    pub(super) fn area_box(&self, pos: &Position, sq: usize, steps: u8, black: bool) -> AreaBox {
        // It reads as far as `steps` from the piece.
        let BoxCells { board, empty, own } = self.box_cells(pos, sq, steps as usize, black);
        let centre = cell(0, 0);
        let mut from = centre;
        for _ in 1..steps {
            from |= dilate(from) & empty;
        }
        let reads = dilate(from) & board;
        AreaBox { reads, targets: reads & !own & !centre, pass: steps >= 2 && dilate(centre) & empty != 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_is_read_where_its_bit_says() {
        let knight = LocalCells::of(&[Atom::Leap { dx: 1, dy: -2 }]).fixed;
        assert!(LocalCells::reads(knight, 1, -2));
        assert!(!LocalCells::reads(knight, -1, -2));
        assert!(!LocalCells::reads(knight, 2, -1));
        // Beyond the box: read.
        assert!(LocalCells::reads(0, 5, 0));
    }

    #[test]
    fn dilation_does_not_wrap_across_rows() {
        let right_edge = cell(4, 0);
        let grown = dilate(right_edge);
        assert_eq!(grown.count_ones(), 6);
        assert_eq!(grown & FIRST_COLUMN, 0);
        assert_eq!(dilate(cell(0, 0)), square_cells(1));
        assert_eq!(dilate(dilate(cell(0, 0))), square_cells(2));
    }

    /// A Tenjiku fire demon (area of 3) in the middle of the board, with friends around it.
    fn fire_demon_reads(friends: &[(i32, i32)]) -> u128 {
        use crate::geometry::Color;
        use crate::variant::Variant;
        let variant = Variant::load("tenjiku", &[]).unwrap();
        let g = &variant.geometry;
        let mut pos = Position::empty(variant.clone(), Color::Black);
        let demon = variant.table.lookup("Fire demon").unwrap();
        let (x, y) = (8, 8);
        let piece = |kind| variant.table.placement(kind, false, Color::Black).unwrap();
        pos.put(g.square(x, y).unwrap(), piece(demon));
        let pawn = variant.table.lookup("Pawn").unwrap();
        for &(dx, dy) in friends {
            pos.put(g.square(x + dx, y + dy).unwrap(), piece(pawn));
        }
        let state = MoveState::new(&pos);
        assert_eq!(state.compiled.program(demon as u32 * 2).local.area, 3);
        state.area_box(&pos, g.square(x, y).unwrap(), 3, true).reads
    }

    /// Tenjiku pieces on an empty board, and the state's moves of those on `counted`, which
    /// must keep counts (no list): the reference's moves.
    fn counted_as_the_reference(pieces: &[(i32, i32, &str, bool)], counted: &[(i32, i32)]) {
        use crate::geometry::Color;
        use crate::incremental::Mode;
        use crate::variant::Variant;
        let variant = Variant::load("tenjiku", &[]).unwrap();
        let g = &variant.geometry;
        let mut pos = Position::empty(variant.clone(), Color::Black);
        for &(x, y, name, black) in pieces {
            let color = if black { Color::Black } else { Color::White };
            let piece = variant.table.placement(variant.table.lookup(name).unwrap(), false, color).unwrap();
            pos.put(g.square(x, y).unwrap(), piece);
        }
        let state = MoveState::new(&pos);
        state.check(&pos).unwrap();
        for &(x, y) in counted {
            let sq = g.square(x, y).unwrap();
            assert_eq!(state.tables.records[sq].mode, Mode::Plain, "{}", g.square_name(sq));
            let mut reference = Vec::new();
            pos.generate_from(sq, &mut reference);
            let mut moves = Vec::new();
            state.moves_from(&pos, sq, &mut moves);
            assert_eq!(moves, reference);
            assert_eq!(state.moves_on(sq), reference.len());
        }
    }

    #[test]
    fn area_movers_after_lines_are_counted_without_a_list() {
        // The fire demon (slides, then area(3)) and the vice general (rank jumps, then
        // area(3)), among friends and enemies.
        let pieces = [
            (5, 8, "Fire demon", true),
            (10, 8, "Vice general", false),
            (6, 8, "Pawn", true),
            (4, 7, "Pawn", false),
            (5, 5, "Gold general", false),
            (7, 10, "Pawn", true),
            (9, 7, "Pawn", false),
            (11, 9, "Pawn", true),
            (12, 10, "Lance", true),
        ];
        counted_as_the_reference(&pieces, &[(5, 8), (10, 8)]);
    }

    #[test]
    fn lion_powers_after_lines_are_counted_without_a_list() {
        // The horned falcon (lines, then a lion line), the soaring eagle (two lion lines that
        // both pass) and the lion, far from their promotion zone, with enemies to capture on
        // the way.
        let pieces = [
            (3, 12, "Horned falcon", true),
            (2, 11, "Pawn", true),
            (4, 11, "Pawn", true),
            (3, 10, "Pawn", false),
            (8, 12, "Soaring eagle", true),
            (8, 11, "Pawn", true),
            (7, 11, "Pawn", false),
            (12, 13, "Lion", true),
            (12, 12, "Pawn", false),
            (13, 14, "Pawn", false),
        ];
        counted_as_the_reference(&pieces, &[(3, 12), (8, 12), (12, 13)]);
    }

    #[test]
    fn powers_that_meet_the_slides_are_counted_without_a_list() {
        // The lion hawk (diagonal slides, then a lion reaching their first two squares) and the
        // free eagle (slides every way, then diagonal double steps and jumps of two reaching
        // theirs): the powers' moves to a square a slide gave are the slide's. Friends and
        // enemies next to them and two squares off, so that some slides stop short and the
        // lion captures on the way.
        let pieces = [
            (4, 8, "Lion hawk", true),
            (5, 7, "Pawn", false),
            (3, 9, "Pawn", true),
            (6, 6, "Gold general", false),
            (4, 6, "Pawn", false),
            (11, 8, "Free eagle", true),
            (12, 7, "Pawn", true),
            (11, 6, "Pawn", false),
            (9, 10, "Gold general", false),
            (10, 8, "Pawn", false),
        ];
        counted_as_the_reference(&pieces, &[(4, 8), (11, 8)]);
    }

    #[test]
    fn an_area_move_reads_around_the_empty_squares_it_goes_on_from() {
        // Free: three steps read the 7×7 box.
        assert_eq!(fire_demon_reads(&[]), square_cells(3));
        // Walled in by friends: only its neighbours.
        let ring: Vec<(i32, i32)> = DELTAS.to_vec();
        assert_eq!(fire_demon_reads(&ring), square_cells(1));
        // One gap to the right, (1, 0): from there the second step reaches (2, -1..=1), and the
        // third reads their neighbours, out to (3, -2..=2).
        let gap: Vec<(i32, i32)> = DELTAS.iter().copied().filter(|&d| d != (1, 0)).collect();
        let reads = fire_demon_reads(&gap);
        assert_eq!(reads & square_cells(1), square_cells(1));
        assert!(LocalCells::reads(reads, 3, 0) && LocalCells::reads(reads, 3, 2));
        assert!(!LocalCells::reads(reads, 3, 3) && !LocalCells::reads(reads, 2, -3));
        assert!(!LocalCells::reads(reads, -2, 0) && !LocalCells::reads(reads, -3, -3));
        assert!(!LocalCells::reads(reads, 0, 2) && !LocalCells::reads(reads, 0, -3));
    }
}
