//! `taikyoku._core`: thin pyo3 bindings of taikyoku-engine. Python-side sugar lives in
//! python/taikyoku/; this file only converts types and errors.

mod env;
mod selfplay;

use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use std::sync::Arc;
use taikyoku_engine::{
    self as engine, variant_names, Color, Move as EngineMove, NotationError, Outcome, Piece as EnginePiece,
    Position, Variant, NO_SQUARE,
};
use taikyoku_engine::actions::{self as engine_actions, Frame};
use taikyoku_engine::observation::{self as engine_observation};

create_exception!(taikyoku, TaikyokuError, PyValueError, "Base class of the package's errors (a ValueError).");
create_exception!(taikyoku, IllegalMoveError, TaikyokuError, "The move is not legal in this position.");
create_exception!(taikyoku, NotationError_, TaikyokuError, "Malformed or ambiguous move notation.");
create_exception!(taikyoku, AmbiguousMoveError, NotationError_, "Notation that matches several legal moves.");
create_exception!(taikyoku, UnknownSquareError, TaikyokuError, "A square name that is not on the board.");
create_exception!(taikyoku, UnknownPieceError, TaikyokuError, "A piece name or code that is not in the table.");
create_exception!(taikyoku, PositionTextError, TaikyokuError, "Malformed position text.");

fn variant_for(name: &str, options: &[String]) -> PyResult<Arc<Variant>> {
    Variant::load(name, options).map_err(|e| TaikyokuError::new_err(e.to_string()))
}

fn parse_color(text: &str) -> PyResult<Color> {
    Color::parse(text).ok_or_else(|| TaikyokuError::new_err(format!("unknown color '{text}' (use 'black' or 'white')")))
}

/// Reads an optional non-negative count (a negative or huge one is a ValueError, not an OverflowError).
fn count(name: &str, value: Option<i64>) -> PyResult<Option<u32>> {
    value
        .map(|v| u32::try_from(v).map_err(|_| TaikyokuError::new_err(format!("{name} must be between 0 and {}, not {v}", u32::MAX))))
        .transpose()
}

fn notation_error(e: NotationError) -> PyErr {
    let message = e.to_string();
    match e {
        NotationError::Illegal(_) => IllegalMoveError::new_err(message),
        NotationError::UnknownPiece(_) => UnknownPieceError::new_err(message),
        NotationError::UnknownSquare(_) => UnknownSquareError::new_err(message),
        NotationError::Malformed(_) => NotationError_::new_err(message),
        NotationError::Ambiguous(_) => AmbiguousMoveError::new_err(message),
    }
}

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
        format!("Piece({:?}, {:?}, {:?}{})", self.abbrev, self.name, self.color, if self.promoted { ", promoted" } else { "" })
    }
}

fn make_piece(pos: &Position, p: EnginePiece) -> Piece {
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

/// A legal move in a given position.
#[pyclass(module = "taikyoku", frozen)]
#[derive(Clone)]
pub struct Move {
    inner: EngineMove,
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
    notation: String,
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
        (m.from as u64) << 40 | (m.to as u64) << 20 | (m.mid as u64) << 1 | m.sweep as u64
    }
}

fn make_moves(pos: &Position, moves: &[EngineMove], rivals: &[EngineMove]) -> Vec<Move> {
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
    /// Range-capture rank (0 royal, 1 great general, ...) or None.
    #[pyo3(get)]
    rank: Option<u8>,
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
fn piece_types(variant: &str) -> PyResult<Vec<PieceType>> {
    let v = variant_for(variant, &[])?;
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
            rank: (t.rank != engine::table::NO_RANK).then_some(t.rank),
        })
        .collect())
}

/// The rule options a variant's table offers (name, piece key) — see docs/RULES.md.
#[pyfunction]
#[pyo3(signature = (variant = "taikyoku"))]
fn rule_options(variant: &str) -> PyResult<Vec<(String, String)>> {
    Ok(variant_for(variant, &[])?.table.options.clone())
}

#[pyfunction]
fn variants() -> Vec<&'static str> {
    variant_names()
}

/// A game of Taikyoku shogi (or another variant): the position, its history and its end.
#[pyclass(module = "taikyoku")]
#[derive(Clone)]
pub struct Game {
    game: engine::Game,
    /// Position text of the start (for pickling: start + moves).
    start: String,
}

impl Game {
    /// Wraps an engine game, recovering its start position for pickling.
    fn wrap(game: engine::Game) -> Game {
        let mut start = game.position.clone();
        while start.unmake().is_some() {}
        Game { start: start.to_text(), game }
    }

    fn variant(&self) -> &Arc<Variant> {
        &self.game.position.variant
    }

    fn square(&self, square: &Bound<'_, PyAny>) -> PyResult<usize> {
        let g = &self.variant().geometry;
        if let Ok(name) = square.extract::<String>() {
            return g.parse_square(&name).ok_or_else(|| {
                UnknownSquareError::new_err(format!(
                    "unknown square '{name}' (files 1-{}, ranks a-z then aa-{}; e.g. '12h')",
                    g.width,
                    engine::Geometry::rank_name(g.height - 1)
                ))
            });
        }
        if let Ok((file, rank)) = square.extract::<(i64, i64)>() {
            if file >= 1 && rank >= 1 {
                if let Some(sq) = g.square_from_file_rank(file as usize, rank as usize) {
                    return Ok(sq);
                }
            }
            return Err(UnknownSquareError::new_err(format!(
                "square ({file}, {rank}) is off the {}x{} board",
                g.width, g.height
            )));
        }
        Err(UnknownSquareError::new_err(format!(
            "a square is a name like '12h' or a (file, rank) pair, not {}",
            square.repr().map(|r| r.to_string()).unwrap_or_default()
        )))
    }

    fn after_edit(&mut self) {
        self.game.reset_history();
        self.start = self.game.position.to_text();
    }

    fn find_legal(&self, mv: &Move) -> PyResult<EngineMove> {
        let pos = &self.game.position;
        let from = mv.inner.from as usize;
        let mut moves = Vec::new();
        if let Some(p) = pos.at(from) {
            if p.color == pos.side_to_move() {
                pos.generate_from(from, &mut moves);
            }
        }
        if moves.contains(&mv.inner) {
            Ok(mv.inner)
        } else {
            Err(IllegalMoveError::new_err(format!(
                "illegal move {} for {} in this position",
                mv.notation,
                pos.side_to_move()
            )))
        }
    }

    /// The sorted legal actions in `frame` (a frame name); none once the game is over.
    fn actions_now(&self, frame: &str) -> PyResult<Vec<u32>> {
        let frame = env::parse_frame(frame)?;
        let pos = &self.game.position;
        let moves = if self.game.end().is_some() { Vec::new() } else { pos.legal_moves() };
        Ok(engine_actions::legal_actions(pos, &moves, frame))
    }

    /// The legal move meant by a Move, a notation string, or (when `actions`) an action.
    fn resolve(&self, mv: &Bound<'_, PyAny>, caller: &str, actions: bool) -> PyResult<EngineMove> {
        if let Ok(m) = mv.downcast::<Move>() {
            self.find_legal(m.get())
        } else if actions && mv.is_instance_of::<pyo3::types::PyInt>() {
            env::legal_move_for(&self.game, env::action_value(mv)?, Frame::Mover)
        } else if let Ok(text) = mv.extract::<String>() {
            self.game.position.parse_move(&text).map_err(notation_error)
        } else {
            let accepted = if actions { "a Move, a notation string or an action (int)" } else { "a Move or a notation string" };
            Err(IllegalMoveError::new_err(format!("{caller}() takes {accepted}, not {}", mv.get_type().name()?)))
        }
    }

    fn check_not_over(&self) -> PyResult<()> {
        if let Some((_, t)) = self.game.end_now() {
            return Err(IllegalMoveError::new_err(format!("the game is over ({})", t.name())));
        }
        Ok(())
    }
}

#[pymethods]
impl Game {
    /// A new game from the variant's initial position. `options` are rule option names
    /// (`taikyoku.rule_options()`); `max_plies` ends the game as truncated after that many plies.
    #[new]
    #[pyo3(signature = (variant = "taikyoku", options = None, max_plies = None))]
    fn new(variant: &str, options: Option<Vec<String>>, max_plies: Option<i64>) -> PyResult<Game> {
        let v = variant_for(variant, &options.unwrap_or_default())?;
        let mut game = engine::Game::new(v);
        game.max_plies = count("max_plies", max_plies)?;
        let start = game.position.to_text();
        Ok(Game { game, start })
    }

    /// An empty board of the variant.
    #[staticmethod]
    #[pyo3(signature = (variant = "taikyoku", side_to_move = "black", options = None))]
    fn empty(variant: &str, side_to_move: &str, options: Option<Vec<String>>) -> PyResult<Game> {
        let v = variant_for(variant, &options.unwrap_or_default())?;
        let side = parse_color(side_to_move)?;
        let game = engine::Game::from_position(Position::empty(v, side));
        let start = game.position.to_text();
        Ok(Game { game, start })
    }

    /// A game starting from a position text written by `to_text()`.
    #[staticmethod]
    #[pyo3(signature = (text, variant = "taikyoku", options = None))]
    fn from_text(text: &str, variant: &str, options: Option<Vec<String>>) -> PyResult<Game> {
        let v = variant_for(variant, &options.unwrap_or_default())?;
        let pos = Position::from_text(v, text).map_err(|e| PositionTextError::new_err(format!("bad position text: {e}")))?;
        let game = engine::Game::from_position(pos);
        let start = game.position.to_text();
        Ok(Game { game, start })
    }

    /// The position as one line of text (board, side to move, move number).
    fn to_text(&self) -> String {
        self.game.position.to_text()
    }

    #[getter]
    fn variant_name(&self) -> String {
        self.variant().name.clone()
    }

    /// Rule options in force.
    #[getter]
    fn options(&self) -> Vec<String> {
        self.variant().options.clone()
    }

    #[getter]
    fn width(&self) -> usize {
        self.variant().geometry.width
    }

    #[getter]
    fn height(&self) -> usize {
        self.variant().geometry.height
    }

    /// Puts a piece on a square, replacing any piece there. `piece` is a code (`LN`) or an
    /// English name (`Lion`, `Free bird`); `promoted=True` gives the piece its promoted side.
    /// Editing restarts the game's history (no undo across an edit).
    #[pyo3(signature = (square, piece, color, promoted = false))]
    fn place(&mut self, square: &Bound<'_, PyAny>, piece: &str, color: &str, promoted: bool) -> PyResult<()> {
        let sq = self.square(square)?;
        let color = parse_color(color)?;
        let table = &self.variant().table;
        let kind = table.lookup(piece).ok_or_else(|| {
            UnknownPieceError::new_err(format!("unknown piece '{piece}' (a code like 'LN' or a name like 'Lion')"))
        })?;
        let ty = table.get(kind);
        let new_piece = if ty.promoted_only {
            // Written as a promoted piece: its origin is the first piece that promotes to it.
            let origin = table.origins_of(kind).next().ok_or_else(|| {
                UnknownPieceError::new_err(format!("no piece promotes to '{}'", ty.name))
            })?;
            EnginePiece { kind, origin, color, promoted: true }
        } else if promoted {
            let to = ty.promotes_to.ok_or_else(|| TaikyokuError::new_err(format!("{} does not promote", ty.name)))?;
            EnginePiece { kind: to, origin: kind, color, promoted: true }
        } else {
            EnginePiece { kind, origin: kind, color, promoted: false }
        };
        self.game.position.put(sq, new_piece);
        self.after_edit();
        Ok(())
    }

    /// Removes the piece on a square and returns it (None if the square was empty).
    fn remove(&mut self, square: &Bound<'_, PyAny>) -> PyResult<Option<Piece>> {
        let sq = self.square(square)?;
        let removed = self.game.position.remove(sq);
        self.after_edit();
        Ok(removed.map(|p| make_piece(&self.game.position, p)))
    }

    fn piece_at(&self, square: &Bound<'_, PyAny>) -> PyResult<Option<Piece>> {
        let sq = self.square(square)?;
        Ok(self.game.position.at(sq).map(|p| make_piece(&self.game.position, p)))
    }

    /// Every piece as (square, Piece), from the top rank down, left to right.
    fn pieces(&self) -> Vec<(String, Piece)> {
        let pos = &self.game.position;
        pos.squares().map(|(sq, p)| (pos.variant.geometry.square_name(sq), make_piece(pos, p))).collect()
    }

    /// The legal moves of the side to move (empty when the game is over).
    fn legal_moves(&self) -> Vec<Move> {
        let pos = &self.game.position;
        let moves = pos.legal_moves();
        if self.game.end_with_moves(&moves).is_some() {
            return Vec::new();
        }
        make_moves(pos, &moves, &moves)
    }

    /// Number of legal moves (cheaper than `len(legal_moves())`).
    fn legal_move_count(&self) -> usize {
        let moves = self.game.position.legal_moves();
        if self.game.end_with_moves(&moves).is_some() {
            0
        } else {
            moves.len()
        }
    }

    /// The moves of the piece on `square`, as if its side were to move.
    fn moves_from(&self, square: &Bound<'_, PyAny>) -> PyResult<Vec<Move>> {
        let sq = self.square(square)?;
        let pos = &self.game.position;
        let mut moves = Vec::new();
        pos.generate_from(sq, &mut moves);
        let mut rivals = moves.clone();
        if let Some(first) = moves.first() {
            rivals.extend(pos.legal_moves_of_sign(*first));
        }
        Ok(make_moves(pos, &moves, &rivals))
    }

    /// Plays a Move (from `legal_moves()`), a notation string or an action (an int in the
    /// mover's frame); returns the Move played.
    fn play(&mut self, mv: &Bound<'_, PyAny>) -> PyResult<Move> {
        self.check_not_over()?;
        let engine_move = self.resolve(mv, "play", true)?;
        let pos = &self.game.position;
        let played = make_moves(pos, &[engine_move], &pos.legal_moves_of_sign(engine_move))
            .pop()
            .expect("one move");
        self.game.play(engine_move);
        Ok(played)
    }

    /// Takes back the last move and returns it; IllegalMoveError if there is none.
    fn undo(&mut self) -> PyResult<Move> {
        if self.game.plies() == 0 {
            return Err(IllegalMoveError::new_err("no move to undo"));
        }
        let mv = self.game.undo().expect("a move to undo");
        let pos = &self.game.position;
        Ok(make_moves(pos, &[mv], &pos.legal_moves_of_sign(mv)).pop().expect("one move"))
    }

    #[getter]
    fn side_to_move(&self) -> &'static str {
        self.game.side_to_move().name()
    }

    /// Plies played since the start (or since the last board edit).
    #[getter]
    fn ply(&self) -> usize {
        self.game.plies()
    }

    /// The move number of the position text: plies played + 1.
    #[getter]
    fn move_number(&self) -> u32 {
        self.game.position.ply() + 1
    }

    #[getter]
    fn max_plies(&self) -> Option<u32> {
        self.game.max_plies
    }

    #[setter]
    fn set_max_plies(&mut self, value: Option<i64>) -> PyResult<()> {
        self.game.max_plies = count("max_plies", value)?;
        Ok(())
    }

    #[getter]
    fn is_over(&self) -> bool {
        self.game.end_now().is_some()
    }

    /// "black", "white", "draw", or None (game going on, or truncated by max_plies).
    #[getter]
    fn result(&self) -> Option<&'static str> {
        match self.game.end_now()?.0 {
            Outcome::Win(c) => Some(c.name()),
            Outcome::Draw => Some("draw"),
            Outcome::Truncated => None,
        }
    }

    /// Why the game ended: "royal_capture", "repetition", "perpetual_check", "no_moves",
    /// "max_plies", "illegal_move"; None while it goes on.
    #[getter]
    fn termination(&self) -> Option<&'static str> {
        self.game.end_now().map(|(_, t)| t.name())
    }

    /// How many times the current position has occurred (same side to move).
    #[getter]
    fn repetitions(&self) -> u32 {
        self.game.repetitions()
    }

    /// Number of royal pieces (kings, crown princes) of a side.
    fn royal_count(&self, color: &str) -> PyResult<usize> {
        Ok(self.game.position.royal_count(parse_color(color)?))
    }

    /// Whether `color`'s sole royal can be captured by the opponent's next move.
    fn in_check(&self, color: &str) -> PyResult<bool> {
        let color = parse_color(color)?;
        let pos = &self.game.position;
        if pos.royal_count(color) != 1 {
            return Ok(false);
        }
        let royal = pos
            .squares()
            .find(|(_, p)| p.color == color && pos.variant.table.get(p.kind).royal)
            .map(|(sq, _)| sq)
            .expect("one royal");
        Ok(pos.attacks(color.opponent(), royal))
    }

    /// Notation of every move played, oldest first.
    fn history(&self) -> Vec<String> {
        let mut replay = self.clone();
        let mut out = Vec::new();
        while replay.game.plies() > 0 {
            let mv = replay.game.undo().expect("a move to undo");
            let pos = &replay.game.position;
            out.push(pos.notations(&[mv], &pos.legal_moves_of_sign(mv)).pop().expect("one"));
        }
        out.reverse();
        out
    }

    /// 64-bit hash of the position (pieces, promotions and side to move).
    #[getter]
    fn hash(&self) -> u64 {
        self.game.position.hash()
    }

    /// Ends the game: the side to move loses for an illegal move (the seed's rule; used by the
    /// environments' `illegal_action="lose"`).
    fn forfeit(&mut self) -> PyResult<()> {
        self.check_not_over()?;
        self.game.forfeit();
        Ok(())
    }

    /// The legal actions, sorted, as an int64 numpy array (`frame`: "mover" or "absolute").
    #[pyo3(signature = (frame = "mover"))]
    fn legal_actions<'py>(&self, py: Python<'py>, frame: &str) -> PyResult<Bound<'py, numpy::PyArray1<i64>>> {
        Ok(env::actions_array(py, self.actions_now(frame)?.into_iter()))
    }

    /// A dense boolean mask of length NUM_ACTIONS, True at the legal actions (heavy: on request).
    #[pyo3(signature = (frame = "mover"))]
    fn legal_action_mask<'py>(&self, py: Python<'py>, frame: &str) -> PyResult<Bound<'py, PyAny>> {
        env::mask(py, &[self.actions_now(frame)?]).call_method1("reshape", (engine_actions::NUM_ACTIONS,))
    }

    /// The action of a legal Move (or notation string).
    #[pyo3(signature = (mv, frame = "mover"))]
    fn action_of(&self, mv: &Bound<'_, PyAny>, frame: &str) -> PyResult<u32> {
        let frame = env::parse_frame(frame)?;
        let engine_move = self.resolve(mv, "action_of", false)?;
        Ok(engine_actions::action_of(&self.game.position, engine_move, frame))
    }

    /// The legal Move of an action; IllegalMoveError (naming the squares) if it is not legal.
    #[pyo3(signature = (action, frame = "mover"))]
    fn move_of(&self, action: &Bound<'_, PyAny>, frame: &str) -> PyResult<Move> {
        let frame = env::parse_frame(frame)?;
        let mv = env::legal_move_for(&self.game, env::action_value(action)?, frame)?;
        let pos = &self.game.position;
        Ok(make_moves(pos, &[mv], &pos.legal_moves_of_sign(mv)).pop().expect("one move"))
    }

    /// The observation (36, 36, P): uint8 one-hot planes by default, `dtype="float32"` on
    /// request, `compact=True` for piece-id planes; see `taikyoku.plane_names`.
    #[pyo3(signature = (dtype = None, frame = "mover", compact = false))]
    fn observation(&self, py: Python<'_>, dtype: Option<&Bound<'_, PyAny>>, frame: &str, compact: bool) -> PyResult<PyObject> {
        let frame = env::parse_frame(frame)?;
        let layout = env::layout_of(compact);
        let dtype = env::parse_dtype(py, dtype, layout, self.variant())?;
        env::encode(py, &[&self.game], frame, layout, dtype, false, None)
    }

    /// The position as a compact board: 1296 uint16 codes (36×36, absolute frame), as the
    /// datasets' `board` column stores it (`(kind + 1) << 2 | promoted << 1 | color`).
    fn compact_board<'py>(&self, py: Python<'py>) -> Bound<'py, numpy::PyArray1<u16>> {
        let mut board = vec![0u16; engine_actions::GRID_SQUARES];
        engine_observation::compact_board(&self.game.position, &mut board);
        numpy::PyArray1::from_vec_bound(py, board)
    }

    /// The number of observation planes (P).
    #[pyo3(signature = (compact = false))]
    fn plane_count(&self, compact: bool) -> usize {
        engine_observation::plane_count(self.variant(), env::layout_of(compact))
    }

    /// SVG picture for Jupyter (see `taikyoku.render.svg`).
    fn _repr_svg_(slf: &Bound<'_, Self>) -> PyResult<String> {
        slf.py().import_bound("taikyoku.render")?.call_method1("svg", (slf,))?.extract()
    }

    fn clone(&self) -> Game {
        Clone::clone(self)
    }

    fn __copy__(&self) -> Game {
        Clone::clone(self)
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Game {
        Clone::clone(self)
    }

    /// Pickles as (variant, options, start text, moves, max_plies): unpickling replays them.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(PyObject, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let this = slf.borrow();
        let moves: Vec<(u16, u16, u16, bool)> =
            this.game.position.moves_played().map(|m| (m.from, m.to, m.mid, m.sweep)).collect();
        let restore = py.import_bound("taikyoku._core")?.getattr("_restore_game")?.unbind();
        let args = PyTuple::new_bound(
            py,
            [
                this.variant().name.clone().into_py(py),
                PyList::new_bound(py, this.variant().options.clone()).into_py(py),
                this.start.clone().into_py(py),
                moves.into_py(py),
                this.game.max_plies.into_py(py),
            ],
        );
        Ok((restore, args))
    }

    fn __repr__(&self) -> String {
        format!(
            "<taikyoku.Game {} ply={} side_to_move={}{}>",
            self.variant().name,
            self.game.plies(),
            self.game.side_to_move(),
            match self.termination() {
                Some(t) => format!(" over={t}"),
                None => String::new(),
            }
        )
    }

    /// The board as text: one row per rank, `.` for empty squares, White's pieces lower case.
    fn __str__(&self) -> String {
        self.game.position.board_string()
    }
}

/// Plays a seeded game of uniformly random legal moves (ChaCha8; same seed, same game) until
/// it ends or `max_plies` plies are played; returns the Game.
#[pyfunction]
#[pyo3(signature = (seed, max_plies = 1000, variant = "taikyoku", options = None))]
fn random_game(py: Python<'_>, seed: i64, max_plies: i64, variant: &str, options: Option<Vec<String>>) -> PyResult<Game> {
    let seed = u64::try_from(seed).map_err(|_| TaikyokuError::new_err(format!("seed must be non-negative, not {seed}")))?;
    let mut game = Game::new(variant, options, Some(max_plies))?;
    let limit = game.game.max_plies.unwrap_or(0) as usize;
    py.allow_threads(|| {
        engine::random::random_playout(&mut game.game, seed, limit);
    });
    Ok(game)
}

#[pyfunction]
#[pyo3(signature = (variant, options, start, moves, max_plies = None))]
fn _restore_game(
    variant: &str,
    options: Vec<String>,
    start: &str,
    moves: Vec<(u16, u16, u16, bool)>,
    max_plies: Option<i64>,
) -> PyResult<Game> {
    let mut game = Game::from_text(start, variant, Some(options))?;
    for (from, to, mid, sweep) in moves {
        let mv = EngineMove { from, to, mid, sweep };
        game.find_legal(&make_moves(&game.game.position, &[mv], &[mv]).pop().expect("one"))?;
        game.game.play(mv);
    }
    game.game.max_plies = count("max_plies", max_plies)?;
    Ok(game)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<Game>()?;
    m.add_class::<Move>()?;
    m.add_class::<Piece>()?;
    m.add_class::<PieceType>()?;
    m.add_function(wrap_pyfunction!(piece_types, m)?)?;
    m.add_function(wrap_pyfunction!(rule_options, m)?)?;
    m.add_function(wrap_pyfunction!(variants, m)?)?;
    m.add_function(wrap_pyfunction!(_restore_game, m)?)?;
    m.add_function(wrap_pyfunction!(random_game, m)?)?;
    m.add_function(wrap_pyfunction!(env::plane_names, m)?)?;
    m.add_function(wrap_pyfunction!(env::encode_observations, m)?)?;
    m.add_function(wrap_pyfunction!(env::action_templates, m)?)?;
    m.add_class::<env::VectorEnvCore>()?;
    m.add_function(wrap_pyfunction!(selfplay::selfplay_run, m)?)?;
    m.add_function(wrap_pyfunction!(selfplay::decode_positions, m)?)?;
    m.add_function(wrap_pyfunction!(selfplay::mcts_action, m)?)?;
    m.add("NUM_ACTIONS", engine_actions::NUM_ACTIONS)?;
    m.add("MOVE_BLOCK", engine_actions::MOVE_BLOCK)?;
    m.add("TEMPLATE_COUNT", engine_actions::TEMPLATE_COUNT)?;
    m.add("GRID", engine_actions::GRID)?;
    m.add("TaikyokuError", py.get_type_bound::<TaikyokuError>())?;
    m.add("IllegalMoveError", py.get_type_bound::<IllegalMoveError>())?;
    m.add("NotationError", py.get_type_bound::<NotationError_>())?;
    m.add("AmbiguousMoveError", py.get_type_bound::<AmbiguousMoveError>())?;
    m.add("UnknownSquareError", py.get_type_bound::<UnknownSquareError>())?;
    m.add("UnknownPieceError", py.get_type_bound::<UnknownPieceError>())?;
    m.add("PositionTextError", py.get_type_bound::<PositionTextError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
