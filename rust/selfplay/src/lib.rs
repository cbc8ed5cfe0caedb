//! # taikyoku-selfplay
//!
//! Seeded self-play (uniformly random players, or MCTS with the rules-derived heuristic
//! evaluator) written as sharded Arrow IPC or Parquet datasets (layout: datasets/README.md).
//!
//! - Every game draws its randomness from its own ChaCha8 stream, seeded from the run's seed
//!   and the game's index, and shards hold fixed ranges of game indices, so the same settings
//!   give byte-identical files whatever the thread count.
//! - A shard is written under a temporary name and renamed when complete; the manifest lists the
//!   complete shards. Re-running with the same settings resumes after the last complete shard.

pub mod network;
pub mod play;
pub mod settings;
pub mod tables;

use play::{play_game, GameRecord};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
pub use settings::{Format, MctsSettings, Players, Settings};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;
use taikyoku_engine::Variant;

/// Why a run failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// Bad settings or an output directory that cannot be used: nothing was written.
    Usage(String),
    /// The file system refused (full disk, permissions...): complete shards are kept.
    Io(String),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Usage(m) | RunError::Io(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for RunError {}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> RunError {
    RunError::Io(format!("{what} {}: {e}", path.display()))
}

/// Counts of a shard, or of a whole dataset.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Tally {
    pub games: u64,
    pub positions: u64,
    pub black_wins: u64,
    pub white_wins: u64,
    pub draws: u64,
    pub truncated: u64,
    /// Bytes on disk.
    pub bytes: u64,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.games += other.games;
        self.positions += other.positions;
        self.black_wins += other.black_wins;
        self.white_wins += other.white_wins;
        self.draws += other.draws;
        self.truncated += other.truncated;
        self.bytes += other.bytes;
    }
}

/// One complete shard, as the manifest lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u64,
    pub first_game: u64,
    #[serde(flatten)]
    pub tally: Tally,
    /// Paths relative to the dataset directory.
    pub games_file: String,
    pub positions_file: String,
}

/// `manifest.json` of a dataset.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub schema_version: u32,
    pub engine_version: String,
    pub settings: Settings,
    /// How each game's seed and random stream derive from `settings.seed`.
    pub seeding: String,
    pub shards: Vec<Shard>,
    pub complete: bool,
}

impl Manifest {
    fn new(settings: &Settings) -> Manifest {
        Manifest {
            schema_version: tables::SCHEMA_VERSION,
            engine_version: env!("CARGO_PKG_VERSION").into(),
            settings: settings.clone(),
            seeding: "game seed = splitmix64(seed ^ splitmix64(game_id)); moves from ChaCha8Rng::seed_from_u64(game seed)".into(),
            shards: Vec::new(),
            complete: false,
        }
    }

    pub fn read(dir: &Path) -> Result<Manifest, RunError> {
        let path = dir.join("manifest.json");
        let text = fs::read_to_string(&path).map_err(|e| io_error("reading", &path, e))?;
        serde_json::from_str(&text).map_err(|e| RunError::Usage(format!("{} is not a taikyoku manifest: {e}", path.display())))
    }

    /// Writes the manifest atomically (temporary file, then rename).
    fn write(&self, dir: &Path) -> Result<(), RunError> {
        let path = dir.join("manifest.json");
        let temporary = dir.join("manifest.json.tmp");
        let text = serde_json::to_string_pretty(self).expect("a manifest serializes");
        fs::write(&temporary, text + "\n").map_err(|e| io_error("writing", &temporary, e))?;
        fs::rename(&temporary, &path).map_err(|e| io_error("renaming", &temporary, e))
    }
}

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// The whole dataset, including shards from earlier runs.
    pub total: Tally,
    /// What this run generated (the rest was resumed).
    pub generated: Tally,
    pub seconds: f64,
}

/// Checks `out` and returns the manifest to continue (a new one, or the matching old one).
fn prepare(out: &Path, settings: &Settings) -> Result<Manifest, RunError> {
    if out.exists() && !out.is_dir() {
        return Err(RunError::Usage(format!("{} exists and is not a directory", out.display())));
    }
    if out.is_dir() {
        let mut entries = fs::read_dir(out).map_err(|e| io_error("listing", out, e))?;
        if entries.next().is_some() {
            if !out.join("manifest.json").is_file() {
                return Err(RunError::Usage(format!(
                    "output directory {} is not empty and holds no taikyoku dataset: choose a new or empty directory",
                    out.display()
                )));
            }
            let manifest = Manifest::read(out)?;
            if manifest.settings != *settings || manifest.schema_version != tables::SCHEMA_VERSION {
                return Err(RunError::Usage(format!(
                    "{} holds a dataset made with other settings ({}); use a new directory, or the same settings to resume",
                    out.display(),
                    serde_json::to_string(&manifest.settings).unwrap_or_default()
                )));
            }
            return Ok(manifest);
        }
    }
    Ok(Manifest::new(settings))
}

/// Writes one shard's two files, each under a temporary name renamed when complete.
fn write_shard(out: &Path, settings: &Settings, index: u64, records: &[GameRecord]) -> Result<Shard, RunError> {
    let extension = settings.format.extension();
    let games_file = format!("games/part-{index:05}.{extension}");
    let positions_file = format!("positions/part-{index:05}.{extension}");
    let mut bytes = 0;
    let usage = |e: arrow_schema::ArrowError| RunError::Usage(format!("building shard {index}: {e}"));
    let positions: Vec<_> = records.iter().map(tables::positions_batch).collect::<Result<_, _>>().map_err(usage)?;
    let games = vec![tables::games_batch(records, &settings.variant, settings.players.name()).map_err(usage)?];
    // Positions first, games last: a shard counts as written once its games file exists.
    for (relative, schema, batches) in
        [(&positions_file, tables::positions_schema(), &positions), (&games_file, tables::games_schema(), &games)]
    {
        let path = out.join(relative);
        let temporary = out.join(format!("{relative}.tmp"));
        if let Err(e) = tables::write_file(&temporary, settings.format, schema, batches) {
            let _ = fs::remove_file(&temporary);
            return Err(RunError::Io(e));
        }
        if let Err(e) = fs::rename(&temporary, &path) {
            let _ = fs::remove_file(&temporary);
            return Err(io_error("renaming", &temporary, e));
        }
        bytes += fs::metadata(&path).map_err(|e| io_error("reading", &path, e))?.len();
    }
    let count = |result: Option<&str>| records.iter().filter(|r| r.result == result).count() as u64;
    let tally = Tally {
        games: records.len() as u64,
        positions: records.iter().map(|r| r.positions.len() as u64).sum(),
        black_wins: count(Some("black")),
        white_wins: count(Some("white")),
        draws: count(Some("draw")),
        truncated: count(None),
        bytes,
    };
    Ok(Shard { index, first_game: index * settings.games_per_shard, tally, games_file, positions_file })
}

/// Generates (or resumes) the dataset of `settings` in `out`. `progress` is called from the
/// worker threads with each finished game.
pub fn run(
    out: &Path,
    settings: &Settings,
    threads: Option<usize>,
    progress: &(dyn Fn(&GameRecord) + Sync),
) -> Result<Summary, RunError> {
    let pool = thread_pool(threads)?;
    let variant = Variant::load(&settings.variant, &settings.options).map_err(|e| RunError::Usage(e.to_string()))?;
    run_with(out, settings, |games| {
        Ok(pool.install(|| {
            games
                .into_par_iter()
                .map(|id| {
                    let record = play_game(&variant, settings, id);
                    progress(&record);
                    record
                })
                .collect()
        }))
    })
}

/// A rayon pool of `threads` workers (rayon's default when `None`).
pub fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool, RunError> {
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(threads) = threads {
        if threads == 0 {
            return Err(RunError::Usage("threads must be at least 1".into()));
        }
        pool = pool.num_threads(threads);
    }
    pool.build().map_err(|e| RunError::Usage(format!("cannot start threads: {e}")))
}

/// `run` with another source of games: `play(range)` returns the records of the games with
/// those indices, in index order (used for network-guided self-play).
pub fn run_with(
    out: &Path,
    settings: &Settings,
    mut play: impl FnMut(std::ops::Range<u64>) -> Result<Vec<GameRecord>, RunError>,
) -> Result<Summary, RunError> {
    settings.validate().map_err(RunError::Usage)?;
    Variant::load(&settings.variant, &settings.options).map_err(|e| RunError::Usage(e.to_string()))?;
    let mut manifest = prepare(out, settings)?;
    for sub in ["games", "positions"] {
        let dir = out.join(sub);
        fs::create_dir_all(&dir).map_err(|e| io_error("creating", &dir, e))?;
        // Leftovers of an interrupted run.
        for entry in fs::read_dir(&dir).map_err(|e| io_error("listing", &dir, e))?.flatten() {
            if entry.path().extension().is_some_and(|x| x == "tmp") {
                let _ = fs::remove_file(entry.path());
            }
        }
    }
    manifest.shards.retain(|s| out.join(&s.games_file).is_file() && out.join(&s.positions_file).is_file());
    manifest.complete = false;
    manifest.write(out)?;
    let started = Instant::now();
    let mut summary = Summary::default();
    for index in 0..settings.shard_count() {
        if manifest.shards.iter().any(|s| s.index == index) {
            continue;
        }
        let first = index * settings.games_per_shard;
        let last = (first + settings.games_per_shard).min(settings.games);
        let mut records = play(first..last)?;
        records.sort_by_key(|r| r.game_id);
        let shard = write_shard(out, settings, index, &records)?;
        summary.generated.add(&shard.tally);
        manifest.shards.push(shard);
        manifest.shards.sort_by_key(|s| s.index);
        manifest.write(out)?;
    }
    manifest.complete = true;
    manifest.write(out)?;
    for shard in &manifest.shards {
        summary.total.add(&shard.tally);
    }
    summary.seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

/// The dataset files of `out` (for tools that list them).
pub fn shard_files(out: &Path) -> Result<Vec<PathBuf>, RunError> {
    let manifest = Manifest::read(out)?;
    Ok(manifest.shards.iter().flat_map(|s| [out.join(&s.games_file), out.join(&s.positions_file)]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("taikyoku-selfplay-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    fn file_bytes(dir: &Path) -> Vec<(String, Vec<u8>)> {
        shard_files(dir).unwrap().into_iter().map(|p| (p.display().to_string(), fs::read(p).unwrap())).collect()
    }

    #[test]
    fn same_bytes_whatever_the_thread_count_and_resume() {
        for format in [Format::Arrow, Format::Parquet] {
            let settings = Settings { games: 5, games_per_shard: 2, max_plies: 40, format, ..Settings::default() };
            let (one, two) = (temp_dir("one"), temp_dir("two"));
            let a = run(&one, &settings, Some(1), &|_| {}).unwrap();
            let b = run(&two, &settings, Some(2), &|_| {}).unwrap();
            assert_eq!((a.total.games, a.total.positions, a.total.truncated), (5, 200, 5));
            assert_eq!(b.total.games, 5);
            let strip = |v: Vec<(String, Vec<u8>)>, dir: &Path| {
                v.into_iter().map(|(p, b)| (p.replace(&dir.display().to_string(), ""), b)).collect::<Vec<_>>()
            };
            assert_eq!(strip(file_bytes(&one), &one), strip(file_bytes(&two), &two));
            // Resume: drop the last shard; a rerun regenerates only it, identically.
            let before = file_bytes(&one);
            fs::remove_file(one.join(format!("games/part-00002.{}", format.extension()))).unwrap();
            let again = run(&one, &settings, Some(2), &|_| {}).unwrap();
            assert_eq!((again.generated.games, again.total.games), (1, 5));
            assert_eq!(file_bytes(&one), before);
            // Other settings in the same directory: refused, nothing touched.
            let other = Settings { seed: 1, ..settings.clone() };
            assert!(matches!(run(&one, &other, None, &|_| {}), Err(RunError::Usage(_))));
            assert_eq!(file_bytes(&one), before);
            let _ = fs::remove_dir_all(&one);
            let _ = fs::remove_dir_all(&two);
        }
    }

    #[test]
    fn a_foreign_non_empty_directory_is_refused() {
        let dir = temp_dir("foreign");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("notes.txt"), "mine").unwrap();
        let error = run(&dir, &Settings::default(), None, &|_| {}).unwrap_err();
        assert!(error.to_string().contains("not empty"), "{error}");
        assert_eq!(fs::read_to_string(dir.join("notes.txt")).unwrap(), "mine");
        let _ = fs::remove_dir_all(&dir);
    }
}
