//! Random self-play with writing, timed: `selfplay [GAMES] [MAX_PLIES] [THREADS] [FORMAT]`
//! (defaults 4, 3000, 1, arrow). Prints the positions written and the time per ply, for
//! callgrind (`valgrind --tool=callgrind`) and wall-clock comparisons of the recording and
//! writing path (issue 27).

use std::time::Instant;
use taikyoku_selfplay::{local, run, unattended, Format, Settings};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize, default: u64| args.get(i).map_or(default, |a| a.parse().expect("a number"));
    let format = match args.get(3).map(String::as_str) {
        Some("parquet") => Format::Parquet,
        _ => Format::Arrow,
    };
    let settings =
        Settings { games: number(0, 4), max_plies: number(1, 3000) as u32, seed: 1, format, ..Settings::default() };
    let threads = number(2, 1) as usize;
    let out = std::env::temp_dir().join(format!("taikyoku-selfplay-example-{}", std::process::id()));
    let started = Instant::now();
    let summary = unattended(|control| run(local(&out).unwrap(), &settings, Some(threads), control)).unwrap();
    let seconds = started.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&out);
    let plies = summary.total.positions;
    println!("{plies} positions, {} bytes", summary.total.bytes);
    println!("{:.3}µs per ply, {:.0} plies/s", seconds * 1e6 / plies as f64, plies as f64 / seconds);
}
