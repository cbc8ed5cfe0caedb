"""Property tests of the text parsers the Python API exposes: move notation (Game.play,
Game.action_of), position text (Game.from_text), piece names and squares (Game.place,
Game.piece_at).

- Any input either works or raises a ValueError subclass (TaikyokuError); never anything else
  (no OverflowError, no pyo3 PanicException, no hang), and a failed call changes nothing.
- Round trips: a position's text reads back to the same text; every legal move's notation plays
  exactly that move.
"""

from __future__ import annotations

import string

import numpy as np
import pytest
from conftest import Hang
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import taikyoku
from taikyoku import Game, UnknownSquareError

TIMEOUT = 60


pytestmark = pytest.mark.usefixtures("no_hang")


FAST = settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=25, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


def state(g: Game):
    return g.to_text(), g.ply, tuple(g.history()), g.is_over, g.result, g.termination, g.max_plies


def works_or_value_error(call, g: Game = None):
    """Runs ``call``; returns (True, result) or (False, error) after checking the error's kind
    and, when a game is given, that a failure left it unchanged."""
    before = state(g) if g is not None else None
    try:
        return True, call()
    except Hang:
        raise
    except BaseException as error:  # noqa: BLE001 - a PanicException is a BaseException
        kind = f"{type(error).__module__}.{type(error).__name__}"
        assert isinstance(error, ValueError) and not isinstance(error, OverflowError), f"{kind}: {error}"
        assert str(error), f"{kind} without a message"
        if g is not None:
            assert state(g) == before, f"{kind} changed the game"
        return False, error


# ---------------------------------------------------------------------------------------------
# Positions.


def _live(g: Game) -> Game:
    g.max_plies = None
    return g


POSITIONS = [
    _live(Game()),
    *(_live(taikyoku.random_game(seed, max_plies=plies)) for seed, plies in ((1, 20), (2, 45), (3, 80))),
]
POSITIONS = [g for g in POSITIONS if not g.is_over]
NOTATIONS = sorted({m.notation for g in POSITIONS for m in g.legal_moves()})
PIECE_NAMES = sorted({t.abbrev for t in taikyoku.piece_types()} | {t.name for t in taikyoku.piece_types()})
RANKS = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [chr(c) * 2 for c in range(ord("a"), ord("j") + 1)]
SQUARES = [f"{f}{r}" for f in range(1, 37) for r in RANKS]

NOTATION_ALPHABET = string.digits + string.ascii_letters + "+-x!=* '\"\x00１ｈ😀"


@st.composite
def mutated(draw, sources):
    """A real string with a few characters deleted, inserted, replaced or swapped."""
    text = list(draw(st.sampled_from(sources)))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["delete", "insert", "replace", "swap", "duplicate"]))
        i = draw(st.integers(0, max(len(text) - 1, 0)))
        if op == "delete" and text:
            del text[i]
        elif op == "insert":
            text.insert(i, draw(st.sampled_from(NOTATION_ALPHABET)))
        elif op == "replace" and text:
            text[i] = draw(st.sampled_from(NOTATION_ALPHABET))
        elif op == "swap" and len(text) > 1:
            j = draw(st.integers(0, len(text) - 1))
            text[i], text[j] = text[j], text[i]
        elif op == "duplicate" and text:
            text.insert(i, text[i])
    return "".join(text)


notation_like = st.one_of(
    st.text(max_size=24),
    st.text(alphabet=NOTATION_ALPHABET, max_size=16),
    st.sampled_from(NOTATIONS),
    mutated(NOTATIONS),
    st.builds(lambda a, b: a + b, st.sampled_from(NOTATIONS), st.sampled_from(["x5f", "x!", "+", "=", "-", "x", " "])),
)


@FAST
@given(position=st.sampled_from(range(len(POSITIONS))), text=notation_like)
def test_play_notation_works_or_is_a_value_error(position, text):
    g = POSITIONS[position].clone()
    legal = {m.notation: m for m in g.legal_moves()}
    ok, result = works_or_value_error(lambda: g.play(text), g)
    if ok:
        assert g.ply == POSITIONS[position].ply + 1
        assert result.notation == g.history()[-1] and result.notation in legal
    elif text in legal:
        pytest.fail(f"the legal move {text!r} did not play: {result}")


@FAST
@given(position=st.sampled_from(range(len(POSITIONS))), text=notation_like)
def test_action_of_notation_works_or_is_a_value_error(position, text):
    g = POSITIONS[position].clone()
    ok, action = works_or_value_error(lambda: g.action_of(text), g)
    if ok:
        assert action in set(g.legal_actions().tolist())


START = Game().to_text()
TEXTS = [START, *(g.to_text() for g in POSITIONS)]
TEXT_ALPHABET = ",/ +" + string.ascii_letters + string.digits + "\x00\n\t１😀"


@st.composite
def mutated_text(draw):
    """A position text with a few edits (in the board, the side or the move number)."""
    text = list(draw(st.sampled_from(TEXTS)))
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(text) - 1))
        op = draw(st.sampled_from(["delete", "insert", "replace"]))
        if op == "delete":
            del text[i]
        elif op == "insert":
            text.insert(i, draw(st.sampled_from(TEXT_ALPHABET)))
        else:
            text[i] = draw(st.sampled_from(TEXT_ALPHABET))
    return "".join(text)


@FAST
@given(text=st.one_of(st.text(max_size=60), st.text(alphabet=TEXT_ALPHABET, max_size=60), mutated_text()))
def test_from_text_works_or_is_a_value_error(text):
    ok, g = works_or_value_error(lambda: Game.from_text(text))
    if ok:
        # Whatever it read, it writes back a text that reads back to itself.
        assert Game.from_text(g.to_text()).to_text() == g.to_text()


square_like = st.one_of(
    st.sampled_from(SQUARES),
    st.text(max_size=6),
    st.text(alphabet=string.digits + "abcdefghijklmnopqrstuvwxyz -+０\x00", max_size=5),
    mutated(SQUARES),
    st.tuples(st.integers(-(2**70), 2**70), st.integers(-(2**70), 2**70)),
    st.tuples(st.integers(-2, 40), st.integers(-2, 40)),
)
piece_like = st.one_of(
    st.sampled_from(PIECE_NAMES),
    st.text(max_size=12),
    mutated(PIECE_NAMES),
    st.sampled_from(PIECE_NAMES).map(str.lower),
    st.sampled_from(PIECE_NAMES).map(str.upper),
)
color_like = st.one_of(st.sampled_from(["black", "white", "Black", "WHITE", "red", "", "b", "w"]), st.text(max_size=6))


@FAST
@given(
    position=st.sampled_from(range(len(POSITIONS))),
    square=square_like,
    piece=piece_like,
    color=color_like,
    promoted=st.booleans(),
)
def test_place_works_or_is_a_value_error(position, square, piece, color, promoted):
    g = POSITIONS[position].clone()
    ok, _ = works_or_value_error(lambda: g.place(square, piece, color, promoted=promoted), g)
    if ok:
        placed = g.piece_at(square)
        assert placed is not None and placed.color[0] == color.strip().lower()[0]
        assert g.ply == 0 and g.history() == []  # an edit restarts the history (documented)
        assert Game.from_text(g.to_text()).to_text() == g.to_text()


@FAST
@given(position=st.sampled_from(range(len(POSITIONS))), square=square_like)
def test_piece_at_works_or_is_an_unknown_square(position, square):
    g = POSITIONS[position]
    ok, result = works_or_value_error(lambda: g.piece_at(square), g)
    if ok:
        assert result is None or result.color in ("black", "white")
        if isinstance(square, str):
            assert square.strip() in SQUARES  # names are trimmed; a leading zero is refused
        else:
            file, rank = square
            assert 1 <= file <= 36 and 1 <= rank <= 36
            # A (file, rank) pair names the same square as its written name.
            assert result == g.piece_at(f"{file}{g.rank_names[rank - 1]}")
    else:
        assert isinstance(result, UnknownSquareError)
        assert square not in SQUARES


@FAST
@given(position=st.sampled_from(range(len(POSITIONS))), square=square_like)
def test_moves_from_works_or_is_an_unknown_square(position, square):
    g = POSITIONS[position]
    ok, moves = works_or_value_error(lambda: g.moves_from(square), g)
    if not ok:
        assert isinstance(moves, UnknownSquareError)


# ---------------------------------------------------------------------------------------------
# Round trips.

random_positions = st.builds(
    lambda seed, plies: _live(taikyoku.random_game(seed, max_plies=plies)), st.integers(0, 2**32), st.integers(0, 60)
)


# Piece names (codes are shared by a few pieces, e.g. left and right howling dog "HD").
CROWD = [t.name for t in taikyoku.piece_types() if not t.royal and not t.promoted_only]
PROMOTING = {t.name for t in taikyoku.piece_types() if t.promotes_to}


@st.composite
def crowded_positions(draw):
    """Two kings and a crowd of random pieces (lions, hook movers, ...) in a small area: many
    captures, double moves and igui, whose notation is the hardest to get right."""
    g = Game.empty(side_to_move=draw(st.sampled_from(["black", "white"])))
    g.place("18jj", "K", "black")
    g.place("18a", "K", "white")
    for _ in range(draw(st.integers(2, 14))):
        square = (draw(st.integers(14, 22)), draw(st.integers(12, 20)))
        piece = draw(
            st.one_of(st.sampled_from(["LN", "FK", "HF", "Free bird", "Buddhist devil"]), st.sampled_from(CROWD))
        )
        g.place(
            square,
            piece,
            draw(st.sampled_from(["black", "white"])),
            promoted=draw(st.booleans()) and piece in PROMOTING,
        )
    return g


def assert_text_round_trip(g: Game):
    text = g.to_text()
    assert Game.from_text(text).to_text() == text


@SLOW
@given(g=random_positions)
def test_position_text_round_trip(g):
    assert_text_round_trip(g)


def assert_notation_round_trip(g: Game):
    wrong = []
    for move in g.legal_moves():
        by_notation, by_move = g.clone(), g.clone()
        by_move.play(move)
        try:
            played = by_notation.play(move.notation)
        except ValueError as error:
            wrong.append(f"{move.notation}: {type(error).__name__}: {error}")
            continue
        if played != move or by_notation.history()[-1] != move.notation or by_notation.to_text() != by_move.to_text():
            wrong.append(f"{move.notation} played {played.notation}")
    assert not wrong, (
        f"{len(wrong)} of {g.legal_move_count()} notations do not play back, in {g.to_text()}: {wrong[:5]}"
    )


@SLOW
@given(g=random_positions)
def test_every_legal_notation_plays_its_move_random_games(g):
    assume(not g.is_over)
    assert_notation_round_trip(g)


@SLOW
@given(g=crowded_positions())
def test_every_legal_notation_plays_its_move_crowded_positions(g):
    assume(not g.is_over)
    assert_text_round_trip(g)
    assert_notation_round_trip(g)


@SLOW
@given(g=st.one_of(random_positions, crowded_positions()))
def test_action_round_trip(g):
    """action_of and move_of are inverse on the legal moves, in both frames (numpy ints too)."""
    assume(not g.is_over)
    for frame in ("mover", "absolute"):
        actions = g.legal_actions(frame)
        assert len(set(actions.tolist())) == len(actions) == g.legal_move_count()
        for action in actions[:: max(1, len(actions) // 25)]:
            move = g.move_of(action, frame=frame)
            assert g.action_of(move, frame=frame) == action
            assert g.move_of(np.int64(action), frame=frame) == move
