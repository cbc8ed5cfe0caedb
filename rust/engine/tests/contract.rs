//! The contract every variant must keep (as OpenSpiel and pgx test every game with one suite):
//! a symmetric setup, exact undo, pieces that change only by capture, an incremental hash equal
//! to a fresh one, position texts that round-trip, actions that are a bijection on legal moves,
//! seeded determinism, and opening perft counts equal to the recorded ones
//! (`tests/data/perft.txt`).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;
use taikyoku_engine::random::random_playout;
use taikyoku_engine::{variant_names, Color, Game, Position, Variant};

fn variants() -> Vec<Arc<Variant>> {
    variant_names().into_iter().map(|name| Variant::load(name, &[]).unwrap()).collect()
}

fn snapshot(pos: &Position) -> Vec<(usize, taikyoku_engine::Piece)> {
    pos.squares().collect()
}

#[test]
fn the_setup_is_symmetric_and_both_sides_have_the_same_moves() {
    for variant in variants() {
        let pos = Position::initial(variant.clone());
        let name = &variant.name;
        for (sq, p) in pos.squares() {
            let twin = pos.at(variant.rotate(sq)).unwrap_or_else(|| panic!("{name}: no piece opposite {sq}"));
            assert_eq!((twin.kind, twin.color), (p.kind, p.color.opponent()), "{name}: square {sq}");
        }
        assert_eq!(pos.royal_count(Color::Black), pos.royal_count(Color::White));
        assert!(pos.royal_count(Color::Black) > 0, "{name}: no royal");
        let (mut black, mut white) = (Vec::new(), Vec::new());
        pos.generate(Color::Black, &mut black);
        pos.generate(Color::White, &mut white);
        let rotate = |sq: u16| variant.rotate(sq as usize) as u16;
        let mut rotated: Vec<_> = white.iter().map(|m| (rotate(m.from), rotate(m.to))).collect();
        let mut black: Vec<_> = black.iter().map(|m| (m.from, m.to)).collect();
        rotated.sort();
        black.sort();
        assert_eq!(rotated, black, "{name}");
    }
}

#[test]
fn random_plies_keep_the_invariants() {
    for variant in variants() {
        let name = &variant.name;
        let mut total = 0;
        for seed in 0..4u64 {
            let mut game = Game::new(variant.clone());
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            for _ in 0..1500 {
                let moves = game.legal_moves();
                if game.end_given(&moves).is_some() {
                    break;
                }
                let before = snapshot(&game.position);
                let hash = game.position.hash();
                let mv = moves[rng.gen_range(0..moves.len())];
                let captures = game.position.captures_of(mv);
                let mover = game.position.at(mv.from as usize).unwrap();
                let promotes = game.position.promotes(mv);
                let predicted = game.position.hash_after(mv);
                let burned_self = game.position.burns(mv).mover;
                game.play(mv);
                assert_eq!(game.position.hash(), predicted, "{name}: hash_after");
                let after = snapshot(&game.position);
                // Pieces change only by capture: exactly the captured pieces disappear.
                // (A mover that stops next to an enemy fire demon burns too.)
                assert_eq!(
                    after.len(),
                    before.len() - captures.len() - burned_self as usize,
                    "{name} seed {seed}: piece count"
                );
                if !burned_self {
                    let moved = game.position.at(mv.to as usize).unwrap();
                    assert_eq!(moved.color, mover.color);
                    // Only a capture that confers a type (Taishin's deva) makes another piece.
                    assert!(moved.origin == mover.origin || promotes, "{name}: origin changed");
                    assert_eq!(moved.promoted, mover.promoted || promotes);
                }
                assert_eq!(game.position.hash(), game.position.compute_hash(), "{name}: incremental hash");
                // Every other piece stays where it was.
                for (sq, p) in &before {
                    if *sq != mv.from as usize && !captures.contains(sq) {
                        assert_eq!(game.position.at(*sq), Some(*p));
                    }
                }
                // Undo restores everything, then redo.
                game.undo();
                assert_eq!(snapshot(&game.position), before);
                assert_eq!(game.position.hash(), hash);
                game.play(mv);
                total += 1;
            }
        }
        assert!(total > 1000, "{name}: {total} plies");
    }
}

#[test]
fn position_texts_round_trip() {
    for variant in variants() {
        for seed in 0..3 {
            let mut game = Game::new(variant.clone());
            random_playout(&mut game, seed, 400);
            let text = game.position.to_text();
            let back = Position::from_text(variant.clone(), &text).unwrap();
            assert_eq!(back.to_text(), text);
            assert_eq!(back.hash(), game.position.hash());
        }
    }
}

#[test]
fn the_same_seed_plays_the_same_game() {
    for variant in variants() {
        let play = |seed| {
            let mut game = Game::new(variant.clone());
            random_playout(&mut game, seed, 300);
            game.position.moves_played().collect::<Vec<_>>()
        };
        assert_eq!(play(5), play(5));
        assert_ne!(play(5), play(6));
    }
}

/// Every position of random games: each legal move has its own action in both frames, the
/// action decodes back to the move, and the multi-leg templates are exercised.
#[test]
fn actions_are_a_bijection_on_legal_moves() {
    use taikyoku_engine::rl::actions::{action_of, legal_pairs, move_of, Frame, MOVE_BLOCK, NUM_ACTIONS};
    for variant in variants() {
        let name = &variant.name;
        let (mut positions, mut multi_leg) = (0, 0);
        for seed in 10..14u64 {
            let mut game = Game::new(variant.clone());
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            for _ in 0..1500 {
                let moves = game.position.legal_moves();
                if game.end_given(&moves).is_some() {
                    break;
                }
                for frame in [Frame::Mover, Frame::Absolute] {
                    let pairs = legal_pairs(&game.position, &moves, frame);
                    assert!(pairs.windows(2).all(|w| w[0].0 < w[1].0), "{name} seed {seed}: two moves share an action");
                    for (i, &(action, mv)) in pairs.iter().enumerate() {
                        assert!((action as usize) < NUM_ACTIONS);
                        // Decoding scans the move list: check a sample (and every multi-leg move).
                        if i % 16 == 0 || action as usize >= MOVE_BLOCK {
                            assert_eq!(move_of(&game.position, &moves, action, frame), Some(mv));
                        }
                        multi_leg += (action as usize >= MOVE_BLOCK) as usize;
                    }
                }
                positions += 1;
                game.play(moves[rng.gen_range(0..moves.len())]);
            }
            // Off-board or unused actions decode to no move.
            let moves = game.position.legal_moves();
            let used: Vec<u32> = moves.iter().map(|&m| action_of(&game.position, m, Frame::Mover)).collect();
            let unused = (0..NUM_ACTIONS as u32).step_by(9973).find(|a| !used.contains(a)).unwrap();
            assert_eq!(move_of(&game.position, &moves, unused, Frame::Mover), None);
        }
        assert!(positions > 1000 && multi_leg > 100, "{name}: {positions} positions, {multi_leg} multi-leg moves");
    }
}

/// Leaf nodes `depth` plies from `game` (every pseudo-legal move is legal; finished games are
/// leaves).
fn perft(game: &mut Game, depth: u32) -> u64 {
    let moves = game.legal_moves();
    if game.end_given(&moves).is_some() {
        return 0;
    }
    if depth == 1 {
        return moves.len() as u64;
    }
    let mut total = 0;
    for mv in moves {
        game.play(mv);
        total += perft(game, depth - 1);
        game.undo();
    }
    total
}

#[test]
fn opening_perft_counts_match_the_recorded_ones() {
    let recorded = include_str!("data/perft.txt");
    let mut checked = 0;
    for line in recorded.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (name, depth, count): (&str, u32, u64) =
            (fields[0], fields[1].parse().unwrap(), fields[2].parse().unwrap());
        let mut game = Game::new(Variant::load(name, &[]).unwrap());
        assert_eq!(perft(&mut game, depth), count, "{name} perft({depth})");
        checked += 1;
    }
    for name in variant_names() {
        assert!(recorded.lines().any(|l| l.starts_with(&format!("{name} 3 "))), "no perft(3) recorded for {name}");
    }
    assert!(checked >= 3);
}
