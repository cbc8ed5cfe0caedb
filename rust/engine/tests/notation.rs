//! Notation round trips: every legal move's printed notation parses back to exactly that move,
//! and the grammar's awkward corners (`x` as a rank letter, start squares before `x`) read right.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use taikyoku_engine::notation::{Action, WrittenMove};
use taikyoku_engine::{Color, Game, Move, NotationError, Piece, Position, Variant};

/// Every legal move of `pos` is printed uniquely and parses back to itself. Returns the moves
/// checked with (double moves, start squares, captures) counted.
fn round_trip_all(pos: &Position, seen: &mut [usize; 4]) {
    let moves = pos.legal_moves();
    let notations = pos.notations(&moves, &moves);
    let mut sorted = notations.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), notations.len(), "two legal moves share a notation in {}", pos.to_text());
    for (&mv, text) in moves.iter().zip(&notations) {
        assert_eq!(pos.parse_move(text), Ok(mv), "'{text}' does not parse back in {}", pos.to_text());
        assert_eq!(pos.move_notation(mv), *text);
        let written = WrittenMove::parse(text, &pos.variant.geometry).unwrap();
        seen[0] += 1;
        seen[1] += matches!(written.action, Action::Double { .. }) as usize;
        seen[2] += written.start.is_some() as usize;
        seen[3] += pos.is_capture(mv) as usize;
    }
}

#[test]
fn every_printed_move_parses_back_in_random_games() {
    let variant = Variant::load("taikyoku", &[]).unwrap();
    let mut seen = [0usize; 4];
    for seed in 0..6u64 {
        let mut game = Game::new(variant.clone());
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for ply in 0..2400 {
            if game.recorded_end().is_some() {
                break;
            }
            let moves = game.position.legal_moves();
            if moves.is_empty() {
                break;
            }
            // Every position late in the game (where captures abound), a sample earlier.
            if ply % 40 == 0 || ply > 1600 && ply % 8 == 0 {
                round_trip_all(&game.position, &mut seen);
            }
            game.play(moves[rng.gen_range(0..moves.len())]);
        }
    }
    let [moves, doubles, starts, captures] = seen;
    assert!(moves > 50_000 && doubles > 100 && starts > 100 && captures > 1_000, "{seen:?}");
}

fn board(pieces: &[(&str, &str, Color)]) -> Position {
    let variant = Variant::load("taikyoku", &[]).unwrap();
    let mut pos = Position::empty(variant.clone(), Color::Black);
    for &(sq, key, color) in pieces {
        let kind = variant.table.lookup(key).unwrap();
        pos.put(variant.geometry.parse_square(sq).unwrap(), Piece { kind, origin: kind, color, promoted: false });
    }
    pos
}

fn find(pos: &Position, from: &str, to: &str, mid: Option<&str>) -> Move {
    let g = &pos.variant.geometry;
    let sq = |name: &str| g.parse_square(name).unwrap() as u16;
    *pos.legal_moves()
        .iter()
        .find(|m| m.from == sq(from) && m.to == sq(to) && mid.map_or(m.mid == u16::MAX, |x| m.mid == sq(x)))
        .expect("the move is legal")
}

#[test]
fn x_after_a_square_is_a_separator() {
    use Color::*;
    // A lion double capture on ranks q and r: `LNx18qx17r`-style text has `x` right after a
    // square, the case that used to be read as rank `qx`.
    let pos = board(&[("18r", "LN", Black), ("18q", "P", White), ("17p", "P", White)]);
    let mv = find(&pos, "18r", "17p", Some("18q"));
    let text = pos.move_notation(mv);
    assert_eq!(text, "LNx18qx17p+");
    assert_eq!(pos.parse_move(&text), Ok(mv));
    assert_eq!(pos.parse_move("LNx18qx17p"), Ok(mv), "the promotion mark is optional");
    assert_eq!(
        pos.parse_move("LNx18q-17p"),
        Err(NotationError::Illegal("no legal move 'LNx18q-17p' for black".into()))
    );

    // Rank `x` itself (the 24th) followed by the separator `x`.
    let pos = board(&[("12y", "LN", Black), ("12x", "P", White), ("13x", "P", White)]);
    let mv = find(&pos, "12y", "13x", Some("12x"));
    assert_eq!(pos.move_notation(mv), "LNx12xx13x+");
    assert_eq!(pos.parse_move("LNx12xx13x+"), Ok(mv));

    // A start square before `x`: two golds can take the same pawn.
    let pos = board(&[("18r", "G", Black), ("16r", "G", Black), ("17q", "P", White)]);
    let mv = find(&pos, "18r", "17q", None);
    assert_eq!(pos.move_notation(mv), "G18rx17q+");
    assert_eq!(pos.parse_move("G18rx17q+"), Ok(mv));
    assert!(matches!(pos.parse_move("Gx17q+"), Err(NotationError::Ambiguous(_))));
}

#[test]
fn grammar_errors_name_the_problem() {
    let g = Variant::load("taikyoku", &[]).unwrap().geometry.clone();
    for bad in ["", "+", "p-12h", "P12h", "P-", "P-12", "P-h", "P--12h", "P-12h++", "P-12h-13h", "LN-12hx13h", "P-!"] {
        assert!(matches!(WrittenMove::parse(bad, &g), Err(NotationError::Malformed(_))), "{bad:?}");
    }
    for bad in ["P-37a", "P-0a", "P-1kk", "P37a-1a", "LNx1ax0b"] {
        assert!(matches!(WrittenMove::parse(bad, &g), Err(NotationError::UnknownSquare(_))), "{bad:?}");
    }
    let parsed = WrittenMove::parse("+DS10jjx9jjx8ii+", &g).unwrap();
    assert_eq!(parsed.code, "+DS");
    assert_eq!(parsed.start, g.parse_square("10jj"));
    assert_eq!(
        parsed.action,
        Action::Double {
            first: g.parse_square("9jj").unwrap(),
            second: None,
            to: g.parse_square("8ii").unwrap(),
            capture: true
        }
    );
    assert!(parsed.promotes);
    assert_eq!(WrittenMove::parse("LN-!18r", &g).unwrap().action, Action::Pass { at: g.parse_square("18r").unwrap() });
    assert_eq!(
        WrittenMove::parse("LNx!18q", &g).unwrap().action,
        Action::Igui { victim: g.parse_square("18q").unwrap() }
    );
}

#[test]
fn every_printed_move_parses_back_in_random_daidai_games_and_triple_captures_read() {
    let variant = Variant::load("daidai", &[]).unwrap();
    let mut seen = [0usize; 4];
    for seed in 0..4u64 {
        let mut game = Game::new(variant.clone());
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for ply in 0..1500 {
            let moves = game.legal_moves();
            if game.end_given(&moves).is_some() {
                break;
            }
            if ply % 25 == 0 {
                round_trip_all(&game.position, &mut seen);
            }
            game.play(moves[rng.gen_range(0..moves.len())]);
        }
    }
    assert!(seen[0] > 5_000 && seen[3] > 100, "{seen:?}");
    // The lion dog's three-step capture is written with each capture in path order.
    let mut pos = Position::empty(variant.clone(), Color::Black);
    for (sq, key, color) in
        [("9i", "LD", Color::Black), ("9h", "P", Color::White), ("9g", "P", Color::White), ("9f", "P", Color::White)]
    {
        let kind = variant.table.lookup(key).unwrap();
        pos.put(variant.geometry.parse_square(sq).unwrap(), Piece { kind, origin: kind, color, promoted: false });
    }
    let mut seen = [0usize; 4];
    round_trip_all(&pos, &mut seen);
    let triple = pos.parse_move("LDx9hx9gx9f+").unwrap();
    assert_eq!(pos.captures_of(triple).len(), 3);
    assert_eq!(pos.move_notation(triple), "LDx9hx9gx9f+");
    let back = pos.parse_move("LDx9gx9h+").unwrap();
    assert_eq!(pos.captures_of(back).len(), 2);
    assert!(matches!(pos.parse_move("LDx9h-9gx9f"), Err(NotationError::Malformed(_))));
}

/// `Game::from_text(Game::to_text())` is the same game for the rules, at every ply of seeded
/// random games of every variant: the same legal moves (Dai dai forbids repeating positions),
/// repetition count, move number, end, and the same ends as both play on. The text carries the
/// moves since the last irreversible move; the restored game's own plies start at zero.
#[test]
fn game_texts_round_trip_with_their_history_at_every_ply() {
    use taikyoku_engine::variant_names;
    for name in variant_names() {
        let variant = Variant::load(name, &[]).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(29);
        let mut game = Game::new(variant.clone());
        let (mut with_history, mut longest) = (0, 0);
        for _ in 0..400 {
            let text = game.to_text();
            let back = Game::from_text(variant.clone(), &text).unwrap_or_else(|e| panic!("{name}: {e} in {text}"));
            let mut expected = game.legal_moves();
            let mut found = back.legal_moves();
            expected.sort();
            found.sort();
            assert_eq!(found, expected, "{name} ply {}: legal moves differ after the text round trip", game.plies());
            assert_eq!(back.repetitions(), game.repetitions(), "{name} ply {}", game.plies());
            assert_eq!(back.position.to_text(), game.position.to_text());
            assert_eq!(back.end(), game.end());
            assert_eq!(back.plies(), 0);
            assert_eq!(back.to_text(), text, "{name}: the text of a restored game is the text it came from");
            if let Some(history) = text.split(" moves ").nth(1) {
                with_history += 1;
                longest = longest.max(history.split(' ').count());
            }
            if game.end().is_some() {
                break;
            }
            game.play(expected[rng.gen_range(0..expected.len())]);
        }
        assert!(with_history > 0 && longest > 1, "{name}: no text carried a history");
    }
}

/// The case: a Dai dai position whose text dropped the history offered moves the live
/// game forbids. Positions are made to recur by moving two pieces back and forth.
#[test]
fn a_daidai_text_keeps_the_forbidden_repetitions() {
    let variant = Variant::load("daidai", &[]).unwrap();
    let mut game = Game::new(variant.clone());
    // Shuffle pieces back and forth until some move is forbidden for repeating a position.
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut found = false;
    for _ in 0..3000 {
        let legal = game.legal_moves();
        let plain = game.position.legal_moves();
        if legal.len() < plain.len() {
            let text = game.to_text();
            let back = Game::from_text(variant.clone(), &text).unwrap();
            assert_eq!(back.legal_moves().len(), legal.len(), "{text}");
            let plain_text = Game::from_text(variant.clone(), &game.position.to_text()).unwrap();
            assert_eq!(plain_text.legal_moves().len(), plain.len(), "the position alone forgets the history");
            found = true;
            break;
        }
        if game.end().is_some() {
            game = Game::new(variant.clone());
        }
        let quiet: Vec<Move> = legal.iter().copied().filter(|&m| game.position.quiet_hash_after(m).is_some()).collect();
        let pool = if quiet.is_empty() { &legal } else { &quiet };
        game.play(pool[rng.gen_range(0..pool.len())]);
    }
    assert!(found, "no forbidden repetition came up");
}

#[test]
fn game_texts_refuse_moves_that_cannot_be_played_and_undo_stops_at_the_text() {
    let variant = Variant::load("tenjiku", &[]).unwrap();
    let start = Position::initial(variant.clone()).to_text();
    let mut game = Game::new(variant.clone());
    let first = game.legal_moves()[0];
    let written = game.position.move_notation(first);
    let mut restored = Game::from_text(variant.clone(), &format!("{start} moves {written}")).unwrap();
    game.play(first);
    assert_eq!(restored.position.to_text(), game.position.to_text());
    assert_eq!((restored.plies(), restored.undo()), (0, None), "the text's moves are history, not plies of the game");
    let error =
        Game::from_text(variant.clone(), &format!("{start} moves {written} {written}")).unwrap_err().to_string();
    assert!(error.contains("move 2 after 'moves'"), "{error}");
    let error = Game::from_text(variant, &format!("{start} moves Q-99a")).unwrap_err().to_string();
    assert!(error.contains("move 1 after 'moves' ('Q-99a')"), "{error}");
}

#[test]
fn an_unknown_rule_option_lists_the_valid_ones() {
    let error = Variant::load("taikyoku", &["nope".to_string()]).unwrap_err().to_string();
    assert!(error.starts_with("unknown rule option 'nope' for taikyoku; its options: "), "{error}");
    for (option, _) in Variant::load("taikyoku", &[]).unwrap().rule_options() {
        assert!(error.contains(&option), "{option} missing from: {error}");
    }
    assert!(!error.contains("line 0"), "{error}");
    let error = Variant::load("taishin", &["nope".to_string()]).unwrap_err().to_string();
    assert_eq!(error, "unknown rule option 'nope': taishin has no rule options");
}
