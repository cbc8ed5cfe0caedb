//! Instruction counts for docs/PERFORMANCE.md: full move generation (callgrind).
//! `generation [REPEATS] [VARIANT] [PLIES]` (10000, taikyoku, 0): generates the legal moves of the
//! position after PLIES random plies (seed 7) REPEATS times and prints the move count.
use taikyoku_engine::{Game, Variant};
fn main() {
    let arg = |i: usize| std::env::args().nth(i);
    let repeats: usize = arg(1).and_then(|a| a.parse().ok()).unwrap_or(10000);
    let variant = Variant::load(&arg(2).unwrap_or_else(|| "taikyoku".into()), &[]).unwrap();
    let plies: usize = arg(3).and_then(|a| a.parse().ok()).unwrap_or(0);
    let mut game = Game::new(variant);
    taikyoku_engine::random::random_playout(&mut game, 7, plies);
    let position = game.position.clone();
    let mut moves = Vec::with_capacity(4096);
    let started = std::time::Instant::now();
    let mut total = 0;
    for _ in 0..repeats {
        moves.clear();
        position.generate(position.side_to_move(), &mut moves);
        total += std::hint::black_box(&moves).len();
    }
    let per = started.elapsed() / repeats.max(1) as u32;
    println!("{} moves after {plies} plies; {total} in all; {per:?} per generation", moves.len());
}
