//! Move generation, make/undo and random playout benchmarks (docs/PERFORMANCE.md).

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use std::sync::Arc;
use taikyoku_engine::random::random_playout;
use taikyoku_engine::{Game, Position, Variant};

/// A midgame position: `plies` random plies from the opening.
fn midgame(plies: usize, seed: u64) -> Position {
    let variant = Variant::load("taikyoku", &[]).unwrap();
    let mut game = Game::new(variant);
    random_playout(&mut game, seed, plies);
    game.position
}

fn benches(c: &mut Criterion) {
    let variant = Variant::load("taikyoku", &[]).unwrap();
    let opening = Position::initial(variant.clone());
    let mut moves = Vec::with_capacity(4096);
    c.bench_function("legal_moves/opening", |b| {
        b.iter(|| {
            moves.clear();
            black_box(&opening).generate(opening.side_to_move(), &mut moves);
            black_box(moves.len())
        })
    });
    for plies in [200usize, 1000] {
        let pos = midgame(plies, 7);
        c.bench_function(&format!("legal_moves/midgame_{plies}"), |b| {
            b.iter(|| {
                moves.clear();
                black_box(&pos).generate(pos.side_to_move(), &mut moves);
                black_box(moves.len())
            })
        });
    }
    let mut pos = midgame(200, 11);
    let legal = pos.legal_moves();
    c.bench_function("make_unmake/midgame_200", |b| {
        let mut i = 0;
        b.iter(|| {
            let mv = legal[i % legal.len()];
            i += 1;
            pos.make(mv);
            pos.unmake();
        })
    });
    let mut group = c.benchmark_group("random_playout");
    group.sample_size(10);
    group.bench_function("1000_plies", playout_1000(&variant));
    group.finish();
    variants(c);
}

/// A random game of up to 1000 plies from the opening (a new seed each iteration).
fn playout_1000(variant: &Arc<Variant>) -> impl FnMut(&mut criterion::Bencher) + '_ {
    let mut seed = 0;
    move |b| {
        b.iter(|| {
            let mut game = Game::new(variant.clone());
            seed += 1;
            black_box(random_playout(&mut game, seed, 1000).plies)
        })
    }
}

/// Every variant side by side: opening generation and 1000 random plies (issue 11).
fn variants(c: &mut Criterion) {
    let mut group = c.benchmark_group("variants");
    group.sample_size(10);
    let mut moves = Vec::with_capacity(4096);
    for name in taikyoku_engine::variant_names() {
        let variant = Variant::load(name, &[]).unwrap();
        let opening = Position::initial(variant.clone());
        group.bench_function(format!("legal_moves_opening/{name}"), |b| {
            b.iter(|| {
                moves.clear();
                black_box(&opening).generate(opening.side_to_move(), &mut moves);
                black_box(moves.len())
            })
        });
        group.bench_function(format!("random_playout_1000/{name}"), playout_1000(&variant));
    }
    group.finish();
}

criterion_group!(engine, benches);
criterion_main!(engine);
