//! `taikyoku.Game`: a game of any variant, its moves, its end, its actions and observations.

use crate::convert::{self, Int};
use crate::errors::{
    invalid, notation_error, shield, IllegalMoveError, PositionTextError, UnknownPieceError, UnknownSquareError,
};
use crate::observations::{self, Dtype};
use crate::pieces::{self, Move, Piece};
use crate::variants;
use crate::workers;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};
use std::cell::RefCell;
use std::sync::Arc;
use taikyoku_engine::rl::actions::{self, Frame};
use taikyoku_engine::rl::observation;
use taikyoku_engine::{self as engine, Move as EngineMove, Position, Variant, NO_SQUARE};

/// A game of Taikyoku shogi (or another variant): the position, its history and its end.
#[pyclass(module = "taikyoku")]
#[derive(Clone)]
pub struct Game {
    pub game: engine::Game,
    /// The last `legal_actions()` list, for `play(action)` to find the action's move in instead
    /// of listing the moves again (an environment step asks for both): the sorted (action, move)
    /// pairs, their frame and the (plies, hash) they are of. Every method that changes the game
    /// forgets it (`changed`).
    legal: RefCell<Option<LegalList>>,
}

/// See `Game::legal`.
#[derive(Clone)]
struct LegalList {
    frame: Frame,
    key: (usize, u64),
    pairs: Vec<(u32, EngineMove)>,
}

impl Game {
    pub fn wrap(game: engine::Game) -> Game {
        Game { game, legal: RefCell::new(None) }
    }

    /// Forgets what was worked out about the position: called before every change of the game.
    fn changed(&mut self) {
        *self.legal.get_mut() = None;
    }

    fn state_key(&self) -> (usize, u64) {
        (self.game.plies(), self.game.position.hash())
    }

    /// The legal move of `action` (in `frame`) from the last `legal_actions(frame)` list of
    /// this very position, if there is one and it has the action.
    fn listed_move(&self, action: u32, frame: Frame) -> Option<EngineMove> {
        let legal = self.legal.borrow();
        let list = legal.as_ref().filter(|l| l.frame == frame && l.key == self.state_key())?;
        list.pairs.binary_search_by_key(&action, |&(a, _)| a).ok().map(|i| list.pairs[i].1)
    }

    /// The text the game started from (before its first move, or after its last edit), with
    /// the history it was read with: what pickling replays the moves from.
    fn start_text(&self) -> String {
        self.game.start_text()
    }

    fn variant(&self) -> &Arc<Variant> {
        &self.game.position.variant
    }

    /// A square given as a name (`12h`) or a (file, rank) pair.
    fn square(&self, square: &Bound<'_, PyAny>) -> PyResult<usize> {
        let g = &self.variant().geometry;
        if let Ok(name) = square.downcast::<PyString>() {
            let name = name.to_cow()?;
            return g.parse_square(&name).ok_or_else(|| {
                UnknownSquareError::new_err(format!(
                    "unknown square '{}' (files 1-{}, ranks a-z then aa-{}; e.g. '12h')",
                    name.chars().take(40).collect::<String>(),
                    g.width,
                    engine::Geometry::rank_name(g.height - 1)
                ))
            });
        }
        if let Ok((file, rank)) = square.extract::<(Int, Int)>() {
            let (file, rank) = (file.0, rank.0);
            let on_board = (1..=g.width as i128).contains(&file) && (1..=g.height as i128).contains(&rank);
            return on_board.then(|| g.square_from_file_rank(file as usize, rank as usize)).flatten().ok_or_else(
                || {
                    UnknownSquareError::new_err(format!(
                        "square ({file}, {rank}) is off the {}x{} board",
                        g.width, g.height
                    ))
                },
            );
        }
        Err(UnknownSquareError::new_err(format!(
            "a square is a name like '12h' or a (file, rank) pair of integers, not {}",
            convert::describe(square)
        )))
    }

    /// Restarts the history after a board edit (no undo across an edit).
    fn after_edit(&mut self) {
        self.changed();
        self.game.reset_history();
    }

    fn find_legal(&self, mv: &Move) -> PyResult<EngineMove> {
        let pos = &self.game.position;
        if self.game.is_legal(mv.inner) {
            Ok(mv.inner)
        } else {
            Err(IllegalMoveError::new_err(format!(
                "illegal move {} for {} in this position",
                mv.notation(),
                pos.side_to_move()
            )))
        }
    }

    /// The sorted legal actions in `frame`; none once the game is over.
    fn actions_now(&self, frame: Frame) -> Vec<u32> {
        let pos = &self.game.position;
        let moves = if self.game.recorded_end().is_some() { Vec::new() } else { self.game.legal_moves() };
        let pairs = actions::legal_pairs(pos, &moves, frame);
        let actions = pairs.iter().map(|&(a, _)| a).collect();
        *self.legal.borrow_mut() = Some(LegalList { frame, key: self.state_key(), pairs });
        actions
    }

    /// The legal move meant by a Move, a notation string, or (when `actions`) an action.
    fn resolve(&self, mv: &Bound<'_, PyAny>, caller: &str, actions: bool) -> PyResult<EngineMove> {
        if let Ok(m) = mv.downcast::<Move>() {
            self.find_legal(m.get())
        } else if let Ok(text) = mv.downcast::<PyString>() {
            let mv = self.game.position.parse_move(&text.to_cow()?).map_err(notation_error)?;
            if !self.game.is_legal(mv) {
                return Err(IllegalMoveError::new_err(format!(
                    "'{}' repeats an earlier position, which the repetition rule forbids",
                    crate::errors::clip(&text.to_cow()?)
                )));
            }
            Ok(mv)
        } else if let (true, Ok(action)) = (actions, mv.extract::<Int>()) {
            let action = observations::action_value(action)?;
            match self.listed_move(action, Frame::Mover) {
                Some(mv) => Ok(mv),
                None => observations::legal_move_for(&self.game, action, Frame::Mover),
            }
        } else {
            let accepted =
                if actions { "a Move, a notation string or an action (int)" } else { "a Move or a notation string" };
            Err(IllegalMoveError::new_err(format!("{caller}() takes {accepted}, not {}", convert::describe(mv))))
        }
    }

    fn check_not_over(&self) -> PyResult<()> {
        match self.game.end() {
            Some((_, t)) => Err(IllegalMoveError::new_err(format!("the game is over ({})", t.name()))),
            None => Ok(()),
        }
    }
}

fn max_plies(value: Option<Int>) -> PyResult<Option<u32>> {
    value.map(|v| v.count("max_plies")).transpose()
}

#[pymethods]
impl Game {
    /// A new game from the variant's initial position. `options` are rule option names
    /// (`taikyoku.rule_options()`); `max_plies` ends the game as truncated after that many plies.
    #[new]
    #[pyo3(signature = (variant = "taikyoku", options = None, max_plies = None))]
    fn new(variant: &str, options: Option<Vec<String>>, max_plies: Option<Int>) -> PyResult<Game> {
        let mut game = engine::Game::new(variants::variant(variant, &options.unwrap_or_default())?);
        game.max_plies = self::max_plies(max_plies)?;
        Ok(Game::wrap(game))
    }

    /// An empty board of the variant.
    #[staticmethod]
    #[pyo3(signature = (variant = "taikyoku", side_to_move = "black", options = None))]
    fn empty(variant: &str, side_to_move: &str, options: Option<Vec<String>>) -> PyResult<Game> {
        let v = variants::variant(variant, &options.unwrap_or_default())?;
        let side = convert::color(side_to_move)?;
        Ok(Game::wrap(engine::Game::from_position(Position::empty(v, side))))
    }

    /// A game starting from a text written by `to_text()` (or a position text, then `moves`
    /// and moves in notation). Without `variant`, the variant is the one whose board has the
    /// text's number of ranks (each variant's board differs in size).
    #[staticmethod]
    #[pyo3(signature = (text, variant = None, options = None))]
    fn from_text(py: Python<'_>, text: &str, variant: Option<&str>, options: Option<Vec<String>>) -> PyResult<Game> {
        let variant = match variant {
            Some(name) => name.to_string(),
            None => variant_of_text(text)?,
        };
        let v = variants::variant(&variant, &options.unwrap_or_default())?;
        let game = shield(|| {
            py.allow_threads(|| engine::Game::from_text(v, text)).map_err(|e| {
                PositionTextError::new_err(crate::errors::clip_message(&format!("bad position text: {e}")))
            })
        })?;
        Ok(Game::wrap(game))
    }

    /// The game as one line of text that `from_text` reads back exactly (docs/RULES.md §7): the
    /// position after the last irreversible move, then `moves` and the moves since, which the
    /// history rules read. `history=False`: the current position alone (board, side to move,
    /// move number, passes in a row).
    #[pyo3(signature = (history = true))]
    fn to_text(&self, history: bool) -> String {
        if history {
            self.game.to_text()
        } else {
            self.game.position.to_text()
        }
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
        let color = convert::color(color)?;
        let table = &self.variant().table;
        let kind = table.lookup(piece).ok_or_else(|| {
            let shown = crate::errors::clip(piece);
            let sharing: Vec<&str> =
                table.types.iter().filter(|t| t.sign == piece.trim()).map(|t| t.name.as_str()).collect();
            if sharing.len() > 1 {
                UnknownPieceError::new_err(format!(
                    "'{shown}' is ambiguous: {} share that code; place one by name",
                    sharing.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(" and ")
                ))
            } else {
                UnknownPieceError::new_err(format!("unknown piece '{shown}' (a code like 'LN' or a name like 'Lion')"))
            }
        })?;
        let new_piece = table.placement(kind, promoted, color).map_err(|e| invalid(e.to_string()))?;
        self.changed();
        self.game.position.put(sq, new_piece);
        self.after_edit();
        Ok(())
    }

    /// Removes the piece on a square and returns it (None, and nothing changes, if the square
    /// was empty). Removing a piece restarts the history, like every edit.
    fn remove(&mut self, square: &Bound<'_, PyAny>) -> PyResult<Option<Piece>> {
        let sq = self.square(square)?;
        self.changed();
        let Some(removed) = self.game.position.remove(sq) else { return Ok(None) };
        self.after_edit();
        Ok(Some(Piece::new(&self.game.position, removed)))
    }

    fn piece_at(&self, square: &Bound<'_, PyAny>) -> PyResult<Option<Piece>> {
        let sq = self.square(square)?;
        Ok(self.game.position.at(sq).map(|p| Piece::new(&self.game.position, p)))
    }

    /// Every piece as (square, Piece), from the top rank down, left to right.
    fn pieces(&self) -> Vec<(String, Piece)> {
        let pos = &self.game.position;
        pos.squares().map(|(sq, p)| (pos.variant.geometry.square_name(sq), Piece::new(pos, p))).collect()
    }

    /// The legal moves of the side to move (empty when the game is over). The moves share one
    /// copy of this position and describe themselves (squares, captures, notation) when first
    /// read; `legal_actions()` is faster still.
    fn legal_moves(&self) -> Vec<Move> {
        let pos = &self.game.position;
        let moves = self.game.legal_moves();
        if self.game.end_given(&moves).is_some() {
            return Vec::new();
        }
        pieces::legal_moves(pos, moves)
    }

    /// Number of legal moves (cheaper than `len(legal_moves())`).
    fn legal_move_count(&self) -> usize {
        // Counted without a list where the game keeps its moves up to date (`random_game`'s).
        if self.game.end().is_some() {
            0
        } else {
            self.game.legal_move_count()
        }
    }

    /// The moves of the piece on `square`, as if its side were to move; for a piece of the side
    /// to move, exactly its moves among `legal_moves()` (a repetition-forbidding variant's
    /// history rule included).
    fn moves_from(&self, square: &Bound<'_, PyAny>) -> PyResult<Vec<Move>> {
        let sq = self.square(square)?;
        let pos = &self.game.position;
        let mut moves = Vec::new();
        self.game.generate_from(sq, &mut moves);
        Ok(pieces::moves_of_one_piece(pos, moves))
    }

    /// Plays a Move (from `legal_moves()`), a notation string or an action (an int, numpy ints
    /// too, in the mover's frame); returns the Move played.
    fn play(&mut self, mv: &Bound<'_, PyAny>) -> PyResult<Move> {
        self.check_not_over()?;
        let engine_move = self.resolve(mv, "play", true)?;
        let played = pieces::one_move(&self.game, engine_move);
        self.changed();
        self.game.play(engine_move);
        Ok(played)
    }

    /// Takes back the last move and returns it; IllegalMoveError if there is none.
    fn undo(&mut self) -> PyResult<Move> {
        self.changed();
        let Some(mv) = self.game.undo() else {
            return Err(IllegalMoveError::new_err("no move to undo"));
        };
        Ok(pieces::one_move(&self.game, mv))
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
        self.game.position.move_number()
    }

    #[getter]
    fn get_max_plies(&self) -> Option<u32> {
        self.game.max_plies
    }

    #[setter]
    fn set_max_plies(&mut self, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        self.changed();
        let value = match value.filter(|v| !v.is_none()) {
            None => None,
            Some(v) => Some(v.extract::<Int>().map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err(format!(
                    "max_plies must be an integer or None, not {}",
                    convert::describe(v)
                ))
            })?),
        };
        self.game.max_plies = max_plies(value)?;
        Ok(())
    }

    #[getter]
    fn is_over(&self) -> bool {
        self.game.end().is_some()
    }

    /// "black", "white", "draw", or None (game going on, or truncated by max_plies).
    #[getter]
    fn result(&self) -> Option<&'static str> {
        self.game.end()?.0.result_name()
    }

    /// Why the game ended: "royal_capture", "repetition", "perpetual_check", "no_moves",
    /// "max_plies", "illegal_move"; None while it goes on.
    #[getter]
    fn termination(&self) -> Option<&'static str> {
        self.game.end().map(|(_, t)| t.name())
    }

    /// The game's value for `color`: 1 won, -1 lost, 0 drawn, truncated or going on (the
    /// rewards of the environments).
    fn reward(&self, color: &str) -> PyResult<i8> {
        let color = convert::color(color)?;
        Ok(self.game.end().map_or(0, |(outcome, _)| outcome.value_for(color)))
    }

    /// (column, row) of a square: column 0 on Black's left, row 0 at the top.
    fn square_xy(&self, square: &Bound<'_, PyAny>) -> PyResult<(usize, usize)> {
        let (x, y) = self.variant().geometry.xy(self.square(square)?);
        Ok((x as usize, y as usize))
    }

    /// The rank names from the top (`a`, `b`, ... `aa` ...).
    #[getter]
    fn rank_names(&self) -> Vec<String> {
        (0..self.variant().geometry.height).map(engine::Geometry::rank_name).collect()
    }

    /// How many times the current position has occurred (same side to move).
    #[getter]
    fn repetitions(&self) -> u32 {
        self.game.repetitions()
    }

    /// Number of royal pieces (kings, crown princes) of a side.
    fn royal_count(&self, color: &str) -> PyResult<usize> {
        Ok(self.game.position.royal_count(convert::color(color)?))
    }

    /// How many times in a row `color` has passed, in a variant that limits it (Taishin: a
    /// fourth pass in a row is not legal); 0 in the others.
    fn consecutive_passes(&self, color: &str) -> PyResult<u8> {
        Ok(self.game.position.consecutive_passes(convert::color(color)?))
    }

    /// Whether `color`'s sole royal can be captured by the opponent's next move.
    fn in_check(&self, color: &str) -> PyResult<bool> {
        Ok(self.game.position.in_check(convert::color(color)?))
    }

    /// Notation of every move played, oldest first.
    fn history(&self) -> Vec<String> {
        self.game.history_notations()
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
        self.changed();
        self.game.forfeit();
        Ok(())
    }

    /// The legal actions, sorted, as an int64 numpy array (`frame`: "mover" or "absolute").
    #[pyo3(signature = (frame = "mover"))]
    fn legal_actions<'py>(&self, py: Python<'py>, frame: &str) -> PyResult<Bound<'py, numpy::PyArray1<i64>>> {
        Ok(observations::actions_array(py, self.actions_now(convert::parse(frame)?).into_iter()))
    }

    /// One step of an environment (`TaikyokuEnv.step`): plays the legal `action` of `frame` and
    /// returns the new position's `legal_actions(frame)`. The move played is not described (no
    /// Move, no notation), which is what an environment's step saves over `play`.
    /// IllegalMoveError, changing nothing, if the action is not legal or the game is over.
    #[pyo3(name = "_env_step", signature = (action, frame = "mover"))]
    fn env_step<'py>(
        &mut self,
        py: Python<'py>,
        action: Int,
        frame: &str,
    ) -> PyResult<Bound<'py, numpy::PyArray1<i64>>> {
        let frame = convert::parse(frame)?;
        self.check_not_over()?;
        let action = observations::action_value(action)?;
        let mv = match self.listed_move(action, frame) {
            Some(mv) => mv,
            None => observations::legal_move_for(&self.game, action, frame)?,
        };
        self.changed();
        self.game.play(mv);
        Ok(observations::actions_array(py, self.actions_now(frame).into_iter()))
    }

    /// A dense boolean mask of length NUM_ACTIONS, True at the legal actions (heavy: on request).
    #[pyo3(signature = (frame = "mover"))]
    fn legal_action_mask<'py>(&self, py: Python<'py>, frame: &str) -> PyResult<Bound<'py, PyAny>> {
        observations::mask(py, &[self.actions_now(convert::parse(frame)?)])?
            .call_method1("reshape", (actions::NUM_ACTIONS,))
    }

    /// The action of a legal Move (or notation string).
    #[pyo3(signature = (mv, frame = "mover"))]
    fn action_of(&self, mv: &Bound<'_, PyAny>, frame: &str) -> PyResult<u32> {
        let frame = convert::parse(frame)?;
        let engine_move = self.resolve(mv, "action_of", false)?;
        Ok(actions::action_of(&self.game.position, engine_move, frame))
    }

    /// The legal Move of an action; IllegalMoveError (naming the squares) if it is not legal.
    #[pyo3(signature = (action, frame = "mover"))]
    fn move_of(&self, action: &Bound<'_, PyAny>, frame: &str) -> PyResult<Move> {
        let frame = convert::parse(frame)?;
        let action = action.extract::<Int>().map_err(|_| {
            IllegalMoveError::new_err(format!("an action is an integer, not {}", convert::describe(action)))
        })?;
        let mv = observations::legal_move_for(&self.game, observations::action_value(action)?, frame)?;
        Ok(pieces::one_move(&self.game, mv))
    }

    /// The observation (36, 36, P): uint8 one-hot planes by default, `dtype="float32"` on
    /// request, `compact=True` for piece-id planes; see `taikyoku.plane_names`.
    #[pyo3(signature = (dtype = None, frame = "mover", compact = false))]
    fn observation(
        &self,
        py: Python<'_>,
        dtype: Option<&Bound<'_, PyAny>>,
        frame: &str,
        compact: bool,
    ) -> PyResult<PyObject> {
        let frame = convert::parse(frame)?;
        let layout = convert::layout(compact);
        let dtype = Dtype::parse(py, dtype, layout, self.variant())?;
        observations::encode(py, &[&self.game], frame, layout, dtype, false, &workers::DEFAULT)
    }

    /// The position as a compact board: 1296 uint16 codes (36×36, absolute frame), as the
    /// datasets' `board` column stores it (`(kind + 1) << 2 | promoted << 1 | color`).
    fn compact_board<'py>(&self, py: Python<'py>) -> Bound<'py, numpy::PyArray1<u16>> {
        let mut board = vec![0u16; actions::GRID_SQUARES];
        observation::compact_board(&self.game.position, &mut board);
        numpy::PyArray1::from_vec_bound(py, board)
    }

    /// The number of observation planes (P).
    #[pyo3(signature = (compact = false))]
    fn plane_count(&self, compact: bool) -> usize {
        observation::plane_count(self.variant(), convert::layout(compact))
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

    /// Pickles as (variant, options, start text, moves, max_plies, forfeited): unpickling
    /// replays the moves, checking each.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(PyObject, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let this = slf.borrow();
        // (from, to, mid, sweep), with (mid2, promote) appended only when either is set:
        // pickles of games without three-step captures or promotion choices read as before.
        let moves: Vec<PyObject> = this
            .game
            .moves()
            .map(|m| match (m.mid2(), m.promote()) {
                (NO_SQUARE, false) => (m.from, m.to, m.mid, m.sweep()).into_py(py),
                (mid2, promote) => (m.from, m.to, m.mid, m.sweep(), mid2, promote).into_py(py),
            })
            .collect();
        let restore = py.import_bound("taikyoku._core")?.getattr("_restore_game")?.unbind();
        let args = PyTuple::new_bound(
            py,
            [
                this.variant().name.clone().into_py(py),
                PyList::new_bound(py, this.variant().options.clone()).into_py(py),
                this.start_text().into_py(py),
                moves.into_py(py),
                this.game.max_plies.into_py(py),
                this.game.forfeited().into_py(py),
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

/// The built-in variant whose board has as many ranks as the position text (a variant loaded
/// from files is never guessed: pass `variant=`).
fn variant_of_text(text: &str) -> PyResult<String> {
    let ranks = text.split_whitespace().next().map_or(0, |board| board.split('/').count());
    let mut matching = engine::built_in_variant_names()
        .into_iter()
        .filter(|name| Variant::load(name, &[]).is_ok_and(|v| v.geometry.height == ranks));
    match (matching.next(), matching.next()) {
        (Some(name), None) => Ok(name.to_string()),
        (Some(_), Some(_)) => {
            Err(PositionTextError::new_err(format!("{ranks} ranks fit several variants: pass variant=...")))
        }
        (None, _) => Err(PositionTextError::new_err(format!(
            "bad position text: no variant has a board of {ranks} ranks ({})",
            engine::variant_names().join(", ")
        ))),
    }
}

/// Plays a seeded game of uniformly random legal moves (ChaCha8; same seed, same game) until
/// it ends or `max_plies` plies are played; returns the Game.
#[pyfunction]
#[pyo3(signature = (seed, max_plies = Int(1000), variant = "taikyoku", options = None))]
pub fn random_game(
    py: Python<'_>,
    seed: Int,
    max_plies: Int,
    variant: &str,
    options: Option<Vec<String>>,
) -> PyResult<Game> {
    let seed = seed.seed("seed")?;
    let limit = max_plies.count("max_plies")?;
    let mut game = engine::Game::new(variants::variant(variant, &options.unwrap_or_default())?);
    game.max_plies = Some(limit);
    shield(|| {
        py.allow_threads(|| engine::random::random_playout(&mut game, seed, limit as usize));
        Ok(())
    })?;
    Ok(Game::wrap(game))
}

/// Rebuilds a pickled game (see `Game.__reduce__`), checking every move.
#[pyfunction]
#[pyo3(signature = (variant, options, start, moves, max_plies = None, forfeited = false))]
pub fn _restore_game(
    variant: &str,
    options: Vec<String>,
    start: &str,
    moves: Vec<Bound<'_, PyTuple>>,
    max_plies: Option<Int>,
    forfeited: bool,
) -> PyResult<Game> {
    let v = variants::variant(variant, &options)?;
    let square = |value: Int| value.within::<u16>("a pickled move's square", 0, u16::MAX as i128);
    let decode = |t: &Bound<'_, PyTuple>| -> PyResult<EngineMove> {
        let (from, to, mid, sweep, mid2, promote): (Int, Int, Int, bool, Option<Int>, bool) = match t.len() {
            4 => {
                let (a, b, c, d) = t.extract()?;
                (a, b, c, d, None, false)
            }
            6 => {
                let (a, b, c, d, e, f) = t.extract()?;
                (a, b, c, d, Some(e), f)
            }
            n => return Err(invalid(format!("a pickled move has 4 or 6 fields, not {n}"))),
        };
        let mid2 = match mid2 {
            Some(sq) => square(sq)?,
            None => NO_SQUARE,
        };
        let (from, to) = (square(from)?, square(to)?);
        Ok(EngineMove::with_captures(from as usize, to as usize, square(mid)?, mid2)
            .with_sweep(sweep)
            .with_promotion(promote))
    };
    let moves = moves
        .iter()
        .map(decode)
        .collect::<PyResult<Vec<EngineMove>>>()
        .map_err(|e| invalid(format!("cannot restore a pickled game: {e}")))?;
    let limit = self::max_plies(max_plies)?;
    let mut game = shield(|| {
        engine::Game::replay(v, start, &moves, limit)
            .map_err(|e| invalid(format!("cannot restore a pickled game: {e}")))
    })?;
    if forfeited {
        if game.end().is_some() {
            return Err(invalid("cannot restore a pickled game: it was forfeited after its end"));
        }
        game.forfeit();
    }
    Ok(Game::wrap(game))
}

/// Observations of many games in one call: an array (N, 36, 36, P), encoded in parallel.
#[pyfunction]
#[pyo3(signature = (games, dtype = None, frame = "mover", compact = false))]
pub fn encode_observations(
    py: Python<'_>,
    games: Vec<PyRef<'_, Game>>,
    dtype: Option<&Bound<'_, PyAny>>,
    frame: &str,
    compact: bool,
) -> PyResult<PyObject> {
    let frame = convert::parse(frame)?;
    let layout = convert::layout(compact);
    let Some(first) = games.first() else {
        return Err(invalid("encode_observations needs at least one game"));
    };
    let variant = first.game.position.variant.clone();
    if let Some(other) = games.iter().find(|g| {
        let v = &g.game.position.variant;
        v.name != variant.name || v.options != variant.options
    }) {
        return Err(invalid(format!(
            "all games must be of one variant with the same rule options ({} {:?} and {} {:?})",
            variant.name, variant.options, other.game.position.variant.name, other.game.position.variant.options
        )));
    }
    let dtype = Dtype::parse(py, dtype, layout, &variant)?;
    let refs: Vec<&engine::Game> = games.iter().map(|g| &g.game).collect();
    observations::encode(py, &refs, frame, layout, dtype, true, &workers::DEFAULT)
}
