//! The end-of-game rules (docs/RULES.md §6), each from a small position, and each variant-level
//! alternative of the rules file (`variants/*.rules`).

use std::sync::Arc;
use taikyoku_engine::{Color, Game, Outcome, Piece, Position, Sources, Termination, Variant};

const PIECES: &str = include_str!("../variants/taikyoku.pieces");
const SETUP: &str = include_str!("../variants/taikyoku.setup");

/// Taikyoku with extra rules-file lines (later keys may not repeat earlier ones, so `extra`
/// replaces the defaults by leaving them out).
fn variant(extra: &str) -> Arc<Variant> {
    let rules = format!("board 36x36\n{extra}");
    Arc::new(Variant::from_sources("taikyoku", Sources { rules: &rules, pieces: PIECES, setup: SETUP }, &[]).unwrap())
}

fn game(variant: &Arc<Variant>, side: Color, pieces: &[(&str, &str, Color)]) -> Game {
    let mut pos = Position::empty(variant.clone(), side);
    for &(sq, key, color) in pieces {
        let kind = variant.table.lookup(key).unwrap();
        pos.put(variant.geometry.parse_square(sq).unwrap(), Piece { kind, origin: kind, color, promoted: false });
    }
    Game::from_position(pos)
}

fn play(game: &mut Game, moves: &[&str]) {
    for text in moves {
        assert_eq!(game.end(), None, "the game ended before {text}");
        let mv = game.position.parse_move(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        game.play(mv);
    }
}

/// White's king shuffles between 5a and 4a; Black's rook follows it, checking with every move.
fn perpetual_check(variant: &Arc<Variant>) -> Game {
    use Color::*;
    let mut g = game(variant, White, &[("5a", "K", White), ("5e", "R", Black), ("36jj", "K", Black)]);
    for _ in 0..2 {
        play(&mut g, &["K-4a", "R-4e", "K-5a", "R-5e"]);
    }
    g
}

#[test]
fn royal_capture_ends_the_game_with_the_last_royal() {
    use Color::*;
    let v = variant("");
    // Two white royals: taking one is not the end, taking the last is.
    let mut g =
        game(&v, Black, &[("18r", "R", Black), ("18k", "K", White), ("18a", "CP", White), ("36jj", "K", Black)]);
    play(&mut g, &["Rx18k+"]);
    assert_eq!(g.end(), None);
    play(&mut g, &["CP-18b", "+Rx18b"]);
    assert_eq!(g.end(), Some((Outcome::Win(Black), Termination::RoyalCapture)));
}

#[test]
fn the_fourth_occurrence_is_no_contest_unless_one_side_checked_throughout() {
    use Color::*;
    let v = variant("");
    // Both kings shuffle: nobody checks, so the fourth occurrence is no contest.
    let mut g = game(&v, Black, &[("30jj", "K", Black), ("5a", "K", White)]);
    for round in 0..3 {
        assert_eq!(g.repetitions(), round + 1);
        play(&mut g, &["K-29jj", "K-4a", "K-30jj", "K-5a"]);
    }
    assert_eq!(g.end(), Some((Outcome::Draw, Termination::Repetition)));
    // Black's rook checks with every move of the cycle: Black loses at the fourth occurrence.
    let mut g = perpetual_check(&v);
    assert_eq!(g.end(), None, "third occurrence");
    play(&mut g, &["K-4a", "R-4e", "K-5a", "R-5e"]);
    assert_eq!(g.end(), Some((Outcome::Win(White), Termination::PerpetualCheck)));
    // Undo takes the end back.
    g.undo();
    assert_eq!(g.end(), None);
}

#[test]
fn the_rules_file_sets_the_repetition_count_and_the_perpetual_check_rule() {
    let v = variant("repetition 3\n");
    let g = perpetual_check(&v);
    assert_eq!(g.end(), Some((Outcome::Win(Color::White), Termination::PerpetualCheck)), "third occurrence ends it");
    let v = variant("perpetual-check repetition\n");
    let mut g = perpetual_check(&v);
    play(&mut g, &["K-4a", "R-4e", "K-5a", "R-5e"]);
    assert_eq!(g.end(), Some((Outcome::Draw, Termination::Repetition)));
}

#[test]
fn no_legal_move_loses_or_draws_as_the_rules_file_says() {
    use Color::*;
    // White's only piece is a pawn on its furthest rank with nothing to capture: no move.
    let pieces = [("36jj", "K", Black), ("1jj", "P", White)];
    let g = game(&variant(""), White, &pieces);
    assert!(g.position.legal_moves().is_empty());
    assert_eq!(g.end(), Some((Outcome::Win(Black), Termination::NoMoves)));
    let g = game(&variant("no-moves draw\n"), White, &pieces);
    assert_eq!(g.end(), Some((Outcome::Draw, Termination::NoMoves)));
}

#[test]
fn the_ply_limit_truncates_and_a_forfeit_loses() {
    use Color::*;
    let v = variant("");
    let mut g = game(&v, Black, &[("30jj", "K", Black), ("5a", "K", White)]);
    g.max_plies = Some(2);
    play(&mut g, &["K-29jj", "K-4a"]);
    assert_eq!(g.end(), Some((Outcome::Truncated, Termination::MaxPlies)));
    let mut g = game(&v, Black, &[("30jj", "K", Black), ("5a", "K", White)]);
    g.forfeit();
    assert_eq!(g.end(), Some((Outcome::Win(White), Termination::IllegalMove)));
    assert!(g.forfeited());
}

#[test]
fn a_royal_capture_on_the_last_allowed_ply_beats_the_limit() {
    use Color::*;
    let v = variant("");
    let mut g = game(&v, Black, &[("18r", "R", Black), ("18k", "K", White), ("36jj", "K", Black)]);
    g.max_plies = Some(1);
    play(&mut g, &["Rx18k+"]);
    assert_eq!(g.end(), Some((Outcome::Win(Black), Termination::RoyalCapture)));
}

#[test]
fn repetition_mode_forbid_takes_the_repeating_move_out_of_the_legal_moves() {
    use Color::*;
    // Dai dai's rule (`repetition 2`, `repetition-mode forbid`): a move that would recreate a
    // position with the same side to move is not legal, and the game never ends by repetition.
    let v = variant("repetition 2\nrepetition-mode forbid");
    let mut g = game(&v, Black, &[("5e", "R", Black), ("36jj", "K", Black), ("5a", "K", White)]);
    play(&mut g, &["R-4e", "K-4a"]);
    // Back to 5e is still legal (Black to move after it is new: White's king is on 4a)...
    let back = g.position.parse_move("R-5e").unwrap();
    assert!(g.is_legal(back));
    play(&mut g, &["R-5e"]);
    // ...but the king's return to 5a would recreate the start with Black to move.
    let king_back = g.position.parse_move("K-5a").unwrap();
    assert!(!g.is_legal(king_back));
    assert!(!g.legal_moves().contains(&king_back));
    assert!(g.legal_moves().contains(&g.position.parse_move("K-6a").unwrap()));
    assert_eq!(g.end(), None);
    // With `end` (the default) the same move is legal.
    let v = variant("repetition 2");
    let mut g = game(&v, Black, &[("5e", "R", Black), ("36jj", "K", Black), ("5a", "K", White)]);
    play(&mut g, &["R-4e", "K-4a", "R-5e"]);
    assert!(g.is_legal(g.position.parse_move("K-5a").unwrap()));
}
