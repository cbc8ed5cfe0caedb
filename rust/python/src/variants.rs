//! The variants: loading one by name, or from files at run time (`load_variant`), and what
//! describes one (`variants`, `variant_info`, `rule_options`, `check_variant`).

use crate::errors::invalid;
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use std::sync::Arc;
use taikyoku_engine::{variant_names, variant_sources, Sources, Variant, VariantError};

/// The variant `name` with rule `options`, or a `TaikyokuError` naming the problem.
pub fn variant(name: &str, options: &[String]) -> PyResult<Arc<Variant>> {
    Variant::load(name, options).map_err(|e| match e {
        VariantError::UnknownVariant(_) => invalid(format!(
            "unknown variant '{}' (known: {}; taikyoku.load_variant(path) loads one from its files)",
            crate::errors::clip(name),
            variant_names().join(", ")
        )),
        // Every valid name is listed, however many (Dai dai has dozens): the message is the help.
        VariantError::UnknownOption { variant, option, known } => {
            let e = VariantError::UnknownOption { variant, option: crate::errors::clip(&option), known };
            invalid(format!("{e} (taikyoku.rule_options() describes them)"))
        }
        other => variant_error(other),
    })
}

/// A `VariantError` as Python raises it: an `OSError` (errno, message, file name) for a file that
/// could not be read, else a `TaikyokuError` with the engine's message (file and line).
fn variant_error(e: VariantError) -> PyErr {
    match e {
        VariantError::Io { path, errno: Some(errno), message } => PyOSError::new_err((errno, message, path)),
        VariantError::Io { .. } => PyOSError::new_err(e.to_string()),
        other => invalid(crate::errors::clip_message(&other.to_string())),
    }
}

/// The rule options a variant offers, as (name, what it changes): a piece key for an option of
/// the piece table, a rules-file key (lower case, e.g. `promotion-trigger`) for an option of the
/// rules file — see docs/RULES.md.
#[pyfunction]
#[pyo3(signature = (variant = "taikyoku"))]
pub fn rule_options(variant: &str) -> PyResult<Vec<(String, String)>> {
    Ok(self::variant(variant, &[])?.rule_options())
}

/// Check mode for a variant being written: loads its rules file, piece table and setup (the
/// texts) with every rule option; returns a one-line summary or raises TaikyokuError naming
/// the file and line of the first problem.
#[pyfunction]
pub fn check_variant(name: &str, rules: &str, pieces: &str, setup: &str) -> PyResult<String> {
    Variant::check(name, Sources { rules, pieces, setup }).map_err(|e| invalid(e.to_string()))
}

/// The names of the variants this process plays: the built-in ones, then those loaded from files.
#[pyfunction]
pub fn variants() -> Vec<&'static str> {
    variant_names()
}

/// Loads the variant of a rules file and the `.pieces` and `.setup` files beside it; returns its
/// name (the files' name, in lower case).
#[pyfunction]
pub fn load_variant(path: PathBuf) -> PyResult<&'static str> {
    Variant::load_files(&path).map_err(variant_error)
}

/// Makes a variant known under `name` from the texts of its three files (what `load_variant`
/// does after reading them; a worker process receives a loaded variant this way).
#[pyfunction]
pub fn register_variant(name: &str, rules: &str, pieces: &str, setup: &str) -> PyResult<&'static str> {
    Variant::register(name, Sources { rules, pieces, setup }).map_err(variant_error)
}

/// The texts of a known variant's three files: (rules, pieces, setup).
#[pyfunction]
pub fn variant_texts(name: &str) -> PyResult<(&'static str, &'static str, &'static str)> {
    let (_, sources) =
        variant_sources(name).ok_or_else(|| variant(name, &[]).err().unwrap_or_else(|| invalid(name)))?;
    Ok((sources.rules, sources.pieces, sources.setup))
}

/// What names and sizes a variant: name, title, gym_id (without the `taikyoku/` namespace),
/// built_in, width, height, piece_types, pieces_per_side.
#[pyfunction]
pub fn variant_info<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyDict>> {
    let v = variant(name, &[])?;
    let info = PyDict::new_bound(py);
    info.set_item("name", &v.name)?;
    info.set_item("title", v.title())?;
    info.set_item("gym_id", v.gym_id())?;
    info.set_item("built_in", v.is_built_in())?;
    info.set_item("width", v.geometry.width)?;
    info.set_item("height", v.geometry.height)?;
    info.set_item("piece_types", v.table.len())?;
    info.set_item("pieces_per_side", v.setup.len())?;
    Ok(info)
}
