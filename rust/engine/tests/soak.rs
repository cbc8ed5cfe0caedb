//! Soak: many random plies with the engine's invariants checked after every one.
//!
//! - CI runs `soak_ci` (10^5 plies, a few seconds in release).
//! - The long run is a command (docs/PERFORMANCE.md):
//!   `TAIKYOKU_SOAK_PLIES=10000000 cargo test --release -p taikyoku-engine --test soak -- --ignored --nocapture`
//!
//! After every ply: pieces vanish only by capture, undo restores the exact position text and
//! hash, the incremental hash equals a recomputed one, the position text round-trips, and the
//! played move's notation parses back to it. Every few hundred plies the game round-trips
//! through `Game::replay` (what unpickling does).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;
use taikyoku_engine::{variant_names, Game, Position, Variant};

const REPLAY_EVERY: usize = 400;

/// Plays `plies` random plies (new games as they end), checking the invariants; returns the
/// number of games played.
fn soak(plies: usize, seed: u64) -> usize {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut games = 0;
    let mut played = 0;
    while played < plies {
        for name in variant_names() {
            let variant = Variant::load(name, &[]).unwrap();
            let start = Position::initial(variant.clone()).to_text();
            let mut game = Game::new(variant.clone());
            games += 1;
            while played < plies {
                let moves = game.legal_moves();
                if game.end_given(&moves).is_some() {
                    break;
                }
                let mv = moves[rng.gen_range(0..moves.len())];
                let (text, hash) = (game.position.to_text(), game.position.hash());
                let count = game.position.squares().count();
                // A mover that stops next to an enemy fire demon is burned as well.
                let captured = game.position.captures_of(mv).len() + game.position.burns(mv).mover as usize;
                let notation = game.position.move_notation(mv);
                assert_eq!(game.position.parse_move(&notation), Ok(mv), "{name}: '{notation}' in {text}");
                game.play(mv);
                played += 1;
                let pos = &game.position;
                assert_eq!(pos.squares().count(), count - captured, "{name}: pieces vanish only by capture");
                assert_eq!(pos.hash(), pos.compute_hash(), "{name}: incremental hash");
                let after = pos.to_text();
                let reread = Position::from_text(variant.clone(), &after).unwrap();
                assert_eq!((reread.to_text(), reread.hash()), (after.clone(), pos.hash()), "{name}: text round trip");
                game.undo();
                assert_eq!((game.position.to_text(), game.position.hash()), (text, hash), "{name}: undo");
                game.play(mv);
                if game.plies().is_multiple_of(REPLAY_EVERY) {
                    let moves: Vec<_> = game.position.moves_played().collect();
                    let replayed = Game::replay(variant.clone(), &start, &moves, game.max_plies).unwrap();
                    assert_eq!(replayed.position.to_text(), after, "{name}: replay (pickle) round trip");
                    assert_eq!(replayed.end(), game.end());
                }
            }
        }
    }
    games
}

#[test]
fn soak_ci() {
    let games = soak(100_000, 1);
    assert!(games >= 1);
}

#[test]
#[ignore = "long: run with TAIKYOKU_SOAK_PLIES=N ... -- --ignored"]
fn soak_long() {
    let plies: usize = std::env::var("TAIKYOKU_SOAK_PLIES").ok().and_then(|v| v.parse().ok()).unwrap_or(10_000_000);
    let started = Instant::now();
    let games = soak(plies, 2);
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "soak: {plies} plies, {games} games, {seconds:.0} s, {:.0} plies/s, all invariants held",
        plies as f64 / seconds
    );
}
