//! Instruction counts for docs/PERFORMANCE.md: MCTS with the heuristic evaluator (callgrind).
//! `search [SEARCHES] [PLIES] [capture|uniform]` (10, 200, capture): runs SEARCHES searches of
//! 400 simulations (seeds 1, 2, ...) from the position after PLIES random plies (seed 7), and
//! prints a checksum of the root visits, so two builds can be checked to search alike.
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use taikyoku_engine::random::{random_playout, splitmix64};
use taikyoku_engine::{Game, Variant};
use taikyoku_search::evaluation::{HeuristicConfig, HeuristicEvaluator, PriorMode};
use taikyoku_search::mcts::{MctsConfig, Search};

fn main() {
    let arg = |i: usize| std::env::args().nth(i);
    let searches: u64 = arg(1).and_then(|a| a.parse().ok()).unwrap_or(10);
    let plies: usize = arg(2).and_then(|a| a.parse().ok()).unwrap_or(200);
    let priors = match arg(3).as_deref() {
        Some("uniform") => PriorMode::Uniform,
        _ => HeuristicConfig::default().priors,
    };
    let variant = Variant::load("taikyoku", &[]).unwrap();
    let mut game = Game::new(variant.clone());
    random_playout(&mut game, 7, plies);
    let mut game = Game::from_position(game.position.clone());
    let mut evaluator = HeuristicEvaluator::new(&variant, HeuristicConfig { priors, ..HeuristicConfig::default() });
    let config = MctsConfig { simulations: 400, ..MctsConfig::default() };
    let started = std::time::Instant::now();
    let mut checksum = 0u64;
    for seed in 1..=searches {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let stats = Search::new(config).run(&mut game, &mut evaluator, &mut rng);
        for (mv, visits) in stats.visits {
            checksum = splitmix64(checksum ^ (mv.from as u64) << 32 ^ (mv.to as u64) << 16 ^ visits as u64);
        }
    }
    let per = started.elapsed() / searches.max(1) as u32;
    println!("{searches} searches of 400 simulations after {plies} plies: {per:?} each, checksum {checksum:016x}");
}
