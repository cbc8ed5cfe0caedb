//! Dataset roots named by a URI (`s3://bucket/data`, `gs://...`, `file:///mnt/nfs/data`): a
//! `Store` over a pyarrow filesystem, so that self-play and its Ray driver write to any storage
//! pyarrow reaches. A plain path is a `LocalStore` (no Python involved).

use crate::errors::invalid;
use pyo3::prelude::*;
use std::io;
use std::sync::Arc;
use taikyoku_selfplay::store::{Entry, Store};
use taikyoku_selfplay::{self as selfplay};

/// A dataset root on a pyarrow filesystem: the filesystem object and the root's path in it.
struct ArrowStore {
    filesystem: PyObject,
    root: String,
    uri: String,
}

fn failed(e: PyErr) -> io::Error {
    io::Error::other(Python::with_gil(|py| e.value_bound(py).to_string()))
}

impl ArrowStore {
    fn path(&self, relative: &str) -> String {
        if relative.is_empty() {
            self.root.clone()
        } else {
            format!("{}/{relative}", self.root.trim_end_matches('/'))
        }
    }

    fn call<T>(&self, work: impl FnOnce(Python<'_>, &Bound<'_, PyAny>) -> PyResult<T>) -> io::Result<T> {
        Python::with_gil(|py| work(py, self.filesystem.bind(py))).map_err(failed)
    }
}

impl Store for ArrowStore {
    fn describe(&self, path: &str) -> String {
        if path.is_empty() {
            self.uri.clone()
        } else {
            format!("{}/{path}", self.uri.trim_end_matches('/'))
        }
    }

    fn entry(&self, path: &str) -> io::Result<Entry> {
        self.call(|_, fs| {
            let kind: i64 =
                fs.call_method1("get_file_info", (self.path(path),))?.getattr("type")?.getattr("value")?.extract()?;
            // pyarrow.fs.FileType: NotFound 0, Unknown 1, File 2, Directory 3.
            Ok(match kind {
                2 => Entry::File,
                3 => Entry::Directory,
                _ => Entry::Missing,
            })
        })
    }

    fn list(&self, dir: &str) -> io::Result<Vec<String>> {
        self.call(|py, fs| {
            let selector = py.import_bound("pyarrow.fs")?.getattr("FileSelector")?.call1((self.path(dir),))?;
            let infos = fs.call_method1("get_file_info", (selector,))?;
            let mut names: Vec<String> = Vec::new();
            for info in infos.iter()? {
                names.push(info?.getattr("base_name")?.extract()?);
            }
            names.sort();
            Ok(names)
        })
    }

    fn read(&self, path: &str) -> io::Result<Vec<u8>> {
        self.call(|_, fs| {
            let stream = fs.call_method1("open_input_stream", (self.path(path),))?;
            let data: Vec<u8> = stream.call_method0("read")?.extract()?;
            stream.call_method0("close")?;
            Ok(data)
        })
    }

    fn write(&self, path: &str, data: &[u8]) -> io::Result<()> {
        let temporary = self.path(&format!("{path}.tmp"));
        self.call(|py, fs| {
            let stream = fs.call_method1("open_output_stream", (temporary.as_str(),))?;
            stream.call_method1("write", (pyo3::types::PyBytes::new_bound(py, data),))?;
            stream.call_method0("close")?;
            fs.call_method1("move", (temporary.as_str(), self.path(path)))?;
            Ok(())
        })
    }

    fn remove(&self, path: &str) -> io::Result<()> {
        self.call(|_, fs| fs.call_method1("delete_file", (self.path(path),)).map(|_| ()))
    }

    fn create_dir(&self, dir: &str) -> io::Result<()> {
        self.call(|_, fs| fs.call_method1("create_dir", (self.path(dir),)).map(|_| ()))
    }

    fn remove_dir(&self, dir: &str) -> io::Result<()> {
        self.call(|_, fs| fs.call_method1("delete_dir", (self.path(dir),)).map(|_| ()))
    }
}

/// The store of a dataset root: a URI (`scheme://...`) through pyarrow, else a local path.
pub fn open(py: Python<'_>, out: &str) -> PyResult<Arc<dyn Store>> {
    if out.contains("://") {
        let (filesystem, root): (PyObject, String) = py
            .import_bound("pyarrow.fs")?
            .getattr("FileSystem")?
            .call_method1("from_uri", (out,))
            .map_err(|e| {
                invalid(format!("cannot open the dataset root {}: {}", crate::errors::clip(out), e.value_bound(py)))
            })?
            .extract()?;
        return Ok(Arc::new(ArrowStore { filesystem, root, uri: out.to_string() }));
    }
    selfplay::local(std::path::Path::new(out)).map_err(crate::errors::run_error)
}
