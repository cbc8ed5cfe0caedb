//! The invariants of the fuzz targets, one function per target, each taking the raw fuzz input.
//!
//! Shared by the cargo-fuzz targets (`fuzz/fuzz_targets/*.rs`) and by the stable regression test
//! `rust/engine/tests/fuzz_regressions.rs`, which includes this file with `#[path]` and runs every
//! seed and regression input through it. It may only use `std` and `taikyoku_engine`.
//!
//! Every function must never panic on any input; the `assert!`s are the invariants.

use std::sync::{Arc, OnceLock};
use taikyoku_engine::geometry::Geometry;
use taikyoku_engine::notation::{WrittenAction, WrittenMove};
use taikyoku_engine::random::random_playout;
use taikyoku_engine::table::{Atom, Kind, PieceTable};
use taikyoku_engine::{Color, Game, Move, Piece, Position, Rules, Variant, NO_SQUARE};

/// The built-in Taikyoku variant, loaded once.
pub fn variant() -> Arc<Variant> {
    static VARIANT: OnceLock<Arc<Variant>> = OnceLock::new();
    VARIANT.get_or_init(|| Variant::load("taikyoku", &[]).expect("the built-in variant loads")).clone()
}

/// Puts a piece given by key or name (a promoted-only type as the promoted form of its origin).
fn place(pos: &mut Position, square: &str, key: &str, promoted: bool, color: Color) {
    let v = pos.variant.clone();
    let kind = v.table.lookup(key).unwrap_or_else(|| panic!("no piece '{key}'"));
    let piece = v.table.placement(kind, promoted, color).unwrap_or_else(|e| panic!("{e}"));
    pos.put(v.geometry.parse_square(square).unwrap_or_else(|| panic!("no square {square}")), piece);
}

/// A hand-made position full of the notation's rarer forms, `side` to move: lion double moves,
/// igui and a pass, a range capture, promotions, a promoted piece, two golds that need start
/// squares, a trapped pawn, and a king a lion's jump away (royal capture ends the game).
fn skirmish(side: Color) -> Position {
    use Color::*;
    let mut pos = Position::empty(variant(), side);
    let pieces: &[(&str, &str, bool, Color)] = &[
        ("1jj", "K", false, Black),
        ("18r", "LN", false, Black),
        ("18q", "P", false, White),
        ("17q", "P", false, White),
        ("10r", "Heavenly Tetrarch king", false, Black),
        ("10q", "P", false, White),
        ("30r", "GG", false, Black),
        ("30q", "P", false, White),
        ("30o", "P", false, Black),
        ("30k", "FK", false, White),
        ("5r", "G", false, Black),
        ("3r", "G", false, Black),
        ("22r", "P", false, Black),
        ("22q", "P", false, White),
        ("25r", "P", true, Black),
        ("12a", "RW", false, Black),
        ("10a", "P", false, White),
        ("18h", "LN", false, White),
        ("18g", "P", false, Black),
        ("19g", "P", false, Black),
        ("26h", "K", false, White),
        ("26j", "LN", false, Black),
    ];
    for &(square, key, promoted, color) in pieces {
        place(&mut pos, square, key, promoted, color);
    }
    pos
}

/// Positions the notation target reads moves in: the opening, random games of a few lengths
/// (both sides to move), and the skirmish for either side.
pub fn positions() -> &'static [Position] {
    static POSITIONS: OnceLock<Vec<Position>> = OnceLock::new();
    POSITIONS.get_or_init(|| {
        let v = variant();
        let mut out = vec![Position::initial(v.clone())];
        for (seed, plies) in [(1u64, 41usize), (2, 400), (3, 1501)] {
            let mut game = Game::new(v.clone());
            random_playout(&mut game, seed, plies);
            let mut pos = game.position;
            pos.clear_history();
            out.push(pos);
        }
        out.push(skirmish(Color::Black));
        out.push(skirmish(Color::White));
        out
    })
}

/// Start texts the replay target picks from (its first byte), besides texts from the input.
pub fn start_texts() -> &'static [String] {
    static TEXTS: OnceLock<Vec<String>> = OnceLock::new();
    TEXTS.get_or_init(|| {
        let mut texts: Vec<String> = positions().iter().map(Position::to_text).collect();
        // Kings and a gold each: short cycles reach the repetition rules.
        let mut bare = Position::empty(variant(), Color::Black);
        place(&mut bare, "18jj", "K", false, Color::Black);
        place(&mut bare, "18a", "K", false, Color::White);
        place(&mut bare, "5r", "G", false, Color::Black);
        place(&mut bare, "5e", "G", false, Color::White);
        texts.push(bare.to_text());
        texts
    })
}

/// `WrittenAction::write` with the code and start square in front: the printer of `WrittenMove`.
fn print_written(w: &WrittenMove, g: &Geometry) -> String {
    let start = w.start.map(|sq| g.square_name(sq)).unwrap_or_default();
    format!(
        "{}{}{}",
        w.code,
        start,
        WrittenAction { action: w.action, promotes: w.promotes, declines: w.declines }.write(g)
    )
}

/// Target `notation`: the input as move text. `WrittenMove::parse` reads only canonical text
/// (printing what it read gives the input back); `parse_move` in each fixed position never
/// panics and returns only legal moves whose own notation parses back to them.
pub fn notation(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let v = variant();
    let g = &v.geometry;
    if let Ok(written) = WrittenMove::parse(text, g) {
        if let Some(sq) = written.start {
            assert!(sq < g.size());
        }
        let printed = print_written(&written, g);
        assert_eq!(printed, text, "WrittenMove::parse read {written:?} from {text:?}, which prints differently");
        assert_eq!(WrittenMove::parse(&printed, g), Ok(written));
    }
    for pos in positions() {
        if let Ok(mv) = pos.parse_move(text) {
            assert!(pos.is_legal(mv), "parse_move({text:?}) gave the illegal {mv:?} in {}", pos.to_text());
            assert!(WrittenMove::parse(text.trim(), g).is_ok());
            let notation = pos.move_notation(mv);
            assert_eq!(pos.parse_move(&notation), Ok(mv), "{text:?} -> {mv:?} -> {notation:?} in {}", pos.to_text());
        }
    }
}

/// Target `position_text`: the input as a position text. Whatever parses prints back to text that
/// parses to the identical position (same text, hash, side and ply), the incremental hash is
/// right, and the position can generate, play and take back a move.
pub fn position_text(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let v = variant();
    let Ok(pos) = Position::from_text(v.clone(), text) else { return };
    assert_eq!(pos.hash(), pos.compute_hash());
    let printed = pos.to_text();
    let again = Position::from_text(v.clone(), &printed)
        .unwrap_or_else(|e| panic!("to_text of {text:?} gives {printed:?}, which does not parse: {e}"));
    assert_eq!(again.to_text(), printed);
    assert_eq!(again.hash(), pos.hash());
    assert_eq!(again.side_to_move(), pos.side_to_move());
    assert_eq!(again.move_number(), pos.move_number());
    assert_eq!(again.squares().collect::<Vec<_>>(), pos.squares().collect::<Vec<_>>());
    // Playable: one move (chosen by the input's length), its notation and text, then undo.
    let mut game = Game::from_position(pos);
    let moves = game.position.legal_moves();
    if !moves.is_empty() {
        let mv = moves[data.len() % moves.len()];
        let notation = game.position.move_notation(mv);
        assert_eq!(game.position.parse_move(&notation), Ok(mv));
        game.play(mv);
        let after = game.position.to_text();
        let reread = Position::from_text(v.clone(), &after).unwrap_or_else(|e| panic!("{after:?}: {e}"));
        assert_eq!(reread.hash(), game.position.hash());
        game.undo();
        assert_eq!(game.position.to_text(), printed);
    }
}

/// Checks a parsed table's resolved atoms, then generates the moves of its first 32 types: on a
/// 7×7 board for both colours, promoted or not, alone or among other pieces, and once on the
/// 36×36 board among other pieces. No panic, moves start on the piece and land on the board, no
/// move twice, moves are legal and make/unmake restore the hash; on the small board, positions
/// and moves can be written and read back (`check_written`).
fn check_table(table: &PieceTable) {
    for (i, t) in table.types.iter().enumerate() {
        assert!(!t.atoms.is_empty(), "{} has no atoms", t.key);
        assert_eq!(table.by_key(&t.key), Some(i as Kind));
        if let Some(p) = t.promotes_to {
            assert!((p as usize) < table.len());
        }
        for (j, a) in t.atoms.iter().enumerate() {
            assert!(!t.atoms[..j].contains(a), "{} lists {a:?} twice", t.key);
            match *a {
                Atom::Slide { dir, .. }
                | Atom::Jump { dir, .. }
                | Atom::Hop { dir, .. }
                | Atom::RangeCapture { dir }
                | Atom::RangeJump { dir, .. }
                | Atom::Hook { dir }
                | Atom::RankJump { dir }
                | Atom::RankHop { dir } => assert!(dir < 8),
                Atom::Area { steps } => assert!((2..=4).contains(&steps)),
                Atom::Double { dirs } => assert!(dirs != 0),
                Atom::LionLine { dir, reach, every_step } => {
                    assert!(dir < 8 && (2..=3).contains(&reach) && (every_step || reach == 3))
                }
                Atom::Leap { .. } | Atom::Lion | Atom::Igui | Atom::Teleport => {}
            }
            for color in Color::BOTH {
                let _ = a.absolute(color);
            }
        }
    }
    if table.is_empty() {
        return;
    }
    for size in [7usize, 36] {
        let variant = Arc::new(Variant {
            name: "fuzz".into(),
            rules: Rules::parse(&format!("board {size}x{size}")).expect("a plain rules file"),
            geometry: Geometry::new(size, size),
            table: table.clone(),
            setup: Vec::new(),
            options: Vec::new(),
            rules_options: Vec::new(),
            caches: Default::default(),
        });
        let centre = (size / 2) * size + size / 2;
        for kind in 0..table.len().min(32) as Kind {
            let ty = table.get(kind);
            for color in Color::BOTH {
                for promoted in [false, true] {
                    let piece = match (promoted, ty.promotes_to) {
                        (false, _) => Piece { kind, origin: kind, color, promoted: false },
                        (true, Some(to)) => Piece { kind: to, origin: kind, color, promoted: true },
                        (true, None) => continue,
                    };
                    for crowded in [false, true] {
                        if size > 7 && (color == Color::White || promoted || !crowded) {
                            continue;
                        }
                        let mut pos = Position::empty(variant.clone(), color);
                        pos.put(centre, piece);
                        if crowded {
                            // Enemies and friends at one and two squares, and further out.
                            let g = &variant.geometry;
                            let (cx, cy) = g.xy(centre);
                            for (n, (dx, dy)) in [(0, -1), (1, -1), (2, 0), (0, 2), (-2, -2), (-1, 0), (0, -3), (3, 3)]
                                .into_iter()
                                .enumerate()
                            {
                                if let Some(sq) = g.square(cx + dx, cy + dy) {
                                    let side = if n % 3 == 2 { color } else { color.opponent() };
                                    pos.put(sq, Piece { kind, origin: kind, color: side, promoted: false });
                                }
                            }
                        }
                        check_moves_of(&mut pos, centre);
                        if size == 7 && !ty.promoted_only {
                            check_written(&pos, centre);
                        }
                    }
                }
            }
        }
    }
}

/// A piece that can stand on the board unpromoted (or promoted from it) can be written: the
/// position's text reads back to the same position, and its first and last moves' notation
/// parses back to them.
fn check_written(pos: &Position, from: usize) {
    let text = pos.to_text();
    let again = Position::from_text(pos.variant.clone(), &text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    assert_eq!(again.squares().collect::<Vec<_>>(), pos.squares().collect::<Vec<_>>(), "{text:?}");
    assert_eq!(again.hash(), pos.hash());
    let mut moves = Vec::new();
    pos.generate_from(from, &mut moves);
    for mv in [moves.first(), moves.last()].into_iter().flatten() {
        let notation = pos.move_notation(*mv);
        assert_eq!(pos.parse_move(&notation), Ok(*mv), "{notation:?} in {text:?}");
    }
}

fn check_moves_of(pos: &mut Position, from: usize) {
    let mut moves = Vec::new();
    pos.generate_from(from, &mut moves);
    let size = pos.variant.geometry.size();
    let hash = pos.hash();
    for (i, &mv) in moves.iter().enumerate() {
        assert_eq!(mv.from as usize, from);
        assert!((mv.to as usize) < size && (mv.mid == NO_SQUARE || (mv.mid as usize) < size), "{mv:?}");
        assert!(!moves[..i].contains(&mv), "{mv:?} generated twice");
        if i == 0 || i + 1 == moves.len() {
            assert!(pos.is_legal(mv));
        }
        pos.make(mv);
        if size <= 25 {
            // A fresh hash costs a pass over the board: the small board only.
            assert_eq!(pos.hash(), pos.compute_hash());
        }
        pos.unmake();
        assert_eq!(pos.hash(), hash);
    }
}

/// Target `piece_table`: the input as a piece table, parsed without options and then with every
/// option it names. Never panics; errors name a line of the input; tables that parse pass
/// `check_table`.
pub fn piece_table(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let lines = text.lines().count();
    let table = match PieceTable::parse(text, &[]) {
        Ok(table) => table,
        Err(e) => {
            assert!(e.line >= 1 && e.line <= lines, "{e} (the text has {lines} lines)");
            return;
        }
    };
    check_table(&table);
    let mut options: Vec<String> = table.options.iter().map(|(name, _)| name.clone()).collect();
    options.sort();
    options.dedup();
    if !options.is_empty() {
        match PieceTable::parse(text, &options) {
            Ok(table) => check_table(&table),
            Err(e) => assert!(e.line >= 1 && e.line <= lines, "{e} (the text has {lines} lines)"),
        }
    }
}

/// Most moves a replay input makes (keeps executions fast).
const MAX_REPLAY_MOVES: usize = 48;

/// Target `replay`: a pickled game's payload derived from the input.
///
/// Byte 0 picks the start: `0xFF` takes the text up to the first newline from the input, any
/// other value one of `start_texts()`. Byte 1 gives the ply limit (`None` when even). Then moves:
/// a control byte below `0xF0` and one more byte pick a piece of the side to move and one of its
/// legal moves; `0xF0..=0xFF` is followed by seven raw bytes (`from`, `to`, `mid` as little-endian
/// `u16`, `sweep`).
///
/// `Game::replay` never panics, fails exactly at the first illegal move or move after the end,
/// and otherwise equals the same moves played through `Game::play`; its `history_notations()`
/// parse back move by move, and undoing every move gives the start back.
pub fn replay(data: &[u8]) {
    let v = variant();
    let Some((&first, mut rest)) = data.split_first() else { return };
    let start: String = if first == 0xFF {
        let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        let Ok(text) = std::str::from_utf8(&rest[..end]) else { return };
        let text = text.to_string();
        rest = &rest[(end + 1).min(rest.len())..];
        text
    } else {
        let texts = start_texts();
        texts[first as usize % texts.len()].clone()
    };
    let max_plies = match rest.split_first() {
        Some((&b, tail)) => {
            rest = tail;
            (b % 2 == 1).then_some(b as u32 / 2)
        }
        None => None,
    };

    // The reference: the same moves through `Game::play`, with `Game::replay`'s checks, from the
    // start text read as a game (a position, then any `moves` as history).
    let mut reference = Game::from_text(v.clone(), &start).ok();
    let start_position = reference.as_ref().map(|g| g.position.clone());
    let mut first_bad: Option<usize> = None;
    let mut moves: Vec<Move> = Vec::new();
    let mut scratch = Vec::new();
    while moves.len() < MAX_REPLAY_MOVES && rest.len() >= 2 {
        let control = rest[0];
        let mv = if control >= 0xF0 {
            if rest.len() < 8 {
                break;
            }
            let word = |i: usize| u16::from_le_bytes([rest[i], rest[i + 1]]);
            let mv = Move::with_captures(word(1) as usize, word(3) as usize, word(5), taikyoku_engine::NO_SQUARE)
                .with_sweep(rest[7] & 1 == 1)
                .with_promotion(rest[7] & 2 == 2);
            rest = &rest[8..];
            mv
        } else {
            let pick = rest[1];
            rest = &rest[2..];
            let game = reference.as_ref().filter(|_| first_bad.is_none());
            let squares: Vec<usize> =
                game.map(|g| g.position.squares_of(g.side_to_move()).collect()).unwrap_or_default();
            if squares.is_empty() {
                Move::new(control as usize, pick as usize)
            } else {
                let from = squares[control as usize % squares.len()];
                scratch.clear();
                game.expect("squares come from a game").position.generate_from(from, &mut scratch);
                if scratch.is_empty() {
                    Move::new(from, from)
                } else {
                    scratch[pick as usize % scratch.len()]
                }
            }
        };
        if first_bad.is_none() {
            if let Some(game) = reference.as_mut() {
                if game.end().is_some() || !game.position.is_legal(mv) {
                    first_bad = Some(moves.len() + 1);
                } else {
                    game.play(mv);
                }
            }
        }
        moves.push(mv);
    }

    let result = Game::replay(v.clone(), &start, &moves, max_plies);
    let (Some(mut reference), Some(start_position)) = (reference, start_position) else {
        assert!(result.is_err(), "replay accepted the start {start:?} that from_text rejects");
        return;
    };
    let game = match (result, first_bad) {
        (Err(e), Some(bad)) => {
            let number = match e {
                taikyoku_engine::ReplayError::AfterEnd { number, .. }
                | taikyoku_engine::ReplayError::Illegal { number, .. } => number,
                taikyoku_engine::ReplayError::Start(_) => 0,
            };
            assert_eq!(number, bad, "expected move {bad} to fail, got: {e}");
            return;
        }
        (Err(e), None) => panic!("replay failed on moves that play: {e}"),
        (Ok(_), Some(bad)) => panic!("replay accepted move {bad}, which is illegal or after the end"),
        (Ok(game), None) => game,
    };
    reference.max_plies = max_plies;
    assert_eq!(game.plies(), moves.len());
    assert_eq!(game.position.to_text(), reference.position.to_text());
    assert_eq!(game.position.hash(), reference.position.hash());
    assert_eq!(game.position.hash(), game.position.compute_hash());
    assert_eq!(game.recorded_end(), reference.recorded_end());
    assert_eq!(game.end(), reference.end());
    assert_eq!(game.repetitions(), reference.repetitions());
    assert_eq!(game.moves().collect::<Vec<_>>(), moves);
    let notations = game.history_notations();
    assert_eq!(notations, reference.history_notations());
    assert_eq!(notations.len(), moves.len());
    let mut again = start_position.clone();
    for (i, (text, &mv)) in notations.iter().zip(&moves).enumerate() {
        assert_eq!(again.parse_move(text), Ok(mv), "move {} {text:?} in {}", i + 1, again.to_text());
        again.make(mv);
    }
    let mut game = game;
    while game.undo().is_some() {}
    assert_eq!(game.position.to_text(), start_position.to_text());
    assert_eq!(game.position.hash(), start_position.hash());
}

/// Target `square`: the input as a square name on boards of several shapes, and its first two
/// bytes as a square index. Names that parse are on the board and print back unchanged (less
/// surrounding whitespace); every square's name parses back to it; rank names round-trip.
pub fn square(data: &[u8]) {
    static GEOMETRIES: OnceLock<Vec<Geometry>> = OnceLock::new();
    let geometries = GEOMETRIES.get_or_init(|| {
        [(36, 36), (9, 9), (1, 1), (52, 52), (12, 30), (30, 12)].iter().map(|&(w, h)| Geometry::new(w, h)).collect()
    });
    if let [a, b, ..] = *data {
        let index = u16::from_le_bytes([a, b]) as usize;
        for g in geometries {
            let sq = index % g.size();
            let name = g.square_name(sq);
            assert_eq!(g.parse_square(&name), Some(sq), "{name} on {}x{}", g.width, g.height);
            let (x, y) = g.xy(sq);
            assert_eq!(g.square_from_file_rank(g.width - x as usize, y as usize + 1), Some(sq));
        }
    }
    let Ok(text) = std::str::from_utf8(data) else { return };
    for g in geometries {
        if let Some(sq) = g.parse_square(text) {
            assert!(sq < g.size());
            assert_eq!(g.square_name(sq), text.trim(), "{text:?} on {}x{}", g.width, g.height);
        }
    }
    if let Some(y) = Geometry::parse_rank(text) {
        assert_eq!(Geometry::rank_name(y), text);
    }
}

/// A small piece table for the `rules` target's variants.
const SMALL_PIECES: &str = "\
K  | King | k | - | royal | step(all)
LN | Lion | l | - | | lion
G  | Gold | g | DR | | step(orth+fdiag)
DR | Dragon | d | - | | range(orth) step(diag)
";

/// Target `rules`: the input as a variant's rules file. Errors name a line of the input (0 only
/// for the missing board line); a file that reads gives a board of 1 to 36 squares a side, on
/// which a variant (king and lion on the back rank, golds in front when there is room) loads,
/// names every square and plays a few moves whose positions and notations read back.
pub fn rules(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let lines = text.lines().count();
    let rules = match Rules::parse(text) {
        Ok(rules) => rules,
        Err(e) => {
            assert!(e.line <= lines && (e.line > 0 || e.message.contains("board")), "{e}");
            return;
        }
    };
    let (w, h) = (rules.width, rules.height);
    assert!((1..=36).contains(&w) && (1..=36).contains(&h) && (2..=1000).contains(&rules.repetition.count));
    let row = |cells: &[&str]| (0..w).map(|x| cells.get(x).copied().unwrap_or(".")).collect::<Vec<_>>().join(" ");
    let mut setup = row(&["K", "LN"]);
    if h >= 4 {
        setup = format!("{}\n{setup}", row(&["G"; 36]));
    }
    let sources = taikyoku_engine::Sources { rules: text, pieces: SMALL_PIECES, setup: &setup };
    let variant = match Variant::from_sources("fuzz", sources, &[]) {
        Ok(variant) => Arc::new(variant),
        Err(e) => {
            // Only a board of one rank has no room for a side's pieces.
            assert!(h < 2, "{w}x{h}: {e}");
            return;
        }
    };
    let g = &variant.geometry;
    assert_eq!((g.width, g.height), (w, h));
    for sq in 0..g.size() {
        assert_eq!(g.parse_square(&g.square_name(sq)), Some(sq));
    }
    let mut game = Game::new(variant.clone());
    for i in 0..8 {
        if game.end().is_some() {
            break;
        }
        let text = game.position.to_text();
        let again = Position::from_text(variant.clone(), &text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        assert_eq!(again.hash(), game.position.hash());
        let moves = game.position.legal_moves();
        let mv = moves[data.get(i).map_or(0, |&b| b as usize) % moves.len()];
        let notation = game.position.move_notation(mv);
        assert_eq!(game.position.parse_move(&notation), Ok(mv), "{notation:?} in {text:?}");
        game.play(mv);
    }
}

/// The built-in variants' three files, for `move_state` to load, with a type's moves replaced.
const BUILT_IN_SOURCES: [(&str, taikyoku_engine::Sources<'static>); 4] = {
    macro_rules! built_in {
        ($name:literal) => {
            (
                $name,
                taikyoku_engine::Sources {
                    rules: include_str!(concat!("../../rust/engine/variants/", $name, ".rules")),
                    pieces: include_str!(concat!("../../rust/engine/variants/", $name, ".pieces")),
                    setup: include_str!(concat!("../../rust/engine/variants/", $name, ".setup")),
                },
            )
        };
    }
    [built_in!("taikyoku"), built_in!("daidai"), built_in!("tenjiku"), built_in!("taishin")]
};

/// Moves `move_state` plays after the warm-up, each checked (the state's check builds a state
/// from scratch: a few hundred microseconds to milliseconds on the big boards).
const MAX_CHECKED_MOVES: usize = 48;

/// The variant `move_state` reads from its input's head, and the rest of the input. Byte 0:
/// bits 0-1 the built-in variant, bits 3-5 a rule option (0: none, else the option at that
/// place, wrapping), bit 2 whether a piece type's moves are replaced: then bytes 1-2 pick the
/// type's line (a line of the piece table that is neither a comment nor an alias nor an
/// option), and the text up to the next 0 byte (at most 256 bytes) is its new moves column.
/// `None` when that variant does not load (the `piece_table` and `rules` targets check the
/// errors).
pub fn move_state_variant(data: &[u8]) -> Option<(Arc<Variant>, &[u8])> {
    let (&head, mut rest) = data.split_first()?;
    let (name, sources) = BUILT_IN_SOURCES[head as usize % 4];
    let mut options: Vec<String> = Vec::new();
    let option = (head >> 3) as usize & 7;
    if option > 0 {
        let offered = Variant::load(name, &[]).ok()?.rule_options();
        if !offered.is_empty() {
            options.push(offered[(option - 1) % offered.len()].0.clone());
        }
    }
    if head & 4 == 0 {
        return Some((Variant::load(name, &options).ok()?, rest));
    }
    let (pick, tail) = (u16::from_le_bytes([*rest.first()?, *rest.get(1)?]) as usize, &rest[2..]);
    let end = tail.iter().take(256).position(|&b| b == 0).unwrap_or(tail.len().min(256));
    let moves = String::from_utf8_lossy(&tail[..end]).replace(['\n', '\r', '|'], " ");
    rest = &tail[(end + 1).min(tail.len())..];
    let lines: Vec<&str> = sources.pieces.lines().collect();
    let types: Vec<usize> = (0..lines.len())
        .filter(|&i| {
            let line = lines[i].trim_start();
            !line.is_empty()
                && !line.starts_with('#')
                && !line.starts_with("alias ")
                && !line.starts_with("option ")
                && line.matches('|').count() == 5
        })
        .collect();
    let at = types[pick % types.len()];
    let column = lines[at].rfind('|').expect("a type line has columns");
    let mut pieces: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    pieces[at] = format!("{}| {moves}", &lines[at][..column]);
    let pieces = pieces.join("\n");
    let variant =
        Variant::from_sources(name, taikyoku_engine::Sources { pieces: &pieces, ..sources }, &options).ok()?;
    Some((Arc::new(variant), rest))
}

/// Target `move_state`: the incremental move state (`taikyoku_engine::incremental`) on fuzzed
/// tables and games. The variant comes from the input's head (`move_state_variant`: a built-in
/// one, a rule option, a piece type's moves replaced by fuzzed text). Then one byte gives the
/// number of random plies played first (times 8, seeded by the next byte), with the state
/// following them; then every two bytes (little-endian) are a move: with the top bit set, the
/// last move is taken back, else the legal move at that index (modulo their number) is played.
/// After the warm-up and after every move, the state must be synced with the position and
/// equal to one built from scratch (`MoveState::check`), and give exactly full generation's
/// moves for both sides, in order, with its counts and `nth` agreeing.
pub fn move_state(data: &[u8]) {
    let Some((variant, rest)) = move_state_variant(data) else { return };
    let mut game = Game::new(variant);
    game.track_moves(true);
    let (warm_up, seed, mut rest) = match rest {
        [plies, seed, tail @ ..] => (*plies as usize * 8, *seed as u64, tail),
        _ => (0, 0, &[][..]),
    };
    random_playout(&mut game, seed, warm_up);
    check_move_state(&game, "after the warm-up");
    let mut checked = 0;
    while let [low, high, tail @ ..] = rest {
        rest = tail;
        if checked == MAX_CHECKED_MOVES {
            break;
        }
        checked += 1;
        let word = u16::from_le_bytes([*low, *high]);
        if word & 0x8000 != 0 {
            if game.undo().is_none() {
                continue;
            }
        } else {
            if game.recorded_end().is_some() {
                continue;
            }
            let count = game.legal_move_count();
            if count == 0 {
                continue;
            }
            let mv = game.legal_move(word as usize % count);
            game.play(mv);
        }
        check_move_state(&game, &format!("move {checked}"));
    }
}

/// The checks of `move_state` on one position of a game that tracks moves.
fn check_move_state(game: &Game, when: &str) {
    let pos = &game.position;
    let state = game.move_state().unwrap_or_else(|| panic!("{when}: the move state is not synced"));
    state.check(pos).unwrap_or_else(|e| panic!("{when}: {e}\n{}", pos.to_text()));
    // The side not to move may have pieces put off until its turn: settle a copy.
    let mut settled = state.clone();
    settled.settle(pos, pos.side_to_move().opponent());
    let (mut reference, mut incremental) = (Vec::new(), Vec::new());
    for color in Color::BOTH {
        reference.clear();
        incremental.clear();
        pos.generate(color, &mut reference);
        settled.moves(pos, color, &mut incremental);
        assert_eq!(incremental, reference, "{when}: {color}'s moves\n{}", pos.to_text());
        assert_eq!(settled.count(color), reference.len(), "{when}: {color}'s count");
        for (i, &mv) in reference.iter().enumerate() {
            assert_eq!(settled.nth(pos, color, i), mv, "{when}: {color}'s move {i}");
        }
    }
}
