//! Self-play runs and dataset decoding: thin wrappers of taikyoku-selfplay.

use crate::env::{layout_of, parse_dtype, parse_frame, Dtype};
use crate::TaikyokuError;
use numpy::{PyArrayDyn, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use taikyoku_engine::actions::{GRID, GRID_SQUARES};
use taikyoku_engine::observation::{self, Cell};
use taikyoku_selfplay::network::{LeafBatch, NetworkSelfPlay};
use taikyoku_selfplay::settings::NetworkSettings;
use taikyoku_selfplay::{self as selfplay, Format, MctsSettings, Players, RunError, Settings};

fn run_error(e: RunError) -> PyErr {
    match e {
        RunError::Usage(m) => TaikyokuError::new_err(m),
        RunError::Io(m) => PyOSError::new_err(m),
    }
}

/// Generates (or resumes) a self-play dataset in `out`; returns a summary dict. `progress`, if
/// given, is called with the ply count of each finished game.
#[pyfunction]
#[pyo3(signature = (out, players = "random", games = 8, seed = 0, threads = None, format = "arrow", max_plies = 5000,
    simulations = 64, games_per_shard = 16, variant = "taikyoku", options = None, temperature = None,
    temperature_plies = None, dirichlet_alpha = None, dirichlet_fraction = None, c_puct = None, priors = None,
    rollout_plies = None, progress = None, evaluator = None, evaluator_name = None, leaves_per_game = 8,
    concurrent_games = 32))]
#[allow(clippy::too_many_arguments)]
pub fn selfplay_run(
    py: Python<'_>,
    out: PathBuf,
    players: &str,
    games: i64,
    seed: i64,
    threads: Option<i64>,
    format: &str,
    max_plies: i64,
    simulations: i64,
    games_per_shard: i64,
    variant: &str,
    options: Option<Vec<String>>,
    temperature: Option<f32>,
    temperature_plies: Option<u32>,
    dirichlet_alpha: Option<f32>,
    dirichlet_fraction: Option<f32>,
    c_puct: Option<f32>,
    priors: Option<String>,
    rollout_plies: Option<u32>,
    progress: Option<PyObject>,
    evaluator: Option<PyObject>,
    evaluator_name: Option<String>,
    leaves_per_game: i64,
    concurrent_games: i64,
) -> PyResult<PyObject> {
    let positive = |name: &str, v: i64| {
        u64::try_from(v).ok().filter(|&v| v > 0).ok_or_else(|| TaikyokuError::new_err(format!("{name} must be a positive integer, not {v}")))
    };
    let seed = u64::try_from(seed).map_err(|_| TaikyokuError::new_err(format!("seed must be non-negative, not {seed}")))?;
    let format = match format {
        "arrow" => Format::Arrow,
        "parquet" => Format::Parquet,
        other => return Err(TaikyokuError::new_err(format!("unknown format '{other}' (use 'arrow' or 'parquet')"))),
    };
    let players = match players {
        "random" => Players::Random,
        "mcts" => {
            let d = MctsSettings::default();
            Players::Mcts(MctsSettings {
                simulations: u32::try_from(positive("simulations", simulations)?)
                    .map_err(|_| TaikyokuError::new_err("simulations is too large"))?,
                temperature: temperature.unwrap_or(d.temperature),
                temperature_plies: temperature_plies.unwrap_or(d.temperature_plies),
                dirichlet_alpha: dirichlet_alpha.unwrap_or(d.dirichlet_alpha),
                dirichlet_fraction: dirichlet_fraction.unwrap_or(d.dirichlet_fraction),
                c_puct: c_puct.unwrap_or(d.c_puct),
                priors: priors.unwrap_or(d.priors),
                rollout_plies: rollout_plies.unwrap_or(d.rollout_plies),
                ..d
            })
        }
        other => return Err(TaikyokuError::new_err(format!("unknown players '{other}' (use 'random' or 'mcts')"))),
    };
    let threads = match threads {
        None => None,
        Some(t) if (1..=256).contains(&t) => Some(t as usize),
        Some(t) => return Err(TaikyokuError::new_err(format!("threads must be between 1 and 256, not {t}"))),
    };
    let settings = Settings {
        variant: variant.to_string(),
        options: options.unwrap_or_default(),
        players,
        games: positive("games", games)?,
        seed,
        max_plies: u32::try_from(positive("max_plies", max_plies)?).map_err(|_| TaikyokuError::new_err("max_plies is too large"))?,
        format,
        games_per_shard: positive("games_per_shard", games_per_shard)?,
        network: match &evaluator {
            None => None,
            Some(_) => Some(NetworkSettings {
                name: evaluator_name.unwrap_or_else(|| "evaluator".into()),
                leaves_per_game: u32::try_from(positive("leaves_per_game", leaves_per_game)?)
                    .map_err(|_| TaikyokuError::new_err("leaves_per_game is too large"))?,
            }),
        },
    };
    let concurrent = positive("concurrent_games", concurrent_games)? as usize;
    let report = |record: &selfplay::play::GameRecord| {
        if let Some(callback) = &progress {
            Python::with_gil(|py| {
                // A failing progress callback must not abort the run: report it and go on.
                if let Err(e) = callback.call1(py, (record.plies(),)) {
                    e.print(py);
                }
            });
        }
    };
    let summary = match evaluator {
        None => py.allow_threads(|| selfplay::run(&out, &settings, threads, &report)).map_err(run_error)?,
        Some(evaluator) => {
            let Players::Mcts(mcts) = settings.players.clone() else {
                return Err(TaikyokuError::new_err("an evaluator guides MCTS: use players='mcts'"));
            };
            let variant = crate::variant_for(&settings.variant, &settings.options)?;
            let leaves = settings.network.as_ref().map_or(1, |n| n.leaves_per_game as usize);
            // The evaluator's own exception, re-raised as is once the run stops.
            let mut failure: Option<PyErr> = None;
            let result = py.allow_threads(|| {
                selfplay::run_with(&out, &settings, |games| {
                    let mut driver = NetworkSelfPlay::new(variant.clone(), settings.clone(), mcts.clone(), games, concurrent, leaves);
                    let mut records = Vec::new();
                    while !driver.done() {
                        let batch = driver.gather();
                        // A round may have nothing to evaluate (every search done): no call then.
                        let evaluated = if batch.is_empty() {
                            Ok((Vec::new(), Vec::new()))
                        } else {
                            Python::with_gil(|py| evaluate(py, &evaluator, &variant, &batch))
                        };
                        let (priors, values) = evaluated.map_err(|e| {
                            failure = Some(e);
                            RunError::Usage("the evaluator failed".into())
                        })?;
                        driver.apply(&priors, &values, &batch.offsets).map_err(RunError::Usage)?;
                        for record in driver.take_finished() {
                            report(&record);
                            records.push(record);
                        }
                    }
                    Ok(records)
                })
            });
            if let Some(e) = failure {
                return Err(e);
            }
            result.map_err(run_error)?
        }
    };
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
    dict.set_item("seconds", summary.seconds)?;
    dict.set_item("out", out)?;
    Ok(dict.into_any().unbind())
}

/// Calls the user's evaluator on a batch through `taikyoku.selfplay._evaluate`, which checks
/// and flattens what it returns: (priors aligned with the actions, one value per leaf).
fn evaluate(
    py: Python<'_>,
    evaluator: &PyObject,
    variant: &taikyoku_engine::Variant,
    batch: &LeafBatch,
) -> PyResult<(Vec<f32>, Vec<f32>)> {
    let planes = observation::plane_count(variant, observation::Layout::OneHot);
    let observations = numpy::PyArray1::from_slice_bound(py, &batch.observations)
        .reshape([batch.len(), GRID, GRID, planes])?;
    let actions = numpy::PyArray1::from_iter_bound(py, batch.actions.iter().map(|&a| a as i64));
    let offsets = numpy::PyArray1::from_iter_bound(py, batch.offsets.iter().map(|&o| o as i64));
    let glue = py.import_bound("taikyoku.selfplay")?.getattr("_evaluate")?;
    let (priors, values): (PyReadonlyArray1<'_, f32>, PyReadonlyArray1<'_, f32>) =
        glue.call1((evaluator, observations, actions, offsets))?.extract()?;
    Ok((priors.as_slice()?.to_vec(), values.as_slice()?.to_vec()))
}

fn decode_as<T: Cell + numpy::Element>(
    py: Python<'_>,
    variant: &taikyoku_engine::Variant,
    boards: &[u16],
    white: &[bool],
    repetitions: &[u8],
    plies: &[u32],
    frame: taikyoku_engine::Frame,
    layout: observation::Layout,
) -> PyResult<PyObject> {
    use rayon::prelude::*;
    let n = white.len();
    let planes = observation::plane_count(variant, layout);
    let array = PyArrayDyn::<T>::zeros_bound(py, vec![n, GRID, GRID, planes], false);
    {
        let mut view = array.try_readwrite()?;
        let out = view.as_slice_mut().expect("contiguous");
        let len = GRID_SQUARES * planes;
        py.allow_threads(|| {
            out.par_chunks_mut(len).enumerate().try_for_each(|(i, chunk)| {
                let board = &boards[i * GRID_SQUARES..(i + 1) * GRID_SQUARES];
                observation::write_board(variant, board, white[i], repetitions[i] as u32, plies[i] + 1, frame, layout, chunk)
                    .map_err(|e| format!("position {i}: {e}"))
            })
        })
        .map_err(TaikyokuError::new_err)?;
    }
    Ok(array.into_any().unbind())
}

/// Observations (N, 36, 36, P) of stored positions: compact boards (N, 1296) uint16 and the
/// positions table's `white_to_move`, `repetitions` and `ply` columns. Decoded in parallel.
#[pyfunction]
#[pyo3(signature = (boards, white_to_move, repetitions, ply, variant = "taikyoku", options = None, dtype = None,
    frame = "mover", compact = false))]
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
) -> PyResult<PyObject> {
    let variant = crate::variant_for(variant, &options.unwrap_or_default())?;
    let frame = parse_frame(frame)?;
    let layout = layout_of(compact);
    let dtype = parse_dtype(py, dtype, layout, &variant)?;
    let shape = boards.shape().to_vec();
    let n = white_to_move.len();
    if shape[1] != GRID_SQUARES || shape[0] != n || repetitions.len() != n || ply.len() != n {
        return Err(TaikyokuError::new_err(format!(
            "boards must be (N, {GRID_SQUARES}) with N = len(white_to_move) = len(repetitions) = len(ply); got {shape:?}, {n}, {}, {}",
            repetitions.len(),
            ply.len()
        )));
    }
    let boards = boards.as_slice().map_err(|_| TaikyokuError::new_err("boards must be C-contiguous"))?;
    let contiguous = |_| TaikyokuError::new_err("columns must be contiguous arrays");
    let white = white_to_move.as_slice().map_err(contiguous)?;
    let repetitions = repetitions.as_slice().map_err(contiguous)?;
    let ply = ply.as_slice().map_err(contiguous)?;
    match dtype {
        Dtype::U8 => decode_as::<u8>(py, &variant, boards, white, repetitions, ply, frame, layout),
        Dtype::U16 => decode_as::<u16>(py, &variant, boards, white, repetitions, ply, frame, layout),
        Dtype::F32 => decode_as::<f32>(py, &variant, boards, white, repetitions, ply, frame, layout),
    }
}

/// The move MCTS (heuristic evaluator, no noise, most visited move) chooses for the side to
/// move of `game`, as an action in the mover's frame. Seeded: the same seed, the same move.
#[pyfunction]
#[pyo3(signature = (game, simulations = 64, seed = 0))]
pub fn mcts_action(py: Python<'_>, game: &crate::Game, simulations: i64, seed: u64) -> PyResult<u32> {
    use rand::SeedableRng;
    use taikyoku_engine::evaluation::{HeuristicConfig, HeuristicEvaluator};
    use taikyoku_engine::mcts::{search, MctsConfig};
    let simulations = u32::try_from(simulations)
        .ok()
        .filter(|&s| s > 0)
        .ok_or_else(|| TaikyokuError::new_err(format!("simulations must be a positive integer, not {simulations}")))?;
    let mut engine_game = game.game.clone();
    if engine_game.end_now().is_some() {
        return Err(crate::IllegalMoveError::new_err("the game is over: no move to choose"));
    }
    let variant = engine_game.position.variant.clone();
    let action = py.allow_threads(|| {
        let mut evaluator = HeuristicEvaluator::new(&variant, HeuristicConfig::default());
        let config = MctsConfig { simulations, ..MctsConfig::competitive() };
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let (mv, _) = search(&mut engine_game, &mut evaluator, config, &mut rng);
        taikyoku_engine::actions::action_of(&engine_game.position, mv, taikyoku_engine::Frame::Mover)
    });
    Ok(action)
}
