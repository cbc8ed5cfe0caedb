//! `Piece`, `Move` and `PieceType`: read-only values describing a position, and `piece_types`,
//! a variant's table.

use pyo3::prelude::*;
use std::sync::{Arc, OnceLock};
use taikyoku_engine::table::NO_RANK;
use taikyoku_engine::{Game as EngineGame, Move as EngineMove, Piece as EnginePiece, Position, Variant, NO_SQUARE};

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

/// What the `Move`s of one call share, from which each computes its fields when they are first
/// read: the position they were generated in (without its history) and the moves their notations
/// are told apart from. Building a list of moves costs one copy of the board; the notations of
/// all of them are written together, the first time one is read.
struct MoveContext {
    position: Position,
    moves: Vec<EngineMove>,
    rivals: Rivals,
    notations: OnceLock<Vec<String>>,
}

/// The moves a `MoveContext`'s notations are told apart from (see `Position::notations`).
enum Rivals {
    /// The moves themselves: they are all the legal moves.
    Themselves,
    /// The moves are of one piece: the legal moves of the pieces of its sign.
    OfItsSign,
}

impl MoveContext {
    fn notation(&self, index: usize) -> String {
        let notations = self.notations.get_or_init(|| match self.rivals {
            Rivals::Themselves => self.position.notations(&self.moves, &self.moves),
            Rivals::OfItsSign => {
                let mut rivals = self.moves.clone();
                if let Some(&first) = self.moves.first() {
                    rivals.extend(self.position.legal_moves_of_sign(first));
                }
                self.position.notations(&self.moves, &rivals)
            }
        });
        notations[index].clone()
    }
}

/// A legal move in a given position. The moves of one `legal_moves()` or `moves_from()` list
/// share a copy of the position and compute their captures and notation when first read; a move
/// `play()`, `undo()` or `move_of()` returns is described at once and keeps no position.
#[pyclass(module = "taikyoku", frozen)]
#[derive(Clone)]
pub struct Move {
    pub inner: EngineMove,
    source: Source,
}

/// Where a `Move`'s description comes from.
#[derive(Clone)]
enum Source {
    /// The `index`-th move of a list sharing this context.
    Listed(Arc<MoveContext>, usize),
    /// Described when made.
    Described(Arc<Described>),
}

/// A move's description, computed once.
struct Described {
    variant: Arc<Variant>,
    notation: String,
    captures: Vec<usize>,
    promotes: bool,
}

#[pymethods]
impl Move {
    #[getter(from_square)]
    fn start_square(&self) -> String {
        self.square_name(self.inner.from as usize)
    }
    #[getter]
    fn to_square(&self) -> String {
        self.square_name(self.inner.to as usize)
    }
    /// Squares of every piece the move removes, in order.
    #[getter]
    fn captures(&self) -> Vec<String> {
        self.captured().into_iter().map(|sq| self.square_name(sq)).collect()
    }
    #[getter]
    fn promotes(&self) -> bool {
        match &self.source {
            Source::Listed(context, _) => context.position.promotes(self.inner),
            Source::Described(d) => d.promotes,
        }
    }
    #[getter(notation)]
    fn notation_text(&self) -> String {
        self.notation()
    }
    /// The square a lion-like piece captures on before its second step (None otherwise).
    #[getter]
    fn mid_square(&self) -> Option<String> {
        (self.inner.mid != NO_SQUARE).then(|| self.square_name(self.inner.mid as usize))
    }
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
        !self.captured().is_empty()
    }
    fn __repr__(&self) -> String {
        format!("Move({:?})", self.notation())
    }
    fn __str__(&self) -> String {
        self.notation()
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

impl Move {
    /// The move in notation, told apart from its rivals.
    pub fn notation(&self) -> String {
        match &self.source {
            Source::Listed(context, index) => context.notation(*index),
            Source::Described(d) => d.notation.clone(),
        }
    }

    fn captured(&self) -> Vec<usize> {
        match &self.source {
            Source::Listed(context, _) => context.position.captures_of(self.inner),
            Source::Described(d) => d.captures.clone(),
        }
    }

    fn square_name(&self, sq: usize) -> String {
        let variant = match &self.source {
            Source::Listed(context, _) => &context.position.variant,
            Source::Described(d) => &d.variant,
        };
        variant.geometry.square_name(sq)
    }
}

/// All the legal moves of the side to move as Python objects (their notations told apart from
/// one another).
pub fn legal_moves(pos: &Position, moves: Vec<EngineMove>) -> Vec<Move> {
    listed(pos, moves, Rivals::Themselves)
}

/// Moves of one piece as Python objects (their notations told apart from the moves of the
/// pieces of its sign).
pub fn moves_of_one_piece(pos: &Position, moves: Vec<EngineMove>) -> Vec<Move> {
    listed(pos, moves, Rivals::OfItsSign)
}

/// `moves` as Python objects sharing one context.
fn listed(pos: &Position, moves: Vec<EngineMove>, rivals: Rivals) -> Vec<Move> {
    let count = moves.len();
    let context = Arc::new(MoveContext { position: pos.scratch_copy(), moves, rivals, notations: OnceLock::new() });
    (0..count)
        .map(|index| Move { inner: context.moves[index], source: Source::Listed(context.clone(), index) })
        .collect()
}

/// One move of the side to move of `game` as a Python object, described at once (its notation
/// told apart from the moves of the pieces of its sign, which a game tracking its moves reads
/// from its incremental state).
pub fn one_move(game: &EngineGame, mv: EngineMove) -> Move {
    let pos = &game.position;
    let notation = game.move_notation(mv);
    let described =
        Described { variant: pos.variant.clone(), notation, captures: pos.captures_of(mv), promotes: pos.promotes(mv) };
    Move { inner: mv, source: Source::Described(Arc::new(described)) }
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
