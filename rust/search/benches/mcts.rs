//! MCTS throughput with the heuristic evaluator (docs/PERFORMANCE.md): simulations per second on
//! one thread, from the opening and from a midgame position.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use taikyoku_engine::random::random_playout;
use taikyoku_engine::{Game, Variant};
use taikyoku_search::evaluation::{Evaluator, HeuristicConfig, HeuristicEvaluator, PriorMode};
use taikyoku_search::mcts::{MctsConfig, Search};

const SIMULATIONS: u32 = 400;

fn benches(c: &mut Criterion) {
    let variant = Variant::load("taikyoku", &[]).unwrap();
    let opening = Game::new(variant.clone());
    let mut midgame = Game::new(variant.clone());
    random_playout(&mut midgame, 7, 200);
    let config = MctsConfig { simulations: SIMULATIONS, ..MctsConfig::default() };
    let capture_priors = HeuristicConfig::default();
    let uniform = HeuristicConfig { priors: PriorMode::Uniform, ..HeuristicConfig::default() };

    let mut group = c.benchmark_group("mcts");
    group.sample_size(10);
    group.throughput(Throughput::Elements(SIMULATIONS as u64));
    for (name, game) in [("opening", &opening), ("midgame_200", &midgame)] {
        for (priors, heuristic) in [("capture_priors", capture_priors), ("uniform_priors", uniform)] {
            let mut evaluator = HeuristicEvaluator::new(&variant, heuristic);
            let mut game = game.clone();
            let mut seed = 0;
            group.bench_function(format!("{name}/{priors}/{SIMULATIONS}_sims"), |b| {
                b.iter(|| {
                    seed += 1;
                    let mut rng = ChaCha8Rng::seed_from_u64(seed);
                    let mut search = Search::new(config);
                    black_box(search.run(&mut game, &mut evaluator, &mut rng).simulations)
                })
            });
        }
    }
    group.finish();

    // The evaluator alone, to split a simulation's cost.
    let mut evaluator = HeuristicEvaluator::new(&variant, capture_priors);
    let mut game = midgame.clone();
    let moves = game.position.legal_moves();
    let mut priors = Vec::new();
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    c.bench_function("heuristic_evaluate/midgame_200", |b| {
        b.iter(|| black_box(evaluator.evaluate(&mut game, &moves, &mut priors, &mut rng)))
    });
}

criterion_group!(mcts, benches);
criterion_main!(mcts);
