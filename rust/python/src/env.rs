//! Actions, observations and the native vector environment: numpy in and out, observations
//! written by Rust straight into numpy memory, the GIL released while games are stepped.

use crate::{Game, IllegalMoveError, TaikyokuError};
use numpy::{Element, PyArray1, PyArray2, PyArrayDyn, PyArrayMethods, PyReadonlyArray1};
use pyo3::prelude::*;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;
use taikyoku_engine::actions::{self, Frame, GRID, NUM_ACTIONS};
use taikyoku_engine::observation::{self, Cell, Layout};
use taikyoku_engine::vector::{IllegalAction, VecEnv};
use taikyoku_engine::{self as engine, Move as EngineMove, Variant};

pub fn parse_frame(text: &str) -> PyResult<Frame> {
    Frame::parse(text).ok_or_else(|| TaikyokuError::new_err(format!("unknown frame '{text}' (use 'mover' or 'absolute')")))
}

/// Element types an observation can be written as.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    U8,
    U16,
    F32,
}

/// Reads a dtype given as a string, a numpy type or a numpy dtype; `None` picks the layout's
/// default (uint8 one-hot, uint16 compact: piece ids exceed 255).
pub fn parse_dtype(py: Python<'_>, dtype: Option<&Bound<'_, PyAny>>, layout: Layout, variant: &Variant) -> PyResult<Dtype> {
    let Some(dtype) = dtype.filter(|d| !d.is_none()) else {
        return Ok(if layout == Layout::Compact { Dtype::U16 } else { Dtype::U8 });
    };
    let name: String = py
        .import_bound("numpy")?
        .getattr("dtype")?
        .call1((dtype,))
        .and_then(|d| d.getattr("name")?.extract())
        .map_err(|_| TaikyokuError::new_err(format!("unknown dtype {dtype} (use 'uint8', 'uint16' or 'float32')")))?;
    let parsed = match name.as_str() {
        "uint8" => Dtype::U8,
        "uint16" => Dtype::U16,
        "float32" => Dtype::F32,
        _ => return Err(TaikyokuError::new_err(format!("unsupported dtype {name} (use 'uint8', 'uint16' or 'float32')"))),
    };
    if parsed == Dtype::U8 && layout == Layout::Compact && variant.table.len() >= 255 {
        return Err(TaikyokuError::new_err(format!(
            "compact observations of {} have {} piece ids: use uint16 or float32, not uint8",
            variant.name,
            variant.table.len()
        )));
    }
    Ok(parsed)
}

pub fn layout_of(compact: bool) -> Layout {
    if compact {
        Layout::Compact
    } else {
        Layout::OneHot
    }
}

/// Runs `work` on `pool` if there is one, else on rayon's global pool.
fn on_pool<R: Send>(pool: Option<&rayon::ThreadPool>, work: impl FnOnce() -> R + Send) -> R {
    match pool {
        Some(pool) => pool.install(work),
        None => work(),
    }
}

fn encode_as<'py, T: Cell + Element>(
    py: Python<'py>,
    games: &[&engine::Game],
    frame: Frame,
    layout: Layout,
    batch: bool,
    pool: Option<&rayon::ThreadPool>,
) -> PyResult<PyObject> {
    let variant = &games[0].position.variant;
    let planes = observation::plane_count(variant, layout);
    let mut shape = vec![GRID, GRID, planes];
    if batch {
        shape.insert(0, games.len());
    }
    // numpy's zeros come from calloc: fresh pages are zero already, so the writer skips clearing.
    let array = PyArrayDyn::<T>::zeros_bound(py, shape, false);
    {
        let mut view = array.try_readwrite().expect("a new array is writable");
        let out = view.as_slice_mut().expect("a new array is contiguous");
        py.allow_threads(|| on_pool(pool, || observation::write_batch(games, frame, layout, out, true)));
    }
    Ok(array.into_any().unbind())
}

/// Observations of `games` (all of one variant) as one numpy array.
pub fn encode(
    py: Python<'_>,
    games: &[&engine::Game],
    frame: Frame,
    layout: Layout,
    dtype: Dtype,
    batch: bool,
    pool: Option<&rayon::ThreadPool>,
) -> PyResult<PyObject> {
    match dtype {
        Dtype::U8 => encode_as::<u8>(py, games, frame, layout, batch, pool),
        Dtype::U16 => encode_as::<u16>(py, games, frame, layout, batch, pool),
        Dtype::F32 => encode_as::<f32>(py, games, frame, layout, batch, pool),
    }
}

pub fn actions_array<'py>(py: Python<'py>, actions: impl Iterator<Item = u32>) -> Bound<'py, PyArray1<i64>> {
    PyArray1::from_iter_bound(py, actions.map(i64::from))
}

/// A dense boolean mask over the whole action space (one row per list of legal actions).
pub fn mask<'py>(py: Python<'py>, rows: &[Vec<u32>]) -> Bound<'py, PyArray2<bool>> {
    let array = PyArray2::<bool>::zeros_bound(py, [rows.len(), NUM_ACTIONS], false);
    {
        let mut view = array.try_readwrite().expect("a new array is writable");
        let out = view.as_slice_mut().expect("contiguous");
        for (r, row) in rows.iter().enumerate() {
            for &a in row {
                out[r * NUM_ACTIONS + a as usize] = true;
            }
        }
    }
    array
}

/// Reads an action (a Python int) into the action space, or explains why it is not one.
pub fn action_value(action: &Bound<'_, PyAny>) -> PyResult<u32> {
    let value: i64 = action
        .extract()
        .map_err(|_| IllegalMoveError::new_err(format!("an action is an integer, not {}", action.get_type().name().map(|n| n.to_string()).unwrap_or_default())))?;
    if value < 0 || value as usize >= NUM_ACTIONS {
        return Err(IllegalMoveError::new_err(format!("action {value} is outside the action space [0, {NUM_ACTIONS})")));
    }
    Ok(value as u32)
}

/// The legal move of `game` for `action`, or IllegalMoveError describing the action.
pub fn legal_move_for(game: &engine::Game, action: u32, frame: Frame) -> PyResult<EngineMove> {
    let pos = &game.position;
    let moves = pos.legal_moves();
    actions::move_of(pos, &moves, action, frame).ok_or_else(|| {
        let geometry = &pos.variant.geometry;
        let flip = frame.flips(pos.side_to_move());
        let name = |grid: usize| {
            actions::board_square(geometry, grid, flip).map(|sq| geometry.square_name(sq)).unwrap_or_else(|| "off the board".into())
        };
        let what = match actions::shape(action).expect("in range") {
            actions::ActionShape::Simple { from, to } => format!("{} to {}", name(from), name(to)),
            actions::ActionShape::MultiLeg { from, template } => {
                format!("from {} capturing at {:?} and ending at {:?}", name(from), template.captured(), template.end)
            }
        };
        IllegalMoveError::new_err(format!(
            "action {action} ({what}, {} frame) is not a legal move for {} in this position",
            frame.name(),
            pos.side_to_move()
        ))
    })
}

/// Names of the observation planes of a variant, in order.
#[pyfunction]
#[pyo3(signature = (variant = "taikyoku", compact = false, options = None))]
pub fn plane_names(variant: &str, compact: bool, options: Option<Vec<String>>) -> PyResult<Vec<String>> {
    let variant = crate::variant_for(variant, &options.unwrap_or_default())?;
    Ok(observation::plane_names(&variant, layout_of(compact)))
}

/// Observations of many games in one call: an array (N, 36, 36, P), encoded in parallel.
#[pyfunction]
#[pyo3(signature = (games, dtype = None, frame = "mover", compact = false))]
pub fn encode_observations(
    py: Python<'_>,
    games: Vec<PyRef<'_, Game>>,
    dtype: Option<&Bound<'_, PyAny>>,
    frame: &str,
    compact: bool,
) -> PyResult<PyObject> {
    let frame = parse_frame(frame)?;
    let layout = layout_of(compact);
    let Some(first) = games.first() else {
        return Err(TaikyokuError::new_err("encode_observations needs at least one game"));
    };
    let variant = first.game.position.variant.clone();
    if let Some(other) = games.iter().find(|g| g.game.position.variant.name != variant.name || g.game.position.variant.table.len() != variant.table.len()) {
        return Err(TaikyokuError::new_err(format!(
            "all games must be of one variant ({} and {})",
            variant.name, other.game.position.variant.name
        )));
    }
    let dtype = parse_dtype(py, dtype, layout, &variant)?;
    let refs: Vec<&engine::Game> = games.iter().map(|g| &g.game).collect();
    encode(py, &refs, frame, layout, dtype, true, None)
}

/// The multi-leg templates of the action space, in order: (captured offsets, end offset), each
/// offset (rows, columns) from the start square in the frame.
#[pyfunction]
pub fn action_templates() -> Vec<(Vec<(i8, i8)>, (i8, i8))> {
    actions::templates().iter().map(|t| (t.captured().to_vec(), t.end)).collect()
}

/// N games stepped together by action (the native part of `taikyoku.VectorEnv`).
#[pyclass(module = "taikyoku._core")]
pub struct VectorEnvCore {
    env: VecEnv,
    pool: Option<rayon::ThreadPool>,
    layout: Layout,
    dtype: Dtype,
    rng: ChaCha8Rng,
    options: Vec<String>,
    /// The observations, rewritten in place each step (only the entries that change).
    buffer: PyObject,
    /// Entries of each game's observation set by the last write.
    written: Vec<Vec<u32>>,
    copy: bool,
}

fn rewrite_as<T: Cell + Element>(
    py: Python<'_>,
    buffer: &PyObject,
    env: &VecEnv,
    layout: Layout,
    written: &mut [Vec<u32>],
    pool: Option<&rayon::ThreadPool>,
) -> PyResult<()> {
    let array = buffer.downcast_bound::<PyArrayDyn<T>>(py)?;
    let mut view = array.try_readwrite()?;
    let out = view.as_slice_mut().expect("the buffer is contiguous");
    let (games, frame) = (env.games(), env.frame);
    py.allow_threads(|| on_pool(pool, || observation::rewrite_batch(games, frame, layout, out, written)));
    Ok(())
}

impl VectorEnvCore {
    fn observations(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let (env, pool, layout) = (&self.env, self.pool.as_ref(), self.layout);
        match self.dtype {
            Dtype::U8 => rewrite_as::<u8>(py, &self.buffer, env, layout, &mut self.written, pool)?,
            Dtype::U16 => rewrite_as::<u16>(py, &self.buffer, env, layout, &mut self.written, pool)?,
            Dtype::F32 => rewrite_as::<f32>(py, &self.buffer, env, layout, &mut self.written, pool)?,
        }
        if self.copy {
            Ok(self.buffer.bind(py).call_method0("copy")?.unbind())
        } else {
            Ok(self.buffer.clone_ref(py))
        }
    }
}

fn zeros(py: Python<'_>, dtype: Dtype, shape: Vec<usize>) -> PyObject {
    match dtype {
        Dtype::U8 => PyArrayDyn::<u8>::zeros_bound(py, shape, false).into_any().unbind(),
        Dtype::U16 => PyArrayDyn::<u16>::zeros_bound(py, shape, false).into_any().unbind(),
        Dtype::F32 => PyArrayDyn::<f32>::zeros_bound(py, shape, false).into_any().unbind(),
    }
}

#[pymethods]
impl VectorEnvCore {
    #[new]
    #[pyo3(signature = (num_envs, variant = "taikyoku", options = None, seed = 0, threads = None, frame = "mover",
        max_plies = None, illegal_action = "raise", compact = false, dtype = None, copy = true))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        num_envs: i64,
        variant: &str,
        options: Option<Vec<String>>,
        seed: u64,
        threads: Option<i64>,
        frame: &str,
        max_plies: Option<i64>,
        illegal_action: &str,
        compact: bool,
        dtype: Option<&Bound<'_, PyAny>>,
        copy: bool,
    ) -> PyResult<VectorEnvCore> {
        if num_envs < 1 || num_envs > 1 << 20 {
            return Err(TaikyokuError::new_err(format!("num_envs must be between 1 and {}, not {num_envs}", 1 << 20)));
        }
        let options = options.unwrap_or_default();
        let variant: Arc<Variant> = crate::variant_for(variant, &options)?;
        let frame = parse_frame(frame)?;
        let layout = layout_of(compact);
        let dtype = parse_dtype(py, dtype, layout, &variant)?;
        let illegal = match illegal_action {
            "raise" => IllegalAction::Raise,
            "lose" => IllegalAction::Lose,
            other => return Err(TaikyokuError::new_err(format!("unknown illegal_action '{other}' (use 'raise' or 'lose')"))),
        };
        let max_plies = crate::count("max_plies", max_plies)?;
        let pool = match threads {
            None => None,
            Some(n) if (1..=256).contains(&n) => Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n as usize)
                    .build()
                    .map_err(|e| TaikyokuError::new_err(format!("cannot start {n} threads: {e}")))?,
            ),
            Some(n) => return Err(TaikyokuError::new_err(format!("threads must be between 1 and 256, not {n}"))),
        };
        let planes = observation::plane_count(&variant, layout);
        let buffer = zeros(py, dtype, vec![num_envs as usize, GRID, GRID, planes]);
        let env = py.allow_threads(|| on_pool(pool.as_ref(), || VecEnv::new(variant, num_envs as usize, frame, max_plies, illegal)));
        let written = vec![Vec::new(); num_envs as usize];
        Ok(VectorEnvCore { env, pool, layout, dtype, rng: engine::vector::action_rng(seed), options, buffer, written, copy })
    }

    #[getter]
    fn num_envs(&self) -> usize {
        self.env.len()
    }

    #[getter]
    fn options(&self) -> Vec<String> {
        self.options.clone()
    }

    /// Reseeds the stream of `random_actions`.
    fn seed(&mut self, seed: u64) {
        self.rng = engine::vector::action_rng(seed);
    }

    /// Restarts every game; returns the observations.
    fn reset(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let (env, pool) = (&mut self.env, self.pool.as_ref());
        py.allow_threads(|| on_pool(pool, || env.reset()));
        self.observations(py)
    }

    /// The current observations (N, 36, 36, P).
    fn observations_now(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        self.observations(py)
    }

    /// Plays one action per game. Returns (observations, rewards, terminated, truncated,
    /// finished) where finished lists (index, Game) for the games this step ended; they have
    /// already been reset.
    #[allow(clippy::type_complexity)]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        actions: PyReadonlyArray1<'py, i64>,
    ) -> PyResult<(PyObject, Bound<'py, PyArray1<f32>>, Bound<'py, PyArray1<bool>>, Bound<'py, PyArray1<bool>>, Vec<(usize, Game)>)> {
        let actions = actions.as_array();
        if actions.len() != self.env.len() {
            return Err(TaikyokuError::new_err(format!("step() needs {} actions, got {}", self.env.len(), actions.len())));
        }
        let mut values = Vec::with_capacity(actions.len());
        for (env, &a) in actions.iter().enumerate() {
            if a < 0 || a as usize >= NUM_ACTIONS {
                return Err(IllegalMoveError::new_err(format!("env {env}: action {a} is outside the action space [0, {NUM_ACTIONS})")));
            }
            values.push(a as u32);
        }
        let (env, pool) = (&mut self.env, self.pool.as_ref());
        let outcomes = py.allow_threads(|| on_pool(pool, || env.step(&values))).map_err(|e| {
            IllegalMoveError::new_err(format!("env {}: action {} is not legal (nothing was played)", e.env, e.action))
        })?;
        let observations = self.observations(py)?;
        let rewards = PyArray1::from_iter_bound(py, outcomes.iter().map(|o| o.reward));
        let terminated = PyArray1::from_iter_bound(py, outcomes.iter().map(|o| o.terminated));
        let truncated = PyArray1::from_iter_bound(py, outcomes.iter().map(|o| o.truncated));
        let finished = outcomes
            .into_iter()
            .enumerate()
            .filter_map(|(i, o)| o.finished.map(|game| (i, Game::wrap(game))))
            .collect();
        Ok((observations, rewards, terminated, truncated, finished))
    }

    /// The sorted legal actions of every game, one int64 array each.
    fn legal_actions<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyArray1<i64>>> {
        (0..self.env.len()).map(|i| actions_array(py, self.env.legal(i).iter().map(|&(a, _)| a))).collect()
    }

    /// The legal actions of every game as one flat int64 array and N + 1 offsets (CSR).
    fn legal_actions_flat<'py>(&self, py: Python<'py>) -> (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>) {
        let flat = (0..self.env.len()).flat_map(|i| self.env.legal(i).iter().map(|&(a, _)| a));
        let mut offsets = vec![0i64];
        for i in 0..self.env.len() {
            offsets.push(offsets[i] + self.env.legal(i).len() as i64);
        }
        (actions_array(py, flat), PyArray1::from_vec_bound(py, offsets))
    }

    /// A dense (N, NUM_ACTIONS) boolean mask: heavy, for masked-sampling code that needs it.
    fn legal_action_mask<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<bool>> {
        let rows: Vec<Vec<u32>> = (0..self.env.len()).map(|i| self.env.legal(i).iter().map(|&(a, _)| a).collect()).collect();
        mask(py, &rows)
    }

    /// A uniformly random legal action per game, from the seeded stream.
    fn random_actions<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let actions = self.env.random_actions(&mut self.rng);
        actions_array(py, actions.into_iter())
    }

    /// A copy of game `index`.
    fn game(&self, index: usize) -> PyResult<Game> {
        self.env
            .games()
            .get(index)
            .map(|g| Game::wrap(g.clone()))
            .ok_or_else(|| TaikyokuError::new_err(format!("env index {index} out of range 0..{}", self.env.len())))
    }

    /// Observation shape (36, 36, P).
    #[getter]
    fn observation_shape(&self) -> (usize, usize, usize) {
        (GRID, GRID, observation::plane_count(self.env.variant(), self.layout))
    }

    #[getter]
    fn dtype(&self) -> &'static str {
        match self.dtype {
            Dtype::U8 => "uint8",
            Dtype::U16 => "uint16",
            Dtype::F32 => "float32",
        }
    }
}
