//! Instruction counts for docs/PERFORMANCE.md: seeded random games (callgrind).
//! `playout [PLIES] [VARIANT]` (3000, taikyoku): games with seeds 1, 2, ... until PLIES plies.
use taikyoku_engine::{Game, Variant};
fn main() {
    let plies: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(3000);
    let name = std::env::args().nth(2).unwrap_or_else(|| "taikyoku".into());
    let variant = Variant::load(&name, &[]).unwrap();
    let started = std::time::Instant::now();
    let (mut played, mut games, mut moves) = (0, 0, 0);
    while played < plies {
        games += 1;
        let mut game = Game::new(variant.clone());
        played += taikyoku_engine::random::random_playout(&mut game, games, plies - played).plies;
        moves = game.legal_moves().len();
    }
    println!("{played} plies ({games} games) in {:?}, {moves} moves at the end", started.elapsed());
}
