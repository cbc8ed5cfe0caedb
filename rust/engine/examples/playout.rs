//! Instruction counts for docs/PERFORMANCE.md: one seeded random game (callgrind).
//! `playout [PLIES] [VARIANT]` (3000, taikyoku).
use taikyoku_engine::{Game, Variant};
fn main() {
    let plies: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(3000);
    let name = std::env::args().nth(2).unwrap_or_else(|| "taikyoku".into());
    let variant = Variant::load(&name, &[]).unwrap();
    let mut game = Game::new(variant.clone());
    let started = std::time::Instant::now();
    let playout = taikyoku_engine::random::random_playout(&mut game, 1, plies);
    let moves = game.legal_moves().len();
    println!("{} plies in {:?}, {} moves at the end", playout.plies, started.elapsed(), moves);
}
