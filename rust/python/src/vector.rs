//! `VectorEnvCore`: N games stepped together by action (the native part of
//! `taikyoku.VectorEnv`), the GIL released while they are stepped.

use crate::convert::{self, Int};
use crate::errors::{invalid, shield, IllegalMoveError};
use crate::game::Game;
use crate::observations::{actions_array, mask, Dtype};
use crate::pieces;
use crate::workers::{self, Workers};
use numpy::{Element, PyArray1, PyArray2, PyArrayDyn, PyArrayMethods, PyReadonlyArray1};
use pyo3::prelude::*;
use rand_chacha::ChaCha8Rng;
use taikyoku_engine::rl::actions::{GRID, NUM_ACTIONS};
use taikyoku_engine::rl::observation::{self, Cell, Layout};
use taikyoku_engine::rl::vector::{self as engine_vector, VecEnv};

/// The largest `num_envs`.
const MAX_ENVS: i128 = 1 << 20;

/// N games stepped together by action (the native part of `taikyoku.VectorEnv`).
#[pyclass(module = "taikyoku._core")]
pub struct VectorEnvCore {
    env: VecEnv,
    /// A private pool when `threads` was given, else the shared one.
    workers: Option<Workers>,
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
    workers: &Workers,
) -> PyResult<()> {
    let array = buffer.downcast_bound::<PyArrayDyn<T>>(py)?;
    let mut view = array.try_readwrite()?;
    let out = view.as_slice_mut().expect("the buffer is contiguous");
    let (games, frame) = (env.games(), env.frame);
    shield(|| py.allow_threads(|| workers.install(|| observation::rewrite_batch(games, frame, layout, out, written))))
}

impl VectorEnvCore {
    fn workers(&self) -> &Workers {
        self.workers.as_ref().unwrap_or(&workers::DEFAULT)
    }

    fn observations(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let workers = self.workers.as_ref().unwrap_or(&workers::DEFAULT);
        let (env, layout) = (&self.env, self.layout);
        match self.dtype {
            Dtype::U8 => rewrite_as::<u8>(py, &self.buffer, env, layout, &mut self.written, workers)?,
            Dtype::U16 => rewrite_as::<u16>(py, &self.buffer, env, layout, &mut self.written, workers)?,
            Dtype::F32 => rewrite_as::<f32>(py, &self.buffer, env, layout, &mut self.written, workers)?,
        }
        if self.copy {
            Ok(self.buffer.bind(py).call_method0("copy")?.unbind())
        } else {
            Ok(self.buffer.clone_ref(py))
        }
    }
}

#[pymethods]
impl VectorEnvCore {
    #[new]
    #[pyo3(signature = (num_envs, variant = "taikyoku", options = None, seed = Int(0), threads = None, frame = "mover",
        max_plies = None, illegal_action = "raise", compact = false, dtype = None, copy = true))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        num_envs: Int,
        variant: &str,
        options: Option<Vec<String>>,
        seed: Int,
        threads: Option<Int>,
        frame: &str,
        max_plies: Option<Int>,
        illegal_action: &str,
        compact: bool,
        dtype: Option<&Bound<'_, PyAny>>,
        copy: bool,
    ) -> PyResult<VectorEnvCore> {
        let num_envs: usize = num_envs.within("num_envs", 1, MAX_ENVS)?;
        let seed = seed.seed("seed")?;
        let options = options.unwrap_or_default();
        let variant = pieces::variant(variant, &options)?;
        let frame = convert::parse(frame)?;
        let layout = convert::layout(compact);
        let dtype = Dtype::parse(py, dtype, layout, &variant)?;
        let illegal = convert::parse(illegal_action)?;
        let max_plies = max_plies.map(|m| m.count("max_plies")).transpose()?;
        let workers = threads.map(|t| t.within::<usize>("threads", 1, 256).map(|n| Workers::new(Some(n)))).transpose()?;
        let planes = observation::plane_count(&variant, layout);
        let what = format!("VectorEnv({num_envs}) with {} observations", dtype.name());
        let buffer = dtype.zeros(py, &what, vec![num_envs, GRID, GRID, planes])?;
        let pool = workers.as_ref().unwrap_or(&workers::DEFAULT);
        let env = shield(|| {
            py.allow_threads(|| pool.install(|| VecEnv::new(variant, num_envs, frame, max_plies, illegal)))
        })?;
        Ok(VectorEnvCore {
            env,
            workers,
            layout,
            dtype,
            rng: engine_vector::action_rng(seed),
            options,
            buffer,
            written: vec![Vec::new(); num_envs],
            copy,
        })
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
    fn seed(&mut self, seed: Int) -> PyResult<()> {
        self.rng = engine_vector::action_rng(seed.seed("seed")?);
        Ok(())
    }

    /// Restarts every game; returns the observations.
    fn reset(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let workers = self.workers.as_ref().unwrap_or(&workers::DEFAULT);
        let env = &mut self.env;
        shield(|| py.allow_threads(|| workers.install(|| env.reset())))?;
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
            return Err(invalid(format!("step() needs {} actions, got {}", self.env.len(), actions.len())));
        }
        let mut values = Vec::with_capacity(actions.len());
        for (env, &a) in actions.iter().enumerate() {
            if a < 0 || a as usize >= NUM_ACTIONS {
                return Err(IllegalMoveError::new_err(format!("env {env}: action {a} is outside the action space [0, {NUM_ACTIONS})")));
            }
            values.push(a as u32);
        }
        let workers = self.workers.as_ref().unwrap_or(&workers::DEFAULT);
        let env = &mut self.env;
        let outcomes = shield(|| py.allow_threads(|| workers.install(|| env.step(&values))))?.map_err(|e| {
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
    fn legal_action_mask<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<bool>>> {
        let rows: Vec<Vec<u32>> = (0..self.env.len()).map(|i| self.env.legal(i).iter().map(|&(a, _)| a).collect()).collect();
        mask(py, &rows)
    }

    /// A uniformly random legal action per game, from the seeded stream.
    fn random_actions<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let actions = self.env.random_actions(&mut self.rng);
        actions_array(py, actions.into_iter())
    }

    /// A copy of game `index`.
    fn game(&self, index: Int) -> PyResult<Game> {
        let index: usize = index.within("index", 0, self.env.len() as i128 - 1)?;
        Ok(Game::wrap(self.env.games()[index].clone()))
    }

    /// Worker threads asked for (None: one per core).
    #[getter]
    fn threads(&self) -> Option<usize> {
        self.workers().threads()
    }

    /// Observation shape (36, 36, P).
    #[getter]
    fn observation_shape(&self) -> (usize, usize, usize) {
        (GRID, GRID, observation::plane_count(self.env.variant(), self.layout))
    }

    #[getter]
    fn dtype(&self) -> &'static str {
        self.dtype.name()
    }
}
