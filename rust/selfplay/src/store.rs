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
