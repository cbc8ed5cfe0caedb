//! Observation arrays written into memory that is reused once the arrays are freed.
//!
//! An environment returns a fresh observation every step (the caller may keep it, in a replay
//! buffer say), 789 KB for one Taikyoku board and 64 times that for `VectorEnv(64)`. Fresh
//! memory from the allocator costs more than writing the observation: large blocks come straight
//! from the kernel, page-faulted and zeroed page by page on first write. Each env keeps a small
//! `Pool` of blocks instead: an array it returns owns its block (through its `base`, an
//! `ObservationMemory`), and when the array and every view of it are gone the block goes back to
//! the pool, already mapped, for a later step to clear and write. A block is only ever reused
//! after Python freed the array that held it, so no returned observation changes afterwards.

use crate::errors::{invalid, shield};
use crate::game::Game;
use crate::observations::Dtype;
use crate::variants;
use crate::workers::Workers;
use numpy::ndarray::{ArrayView, IxDyn};
use numpy::{Element, PyArrayDyn};
use pyo3::prelude::*;
use rayon::prelude::*;
use std::sync::{Arc, Mutex};
use taikyoku_engine::rl::actions::{Frame, GRID};
use taikyoku_engine::rl::observation::{self, Cell, Layout};
use taikyoku_engine::{self as engine, Color};

/// Freed blocks kept for reuse by one pool (a step needs one while the caller still holds the
/// previous step's observation).
const KEEP: usize = 2;

/// A reused block at least this large is cleared with streaming stores (`clear_streaming`): it
/// has left the caches since it was last written (`VectorEnv(64)`'s is 50 MB), and clearing it
/// through them would read every line from memory before writing it.
const STREAMED_BYTES: usize = 8 << 20;

/// Free blocks of one environment, waiting to be written again.
#[derive(Default)]
pub struct Pool {
    free: Mutex<Vec<Box<[u64]>>>,
}

impl Pool {
    /// A block of `words` 8-byte words and whether it is zeroed: a freed one of that size, else
    /// fresh zeroed memory (None if the allocator has none).
    fn take(&self, words: usize) -> Option<(Box<[u64]>, bool)> {
        {
            let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(i) = free.iter().position(|b| b.len() == words) {
                return Some((free.swap_remove(i), false));
            }
        }
        zeroed_block(words).map(|block| (block, true))
    }

    /// Allocates one block of `bytes` for later (untouched zero pages until written); false if
    /// the allocator has not that much memory.
    pub fn reserve(&self, bytes: usize) -> bool {
        match self.take(bytes.div_ceil(8)) {
            Some((block, _)) => {
                self.give_back(block);
                true
            }
            None => false,
        }
    }

    fn give_back(&self, block: Box<[u64]>) {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        if free.len() >= KEEP {
            free.remove(0);
        }
        free.push(block);
    }
}

/// Zeros `values` with stores that bypass the caches (x86-64; elsewhere a plain fill): a
/// cache-line write then needs no read of the line first, half the memory traffic of a plain fill
/// for memory that is not cached. (`STREAMED_BYTES`: for cached memory it is slower.)
fn clear_streaming<T: Cell>(values: &mut [T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_setzero_si128, _mm_sfence, _mm_stream_si128};
        let bytes = std::mem::size_of_val(values);
        // SAFETY: `values` is `bytes` bytes of plain numbers (u8, u16 or f32), for which all
        // zero bits are zero; SSE2 is part of x86-64.
        let bytes = unsafe { std::slice::from_raw_parts_mut(values.as_mut_ptr() as *mut u8, bytes) };
        let head = bytes.as_ptr().align_offset(16).min(bytes.len());
        let (head, rest) = bytes.split_at_mut(head);
        head.fill(0);
        let lines = rest.len() / 16;
        let (aligned, tail) = rest.split_at_mut(lines * 16);
        unsafe {
            let zero = _mm_setzero_si128();
            let start = aligned.as_mut_ptr() as *mut __m128i;
            for i in 0..lines {
                _mm_stream_si128(start.add(i), zero);
            }
            // The streamed stores are ordered before the writes that follow.
            _mm_sfence();
        }
        tail.fill(0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    values.fill(T::ZERO);
}

/// Zeroed memory through calloc: large blocks come as untouched zero pages, not written twice.
fn zeroed_block(words: usize) -> Option<Box<[u64]>> {
    if words == 0 {
        return Some(Box::new([]));
    }
    let layout = std::alloc::Layout::array::<u64>(words).ok()?;
    // SAFETY: the layout has a non-zero size; a non-null result is `words` zeroed u64s allocated
    // with the layout Box<[u64]> frees with.
    unsafe {
        let ptr = std::alloc::alloc_zeroed(layout) as *mut u64;
        (!ptr.is_null()).then(|| Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, words)))
    }
}

/// The memory under an observation array (its `base`): back to its pool when the array goes.
#[pyclass(module = "taikyoku._core", frozen)]
pub struct ObservationMemory {
    block: Box<[u64]>,
    pool: Arc<Pool>,
}

impl Drop for ObservationMemory {
    fn drop(&mut self) {
        self.pool.give_back(std::mem::take(&mut self.block));
    }
}

/// A new array of `shape` in a block of `pool`, written by `fill(values, zeroed)` with the GIL
/// released (`zeroed`: the block is all zeros already, else it holds anything).
pub fn pooled_array<T: Cell + Element>(
    py: Python<'_>,
    pool: &Arc<Pool>,
    shape: Vec<usize>,
    fill: impl FnOnce(&mut [T], bool) + Send,
) -> PyResult<PyObject> {
    let len = shape.iter().product::<usize>();
    let bytes = len.checked_mul(std::mem::size_of::<T>()).filter(|&b| b <= isize::MAX as usize);
    let (mut block, zeroed) = bytes.and_then(|b| pool.take(b.div_ceil(8))).ok_or_else(|| {
        invalid(format!("an observation array of shape {shape:?} does not fit in this machine's memory"))
    })?;
    let ptr = block.as_mut_ptr() as *mut T;
    {
        // SAFETY: the block holds at least `len` values of T (size 1, 2 or 4, aligned to 8); it is
        // not shared with anything yet.
        let values = unsafe { std::slice::from_raw_parts_mut(ptr, len) };
        shield(|| {
            py.allow_threads(|| fill(values, zeroed));
            Ok(())
        })?;
    }
    // Moving the Box does not move its heap memory, which the array points into.
    let memory = Bound::new(py, ObservationMemory { block, pool: pool.clone() })?;
    // SAFETY: as above; the memory object is the array's base, so the block lives (and is never
    // reused) as long as the array or any view of it.
    let view = unsafe { ArrayView::from_shape_ptr(IxDyn(&shape), ptr as *const T) };
    let array = unsafe { PyArrayDyn::<T>::borrow_from_array_bound(&view, memory.into_any()) };
    Ok(array.into_any().unbind())
}

/// The observations of `games` (all of one variant, `viewer` of each as `write_for` takes it),
/// (N, 36, 36, P) when `batch` else (36, 36, P), in a block of `pool`, written in parallel on
/// `workers` when there are several.
#[allow(clippy::too_many_arguments)]
pub fn observe(
    py: Python<'_>,
    pool: &Arc<Pool>,
    games: &[(&engine::Game, Color)],
    frame: Frame,
    layout: Layout,
    dtype: Dtype,
    batch: bool,
    workers: Option<&Workers>,
) -> PyResult<PyObject> {
    fn write_as<T: Cell + Element>(
        py: Python<'_>,
        pool: &Arc<Pool>,
        games: &[(&engine::Game, Color)],
        frame: Frame,
        layout: Layout,
        shape: Vec<usize>,
        workers: Option<&Workers>,
    ) -> PyResult<PyObject> {
        let mut failed = None;
        let array = pooled_array::<T>(py, pool, shape, |out, zeroed| {
            let len = out.len() / games.len().max(1);
            let streamed = !zeroed && std::mem::size_of_val(out) >= STREAMED_BYTES;
            let write = |(chunk, (game, viewer)): (&mut [T], &(&engine::Game, Color))| {
                if streamed {
                    clear_streaming(chunk);
                }
                observation::write_for(game, *viewer, frame, layout, chunk, zeroed || streamed)
            };
            match workers {
                Some(workers) if games.len() > 1 => {
                    failed = workers.install(|| out.par_chunks_mut(len).zip(games.par_iter()).for_each(write)).err();
                }
                _ => out.chunks_mut(len).zip(games.iter()).for_each(write),
            }
        })?;
        failed.map_or(Ok(array), Err)
    }
    let planes = observation::plane_count(&games[0].0.position.variant, layout);
    let mut shape = vec![GRID, GRID, planes];
    if batch {
        shape.insert(0, games.len());
    }
    match dtype {
        Dtype::U8 => write_as::<u8>(py, pool, games, frame, layout, shape, workers),
        Dtype::U16 => write_as::<u16>(py, pool, games, frame, layout, shape, workers),
        Dtype::F32 => write_as::<f32>(py, pool, games, frame, layout, shape, workers),
    }
}

/// Writes the observations of one environment's games, each in a fresh array that reuses the
/// memory of the arrays already freed (see the module's documentation). The same values as
/// `Game.observation` with the same frame, layout and dtype.
#[pyclass(module = "taikyoku._core")]
pub struct ObservationWriter {
    variant: Arc<taikyoku_engine::Variant>,
    frame: Frame,
    layout: Layout,
    dtype: Dtype,
    pool: Arc<Pool>,
}

#[pymethods]
impl ObservationWriter {
    #[new]
    #[pyo3(signature = (variant = "taikyoku", options = None, frame = "mover", compact = false, dtype = None))]
    fn new(
        py: Python<'_>,
        variant: &str,
        options: Option<Vec<String>>,
        frame: &str,
        compact: bool,
        dtype: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<ObservationWriter> {
        let variant = variants::variant(variant, &options.unwrap_or_default())?;
        let layout = crate::convert::layout(compact);
        let dtype = Dtype::parse(py, dtype, layout, &variant)?;
        let frame = crate::convert::parse(frame)?;
        Ok(ObservationWriter { variant, frame, layout, dtype, pool: Arc::default() })
    }

    /// The observation of `game` (a game of the writer's variant and options), as
    /// `game.observation(dtype, frame, compact)`; with `viewer` (`"black"` or `"white"`), as that
    /// side sees it (its pieces in the mover planes, the board turned to it in the mover frame).
    #[pyo3(signature = (game, viewer = None))]
    fn observe(&self, py: Python<'_>, game: PyRef<'_, Game>, viewer: Option<&str>) -> PyResult<PyObject> {
        let variant = &game.game.position.variant;
        if variant.name != self.variant.name || variant.options != self.variant.options {
            return Err(invalid(format!(
                "this observation writer is for {} {:?}, not {} {:?}",
                self.variant.name, self.variant.options, variant.name, variant.options
            )));
        }
        let viewer = match viewer {
            Some(name) => crate::convert::color(name)?,
            None => game.game.side_to_move(),
        };
        observe(py, &self.pool, &[(&game.game, viewer)], self.frame, self.layout, self.dtype, false, None)
    }

    /// The dtype's name.
    #[getter]
    fn dtype(&self) -> &'static str {
        self.dtype.name()
    }
}
