//! Instruction counts for docs/PERFORMANCE.md: seeded random games (callgrind).
//! `playout [PLIES] [VARIANT] [GAME_PLIES]` (3000, taikyoku, no limit): games with seeds 1, 2,
//! ... until PLIES plies, each cut after GAME_PLIES plies (the criterion `random_playout` bench
//! plays 1000-ply games: new games, hence the opening, weigh more).
//! Prints a checksum of every move played, so two builds can be checked to play the same games.
use taikyoku_engine::random::splitmix64;
use taikyoku_engine::{Game, Variant};
fn main() {
    let plies: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(3000);
    let name = std::env::args().nth(2).unwrap_or_else(|| "taikyoku".into());
    let game_plies: usize = std::env::args().nth(3).and_then(|a| a.parse().ok()).unwrap_or(usize::MAX);
    let variant = Variant::load(&name, &[]).unwrap();
    let started = std::time::Instant::now();
    let (mut played, mut games, mut moves, mut checksum) = (0, 0, 0, 0u64);
    while played < plies {
        games += 1;
        let mut game = Game::new(variant.clone());
        played += taikyoku_engine::random::random_playout(&mut game, games, (plies - played).min(game_plies)).plies;
        moves = game.legal_moves().len();
        for mv in game.position.moves_played() {
            let word = mv.from as u64
                | (mv.to as u64) << 12
                | (mv.mid as u64) << 24
                | (mv.mid2() as u64) << 40
                | (mv.sweep() as u64) << 56
                | (mv.promote() as u64) << 57;
            checksum = splitmix64(checksum ^ word);
        }
    }
    println!(
        "{played} plies ({games} games) in {:?}, {moves} moves at the end, checksum {checksum:016x}",
        started.elapsed()
    );
}
