//! Worker threads that survive `fork`.
//!
//! A rayon pool's threads do not exist in a forked child (a torch DataLoader worker, a
//! `multiprocessing` pool): the first parallel call there would wait for them forever. Every
//! parallel call of the bindings runs on a `Workers`, which builds its pool in the process that
//! uses it and builds a new one when the process id changes. The parent's pool is leaked in the
//! child on purpose: dropping it would signal threads that are not there.

use crate::errors::invalid;
use pyo3::PyResult;
use rayon::{ThreadPool, ThreadPoolBuilder};
use std::sync::{Arc, Mutex};

pub struct Workers {
    /// `None`: rayon's default (RAYON_NUM_THREADS, else one per core).
    threads: Option<usize>,
    /// The pool and the process it was built in.
    pool: Mutex<Option<(u32, Arc<ThreadPool>)>>,
}

/// The pool of calls that do not ask for a thread count.
pub static DEFAULT: Workers = Workers::new(None);

impl Workers {
    pub const fn new(threads: Option<usize>) -> Workers {
        Workers { threads, pool: Mutex::new(None) }
    }

    pub fn threads(&self) -> Option<usize> {
        self.threads
    }

    fn pool(&self) -> PyResult<Arc<ThreadPool>> {
        let pid = std::process::id();
        let mut slot = self.pool.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((owner, pool)) = slot.as_ref() {
            if *owner == pid {
                return Ok(pool.clone());
            }
        }
        if let Some((_, inherited)) = slot.take() {
            std::mem::forget(inherited);
        }
        let mut builder = ThreadPoolBuilder::new().thread_name(|i| format!("taikyoku-{i}"));
        if let Some(threads) = self.threads {
            builder = builder.num_threads(threads);
        }
        let pool = Arc::new(builder.build().map_err(|e| invalid(format!("cannot start worker threads: {e}")))?);
        *slot = Some((pid, pool.clone()));
        Ok(pool)
    }

    /// Runs `work` on the pool: rayon's parallel iterators inside it use these threads.
    pub fn install<R: Send>(&self, work: impl FnOnce() -> R + Send) -> PyResult<R> {
        Ok(self.pool()?.install(work))
    }
}
