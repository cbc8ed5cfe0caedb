//! Arguments from Python: integers (Python or numpy) checked against their range, and option
//! strings turned into the engine's enums. Each conversion is written once here (the MCTS
//! settings' real numbers are checked by `taikyoku_selfplay::settings::check_real`).
//!
//! A value of the wrong type is a `TypeError`; a value out of range or an unknown option is a
//! `TaikyokuError` (a `ValueError`) naming the argument and what it accepts.

use crate::errors::{clip, invalid};
use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyBool;
use taikyoku_engine::rl::actions::Frame;
use taikyoku_engine::rl::observation::Layout;
use taikyoku_engine::rl::vector::IllegalAction;
use taikyoku_engine::Color;
use taikyoku_selfplay::Format;

/// An integer argument: a Python `int` or anything with `__index__` (numpy integers), never a
/// `bool` or a float. Values beyond `i128` saturate (they are out of every range anyway).
#[derive(Clone, Copy, Debug)]
pub struct Int(pub i128);

impl<'py> FromPyObject<'py> for Int {
    fn extract_bound(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        let py = ob.py();
        if ob.is_instance_of::<PyBool>() || !ob.hasattr(intern!(py, "__index__"))? {
            return Err(PyTypeError::new_err(format!("must be an integer, not {}", describe(ob))));
        }
        let index = ob.call_method0(intern!(py, "__index__"))?;
        match index.extract::<i128>() {
            Ok(value) => Ok(Int(value)),
            Err(_) => Ok(Int(if index.lt(0)? { i128::MIN } else { i128::MAX })),
        }
    }
}

impl Int {
    /// The value as `T`, if it lies in `min..=max`.
    pub fn within<T: TryFrom<i128>>(self, name: &str, min: i128, max: i128) -> PyResult<T> {
        let shown = match self.0 {
            i128::MIN | i128::MAX => "a number beyond 2**127".to_string(),
            v => v.to_string(),
        };
        if self.0 < min || self.0 > max {
            return Err(invalid(format!("{name} must be between {min} and {max}, not {shown}")));
        }
        T::try_from(self.0).map_err(|_| invalid(format!("{name} is out of range: {shown}")))
    }

    /// A count in `0..=u32::MAX`.
    pub fn count(self, name: &str) -> PyResult<u32> {
        self.within(name, 0, u32::MAX as i128)
    }

    /// A positive count in `1..=u32::MAX`.
    pub fn positive(self, name: &str) -> PyResult<u32> {
        self.within(name, 1, u32::MAX as i128)
    }

    /// A seed: any integer in `0..2**64`.
    pub fn seed(self, name: &str) -> PyResult<u64> {
        self.within(name, 0, u64::MAX as i128)
    }
}

/// `value!r` and its type, for messages.
pub fn describe(ob: &Bound<'_, PyAny>) -> String {
    let repr = ob.repr().map(|r| r.to_string()).unwrap_or_else(|_| "?".into());
    let repr = clip(&repr);
    let type_name = ob.get_type().name().map(|n| n.to_string()).unwrap_or_default();
    format!("{type_name} {repr}")
}

/// An option that is one of a fixed set of names.
pub trait Named: Copy + 'static {
    /// What the option is called in messages (`frame`).
    const WHAT: &'static str;
    const ALL: &'static [Self];
    fn name(self) -> &'static str;
}

/// The names of an option, in order (exported to Python so it validates against the same list).
pub fn names<T: Named>() -> Vec<&'static str> {
    T::ALL.iter().map(|v| v.name()).collect()
}

/// The option named `text`, or a `TaikyokuError` listing the names.
pub fn parse<T: Named>(text: &str) -> PyResult<T> {
    T::ALL.iter().copied().find(|v| v.name() == text).ok_or_else(|| {
        let names: Vec<String> = T::ALL.iter().map(|v| format!("'{}'", v.name())).collect();
        invalid(format!("unknown {} '{}' (use {})", T::WHAT, clip(text), names.join(" or ")))
    })
}

impl Named for Frame {
    const WHAT: &'static str = "frame";
    const ALL: &'static [Self] = &[Frame::Mover, Frame::Absolute];
    fn name(self) -> &'static str {
        Frame::name(self)
    }
}

impl Named for Color {
    const WHAT: &'static str = "color";
    const ALL: &'static [Self] = &Color::BOTH;
    fn name(self) -> &'static str {
        Color::name(self)
    }
}

impl Named for IllegalAction {
    const WHAT: &'static str = "illegal_action";
    const ALL: &'static [Self] = &[IllegalAction::Raise, IllegalAction::Lose];
    fn name(self) -> &'static str {
        IllegalAction::name(self)
    }
}

impl Named for Format {
    const WHAT: &'static str = "format";
    const ALL: &'static [Self] = &[Format::Arrow, Format::Parquet];
    fn name(self) -> &'static str {
        self.extension()
    }
}

/// A colour: `black`/`white` (also `b`/`w`, `sente`/`gote`, any case).
pub fn color(text: &str) -> PyResult<Color> {
    Color::parse(text).ok_or_else(|| invalid(format!("unknown color '{}' (use 'black' or 'white')", clip(text))))
}

/// The observation layout of the `compact` flag.
pub fn layout(compact: bool) -> Layout {
    if compact {
        Layout::Compact
    } else {
        Layout::OneHot
    }
}
