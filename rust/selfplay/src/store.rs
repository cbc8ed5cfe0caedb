//! Where a dataset lives: a directory on this machine (`LocalStore`), or any other storage that
//! implements `Store` (the Python bindings wrap a pyarrow filesystem, for object stores and
//! shared file systems seen through a URI). The dataset logic (manifest, checks, repair) is
//! written once, against this trait.
//!
//! Paths are relative to the dataset root, `/`-separated (`games/part-00000.arrow`); `""` is
//! the root itself.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// What is at a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// Nothing is there.
    Missing,
    /// A file (for `LocalStore`, anything but a directory).
    File,
    /// A directory.
    Directory,
}

/// The operations a dataset needs of its storage.
pub trait Store: Send + Sync {
    /// The path as a user would name it (for messages).
    fn describe(&self, path: &str) -> String;
    /// What is at `path`; a path that does not exist is `Entry::Missing`, not an error.
    fn entry(&self, path: &str) -> io::Result<Entry>;
    /// The names in a directory.
    fn list(&self, dir: &str) -> io::Result<Vec<String>>;
    /// The whole contents of a file.
    fn read(&self, path: &str) -> io::Result<Vec<u8>>;
    /// Writes `data` atomically: under `path.tmp`, flushed, then renamed over `path`.
    fn write(&self, path: &str, data: &[u8]) -> io::Result<()>;
    /// Deletes a file.
    fn remove(&self, path: &str) -> io::Result<()>;
    /// Creates a directory and its missing parents.
    fn create_dir(&self, dir: &str) -> io::Result<()>;
    /// Removes an empty directory.
    fn remove_dir(&self, dir: &str) -> io::Result<()>;
    /// Directories above the root that do not exist yet (the root first): a failed first run
    /// removes them again. Only meaningful for local directories.
    fn missing_ancestors(&self) -> Vec<PathBuf> {
        Vec::new()
    }
    /// Takes the dataset's writer lock without waiting (the root must exist): `Ok(None)` where
    /// the storage has no locks (object stores: one writer at a time is then the user's
    /// affair), `Err(LockError::Busy)` naming the holder while another process holds it.
    fn lock(&self) -> Result<Option<WriterLock>, LockError> {
        Ok(None)
    }
}

/// The writer lock's file in a local dataset directory (ignored when the directory's contents
/// are looked at: a dataset, or an empty directory, may hold one).
pub const LOCK_FILE: &str = ".taikyoku-writer.lock";

/// Why the writer lock was not taken.
#[derive(Debug)]
pub enum LockError {
    /// Another process holds it: who (pid, host, since when, its command line).
    Busy(String),
    /// The lock file could not be opened or locked.
    Io(io::Error),
}

/// A dataset directory's writer lock: an advisory lock (`flock`) on `LOCK_FILE` in the
/// directory, which says who holds it. The operating system releases it when the process
/// ends, however it ends, so a killed run's lock file is taken over by the next writer. Dropping
/// it removes the file (`release`), then closes it.
#[derive(Debug)]
pub struct WriterLock {
    file: fs::File,
    path: PathBuf,
    released: std::sync::atomic::AtomicBool,
}

impl WriterLock {
    /// Removes the lock file (once), keeping the lock held until the value is dropped: a run
    /// that removes the directory it created does this first. A writer waiting on the removed
    /// file then finds it gone and locks a new one.
    pub fn release(&self) {
        if !self.released.swap(true, std::sync::atomic::Ordering::SeqCst) {
            let _ = fs::remove_file(&self.path);
        }
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        self.release();
    }
}

/// Whether `file` is still the one at `path` (its last holder may have removed it, and a new
/// writer created another, while this process waited for it).
#[cfg(unix)]
fn same_file(file: &fs::File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_: &fs::File, path: &Path) -> bool {
    path.exists()
}

/// The holder's description written into the lock file: pid, host, start time and command.
fn holder_record() -> String {
    let host = fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_string())
        .unwrap_or_default();
    let started = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let command: Vec<String> = std::env::args().collect();
    serde_json::json!({ "pid": std::process::id(), "host": host, "started": started, "command": command.join(" ") })
        .to_string()
}

/// The holder as a message names it, from the lock file's record.
fn describe_holder(record: &str) -> String {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(record) else {
        return "another process (it has not said which yet)".into();
    };
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let since =
        value["started"].as_u64().map(|s| format!(", running for {} s", now.saturating_sub(s))).unwrap_or_default();
    let host = value["host"].as_str().filter(|h| !h.is_empty()).map(|h| format!(" on {h}")).unwrap_or_default();
    let command = value["command"].as_str().map(|c| format!(": {c}")).unwrap_or_default();
    match value["pid"].as_u64() {
        Some(pid) => format!("process {pid}{host}{since}{command}"),
        None => "another process".into(),
    }
}

/// A dataset in a directory of this machine's file system.
pub struct LocalStore {
    root: PathBuf,
}

impl LocalStore {
    /// A store rooted at `root`, which need not exist yet: nothing is touched until used.
    pub fn new(root: &Path) -> LocalStore {
        LocalStore { root: root.to_path_buf() }
    }

    fn path(&self, relative: &str) -> PathBuf {
        if relative.is_empty() {
            self.root.clone()
        } else {
            self.root.join(relative)
        }
    }
}

/// Writes `data` to `path` and flushes it to the disk (a full disk is an error here, not later).
pub fn write_durably(path: &Path, data: &[u8]) -> io::Result<()> {
    let mut file = fs::File::create(path)?;
    file.write_all(data)?;
    file.sync_all()
}

impl Store for LocalStore {
    fn describe(&self, path: &str) -> String {
        self.path(path).display().to_string()
    }

    fn entry(&self, path: &str) -> io::Result<Entry> {
        match fs::metadata(self.path(path)) {
            Ok(m) if m.is_dir() => Ok(Entry::Directory),
            Ok(_) => Ok(Entry::File),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Entry::Missing),
            Err(e) => Err(e),
        }
    }

    fn list(&self, dir: &str) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in fs::read_dir(self.path(dir))? {
            names.push(entry?.file_name().to_string_lossy().into_owned());
        }
        names.sort();
        Ok(names)
    }

    fn read(&self, path: &str) -> io::Result<Vec<u8>> {
        fs::read(self.path(path))
    }

    fn write(&self, path: &str, data: &[u8]) -> io::Result<()> {
        let final_path = self.path(path);
        let temporary = self.path(&format!("{path}.tmp"));
        let result = write_durably(&temporary, data).and_then(|()| fs::rename(&temporary, &final_path));
        if result.is_err() {
            let _ = fs::remove_file(&temporary);
        }
        result
    }

    fn remove(&self, path: &str) -> io::Result<()> {
        fs::remove_file(self.path(path))
    }

    fn create_dir(&self, dir: &str) -> io::Result<()> {
        fs::create_dir_all(self.path(dir))
    }

    fn remove_dir(&self, dir: &str) -> io::Result<()> {
        fs::remove_dir(self.path(dir))
    }

    fn missing_ancestors(&self) -> Vec<PathBuf> {
        self.root.ancestors().take_while(|d| !d.as_os_str().is_empty() && !d.exists()).map(Path::to_path_buf).collect()
    }

    fn lock(&self) -> Result<Option<WriterLock>, LockError> {
        let path = self.path(LOCK_FILE);
        loop {
            let file = fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(LockError::Io)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(fs::TryLockError::WouldBlock) => {
                    return Err(LockError::Busy(describe_holder(&fs::read_to_string(&path).unwrap_or_default())));
                }
                Err(fs::TryLockError::Error(e)) => return Err(LockError::Io(e)),
            }
            if !same_file(&file, &path) {
                continue; // its holder removed it as this process locked it: lock the new one
            }
            let lock = WriterLock { file, path, released: std::sync::atomic::AtomicBool::new(false) };
            let record = holder_record();
            lock.file.set_len(0).and_then(|()| (&lock.file).write_all(record.as_bytes())).map_err(LockError::Io)?;
            return Ok(Some(lock));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_is_reported() {
        let full = Path::new("/dev/full");
        if !full.exists() {
            return;
        }
        let error = write_durably(full, &[0u8; 1 << 16]).unwrap_err();
        assert!(error.to_string().to_lowercase().contains("space"), "{error}");
    }

    #[test]
    fn one_writer_lock_at_a_time_and_a_stale_one_is_free() {
        let dir = std::env::temp_dir().join(format!("taikyoku-lock-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let store = LocalStore::new(&dir);
        let first = store.lock().unwrap().expect("local directories have a lock");
        let record = fs::read_to_string(dir.join(LOCK_FILE)).unwrap();
        assert!(record.contains(&format!("\"pid\":{}", std::process::id())), "{record}");
        match store.lock() {
            Err(LockError::Busy(holder)) => {
                assert!(holder.starts_with(&format!("process {}", std::process::id())), "{holder}")
            }
            other => panic!("a second writer got {other:?}"),
        }
        drop(first);
        assert!(!dir.join(LOCK_FILE).exists(), "the lock file goes with the lock");
        // A killed writer's file, unlocked: taken over at once.
        fs::write(dir.join(LOCK_FILE), "{\"pid\": 1}").unwrap();
        let again = store.lock().unwrap().unwrap();
        // Released (the file removed) while another writer waits on it: the next one locks anew.
        again.release();
        let next = store.lock().unwrap().unwrap();
        drop(again);
        assert!(dir.join(LOCK_FILE).exists(), "dropping a released lock leaves the next writer's file alone");
        drop(next);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn writes_are_atomic_and_listed() {
        let dir = std::env::temp_dir().join(format!("taikyoku-store-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let store = LocalStore::new(&dir);
        assert_eq!(store.entry("").unwrap(), Entry::Missing);
        assert_eq!(store.missing_ancestors(), vec![dir.clone()]);
        store.create_dir("games").unwrap();
        store.write("games/a", b"one").unwrap();
        store.write("games/a", b"two").unwrap();
        assert_eq!(store.read("games/a").unwrap(), b"two");
        assert_eq!(store.list("games").unwrap(), vec!["a".to_string()]);
        assert_eq!(store.entry("games").unwrap(), Entry::Directory);
        store.remove("games/a").unwrap();
        store.remove_dir("games").unwrap();
        let _ = fs::remove_dir_all(&dir);
    }
}
