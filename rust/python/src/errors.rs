//! The package's exceptions (all `ValueError`s) and the conversions of engine errors into them.
//! Rust panics never reach Python: `shield` turns one into `InternalError`.

use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use taikyoku_engine::NotationError as EngineNotationError;
use taikyoku_selfplay::RunError;

create_exception!(taikyoku, TaikyokuError, PyValueError, "Base class of the package's errors (a ValueError).");
create_exception!(taikyoku, IllegalMoveError, TaikyokuError, "The move is not legal in this position.");
create_exception!(taikyoku, NotationError, TaikyokuError, "Malformed or ambiguous move notation.");
create_exception!(taikyoku, AmbiguousMoveError, NotationError, "Notation that matches several legal moves.");
create_exception!(taikyoku, UnknownSquareError, TaikyokuError, "A square name that is not on the board.");
create_exception!(taikyoku, UnknownPieceError, TaikyokuError, "A piece name or code that is not in the table.");
create_exception!(taikyoku, PositionTextError, TaikyokuError, "Malformed position text.");
create_exception!(
    taikyoku,
    InternalError,
    TaikyokuError,
    "A bug in taikyoku: the Rust core failed an internal check (please report it, with the message)."
);

/// User text cut to a readable length for a message (an error must not echo a 1 MB string).
pub fn clip(text: &str) -> String {
    const LIMIT: usize = 60;
    if text.chars().count() <= LIMIT {
        text.to_string()
    } else {
        format!("{}...({} characters)", text.chars().take(LIMIT - 15).collect::<String>(), text.chars().count())
    }
}

/// A whole message cut to 300 characters (it may quote user text at length).
pub fn clip_message(message: &str) -> String {
    const LIMIT: usize = 300;
    let count = message.chars().count();
    if count <= LIMIT {
        message.to_string()
    } else {
        format!("{}... ({count} characters)", message.chars().take(LIMIT - 20).collect::<String>())
    }
}

/// A `TaikyokuError` with `message`.
pub fn invalid(message: impl Into<String>) -> PyErr {
    TaikyokuError::new_err(message.into())
}

pub fn notation_error(e: EngineNotationError) -> PyErr {
    // The message quotes the notation: keep an echo of a huge string short.
    let message = clip_message(&e.to_string());
    match e {
        EngineNotationError::Illegal(_) => IllegalMoveError::new_err(message),
        EngineNotationError::UnknownPiece(_) => UnknownPieceError::new_err(message),
        EngineNotationError::UnknownSquare(_) => UnknownSquareError::new_err(message),
        EngineNotationError::Malformed(_) => NotationError::new_err(message),
        EngineNotationError::Ambiguous(_) => AmbiguousMoveError::new_err(message),
    }
}

/// Usage errors are `TaikyokuError`s; file-system failures `OSError`s with `errno`, `strerror`
/// and `filename` (so Python picks the subclass: `FileNotFoundError`, `PermissionError`...), or
/// the storage's message where it gave no error number; a dataset another writer holds is a
/// `BlockingIOError` (`EWOULDBLOCK`), as a lock taken without waiting would raise.
pub fn run_error(e: RunError) -> PyErr {
    match e {
        RunError::Usage(m) => TaikyokuError::new_err(m),
        RunError::Io(failure) => match failure.errno {
            Some(errno) => PyOSError::new_err((errno, failure.strerror, failure.path)),
            None => PyOSError::new_err(failure.to_string()),
        },
        RunError::Busy(m) => Python::with_gil(|py| {
            let errno = py
                .import_bound("errno")
                .and_then(|m| m.getattr("EWOULDBLOCK"))
                .and_then(|e| e.extract::<i32>())
                .unwrap_or(11);
            pyo3::exceptions::PyBlockingIOError::new_err((errno, m))
        }),
        RunError::Interrupted => {
            pyo3::exceptions::PyKeyboardInterrupt::new_err("self-play interrupted; complete shards are kept")
        }
    }
}

/// Runs `f`, turning a Rust panic (a bug) into `InternalError` instead of pyo3's
/// `PanicException`, which is a `BaseException` that `except Exception` does not catch.
pub fn shield<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(InternalError::new_err(format!("internal error (please report it): {what}")))
        }
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("TaikyokuError", py.get_type_bound::<TaikyokuError>())?;
    m.add("IllegalMoveError", py.get_type_bound::<IllegalMoveError>())?;
    m.add("NotationError", py.get_type_bound::<NotationError>())?;
    m.add("AmbiguousMoveError", py.get_type_bound::<AmbiguousMoveError>())?;
    m.add("UnknownSquareError", py.get_type_bound::<UnknownSquareError>())?;
    m.add("UnknownPieceError", py.get_type_bound::<UnknownPieceError>())?;
    m.add("PositionTextError", py.get_type_bound::<PositionTextError>())?;
    m.add("InternalError", py.get_type_bound::<InternalError>())?;
    Ok(())
}
