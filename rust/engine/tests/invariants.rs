//! Invariants over random games from the opening: pieces change only by capture, undo restores
//! the exact position and hash, the incremental hash equals a fresh one.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use taikyoku_engine::{Color, Game, Position, Variant};

fn snapshot(pos: &Position) -> Vec<(usize, taikyoku_engine::Piece)> {
    pos.squares().collect()
}

#[test]
fn random_plies_keep_invariants() {
    let variant = Variant::load("taikyoku", &[]).unwrap();
    let mut total = 0;
    for seed in 0..4u64 {
        let mut game = Game::new(variant.clone());
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for _ in 0..1500 {
            if game.end().is_some() {
                break;
            }
            let moves = game.position.legal_moves();
            if moves.is_empty() {
                break;
            }
            let before = snapshot(&game.position);
            let hash = game.position.hash();
            let mv = moves[rng.gen_range(0..moves.len())];
            let captures = game.position.captures_of(mv);
            let mover = game.position.at(mv.from as usize).unwrap();
            game.play(mv);
            let after = snapshot(&game.position);
            // Pieces change only by capture: exactly the captured pieces disappear.
            assert_eq!(after.len(), before.len() - captures.len(), "seed {seed}: piece count");
            let moved = game.position.at(mv.to as usize).unwrap();
            assert_eq!(moved.color, mover.color);
            assert_eq!(moved.origin, mover.origin);
            assert_eq!(moved.promoted, mover.promoted || (!captures.is_empty() && variant.table.get(mover.kind).promotes_to.is_some()));
            assert_eq!(game.position.hash(), game.position.compute_hash(), "incremental hash");
            // Every other piece stays where it was.
            for (sq, p) in &before {
                if *sq != mv.from as usize && !captures.contains(sq) {
                    assert_eq!(game.position.at(*sq), Some(*p));
                }
            }
            // Undo restores everything, then replay.
            game.undo();
            assert_eq!(snapshot(&game.position), before);
            assert_eq!(game.position.hash(), hash);
            game.play(mv);
            total += 1;
        }
    }
    assert!(total > 1000);
}

#[test]
fn opening_is_symmetric() {
    let variant = Variant::load("taikyoku", &[]).unwrap();
    let pos = Position::initial(variant.clone());
    assert_eq!(pos.squares().count(), 804);
    assert_eq!(pos.royal_count(Color::Black), 2);
    assert_eq!(pos.royal_count(Color::White), 2);
    let mut black = Vec::new();
    pos.generate(Color::Black, &mut black);
    let mut white = Vec::new();
    pos.generate(Color::White, &mut white);
    assert_eq!(black.len(), white.len());
    let size = variant.geometry.size() as u16;
    let mut rotated: Vec<_> = white.iter().map(|m| (size - 1 - m.from, size - 1 - m.to)).collect();
    let mut black: Vec<_> = black.iter().map(|m| (m.from, m.to)).collect();
    rotated.sort();
    black.sort();
    assert_eq!(rotated, black);
}

#[test]
fn position_text_round_trips() {
    let variant = Variant::load("taikyoku", &[]).unwrap();
    let mut game = Game::new(variant.clone());
    taikyoku_engine::random::random_playout(&mut game, 3, 400);
    let text = game.position.to_text();
    let back = Position::from_text(variant, &text).unwrap();
    assert_eq!(back.to_text(), text);
    assert_eq!(back.hash(), game.position.hash());
}


/// Every position of random games: each legal move has its own action in both frames, the
/// action decodes back to the move, and the multi-leg templates are exercised.
#[test]
fn actions_are_a_bijection_on_legal_moves() {
    use taikyoku_engine::rl::actions::{action_of, legal_pairs, move_of, Frame, MOVE_BLOCK, NUM_ACTIONS};
    let variant = Variant::load("taikyoku", &[]).unwrap();
    let (mut positions, mut multi_leg) = (0, 0);
    for seed in 10..14u64 {
        let mut game = Game::new(variant.clone());
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for _ in 0..1500 {
            let moves = game.position.legal_moves();
            if game.end_with_moves(&moves).is_some() {
                break;
            }
            for frame in [Frame::Mover, Frame::Absolute] {
                let pairs = legal_pairs(&game.position, &moves, frame);
                assert!(pairs.windows(2).all(|w| w[0].0 < w[1].0), "seed {seed}: two moves share an action");
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
    assert!(positions > 2000 && multi_leg > 100, "{positions} positions, {multi_leg} multi-leg moves");
}
