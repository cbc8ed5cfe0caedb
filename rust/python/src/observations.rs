//! Actions and observations as numpy arrays: observations are written by Rust straight into
//! numpy memory, batches encoded in parallel with the GIL released.

use crate::convert::{self, describe, Int};
use crate::errors::{invalid, shield, IllegalMoveError};
use crate::variants;
use crate::workers::Workers;
use numpy::{Element, PyArray1, PyArray2, PyArrayDyn, PyArrayMethods};
use pyo3::prelude::*;
use taikyoku_engine::rl::actions::{self, Frame, GRID, NUM_ACTIONS};
use taikyoku_engine::rl::observation::{self, Cell, Layout};
use taikyoku_engine::{self as engine, Move as EngineMove, Variant};

/// Element types an observation can be written as.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    U8,
    U16,
    F32,
}

impl Dtype {
    /// Bytes per value.
    pub fn item_bytes(self) -> usize {
        match self {
            Dtype::U8 => 1,
            Dtype::U16 => 2,
            Dtype::F32 => 4,
        }
    }

    /// Reads a dtype given as a string, a numpy type or a numpy dtype; `None` picks the
    /// layout's default (uint8 one-hot, uint16 compact: piece ids exceed 255).
    pub fn parse(
        py: Python<'_>,
        dtype: Option<&Bound<'_, PyAny>>,
        layout: Layout,
        variant: &Variant,
    ) -> PyResult<Dtype> {
        let Some(dtype) = dtype.filter(|d| !d.is_none()) else {
            return Ok(if layout == Layout::Compact { Dtype::U16 } else { Dtype::U8 });
        };
        let name: String = py
            .import_bound("numpy")?
            .getattr("dtype")?
            .call1((dtype,))
            .and_then(|d| d.getattr("name")?.extract())
            .map_err(|_| invalid(format!("unknown dtype {} (use 'uint8', 'uint16' or 'float32')", describe(dtype))))?;
        let parsed = match name.as_str() {
            "uint8" => Dtype::U8,
            "uint16" => Dtype::U16,
            "float32" => Dtype::F32,
            _ => return Err(invalid(format!("unsupported dtype {name} (use 'uint8', 'uint16' or 'float32')"))),
        };
        if parsed == Dtype::U8 && layout == Layout::Compact && variant.table.len() >= 255 {
            return Err(invalid(format!(
                "compact observations of {} have {} piece ids: use uint16 or float32, not uint8",
                variant.name,
                variant.table.len()
            )));
        }
        Ok(parsed)
    }

    pub fn name(self) -> &'static str {
        match self {
            Dtype::U8 => "uint8",
            Dtype::U16 => "uint16",
            Dtype::F32 => "float32",
        }
    }

    /// A zeroed array of this dtype (see `zeros`).
    pub fn zeros(self, py: Python<'_>, what: &str, shape: Vec<usize>) -> PyResult<PyObject> {
        Ok(match self {
            Dtype::U8 => zeros::<u8>(py, what, shape)?.into_any().unbind(),
            Dtype::U16 => zeros::<u16>(py, what, shape)?.into_any().unbind(),
            Dtype::F32 => zeros::<f32>(py, what, shape)?.into_any().unbind(),
        })
    }
}

/// A zeroed numpy array for `what`. numpy's zeros come from calloc: fresh pages are zero
/// already, so writers skip clearing. Too large an array is a `TaikyokuError` saying how large
/// (rust-numpy's own constructor would panic).
pub fn zeros<'py, T: Element>(py: Python<'py>, what: &str, shape: Vec<usize>) -> PyResult<Bound<'py, PyArrayDyn<T>>> {
    let bytes = shape.iter().try_fold(std::mem::size_of::<T>(), |acc, &n| acc.checked_mul(n));
    let too_large = |why: String| {
        let size = bytes.map_or("more than 2**64 bytes".into(), |b| format!("{:.1} GB", b as f64 / 1e9));
        invalid(format!("{what} needs an array of shape {shape:?} ({size}): {why}"))
    };
    if bytes.is_none_or(|b| b > isize::MAX as usize) {
        return Err(too_large("too large".into()));
    }
    let array =
        py.import_bound("numpy")?.getattr("zeros")?.call1((shape.clone(), numpy::dtype_bound::<T>(py))).map_err(
            |e| {
                if e.is_instance_of::<pyo3::exceptions::PyMemoryError>(py) {
                    too_large("out of memory".into())
                } else {
                    e
                }
            },
        )?;
    Ok(array.downcast_into::<PyArrayDyn<T>>()?)
}

fn encode_as<T: Cell + Element>(
    py: Python<'_>,
    games: &[&engine::Game],
    frame: Frame,
    layout: Layout,
    batch: bool,
    workers: &Workers,
) -> PyResult<PyObject> {
    let variant = &games[0].position.variant;
    let planes = observation::plane_count(variant, layout);
    let mut shape = vec![GRID, GRID, planes];
    if batch {
        shape.insert(0, games.len());
    }
    let array = zeros::<T>(py, "encoding the observations", shape)?;
    {
        let mut view = array.try_readwrite().expect("a new array is writable");
        let out = view.as_slice_mut().expect("a new array is contiguous");
        // One game is written on the calling thread: handing it to a worker costs more than
        // it saves.
        shield(|| {
            py.allow_threads(|| match games {
                [game] => {
                    observation::write(game, frame, layout, out, true);
                    Ok(())
                }
                _ => workers.install(|| observation::write_batch(games, frame, layout, out, true)),
            })
        })?;
    }
    Ok(array.into_any().unbind())
}

/// Observations of `games` (all of one variant) as one numpy array, (N, 36, 36, P) when
/// `batch`, else (36, 36, P) of the one game.
pub fn encode(
    py: Python<'_>,
    games: &[&engine::Game],
    frame: Frame,
    layout: Layout,
    dtype: Dtype,
    batch: bool,
    workers: &Workers,
) -> PyResult<PyObject> {
    match dtype {
        Dtype::U8 => encode_as::<u8>(py, games, frame, layout, batch, workers),
        Dtype::U16 => encode_as::<u16>(py, games, frame, layout, batch, workers),
        Dtype::F32 => encode_as::<f32>(py, games, frame, layout, batch, workers),
    }
}

pub fn actions_array<'py>(py: Python<'py>, actions: impl Iterator<Item = u32>) -> Bound<'py, PyArray1<i64>> {
    PyArray1::from_iter_bound(py, actions.map(i64::from))
}

/// A dense boolean mask over the whole action space (one row per list of legal actions).
pub fn mask<'py>(py: Python<'py>, rows: &[Vec<u32>]) -> PyResult<Bound<'py, PyArray2<bool>>> {
    let array = zeros::<bool>(py, "the legal action mask", vec![rows.len(), NUM_ACTIONS])?;
    {
        let mut view = array.try_readwrite().expect("a new array is writable");
        let out = view.as_slice_mut().expect("contiguous");
        for (r, row) in rows.iter().enumerate() {
            for &a in row {
                out[r * NUM_ACTIONS + a as usize] = true;
            }
        }
    }
    Ok(array.into_any().downcast_into::<PyArray2<bool>>()?)
}

/// An action in the action space, or IllegalMoveError saying it is outside.
pub fn action_value(action: Int) -> PyResult<u32> {
    if action.0 < 0 || action.0 >= NUM_ACTIONS as i128 {
        let shown =
            if action.0.unsigned_abs() > u64::MAX as u128 { "a huge number".to_string() } else { action.0.to_string() };
        return Err(IllegalMoveError::new_err(format!(
            "action {shown} is outside the action space [0, {NUM_ACTIONS})"
        )));
    }
    Ok(action.0 as u32)
}

/// The legal move of `game` for `action`, or IllegalMoveError describing the action.
pub fn legal_move_for(game: &engine::Game, action: u32, frame: Frame) -> PyResult<EngineMove> {
    let pos = &game.position;
    let geometry = &pos.variant.geometry;
    let flip = frame.flips(pos.side_to_move());
    let shape = actions::shape(action).expect("in range");
    let from = match shape {
        actions::ActionShape::Simple { from, .. } | actions::ActionShape::MultiLeg { from, .. } => from,
    };
    // An action names its start square: only that piece's moves are listed (with the history
    // rules), not the whole side's.
    let mut moves = Vec::new();
    if let Some(sq) = actions::board_square(geometry, from, flip) {
        if game.recorded_end().is_none() && pos.at(sq).is_some_and(|p| p.color == pos.side_to_move()) {
            game.generate_from(sq, &mut moves);
        }
    }
    actions::move_of(pos, &moves, action, frame).ok_or_else(|| {
        let name = |grid: usize| {
            actions::board_square(geometry, grid, flip)
                .map(|sq| geometry.square_name(sq))
                .unwrap_or_else(|| "off the board".into())
        };
        let mut what = match shape {
            actions::ActionShape::Simple { from, to } => format!("{} to {}", name(from), name(to)),
            actions::ActionShape::MultiLeg { from, template } => {
                format!("from {} capturing at {:?} and ending at {:?}", name(from), template.captured(), template.end)
            }
        };
        if actions::promotes(action) {
            what.push_str(", promoting");
        }
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
    let variant = variants::variant(variant, &options.unwrap_or_default())?;
    Ok(observation::plane_names(&variant, convert::layout(compact)))
}

/// The multi-leg templates of the action space, in order: (captured offsets, end offset), each
/// offset (rows, columns) from the start square in the frame.
#[pyfunction]
pub fn action_templates() -> Vec<(Vec<(i8, i8)>, (i8, i8))> {
    actions::templates().iter().map(|t| (t.captured().to_vec(), t.end)).collect()
}
