//! The fast paths (`hooks`, `rays`, `open_slides`) against the general path, on random games
//! and open boards.

use crate::geometry::Color;
use crate::hash::splitmix64;
use crate::movegen::fast::open_slides;
use crate::movegen::sink::{Seen, Sink};
use crate::position::{Move, Piece, Position};
use crate::table::Motion;
use crate::variant::Variant;

/// The general path's moves of the piece on `sq`: every atom through `generate_atom` with
/// the directions `open` (all of them: none skipped), repeats dropped by the set.
fn general_moves(pos: &Position, sq: usize, open: u8) -> Vec<Move> {
    let piece = pos.at(sq).unwrap();
    let motion = pos.variant.table.motion_of(piece.kind);
    let (mut out, mut seen) = (Vec::new(), Seen::new());
    let mut sink = Sink { out: &mut out, from: sq as u16, seen: Some(&mut seen), start: 0 };
    for &atom in pos.variant.table.absolute_atoms(motion, piece.color) {
        pos.generate_atom(sq, piece.color, motion.range_rank, open, atom, &mut sink);
    }
    out
}

/// Checks every piece of `pos` (both colours) whose motion `takes` a fast path: `fast`
/// (given the square, colour, open directions and motion) against the general path, run
/// with `general_open` of the open directions. Returns how many pieces it checked.
fn check_fast_path(
    pos: &Position,
    context: &str,
    takes: impl Fn(&Motion) -> bool,
    general_open: impl Fn(u8) -> u8,
    fast: impl Fn(usize, Color, u8, &Motion) -> Vec<Move>,
) -> usize {
    let mut checked = 0;
    for color in Color::BOTH {
        for sq in pos.squares_of(color) {
            let piece = pos.at(sq).unwrap();
            let motion = pos.variant.table.motion_of(piece.kind);
            if !takes(motion) {
                continue;
            }
            let open = pos.variant.geometry.neighbour_dirs(sq) & !pos.neighbours_of_color(sq, color);
            let name = &pos.variant.table.get(piece.kind).name;
            let general = general_moves(pos, sq, general_open(open));
            assert_eq!(
                fast(sq, color, open, motion),
                general,
                "{context}: {name} on {}",
                pos.variant.geometry.square_name(sq)
            );
            checked += 1;
        }
    }
    checked
}

/// Runs `check` every 150 plies of random games (seeds 1 to `seeds`, at most `stops` times
/// each) in `variant`. Returns the sum of what it returned.
fn along_random_games(
    variant: &std::sync::Arc<Variant>,
    seeds: u64,
    stops: usize,
    check: fn(&Position, &str) -> usize,
) -> usize {
    let mut checked = 0;
    for seed in 1..=seeds {
        let mut game = crate::game::Game::new(variant.clone());
        for _ in 0..stops {
            if crate::random::random_playout(&mut game, seed, 150).plies == 0 {
                break;
            }
            checked += check(&game.position, &format!("{} seed {seed} ply {}", variant.name, game.plies()));
        }
    }
    checked
}

/// Checks every hooks-only piece of `pos`: `hooks` against the general path, no direction
/// skipped.
fn check_hooks(pos: &Position, context: &str) -> usize {
    check_fast_path(
        pos,
        context,
        |m| m.hooks_only,
        |_| 0xFF,
        |sq, color, open, motion| {
            let mut fast = Vec::new();
            pos.hooks(sq, color, open, pos.variant.table.absolute_atoms(motion, color), &mut fast);
            fast
        },
    )
}

#[test]
fn open_slides_are_the_slides_whose_direction_is_open() {
    let mut seed = 5u64;
    for _ in 0..20_000 {
        // Up to eight slides in distinct directions, in any order, then zeros.
        seed = splitmix64(seed);
        let mut dirs: Vec<u8> = (0..8).collect();
        for i in (1..8).rev() {
            dirs.swap(i, (seed >> (3 * i)) as usize % (i + 1));
        }
        let n = (seed >> 40) as usize % 9;
        let mut bits = [0u8; 8];
        for (bit, &d) in bits.iter_mut().zip(&dirs[..n]) {
            *bit = 1 << d;
        }
        let open = (seed >> 48) as u8;
        let expected = (0..8).filter(|&i| open & bits[i] != 0).fold(0u8, |m, i| m | 1 << i);
        assert_eq!(open_slides(&bits, open), expected, "{bits:?} open {open:08b}");
    }
    assert_eq!(open_slides(&[1, 2, 4, 8, 16, 32, 64, 128], 0xFF), 0xFF);
    assert_eq!(open_slides(&[128, 1, 0, 0, 0, 0, 0, 0], 0x80), 0b01);
    assert_eq!(open_slides(&[0; 8], 0xFF), 0);
}

#[test]
fn hooks_only_pieces_move_as_the_general_path() {
    let mut checked = 0;
    // Random games of every variant (and Dai dai's goblin without its step).
    for (name, options) in
        [("taikyoku", vec![]), ("daidai", vec!["long-nosed-goblin-no-step".to_string()]), ("taishin", vec![])]
    {
        let variant = Variant::load(name, &options).unwrap();
        checked += along_random_games(&variant, 3, 12, check_hooks);
    }
    // Open boards: hook movers, capricorns and goblins among a few scattered pieces, where
    // the quadrants two hooks share are wide.
    let variant = Variant::load("taikyoku", &[]).unwrap();
    let kinds: Vec<_> = ["HM", "CA", "LO", "P", "GG", "FL"].iter().map(|k| variant.table.lookup(k).unwrap()).collect();
    let mut r = 7u64;
    for board in 0..300 {
        let mut pos = Position::empty(variant.clone(), Color::Black);
        for i in 0..(4 + board % 40) {
            r = splitmix64(r);
            let kind = kinds[if i < 3 { i } else { (r >> 20) as usize % kinds.len() }];
            let color = if r >> 40 & 1 == 0 { Color::Black } else { Color::White };
            pos.put(r as usize % variant.geometry.size(), Piece { kind, origin: kind, color, promoted: false });
        }
        checked += check_hooks(&pos, &format!("open board {board}"));
    }
    assert!(checked > 1000, "only {checked} pieces checked");
}

/// Checks every slides-and-jumps piece of `pos` (`Motion::rays_only`): `rays` against the
/// general path.
fn check_rays(pos: &Position, context: &str) -> usize {
    check_fast_path(
        pos,
        context,
        |m| m.rays_only,
        |open| open,
        |sq, color, open, motion| {
            let mut fast = Vec::new();
            let rays = pos.variant.table.absolute_rays(motion, color);
            pos.rays(sq, color, open, rays, &mut fast);
            fast
        },
    )
}

#[test]
fn slide_and_jump_pieces_move_as_the_general_path() {
    let mut checked = 0;
    for name in crate::variant::variant_names() {
        let variant = Variant::load(name, &[]).unwrap();
        checked += along_random_games(&variant, 2, 8, check_rays);
        // Open boards: each such type, of either colour, among a few scattered pieces, so
        // that its rays run long and rays along one line overlap.
        let kinds: Vec<_> = (0..variant.table.len() as u16).filter(|&k| variant.table.motion_of(k).rays_only).collect();
        assert!(!kinds.is_empty(), "{name} has pieces of slides and jumps");
        let mut r = 11u64;
        for (board, &kind) in kinds.iter().cycle().take(8 * kinds.len()).enumerate() {
            let mut pos = Position::empty(variant.clone(), Color::Black);
            let size = variant.geometry.size();
            for _ in 0..(board % 30) {
                r = splitmix64(r);
                let other = (r >> 24) as u16 % variant.table.len() as u16;
                let color = if r >> 40 & 1 == 0 { Color::Black } else { Color::White };
                pos.put(r as usize % size, Piece { kind: other, origin: other, color, promoted: false });
            }
            r = splitmix64(r);
            let color = if r >> 40 & 1 == 0 { Color::Black } else { Color::White };
            pos.put(r as usize % size, Piece { kind, origin: kind, color, promoted: false });
            checked += check_rays(&pos, &format!("{name} open board {board}"));
        }
    }
    assert!(checked > 1500, "only {checked} pieces checked");
}
