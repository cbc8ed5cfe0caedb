//! The hidden cost of the incremental move state (issue 13, docs/PERFORMANCE.md): its memory
//! per game, and what it adds to making and taking back a move.
//! `move_state_cost [VARIANT] [PLIES]` (every variant, 1000): after PLIES random plies (seed 7),
//! every legal move is made and taken back by `Position::make`/`unmake`, alone and with the
//! state following (`MoveState::follow_make`, `prepare_unmake`, `follow_unmake`, as
//! `Game::play`/`undo` do); times per move are medians of 7 rounds. Also the legal moves of
//! that position: full generation (`Position::legal_moves`) against reading them from the
//! state (`Game::legal_moves` with the state tracked).
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;
use taikyoku_engine::{variant_names, Game, MoveState, Variant};

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    xs[xs.len() / 2]
}

fn main() {
    let names: Vec<String> = match std::env::args().nth(1) {
        Some(name) => vec![name],
        None => variant_names().into_iter().map(String::from).collect(),
    };
    let plies: usize = std::env::args().nth(2).and_then(|a| a.parse().ok()).unwrap_or(1000);
    for name in names {
        let variant = Variant::load(&name, &[]).unwrap();
        let opening = MoveState::new(&Game::new(variant.clone()).position);
        let mut game = Game::new(variant.clone());
        game.track_moves(true);
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut scratch = Vec::new();
        for _ in 0..plies {
            match game.choose_move(|n| rng.gen_range(0..n), &mut scratch) {
                Some(mv) if game.recorded_end().is_none() => game.play(mv),
                _ => break,
            }
        }
        let mut state = game.move_state().expect("a synced state after a move").clone();
        let moves = game.legal_moves();
        let mut position = game.position.clone();
        let (mut bare, mut kept) = (Vec::new(), Vec::new());
        for _ in 0..7 {
            let start = Instant::now();
            for &mv in &moves {
                position.make(mv);
                position.unmake();
            }
            bare.push(start.elapsed().as_nanos() as f64 / moves.len() as f64);
            let start = Instant::now();
            for &mv in &moves {
                position.make(mv);
                state.follow_make(&position);
                state.prepare_unmake(&position);
                position.unmake();
                state.follow_unmake(&position);
            }
            kept.push(start.elapsed().as_nanos() as f64 / moves.len() as f64);
        }
        let (mut full, mut read) = (Vec::new(), Vec::new());
        for _ in 0..7 {
            let start = Instant::now();
            for _ in 0..100 {
                std::hint::black_box(game.position.legal_moves());
            }
            full.push(start.elapsed().as_nanos() as f64 / 100.0);
            let start = Instant::now();
            for _ in 0..100 {
                std::hint::black_box(game.legal_moves());
            }
            read.push(start.elapsed().as_nanos() as f64 / 100.0);
        }
        println!(
            "{name}: legal moves {:.1} µs by full generation, {:.1} µs from the state",
            median(full) / 1000.0,
            median(read) / 1000.0
        );
        println!(
            "{name}: state {} KB at the opening, {} KB after {} plies (+ {} bytes inline); make+unmake {:.0} ns bare, {:.0} ns with the state following ({} moves)",
            opening.heap_bytes() / 1024,
            state.heap_bytes() / 1024,
            game.plies(),
            std::mem::size_of::<MoveState>(),
            median(bare),
            median(kept),
            moves.len()
        );
    }
}
