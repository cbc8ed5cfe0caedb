//! The dataset directory: its manifest, checked shards, and the writer that adds shards to it.
//!
//! The manifest is the dataset's index, but it is not trusted blindly: on resume every listed
//! shard is checked (its place in the run, the size and CRC-32 of both files, the counts against
//! the games file), and a shard that fails a check is generated again, which, the output being
//! deterministic, restores exactly the bytes it should have had.

use crate::boards::{BoardLog, Replay};
use crate::play::{GameRecord, PositionRecord};
use crate::settings::Settings;
use crate::store::{Entry, LockError, Store, WriterLock, LOCK_FILE};
use crate::tables::{self, Tally, ENGINE_VERSION};
use crate::{IoFailure, RunError, Summary};
use arrow_array::RecordBatch;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use taikyoku_engine::rl::actions::GRID_SQUARES;

fn io_error(what: &'static str, store: &dyn Store, path: &str, e: std::io::Error) -> RunError {
    RunError::Io(IoFailure::new(what, store.describe(path), &e))
}

/// Size and CRC-32 (IEEE, as zlib's `crc32`) of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileCheck {
    /// File size.
    pub bytes: u64,
    /// CRC-32 of the whole file (IEEE, as Python's `zlib.crc32`).
    pub crc32: u32,
}

impl FileCheck {
    /// The check of a file with contents `data`.
    pub fn of(data: &[u8]) -> FileCheck {
        FileCheck { bytes: data.len() as u64, crc32: crc32fast::hash(data) }
    }
}

/// The checks of a shard's two files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardChecks {
    /// Of the games file.
    pub games: FileCheck,
    /// Of the positions file.
    pub positions: FileCheck,
}

/// One complete shard, as the manifest lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Shard {
    /// Shard number `k`, from 0.
    pub index: u64,
    /// `k * games_per_shard`, the first `game_id` of the shard.
    pub first_game: u64,
    /// Rows and results of its games, and the size of its two files together; written as
    /// top-level fields of the entry.
    #[serde(flatten)]
    pub tally: Tally,
    /// Path of the games file, relative to the dataset directory, e.g. `games/part-00000.arrow`.
    pub games_file: String,
    /// Path of the positions file, e.g. `positions/part-00000.arrow`.
    pub positions_file: String,
    /// Absent in manifests written before checks existed: such shards are regenerated on resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<ShardChecks>,
}

/// `manifest.json` of a dataset.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Layout version of the files and this manifest (`tables::SCHEMA_VERSION`, 1); bumped on
    /// any incompatible change.
    pub schema_version: u32,
    /// Version of the engine that wrote the data, e.g. `"0.1.0"` (`ENGINE_VERSION`).
    pub engine_version: String,
    /// Everything that decides the output bytes; the thread count is not in it.
    pub settings: Settings,
    /// How each game's seed and random stream derive from `settings.seed`.
    pub seeding: String,
    /// The complete shards, sorted by `index`.
    pub shards: Vec<Shard>,
    /// `true` once every shard of `settings.games` is written; `false` while a run is under way
    /// or after it was interrupted.
    pub complete: bool,
}

/// The manifest's path in the dataset.
pub const MANIFEST: &str = "manifest.json";

/// The dataset card's path: a README with a Hugging Face `configs:` header (`card`).
pub const CARD: &str = "README.md";

impl Manifest {
    fn new(settings: &Settings) -> Manifest {
        Manifest {
            schema_version: tables::SCHEMA_VERSION,
            engine_version: ENGINE_VERSION.into(),
            settings: settings.clone(),
            seeding:
                "game seed = splitmix64(seed ^ splitmix64(game_id)); moves from ChaCha8Rng::seed_from_u64(game seed)"
                    .into(),
            shards: Vec::new(),
            complete: false,
        }
    }

    /// Reads and parses `manifest.json` from `store`, without checking its shards. A missing or
    /// unreadable file is `RunError::Io`; one that is not a manifest is `RunError::Usage`.
    pub fn read(store: &dyn Store) -> Result<Manifest, RunError> {
        let data = store.read(MANIFEST).map_err(|e| io_error("reading", store, MANIFEST, e))?;
        serde_json::from_slice(&data).map_err(|e| {
            RunError::Usage(format!(
                "{} is not a readable taikyoku manifest ({e}); move the directory aside and start again",
                store.describe(MANIFEST)
            ))
        })
    }

    /// The manifest's bytes, as written (pretty JSON, the fields in their declared order).
    pub fn text(&self) -> String {
        serde_json::to_string_pretty(self).expect("a manifest serializes") + "\n"
    }

    /// Writes the manifest atomically (temporary file, then rename).
    fn write(&self, store: &dyn Store) -> Result<(), RunError> {
        store.write(MANIFEST, self.text().as_bytes()).map_err(|e| io_error("writing", store, MANIFEST, e))
    }

    /// Writes the dataset card (`card`) atomically.
    fn write_card(&self, store: &dyn Store) -> Result<(), RunError> {
        store.write(CARD, card(self).as_bytes()).map_err(|e| io_error("writing", store, CARD, e))
    }

    /// The shard of `index` of a run with `settings`, as the manifest should list it.
    fn file_names(settings: &Settings, index: u64) -> (String, String) {
        let extension = settings.format.extension();
        (format!("games/part-{index:05}.{extension}"), format!("positions/part-{index:05}.{extension}"))
    }
}

/// Why a listed shard is damaged, or `None` if it checks out: its place in the run's shard
/// layout, its files' names, sizes and CRC-32s (when its entry has them), and its counts (bytes
/// included) and game ids against its files. The one definition of a shard's checks: resuming
/// (`Writer::open`) and verifying (`check_dataset`) both use it.
fn damage(store: &dyn Store, settings: &Settings, shard: &Shard) -> Option<String> {
    let (games_file, positions_file) = Manifest::file_names(settings, shard.index);
    let range = settings.shard_games(shard.index);
    if shard.index >= settings.shard_count()
        || shard.first_game != range.start
        || shard.tally.games != range.end - range.start
    {
        return Some(format!(
            "its entry (first game {}, {} games) does not match the run's shard layout (games {}..{})",
            shard.first_game,
            shard.tally.games,
            range.start,
            range.end.saturating_sub(1)
        ));
    }
    if shard.games_file != games_file || shard.positions_file != positions_file {
        return Some(format!(
            "its entry names the files {} and {}, not its own {games_file} and {positions_file}",
            shard.games_file, shard.positions_file
        ));
    }
    let mut games_data = Vec::new();
    let mut bytes = 0;
    let listed = shard.checks.map(|c| [c.positions, c.games]);
    for (i, name) in [&positions_file, &games_file].into_iter().enumerate() {
        let Ok(data) = store.read(name) else { return Some(format!("{name} is missing or unreadable")) };
        let found = FileCheck::of(&data);
        if let Some(check) = listed.map(|c| c[i]) {
            if found.bytes != check.bytes {
                return Some(format!("{name} has {} bytes, the manifest says {}", found.bytes, check.bytes));
            }
            if found.crc32 != check.crc32 {
                return Some(format!("{name} fails its CRC-32 check"));
            }
        }
        bytes += found.bytes;
        games_data = data;
    }
    match tables::read_games_tally(games_data, settings.format) {
        Err(e) => Some(format!("{games_file} cannot be read: {e}")),
        Ok((mut counted, ids)) => {
            counted.bytes = bytes;
            if let Some(id) = ids.iter().find(|id| !range.contains(id)) {
                return Some(format!(
                    "{games_file} holds game {id}, outside the shard's games {}..{}",
                    range.start,
                    range.end - 1
                ));
            }
            if ids.iter().collect::<BTreeSet<_>>().len() != ids.len() {
                return Some(format!("{games_file} holds a game twice"));
            }
            if counted.bytes != shard.tally.bytes {
                return Some(format!("its entry says {} bytes, its files have {}", shard.tally.bytes, counted.bytes));
            }
            (counted != shard.tally).then(|| {
                format!("its entry counts {}; its games file holds {}", shard.tally.describe(), counted.describe())
            })
        }
    }
}

/// What the listed shards' checks found.
struct Checked {
    /// The shards that check out, sorted by index (with or without checksums).
    sound: Vec<Shard>,
    /// Each damaged shard's index (listed twice, or failing `damage`) with why, e.g.
    /// `(3, "games/part-00003.arrow fails its CRC-32 check")`.
    damaged: Vec<(u64, String)>,
    /// The sound shards whose entries have no checksums (manifests older than them).
    unchecked: Vec<u64>,
}

/// Checks every listed shard (`damage`).
fn check_shards(store: &dyn Store, settings: &Settings, shards: Vec<Shard>) -> Checked {
    let mut checked = Checked { sound: Vec::new(), damaged: Vec::new(), unchecked: Vec::new() };
    let mut seen = BTreeSet::new();
    for shard in shards {
        if !seen.insert(shard.index) {
            checked.damaged.push((shard.index, "listed twice in the manifest".to_string()));
            continue;
        }
        match damage(store, settings, &shard) {
            None => {
                if shard.checks.is_none() {
                    checked.unchecked.push(shard.index);
                }
                checked.sound.push(shard);
            }
            Some(why) => checked.damaged.push((shard.index, why)),
        }
    }
    checked.sound.sort_by_key(|s| s.index);
    checked
}

/// What `check_dataset` found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DatasetCheck {
    /// Each damaged shard's index with why: what a rerun of the generating command reports as
    /// `repaired` (and regenerates).
    pub damaged: Vec<(u64, String)>,
    /// Shards that check out but whose entries have no checksums (a manifest written before
    /// them): nothing vouches for their bytes but a replay of their games. A resume regenerates
    /// them.
    pub unchecked: Vec<u64>,
}

/// Checks the dataset in `store` as resuming it would (every listed shard: its entry, its
/// files' sizes and CRC-32s, its counts and game ids), with the settings its manifest records:
/// what `taikyoku verify` and `Dataset.verify()` run before replaying the games.
pub fn check_dataset(store: &dyn Store) -> Result<(Manifest, DatasetCheck), RunError> {
    let manifest = Manifest::read(store)?;
    manifest.settings.validate().map_err(|e| {
        RunError::Usage(format!("{} records settings this version refuses: {e}", store.describe(MANIFEST)))
    })?;
    let checked = check_shards(store, &manifest.settings, manifest.shards.clone());
    Ok((manifest, DatasetCheck { damaged: checked.damaged, unchecked: checked.unchecked }))
}

/// What a run created, to remove again if it fails before any shard is complete.
#[derive(Default)]
struct Created {
    /// Directories that did not exist, the output directory first, then its missing parents.
    directories: Vec<PathBuf>,
    /// Whether the output directory was new or empty.
    contents: bool,
}

impl Created {
    /// Removes the directories created (those left empty).
    fn remove_directories(&self) {
        for dir in &self.directories {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// The dataset a run writes to (or a driver commits to, for runs spread over machines).
pub struct Writer {
    store: Arc<dyn Store>,
    manifest: Mutex<Manifest>,
    generated: Mutex<Tally>,
    repaired: Vec<String>,
    created: Created,
    /// Held until the writer is dropped (`None` for storage without locks).
    lock: Option<WriterLock>,
}

impl Writer {
    /// Takes the directory's writer lock (`Store::lock`: a second writer fails at once with
    /// `RunError::Busy` naming the first), checks the dataset in `store` and returns the writer
    /// with the indices of the shards still to play: a new dataset, or the matching old one
    /// whose listed shards check out. When this fails nothing is left written: a directory it
    /// created is removed again, and so is the lock file.
    pub fn open(store: Arc<dyn Store>, settings: &Settings) -> Result<(Writer, Vec<u64>), RunError> {
        let root = store.describe("");
        let io = |action: &'static str, e: std::io::Error| RunError::Io(IoFailure::new(action, root.clone(), &e));
        let mut created = Created::default();
        match store.entry("").map_err(|e| io("reading", e))? {
            Entry::File => return Err(RunError::Usage(format!("{root} exists and is not a directory"))),
            Entry::Missing => {
                created.directories = store.missing_ancestors();
                store.create_dir("").map_err(|e| io("creating", e))?;
            }
            Entry::Directory => {}
        }
        let lock = match store.lock() {
            Ok(lock) => lock,
            Err(e) => {
                created.remove_directories();
                return Err(match e {
                    LockError::Busy(holder) => RunError::Busy(format!(
                        "{root} is being written by another run ({holder}); run again when it has finished, \
                         or wait for it (taikyoku selfplay --wait, taikyoku.selfplay(..., wait=True))"
                    )),
                    LockError::Io(e) => RunError::Io(IoFailure::new("locking", store.describe(LOCK_FILE), &e)),
                });
            }
        };
        let checked = Self::existing(store.as_ref(), settings);
        let (manifest, repaired, contents) = match checked {
            Ok(found) => found,
            Err(e) => {
                drop(lock);
                created.remove_directories();
                return Err(e);
            }
        };
        created.contents = contents;
        let listed: BTreeSet<u64> = manifest.shards.iter().map(|s| s.index).collect();
        let missing: Vec<u64> = (0..settings.shard_count()).filter(|i| !listed.contains(i)).collect();
        let writer = Writer {
            store,
            manifest: Mutex::new(manifest),
            generated: Mutex::new(Tally::default()),
            repaired,
            created,
            lock,
        };
        writer.prepare()?;
        Ok((writer, missing))
    }

    /// What the (locked) directory holds: the manifest to continue from (the old one's shards
    /// that check out), the shards found damaged, and whether the directory was empty.
    fn existing(store: &dyn Store, settings: &Settings) -> Result<(Manifest, Vec<String>, bool), RunError> {
        let root = store.describe("");
        let io = |e: std::io::Error| RunError::Io(IoFailure::new("reading", root.clone(), &e));
        let names = store.list("").map_err(io)?;
        if names.iter().all(|name| name == LOCK_FILE) {
            return Ok((Manifest::new(settings), Vec::new(), true));
        }
        if store.entry(MANIFEST).map_err(io)? != Entry::File {
            return Err(RunError::Usage(format!(
                "output directory {root} is not empty and holds no taikyoku dataset: choose a new or empty directory"
            )));
        }
        let old = Manifest::read(store)?;
        if old.settings != *settings || old.schema_version != tables::SCHEMA_VERSION {
            return Err(RunError::Usage(format!(
                "{root} holds a dataset made with other settings ({}); use a new directory, or the same settings to resume",
                serde_json::to_string(&old.settings).unwrap_or_default()
            )));
        }
        if old.engine_version != ENGINE_VERSION {
            return Err(RunError::Usage(format!(
                "{root} was made by taikyoku {}, this is {ENGINE_VERSION}: games may differ between versions, so it cannot be resumed; use a new directory",
                old.engine_version
            )));
        }
        let mut manifest = Manifest::new(settings);
        let checked = check_shards(store, settings, old.shards);
        // Without checksums, nothing vouches for a shard's bytes: it is generated again.
        manifest.shards = checked.sound.into_iter().filter(|s| s.checks.is_some()).collect();
        let mut damaged = checked.damaged;
        damaged.extend(
            checked.unchecked.iter().map(|&i| (i, "its entry has no checksums (an older manifest)".to_string())),
        );
        damaged.sort_by_key(|(index, _)| *index);
        let repaired = damaged.into_iter().map(|(index, why)| format!("shard {index}: {why}")).collect();
        Ok((manifest, repaired, false))
    }

    /// Creates the directories, clears leftovers of an interrupted run, writes the manifest.
    fn prepare(&self) -> Result<(), RunError> {
        let store = self.store.as_ref();
        for sub in ["games", "positions"] {
            if let Err(e) = store.create_dir(sub) {
                self.abandon();
                return Err(io_error("creating", store, sub, e));
            }
            for name in store.list(sub).map_err(|e| io_error("listing", store, sub, e))? {
                if name.ends_with(".tmp") {
                    let _ = store.remove(&format!("{sub}/{name}"));
                }
            }
        }
        let mut manifest = self.lock_manifest();
        manifest.shards.sort_by_key(|s| s.index);
        manifest.complete = false;
        // The card after the manifest: a directory holding a card but no manifest would look
        // foreign to the next run.
        manifest.write(store).and_then(|()| manifest.write_card(store)).inspect_err(|_| self.abandon_locked(&manifest))
    }

    fn lock_manifest(&self) -> std::sync::MutexGuard<'_, Manifest> {
        self.manifest.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes a shard built as its games ended (`ShardBuilder::add` said it is ready) and lists
    /// it in the manifest.
    pub fn commit(&self, shard: &ShardBuilder) -> Result<(), RunError> {
        let shard = shard.finish(self.store.as_ref())?;
        self.record(shard)
    }

    /// Lists a shard whose files are written (by this process or another machine).
    pub fn record(&self, shard: Shard) -> Result<(), RunError> {
        self.generated.lock().unwrap_or_else(|e| e.into_inner()).add(&shard.tally);
        let mut manifest = self.lock_manifest();
        manifest.shards.retain(|s| s.index != shard.index);
        manifest.shards.push(shard);
        manifest.shards.sort_by_key(|s| s.index);
        manifest.write(self.store.as_ref())
    }

    /// Marks the dataset complete and sums it up.
    pub fn finish(self, started: Instant) -> Result<Summary, RunError> {
        let mut manifest = self.manifest.into_inner().unwrap_or_else(|e| e.into_inner());
        manifest.complete = true;
        manifest.write(self.store.as_ref())?;
        manifest.write_card(self.store.as_ref())?;
        let mut total = Tally::default();
        for shard in &manifest.shards {
            total.add(&shard.tally);
        }
        Ok(Summary {
            total,
            generated: self.generated.into_inner().unwrap_or_else(|e| e.into_inner()),
            repaired: self.repaired,
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    /// After a failure: keeps complete shards (a rerun resumes), or, when the run started from
    /// nothing and completed no shard, removes everything it created.
    pub fn abandon(&self) {
        let manifest = self.lock_manifest();
        self.abandon_locked(&manifest);
    }

    fn abandon_locked(&self, manifest: &Manifest) {
        if !manifest.shards.is_empty() || !self.created.contents {
            return;
        }
        let store = self.store.as_ref();
        let _ = store.remove(CARD);
        let _ = store.remove("README.md.tmp");
        let _ = store.remove(MANIFEST);
        let _ = store.remove("manifest.json.tmp");
        for sub in ["games", "positions"] {
            for name in store.list(sub).unwrap_or_default() {
                let _ = store.remove(&format!("{sub}/{name}"));
            }
            let _ = store.remove_dir(sub);
        }
        // The lock file last (the lock itself is held until the writer is dropped).
        if let Some(lock) = &self.lock {
            lock.release();
        }
        self.created.remove_directories();
    }
}

/// Writes one shard's two files (each atomically: under a temporary name, then renamed) and
/// returns its manifest entry. Any order of `records`; they are written by game id.
pub fn write_shard(
    store: &dyn Store,
    settings: &Settings,
    index: u64,
    records: Vec<GameRecord>,
) -> Result<Shard, RunError> {
    let shard = ShardBuilder::new(settings, index)?;
    for record in records {
        shard.add(record)?;
    }
    shard.finish(store)
}

/// One shard's files, built as its games end, in any order, from any number of threads: games
/// are taken in game-id order (a game that ends early waits for those before it), their
/// positions cut into record batches of `ROWS_PER_BATCH` rows across the games, and each batch
/// is encoded and compressed as soon as it is full. A shard in progress so holds its encoded
/// bytes, the positions not yet encoded and the games waiting for an earlier one, whatever its
/// size; and its bytes are those of encoding the whole shard at once, the batches being the same.
///
/// Encoding a batch (zstd over 10 MB of boards) takes as long as playing a couple of games, so
/// it is done outside the lock that takes the games: one thread at a time encodes, in order, the
/// batches that are full, while the others add their games and play on.
pub struct ShardBuilder<'a> {
    settings: &'a Settings,
    index: u64,
    games_range: std::ops::Range<u64>,
    taken: Mutex<Taken>,
    /// The positions file being encoded (taken by `finish`).
    positions: Mutex<Option<tables::Encoder>>,
}

/// What a shard has taken and not yet encoded.
#[derive(Default)]
struct Taken {
    /// The games taken so far, in order, without their positions and boards.
    games: Vec<GameRecord>,
    /// Per game in `games`: its boards (`GameRecord::boards`), until its last row is in a batch
    /// (shared with the thread writing a batch's boards out of them, without the lock).
    boards: Vec<Arc<BoardLog>>,
    /// Where the boards of the game whose rows the last batch left unfinished stand (its place
    /// in `games`): the next batch goes on from there.
    replay: Option<(usize, Replay)>,
    /// Positions not yet in a batch, with their game's place in `games`.
    rows: Vec<(usize, PositionRecord)>,
    /// The boards of the last batch encoded, to copy the next batch's boards into (its
    /// capacity kept: a batch's 10 MB of boards are not allocated, and their pages faulted
    /// in, again for every batch).
    spare: Vec<u16>,
    /// Games that ended before an earlier one of the shard, by id.
    waiting: BTreeMap<u64, GameRecord>,
    /// A thread is encoding batches (it encodes every batch that is full before it stops).
    encoding: bool,
    /// The thread that saw the shard complete and nothing left to encode was told so.
    announced: bool,
}

impl<'a> ShardBuilder<'a> {
    /// Shard `index` of a run with `settings`, with no game yet.
    pub fn new(settings: &'a Settings, index: u64) -> Result<ShardBuilder<'a>, RunError> {
        let schema = tables::file_schema("positions", settings).expect("a known table");
        let positions = tables::Encoder::new(settings.format, schema).map_err(|e| building(index, e))?;
        Ok(ShardBuilder {
            settings,
            index,
            games_range: settings.shard_games(index),
            taken: Mutex::new(Taken::default()),
            positions: Mutex::new(Some(positions)),
        })
    }

    /// Takes a finished game of this shard (each once, any order). Returns whether the shard is
    /// now ready to `finish`: true for exactly one call, the one that found every game in and
    /// every full batch encoded.
    pub fn add(&self, record: GameRecord) -> Result<bool, RunError> {
        let mut taken = self.lock_taken();
        let record_id = record.game_id;
        debug_assert!(self.games_range.contains(&record_id), "game {record_id} in shard {}", self.index);
        taken.waiting.insert(record_id, record);
        let mut next = self.games_range.start + taken.games.len() as u64;
        while let Some(mut record) = taken.waiting.remove(&next) {
            let game = taken.games.len();
            let positions = std::mem::take(&mut record.positions);
            taken.rows.extend(positions.into_iter().map(|p| (game, p)));
            taken.boards.push(Arc::new(std::mem::take(&mut record.boards)));
            taken.games.push(record);
            next += 1;
        }
        let mut encoder = false;
        while let Some((games, rows, boards)) = Self::next_batch(&mut taken, encoder) {
            encoder = true;
            drop(taken);
            let (boards, replay) = boards.write();
            let encoded = self.encode(&games, &rows, boards);
            taken = self.lock_taken();
            taken.replay = replay;
            match encoded {
                Ok(spare) => taken.spare = spare,
                Err(e) => {
                    taken.encoding = false;
                    return Err(e);
                }
            }
        }
        let ready = !taken.encoding && !taken.announced && self.has_every_game(&taken);
        taken.announced |= ready;
        Ok(ready)
    }

    /// The next full batch to encode, unless another thread is encoding (`encoder`: the
    /// caller is the one encoding): its rows, with copies of their games' heads (id and
    /// outcome, which the rows read), and their boards. Marks the caller as encoding, or
    /// clears the mark when nothing full is left.
    #[allow(clippy::type_complexity)]
    fn next_batch(
        taken: &mut Taken,
        encoder: bool,
    ) -> Option<(Vec<GameRecord>, Vec<(usize, PositionRecord)>, BoardSources)> {
        if taken.encoding && !encoder {
            return None;
        }
        if taken.rows.len() < tables::ROWS_PER_BATCH {
            taken.encoding = false;
            return None;
        }
        taken.encoding = true;
        let rows: Vec<_> = taken.rows.drain(..tables::ROWS_PER_BATCH).collect();
        let boards = board_sources(taken, &rows);
        let (games, rows) = heads(&taken.games, rows);
        Some((games, rows, boards))
    }

    /// The positions table rows `rows`, whose games are `games[row.0]` and whose boards are
    /// `boards`.
    fn batch(
        &self,
        games: &[GameRecord],
        rows: &[(usize, PositionRecord)],
        boards: Vec<u16>,
    ) -> Result<RecordBatch, RunError> {
        let rows: Vec<_> = rows.iter().map(|(game, p)| (&games[*game], p)).collect();
        tables::positions_batch(&rows, boards, self.settings.store_legal_actions, self.settings.stores_policy())
            .map_err(|e| building(self.index, e))
    }

    /// Encodes `rows` (their games' heads in `games`, their boards `boards`) as the positions
    /// file's next batch; gives the boards' vector back (`tables::reclaim_boards`).
    fn encode(
        &self,
        games: &[GameRecord],
        rows: &[(usize, PositionRecord)],
        boards: Vec<u16>,
    ) -> Result<Vec<u16>, RunError> {
        let batch = self.batch(games, rows, boards)?;
        let mut positions = self.positions.lock().unwrap_or_else(|e| e.into_inner());
        positions
            .as_mut()
            .expect("a shard is encoded until it is finished")
            .write(&batch)
            .map_err(|e| building(self.index, e))?;
        drop(positions);
        Ok(tables::reclaim_boards(batch))
    }

    fn lock_taken(&self) -> std::sync::MutexGuard<'_, Taken> {
        self.taken.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn has_every_game(&self, taken: &Taken) -> bool {
        taken.games.len() as u64 == self.games_range.end - self.games_range.start
    }

    /// Writes the shard's two files into `store` and returns its manifest entry. Every game
    /// must be in (`add` said so), and a shard is finished once.
    pub fn finish(&self, store: &dyn Store) -> Result<Shard, RunError> {
        let index = self.index;
        let settings = self.settings;
        let mut taken = self.lock_taken();
        assert!(self.has_every_game(&taken), "shard {index} finished with {} games", taken.games.len());
        let mut positions =
            (self.positions.lock().unwrap_or_else(|e| e.into_inner()).take()).expect("a shard is finished once");
        if !taken.rows.is_empty() {
            let rows: Vec<_> = std::mem::take(&mut taken.rows);
            let (boards, _) = board_sources(&mut taken, &rows).write();
            positions.write(&self.batch(&taken.games, &rows, boards)?).map_err(|e| building(index, e))?;
        }
        let (games_file, positions_file) = Manifest::file_names(settings, index);
        let refs: Vec<&GameRecord> = taken.games.iter().collect();
        let games: Vec<_> = refs
            .chunks(tables::ROWS_PER_BATCH)
            .map(|chunk| tables::games_batch(chunk, &settings.variant, settings.players.name()))
            .collect::<Result<_, _>>()
            .map_err(|e| building(index, e))?;
        let schema = tables::file_schema("games", settings).expect("a known table");
        let games_data = tables::encode(settings.format, schema, &games).map_err(|e| building(index, e))?;
        let positions_data = positions.finish().map_err(|e| building(index, e))?;
        // Positions first, games last: a shard counts as written once its games file exists.
        let mut checks = Vec::with_capacity(2);
        for (path, data) in [(&positions_file, &positions_data), (&games_file, &games_data)] {
            store.write(path, data).map_err(|e| io_error("writing", store, path, e))?;
            checks.push(FileCheck::of(data));
        }
        let mut tally = Tally::of(taken.games.iter().map(|r| (r.result, r.plies() as u64)));
        tally.bytes = checks[0].bytes + checks[1].bytes;
        Ok(Shard {
            index,
            first_game: self.games_range.start,
            tally,
            games_file,
            positions_file,
            checks: Some(ShardChecks { games: checks[1], positions: checks[0] }),
        })
    }
}

/// Where the boards of a batch's rows are: their games' logs, and the buffer to write them
/// into. The boards (10 MB for a full batch) are written without the shard's lock, so that the
/// other threads can add their games meanwhile.
struct BoardSources {
    into: Vec<u16>,
    /// The logs of the batch's games, from its first row's game (`first` in the shard) on.
    games: Vec<Arc<BoardLog>>,
    first: usize,
    /// Per row: its game in `games` (its place in the game follows the row before's).
    places: Vec<usize>,
    /// Where the first game's boards stand (at its first board if the batch starts it).
    replay: Replay,
}

impl BoardSources {
    /// The boards one after another, and where the last game's stand if it has rows left.
    fn write(self) -> (Vec<u16>, Option<(usize, Replay)>) {
        let mut boards = self.into;
        boards.clear();
        boards.reserve(self.places.len() * GRID_SQUARES);
        let mut replay = self.replay;
        let mut current = 0;
        for &game in &self.places {
            if game != current {
                (current, replay) = (game, Replay::default());
            }
            replay.next_into(&self.games[game], &mut boards);
        }
        let unfinished = replay.read() < self.games.last().map_or(0, |log| log.len());
        (boards, unfinished.then(|| (self.first + current, replay)))
    }
}

/// The boards of `rows`, just taken out of `taken.rows`, to be written into `taken.spare`
/// (taken); the games none of whose rows are left keep no boards.
fn board_sources(taken: &mut Taken, rows: &[(usize, PositionRecord)]) -> BoardSources {
    let first = rows.first().map_or(0, |r| r.0);
    let last = rows.last().map_or(first, |r| r.0);
    let games = taken.boards[first..=last].to_vec();
    let done = taken.rows.first().map_or(taken.games.len(), |r| r.0);
    for game in first..done {
        taken.boards[game] = Arc::default();
    }
    let replay = match taken.replay.take() {
        Some((game, replay)) if game == first => replay,
        _ => Replay::default(),
    };
    let places = rows.iter().map(|&(game, _)| game - first).collect();
    BoardSources { into: std::mem::take(&mut taken.spare), games, first, places, replay }
}

/// `rows` with their games' heads (id, seed and outcome; no moves), renumbered from 0: what a
/// batch reads of its games, copied so that it can be encoded without the shard's lock.
fn heads(games: &[GameRecord], rows: Vec<(usize, PositionRecord)>) -> (Vec<GameRecord>, Vec<(usize, PositionRecord)>) {
    let first = rows.first().map_or(0, |r| r.0);
    let last = rows.last().map_or(0, |r| r.0);
    let heads = games[first..=last.max(first)]
        .iter()
        .map(|g| GameRecord {
            outcome: g.outcome,
            result: g.result,
            termination: g.termination,
            ..GameRecord::new(g.game_id, g.seed)
        })
        .collect();
    (heads, rows.into_iter().map(|(game, p)| (game - first, p)).collect())
}

fn building(index: u64, e: arrow_schema::ArrowError) -> RunError {
    RunError::Usage(format!("building shard {index}: {e}"))
}

/// A table's column types as the card names them (Arrow's names, as pyarrow prints them).
fn type_name(data_type: &arrow_schema::DataType) -> String {
    use arrow_schema::DataType as T;
    match data_type {
        T::UInt8 => "uint8".into(),
        T::UInt16 => "uint16".into(),
        T::UInt32 => "uint32".into(),
        T::UInt64 => "uint64".into(),
        T::Int8 => "int8".into(),
        T::Float32 => "float".into(),
        T::Boolean => "bool".into(),
        T::Utf8 => "string".into(),
        T::List(item) => format!("list<{}>", type_name(item.data_type())),
        T::FixedSizeList(item, n) => format!("fixed_size_list<{}>[{n}]", type_name(item.data_type())),
        T::Struct(fields) => {
            let inner: Vec<String> =
                fields.iter().map(|f| format!("{}: {}", f.name(), type_name(f.data_type()))).collect();
            format!("struct<{}>", inner.join(", "))
        }
        other => other.to_string(),
    }
}

/// `n` with thousands separators.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let first = digits.len() % 3;
    let mut groups: Vec<&str> = Vec::new();
    if first > 0 {
        groups.push(&digits[..first]);
    }
    groups.extend(digits.as_bytes()[first..].chunks(3).map(|g| std::str::from_utf8(g).expect("ASCII digits")));
    groups.join(",")
}

/// Hugging Face's size category of a dataset of `rows` rows.
fn size_category(rows: u64) -> &'static str {
    match rows {
        0..=999 => "n<1K",
        1_000..=9_999 => "1K<n<10K",
        10_000..=99_999 => "10K<n<100K",
        100_000..=999_999 => "100K<n<1M",
        1_000_000..=9_999_999 => "1M<n<10M",
        10_000_000..=99_999_999 => "10M<n<100M",
        100_000_000..=999_999_999 => "100M<n<1B",
        _ => "n>1B",
    }
}

/// The dataset card, `README.md` at the dataset root: a YAML header whose `configs:` let
/// Hugging Face's `datasets.load_dataset(DIR)` find the two tables (`"positions"`, the
/// default, and `"games"`), then what the dataset holds, how to read it and its columns. It
/// depends only on the manifest (never on time or threads), so it is as reproducible as the
/// shard files. Until the run completes it says so, without counts.
pub fn card(manifest: &Manifest) -> String {
    use std::fmt::Write;
    let settings = &manifest.settings;
    let extension = settings.format.extension();
    let mut total = Tally::default();
    for shard in &manifest.shards {
        total.add(&shard.tally);
    }
    let players = match &settings.players {
        crate::Players::Random => "uniformly random players".to_string(),
        crate::Players::Mcts(m) => format!(
            "MCTS players ({} simulations per move, c_puct {}, Dirichlet alpha {} at weight {}, temperature {} for {} plies, {} priors, {} rollout plies, the opponent's moves counted at the {}{})",
            m.simulations,
            m.c_puct,
            m.dirichlet_alpha,
            m.dirichlet_fraction,
            m.temperature,
            m.temperature_plies,
            m.priors,
            m.rollout_plies,
            m.opponent_moves,
            if m.reuse_tree { ", tree reused" } else { "" }
        ),
    };
    let evaluator = match &settings.network {
        Some(n) => format!("guided by the evaluator `{}` ({} observations)", n.name, n.observation),
        None if matches!(settings.players, crate::Players::Mcts(_)) => {
            "with the rules-derived heuristic evaluator".to_string()
        }
        None => String::new(),
    };
    let options = if settings.options.is_empty() { "standard rules".to_string() } else { settings.options.join(", ") };
    let mut s = String::new();
    let _ = writeln!(s, "---");
    let _ = writeln!(s, "pretty_name: \"{} shogi self-play ({})\"", settings.variant, settings.players.name());
    let _ = writeln!(s, "tags:\n- taikyoku-shogi\n- shogi\n- self-play\n- reinforcement-learning");
    if manifest.complete {
        let _ = writeln!(s, "size_categories:\n- {}", size_category(total.positions));
    }
    let _ = writeln!(s, "configs:");
    for (table, default) in [("positions", true), ("games", false)] {
        let _ =
            writeln!(s, "- config_name: {table}\n  data_files:\n  - split: train\n    path: \"{table}/*.{extension}\"");
        if default {
            let _ = writeln!(s, "  default: true");
        }
    }
    let _ = writeln!(s, "---\n");
    let _ = writeln!(s, "# {} shogi self-play\n", settings.variant);
    let _ = writeln!(
        s,
        "Seeded self-play games of {} ({options}) by {players}{}{evaluator}, written by taikyoku {} \
         (dataset schema version {}). `manifest.json` lists the complete shards with each file's size and CRC-32.\n",
        settings.variant,
        if evaluator.is_empty() { "" } else { " " },
        manifest.engine_version,
        manifest.schema_version
    );
    let shards = settings.shard_count();
    let format = match settings.format {
        crate::Format::Arrow => "Arrow IPC files (zstd)",
        crate::Format::Parquet => "Parquet files (zstd)",
    };
    if manifest.complete {
        let _ = writeln!(s, "| | |\n|---|---|");
        let _ = writeln!(s, "| games | {} |", grouped(total.games));
        let _ = writeln!(s, "| positions | {} |", grouped(total.positions));
        let _ = writeln!(
            s,
            "| results | Black {}, White {}, draws {}, truncated {} |",
            grouped(total.black_wins),
            grouped(total.white_wins),
            grouped(total.draws),
            grouped(total.truncated)
        );
        let _ = writeln!(
            s,
            "| files | {shards} shard{} of up to {} games: {format} in batches of up to {} rows, {} bytes |",
            if shards == 1 { "" } else { "s" },
            settings.games_per_shard,
            grouped(tables::ROWS_PER_BATCH as u64),
            grouped(total.bytes)
        );
        let _ = writeln!(s, "| seed, max plies | {}, {} |\n", settings.seed, settings.max_plies);
    } else {
        let _ = writeln!(
            s,
            "**Incomplete:** the run writing this dataset has not finished ({} games in {shards} shard{} of {format}). \
             Run the same command again to finish it; readers see the shards `manifest.json` lists.\n",
            settings.games,
            if shards == 1 { "" } else { "s" }
        );
    }
    let _ = writeln!(s, "## Reading\n\n```python");
    let _ = writeln!(s, "import taikyoku.datasets as tds                   # pip install taikyoku");
    let _ =
        writeln!(s, "ds = tds.open(DIR)                                # checks manifest.json; ds.games, ds.positions");
    let pyarrow_format = if settings.format == crate::Format::Arrow { "ipc" } else { "parquet" };
    let _ = writeln!(s, "import pyarrow.dataset as pds");
    let _ = writeln!(s, "positions = pds.dataset(f\"{{DIR}}/positions\", format=\"{pyarrow_format}\")");
    let _ = writeln!(s, "import datasets                                   # Hugging Face, from the configs above");
    let _ = writeln!(s, "positions = datasets.load_dataset(DIR, \"positions\", split=\"train\")");
    let _ = writeln!(s, "```\n");
    let _ = writeln!(
        s,
        "Actions (docs/ACTIONS.md) are in the **mover's frame** (the board turned 180 degrees when White moves); \
         boards are in Black's view; `outcome` and `root_value` are from the view of the side to move. \
         Compact board code: {}.\n",
        tables::BOARD_CODE
    );
    if settings.store_legal_actions {
        let _ = writeln!(
            s,
            "Each position also lists its legal actions (`legal_actions`, sorted, mover's frame), the support of a policy \
             over the visit counts: policy targets need no replay.\n"
        );
    }
    for table in ["positions", "games"] {
        let schema = tables::table_schema(table, settings).expect("a known table");
        let _ = writeln!(s, "## `{table}`\n\n| column | type | meaning |\n|---|---|---|");
        for field in schema.fields() {
            let mut meaning = field.metadata().get(tables::DESCRIPTION).cloned().unwrap_or_default();
            if field.name() == "board" {
                meaning = "the compact board (above)".into();
            }
            let _ = writeln!(s, "| `{}` | {} | {} |", field.name(), type_name(field.data_type()), meaning);
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(
        s,
        "## Settings\n\n```json\n{}\n```",
        serde_json::to_string_pretty(settings).expect("settings serialize")
    );
    s
}
