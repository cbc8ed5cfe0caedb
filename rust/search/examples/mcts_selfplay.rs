//! Heuristic MCTS self-play as `selfplay` plays it (issue 27): `MctsPlayer` with the default
//! settings (tree reuse, root noise, temperature) and 64 simulations a move, games of up to
//! 400 plies, so the searches run to the end of real games (a ply limit inside the trees would
//! make simulations look cheap).
//! `mcts_selfplay [GAMES] [MAX_PLIES] [SIMULATIONS]` (1, 400, 64): plays GAMES games (seeds 1,
//! 2, ...) and prints the simulations run, the time per simulation and a checksum of every move
//! and root visit count, so two builds can be checked to play and search alike.
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use taikyoku_engine::random::splitmix64;
use taikyoku_engine::{Game, Variant};
use taikyoku_search::evaluation::{HeuristicConfig, HeuristicEvaluator};
use taikyoku_search::mcts::{MctsConfig, MctsPlayer};

fn main() {
    let arg = |i: usize| std::env::args().nth(i);
    let games: u64 = arg(1).and_then(|a| a.parse().ok()).unwrap_or(1);
    let max_plies: u32 = arg(2).and_then(|a| a.parse().ok()).unwrap_or(400);
    let simulations: u32 = arg(3).and_then(|a| a.parse().ok()).unwrap_or(64);
    let variant = Variant::load("taikyoku", &[]).unwrap();
    let config = MctsConfig { simulations, ..MctsConfig::default() };
    let mut player = MctsPlayer::new(config, HeuristicEvaluator::new(&variant, HeuristicConfig::default()));
    let started = std::time::Instant::now();
    let (mut checksum, mut total, mut plies) = (0u64, 0u64, 0u64);
    let mut legal = Vec::with_capacity(2048);
    for seed in 1..=games {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut game = Game::new(variant.clone());
        game.max_plies = Some(max_plies);
        player.reset();
        loop {
            legal.clear();
            game.generate(&mut legal);
            if game.end_given(&legal).is_some() {
                break;
            }
            let (mv, stats) = player.choose(&mut game, &mut rng);
            total += stats.simulations as u64;
            for (m, visits) in stats.visits {
                checksum = splitmix64(checksum ^ (m.from as u64) << 32 ^ (m.to as u64) << 16 ^ visits as u64);
            }
            checksum = splitmix64(checksum ^ (mv.from as u64) << 32 ^ mv.to as u64);
            game.play(mv);
            player.advance(mv);
            plies += 1;
        }
    }
    let elapsed = started.elapsed();
    let per = elapsed.as_secs_f64() / total.max(1) as f64;
    println!(
        "{games} games, {plies} plies, {total} simulations in {elapsed:?}: {:.2}µs each, {:.0} simulations/s, checksum {checksum:016x}",
        per * 1e6,
        1.0 / per
    );
}
