//! `Piece`, `Move` and `PieceType`: read-only values describing a position, and `piece_types`,
//! a variant's table.

use pyo3::prelude::*;
use taikyoku_engine::table::NO_RANK;
use taikyoku_engine::{Move as EngineMove, Piece as EnginePiece, Position, NO_SQUARE};

/// A piece on the board.
#[pyclass(module = "taikyoku", frozen, eq, hash)]
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Piece {
    /// Notation code: `LN`, or `+FL` for a promoted ferocious leopard.
    #[pyo3(get)]
    abbrev: String,
    /// English name of how it moves now (`Bishop` for a promoted ferocious leopard).
    #[pyo3(get)]
    name: String,
    #[pyo3(get)]
    kanji: String,
    #[pyo3(get)]
    color: String,
    #[pyo3(get)]
    promoted: bool,
    #[pyo3(get)]
    royal: bool,
    /// Table key of the piece type it moves as (`B`, `Free bird`).
    #[pyo3(get)]
    kind: String,
    /// Table key of the piece it was set up as (`FL`).
    #[pyo3(get)]
    origin: String,
}

#[pymethods]
impl Piece {
    fn __repr__(&self) -> String {
        format!(
            "Piece({:?}, {:?}, {:?}{})",
            self.abbrev,
            self.name,
            self.color,
            if self.promoted { ", promoted" } else { "" }
        )
    }
}

impl Piece {
    pub fn new(pos: &Position, p: EnginePiece) -> Piece {
        let table = &pos.variant.table;
        let ty = table.get(p.kind);
        Piece {
            abbrev: pos.piece_sign(p),
            name: ty.name.clone(),
            kanji: ty.kanji.clone(),
            color: p.color.name().to_string(),
            promoted: p.promoted,
            royal: ty.royal,
            kind: ty.key.clone(),
            origin: table.get(p.origin).key.clone(),
        }
    }
}

/// A legal move in a given position.
#[pyclass(module = "taikyoku", frozen)]
#[derive(Clone)]
pub struct Move {
    pub inner: EngineMove,
    #[pyo3(get)]
    from_square: String,
    #[pyo3(get)]
    to_square: String,
    /// Squares of every piece the move removes, in order.
    #[pyo3(get)]
    captures: Vec<String>,
    #[pyo3(get)]
    promotes: bool,
    #[pyo3(get)]
    pub notation: String,
    /// The square a lion-like piece captures on before its second step (None otherwise).
    #[pyo3(get)]
    mid_square: Option<String>,
}

#[pymethods]
impl Move {
    #[getter]
    fn is_pass(&self) -> bool {
        self.inner.is_pass()
    }
    #[getter]
    fn is_igui(&self) -> bool {
        self.inner.is_igui()
    }
    #[getter]
    fn is_capture(&self) -> bool {
        !self.captures.is_empty()
    }
    fn __repr__(&self) -> String {
        format!("Move({:?})", self.notation)
    }
    fn __str__(&self) -> String {
        self.notation.clone()
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.downcast::<Move>().map(|o| o.get().inner == self.inner).unwrap_or(false)
    }
    fn __hash__(&self) -> u64 {
        let m = self.inner;
        // 16 bits per square: from, to, mid, mid2; the sweep flag folded into the low bit.
        ((m.from as u64) << 48 | (m.to as u64) << 32 | (m.mid as u64) << 16 | m.mid2() as u64)
            ^ m.sweep() as u64
            ^ (m.promote() as u64) << 1
    }
}

/// `moves` of the side to move as Python objects, their notations disambiguated against
/// `rivals` (see `Position::notations`).
pub fn moves(pos: &Position, moves: &[EngineMove], rivals: &[EngineMove]) -> Vec<Move> {
    let g = &pos.variant.geometry;
    let notations = pos.notations(moves, rivals);
    moves
        .iter()
        .zip(notations)
        .map(|(&m, notation)| Move {
            inner: m,
            from_square: g.square_name(m.from as usize),
            to_square: g.square_name(m.to as usize),
            captures: pos.captures_of(m).into_iter().map(|sq| g.square_name(sq)).collect(),
            promotes: pos.promotes(m),
            notation,
            mid_square: (m.mid != NO_SQUARE).then(|| g.square_name(m.mid as usize)),
        })
        .collect()
}

/// One move of the side to move as a Python object.
pub fn one_move(pos: &Position, mv: EngineMove) -> Move {
    moves(pos, &[mv], &pos.legal_moves_of_sign(mv)).pop().expect("one move")
}

/// A piece type of a variant's table.
#[pyclass(module = "taikyoku", frozen)]
pub struct PieceType {
    #[pyo3(get)]
    abbrev: String,
    #[pyo3(get)]
    name: String,
    #[pyo3(get)]
    kanji: String,
    /// English name of the promoted piece, or None.
    #[pyo3(get)]
    promotes_to: Option<String>,
    #[pyo3(get)]
    royal: bool,
    /// True for pieces that only appear by promotion.
    #[pyo3(get)]
    promoted_only: bool,
    /// Range-capture rank (0 royal, 1 great general, ...) or None: who may fly over whom.
    #[pyo3(get)]
    range_rank: Option<u8>,
    /// Other names the sources give the piece (accepted by `Game.place`).
    #[pyo3(get)]
    aliases: Vec<String>,
}

#[pymethods]
impl PieceType {
    fn __repr__(&self) -> String {
        format!("PieceType({:?}, {:?})", self.abbrev, self.name)
    }
}

/// The piece types of a variant, in table order.
#[pyfunction]
#[pyo3(signature = (variant = "taikyoku"))]
pub fn piece_types(variant: &str) -> PyResult<Vec<PieceType>> {
    let v = crate::variants::variant(variant, &[])?;
    let table = &v.table;
    Ok(table
        .types
        .iter()
        .map(|t| PieceType {
            abbrev: t.sign.clone(),
            name: t.name.clone(),
            kanji: t.kanji.clone(),
            promotes_to: t.promotes_to.map(|k| table.get(k).name.clone()),
            royal: t.royal,
            promoted_only: t.promoted_only,
            range_rank: (t.range_rank != NO_RANK).then_some(t.range_rank),
            aliases: t.aliases.clone(),
        })
        .collect())
}
