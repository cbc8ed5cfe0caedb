//! `VectorEnvCore`: N games stepped together by action (the native part of
//! `taikyoku.VectorEnv`), the GIL released while they are stepped.
//!
//! Each game may start from a given position and may have an opponent answer the agent's moves
//! (a built-in one, `taikyoku_search::Opponent`: uniformly random or the heuristic MCTS; or a
//! Python callable), as in the single environment. Built-in opponents draw from one ChaCha8
//! stream per game, so results do not depend on the number of threads.

use crate::convert::{self, Int};
use crate::errors::{invalid, shield, IllegalMoveError};
use crate::game::Game;
use crate::observations::{self, actions_array, mask, Dtype};
use crate::pooled::{self, Pool};
use crate::variants;
use crate::workers::{self, Workers};
use numpy::{Element, PyArray1, PyArray2, PyArrayDyn, PyArrayMethods, PyReadonlyArray1};
use pyo3::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::sync::Arc;
use taikyoku_engine::rl::actions::{self, Frame, GRID, NUM_ACTIONS};
use taikyoku_engine::rl::observation::{self, Cell, Layout};
use taikyoku_engine::rl::vector::{self as engine_vector, IllegalAction};
use taikyoku_engine::{self as engine, Color, Move as EngineMove, Outcome, Termination, Variant};
use taikyoku_search::Opponent as BuiltInOpponent;

/// The largest `num_envs`.
const MAX_ENVS: i128 = 1 << 20;

/// Who answers the agent's moves.
enum Opponent {
    /// Nobody: the agent plays both sides.
    Nobody,
    /// A built-in opponent (taikyoku-search).
    BuiltIn(BuiltInOpponent),
    /// A Python callable `opponent(game) -> action` (an action of the mover's frame), called
    /// with a copy of the game, one game at a time, in env order.
    Callable(PyObject),
}

/// One game with what the environment keeps about it.
struct Slot {
    game: engine::Game,
    /// The legal moves of the side to move (empty once the game is over).
    moves: Vec<EngineMove>,
    /// Those moves as sorted actions of the env's frame (empty once the game is over).
    legal: Vec<(u32, EngineMove)>,
    /// The built-in opponent's random stream for this game.
    rng: ChaCha8Rng,
    /// Entries of this game's observation set by the last write.
    written: Vec<u32>,
}

impl Slot {
    fn end(&self) -> Option<(Outcome, Termination)> {
        self.game.end_given(&self.moves)
    }

    fn is_over(&self) -> bool {
        self.end().is_some()
    }

    /// Recomputes the legal moves and actions after the game changed.
    fn refresh(&mut self, frame: Frame) {
        self.moves = if self.game.recorded_end().is_some() { Vec::new() } else { self.game.legal_moves() };
        self.legal =
            if self.is_over() { Vec::new() } else { actions::legal_pairs(&self.game.position, &self.moves, frame) };
    }

    fn restart(&mut self, start: &engine::Game, frame: Frame) {
        self.game = start.clone();
        self.refresh(frame);
    }
}

/// The random stream of game `index`'s built-in opponent.
fn opponent_rng(seed: u64, index: usize) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(index as u64 + 1); // stream 0 is `random_actions`'
    rng
}

/// N games stepped together by action (the native part of `taikyoku.VectorEnv`).
#[pyclass(module = "taikyoku._core")]
pub struct VectorEnvCore {
    variant: Arc<Variant>,
    slots: Vec<Slot>,
    /// The game every automatic reset starts (the initial setup or the `start` position),
    /// with the ply limit set.
    start: engine::Game,
    frame: Frame,
    illegal: IllegalAction,
    max_plies: Option<u32>,
    opponent: Opponent,
    /// The agent's side when there is an opponent.
    agent: Color,
    /// A private pool when `threads` was given, else the shared one.
    workers: Option<Workers>,
    layout: Layout,
    dtype: Dtype,
    rng: ChaCha8Rng,
    options: Vec<String>,
    /// With `copy=False`, the observations, rewritten in place each step (only the entries that
    /// change); with `copy=True`, None: each step writes a new array in memory from `pool`.
    buffer: Option<PyObject>,
    /// The memory of the observation arrays returned and freed since (`copy=True`).
    pool: Arc<Pool>,
}

fn rewrite_as<T: Cell + Element>(
    py: Python<'_>,
    buffer: &PyObject,
    slots: &mut [Slot],
    frame: Frame,
    layout: Layout,
    workers: &Workers,
) -> PyResult<()> {
    let array = buffer.downcast_bound::<PyArrayDyn<T>>(py)?;
    let mut view = array.try_readwrite()?;
    let out = view.as_slice_mut().expect("the buffer is contiguous");
    if slots.is_empty() {
        return Ok(());
    }
    let len = observation::observation_len(&slots[0].game.position.variant, layout);
    shield(|| {
        py.allow_threads(|| {
            workers.install(|| {
                out.par_chunks_mut(len)
                    .zip(slots.par_iter_mut())
                    .for_each(|(chunk, slot)| observation::rewrite(&slot.game, frame, layout, chunk, &mut slot.written))
            })
        })
    })
}

/// A game of `start`'s position with the ply limit.
fn start_game(start: Option<&Game>, variant: &Arc<Variant>, max_plies: Option<u32>) -> engine::Game {
    let mut game = match start {
        Some(game) => game.game.clone(),
        None => engine::Game::new(variant.clone()),
    };
    game.max_plies = max_plies;
    game
}

impl VectorEnvCore {
    fn workers(&self) -> &Workers {
        self.workers.as_ref().unwrap_or(&workers::DEFAULT)
    }

    fn observations(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let workers = self.workers.as_ref().unwrap_or(&workers::DEFAULT);
        let (slots, frame, layout) = (&mut self.slots, self.frame, self.layout);
        let Some(buffer) = &self.buffer else {
            let games: Vec<(&engine::Game, Color)> = slots.iter().map(|s| (&s.game, s.game.side_to_move())).collect();
            return pooled::observe(py, &self.pool, &games, frame, layout, self.dtype, true, Some(workers));
        };
        match self.dtype {
            Dtype::U8 => rewrite_as::<u8>(py, buffer, slots, frame, layout, workers)?,
            Dtype::U16 => rewrite_as::<u16>(py, buffer, slots, frame, layout, workers)?,
            Dtype::F32 => rewrite_as::<f32>(py, buffer, slots, frame, layout, workers)?,
        }
        Ok(buffer.clone_ref(py))
    }

    /// A start position (a `Game`) of this env's variant and rule options, with the ply limit.
    fn check_start(&self, start: Option<&Game>) -> PyResult<engine::Game> {
        if let Some(game) = start {
            let v = &game.game.position.variant;
            if v.name != self.variant.name || v.options != self.variant.options {
                return Err(invalid(format!(
                    "the start position is of {} {:?}, not of this env's {} {:?}",
                    v.name, v.options, self.variant.name, self.variant.options
                )));
            }
        }
        Ok(start.map_or_else(|| self.start.clone(), |g| start_game(Some(g), &self.variant, self.max_plies)))
    }

    /// Lets the opponent move in every game where it is to move and the game goes on.
    fn opponent_moves(&mut self, py: Python<'_>) -> PyResult<()> {
        if matches!(self.opponent, Opponent::Nobody) {
            return Ok(());
        }
        let agent = self.agent;
        let frame = self.frame;
        let waiting = |slot: &Slot| !slot.is_over() && slot.game.side_to_move() != agent;
        loop {
            let pending: Vec<bool> = self.slots.iter().map(waiting).collect();
            if !pending.contains(&true) {
                return Ok(());
            }
            let workers = self.workers.as_ref().unwrap_or(&workers::DEFAULT);
            let slots = &mut self.slots;
            match &self.opponent {
                Opponent::Nobody => return Ok(()),
                Opponent::BuiltIn(opponent) => {
                    let opponent = *opponent;
                    shield(|| {
                        py.allow_threads(|| {
                            workers.install(|| {
                                slots.par_iter_mut().zip(pending.par_iter()).filter(|(_, &p)| p).for_each(
                                    |(slot, _)| {
                                        let mv = opponent.choose(&mut slot.game, &slot.moves, &mut slot.rng);
                                        slot.game.play(mv);
                                    },
                                )
                            })
                        })
                    })?;
                }
                Opponent::Callable(callable) => {
                    // Every action is asked for and checked before any is played: a failing
                    // callable or an illegal answer leaves the games as they were.
                    let mut chosen = Vec::new();
                    for (index, slot) in slots.iter().enumerate().filter(|(i, _)| pending[*i]) {
                        let answer = callable.bind(py).call1((Game::wrap(slot.game.clone()),))?;
                        let action = answer.extract::<Int>().map_err(|_| {
                            IllegalMoveError::new_err(format!(
                                "env {index}: the opponent must return an action (an integer), not {}",
                                convert::describe(&answer)
                            ))
                        })?;
                        let action = observations::action_value(action).map_err(|e| {
                            IllegalMoveError::new_err(format!("env {index}: the opponent's {}", e.value_bound(py)))
                        })?;
                        let mv = actions::move_of(&slot.game.position, &slot.moves, action, Frame::Mover).ok_or_else(|| {
                            IllegalMoveError::new_err(format!(
                                "env {index}: the opponent's action {action} is not legal in this position (mover frame)"
                            ))
                        })?;
                        chosen.push((index, mv));
                    }
                    for (index, mv) in chosen {
                        slots[index].game.play(mv);
                    }
                }
            }
            shield(|| {
                py.allow_threads(|| {
                    workers.install(|| {
                        slots
                            .par_iter_mut()
                            .zip(pending.par_iter())
                            .filter(|(_, &p)| p)
                            .for_each(|(slot, _)| slot.refresh(frame))
                    })
                })
            })?;
        }
    }

    /// Restarts the games of `which` (all when None) from `start`, then lets the opponent open.
    fn restart(&mut self, py: Python<'_>, which: Option<&[bool]>, start: &engine::Game) -> PyResult<()> {
        let workers = self.workers.as_ref().unwrap_or(&workers::DEFAULT);
        let frame = self.frame;
        let slots = &mut self.slots;
        shield(|| {
            py.allow_threads(|| {
                workers.install(|| {
                    slots.par_iter_mut().enumerate().for_each(|(i, slot)| {
                        if which.is_none_or(|w| w[i]) {
                            slot.restart(start, frame);
                        }
                    })
                })
            })
        })?;
        self.opponent_moves(py)
    }
}

#[pymethods]
impl VectorEnvCore {
    #[new]
    #[pyo3(signature = (num_envs, variant = "taikyoku", options = None, seed = Int(0), threads = None, frame = "mover",
        max_plies = None, illegal_action = "raise", compact = false, dtype = None, copy = true, opponent = None,
        agent_color = "black", mcts_simulations = Int(64), start = None))]
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
        opponent: Option<&Bound<'_, PyAny>>,
        agent_color: &str,
        mcts_simulations: Int,
        start: Option<PyRef<'_, Game>>,
    ) -> PyResult<VectorEnvCore> {
        let num_envs: usize = num_envs.within("num_envs", 1, MAX_ENVS)?;
        let seed = seed.seed("seed")?;
        let options = options.unwrap_or_default();
        let variant = variants::variant(variant, &options)?;
        let frame = convert::parse(frame)?;
        let layout = convert::layout(compact);
        let dtype = Dtype::parse(py, dtype, layout, &variant)?;
        let illegal = convert::parse(illegal_action)?;
        let max_plies = max_plies.map(|m| m.count("max_plies")).transpose()?;
        let agent = convert::color(agent_color)?;
        let opponent = match opponent {
            None => Opponent::Nobody,
            Some(o) if o.is_none() => Opponent::Nobody,
            Some(o) if o.is_callable() => Opponent::Callable(o.clone().unbind()),
            Some(o) => match o.extract::<String>().as_deref() {
                Ok("random") => Opponent::BuiltIn(BuiltInOpponent::Random),
                Ok("mcts") => Opponent::BuiltIn(BuiltInOpponent::Mcts {
                    simulations: mcts_simulations.within("mcts_simulations", 1, 1 << 24)?,
                }),
                _ => {
                    return Err(invalid(format!(
                        "unknown opponent {} (use None, 'random', 'mcts' or a callable)",
                        convert::describe(o)
                    )))
                }
            },
        };
        let workers =
            threads.map(|t| t.within::<usize>("threads", 1, 256).map(|n| Workers::new(Some(n)))).transpose()?;
        let planes = observation::plane_count(&variant, layout);
        let what = format!("VectorEnv({num_envs}) with {} observations", dtype.name());
        let buffer = if copy { None } else { Some(dtype.zeros(py, &what, vec![num_envs, GRID, GRID, planes])?) };
        let pool = Arc::new(Pool::default());
        if copy {
            // One block now, so that too many envs fail here, before their games are built.
            let bytes =
                [num_envs, GRID, GRID, planes].iter().try_fold(dtype.item_bytes(), |acc: usize, &n| acc.checked_mul(n));
            if !bytes.filter(|&b| b <= isize::MAX as usize).is_some_and(|b| pool.reserve(b)) {
                return Err(invalid(format!(
                    "{what} needs an array of shape [{num_envs}, {GRID}, {GRID}, {planes}]: out of memory"
                )));
            }
        }
        let mut core = VectorEnvCore {
            variant: variant.clone(),
            slots: Vec::new(),
            start: start_game(None, &variant, max_plies),
            frame,
            illegal,
            max_plies,
            opponent,
            agent,
            workers,
            layout,
            dtype,
            rng: engine_vector::action_rng(seed),
            options,
            buffer,
            pool,
        };
        core.start = core.check_start(start.as_deref())?;
        let template = core.start.clone();
        core.slots = (0..num_envs)
            .map(|i| Slot {
                game: template.clone(),
                moves: Vec::new(),
                legal: Vec::new(),
                rng: opponent_rng(seed, i),
                written: Vec::new(),
            })
            .collect();
        core.restart(py, None, &template)?;
        Ok(core)
    }

    #[getter]
    fn num_envs(&self) -> usize {
        self.slots.len()
    }

    #[getter]
    fn options(&self) -> Vec<String> {
        self.options.clone()
    }

    /// Reseeds the stream of `random_actions` and the built-in opponents' streams.
    fn seed(&mut self, seed: Int) -> PyResult<()> {
        let seed = seed.seed("seed")?;
        self.rng = engine_vector::action_rng(seed);
        for (i, slot) in self.slots.iter_mut().enumerate() {
            slot.rng = opponent_rng(seed, i);
        }
        Ok(())
    }

    /// Restarts the games (those where `mask` is true, or all) from `start` (a Game, for this
    /// reset only) or the env's start position; returns the observations of all games.
    #[pyo3(signature = (mask = None, start = None))]
    fn reset(
        &mut self,
        py: Python<'_>,
        mask: Option<PyReadonlyArray1<'_, bool>>,
        start: Option<PyRef<'_, Game>>,
    ) -> PyResult<PyObject> {
        let mask: Option<Vec<bool>> = mask.map(|m| m.as_array().to_vec());
        if let Some(m) = &mask {
            if m.len() != self.slots.len() {
                return Err(invalid(format!("reset_mask needs {} entries, got {}", self.slots.len(), m.len())));
            }
        }
        let start = self.check_start(start.as_deref())?;
        self.restart(py, mask.as_deref(), &start)?;
        self.observations(py)
    }

    /// The current observations (N, 36, 36, P).
    fn observations_now(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        self.observations(py)
    }

    /// Plays one action per game (then the opponent's answer, if any). Returns (observations,
    /// rewards, terminated, truncated, finished) where finished lists (index, Game) for the
    /// games this step ended; they have already been reset. A game found over before its
    /// action (only a start position the opponent ends at once) is restarted, its action unused.
    #[allow(clippy::type_complexity)]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        actions: PyReadonlyArray1<'py, i64>,
    ) -> PyResult<(
        PyObject,
        Bound<'py, PyArray1<f32>>,
        Bound<'py, PyArray1<bool>>,
        Bound<'py, PyArray1<bool>>,
        Vec<(usize, Game)>,
    )> {
        let actions = actions.as_array();
        let n = self.slots.len();
        if actions.len() != n {
            return Err(invalid(format!("step() needs {n} actions, got {}", actions.len())));
        }
        let mut values = Vec::with_capacity(n);
        for (env, &a) in actions.iter().enumerate() {
            if a < 0 || a as usize >= NUM_ACTIONS {
                return Err(IllegalMoveError::new_err(format!(
                    "env {env}: action {a} is outside the action space [0, {NUM_ACTIONS})"
                )));
            }
            values.push(a as u32);
        }
        let stale: Vec<bool> = self.slots.iter().map(Slot::is_over).collect();
        if self.illegal == IllegalAction::Raise {
            let bad = self.slots.iter().zip(&values).enumerate().find(|(i, (slot, &a))| {
                !stale[*i] && slot.legal.binary_search_by_key(&a, |&(action, _)| action).is_err()
            });
            if let Some((env, (_, a))) = bad {
                return Err(IllegalMoveError::new_err(format!(
                    "env {env}: action {a} is not legal (nothing was played)"
                )));
            }
        }
        let movers: Vec<Color> = self.slots.iter().map(|s| s.game.side_to_move()).collect();
        let frame = self.frame;
        {
            let workers = self.workers.as_ref().unwrap_or(&workers::DEFAULT);
            let slots = &mut self.slots;
            let (values, stale) = (&values, &stale);
            shield(|| {
                py.allow_threads(|| {
                    workers.install(|| {
                        slots.par_iter_mut().enumerate().filter(|(i, _)| !stale[*i]).for_each(|(i, slot)| {
                            match slot.legal.binary_search_by_key(&values[i], |&(a, _)| a) {
                                Ok(index) => slot.game.play(slot.legal[index].1),
                                Err(_) => slot.game.forfeit(),
                            }
                            slot.refresh(frame);
                        })
                    })
                })
            })?;
        }
        self.opponent_moves(py)?;
        let with_opponent = !matches!(self.opponent, Opponent::Nobody);
        let mut rewards = vec![0f32; n];
        let mut terminated = vec![false; n];
        let mut truncated = vec![false; n];
        let mut finished = Vec::new();
        let mut again = vec![false; n];
        for (i, slot) in self.slots.iter().enumerate() {
            if stale[i] {
                again[i] = true;
                continue;
            }
            if let Some((outcome, _)) = slot.end() {
                let viewer = if with_opponent { self.agent } else { movers[i] };
                rewards[i] = outcome.value_for(viewer) as f32;
                terminated[i] = outcome != Outcome::Truncated;
                truncated[i] = outcome == Outcome::Truncated;
                again[i] = true;
                finished.push((i, Game::wrap(slot.game.clone())));
            }
        }
        if again.contains(&true) {
            let start = self.start.clone();
            self.restart(py, Some(&again), &start)?;
        }
        let observations = self.observations(py)?;
        Ok((
            observations,
            PyArray1::from_vec_bound(py, rewards),
            PyArray1::from_vec_bound(py, terminated),
            PyArray1::from_vec_bound(py, truncated),
            finished,
        ))
    }

    /// The sorted legal actions of every game, one int64 array each.
    fn legal_actions<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyArray1<i64>>> {
        self.slots.iter().map(|s| actions_array(py, s.legal.iter().map(|&(a, _)| a))).collect()
    }

    /// The legal actions of every game as one flat int64 array and N + 1 offsets (CSR).
    fn legal_actions_flat<'py>(&self, py: Python<'py>) -> (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>) {
        let flat = self.slots.iter().flat_map(|s| s.legal.iter().map(|&(a, _)| a));
        let mut offsets = vec![0i64];
        for (i, slot) in self.slots.iter().enumerate() {
            offsets.push(offsets[i] + slot.legal.len() as i64);
        }
        (actions_array(py, flat), PyArray1::from_vec_bound(py, offsets))
    }

    /// A dense (N, NUM_ACTIONS) boolean mask: heavy, for masked-sampling code that needs it.
    fn legal_action_mask<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<bool>>> {
        let rows: Vec<Vec<u32>> = self.slots.iter().map(|s| s.legal.iter().map(|&(a, _)| a).collect()).collect();
        mask(py, &rows)
    }

    /// A uniformly random legal action per game, from the seeded stream (0 for a game with
    /// none, whose action is not used).
    fn random_actions<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        let rng = &mut self.rng;
        let actions: Vec<u32> = self
            .slots
            .iter()
            .map(|s| if s.legal.is_empty() { 0 } else { s.legal[rng.gen_range(0..s.legal.len())].0 })
            .collect();
        actions_array(py, actions.into_iter())
    }

    /// The side to move of every game (`"black"` or `"white"`).
    fn sides_to_move(&self) -> Vec<&'static str> {
        self.slots.iter().map(|s| s.game.side_to_move().name()).collect()
    }

    /// Plies played in every game.
    fn plies<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        PyArray1::from_iter_bound(py, self.slots.iter().map(|s| s.game.plies() as i64))
    }

    /// A copy of game `index`.
    fn game(&self, index: Int) -> PyResult<Game> {
        let index: usize = index.within("index", 0, self.slots.len() as i128 - 1)?;
        Ok(Game::wrap(self.slots[index].game.clone()))
    }

    /// Worker threads asked for (None: one per core).
    #[getter]
    fn threads(&self) -> Option<usize> {
        self.workers().threads()
    }

    /// Observation shape (36, 36, P).
    #[getter]
    fn observation_shape(&self) -> (usize, usize, usize) {
        (GRID, GRID, observation::plane_count(&self.variant, self.layout))
    }

    #[getter]
    fn dtype(&self) -> &'static str {
        self.dtype.name()
    }
}
