//! The dataset directory: its manifest, checked shards, and the writer that adds shards to it.
//!
//! The manifest is the dataset's index, but it is not trusted blindly: on resume every listed
//! shard is checked (its place in the run, the size and CRC-32 of both files, the counts against
//! the games file), and a shard that fails a check is generated again, which, the output being
//! deterministic, restores exactly the bytes it should have had.

use crate::play::GameRecord;
use crate::settings::Settings;
use crate::{tables, RunError, Summary};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

fn io_error(what: &str, path: &Path, e: std::io::Error) -> RunError {
    RunError::Io(format!("{what} {}: {e}", path.display()))
}

/// Counts of a shard, or of a whole dataset.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
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
    pub fn add(&mut self, other: &Tally) {
        self.games += other.games;
        self.positions += other.positions;
        self.black_wins += other.black_wins;
        self.white_wins += other.white_wins;
        self.draws += other.draws;
        self.truncated += other.truncated;
        self.bytes += other.bytes;
    }

    /// The counts of some games (`bytes` zero).
    pub fn of<'a>(results: impl Iterator<Item = (Option<&'a str>, u64)>) -> Tally {
        let mut tally = Tally::default();
        for (result, plies) in results {
            tally.games += 1;
            tally.positions += plies;
            match result {
                Some("black") => tally.black_wins += 1,
                Some("white") => tally.white_wins += 1,
                Some(_) => tally.draws += 1,
                None => tally.truncated += 1,
            }
        }
        tally
    }
}

/// Size and CRC-32 (IEEE, as zlib's `crc32`) of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileCheck {
    pub bytes: u64,
    pub crc32: u32,
}

impl FileCheck {
    pub fn of(path: &Path) -> Result<FileCheck, RunError> {
        let data = fs::read(path).map_err(|e| io_error("reading", path, e))?;
        Ok(FileCheck { bytes: data.len() as u64, crc32: crc32fast::hash(&data) })
    }
}

/// The checks of a shard's two files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardChecks {
    pub games: FileCheck,
    pub positions: FileCheck,
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
    /// Absent in manifests written before checks existed: such shards are regenerated on resume.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<ShardChecks>,
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

/// The engine version datasets are labelled with.
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");

impl Manifest {
    fn new(settings: &Settings) -> Manifest {
        Manifest {
            schema_version: tables::SCHEMA_VERSION,
            engine_version: ENGINE_VERSION.into(),
            settings: settings.clone(),
            seeding: "game seed = splitmix64(seed ^ splitmix64(game_id)); moves from ChaCha8Rng::seed_from_u64(game seed)".into(),
            shards: Vec::new(),
            complete: false,
        }
    }

    pub fn read(dir: &Path) -> Result<Manifest, RunError> {
        let path = dir.join("manifest.json");
        let text = fs::read_to_string(&path).map_err(|e| io_error("reading", &path, e))?;
        serde_json::from_str(&text).map_err(|e| {
            RunError::Usage(format!(
                "{} is not a readable taikyoku manifest ({e}); move the directory aside and start again",
                path.display()
            ))
        })
    }

    /// Writes the manifest atomically (temporary file, then rename).
    fn write(&self, dir: &Path) -> Result<(), RunError> {
        let path = dir.join("manifest.json");
        let temporary = dir.join("manifest.json.tmp");
        let text = serde_json::to_string_pretty(self).expect("a manifest serializes");
        fs::write(&temporary, text + "\n").map_err(|e| io_error("writing", &temporary, e))?;
        fs::rename(&temporary, &path).map_err(|e| io_error("renaming", &temporary, e))
    }

    /// The shard of `index` of a run with `settings`, as the manifest should list it.
    fn file_names(settings: &Settings, index: u64) -> (String, String) {
        let extension = settings.format.extension();
        (format!("games/part-{index:05}.{extension}"), format!("positions/part-{index:05}.{extension}"))
    }
}

/// Why a listed shard cannot be kept, or `None` if it checks out.
fn damage(out: &Path, settings: &Settings, shard: &Shard) -> Option<String> {
    let (games_file, positions_file) = Manifest::file_names(settings, shard.index);
    let range = settings.shard_games(shard.index);
    if shard.index >= settings.shard_count() || shard.first_game != range.start || shard.tally.games != range.end - range.start {
        return Some("its entry does not match the run's shard layout".into());
    }
    if shard.games_file != games_file || shard.positions_file != positions_file {
        return Some("its entry names other files".into());
    }
    let Some(checks) = shard.checks else { return Some("its entry has no checksums (an older manifest)".into()) };
    for (name, check) in [(&games_file, checks.games), (&positions_file, checks.positions)] {
        match FileCheck::of(&out.join(name)) {
            Err(_) => return Some(format!("{name} is missing or unreadable")),
            Ok(found) if found.bytes != check.bytes => {
                return Some(format!("{name} has {} bytes, the manifest says {}", found.bytes, check.bytes))
            }
            Ok(found) if found.crc32 != check.crc32 => return Some(format!("{name} fails its CRC-32 check")),
            Ok(_) => {}
        }
    }
    match tables::read_games_tally(&out.join(&games_file), settings.format) {
        Err(e) => Some(format!("{games_file} cannot be read: {e}")),
        Ok(mut counted) => {
            counted.bytes = checks.games.bytes + checks.positions.bytes;
            (counted != shard.tally).then(|| "its counts disagree with its games file".into())
        }
    }
}

/// What a run created, to remove again if it fails before any shard is complete.
#[derive(Default)]
struct Created {
    /// Directories that did not exist, the output directory first, then its missing parents.
    directories: Vec<PathBuf>,
    /// Whether the output directory was new or empty.
    contents: bool,
}

/// The dataset directory a run writes to.
pub struct Writer {
    out: PathBuf,
    settings: Settings,
    manifest: Mutex<Manifest>,
    generated: Mutex<crate::Tally>,
    repaired: Vec<String>,
    created: Created,
}

impl Writer {
    /// Checks `out` and returns the writer with the indices of the shards still to play: a new
    /// dataset, or the matching old one whose listed shards check out. Nothing is written when
    /// this fails.
    pub fn open(out: &Path, settings: &Settings) -> Result<(Writer, Vec<u64>), RunError> {
        if out.as_os_str().is_empty() {
            return Err(RunError::Usage("the output directory is an empty path: name a directory".into()));
        }
        if out.exists() && !out.is_dir() {
            return Err(RunError::Usage(format!("{} exists and is not a directory", out.display())));
        }
        let mut created = Created::default();
        let mut manifest = Manifest::new(settings);
        let mut repaired = Vec::new();
        if !out.exists() {
            let directories = out.ancestors().take_while(|d| !d.as_os_str().is_empty() && !d.exists()).map(Path::to_path_buf).collect();
            created = Created { directories, contents: true };
        } else if fs::read_dir(out).map_err(|e| io_error("listing", out, e))?.next().is_none() {
            created.contents = true;
        } else if !out.join("manifest.json").is_file() {
            return Err(RunError::Usage(format!(
                "output directory {} is not empty and holds no taikyoku dataset: choose a new or empty directory",
                out.display()
            )));
        } else {
            let old = Manifest::read(out)?;
            if old.settings != *settings || old.schema_version != tables::SCHEMA_VERSION {
                return Err(RunError::Usage(format!(
                    "{} holds a dataset made with other settings ({}); use a new directory, or the same settings to resume",
                    out.display(),
                    serde_json::to_string(&old.settings).unwrap_or_default()
                )));
            }
            if old.engine_version != ENGINE_VERSION {
                return Err(RunError::Usage(format!(
                    "{} was made by taikyoku {}, this is {ENGINE_VERSION}: games may differ between versions, so it cannot be resumed; use a new directory",
                    out.display(),
                    old.engine_version
                )));
            }
            let mut seen = BTreeSet::new();
            for shard in old.shards {
                if !seen.insert(shard.index) {
                    repaired.push(format!("shard {}: listed twice in the manifest", shard.index));
                    continue;
                }
                match damage(out, settings, &shard) {
                    None => manifest.shards.push(shard),
                    Some(why) => repaired.push(format!("shard {}: {why}", shard.index)),
                }
            }
        }
        let listed: BTreeSet<u64> = manifest.shards.iter().map(|s| s.index).collect();
        let missing: Vec<u64> = (0..settings.shard_count()).filter(|i| !listed.contains(i)).collect();
        let writer = Writer {
            out: out.to_path_buf(),
            settings: settings.clone(),
            manifest: Mutex::new(manifest),
            generated: Mutex::new(Tally::default()),
            repaired,
            created,
        };
        writer.prepare()?;
        Ok((writer, missing))
    }

    /// Creates the directories, clears leftovers of an interrupted run, writes the manifest.
    fn prepare(&self) -> Result<(), RunError> {
        for sub in ["games", "positions"] {
            let dir = self.out.join(sub);
            if let Err(e) = fs::create_dir_all(&dir) {
                self.abandon();
                return Err(io_error("creating", &dir, e));
            }
            for entry in fs::read_dir(&dir).map_err(|e| io_error("listing", &dir, e))?.flatten() {
                if entry.path().extension().is_some_and(|x| x == "tmp") {
                    let _ = fs::remove_file(entry.path());
                }
            }
        }
        let mut manifest = self.lock_manifest();
        manifest.shards.sort_by_key(|s| s.index);
        manifest.complete = false;
        manifest.write(&self.out).inspect_err(|_| self.abandon_locked(&manifest))
    }

    fn lock_manifest(&self) -> std::sync::MutexGuard<'_, Manifest> {
        self.manifest.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes shard `index` (its games' records, any order) and lists it in the manifest.
    pub fn commit(&self, index: u64, records: &[GameRecord]) -> Result<(), RunError> {
        let mut sorted: Vec<&GameRecord> = records.iter().collect();
        sorted.sort_by_key(|r| r.game_id);
        let shard = write_shard(&self.out, &self.settings, index, &sorted)?;
        self.generated.lock().unwrap_or_else(|e| e.into_inner()).add(&shard.tally);
        let mut manifest = self.lock_manifest();
        manifest.shards.push(shard);
        manifest.shards.sort_by_key(|s| s.index);
        manifest.write(&self.out)
    }

    /// Marks the dataset complete and sums it up.
    pub fn finish(self, started: Instant) -> Result<Summary, RunError> {
        let mut manifest = self.manifest.into_inner().unwrap_or_else(|e| e.into_inner());
        manifest.complete = true;
        manifest.write(&self.out)?;
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
        let _ = fs::remove_file(self.out.join("manifest.json"));
        let _ = fs::remove_file(self.out.join("manifest.json.tmp"));
        for sub in ["games", "positions"] {
            let dir = self.out.join(sub);
            if let Ok(entries) = fs::read_dir(&dir) {
                for entry in entries.flatten() {
                    let _ = fs::remove_file(entry.path());
                }
            }
            let _ = fs::remove_dir(&dir);
        }
        for dir in &self.created.directories {
            let _ = fs::remove_dir(dir);
        }
    }
}

/// Writes one shard's two files, each under a temporary name renamed when complete.
fn write_shard(out: &Path, settings: &Settings, index: u64, records: &[&GameRecord]) -> Result<Shard, RunError> {
    let (games_file, positions_file) = Manifest::file_names(settings, index);
    let usage = |e: arrow_schema::ArrowError| RunError::Usage(format!("building shard {index}: {e}"));
    let positions: Vec<_> = records.iter().map(|r| tables::positions_batch(r)).collect::<Result<_, _>>().map_err(usage)?;
    let games = vec![tables::games_batch(records, &settings.variant, settings.players.name()).map_err(usage)?];
    let mut checks = Vec::with_capacity(2);
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
        checks.push(FileCheck::of(&path)?);
    }
    let mut tally = Tally::of(records.iter().map(|r| (r.result, r.plies() as u64)));
    tally.bytes = checks[0].bytes + checks[1].bytes;
    Ok(Shard {
        index,
        first_game: settings.shard_games(index).start,
        tally,
        games_file,
        positions_file,
        checks: Some(ShardChecks { games: checks[1], positions: checks[0] }),
    })
}
