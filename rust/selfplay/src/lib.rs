#![warn(missing_docs)]
// The evaluator's batch types (observations, CSR legal actions, priors and values, with their
// errors) are spelled out where they are passed.
#![allow(clippy::type_complexity)]
//! # taikyoku-selfplay
//!
//! Seeded self-play (uniformly random players, MCTS with the rules-derived heuristic evaluator,
//! or MCTS guided by an external network) written as sharded Arrow IPC or Parquet datasets
//! (layout: datasets/README.md).
//!
//! - Every game draws its randomness from its own ChaCha8 stream, seeded from the run's seed
//!   and the game's index, and shards hold fixed ranges of game indices, so the same settings
//!   give byte-identical files whatever the thread count.
//! - Games are played concurrently, handed out in order; each shard's positions are encoded
//!   batch by batch as its games end, and the shard is written as soon as its last game is in
//!   (memory holds encoded shards in progress, not their games), under a temporary name
//!   renamed when complete; the manifest lists the complete shards with the size
//!   and CRC-32 of their files. Re-running with the same settings checks them, regenerates
//!   any that are missing or damaged, and plays only what is left.
//! - A run can be stopped (Ctrl-C in Python): games in progress are dropped, complete shards
//!   kept, and a rerun resumes exactly.

pub mod boards;
pub mod dataset;
pub mod network;
pub mod play;
pub mod settings;
pub mod store;
pub mod tables;

pub use dataset::{check_dataset, DatasetCheck, FileCheck, Manifest, Shard, ShardBuilder, Writer};
use play::{play_game, GameRecord};
pub use settings::{Format, MctsSettings, Players, Settings, SettingsError};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
pub use store::{LocalStore, Store, WriterLock, LOCK_FILE};
pub use tables::{Tally, ENGINE_VERSION};
use taikyoku_engine::Variant;

/// Why a run failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// Bad settings or an output directory that cannot be used: nothing was written.
    Usage(String),
    /// The file system refused (full disk, permissions...): complete shards are kept.
    Io(IoFailure),
    /// Another writer holds the dataset's lock (`store::WriterLock`); carries who it is. Nothing
    /// was written.
    Busy(String),
    /// The caller asked the run to stop: complete shards are kept, a rerun resumes.
    Interrupted,
}

/// A failure of the file system: what was being done, to which path, and the operating
/// system's error number and text where there is one (`errno` is `None` for storage that is
/// not a local file system, whose `strerror` is then its own message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoFailure {
    /// What was being done: `"writing"`, `"reading"`, `"creating"`...
    pub action: &'static str,
    /// The path as the user names it.
    pub path: String,
    /// The OS error number (`ENOSPC`...).
    pub errno: Option<i32>,
    /// The OS error's text, without Rust's ` (os error N)` suffix.
    pub strerror: String,
}

impl IoFailure {
    /// The failure of `action` on `path` with `error`.
    pub fn new(action: &'static str, path: String, error: &std::io::Error) -> IoFailure {
        let text = error.to_string();
        let strerror = match error.raw_os_error() {
            Some(n) => text.strip_suffix(&format!(" (os error {n})")).unwrap_or(&text).to_string(),
            None => text,
        };
        IoFailure { action, path, errno: error.raw_os_error(), strerror }
    }
}

impl std::fmt::Display for IoFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.action, self.path, self.strerror)
    }
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RunError::Usage(m) | RunError::Busy(m) => f.write_str(m),
            RunError::Io(failure) => failure.fmt(f),
            RunError::Interrupted => f.write_str("self-play interrupted; complete shards are kept"),
        }
    }
}

impl std::error::Error for RunError {}

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// The whole dataset, including shards from earlier runs.
    pub total: Tally,
    /// What this run generated (the rest was resumed).
    pub generated: Tally,
    /// Shards of an earlier run found missing or damaged and generated again, with why.
    pub repaired: Vec<String>,
    /// Wall-clock time of this run, in seconds.
    pub seconds: f64,
}

/// How a run is watched from outside: a progress report per finished game, and a flag that
/// stops it.
#[derive(Clone, Copy)]
pub struct Control<'a> {
    /// Called once per finished game, possibly from several worker threads at once.
    pub progress: &'a (dyn Fn(&GameRecord) + Sync),
    /// Set (by another thread) to stop the run as soon as possible.
    pub stop: &'a AtomicBool,
}

impl Control<'_> {
    /// Whether `stop` is set.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// A `Control` that reports nothing and never stops (tests, benchmarks).
pub fn unattended<R>(run: impl FnOnce(Control) -> R) -> R {
    let stop = AtomicBool::new(false);
    run(Control { progress: &|_| {}, stop: &stop })
}

/// The dataset directory `out` of this machine (an empty path is refused: name a directory).
pub fn local(out: &Path) -> Result<Arc<dyn Store>, RunError> {
    if out.as_os_str().is_empty() {
        return Err(RunError::Usage("the output directory is an empty path: name a directory".into()));
    }
    Ok(Arc::new(LocalStore::new(out)))
}

/// Generates (or resumes) the dataset of `settings` in `store`, with random or heuristic-MCTS
/// players, on `threads` workers (rayon's default when `None`). Shards are played at once and
/// written as they complete, so every thread stays busy whatever `games_per_shard` is.
pub fn run(
    store: Arc<dyn Store>,
    settings: &Settings,
    threads: Option<usize>,
    control: Control,
) -> Result<Summary, RunError> {
    if settings.network.is_some() {
        return Err(RunError::Usage("an evaluator-guided run needs network::run".into()));
    }
    let pool = thread_pool(threads)?;
    let variant = load_variant(settings)?;
    let started = Instant::now();
    let (writer, missing) = Writer::open(store, settings)?;
    let result = pool.install(|| play_shards(&variant, settings, &missing, control, &|shard| writer.commit(shard)));
    match result {
        Ok(()) => writer.finish(started),
        Err(e) => {
            writer.abandon();
            Err(e)
        }
    }
}

/// Plays shards `indices` of a run and writes their files into `store`, without the manifest:
/// the part of a run one machine of many does (the driver lists the returned entries with
/// `Writer::record`). Files already there are overwritten with the same bytes.
pub fn write_shards(
    store: &dyn Store,
    settings: &Settings,
    indices: &[u64],
    threads: Option<usize>,
    control: Control,
) -> Result<Vec<Shard>, RunError> {
    if let Some(&bad) = indices.iter().find(|&&i| i >= settings.shard_count()) {
        return Err(RunError::Usage(format!("shard {bad} is not in a run of {} shards", settings.shard_count())));
    }
    let pool = thread_pool(threads)?;
    let variant = load_variant(settings)?;
    let shards = std::sync::Mutex::new(Vec::new());
    pool.install(|| {
        play_shards(&variant, settings, indices, control, &|shard| {
            let shard = shard.finish(store)?;
            shards.lock().unwrap_or_else(|e| e.into_inner()).push(shard);
            Ok(())
        })
    })?;
    let mut shards = shards.into_inner().unwrap_or_else(|e| e.into_inner());
    shards.sort_by_key(|s| s.index);
    Ok(shards)
}

/// Plays the games of shards `indices` on every thread of the current rayon pool and hands
/// each shard to `done` as soon as its last game is in. The first failure stops the others.
///
/// Games are handed out one at a time in order, shard after shard, to whichever thread is
/// free, so they end nearly in order: each is added to its shard (`ShardBuilder`, which
/// encodes the positions batch by batch) by the thread that played it, and a complete shard
/// is written by the thread that completed it, while the others play on. Memory holds the
/// shards in progress, encoded, not their games.
fn play_shards(
    variant: &Arc<Variant>,
    settings: &Settings,
    indices: &[u64],
    control: Control,
    done: &(dyn Fn(&ShardBuilder) -> Result<(), RunError> + Sync),
) -> Result<(), RunError> {
    // The first failure; the other threads then stop too.
    let failure: Mutex<Option<RunError>> = Mutex::new(None);
    let failed = AtomicBool::new(false);
    let halted = || control.stopped() || failed.load(Ordering::Relaxed);
    let mut queue =
        indices.iter().enumerate().flat_map(|(place, &index)| settings.shard_games(index).map(move |id| (place, id)));
    let queue = Mutex::new(&mut queue);
    // Each shard in progress, made when its first game ends and dropped once written.
    let shards: Vec<Mutex<Option<Arc<ShardBuilder>>>> = indices.iter().map(|_| Mutex::new(None)).collect();
    let play = || -> Result<(), RunError> {
        loop {
            if halted() {
                return Err(RunError::Interrupted);
            }
            let Some((place, id)) = lock(&queue).next() else { return Ok(()) };
            let record = play_game(variant, settings, id, &halted).ok_or(RunError::Interrupted)?;
            (control.progress)(&record);
            let shard = {
                let mut slot = lock(&shards[place]);
                match slot.as_ref() {
                    Some(shard) => shard.clone(),
                    None => slot.insert(Arc::new(ShardBuilder::new(settings, indices[place])?)).clone(),
                }
            };
            // Outside the slot's lock: the builder lets other threads add their games while
            // this one encodes.
            if shard.add(record)? {
                done(&shard)?;
                lock(&shards[place]).take();
            }
        }
    };
    let interrupted = AtomicBool::new(false);
    rayon::scope(|scope| {
        for _ in 0..rayon::current_num_threads() {
            scope.spawn(|_| match play() {
                Ok(()) => {}
                Err(RunError::Interrupted) => interrupted.store(true, Ordering::Relaxed),
                Err(e) => {
                    failed.store(true, Ordering::Relaxed);
                    lock(&failure).get_or_insert(e);
                }
            })
        }
    });
    // Threads that stopped because another failed report `Interrupted`: the failure is the news.
    match failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None if interrupted.into_inner() => Err(RunError::Interrupted),
        None => Ok(()),
    }
}

/// Locks `mutex`, also after a panic elsewhere (the data stays consistent: each is a queue
/// or a shard that is dropped on failure).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

fn load_variant(settings: &Settings) -> Result<std::sync::Arc<Variant>, RunError> {
    settings.validate().map_err(|e| RunError::Usage(e.to_string()))?;
    Variant::load(&settings.variant, &settings.options).map_err(|e| RunError::Usage(e.to_string()))
}

/// A rayon pool of `threads` workers (rayon's default when `None`).
pub fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool, RunError> {
    let mut pool = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("taikyoku-selfplay-{i}"));
    if let Some(threads) = threads {
        if threads == 0 {
            return Err(RunError::Usage("threads must be at least 1".into()));
        }
        pool = pool.num_threads(threads);
    }
    pool.build().map_err(|e| RunError::Usage(format!("cannot start threads: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::path::PathBuf;
    use taikyoku_engine::rl::actions::GRID_SQUARES;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("taikyoku-selfplay-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    fn file_bytes(dir: &Path) -> Vec<(String, Vec<u8>)> {
        let mut names: Vec<PathBuf> = ["games", "positions"]
            .iter()
            .flat_map(|sub| fs::read_dir(dir.join(sub)).unwrap().map(|e| e.unwrap().path()))
            .collect();
        names.push(dir.join("manifest.json"));
        names.push(dir.join(dataset::CARD));
        names.sort();
        names.into_iter().map(|p| (p.strip_prefix(dir).unwrap().display().to_string(), fs::read(&p).unwrap())).collect()
    }

    fn run_quietly(out: &Path, settings: &Settings, threads: Option<usize>) -> Result<Summary, RunError> {
        unattended(|control| run(local(out)?, settings, threads, control))
    }

    #[test]
    fn same_bytes_whatever_the_thread_count_and_resume() {
        for format in [Format::Arrow, Format::Parquet] {
            let settings = Settings { games: 5, games_per_shard: 2, max_plies: 40, format, ..Settings::default() };
            let (one, two) = (temp_dir("one"), temp_dir("two"));
            let a = run_quietly(&one, &settings, Some(1)).unwrap();
            let b = run_quietly(&two, &settings, Some(2)).unwrap();
            assert_eq!((a.total.games, a.total.positions, a.total.truncated), (5, 200, 5));
            assert_eq!(b.total.games, 5);
            let before = file_bytes(&one);
            assert_eq!(before, file_bytes(&two));
            // Resume: drop the last shard; a rerun regenerates only it, identically.
            fs::remove_file(one.join(format!("games/part-00002.{}", format.extension()))).unwrap();
            let again = run_quietly(&one, &settings, Some(2)).unwrap();
            assert_eq!((again.generated.games, again.total.games), (1, 5));
            assert_eq!(again.repaired.len(), 1, "{:?}", again.repaired);
            assert_eq!(file_bytes(&one), before);
            // Other settings in the same directory: refused, nothing touched.
            let other = Settings { seed: 1, ..settings.clone() };
            assert!(matches!(run_quietly(&one, &other, None), Err(RunError::Usage(_))));
            assert_eq!(file_bytes(&one), before);
            let _ = fs::remove_dir_all(&one);
            let _ = fs::remove_dir_all(&two);
        }
    }

    #[test]
    fn damaged_and_duplicated_shards_are_regenerated() {
        let settings = Settings { games: 4, games_per_shard: 1, max_plies: 30, ..Settings::default() };
        let dir = temp_dir("damaged");
        run_quietly(&dir, &settings, Some(2)).unwrap();
        let before = file_bytes(&dir);
        // A flipped bit in one file, a truncated other file, a duplicated entry.
        let flip = dir.join("positions/part-00001.arrow");
        let mut bytes = fs::read(&flip).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0x10;
        fs::write(&flip, bytes).unwrap();
        let cut = dir.join("games/part-00003.arrow");
        let bytes = fs::read(&cut).unwrap();
        fs::write(&cut, &bytes[..bytes.len() - 7]).unwrap();
        let mut manifest = Manifest::read(&LocalStore::new(&dir)).unwrap();
        manifest.shards.push(manifest.shards[0].clone());
        manifest.shards[2].tally.black_wins += 1;
        fs::write(dir.join("manifest.json"), serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
        let again = run_quietly(&dir, &settings, Some(1)).unwrap();
        assert_eq!(again.generated.games, 3, "{:?}", again.repaired);
        assert_eq!(again.repaired.len(), 4, "{:?}", again.repaired);
        assert_eq!(file_bytes(&dir), before);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_stopped_run_keeps_whole_shards_and_resumes_exactly() {
        let settings = Settings { games: 6, games_per_shard: 2, max_plies: 50, ..Settings::default() };
        let (whole, stopped) = (temp_dir("whole"), temp_dir("stopped"));
        run_quietly(&whole, &settings, Some(2)).unwrap();
        // Stop after the third finished game: at most one shard can be complete.
        let stop = AtomicBool::new(false);
        let finished = std::sync::atomic::AtomicUsize::new(0);
        let progress = |_: &GameRecord| {
            if finished.fetch_add(1, Ordering::SeqCst) + 1 >= 3 {
                stop.store(true, Ordering::SeqCst);
            }
        };
        let result = run(local(&stopped).unwrap(), &settings, Some(1), Control { progress: &progress, stop: &stop });
        assert_eq!(result, Err(RunError::Interrupted));
        let manifest = Manifest::read(&LocalStore::new(&stopped)).unwrap();
        assert!(!manifest.complete && manifest.shards.len() <= 1, "{:?}", manifest.shards);
        assert!(fs::read_dir(stopped.join("games")).unwrap().all(|e| !e
            .unwrap()
            .path()
            .display()
            .to_string()
            .ends_with(".tmp")));
        run_quietly(&stopped, &settings, Some(2)).unwrap();
        assert_eq!(file_bytes(&stopped), file_bytes(&whole));
        let _ = fs::remove_dir_all(&whole);
        let _ = fs::remove_dir_all(&stopped);
    }

    #[test]
    fn a_failed_first_run_leaves_nothing() {
        let dir = temp_dir("nothing");
        let stop = AtomicBool::new(true);
        let settings = Settings { games: 2, max_plies: 10, ..Settings::default() };
        let nested = dir.join("a").join("b");
        assert_eq!(
            run(local(&nested).unwrap(), &settings, Some(1), Control { progress: &|_| {}, stop: &stop }),
            Err(RunError::Interrupted)
        );
        assert!(!dir.exists(), "the run created {} and must remove it", dir.display());
        fs::create_dir_all(&dir).unwrap();
        assert_eq!(
            run(local(&dir).unwrap(), &settings, Some(1), Control { progress: &|_| {}, stop: &stop }),
            Err(RunError::Interrupted)
        );
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0, "an empty directory stays empty");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn shards_written_apart_then_recorded_equal_a_whole_run() {
        let settings = Settings { games: 5, games_per_shard: 2, max_plies: 30, ..Settings::default() };
        let (whole, apart) = (temp_dir("whole-run"), temp_dir("apart"));
        run_quietly(&whole, &settings, Some(2)).unwrap();
        // A driver opens the dataset; two "machines" write shards {0, 2} and {1}; the driver
        // records their entries as they come back, in any order.
        let store = local(&apart).unwrap();
        let (writer, missing) = Writer::open(store.clone(), &settings).unwrap();
        assert_eq!(missing, vec![0, 1, 2]);
        let second = unattended(|c| write_shards(store.as_ref(), &settings, &[1], Some(1), c)).unwrap();
        let first = unattended(|c| write_shards(store.as_ref(), &settings, &[0, 2], Some(2), c)).unwrap();
        for shard in second.into_iter().chain(first) {
            writer.record(shard).unwrap();
        }
        writer.finish(std::time::Instant::now()).unwrap();
        assert_eq!(file_bytes(&apart), file_bytes(&whole));
        assert!(unattended(|c| write_shards(store.as_ref(), &settings, &[3], None, c)).is_err());
        let _ = fs::remove_dir_all(&whole);
        let _ = fs::remove_dir_all(&apart);
    }

    #[test]
    fn files_describe_themselves_and_the_card_names_the_tables() {
        let settings = Settings { games: 3, games_per_shard: 2, max_plies: 10, ..Settings::default() };
        let dir = temp_dir("card");
        run_quietly(&dir, &settings, Some(2)).unwrap();
        let settings_json = serde_json::to_string(&settings).unwrap();
        for table in ["games", "positions"] {
            let file = fs::File::open(dir.join(format!("{table}/part-00001.arrow"))).unwrap();
            let reader = arrow_ipc::reader::FileReader::try_new(file, None).unwrap();
            let schema = reader.schema();
            let metadata = schema.metadata();
            assert_eq!(metadata.get(tables::keys::TABLE).map(String::as_str), Some(table));
            assert_eq!(metadata.get(tables::keys::SETTINGS), Some(&settings_json));
            assert_eq!(metadata.get(tables::keys::SCHEMA_VERSION), Some(&tables::SCHEMA_VERSION.to_string()));
            assert_eq!(metadata.get(tables::keys::ENGINE_VERSION).map(String::as_str), Some(tables::ENGINE_VERSION));
            assert!(schema
                .fields()
                .iter()
                .all(|f| f.metadata().get(tables::DESCRIPTION).is_some_and(|d| !d.is_empty())));
        }
        let card = fs::read_to_string(dir.join(dataset::CARD)).unwrap();
        assert!(card.starts_with("---\n") && card.contains("configs:\n- config_name: positions\n"), "{card}");
        assert!(
            card.contains("path: \"positions/*.arrow\"\n  default: true") && card.contains("path: \"games/*.arrow\"")
        );
        assert!(card.contains("| games | 3 |") && card.contains("| positions | 30 |"), "{card}");
        let _ = fs::remove_dir_all(&dir);
    }

    /// Every record batch of an Arrow file, or every row group of a Parquet file, as batches.
    fn file_batches(path: &Path, format: Format) -> Vec<arrow_array::RecordBatch> {
        let data = fs::read(path).unwrap();
        match format {
            Format::Arrow => arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(data), None)
                .unwrap()
                .map(|b| b.unwrap())
                .collect(),
            Format::Parquet => {
                use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder as Builder;
                let data = bytes::Bytes::from(data);
                let groups = Builder::try_new(data.clone()).unwrap().metadata().num_row_groups();
                // Each row group alone, read whole: one batch per row group.
                (0..groups)
                    .map(|g| {
                        let reader = Builder::try_new(data.clone())
                            .unwrap()
                            .with_row_groups(vec![g])
                            .with_batch_size(1 << 20)
                            .build()
                            .unwrap();
                        let mut batches: Vec<_> = reader.map(|b| b.unwrap()).collect();
                        assert_eq!(batches.len(), 1);
                        batches.remove(0)
                    })
                    .collect()
            }
        }
    }

    #[test]
    fn files_are_cut_into_batches_of_bounded_rows_across_games() {
        for format in [Format::Arrow, Format::Parquet] {
            // 3 games of 1,500 plies in one shard: 4,500 positions, batches of 4,096 and 404 rows
            // that cross game boundaries (before, one batch per game).
            let settings = Settings { games: 3, games_per_shard: 3, max_plies: 1_500, format, ..Settings::default() };
            let dir = temp_dir(&format!("batches-{}", format.extension()));
            let summary = run_quietly(&dir, &settings, Some(2)).unwrap();
            assert_eq!(summary.total.positions, 4_500);
            let positions = file_batches(&dir.join(format!("positions/part-00000.{}", format.extension())), format);
            assert_eq!(
                positions.iter().map(|b| b.num_rows()).collect::<Vec<_>>(),
                vec![tables::ROWS_PER_BATCH, 4_500 - tables::ROWS_PER_BATCH]
            );
            let games = file_batches(&dir.join(format!("games/part-00000.{}", format.extension())), format);
            assert_eq!(games.iter().map(|b| b.num_rows()).collect::<Vec<_>>(), vec![3]);
            // The rows are in game order, then ply order.
            let ids: Vec<u64> = positions
                .iter()
                .flat_map(|b| {
                    b.column_by_name("game_id")
                        .unwrap()
                        .as_any()
                        .downcast_ref::<arrow_array::UInt64Array>()
                        .unwrap()
                        .values()
                        .to_vec()
                })
                .collect();
            assert!(ids.windows(2).all(|w| w[0] <= w[1]) && ids[0] == 0 && ids[4_499] == 2);
            // Built batch by batch as the games ended, the file is the shard encoded at once.
            let variant = Variant::load("taikyoku", &[]).unwrap();
            let records: Vec<_> = (0..3).map(|id| play_game(&variant, &settings, id, &|| false).unwrap()).collect();
            let boards: Vec<_> = records.iter().map(|r| r.boards.boards()).collect();
            let rows: Vec<_> = records
                .iter()
                .zip(&boards)
                .flat_map(|(r, b)| {
                    r.positions.iter().zip(b.chunks(GRID_SQUARES)).map(move |(p, board)| ((r, p), board))
                })
                .collect();
            let batches: Vec<_> = rows
                .chunks(tables::ROWS_PER_BATCH)
                .map(|c| {
                    let (rows, boards): (Vec<_>, Vec<_>) = c.iter().copied().unzip();
                    tables::positions_batch(&rows, boards.concat(), false, false).unwrap()
                })
                .collect();
            let whole = tables::encode(format, tables::file_schema("positions", &settings).unwrap(), &batches).unwrap();
            assert_eq!(fs::read(dir.join(format!("positions/part-00000.{}", format.extension()))).unwrap(), whole);
            let _ = fs::remove_dir_all(&dir);
        }
    }

    #[test]
    fn a_shard_built_by_many_threads_in_any_order_is_the_shard_built_in_order() {
        // 6 games of 1,500 plies: 9,000 positions, two full batches and a rest, added from four
        // threads in reverse order while batches are encoded; once told ready, the same bytes.
        let settings = Settings { games: 6, games_per_shard: 6, max_plies: 1_500, ..Settings::default() };
        let variant = Variant::load("taikyoku", &[]).unwrap();
        let records: Vec<_> = (0..6).map(|id| play_game(&variant, &settings, id, &|| false).unwrap()).collect();
        let (in_order, threaded) = (temp_dir("in-order"), temp_dir("threaded"));
        for dir in [&in_order, &threaded] {
            fs::create_dir_all(dir.join("games")).unwrap();
            fs::create_dir_all(dir.join("positions")).unwrap();
        }
        let expected = dataset::write_shard(&LocalStore::new(&in_order), &settings, 0, records.clone()).unwrap();
        let shard = ShardBuilder::new(&settings, 0).unwrap();
        let ready = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for part in 0..4 {
                let (shard, ready, records) = (&shard, &ready, &records);
                scope.spawn(move || {
                    for record in records.iter().rev().skip(part).step_by(4) {
                        if shard.add(record.clone()).unwrap() {
                            ready.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        assert_eq!(ready.into_inner(), 1, "exactly one add says the shard is ready");
        assert_eq!(shard.finish(&LocalStore::new(&threaded)).unwrap(), expected);
        for file in ["games/part-00000.arrow", "positions/part-00000.arrow"] {
            assert_eq!(fs::read(threaded.join(file)).unwrap(), fs::read(in_order.join(file)).unwrap(), "{file}");
        }
        let _ = fs::remove_dir_all(&in_order);
        let _ = fs::remove_dir_all(&threaded);
    }

    #[test]
    fn stored_legal_actions_are_the_replayed_ones_and_deterministic() {
        use arrow_array::{Array, ListArray, UInt32Array};
        use taikyoku_engine::rl::actions::{legal_actions, Frame};
        let mcts = MctsSettings { simulations: 8, ..MctsSettings::default() };
        for (players, format) in [(Players::Mcts(mcts), Format::Parquet), (Players::Random, Format::Arrow)] {
            let settings = Settings {
                players,
                games: 3,
                games_per_shard: 2,
                max_plies: 12,
                format,
                store_legal_actions: true,
                ..Settings::default()
            };
            let (one, two) = (temp_dir("legal-one"), temp_dir("legal-two"));
            run_quietly(&one, &settings, Some(1)).unwrap();
            run_quietly(&two, &settings, Some(2)).unwrap();
            assert_eq!(file_bytes(&one), file_bytes(&two));
            let variant = Variant::load("taikyoku", &[]).unwrap();
            for shard in 0..2 {
                for batch in
                    file_batches(&one.join(format!("positions/part-{shard:05}.{}", format.extension())), format)
                {
                    assert_eq!(batch.schema().fields().last().unwrap().name(), tables::LEGAL_ACTIONS);
                    let column = |name: &str| batch.column_by_name(name).unwrap().clone();
                    let legal = column(tables::LEGAL_ACTIONS);
                    let legal = legal.as_any().downcast_ref::<ListArray>().unwrap();
                    let counts = column("legal_moves");
                    let counts = counts.as_any().downcast_ref::<UInt32Array>().unwrap();
                    let played = column("action");
                    let played = played.as_any().downcast_ref::<UInt32Array>().unwrap();
                    // Replay each game from its first row: each row's list is the position's
                    // legal actions, sorted, as many as legal_moves, holding the move played.
                    let mut game = taikyoku_engine::Game::new(variant.clone());
                    for row in 0..batch.num_rows() {
                        let ply = column("ply").as_any().downcast_ref::<UInt32Array>().unwrap().value(row);
                        if ply == 0 {
                            game = taikyoku_engine::Game::new(variant.clone());
                        }
                        let stored = legal.value(row);
                        let stored = stored.as_any().downcast_ref::<UInt32Array>().unwrap().values().to_vec();
                        let moves = game.legal_moves();
                        assert_eq!(stored, legal_actions(&game.position, &moves, Frame::Mover));
                        assert_eq!(stored.len(), counts.value(row) as usize);
                        let mv = taikyoku_engine::rl::actions::move_of(
                            &game.position,
                            &moves,
                            played.value(row),
                            Frame::Mover,
                        )
                        .unwrap();
                        game.play(mv);
                    }
                }
            }
            let manifest = fs::read_to_string(one.join("manifest.json")).unwrap();
            assert!(manifest.contains("\"store_legal_actions\": true"), "{manifest}");
            let card = fs::read_to_string(one.join(dataset::CARD)).unwrap();
            assert!(card.contains("| `legal_actions` | list<uint32> |"), "{card}");
            let _ = fs::remove_dir_all(&one);
            let _ = fs::remove_dir_all(&two);
        }
    }

    #[test]
    fn a_gumbel_root_stores_its_improved_policy_over_the_legal_actions() {
        use arrow_array::{Array, Float32Array, ListArray, StructArray, UInt32Array};
        let mcts = MctsSettings {
            simulations: 16,
            gumbel: Some(settings::GumbelSettings { considered: 8, scale: 1.0 }),
            ..MctsSettings::default()
        };
        let settings = Settings {
            variant: "tenjiku".into(),
            players: Players::Mcts(mcts),
            games: 3,
            games_per_shard: 2,
            max_plies: 10,
            format: Format::Arrow,
            store_legal_actions: true,
            ..Settings::default()
        };
        let (one, two) = (temp_dir("gumbel-one"), temp_dir("gumbel-two"));
        run_quietly(&one, &settings, Some(1)).unwrap();
        run_quietly(&two, &settings, Some(2)).unwrap();
        assert_eq!(file_bytes(&one), file_bytes(&two));
        let mut rows = 0;
        for shard in 0..2 {
            for batch in file_batches(&one.join(format!("positions/part-{shard:05}.arrow")), Format::Arrow) {
                let names: Vec<String> =
                    batch.schema().fields().iter().rev().take(2).map(|f| f.name().clone()).collect();
                assert_eq!(names, [tables::POLICY, tables::LEGAL_ACTIONS]);
                let column = |name: &str| batch.column_by_name(name).unwrap().clone();
                let (policy, legal, played) = (column(tables::POLICY), column(tables::LEGAL_ACTIONS), column("action"));
                let policy = policy.as_any().downcast_ref::<ListArray>().unwrap();
                let legal = legal.as_any().downcast_ref::<ListArray>().unwrap();
                let played = played.as_any().downcast_ref::<UInt32Array>().unwrap();
                for row in 0..batch.num_rows() {
                    let entries = policy.value(row);
                    let entries = entries.as_any().downcast_ref::<StructArray>().unwrap();
                    let actions = entries.column(0).as_any().downcast_ref::<UInt32Array>().unwrap().values().to_vec();
                    let weights = entries.column(1).as_any().downcast_ref::<Float32Array>().unwrap().values().to_vec();
                    // Every legal action, by action, with a weight; the weights a distribution.
                    let listed = legal.value(row);
                    assert_eq!(actions, listed.as_any().downcast_ref::<UInt32Array>().unwrap().values().to_vec());
                    assert!(weights.iter().all(|&w| w > 0.0) && (weights.iter().sum::<f32>() - 1.0).abs() < 1e-4);
                    assert!(actions.contains(&played.value(row)));
                    rows += 1;
                }
            }
        }
        assert_eq!(rows, 30);
        let manifest = fs::read_to_string(one.join("manifest.json")).unwrap();
        assert!(manifest.contains("\"gumbel\": {"), "{manifest}");
        // A PUCT run's manifest does not name the root (the same bytes as before Gumbel existed).
        let puct = Settings { players: Players::Mcts(MctsSettings::default()), ..Settings::default() };
        assert!(!serde_json::to_string(&puct).unwrap().contains("gumbel"));
        let _ = fs::remove_dir_all(&one);
        let _ = fs::remove_dir_all(&two);
    }

    #[test]
    fn a_second_writer_is_refused_and_check_dataset_finds_what_resume_finds() {
        let settings = Settings { games: 4, games_per_shard: 1, max_plies: 12, ..Settings::default() };
        let dir = temp_dir("two-writers");
        run_quietly(&dir, &settings, Some(1)).unwrap();
        let store = local(&dir).unwrap();
        let (writer, missing) = Writer::open(store.clone(), &settings).unwrap();
        assert!(missing.is_empty());
        let error = run_quietly(&dir, &settings, Some(1)).unwrap_err();
        assert!(matches!(&error, RunError::Busy(m) if m.contains("being written by another run")), "{error}");
        writer.finish(std::time::Instant::now()).unwrap();
        assert!(!dir.join(LOCK_FILE).exists());
        assert_eq!(check_dataset(store.as_ref()).unwrap().1, DatasetCheck::default());
        // Shard 2 names shard 1's files (with their checks); shard 3 counts a draw it does not hold.
        let mut manifest = Manifest::read(store.as_ref()).unwrap();
        let one = manifest.shards[1].clone();
        manifest.shards[2] = Shard { index: 2, first_game: 2, ..one };
        manifest.shards[3].tally.draws += 1;
        manifest.shards[3].tally.truncated -= 1;
        fs::write(dir.join("manifest.json"), manifest.text()).unwrap();
        let damaged = check_dataset(store.as_ref()).unwrap().1.damaged;
        assert_eq!(damaged.iter().map(|(i, _)| *i).collect::<Vec<_>>(), vec![2, 3], "{damaged:?}");
        assert!(damaged[0].1.contains("names the files games/part-00001.arrow"), "{damaged:?}");
        assert!(damaged[1].1.starts_with("its entry counts 1 games"), "{damaged:?}");
        let resumed = run_quietly(&dir, &settings, Some(1)).unwrap();
        let repaired: Vec<String> = damaged.iter().map(|(i, why)| format!("shard {i}: {why}")).collect();
        assert_eq!(resumed.repaired, repaired);
        // An entry without checksums (an older manifest) is sound but unchecked: verify replays
        // it, a resume regenerates it.
        let mut manifest = Manifest::read(store.as_ref()).unwrap();
        manifest.shards[0].checks = None;
        fs::write(dir.join("manifest.json"), manifest.text()).unwrap();
        assert_eq!(check_dataset(store.as_ref()).unwrap().1, DatasetCheck { damaged: vec![], unchecked: vec![0] });
        let resumed = run_quietly(&dir, &settings, Some(1)).unwrap();
        assert_eq!(resumed.repaired, vec!["shard 0: its entry has no checksums (an older manifest)".to_string()]);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_foreign_non_empty_directory_or_an_empty_path_is_refused() {
        let dir = temp_dir("foreign");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("notes.txt"), "mine").unwrap();
        let error = run_quietly(&dir, &Settings::default(), None).unwrap_err();
        assert!(error.to_string().contains("not empty"), "{error}");
        assert_eq!(fs::read_to_string(dir.join("notes.txt")).unwrap(), "mine");
        let _ = fs::remove_dir_all(&dir);
        let error = run_quietly(Path::new(""), &Settings::default(), None).unwrap_err();
        assert!(matches!(&error, RunError::Usage(m) if m.contains("empty")), "{error}");
    }
}
