//! Self-play runs, dataset decoding and the MCTS opponent: thin wrappers of taikyoku-selfplay
//! and taikyoku-engine.
//!
//! A run without a Python evaluator is played on its own thread while the calling (Python)
//! thread waits with the GIL released, looking for signals every 50 ms: Ctrl-C stops the run
//! within a moment, keeping its complete shards, and raises KeyboardInterrupt. A run with one
//! calls it on the calling thread (the trees are worked on by the run's threads meanwhile), where
//! Ctrl-C reaches it even while it blocks: the KeyboardInterrupt it raises ends the run.

use crate::convert::{self, Int};
use crate::errors::{invalid, run_error, shield, IllegalMoveError, TaikyokuError};
use crate::observations::{self, Dtype};
use crate::variants;
use crate::workers;
use numpy::{PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;
use taikyoku_engine::rl::actions::{GRID, GRID_SQUARES};
use taikyoku_engine::rl::observation::{self, Cell};
use taikyoku_selfplay::network::{self, Batch, BatchEvaluator};
use taikyoku_selfplay::play::GameRecord;
use taikyoku_selfplay::settings::{
    check_integer, check_real, GumbelSettings, NetworkSettings, SettingsError, DEFAULT_SHARD_POSITIONS,
};
use taikyoku_selfplay::{self as selfplay, Control, MctsSettings, Players, RunError, Settings};

/// Runs `work(stop)` on its own thread; the calling thread checks for signals meanwhile and
/// sets `stop` on Ctrl-C (or any exception from a signal handler), which it raises once `work`
/// has returned. The calling thread wakes the moment the work ends, not at its next look for
/// signals: a short run is not rounded up to the polling interval.
fn interruptible<T: Send>(py: Python<'_>, work: impl FnOnce(&AtomicBool) -> T + Send) -> PyResult<T> {
    /// Says the work has ended when dropped: on return and on panic alike.
    struct Ended<'a>(&'a (Mutex<bool>, Condvar));
    impl Drop for Ended<'_> {
        fn drop(&mut self) {
            *self.0 .0.lock().unwrap_or_else(|e| e.into_inner()) = true;
            self.0 .1.notify_all();
        }
    }
    let stop = AtomicBool::new(false);
    let ended = (Mutex::new(false), Condvar::new());
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let _ended = Ended(&ended);
            work(&stop)
        });
        let mut signal: Option<PyErr> = None;
        loop {
            let done = py.allow_threads(|| {
                let (lock, wake) = &ended;
                let guard = lock.lock().unwrap_or_else(|e| e.into_inner());
                *wake
                    .wait_timeout_while(guard, Duration::from_millis(50), |done| !*done)
                    .unwrap_or_else(|e| e.into_inner())
                    .0
            });
            if signal.is_none() {
                if let Err(e) = py.check_signals() {
                    stop.store(true, Ordering::SeqCst);
                    signal = Some(e);
                }
            }
            if done {
                break;
            }
        }
        let value = worker.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        signal.map_or(Ok(value), Err)
    })
}

/// The user's Python evaluator, called through `taikyoku.selfplay._evaluate` (which checks
/// and flattens what it returns). The observations it gets are views of two numpy buffers the
/// run reuses (one per half of the games in play); the legal actions go through two reused
/// int64 buffers. Its own exception is kept to be re-raised as it is.
struct PythonEvaluator<'a> {
    evaluator: &'a PyObject,
    observations: [PyObject; 2],
    /// Reused action and offset buffers of each half (grown when a batch needs more).
    actions: [Option<Py<numpy::PyArray1<i64>>>; 2],
    offsets: [Option<Py<numpy::PyArray1<i64>>>; 2],
    csr: bool,
    failure: &'a Mutex<Option<PyErr>>,
}

/// `buffer[..values.len()]` as a numpy view, growing `buffer` first if it is too small.
fn fill<'py>(
    py: Python<'py>,
    buffer: &mut Option<Py<numpy::PyArray1<i64>>>,
    values: impl ExactSizeIterator<Item = i64>,
) -> PyResult<Bound<'py, PyAny>> {
    let n = values.len();
    if buffer.as_ref().is_none_or(|b| b.bind(py).len() < n) {
        *buffer = Some(numpy::PyArray1::<i64>::zeros_bound(py, (n * 2).max(1024), false).unbind());
    }
    let array = buffer.as_ref().expect("allocated").bind(py);
    {
        let mut view = array.try_readwrite()?;
        for (slot, value) in view.as_slice_mut()?.iter_mut().zip(values) {
            *slot = value;
        }
    }
    array.get_item(pyo3::types::PySlice::new_bound(py, 0, n as isize, 1))
}

impl<O> BatchEvaluator<O> for PythonEvaluator<'_> {
    fn evaluate(&mut self, batch: &Batch<O>) -> Result<(Vec<f32>, Vec<f32>), RunError> {
        Python::with_gil(|py| -> PyResult<(Vec<f32>, Vec<f32>)> {
            // A Ctrl-C that came while the trees were worked on ends the run here.
            py.check_signals()?;
            let rows = pyo3::types::PySlice::new_bound(py, 0, batch.leaves as isize, 1);
            let observations = self.observations[batch.half].bind(py).get_item(rows)?;
            let actions = fill(py, &mut self.actions[batch.half], batch.actions.iter().map(|&a| a as i64))?;
            let offsets = fill(py, &mut self.offsets[batch.half], batch.offsets.iter().map(|&o| o as i64))?;
            let glue = py.import_bound("taikyoku.selfplay")?.getattr("_evaluate")?;
            let (priors, values): (PyReadonlyArray1<'_, f32>, PyReadonlyArray1<'_, f32>) =
                glue.call1((self.evaluator, observations, actions, offsets, self.csr))?.extract()?;
            Ok((priors.as_slice()?.to_vec(), values.as_slice()?.to_vec()))
        })
        .map_err(|e| {
            *self.failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
            RunError::Usage("the evaluator failed".into())
        })
    }
}

/// A numpy buffer's memory, handed to the run's threads (which write it with the GIL
/// released, never while the evaluator holds a view of it: see `network`).
struct Memory<O> {
    data: *mut O,
    len: usize,
}

unsafe impl<O> Send for Memory<O> {}
unsafe impl<O> Sync for Memory<O> {}

impl<O> Memory<O> {
    fn of(array: &Bound<'_, numpy::PyArrayDyn<O>>) -> Memory<O>
    where
        O: numpy::Element,
    {
        use numpy::PyUntypedArrayMethods;
        Memory { data: array.data(), len: array.len() }
    }

    /// # Safety
    /// The array must outlive the slice, and nothing else may touch it meanwhile.
    unsafe fn slice<'a>(&self) -> &'a mut [O] {
        std::slice::from_raw_parts_mut(self.data, self.len)
    }
}

/// A network-guided run with observations of element type `O` (layout `layout`).
#[allow(clippy::too_many_arguments)]
fn network_run<O: Cell + numpy::Element>(
    py: Python<'_>,
    store: std::sync::Arc<dyn taikyoku_selfplay::Store>,
    settings: &Settings,
    threads: Option<usize>,
    concurrent: usize,
    layout: observation::Layout,
    evaluator: &PyObject,
    csr: bool,
    report: &(dyn Fn(&GameRecord) + Sync),
    failure: &Mutex<Option<PyErr>>,
) -> PyResult<Result<selfplay::Summary, RunError>> {
    let variant = variants::variant(&settings.variant, &settings.options)?;
    let leaves = settings.network.as_ref().map_or(1, |n| n.leaves_per_game as usize);
    let rows = network::rows_per_buffer(concurrent, leaves);
    let planes = observation::plane_count(&variant, layout);
    let what = format!("the evaluator's observation buffers ({concurrent} games x {leaves} leaves)");
    let buffers = [
        observations::zeros::<O>(py, &what, vec![rows, GRID, GRID, planes])?,
        observations::zeros::<O>(py, &what, vec![rows, GRID, GRID, planes])?,
    ];
    let memory = [Memory::of(&buffers[0]), Memory::of(&buffers[1])];
    let mut python = PythonEvaluator {
        evaluator,
        observations: [buffers[0].clone().into_any().unbind(), buffers[1].clone().into_any().unbind()],
        actions: [None, None],
        offsets: [None, None],
        csr,
        failure,
    };
    let pool = selfplay::thread_pool(threads).map_err(run_error)?;
    // The run goes on this thread with the GIL released; the evaluator takes it back to run
    // here, where signals are delivered (its KeyboardInterrupt ends the run).
    let stop = AtomicBool::new(false);
    let control = Control { progress: report, stop: &stop };
    // The buffers live in this frame until the run ends; the run writes a half's buffer only
    // while the evaluator is not looking at it.
    let slices = unsafe { [memory[0].slice(), memory[1].slice()] };
    Ok(py.allow_threads(|| network::run(store, settings, concurrent, layout, slices, &mut python, &pool, control)))
}

/// The MCTS settings of a run from the keyword arguments (defaults where `None`).
#[allow(clippy::too_many_arguments)]
fn mcts_settings(
    simulations: Int,
    temperature: Option<f64>,
    temperature_plies: Option<Int>,
    dirichlet_alpha: Option<f64>,
    dirichlet_fraction: Option<f64>,
    c_puct: Option<f64>,
    priors: Option<String>,
    rollout_plies: Option<Int>,
    reuse_tree: Option<bool>,
    opponent_moves: Option<String>,
) -> PyResult<MctsSettings> {
    // Each value checked against its range in `MCTS_LIMITS`, the one list Python and the
    // command line read too (`taikyoku._core.MCTS_LIMITS`).
    let d = MctsSettings::default();
    let wrong = |e: SettingsError| invalid(e.to_string());
    let real =
        |name, value: Option<f64>, default: f32| value.map_or(Ok(default), |v| check_real(name, v)).map_err(wrong);
    let integer =
        |name, value: Option<Int>, default: u32| value.map_or(Ok(default), |v| check_integer(name, v.0)).map_err(wrong);
    let settings = MctsSettings {
        simulations: integer("simulations", Some(simulations), d.simulations)?,
        temperature: real("temperature", temperature, d.temperature)?,
        temperature_plies: integer("temperature_plies", temperature_plies, d.temperature_plies)?,
        dirichlet_alpha: real("dirichlet_alpha", dirichlet_alpha, d.dirichlet_alpha)?,
        dirichlet_fraction: real("dirichlet_fraction", dirichlet_fraction, d.dirichlet_fraction)?,
        c_puct: real("c_puct", c_puct, d.c_puct)?,
        priors: priors.unwrap_or(d.priors),
        rollout_plies: integer("rollout_plies", rollout_plies, d.rollout_plies)?,
        reuse_tree: reuse_tree.unwrap_or(d.reuse_tree),
        opponent_moves: opponent_moves.unwrap_or(d.opponent_moves),
        gumbel: None,
    };
    settings.validate().map_err(|e| invalid(e.to_string()))?;
    Ok(settings)
}

/// The settings of a run (everything that decides its bytes) as JSON, from the keyword
/// arguments of `taikyoku.selfplay`: checked once, here, for every way of running it (one
/// machine, or many through `taikyoku.distributed`).
#[pyfunction]
#[pyo3(signature = (players = "random", games = Int(8), seed = Int(0), format = "arrow", max_plies = Int(5000),
    simulations = Int(64), games_per_shard = None, variant = "taikyoku", options = None, temperature = None,
    temperature_plies = None, dirichlet_alpha = None, dirichlet_fraction = None, c_puct = None, priors = None,
    rollout_plies = None, evaluator_name = None, leaves_per_game = Int(8), observation = "compact", reuse_tree = None,
    shard_positions = None, store_legal_actions = false, root = None, gumbel_considered = None, gumbel_scale = None,
    opponent_moves = None))]
#[allow(clippy::too_many_arguments)]
pub fn selfplay_settings(
    players: &str,
    games: Int,
    seed: Int,
    format: &str,
    max_plies: Int,
    simulations: Int,
    games_per_shard: Option<Int>,
    variant: &str,
    options: Option<Vec<String>>,
    temperature: Option<f64>,
    temperature_plies: Option<Int>,
    dirichlet_alpha: Option<f64>,
    dirichlet_fraction: Option<f64>,
    c_puct: Option<f64>,
    priors: Option<String>,
    rollout_plies: Option<Int>,
    evaluator_name: Option<String>,
    leaves_per_game: Int,
    observation: &str,
    reuse_tree: Option<bool>,
    shard_positions: Option<Int>,
    store_legal_actions: bool,
    root: Option<&str>,
    gumbel_considered: Option<Int>,
    gumbel_scale: Option<f64>,
    opponent_moves: Option<String>,
) -> PyResult<String> {
    if games_per_shard.is_some() && shard_positions.is_some() {
        return Err(invalid("give games_per_shard or shard_positions, not both (games_per_shard fixes the games of a shard; shard_positions derives them)"));
    }
    if !matches!(observation, "compact" | "onehot") {
        return Err(invalid(format!(
            "unknown observation '{}' (use 'compact' or 'onehot')",
            crate::errors::clip(observation)
        )));
    }
    if players != "mcts" && (root.is_some() || gumbel_considered.is_some() || gumbel_scale.is_some()) {
        return Err(invalid("root, gumbel_considered and gumbel_scale apply to players='mcts'"));
    }
    let players = match players {
        "random" => Players::Random,
        "mcts" => {
            let mut mcts = mcts_settings(
                simulations,
                temperature,
                temperature_plies,
                dirichlet_alpha,
                dirichlet_fraction,
                c_puct,
                priors,
                rollout_plies,
                reuse_tree,
                opponent_moves,
            )?;
            mcts.gumbel = root_settings(root.unwrap_or("puct"), gumbel_considered, gumbel_scale)?;
            Players::Mcts(mcts)
        }
        other => {
            return Err(invalid(format!("unknown players '{}' (use 'random' or 'mcts')", crate::errors::clip(other))))
        }
    };
    let games_per_shard = games_per_shard.map(|g| g.within("games_per_shard", 1, u32::MAX as i128)).transpose()?;
    let shard_positions = shard_positions.map(|p| p.within("shard_positions", 1, u32::MAX as i128)).transpose()?;
    let mut settings = Settings {
        variant: variant.to_string(),
        options: options.unwrap_or_default(),
        players,
        games: games.within("games", 1, u32::MAX as i128)?,
        seed: seed.seed("seed")?,
        max_plies: max_plies.positive("max_plies")?,
        format: convert::parse(format)?,
        games_per_shard: games_per_shard.unwrap_or(1),
        store_legal_actions,
        network: match evaluator_name {
            None => None,
            Some(name) => Some(NetworkSettings {
                name,
                leaves_per_game: leaves_per_game.within("leaves_per_game", 1, 4096)?,
                observation: observation.to_string(),
            }),
        },
    };
    if games_per_shard.is_none() {
        // Derived from the settings alone (never from the games played), so the shard layout
        // is known before play: resuming and runs on many machines rely on it.
        settings.games_per_shard = settings.games_per_shard_for(shard_positions.unwrap_or(DEFAULT_SHARD_POSITIONS));
    }
    settings.validate().map_err(|e| invalid(e.to_string()))?;
    variants::variant(&settings.variant, &settings.options)?;
    Ok(serde_json::to_string(&settings).expect("settings serialize"))
}

/// Settings from `selfplay_settings`' JSON.
pub fn settings_of(json: &str) -> PyResult<Settings> {
    let settings: Settings = serde_json::from_str(json).map_err(|e| invalid(format!("not self-play settings: {e}")))?;
    settings.validate().map_err(|e| invalid(e.to_string()))?;
    Ok(settings)
}

/// A summary dict of a run (or of a dataset recorded by a Ray driver).
pub fn summary_dict(py: Python<'_>, summary: &selfplay::Summary, out: &str) -> PyResult<PyObject> {
    let dict = PyDict::new_bound(py);
    let total = &summary.total;
    dict.set_item("games", total.games)?;
    dict.set_item("positions", total.positions)?;
    dict.set_item("plies", total.positions)?;
    dict.set_item("black_wins", total.black_wins)?;
    dict.set_item("white_wins", total.white_wins)?;
    dict.set_item("draws", total.draws)?;
    dict.set_item("truncated", total.truncated)?;
    dict.set_item("bytes", total.bytes)?;
    dict.set_item("generated_games", summary.generated.games)?;
    dict.set_item("generated_plies", summary.generated.positions)?;
    dict.set_item("repaired", summary.repaired.clone())?;
    dict.set_item("seconds", summary.seconds)?;
    dict.set_item("out", out)?;
    Ok(dict.into_any().unbind())
}

/// Generates (or resumes) the self-play dataset of `settings` (JSON from `selfplay_settings`)
/// in `out`, a directory or a pyarrow filesystem URI; returns a summary dict. `progress`, if
/// given, is called with the ply count of each finished game. Ctrl-C stops the run (complete
/// shards are kept; a rerun resumes) and raises KeyboardInterrupt.
#[pyfunction]
#[allow(clippy::too_many_arguments)] // Python's keyword arguments
#[pyo3(signature = (out, settings, threads = None, progress = None, evaluator = None, concurrent_games = Int(32),
    legal_actions = "csr"))]
pub fn selfplay_run(
    py: Python<'_>,
    out: PathBuf,
    settings: &str,
    threads: Option<Int>,
    progress: Option<PyObject>,
    evaluator: Option<PyObject>,
    concurrent_games: Int,
    legal_actions: &str,
) -> PyResult<PyObject> {
    let settings = settings_of(settings)?;
    let out_text = out.to_string_lossy().into_owned();
    let store = crate::store::open(py, &out_text)?;
    let csr = match legal_actions {
        "csr" => true,
        "list" => false,
        other => {
            return Err(invalid(format!(
                "unknown legal_actions '{}' (use 'csr' or 'list')",
                crate::errors::clip(other)
            )))
        }
    };
    if evaluator.is_some() != settings.network.is_some() {
        return Err(invalid(
            "an evaluator needs players='mcts' and evaluator settings (see selfplay_settings), and only then",
        ));
    }
    let layout = match settings.network.as_ref().map(|n| n.observation.as_str()) {
        Some("onehot") => observation::Layout::OneHot,
        _ => observation::Layout::Compact,
    };
    let threads = threads.map(|t| t.within::<usize>("threads", 1, 256)).transpose()?;
    let concurrent: usize = concurrent_games.within("concurrent_games", 1, 1 << 16)?;
    let report = |record: &GameRecord| {
        if let Some(callback) = &progress {
            Python::with_gil(|py| {
                // A failing progress callback must not abort the run: report it and go on.
                if let Err(e) = callback.call1(py, (record.plies(),)) {
                    e.print(py);
                }
            });
        }
    };
    let failure = Mutex::new(None);
    let summary = shield(|| match &evaluator {
        None => interruptible(py, |stop| {
            selfplay::run(store.clone(), &settings, threads, Control { progress: &report, stop })
        }),
        Some(evaluator) => match layout {
            observation::Layout::Compact => network_run::<u16>(
                py,
                store.clone(),
                &settings,
                threads,
                concurrent,
                layout,
                evaluator,
                csr,
                &report,
                &failure,
            ),
            observation::Layout::OneHot => network_run::<u8>(
                py,
                store.clone(),
                &settings,
                threads,
                concurrent,
                layout,
                evaluator,
                csr,
                &report,
                &failure,
            ),
        },
    });
    // A KeyboardInterrupt or the evaluator's own exception comes first.
    let summary = summary?;
    if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    let summary = summary.map_err(run_error)?;
    summary_dict(py, &summary, &out_text)
}

/// The Arrow schema of a dataset table (`"games"` or `"positions"`) as IPC stream bytes: the
/// writer's own definition, which `taikyoku.datasets` reads instead of keeping a copy. With
/// `legal_actions`, the positions schema of runs that store them; with `policy`, of runs with a
/// Gumbel root (the optional columns come last, in that order).
#[pyfunction]
#[pyo3(signature = (table, legal_actions = false, policy = false))]
pub fn dataset_schema(py: Python<'_>, table: &str, legal_actions: bool, policy: bool) -> PyResult<PyObject> {
    let schema = match table {
        "positions" => Some(taikyoku_selfplay::tables::positions_schema_with(legal_actions, policy)),
        _ => taikyoku_selfplay::tables::schema(table),
    }
    .ok_or_else(|| invalid(format!("unknown table '{}' (use 'games' or 'positions')", crate::errors::clip(table))))?;
    Ok(pyo3::types::PyBytes::new_bound(py, &taikyoku_selfplay::tables::schema_ipc(&schema)).into_any().unbind())
}

#[allow(clippy::too_many_arguments)]
fn decode_as<T: Cell + numpy::Element>(
    py: Python<'_>,
    variant: &taikyoku_engine::Variant,
    boards: &[u16],
    white: &[bool],
    repetitions: &[u8],
    plies: &[u32],
    passes: [Option<&[u8]>; 2],
    frame: taikyoku_engine::Frame,
    layout: observation::Layout,
) -> PyResult<PyObject> {
    use rayon::prelude::*;
    let n = white.len();
    let planes = observation::plane_count(variant, layout);
    let array = observations::zeros::<T>(py, "decoding the positions", vec![n, GRID, GRID, planes])?;
    {
        let mut view = array.try_readwrite()?;
        let out = view.as_slice_mut().expect("contiguous");
        let len = GRID_SQUARES * planes;
        shield(|| {
            py.allow_threads(|| {
                workers::DEFAULT.install(|| {
                    out.par_chunks_mut(len).enumerate().try_for_each(|(i, chunk)| {
                        let board = &boards[i * GRID_SQUARES..(i + 1) * GRID_SQUARES];
                        let runs = passes.map(|column| column.map_or(0, |c| c[i]));
                        observation::write_board(
                            variant,
                            board,
                            white[i],
                            repetitions[i] as u32,
                            plies[i] + 1,
                            runs,
                            frame,
                            layout,
                            chunk,
                        )
                        .map_err(|e| format!("position {i}: {e}"))
                    })
                })
            })?
            .map_err(TaikyokuError::new_err)
        })?;
    }
    Ok(array.into_any().unbind())
}

/// Observations (N, 36, 36, P) of stored positions: compact boards (N, 1296) uint16 and the
/// positions table's `white_to_move`, `repetitions` and `ply` columns, and its `passes` and
/// `opponent_passes` columns (zeros when not given). Decoded in parallel.
#[pyfunction]
#[pyo3(signature = (boards, white_to_move, repetitions, ply, variant = "taikyoku", options = None, dtype = None,
    frame = "mover", compact = false, passes = None, opponent_passes = None))]
#[allow(clippy::too_many_arguments)]
pub fn decode_positions(
    py: Python<'_>,
    boards: PyReadonlyArray2<'_, u16>,
    white_to_move: PyReadonlyArray1<'_, bool>,
    repetitions: PyReadonlyArray1<'_, u8>,
    ply: PyReadonlyArray1<'_, u32>,
    variant: &str,
    options: Option<Vec<String>>,
    dtype: Option<&Bound<'_, PyAny>>,
    frame: &str,
    compact: bool,
    passes: Option<PyReadonlyArray1<'_, u8>>,
    opponent_passes: Option<PyReadonlyArray1<'_, u8>>,
) -> PyResult<PyObject> {
    let variant = variants::variant(variant, &options.unwrap_or_default())?;
    let frame = convert::parse(frame)?;
    let layout = convert::layout(compact);
    let dtype = Dtype::parse(py, dtype, layout, &variant)?;
    let shape = boards.shape().to_vec();
    let n = white_to_move.len();
    if shape[1] != GRID_SQUARES || shape[0] != n || repetitions.len() != n || ply.len() != n {
        return Err(invalid(format!(
            "boards must be (N, {GRID_SQUARES}) with N = len(white_to_move) = len(repetitions) = len(ply); got {shape:?}, {n}, {}, {}",
            repetitions.len(),
            ply.len()
        )));
    }
    let boards = boards.as_slice().map_err(|_| invalid("boards must be C-contiguous"))?;
    let contiguous = |_| invalid("columns must be contiguous arrays");
    let white = white_to_move.as_slice().map_err(contiguous)?;
    let repetitions = repetitions.as_slice().map_err(contiguous)?;
    let ply = ply.as_slice().map_err(contiguous)?;
    let runs = [passes.as_ref(), opponent_passes.as_ref()];
    if runs.iter().flatten().any(|column| column.len() != n) {
        return Err(invalid(format!("passes and opponent_passes must have one entry per position ({n})")));
    }
    let runs = [
        runs[0].map(|c| c.as_slice().map_err(contiguous)).transpose()?,
        runs[1].map(|c| c.as_slice().map_err(contiguous)).transpose()?,
    ];
    match dtype {
        Dtype::U8 => decode_as::<u8>(py, &variant, boards, white, repetitions, ply, runs, frame, layout),
        Dtype::U16 => decode_as::<u16>(py, &variant, boards, white, repetitions, ply, runs, frame, layout),
        Dtype::F32 => decode_as::<f32>(py, &variant, boards, white, repetitions, ply, runs, frame, layout),
    }
}

/// The move MCTS chooses for the side to move of `game` (no Dirichlet noise, no temperature),
/// as an action in the mover's frame, with the root's statistics: the search self-play runs,
/// with the heuristic evaluator or `evaluator` (the self-play evaluator protocol, leaves
/// batched `leaves` per call). `taikyoku.mcts_action` checks the arguments and documents them.
/// Returns `(action, visit actions, visit counts, policy, value, simulations)`, the visits and
/// the improved policy (Gumbel root) by action.
#[pyfunction]
#[pyo3(signature = (game, simulations = Int(64), seed = Int(0), evaluator = None, root = "puct", leaves = Int(8),
    observation = "compact", legal_actions = "csr", c_puct = None, priors = None, gumbel_considered = None,
    gumbel_scale = None, opponent_moves = None))]
#[allow(clippy::too_many_arguments)]
pub fn mcts_search(
    py: Python<'_>,
    game: &crate::game::Game,
    simulations: Int,
    seed: Int,
    evaluator: Option<PyObject>,
    root: &str,
    leaves: Int,
    observation: &str,
    legal_actions: &str,
    c_puct: Option<f64>,
    priors: Option<String>,
    gumbel_considered: Option<Int>,
    gumbel_scale: Option<f64>,
    opponent_moves: Option<String>,
) -> PyResult<PyObject> {
    use rand::SeedableRng;
    use taikyoku_engine::rl::actions::{action_of, Frame};
    let seed = seed.seed("seed")?;
    let leaves: usize = leaves.within("leaves", 1, 4096)?;
    let mut settings = mcts_settings(simulations, None, None, None, None, c_puct, priors, None, None, opponent_moves)?;
    settings.gumbel = root_settings(root, gumbel_considered, gumbel_scale)?;
    settings.validate().map_err(|e| invalid(e.to_string()))?;
    let config = settings.position_config();
    let csr = match legal_actions {
        "csr" => true,
        "list" => false,
        other => {
            return Err(invalid(format!(
                "unknown legal_actions '{}' (use 'csr' or 'list')",
                crate::errors::clip(other)
            )))
        }
    };
    let layout = match observation {
        "compact" => observation::Layout::Compact,
        "onehot" => observation::Layout::OneHot,
        other => {
            return Err(invalid(format!(
                "unknown observation '{}' (use 'compact' or 'onehot')",
                crate::errors::clip(other)
            )))
        }
    };
    let mut engine_game = game.game.clone();
    if engine_game.end().is_some() {
        return Err(IllegalMoveError::new_err("the game is over: no move to choose"));
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let failure = Mutex::new(None);
    let found = shield(|| match &evaluator {
        None => Ok(Ok(
            py.allow_threads(|| taikyoku_selfplay::play::search_heuristic(&mut engine_game, &settings, &mut rng))
        )),
        Some(evaluator) => match layout {
            observation::Layout::Compact => {
                network_search::<u16>(py, &engine_game, config, leaves, layout, evaluator, csr, &failure, &mut rng)
            }
            observation::Layout::OneHot => {
                network_search::<u8>(py, &engine_game, config, leaves, layout, evaluator, csr, &failure, &mut rng)
            }
        },
    })?;
    if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    let (mv, stats) = found.map_err(run_error)?;
    let pos = &engine_game.position;
    let action = action_of(pos, mv, Frame::Mover);
    let visits = taikyoku_selfplay::play::root_visits(pos, &stats);
    let policy = taikyoku_selfplay::play::root_policy(pos, &stats);
    let (visit_actions, counts): (Vec<i64>, Vec<i64>) =
        visits.iter().map(|&(a, n)| (i64::from(a), i64::from(n))).unzip();
    let (policy_actions, weights): (Vec<i64>, Vec<f32>) = policy.iter().map(|&(a, w)| (i64::from(a), w)).unzip();
    let out = PyDict::new_bound(py);
    out.set_item("action", action)?;
    out.set_item("visit_actions", numpy::PyArray1::from_vec_bound(py, visit_actions))?;
    out.set_item("visit_counts", numpy::PyArray1::from_vec_bound(py, counts))?;
    out.set_item("policy_actions", numpy::PyArray1::from_vec_bound(py, policy_actions))?;
    out.set_item("policy", numpy::PyArray1::from_vec_bound(py, weights))?;
    out.set_item("value", stats.value)?;
    out.set_item("simulations", stats.simulations)?;
    Ok(out.into_any().unbind())
}

/// The Gumbel settings of `root` ("puct" or "gumbel") and its knobs (defaults where `None`).
pub fn root_settings(root: &str, considered: Option<Int>, scale: Option<f64>) -> PyResult<Option<GumbelSettings>> {
    match root {
        "puct" => {
            if considered.is_some() || scale.is_some() {
                return Err(invalid("gumbel_considered and gumbel_scale apply to root='gumbel'"));
            }
            Ok(None)
        }
        "gumbel" => {
            let d = GumbelSettings::default();
            let wrong = |e: SettingsError| invalid(e.to_string());
            Ok(Some(GumbelSettings {
                considered: considered
                    .map_or(Ok(d.considered), |c| check_integer("gumbel_considered", c.0))
                    .map_err(wrong)?,
                scale: scale.map_or(Ok(d.scale), |s| check_real("gumbel_scale", s)).map_err(wrong)?,
            }))
        }
        other => Err(invalid(format!("unknown root '{}' (use 'puct' or 'gumbel')", crate::errors::clip(other)))),
    }
}

/// A search of one position guided by the user's Python evaluator: the tree is walked with the
/// GIL released, the evaluator called with it (on this thread, so Ctrl-C reaches it).
#[allow(clippy::too_many_arguments)]
fn network_search<O: Cell + numpy::Element>(
    py: Python<'_>,
    game: &taikyoku_engine::Game,
    config: taikyoku_search::mcts::MctsConfig,
    leaves: usize,
    layout: observation::Layout,
    evaluator: &PyObject,
    csr: bool,
    failure: &Mutex<Option<PyErr>>,
    rng: &mut rand_chacha::ChaCha8Rng,
) -> PyResult<Result<(taikyoku_engine::Move, taikyoku_search::mcts::RootStats), RunError>> {
    let planes = observation::plane_count(&game.position.variant, layout);
    let buffer = observations::zeros::<O>(py, "the evaluator's observations", vec![leaves, GRID, GRID, planes])?;
    let memory = Memory::of(&buffer);
    let view = buffer.clone().into_any().unbind();
    let mut python = PythonEvaluator {
        evaluator,
        observations: [view.clone_ref(py), view],
        actions: [None, None],
        offsets: [None, None],
        csr,
        failure,
    };
    // The buffer lives in this frame until the search ends; the search writes it only while the
    // evaluator is not looking at it.
    let slice = unsafe { memory.slice() };
    Ok(py.allow_threads(|| network::search_position(game, config, leaves, layout, slice, &mut python, rng)))
}

/// The numeric MCTS settings and their ranges, `{name: (integer, low, high, low_open)}`: the
/// engine's one list (`taikyoku_selfplay::settings::MCTS_LIMITS`), which `taikyoku.selfplay`,
/// `taikyoku.mcts_search` and the command line check against before anything runs.
pub fn mcts_limits(py: Python<'_>) -> PyResult<PyObject> {
    let limits = PyDict::new_bound(py);
    for l in taikyoku_selfplay::settings::MCTS_LIMITS {
        limits.set_item(l.name, (l.integer, l.low, l.high, l.low_open))?;
    }
    Ok(limits.into_any().unbind())
}

/// The checks a resume makes of the dataset in `path` (entry, file names, sizes, CRC-32s, counts,
/// game ids), as `(damaged, unchecked)`: each damaged shard as `(index, why)`, e.g. `(1, "its
/// entry names the files ...")`, and the sound shards whose entries have no checksums (older
/// manifests). What `Dataset.verify()` and `taikyoku verify` run before replaying the games.
#[pyfunction]
pub fn check_dataset(py: Python<'_>, path: PathBuf) -> PyResult<(Vec<(u64, String)>, Vec<u64>)> {
    let store = crate::store::open(py, &path.to_string_lossy())?;
    let (_, found) =
        shield(|| py.allow_threads(|| taikyoku_selfplay::check_dataset(store.as_ref())).map_err(run_error))?;
    Ok((found.damaged, found.unchecked))
}

/// The driver's side of a run spread over machines (`taikyoku.distributed`): opens (checks,
/// repairs) the dataset, lists the shards other machines write, and completes it.
#[pyclass(module = "taikyoku._core")]
pub struct DatasetWriter {
    writer: Option<taikyoku_selfplay::Writer>,
    missing: Vec<u64>,
    out: String,
    started: std::time::Instant,
}

#[pymethods]
impl DatasetWriter {
    #[new]
    fn new(py: Python<'_>, out: PathBuf, settings: &str) -> PyResult<DatasetWriter> {
        let settings = settings_of(settings)?;
        let out = out.to_string_lossy().into_owned();
        let store = crate::store::open(py, &out)?;
        let (writer, missing) =
            shield(|| py.allow_threads(|| taikyoku_selfplay::Writer::open(store, &settings)).map_err(run_error))?;
        Ok(DatasetWriter { writer: Some(writer), missing, out, started: std::time::Instant::now() })
    }

    /// The shards still to write, by index.
    #[getter]
    fn missing(&self) -> Vec<u64> {
        self.missing.clone()
    }

    /// Lists a shard another process wrote (an entry from `selfplay_shards`).
    fn record(&self, py: Python<'_>, entry: &str) -> PyResult<()> {
        let shard: taikyoku_selfplay::Shard =
            serde_json::from_str(entry).map_err(|e| invalid(format!("not a shard entry: {e}")))?;
        let writer = self.writer.as_ref().ok_or_else(|| invalid("this dataset writer is closed"))?;
        py.allow_threads(|| writer.record(shard)).map_err(run_error)
    }

    /// Marks the dataset complete; returns its summary dict.
    fn finish(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let writer = self.writer.take().ok_or_else(|| invalid("this dataset writer is closed"))?;
        let started = self.started;
        let summary = py.allow_threads(|| writer.finish(started)).map_err(run_error)?;
        summary_dict(py, &summary, &self.out)
    }

    /// Gives up: complete shards are kept; a dataset that got none is removed again.
    fn abandon(&mut self) {
        if let Some(writer) = self.writer.take() {
            writer.abandon();
        }
    }
}

/// Plays shards `indices` of the run of `settings` and writes their files into `out` (not the
/// manifest): what one machine of a Ray run does. Returns their manifest entries as JSON.
/// Interruptible like `selfplay_run`.
#[pyfunction]
#[pyo3(signature = (out, settings, indices, threads = None))]
pub fn selfplay_shards(
    py: Python<'_>,
    out: PathBuf,
    settings: &str,
    indices: Vec<u64>,
    threads: Option<Int>,
) -> PyResult<Vec<String>> {
    let settings = settings_of(settings)?;
    if settings.network.is_some() {
        return Err(invalid("shards for many machines are played by random or heuristic-MCTS players"));
    }
    let store = crate::store::open(py, &out.to_string_lossy())?;
    let threads = threads.map(|t| t.within::<usize>("threads", 1, 256)).transpose()?;
    let shards = shield(|| {
        interruptible(py, |stop| {
            taikyoku_selfplay::write_shards(
                store.as_ref(),
                &settings,
                &indices,
                threads,
                Control { progress: &|_| {}, stop },
            )
        })
    })?
    .map_err(run_error)?;
    Ok(shards.iter().map(|s| serde_json::to_string(s).expect("an entry serializes")).collect())
}

/// The legal actions (mover's frame, sorted) before every move of stored games: what policy
/// targets need beside the visits (datasets keep only each position's legal-move count).
/// `actions` holds the games' moves one game after another, game `g` owning
/// `actions[offsets[g]:offsets[g+1]]`, each game replayed from the variant's start in parallel.
/// Returns `(legal, legal_offsets)` in CSR form over the positions, game by game, ply by ply.
#[pyfunction]
#[pyo3(signature = (actions, offsets, variant = "taikyoku", options = None))]
pub fn replay_legal_actions<'py>(
    py: Python<'py>,
    actions: PyReadonlyArray1<'py, i64>,
    offsets: PyReadonlyArray1<'py, i64>,
    variant: &str,
    options: Option<Vec<String>>,
) -> PyResult<(Bound<'py, numpy::PyArray1<i32>>, Bound<'py, numpy::PyArray1<i64>>)> {
    use rayon::prelude::*;
    use taikyoku_engine::rl::actions::{legal_pairs, Frame};
    let v = variants::variant(variant, &options.unwrap_or_default())?;
    let (actions, offsets) = (actions.as_slice()?, offsets.as_slice()?);
    let bad_offsets = offsets.is_empty()
        || offsets[0] != 0
        || offsets.windows(2).any(|w| w[0] > w[1])
        || *offsets.last().expect("not empty") as usize != actions.len();
    if bad_offsets {
        return Err(invalid("offsets must start at 0, never decrease, and end at len(actions)"));
    }
    let games: Vec<&[i64]> = offsets.windows(2).map(|w| &actions[w[0] as usize..w[1] as usize]).collect();
    let replayed: Vec<Result<Vec<Vec<u32>>, String>> = shield(|| {
        py.allow_threads(|| {
            workers::DEFAULT.install(|| {
                games
                    .par_iter()
                    .enumerate()
                    .map(|(g, played)| {
                        let mut game = taikyoku_engine::Game::new(v.clone());
                        let mut legal = Vec::with_capacity(played.len());
                        for (ply, &action) in played.iter().enumerate() {
                            let pairs = legal_pairs(&game.position, &game.legal_moves(), Frame::Mover);
                            let found = u32::try_from(action)
                                .ok()
                                .and_then(|a| pairs.binary_search_by_key(&a, |&(x, _)| x).ok());
                            let Some(index) = found else {
                                return Err(format!(
                                    "game {g} (of the arrays given) ply {ply}: action {action} is not legal there"
                                ));
                            };
                            legal.push(pairs.iter().map(|&(a, _)| a).collect());
                            game.play(pairs[index].1);
                        }
                        Ok(legal)
                    })
                    .collect::<Vec<Result<Vec<Vec<u32>>, String>>>()
            })
        })
    })?;
    let mut flat = Vec::new();
    let mut ends = vec![0i64];
    for game in replayed {
        for position in game.map_err(TaikyokuError::new_err)? {
            flat.extend(position.into_iter().map(|a| a as i32));
            ends.push(flat.len() as i64);
        }
    }
    Ok((numpy::PyArray1::from_vec_bound(py, flat), numpy::PyArray1::from_vec_bound(py, ends)))
}
