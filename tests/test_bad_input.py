"""Bad input, catalogued: every public callable with wrong types, None, negative, huge, float,
bool and numpy numbers, empty, huge and odd unicode strings, off-board squares, unknown names.

The standard (the "Reliability" issue): bad input gets a clear error and loses nothing.

- The error is a ValueError subclass (the package's own are taikyoku.TaikyokuError); a TypeError
  is fine for a plainly wrong Python type (a dict where a string goes), an OSError for the file
  system. Never an OverflowError, never a pyo3 PanicException (a BaseException), never a hang,
  never a silent acceptance.
- The message names the problem: the argument, or the bad value.
- Nothing changes: the game (text, ply, history, end), the env (its game, legal actions,
  observation), the files on disk are as they were.

The catalogue is one table, ``CASES``: (subject, call, expected error, message fragments). The
subject is built fresh for each case (a game with a history, an env after a few steps, an empty
directory, ...) and snapshotted before and after the call.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import pickle
import warnings
from pathlib import Path
from typing import Any, Callable

import gymnasium
import numpy as np
import pytest
from conftest import Hang, hold_writer_lock

import taikyoku
import taikyoku.datasets as tds
from taikyoku import (
    Game,
    IllegalMoveError,
    NotationError,
    PositionTextError,
    TaikyokuError,
    UnknownPieceError,
    UnknownSquareError,
    mcts_action,
    render,
)
from taikyoku._core import NUM_ACTIONS

pettingzoo = pytest.importorskip("pettingzoo")

# ---------------------------------------------------------------------------------------------
# Nothing hangs: a Python-level alarm fails the test; a hang inside native code (where the
# alarm's handler cannot run) is stopped by faulthandler, which dumps the stacks and exits.

TIMEOUT = 30


pytestmark = pytest.mark.usefixtures("no_hang")


# ---------------------------------------------------------------------------------------------
# Expected errors.

VALUE = ValueError  # TaikyokuError and its subclasses are ValueErrors
TYPE = (TypeError, ValueError)  # a plainly wrong Python type: either is fine
FILES = (ValueError, OSError)

MB = "x" * 1_000_000
ODD_STRINGS = {"empty": "", "fullwidth": "１２ｈ", "emoji": "\U0001f600", "nul": "1a\x00", "1MB": MB}
OFF_BOARD = {"0a": "0a", "37a": "37a", "1kk": "1kk", "12": "12", "a12": "a12", "-1a": "-1a"}
OFF_BOARD_PAIRS = {
    "(0,1)": (0, 1),
    "(37,1)": (37, 1),
    "(1,0)": (1, 0),
    "(1,37)": (1, 37),
    "(1,2**70)": (1, 2**70),
    "(-1,1)": (-1, 1),
    "(1,1,1)": (1, 1, 1),
    "(1.0,1)": (1.0, 1),
    "(1,)": (1,),
    "('1','a')": ("1", "a"),
}
NOT_SQUARES = {"None": None, "dict": {}, "int": 5, "float": 1.5, "list": [1, 1], "bytes": b"1a"}


def raised_by(call: Callable[[], Any]) -> BaseException:
    try:
        result = call()
    except Hang:
        raise
    except BaseException as error:  # noqa: BLE001 - PanicException is what we look for
        return error
    shown = repr(result)
    pytest.fail(f"no error: the call returned {shown[:200]}")


def check_error(error: BaseException, expected, fragments=()) -> None:
    kind = f"{type(error).__module__}.{type(error).__qualname__}"
    assert isinstance(error, Exception), f"{kind} is a BaseException only (a pyo3 PanicException?): {error}"
    assert "Panic" not in type(error).__name__, f"{kind}: {error}"
    assert not isinstance(error, OverflowError), f"OverflowError instead of a ValueError naming the range: {error}"
    assert isinstance(error, expected), f"expected {expected}, got {kind}: {error}"
    message = str(error)
    for fragment in fragments:
        assert fragment.lower() in message.lower(), f"{kind} message does not name {fragment!r}: {message[:300]}"


def expect(call, expected=VALUE, *fragments):
    check_error(raised_by(call), expected, fragments)


# ---------------------------------------------------------------------------------------------
# Subjects and snapshots.


def played_game(plies=12, seed=5) -> Game:
    """A game going on, with a history (random_game stops at max_plies; lift the limit)."""
    g = taikyoku.random_game(seed, max_plies=plies)
    g.max_plies = None
    assert not g.is_over and g.ply == plies
    return g


def over_game() -> Game:
    g = played_game()
    g.forfeit()
    return g


def game_state(g: Game):
    return (
        g.to_text(),
        g.ply,
        tuple(g.history()),
        g.is_over,
        g.result,
        g.termination,
        g.max_plies,
        g.hash,
        g.side_to_move,
    )


def env_state(env):
    env = env.unwrapped
    obs = env._observe()
    return (game_state(env.game), tuple(env._legal.tolist()), hashlib.sha1(obs.tobytes()).hexdigest())


def vector_state(env):
    games = tuple(game_state(env.game(i)) for i in range(env.num_envs))
    legal = tuple(tuple(a.tolist()) for a in env.legal_actions())
    return games, legal


def aec_state(env):
    raw = env.unwrapped
    return (
        game_state(raw.game),
        raw.agent_selection,
        dict(raw.rewards),
        dict(raw._cumulative_rewards),
        dict(raw.terminations),
        dict(raw.truncations),
        tuple(raw._legal.tolist()),
    )


def dir_state(path: Path):
    if not path.exists():
        return None
    files = {}
    for p in sorted(path.rglob("*")):
        files[str(p.relative_to(path))] = hashlib.sha1(p.read_bytes()).hexdigest() if p.is_file() else "dir"
    return files


FILE_LAYOUTS = {
    "file": {"f": "x"},
    "foreign": {"thesis.tex": "precious"},
    "corrupt": {"c/manifest.json": "{not json"},
    "binary": {"c/manifest.json": b"\xff\xfe\x00"},
    "list": {"c/manifest.json": "[]"},
    "manifest-dir": {"c/manifest.json": None},
}


class Subject:
    """What a case acts on (``value``) and how to see whether it changed (``state()``)."""

    def __init__(self, value, state):
        self.value, self.state = value, state


def make_subject(kind: str, tmp_path: Path, monkeypatch) -> Subject:
    if kind == "none":
        return Subject(None, lambda: None)
    if kind == "game":
        g = played_game()
        return Subject(g, lambda: game_state(g))
    if kind == "fresh":
        g = Game()
        return Subject(g, lambda: game_state(g))
    if kind == "over":
        g = over_game()
        return Subject(g, lambda: game_state(g))
    if kind in ("env", "env_lose", "env_absolute"):
        kwargs = {"env_lose": {"illegal_action": "lose"}, "env_absolute": {"frame": "absolute"}}.get(kind, {})
        env = taikyoku.TaikyokuEnv(**kwargs)
        env.reset(seed=0)
        for _ in range(3):
            env.step(env.action_space.sample())
        return Subject(env, lambda: env_state(env))
    if kind == "env_over":
        env = taikyoku.TaikyokuEnv(max_plies=2)
        env.reset(seed=0)
        env.step(env.action_space.sample())
        env.step(env.action_space.sample())
        assert env.game.is_over
        return Subject(env, lambda: env_state(env))
    if kind == "vec":
        env = taikyoku.VectorEnv(2, seed=0)
        env.reset(seed=0)
        env.step(env.random_actions())
        return Subject(env, lambda: vector_state(env))
    if kind in ("aec", "aec_lose"):
        env = taikyoku.pettingzoo_env(illegal_action="lose" if kind == "aec_lose" else "raise")
        env.reset(seed=0)
        env.step(int(env.unwrapped._legal[0]))
        return Subject(env, lambda: aec_state(env))
    if kind == "dir":  # an empty directory; cases write under it (d / "ds") or into it
        return Subject(tmp_path, lambda: dir_state(tmp_path))
    if kind == "cwd":  # the current directory, not empty
        (tmp_path / "thesis.tex").write_text("precious")
        monkeypatch.chdir(tmp_path)
        return Subject(tmp_path, lambda: dir_state(tmp_path))
    if kind.startswith("files:"):  # a directory holding some files
        layout = kind[len("files:") :]
        if layout == "dataset":
            taikyoku.selfplay(tmp_path / "ds", **tiny())
        for relative, content in FILE_LAYOUTS.get(layout, {}).items():
            path = tmp_path / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            if content is None:
                path.mkdir()
            else:
                (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
        return Subject(tmp_path, lambda: dir_state(tmp_path))
    if kind.startswith("locked"):  # a directory (empty, or a dataset) whose writer lock another writer holds
        if kind == "locked:dataset":
            taikyoku.selfplay(tmp_path, **tiny())
        holder = hold_writer_lock(tmp_path)
        subject = Subject(tmp_path, lambda: dir_state(tmp_path))
        subject.holder = holder  # held as long as the subject lives
        return subject
    if kind == "dataset":
        out = tmp_path / "ds"
        taikyoku.selfplay(out, games=2, max_plies=2, games_per_shard=1)
        return Subject(tds.open(out), lambda: dir_state(tmp_path))
    raise AssertionError(kind)


# ---------------------------------------------------------------------------------------------
# The catalogue.

CASES = []


def case(name: str, on: str, call: Callable, expected=VALUE, *fragments: str):
    """One entry: ``call(subject)`` must raise ``expected`` naming every fragment."""
    CASES.append(pytest.param(on, call, expected, fragments, id=name))


# -- Game() and the other constructors --------------------------------------------------------

for label, value in {"unknown": "chess", **ODD_STRINGS}.items():
    case(f"Game(variant={label})", "none", lambda _, v=value: Game(v), VALUE, "variant")
    case(f"Game.empty(variant={label})", "none", lambda _, v=value: Game.empty(v), VALUE, "variant")
    case(f"piece_types({label})", "none", lambda _, v=value: taikyoku.piece_types(v), VALUE, "variant")
    case(f"rule_options({label})", "none", lambda _, v=value: taikyoku.rule_options(v), VALUE, "variant")
    case(f"plane_names({label})", "none", lambda _, v=value: taikyoku.plane_names(v), VALUE, "variant")
for label, value in {"None": None, "int": 1, "list": ["taikyoku"], "bytes": b"taikyoku"}.items():
    case(f"Game(variant={label})", "none", lambda _, v=value: Game(v), TYPE, "variant")
    case(f"piece_types({label})", "none", lambda _, v=value: taikyoku.piece_types(v), TYPE, "variant")
    case(f"rule_options({label})", "none", lambda _, v=value: taikyoku.rule_options(v), TYPE, "variant")
    case(f"plane_names({label})", "none", lambda _, v=value: taikyoku.plane_names(v), TYPE, "variant")
for label, value in {"unknown": ["no-such-rule"], "emoji": ["\U0001f600"], "empty": [""]}.items():
    case(f"Game(options={label})", "none", lambda _, v=value: Game(options=v), VALUE, "rule option")
    case(f"Game.empty(options={label})", "none", lambda _, v=value: Game.empty(options=v), VALUE, "rule option")
    case(
        f"plane_names(options={label})",
        "none",
        lambda _, v=value: taikyoku.plane_names(options=v),
        VALUE,
        "rule option",
    )
    case(
        f"random_game(options={label})",
        "none",
        lambda _, v=value: taikyoku.random_game(1, options=v),
        VALUE,
        "rule option",
    )
for label, value in {"str": "wooden-dove-range-3", "int": 5, "list-of-int": [1], "list-of-None": [None]}.items():
    case(f"Game(options={label})", "none", lambda _, v=value: Game(options=v), TYPE, "options")
case("Game(options=dict)", "none", lambda _: Game(options={"wooden-dove-range-3": True}), TYPE, "options")

MAX_PLIES_BAD = {
    "-1": (-1, VALUE),
    "2**32": (2**32, VALUE),
    "1.5": (1.5, TYPE),
    "'5'": ("5", TYPE),
    "np.float64(5)": (np.float64(5), TYPE),
    "np.int64(-1)": (np.int64(-1), VALUE),
    "2**63": (2**63, VALUE),
    "2**70": (2**70, VALUE),
    "np.uint64(2**64-1)": (np.uint64(2**64 - 1), VALUE),
    "True": (True, TYPE),
}
for label, (value, expected) in MAX_PLIES_BAD.items():
    case(f"Game(max_plies={label})", "none", lambda _, v=value: Game(max_plies=v), expected, "max_plies")
    case(f"Game.max_plies={label}", "game", lambda g, v=value: setattr(g, "max_plies", v), expected, "max_plies")
    case(
        f"random_game(max_plies={label})",
        "none",
        lambda _, v=value: taikyoku.random_game(1, max_plies=v),
        expected,
        "max_plies",
    )

for label, value in {"red": "red", "empty": "", "emoji": "\U0001f600", "1MB": MB}.items():
    case(f"Game.empty(side_to_move={label})", "none", lambda _, v=value: Game.empty(side_to_move=v), VALUE, "color")
case("Game.empty(side_to_move=None)", "none", lambda _: Game.empty(side_to_move=None), TYPE, "side_to_move")

START = Game().to_text()
BAD_TEXTS = {
    "empty": "",
    "1MB": MB,
    "emoji": "\U0001f600",
    "nul": START + "\x00",
    "side": START.replace(" b 1", " x 1"),
    "move-number-0": START.replace(" b 1", " b 0"),
    "move-number-huge": START.replace(" b 1", " b 99999999999999999999"),
    "truncated": START[:100],
    "unknown-piece": START.replace("l,wt", "zz,wt", 1),
    "fullwidth": START.replace("1", "１"),
}
for label, value in BAD_TEXTS.items():
    case(f"Game.from_text({label})", "none", lambda _, v=value: Game.from_text(v), PositionTextError, "position text")
    case(
        f"TaikyokuEnv(start={label})",
        "none",
        lambda _, v=value: taikyoku.TaikyokuEnv(start=v),
        PositionTextError,
        "position text",
    )
for label, value in {"None": None, "int": 5, "bytes": START.encode()}.items():
    case(f"Game.from_text({label})", "none", lambda _, v=value: Game.from_text(v), TYPE, "text")
case("Game.from_text(variant=chess)", "none", lambda _: Game.from_text(START, variant="chess"), VALUE, "variant")
case("Game.from_text(options=unknown)", "none", lambda _: Game.from_text(START, options=["nope"]), VALUE, "nope")

# -- squares: place, remove, piece_at, moves_from ----------------------------------------------

SQUARE_METHODS = {
    "place": lambda g, sq: g.place(sq, "P", "black"),
    "remove": lambda g, sq: g.remove(sq),
    "piece_at": lambda g, sq: g.piece_at(sq),
    "moves_from": lambda g, sq: g.moves_from(sq),
}
for method, call in SQUARE_METHODS.items():
    for label, value in {**OFF_BOARD, **ODD_STRINGS}.items():
        case(f"{method}({label})", "game", lambda g, c=call, v=value: c(g, v), UnknownSquareError, "square")
    for label, value in OFF_BOARD_PAIRS.items():
        case(f"{method}{label}", "game", lambda g, c=call, v=value: c(g, v), UnknownSquareError, "square")
    for label, value in NOT_SQUARES.items():
        case(f"{method}({label})", "game", lambda g, c=call, v=value: c(g, v), TYPE, "square")
    case(f"{method}((True,1))", "game", lambda g, c=call: c(g, (True, 1)), TYPE, "square")
case("(1,2**70) named", "game", lambda g: g.piece_at((1, 2**70)), UnknownSquareError, str(2**70))
case("'37a' named", "game", lambda g: g.piece_at("37a"), UnknownSquareError, "37a", "files 1-36")

PIECES = {
    "unknown": "ZZ",
    "empty": "",
    "emoji": "\U0001f600",
    "nul": "K\x00",
    "1MB": MB,
    "fullwidth": "ＬＮ",
    "promoted-sign": "++P",
    "space": " ",
}
for label, value in PIECES.items():
    case(f"place(piece={label})", "game", lambda g, v=value: g.place("1a", v, "black"), UnknownPieceError, "piece")
for label, value in {"None": None, "int": 5, "list": ["P"]}.items():
    case(f"place(piece={label})", "game", lambda g, v=value: g.place("1a", v, "black"), TYPE, "piece")
for label, value in {"red": "red", "empty": "", "emoji": "\U0001f600", "1MB": MB}.items():
    case(f"place(color={label})", "game", lambda g, v=value: g.place("1a", "P", v), VALUE, "color")
    case(f"royal_count({label})", "game", lambda g, v=value: g.royal_count(v), VALUE, "color")
    case(f"in_check({label})", "game", lambda g, v=value: g.in_check(v), VALUE, "color")
for label, value in {"None": None, "int": 0, "bool": True}.items():
    case(f"place(color={label})", "game", lambda g, v=value: g.place("1a", "P", v), TYPE, "color")
    case(f"royal_count({label})", "game", lambda g, v=value: g.royal_count(v), TYPE, "color")
    case(f"in_check({label})", "game", lambda g, v=value: g.in_check(v), TYPE, "color")
for code in ("HD", "ME"):  # shared by two piece types: the message must say so, not "unknown piece"
    case(
        f"place(piece={code}, a shared code)",
        "game",
        lambda g, c=code: g.place("1a", c, "black"),
        UnknownPieceError,
        "ambiguous",
    )
case("place(promoted=King)", "game", lambda g: g.place("1a", "K", "black", promoted=True), VALUE, "does not promote")
for label, value in {"'yes'": "yes", "1": 1, "None": None, "1.0": 1.0}.items():
    case(
        f"place(promoted={label})", "game", lambda g, v=value: g.place("1a", "P", "black", promoted=v), TYPE, "promoted"
    )

# -- moves: play, action_of, move_of -------------------------------------------------------------

NOTATIONS = {
    "empty": ("", "move"),
    "emoji": ("\U0001f600", "move"),
    "nul": ("P-12y\x00", "move"),
    "fullwidth": ("P-１２y", "move"),
    "1MB": ("P" * 1_000_000, "move"),
    "garbage": ("zz", "move"),
    "off-board": ("P-37a", "37a"),
    "unknown-piece": ("ZZ-12y", "ZZ"),
    "illegal": ("P-12h", "move"),
    "spaces": ("   ", "move"),
    "lowercase": ("p-12y-", "move"),
    "x-only": ("x", "move"),
    "double-capture-garbage": ("LNx5fx6ex7d+", "move"),
}
for label, (value, fragment) in NOTATIONS.items():
    case(f"play({label})", "game", lambda g, v=value: g.play(v), VALUE, fragment)
    case(f"action_of({label})", "game", lambda g, v=value: g.action_of(v), VALUE, fragment)
for label, value in {"None": None, "dict": {}, "bytes": b"P-12y", "list": ["P-12y"]}.items():
    case(f"play({label})", "game", lambda g, v=value: g.play(v), TYPE, type(value).__name__)
    case(f"action_of({label})", "game", lambda g, v=value: g.action_of(v), TYPE, type(value).__name__)
case("action_of(int)", "game", lambda g: g.action_of(int(g.legal_actions()[0])), TYPE, "int")
case("action_of(frame=x)", "game", lambda g: g.action_of(g.legal_moves()[0], frame="x"), VALUE, "frame")
case("action_of(frame=None)", "game", lambda g: g.action_of(g.legal_moves()[0], frame=None), TYPE, "frame")

# Integer actions: play(int) and move_of(int) read the same action space.
ACTIONS = {
    "-1": (lambda g: -1, VALUE, ("-1",)),
    "NUM_ACTIONS": (lambda g: NUM_ACTIONS, VALUE, (str(NUM_ACTIONS),)),
    "2**70": (lambda g: 2**70, VALUE, ("action space",)),
    "np.uint64(2**64-1)": (lambda g: np.uint64(2**64 - 1), VALUE, ("action space",)),
    "illegal": (lambda g: 0, IllegalMoveError, ("not a legal move",)),
    "float": (lambda g: float(g.legal_actions()[0]), TYPE, ("float",)),
    "legal+0.5": (lambda g: g.legal_actions()[0] + 0.5, TYPE, ("float",)),
    "np.float64": (lambda g: np.float64(g.legal_actions()[0]), TYPE, ("float",)),
    "numeric-str": (lambda g: str(g.legal_actions()[0]), VALUE, ()),
    "True": (lambda g: True, TYPE, ("bool",)),
    "np.array([a])": (lambda g: g.legal_actions()[:1], TYPE, ()),
}
for label, (make, expected, fragments) in ACTIONS.items():
    case(f"play({label})", "game", lambda g, m=make: g.play(m(g)), expected, *fragments)
    if label != "numeric-str":  # move_of takes no notation
        case(f"move_of({label})", "game", lambda g, m=make: g.move_of(m(g)), expected, *fragments)
case("move_of(numeric-str)", "game", lambda g: g.move_of(str(g.legal_actions()[0])), TYPE, "str")
case("move_of(None)", "game", lambda g: g.move_of(None), TYPE, "None")
case("move_of(frame=x)", "game", lambda g: g.move_of(g.legal_actions()[0], frame="x"), VALUE, "frame")
case("move_of(int, frame=x)", "game", lambda g: g.move_of(int(g.legal_actions()[0]), frame="x"), VALUE, "frame")
case(
    "play(Move of another position)",
    "fresh",
    lambda g: g.play(played_game().legal_moves()[0]),
    IllegalMoveError,
    "illegal",
)
case("play(game over)", "over", lambda g: g.play(played_game().legal_moves()[0]), IllegalMoveError, "over")
case("play(action, game over)", "over", lambda g: g.play(1), IllegalMoveError, "over")
case("undo(nothing to undo)", "fresh", lambda g: g.undo(), IllegalMoveError, "undo")
case("forfeit(game over)", "over", lambda g: g.forfeit(), IllegalMoveError, "over")
for method in ("legal_moves", "legal_move_count", "pieces", "history", "to_text", "clone", "undo", "forfeit"):
    case(f"{method}(extra argument)", "game", lambda g, m=method: getattr(g, m)(1), TypeError, "argument")

# -- frames, dtypes, layouts ---------------------------------------------------------------------

for label, value in {"unknown": "up", "empty": "", "emoji": "\U0001f600", "1MB": MB, "Mover": "MOVER"}.items():
    case(f"legal_actions(frame={label})", "game", lambda g, v=value: g.legal_actions(v), VALUE, "frame")
    case(f"legal_action_mask(frame={label})", "game", lambda g, v=value: g.legal_action_mask(v), VALUE, "frame")
    case(f"observation(frame={label})", "game", lambda g, v=value: g.observation(frame=v), VALUE, "frame")
    case(
        f"encode_observations(frame={label})",
        "game",
        lambda g, v=value: taikyoku.encode_observations([g], frame=v),
        VALUE,
        "frame",
    )
for label, value in {"None": None, "int": 0}.items():
    case(f"legal_actions(frame={label})", "game", lambda g, v=value: g.legal_actions(v), TYPE, "frame")
    case(f"observation(frame={label})", "game", lambda g, v=value: g.observation(frame=v), TYPE, "frame")
for label, value in {
    "int64": "int64",
    "unknown": "x",
    "int": 5,
    "np.int8": np.int8,
    "float64": np.float64,
    "dict": {},
}.items():
    case(f"observation(dtype={label})", "game", lambda g, v=value: g.observation(dtype=v), VALUE, "dtype")
    case(
        f"encode_observations(dtype={label})",
        "game",
        lambda g, v=value: taikyoku.encode_observations([g], dtype=v),
        VALUE,
        "dtype",
    )
case("observation(compact, uint8)", "game", lambda g: g.observation(dtype="uint8", compact=True), VALUE, "uint16")
for label, value in {"'yes'": "yes", "1": 1, "None": None}.items():
    case(f"observation(compact={label})", "game", lambda g, v=value: g.observation(compact=v), TYPE, "compact")
    case(f"plane_count(compact={label})", "game", lambda g, v=value: g.plane_count(compact=v), TYPE, "compact")
    case(f"plane_names(compact={label})", "none", lambda _, v=value: taikyoku.plane_names(compact=v), TYPE, "compact")
case("encode_observations([])", "none", lambda _: taikyoku.encode_observations([]), VALUE, "at least one")
for label, value in {"None": None, "int": 1, "str": "abc", "[1]": [1], "[None]": [None]}.items():
    case(f"encode_observations({label})", "none", lambda _, v=value: taikyoku.encode_observations(v), TYPE, "games")
case("action_templates(1)", "none", lambda _: taikyoku.action_templates(1), TypeError, "argument")
case("variants(1)", "none", lambda _: taikyoku.variants(1), TypeError, "argument")

# -- random_game and mcts_action -----------------------------------------------------------------

SEEDS = {
    "-1": (-1, VALUE),
    "np.int64(-1)": (np.int64(-1), VALUE),
    "1.5": (1.5, TYPE),
    "'1'": ("1", TYPE),
    "None": (None, TYPE),
    "np.float64(1)": (np.float64(1), TYPE),
    "2**64": (2**64, VALUE),
    "2**70": (2**70, VALUE),
    "True": (True, TYPE),
}
for label, (value, expected) in SEEDS.items():
    case(
        f"random_game(seed={label})", "none", lambda _, v=value: taikyoku.random_game(v, max_plies=1), expected, "seed"
    )
    if label not in ("None",):
        case(f"mcts_action(seed={label})", "game", lambda g, v=value: mcts_action(g, 2, seed=v), expected, "seed")
for label, (value, expected) in {
    "0": (0, VALUE),
    "-1": (-1, VALUE),
    "2**32": (2**32, VALUE),
    "2**70": (2**70, VALUE),
    "1.5": (1.5, TYPE),
    "True": (True, TYPE),
}.items():
    case(f"mcts_action(simulations={label})", "game", lambda g, v=value: mcts_action(g, v), expected, "simulations")
case("mcts_action(None)", "none", lambda _: mcts_action(None), TYPE, "game")
case("mcts_action(game over)", "over", lambda g: mcts_action(g, 2), IllegalMoveError, "over")

# -- the Gymnasium env ------------------------------------------------------------------------------

ENV_KWARGS = {
    "variant=chess": ({"variant": "chess"}, VALUE, ("variant",)),
    "variant=None": ({"variant": None}, TYPE, ("variant",)),
    "opponent=grandmaster": ({"opponent": "grandmaster"}, VALUE, ("opponent",)),
    "opponent=5": ({"opponent": 5}, VALUE, ("opponent",)),
    "agent_color=red": ({"agent_color": "red"}, VALUE, ("agent_color",)),
    "illegal_action=shrug": ({"illegal_action": "shrug"}, VALUE, ("illegal_action",)),
    "illegal_action=None": ({"illegal_action": None}, VALUE, ("illegal_action",)),
    "render_mode=teapot": ({"render_mode": "teapot"}, VALUE, ("render_mode",)),
    "frame=up": ({"frame": "up"}, VALUE, ("frame",)),
    "compact='yes'": ({"compact": "yes"}, TYPE, ("compact",)),
    "compact=1": ({"compact": 1}, TYPE, ("compact",)),
    "dtype=int64": ({"dtype": "int64"}, VALUE, ("dtype",)),
    "dtype=x": ({"dtype": "x"}, VALUE, ("dtype",)),
    "options='abc'": ({"options": "wooden-dove-range-3"}, VALUE, ("options",)),
    "options=[unknown]": ({"options": ["nope"]}, VALUE, ("nope",)),
    "options=[1]": ({"options": [1]}, TYPE, ("options",)),
    "start=5": ({"start": 5}, TYPE, ("start",)),
    "foo=1": ({"foo": 1}, TypeError, ("foo",)),
}
for label, value in {
    "0": 0,
    "-1": -1,
    "1.5": 1.5,
    "2**32": 2**32,
    "2**70": 2**70,
    "True": True,
    "'5'": "5",
    "np.float64(5)": np.float64(5),
}.items():
    expected = TYPE if isinstance(value, (float, str, bool)) else VALUE
    ENV_KWARGS[f"max_plies={label}"] = ({"max_plies": value}, expected, ("max_plies",))
    ENV_KWARGS[f"mcts_simulations={label}"] = (
        {"opponent": "mcts", "mcts_simulations": value},
        expected,
        ("mcts_simulations",),
    )
for label, (kwargs, expected, fragments) in ENV_KWARGS.items():
    case(f"TaikyokuEnv({label})", "none", lambda _, k=kwargs: taikyoku.TaikyokuEnv(**k), expected, *fragments)
    case(
        f"gymnasium.make({label})",
        "none",
        lambda _, k=kwargs: gymnasium.make("taikyoku/Taikyoku-v0", **k),
        expected,
        *fragments,
    )

STEP_ACTIONS = {
    "legal+0.7": (lambda env: env.unwrapped._legal[0] + 0.7, ("action", "float")),
    "np.float64(legal)+0.5": (lambda env: np.float64(env.unwrapped._legal[0]) + 0.5, ("action",)),
    "np.float64(legal)": (lambda env: np.float64(env.unwrapped._legal[0]), ("action",)),
    "float(legal)": (lambda env: float(env.unwrapped._legal[0]), ("action",)),
    "np.float32": (lambda env: np.float32(3), ("action",)),
    "numeric-str": (lambda env: str(env.unwrapped._legal[0]), ("action",)),
    "notation": (lambda env: env.unwrapped.game.legal_moves()[0].notation, ("action",)),
    "empty-str": (lambda env: "", ("action",)),
    "None": (lambda env: None, ("action",)),
    "True": (lambda env: True, ("action", "bool")),
    "np.bool_": (lambda env: np.bool_(True), ("action", "bool")),
    "complex": (lambda env: complex(env.unwrapped._legal[0]), ("action",)),
    "list": (lambda env: [env.unwrapped._legal[0]], ("action",)),
    "array(1)": (lambda env: env.unwrapped._legal[:1].copy(), ("action",)),
    "2**70": (lambda env: 2**70, (str(2**70), "action space")),
    "np.uint64(2**64-1)": (lambda env: np.uint64(2**64 - 1), (str(2**64 - 1), "action space")),
    "-1": (lambda env: -1, ("-1", "action space")),
    "NUM_ACTIONS": (lambda env: NUM_ACTIONS, (str(NUM_ACTIONS),)),
    "illegal": (lambda env: 0, ("not a legal move",)),
}
for label, (make, fragments) in STEP_ACTIONS.items():
    case(f"env.step({label})", "env", lambda env, m=make: env.step(m(env)), IllegalMoveError, *fragments)
    case(
        f"env.step({label}), absolute frame",
        "env_absolute",
        lambda env, m=make: env.step(m(env)),
        IllegalMoveError,
        *fragments,
    )
    case(f"aec.step({label})", "aec", lambda env, m=make: env.step(m(env)), IllegalMoveError, *fragments)
    if label not in ("illegal", "-1", "NUM_ACTIONS", "2**70", "np.uint64(2**64-1)"):
        # Not an action at all: refused even where an illegal action loses the game.
        case(
            f"env.step({label}), illegal_action=lose",
            "env_lose",
            lambda env, m=make: env.step(m(env)),
            IllegalMoveError,
            *fragments,
        )
case("env.step(game over)", "env_over", lambda env: env.step(env.action_space.sample()), IllegalMoveError, "reset")
for label, (value, expected) in {
    "-1": (-1, VALUE),
    "1.5": (1.5, TYPE),
    "'1'": ("1", TYPE),
    "True": (True, TYPE),
    "np.float64(1)": (np.float64(1), TYPE),
}.items():
    case(f"env.reset(seed={label})", "env", lambda env, v=value: env.reset(seed=v), expected, "seed")
    case(f"aec.reset(seed={label})", "aec", lambda env, v=value: env.reset(seed=v), expected, "seed")
    case(f"vec.reset(seed={label})", "vec", lambda env, v=value: env.reset(seed=v), expected, "seed")
case("vec.reset(seed=2**64)", "vec", lambda env: env.reset(seed=2**64), VALUE, "seed")
case(
    "aec.reset(start=garbage)",
    "aec",
    lambda env: env.reset(options={"start": "garbage"}),
    PositionTextError,
    "position text",
)
case("aec.reset(start=5)", "aec", lambda env: env.reset(options={"start": 5}), TYPE, "start")
case(
    "env info['legal_actions'][0] = 7",
    "env",
    lambda env: env.unwrapped._info()["legal_actions"].__setitem__(0, 7),
    ValueError,
    "read-only",
)
case(
    "aec info['legal_actions'][0] = 7",
    "aec",
    lambda env: env.unwrapped.infos[env.agent_selection]["legal_actions"].__setitem__(0, 7),
    ValueError,
    "read-only",
)
case("env.legal_action_mask(extra argument)", "env", lambda env: env.legal_action_mask(1), TypeError, "argument")

# -- the vector env ------------------------------------------------------------------------------

VEC_KWARGS = {
    "num_envs=0": ({"num_envs": 0}, VALUE, ("num_envs",)),
    "num_envs=-1": ({"num_envs": -1}, VALUE, ("num_envs",)),
    "num_envs=1.5": ({"num_envs": 1.5}, TYPE, ("num_envs",)),
    "num_envs=2.0": ({"num_envs": 2.0}, TYPE, ("num_envs",)),
    "num_envs=True": ({"num_envs": True}, TYPE, ("num_envs",)),
    "num_envs='2'": ({"num_envs": "2"}, TYPE, ("num_envs",)),
    "num_envs=None": ({"num_envs": None}, TYPE, ("num_envs",)),
    "num_envs=2**70": ({"num_envs": 2**70}, VALUE, ("num_envs",)),
    "num_envs=2**20+1": ({"num_envs": 2**20 + 1}, VALUE, ("num_envs",)),
    "num_envs=2**20": ({"num_envs": 2**20}, (VALUE, MemoryError), ("GiB",)),
    "variant=chess": ({"variant": "chess"}, VALUE, ("variant",)),
    "seed=-1": ({"seed": -1}, VALUE, ("seed",)),
    "seed=2**64": ({"seed": 2**64}, VALUE, ("seed",)),
    "seed=1.5": ({"seed": 1.5}, TYPE, ("seed",)),
    "seed=True": ({"seed": True}, TYPE, ("seed",)),
    "threads=0": ({"threads": 0}, VALUE, ("threads",)),
    "threads=257": ({"threads": 257}, VALUE, ("threads",)),
    "threads=2**70": ({"threads": 2**70}, VALUE, ("threads",)),
    "threads=1.5": ({"threads": 1.5}, TYPE, ("threads",)),
    "max_plies=0": ({"max_plies": 0}, VALUE, ("max_plies",)),
    "max_plies=2**32": ({"max_plies": 2**32}, VALUE, ("max_plies",)),
    "max_plies=2**70": ({"max_plies": 2**70}, VALUE, ("max_plies",)),
    "max_plies=1.5": ({"max_plies": 1.5}, TYPE, ("max_plies",)),
    "illegal_action=x": ({"illegal_action": "x"}, VALUE, ("illegal_action",)),
    "frame=up": ({"frame": "up"}, VALUE, ("frame",)),
    "compact='yes'": ({"compact": "yes"}, TYPE, ("compact",)),
    "copy='no'": ({"copy": "no"}, TYPE, ("copy",)),
    "dtype=int64": ({"dtype": "int64"}, VALUE, ("dtype",)),
    "dtype=x": ({"dtype": "x"}, VALUE, ("dtype",)),
    "options='abc'": ({"options": "abc"}, VALUE, ("options",)),
    "options=[unknown]": ({"options": ["nope"]}, VALUE, ("nope",)),
    "render_mode=human": ({"render_mode": "human"}, VALUE, ("render_mode",)),
}
for label, (kwargs, expected, fragments) in VEC_KWARGS.items():
    kwargs = {"num_envs": 2, **kwargs}
    case(f"VectorEnv({label})", "none", lambda _, k=kwargs: taikyoku.VectorEnv(**k), expected, *fragments)

VEC_ACTIONS = {
    "floats": (lambda env: np.array([1.0, 2.0]), VALUE, ("integer",)),
    "short": (lambda env: np.array([1]), VALUE, ("shape",)),
    "long": (lambda env: np.array([1, 2, 3]), VALUE, ("shape",)),
    "2-d": (lambda env: np.array([[1, 2]]), VALUE, ("shape",)),
    "None": (lambda env: None, VALUE, ("integer",)),
    "strings": (lambda env: ["1", "2"], VALUE, ("integer",)),
    "bools": (lambda env: np.array([True, True]), VALUE, ("integer",)),
    "scalar": (lambda env: 5, VALUE, ("shape",)),
    "object 2**70": (lambda env: [2**70, 1], VALUE, ("integer",)),
    "-1": (lambda env: np.array([-1, -1]), IllegalMoveError, ("env 0", "-1")),
    "uint64 max": (lambda env: np.array([2**64 - 1, 0], dtype=np.uint64), IllegalMoveError, ("env 0", str(2**64 - 1))),
    "NUM_ACTIONS": (lambda env: np.array([0, NUM_ACTIONS]), IllegalMoveError, ("env 1",)),
    "illegal": (lambda env: np.array([env.legal_actions()[0][0], 0]), IllegalMoveError, ("env 1", "not legal")),
}
for label, (make, expected, fragments) in VEC_ACTIONS.items():
    case(f"vec.step({label})", "vec", lambda env, m=make: env.step(m(env)), expected, *fragments)
for label, (value, expected) in {
    "-1": (-1, VALUE),
    "2": (2, VALUE),
    "2**70": (2**70, VALUE),
    "1.0": (1.0, TYPE),
    "True": (True, TYPE),
    "'0'": ("0", TYPE),
    "None": (None, TYPE),
}.items():
    case(f"vec.game({label})", "vec", lambda env, v=value: env.game(v), expected, "index")

# -- the PettingZoo env --------------------------------------------------------------------------

AEC_KWARGS = {
    "variant=chess": ({"variant": "chess"}, VALUE, ("variant",)),
    "options='abc'": ({"options": "abc"}, VALUE, ("options",)),
    "options=[unknown]": ({"options": ["nope"]}, VALUE, ("nope",)),
    "illegal_action=x": ({"illegal_action": "x"}, VALUE, ("illegal_action",)),
    "render_mode=teapot": ({"render_mode": "teapot"}, VALUE, ("render_mode",)),
    "frame=white": ({"frame": "white"}, VALUE, ("frame",)),
    "compact='no'": ({"compact": "no"}, TYPE, ("compact",)),
    "start=garbage": ({"start": "garbage"}, PositionTextError, ("position text",)),
    "start=5": ({"start": 5}, TYPE, ("start",)),
    "foo=1": ({"foo": 1}, TypeError, ("foo",)),
}
for label, value in {"0": 0, "-1": -1, "1.5": 1.5, "2**70": 2**70, "True": True, "'3'": "3"}.items():
    AEC_KWARGS[f"max_plies={label}"] = (
        {"max_plies": value},
        TYPE if isinstance(value, (float, str, bool)) else VALUE,
        ("max_plies",),
    )
for label, (kwargs, expected, fragments) in AEC_KWARGS.items():
    case(f"pettingzoo_env({label})", "none", lambda _, k=kwargs: taikyoku.pettingzoo_env(**k), expected, *fragments)

# -- self-play -------------------------------------------------------------------------------------

MCTS = {"players": "mcts", "simulations": 2}


def tiny(**kwargs):
    return {"games": 1, "max_plies": 2, **kwargs}


SELFPLAY = {
    "games=0": (tiny(games=0), VALUE, "games"),
    "games=-1": (tiny(games=-1), VALUE, "games"),
    "games=1.5": (tiny(games=1.5), TYPE, "games"),
    "games=True": (tiny(games=True), TYPE, "games"),
    "games='1'": (tiny(games="1"), TYPE, "games"),
    "games=np.float64(1)": (tiny(games=np.float64(1)), TYPE, "games"),
    "games=2**63": (tiny(games=2**63), VALUE, "games"),
    "games=2**70": (tiny(games=2**70), VALUE, "games"),
    "seed=-1": (tiny(seed=-1), VALUE, "seed"),
    "seed=2**64": (tiny(seed=2**64), VALUE, "seed"),
    "seed=1.5": (tiny(seed=1.5), TYPE, "seed"),
    "seed=None": (tiny(seed=None), TYPE, "seed"),
    "threads=0": (tiny(threads=0), VALUE, "threads"),
    "threads=257": (tiny(threads=257), VALUE, "threads"),
    "threads=2**70": (tiny(threads=2**70), VALUE, "threads"),
    "threads=1.5": (tiny(threads=1.5), TYPE, "threads"),
    "max_plies=0": (tiny(max_plies=0), VALUE, "max_plies"),
    "max_plies=-1": (tiny(max_plies=-1), VALUE, "max_plies"),
    "max_plies=2**32": (tiny(max_plies=2**32), VALUE, "max_plies"),
    "max_plies=1.5": (tiny(max_plies=1.5), TYPE, "max_plies"),
    "games_per_shard=1.5": (tiny(games_per_shard=1.5), TYPE, "games_per_shard"),
    "games_per_shard=0": (tiny(games_per_shard=0), VALUE, "games_per_shard"),
    "games_per_shard=-1": (tiny(games_per_shard=-1), VALUE, "games_per_shard"),
    "games_per_shard=2**70": (tiny(games_per_shard=2**70), VALUE, "games_per_shard"),
    "games_per_shard=True": (tiny(games_per_shard=True), TYPE, "games_per_shard"),
    "simulations=0": (tiny(**{**MCTS, "simulations": 0}), VALUE, "simulations"),
    "simulations=2**32": (tiny(**{**MCTS, "simulations": 2**32}), VALUE, "simulations"),
    "simulations=1.5": (tiny(**{**MCTS, "simulations": 1.5}), TYPE, "simulations"),
    "format=csv": (tiny(format="csv"), VALUE, "format"),
    "format=None": (tiny(format=None), TYPE, "format"),
    "players=alphazero": (tiny(players="alphazero"), VALUE, "players"),
    "players=None": (tiny(players=None), TYPE, "players"),
    "variant=chess": (tiny(variant="chess"), VALUE, "variant"),
    "variant=None": (tiny(variant=None), TYPE, "variant"),
    "options='abc'": (tiny(options="abc"), VALUE, "options"),
    "options=[unknown]": (tiny(options=["nope"]), VALUE, "nope"),
    "progress='yes'": (tiny(progress="yes"), TYPE, "progress"),
    "bogus=1": (tiny(bogus=1), TYPE, "bogus"),
    "temperature with random players": (tiny(temperature=0.5), VALUE, "mcts"),
    "evaluator=3": (tiny(**MCTS, evaluator=3), TYPE, "evaluator"),
    "evaluator with random players": (tiny(evaluator=lambda obs, legal: None), VALUE, "mcts"),
    "leaves_per_game=0": (tiny(**MCTS, evaluator=lambda obs, legal: None, leaves_per_game=0), VALUE, "leaves_per_game"),
    "leaves_per_game=2**32": (
        tiny(**MCTS, evaluator=lambda obs, legal: None, leaves_per_game=2**32),
        VALUE,
        "leaves_per_game",
    ),
    "concurrent_games=0": (
        tiny(**MCTS, evaluator=lambda obs, legal: None, concurrent_games=0),
        VALUE,
        "concurrent_games",
    ),
    "concurrent_games=-1": (
        tiny(**MCTS, evaluator=lambda obs, legal: None, concurrent_games=-1),
        VALUE,
        "concurrent_games",
    ),
    "priors=x": (tiny(**MCTS, priors="x"), VALUE, "priors"),
    "priors=1": (tiny(**MCTS, priors=1), TYPE, "priors"),
    "opponent_moves=root": (tiny(**MCTS, opponent_moves="root"), VALUE, "opponent_moves"),
    "opponent_moves=0": (tiny(**MCTS, opponent_moves=0), TYPE, "opponent_moves"),
}
for knob in ("temperature", "c_puct", "dirichlet_alpha", "dirichlet_fraction"):
    for label, value in {
        "nan": float("nan"),
        "inf": float("inf"),
        "-inf": float("-inf"),
        "-1": -1.0,
        "1e39": 1e39,
        "'1'": "1",
        "True": True,
        "list": [1.0],
    }.items():
        SELFPLAY[f"{knob}={label}"] = (tiny(**MCTS, **{knob: value}), TYPE, knob)
SELFPLAY["c_puct=0"] = (tiny(**MCTS, c_puct=0.0), VALUE, "c_puct")
SELFPLAY["dirichlet_alpha=0"] = (tiny(**MCTS, dirichlet_alpha=0.0), VALUE, "dirichlet_alpha")
SELFPLAY["dirichlet_fraction=1.5"] = (tiny(**MCTS, dirichlet_fraction=1.5), VALUE, "dirichlet_fraction")
for knob in ("temperature_plies", "rollout_plies"):
    for label, value in {"-1": -1, "2**32": 2**32, "2**70": 2**70, "1.5": 1.5, "True": True}.items():
        SELFPLAY[f"{knob}={label}"] = (tiny(**MCTS, **{knob: value}), TYPE, knob)
for label, (kwargs, expected, fragment) in SELFPLAY.items():
    case(f"selfplay({label})", "dir", lambda d, k=kwargs: taikyoku.selfplay(d / "ds", **k), expected, fragment)

case("selfplay(out='')", "cwd", lambda d: taikyoku.selfplay("", **tiny()), VALUE, "out")
case("selfplay(out='.') not empty", "cwd", lambda d: taikyoku.selfplay(".", **tiny()), VALUE, "not empty")
case("selfplay(out=None)", "dir", lambda d: taikyoku.selfplay(None, **tiny()), TYPE, "out")
case("selfplay(out=5)", "dir", lambda d: taikyoku.selfplay(5, **tiny()), TYPE, "out")
case("selfplay(out=NUL)", "dir", lambda d: taikyoku.selfplay(str(d / "a\x00b"), **tiny()), FILES, "NUL")
case("selfplay(out=a file)", "files:file", lambda d: taikyoku.selfplay(d / "f", **tiny()), VALUE, "not a directory")
case("selfplay(out=foreign dir)", "files:foreign", lambda d: taikyoku.selfplay(d, **tiny()), VALUE, "not empty")
case(
    "selfplay(out=other settings)",
    "files:dataset",
    lambda d: taikyoku.selfplay(d / "ds", **tiny(games=2)),
    VALUE,
    "other settings",
)


def failing_evaluator(kind):
    def evaluator(observations, legal):
        actions, offsets = legal  # CSR: one flat array and offsets (the default)
        legal = [actions[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)]
        if kind == "raises":
            raise RuntimeError("GPU on fire")
        if kind == "None":
            return None
        if kind == "short-priors":
            return [np.ones(1) for _ in legal], np.zeros(len(legal))
        if kind == "short-values":
            return [np.ones(len(a)) for a in legal], np.zeros(len(legal) + 1)
        if kind == "NaN":
            return [np.full(len(a), np.nan) for a in legal], np.zeros(len(legal))
        if kind == "inf-values":
            return [np.ones(len(a)) for a in legal], np.full(len(legal), np.inf)
        raise AssertionError(kind)

    return evaluator


for kind, (expected, fragment) in {
    "raises": (RuntimeError, "GPU on fire"),
    "None": (VALUE, "evaluator"),
    "short-priors": (VALUE, "priors"),
    "short-values": (VALUE, "values"),
    "NaN": (VALUE, "NaN"),
    "inf-values": (VALUE, "infinite"),
}.items():
    # Into the empty directory itself, and into a new one below it: both must be left as they were.
    case(
        f"selfplay(evaluator {kind}, empty dir)",
        "dir",
        lambda d, k=kind: taikyoku.selfplay(d, **tiny(**MCTS), evaluator=failing_evaluator(k)),
        expected,
        fragment,
    )
    case(
        f"selfplay(evaluator {kind}, new dir)",
        "dir",
        lambda d, k=kind: taikyoku.selfplay(d / "a" / "b", **tiny(**MCTS), evaluator=failing_evaluator(k)),
        expected,
        fragment,
    )

# -- datasets -------------------------------------------------------------------------------------


case("datasets.open(missing)", "dir", lambda d: tds.open(d / "nope"), FILES, "does not exist")
case("datasets.open(file)", "files:file", lambda d: tds.open(d / "f"), FILES, "not a dataset directory")
case("datasets.open(no manifest)", "dir", lambda d: tds.open(d), FILES, "manifest.json")
case("datasets.open(foreign dir)", "files:foreign", lambda d: tds.open(d), FILES, "manifest.json")
case("datasets.open(corrupt JSON)", "files:corrupt", lambda d: tds.open(d / "c"), VALUE, "corrupt")
case("datasets.open(binary)", "files:binary", lambda d: tds.open(d / "c"), VALUE, "corrupt")
case("datasets.open(JSON list)", "files:list", lambda d: tds.open(d / "c"), VALUE, "JSON object")
case("datasets.open(manifest is a dir)", "files:manifest-dir", lambda d: tds.open(d / "c"), FILES, "manifest.json")
case("datasets.open(None)", "dir", lambda d: tds.open(None), TYPE, "NoneType")
case("datasets.open(5)", "dir", lambda d: tds.open(5), TYPE, "int")
for label, (value, expected, fragments) in {
    "-1": (-1, VALUE, ("-1",)),
    "2**70": (2**70, VALUE, (str(2**70),)),
    "1.5": (1.5, TYPE, ("game",)),
    "True": (True, TYPE, ("game",)),
    "'0'": ("0", TYPE, ("game",)),
    "None": (None, TYPE, ("game",)),
}.items():
    case(f"Dataset.game({label})", "dataset", lambda ds, v=value: ds.game(v), expected, *fragments)
    case(f"Dataset.replay({label})", "dataset", lambda ds, v=value: ds.replay(v), expected, *fragments)
case("Dataset.verify([1.5])", "dataset", lambda ds: ds.verify([1.5]), TYPE, "1.5")
case("Dataset.read_shard(5)", "dataset", lambda ds: ds.read_shard(5), VALUE, "shard")
case("Dataset.read_shard(-1)", "dataset", lambda ds: ds.read_shard(-1), VALUE, "shard")
case("Dataset.read_shard(table=x)", "dataset", lambda ds: ds.read_shard(0, "x"), VALUE, "table")
case("Dataset.observations(rows=[99])", "dataset", lambda ds: ds.observations([99]), VALUE, "99")
case("Dataset.observations(frame=x)", "dataset", lambda ds: ds.observations(frame="x"), VALUE, "frame")
case("Dataset.observations(dtype=int64)", "dataset", lambda ds: ds.observations(dtype="int64"), VALUE, "dtype")
for label, (value, expected) in {
    "0": (0, VALUE),
    "-1": (-1, VALUE),
    "1.5": (1.5, TYPE),
    "True": (True, TYPE),
    "'4'": ("4", TYPE),
}.items():
    case(
        f"Dataset.batches(batch_size={label})",
        "dataset",
        lambda ds, v=value: next(iter(ds.batches(batch_size=v))),
        expected,
        "batch_size",
    )

# -- rendering ------------------------------------------------------------------------------------

for label, value in {"None": None, "int": 3, "str": "a game"}.items():
    case(f"render.ansi({label})", "none", lambda _, v=value: render.ansi(v), TypeError, "Game")
    case(f"render.svg({label})", "none", lambda _, v=value: render.svg(v), TypeError, "Game")
for label, value in {
    "0": 0,
    "-1": -1,
    "nan": float("nan"),
    "inf": float("inf"),
    "1e300": 1e300,
    "'600'": "600",
    "True": True,
}.items():
    case(f"render.svg(size={label})", "game", lambda g, v=value: render.svg(g, size=v), TYPE, "size")
for label, value in {"romaji": "romaji", "None": None, "empty": ""}.items():
    case(f"render.svg(labels={label})", "game", lambda g, v=value: render.svg(g, labels=v), VALUE, "labels")
for flag in ("last_move", "coordinates"):
    case(f"render.svg({flag}='no')", "game", lambda g, f=flag: render.svg(g, **{f: "no"}), TYPE, flag)
for flag in ("last_move", "color"):
    case(f"render.ansi({flag}='no')", "game", lambda g, f=flag: render.ansi(g, **{f: "no"}), TYPE, flag)


# -- issue 29: the evaluator's contract, MCTS settings' ranges, the writer lock, game texts --------


def contract_breaker(kind):
    """An evaluator whose answers have the right shape but break one rule of the contract."""

    def evaluator(observations, legal):
        actions, offsets = legal
        priors, values = np.ones(len(actions), np.float32), np.zeros(len(offsets) - 1, np.float32)
        if kind == "negative prior":
            priors[-1] = -0.5
        elif kind == "zero priors":
            priors[:] = 0.0
        elif kind == "priors summing past float32":
            priors[:] = 3e38
        elif kind == "value 7.0":
            values[-1] = 7.0
        elif kind == "value -1.5":
            values[0] = -1.5
        elif kind == "NaN value":
            values[0] = np.nan
        elif kind == "complex priors":
            return priors.astype(np.complex64), values
        elif kind == "complex values":
            return priors, values + 1j
        elif kind == "string values":
            return priors, np.array(["0.5"] * len(values))
        elif kind == "object priors":
            return np.array([object()] * len(priors), dtype=object), values
        return priors, values

    return evaluator


CONTRACT = {
    "negative prior": ("non-negative", "-0.5"),
    "zero priors": ("positive, finite float32 sum", "all zero"),
    "priors summing past float32": ("float32 sum", "infinity"),
    "value 7.0": ("[-1, 1]", "7.0"),
    "value -1.5": ("[-1, 1]", "-1.5"),
    "NaN value": ("[-1, 1]", "nan"),
    "complex priors": ("real numbers", "complex64"),
    "complex values": ("real numbers", "complex"),
    "string values": ("real numbers",),
    "object priors": ("real numbers", "object"),
}
for kind, fragments in CONTRACT.items():
    case(
        f"selfplay(evaluator {kind})",
        "dir",
        lambda d, k=kind: taikyoku.selfplay(d / "ds", **tiny(**MCTS), evaluator=contract_breaker(k)),
        VALUE,
        "contract",
        *fragments,
    )
    case(
        f"mcts_action(evaluator {kind})",
        "game",
        lambda g, k=kind: mcts_action(g, 4, evaluator=contract_breaker(k)),
        VALUE,
        "contract",
        *fragments,
    )

# The engine's ranges (taikyoku._core.MCTS_LIMITS), refused up front, naming the value given.
for knob, value, shown in [
    ("dirichlet_alpha", 1001.0, "1001.0"),
    ("c_puct", 3e38, "3e+38"),
    ("c_puct", 1e7, "10000000.0"),
    ("temperature", 2e6, "2000000.0"),
    ("dirichlet_alpha", 5e-324, "5e-324"),
]:
    case(
        f"selfplay({knob}={shown})",
        "dir",
        lambda d, k=knob, v=value: taikyoku.selfplay(d / "ds", **tiny(**MCTS, **{k: v})),
        VALUE,
        knob,
        shown,
    )
for knob, value, shown in [("gumbel_scale", 2e6, "2000000.0"), ("gumbel_considered", 2**20 + 1, "1048577")]:
    case(
        f"selfplay(root=gumbel, {knob}={shown})",
        "dir",
        lambda d, k=knob, v=value: taikyoku.selfplay(d / "ds", **tiny(**MCTS, root="gumbel", **{k: v})),
        VALUE,
        knob,
        shown,
    )
    case(
        f"mcts_action(root=gumbel, {knob}={shown})",
        "game",
        lambda g, k=knob, v=value: mcts_action(g, 4, root="gumbel", **{k: v}),
        VALUE,
        knob,
        shown,
    )
case("mcts_action(c_puct=3e+38)", "game", lambda g: mcts_action(g, 4, c_puct=3e38), VALUE, "c_puct", "3e+38")
case(
    "mcts_action(opponent_moves=root)",
    "game",
    lambda g: mcts_action(g, 4, opponent_moves="root"),
    VALUE,
    "opponent_moves",
)

# A directory another process is writing: refused at once, naming the writer; nothing touched.
case(
    "selfplay(out=a directory another run writes)",
    "locked",
    lambda d: taikyoku.selfplay(d, **tiny()),
    BlockingIOError,
    "being written by another run",
    "process",
    "--wait",
)
case(
    "selfplay(out=a dataset another run resumes)",
    "locked:dataset",
    lambda d: taikyoku.selfplay(d, **tiny()),
    BlockingIOError,
    "being written by another run",
)
case("selfplay(wait='yes')", "dir", lambda d: taikyoku.selfplay(d / "ds", **tiny(), wait="yes"), TYPE, "wait")

# Game texts with moves: each move must be legal where it stands; the message names it.
for label, tail, fragments in [
    ("unknown move", " moves Q-99a", ("move 1", "Q-99a")),
    ("illegal second move", " moves P-12y P-12y", ("move 2",)),
    ("garbage", " moves ???", ("move 1",)),
    ("1MB move", " moves " + MB[:100_000], ("move 1",)),
]:
    case(f"Game.from_text({label})", "none", lambda _, t=tail: Game.from_text(START + t), PositionTextError, *fragments)
    case(
        f"VectorEnv(start={label})",
        "none",
        lambda _, t=tail: taikyoku.VectorEnv(1, start=START + t),
        PositionTextError,
        *fragments,
    )


def _won_by_capture() -> str:
    """The text of a Tenjiku game won by capturing the last royal (it ends with that capture)."""
    for seed in range(100):
        g = taikyoku.random_game(seed, 3000, variant="tenjiku")
        if g.termination == "royal_capture":
            return g.to_text()
    raise AssertionError("no random Tenjiku game ended by royal capture")


WON = _won_by_capture()
case(
    "Game.from_text(moves after the end)",
    "none",
    lambda _: Game.from_text(WON + " P-1a", variant="tenjiku"),
    PositionTextError,
    "move",
    "over",
)
case(
    "Game(options=[nope]) lists the options",
    "none",
    lambda _: Game(options=["nope"]),
    VALUE,
    "nope",
    "wooden-dove-range-3",
    "rule_options",
)
case(
    "Game(variant=daidai, options=[nope]) lists the options",
    "none",
    lambda _: Game("daidai", options=["nope"]),
    VALUE,
    "nope",
    "daidai",
)


@pytest.mark.parametrize("on, call, expected, fragments", CASES)
def test_bad_input(on, call, expected, fragments, tmp_path, monkeypatch):
    subject = make_subject(on, tmp_path, monkeypatch)
    before = subject.state()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gymnasium's checker warns about some bad arguments too
        error = raised_by(lambda: call(subject.value))
    check_error(error, expected, fragments)
    assert subject.state() == before, "the failed call changed the state"


def test_catalogue_size():
    # Every public callable is in the table; this guards against a refactor silently dropping it.
    assert len(CASES) >= 600
    names = " ".join(p.id for p in CASES)
    for callable_name in (
        "Game(",
        "Game.empty",
        "from_text",
        "place(",
        "remove(",
        "piece_at(",
        "moves_from(",
        "play(",
        "undo(",
        "royal_count",
        "in_check",
        "action_of",
        "move_of",
        "legal_actions(",
        "legal_action_mask",
        "observation(",
        "plane_count",
        "max_plies=",
        "forfeit(",
        "pieces(",
        "legal_moves(",
        "legal_move_count",
        "random_game",
        "piece_types",
        "rule_options",
        "plane_names",
        "encode_observations",
        "action_templates",
        "mcts_action",
        "TaikyokuEnv(",
        "gymnasium.make",
        "env.step",
        "env.reset",
        "VectorEnv(",
        "vec.step",
        "vec.reset",
        "vec.game",
        "pettingzoo_env(",
        "aec.step",
        "aec.reset",
        "selfplay(",
        "datasets.open",
        "Dataset.",
        "render.ansi",
        "render.svg",
    ):
        assert callable_name in names, callable_name


# ---------------------------------------------------------------------------------------------
# The reported defects, one regression test each (beyond their catalogue entries).


def test_remove_of_an_empty_square_changes_nothing():
    g = played_game(plies=40)
    before = game_state(g)
    assert g.piece_at("18r") is None
    assert g.remove("18r") is None
    assert game_state(g) == before
    g.undo()  # the history is still there
    assert g.ply == 39


def test_remove_of_a_piece_returns_it_and_edits():
    g = played_game()
    piece = g.remove("1a")
    assert piece is not None and piece.abbrev == "L" and g.piece_at("1a") is None


def test_exception_names():
    assert NotationError.__name__ == "NotationError"
    assert NotationError.__qualname__ == "NotationError"
    error = NotationError("malformed move notation: 'zz'")
    assert repr(error) == "NotationError(\"malformed move notation: 'zz'\")"
    assert str(error) == "malformed move notation: 'zz'"
    caught = raised_by(lambda: Game().play("zz"))
    assert type(caught).__name__ == "NotationError"


def test_exception_hierarchy():
    for cls in (
        IllegalMoveError,
        NotationError,
        taikyoku.AmbiguousMoveError,
        UnknownSquareError,
        UnknownPieceError,
        PositionTextError,
    ):
        assert issubclass(cls, TaikyokuError) and issubclass(cls, ValueError)
        assert cls.__module__ == "taikyoku"
        assert getattr(taikyoku, cls.__name__.rstrip("_")) is cls
    assert issubclass(taikyoku.AmbiguousMoveError, NotationError)


NUMPY_INTS = [np.int64, np.int32, np.int16, np.uint8, np.uint32, np.uint64]
ACTION_CASES = {"play", "move_of", "VectorEnv.step", "TaikyokuEnv.step", "pettingzoo step", "render.svg(size)"}


def _numpy_cases():
    def play(kind):
        g = Game()
        a = g.legal_actions()[0]
        return g.play(kind(a)).notation == g.history()[-1]

    def move_of(kind):
        g = Game()
        a = g.legal_actions()[0]
        return g.move_of(kind(a)) == g.move_of(int(a))

    yield "play", play
    yield "move_of", move_of
    yield "Game(max_plies)", lambda kind: Game(max_plies=kind(5)).max_plies == 5
    yield "max_plies setter", lambda kind: setattr(g := Game(), "max_plies", kind(7)) or g.max_plies == 7
    yield "random_game", lambda kind: taikyoku.random_game(kind(3), max_plies=kind(2)).ply == 2
    yield "piece_at pair", lambda kind: Game().piece_at((kind(1), kind(1))).abbrev == "L"
    yield "mcts_action", lambda kind: Game().move_of(mcts_action(Game(), kind(2), seed=kind(1))) is not None
    yield (
        "VectorEnv",
        lambda kind: taikyoku.VectorEnv(kind(2), seed=kind(1), threads=kind(1), max_plies=kind(5)).num_envs == 2,
    )
    yield "VectorEnv.game", lambda kind: taikyoku.VectorEnv(2, seed=0).game(kind(1)).ply == 0
    yield (
        "VectorEnv.step",
        lambda kind: (
            taikyoku.VectorEnv(1, seed=0).step(np.array([Game().legal_actions()[0]], dtype=kind))[0].shape[0] == 1
        ),
    )

    def env_step(kind):
        env = taikyoku.TaikyokuEnv()
        env.reset(seed=kind(1))
        return env.step(kind(env.unwrapped._legal[0]))[4]["ply"] == 1

    def aec_step(kind):
        env = taikyoku.pettingzoo_env()
        env.reset(seed=kind(1))
        env.step(kind(env.unwrapped._legal[0]))
        return env.unwrapped.game.ply == 1

    yield "TaikyokuEnv.step", env_step
    yield "TaikyokuEnv(max_plies)", lambda kind: taikyoku.TaikyokuEnv(max_plies=kind(4)).max_plies == 4
    yield "pettingzoo step", aec_step
    yield "render.svg(size)", lambda kind: render.svg(Game(), size=kind(300)).startswith("<svg")


@pytest.mark.parametrize("kind", NUMPY_INTS, ids=lambda k: k.__name__)
@pytest.mark.parametrize("name, check", [pytest.param(*c, id=c[0]) for c in _numpy_cases()])
def test_numpy_integers_are_integers(name, check, kind):
    if name in ACTION_CASES and np.iinfo(kind).max < max(NUM_ACTIONS, 300):
        pytest.skip(f"{kind.__name__} cannot hold the value")
    assert check(kind)


def test_selfplay_takes_numpy_integers(tmp_path):
    summary = taikyoku.selfplay(
        tmp_path / "ds",
        games=np.int64(2),
        max_plies=np.int32(2),
        seed=np.uint64(3),
        games_per_shard=np.int16(1),
        threads=np.int8(1),
    )
    assert summary["games"] == 2
    summary = taikyoku.selfplay(
        tmp_path / "m",
        games=1,
        max_plies=2,
        players="mcts",
        simulations=np.int64(2),
        temperature=np.float32(0.5),
        c_puct=np.float64(1.5),
        dirichlet_alpha=np.float32(0.3),
        dirichlet_fraction=np.float64(0.25),
        temperature_plies=np.int64(3),
        rollout_plies=np.uint8(0),
    )
    assert summary["games"] == 1


def test_selfplay_zero_temperature_and_noise_are_valid(tmp_path):
    # 0 is meaningful for these two: play the most visited move; no root noise.
    assert taikyoku.selfplay(tmp_path / "ds", **tiny(**MCTS), temperature=0.0, dirichlet_fraction=0.0)["games"] == 1


def test_selfplay_refuses_the_current_directory_as_empty_string(tmp_path, monkeypatch):
    (tmp_path / "thesis.tex").write_text("precious")
    monkeypatch.chdir(tmp_path)
    expect(lambda: taikyoku.selfplay("", games=1, max_plies=2), VALUE, "out")
    assert sorted(os.listdir(tmp_path)) == ["thesis.tex"]


@pytest.mark.parametrize("kind", ["raises", "None", "short-priors", "NaN"])
@pytest.mark.parametrize("where", ["empty", "new"])
def test_failing_evaluator_leaves_nothing(tmp_path, kind, where):
    out = tmp_path if where == "empty" else tmp_path / "new"
    with pytest.raises((RuntimeError, ValueError, TypeError)):  # the evaluator's own error, or the contract's
        taikyoku.selfplay(out, **tiny(**MCTS), evaluator=failing_evaluator(kind))
    assert list(tmp_path.iterdir()) == []
    # And the directory is usable as it was: a good run goes through.
    assert taikyoku.selfplay(out, **tiny())["games"] == 1


def test_failing_evaluator_keeps_complete_shards_of_an_earlier_run(tmp_path):
    calls = {"n": 0, "limit": None}

    def flaky(observations, legal):
        calls["n"] += 1
        if calls["limit"] is not None and calls["n"] > calls["limit"]:
            raise RuntimeError("GPU on fire")
        actions, offsets = legal
        return np.ones(len(actions)), np.zeros(len(offsets) - 1)

    settings = dict(
        max_plies=2, players="mcts", simulations=2, games_per_shard=1, concurrent_games=1, leaves_per_game=1
    )
    taikyoku.selfplay(tmp_path / "one", games=1, evaluator=flaky, **settings)
    calls.update(n=0, limit=calls["n"])  # enough for one game, one shard
    out = tmp_path / "ds"
    # Shard 0 completes, then the evaluator fails during shard 1: shard 0 is kept.
    with pytest.raises(RuntimeError):
        taikyoku.selfplay(out, games=4, evaluator=flaky, **settings)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["complete"] is False and len(manifest["shards"]) >= 1
    for shard in manifest["shards"]:
        assert (out / shard["games_file"]).is_file() and (out / shard["positions_file"]).is_file()


@pytest.mark.parametrize("value", [float("inf"), float("nan"), 0.0, -1.0, 1e39])
def test_dirichlet_alpha_never_hangs(tmp_path, value):
    expect(lambda: taikyoku.selfplay(tmp_path / "ds", **tiny(**MCTS), dirichlet_alpha=value), VALUE, "dirichlet_alpha")
    assert list(tmp_path.iterdir()) == []


def test_vector_env_too_big_for_memory_is_refused_with_the_figures(monkeypatch):
    from taikyoku import vector

    monkeypatch.setattr(vector, "_physical_memory", lambda: 16 * 2**30)
    expect(lambda: taikyoku.VectorEnv(100000), VALUE, "VectorEnv(100000)", "GiB", "compact=True")
    expect(lambda: taikyoku.VectorEnv(2**20), VALUE, "GiB")
    # A compact one of the same size fits, and is not refused by the check.
    vector._check_buffer_size(100000 // 8, "taikyoku", True, None, [])


def test_vector_env_core_huge_is_an_error_not_a_panic():
    expect(lambda: taikyoku._core.VectorEnvCore(2**20), (VALUE, MemoryError))


def test_env_legal_actions_cannot_be_shuffled_under_the_env():
    env = taikyoku.TaikyokuEnv()
    _, info = env.reset(seed=0)
    legal = info["legal_actions"]
    with pytest.raises(ValueError, match="read-only"):
        np.random.default_rng(0).shuffle(legal)
    with pytest.raises(ValueError, match="read-only"):
        legal[0] = 0
    first = int(legal[0])
    _, _, _, _, info = env.step(first)
    assert info["ply"] == 1 and not info["legal_actions"].flags.writeable
    # A copy is the caller's own to change.
    mine = info["legal_actions"].copy()
    mine[:] = 0
    assert env.step(int(info["legal_actions"][0]))[4]["ply"] == 2


def test_env_refuses_every_float_even_integral_ones():
    # As Gymnasium's Discrete.contains does for non-integers.
    env = taikyoku.TaikyokuEnv()
    _, info = env.reset(seed=0)
    action = info["legal_actions"][0]
    assert not env.action_space.contains(float(action))
    for bad in (float(action), np.float64(action), np.float32(action), action + 0.7, str(action)):
        expect(lambda b=bad: env.step(b), IllegalMoveError, "action")
    assert env.game.ply == 0
    assert env.step(action)[4]["ply"] == 1  # np.int64: the spaces' own type


# ---------------------------------------------------------------------------------------------
# Pickling and copies: bad payloads are errors, good ones keep everything.


class _Payload:
    """Pickles as ``(restore, args)``: an altered Game.__reduce__ tuple."""

    def __init__(self, restore, args):
        self.restore, self.args = restore, args

    def __reduce__(self):
        return self.restore, self.args


def _altered(index, value):
    g = played_game(plies=4)
    restore, args = g.__reduce__()
    args = list(args)
    if callable(value):
        value = value(args)
    if index is None:
        args = value
    else:
        args[index] = value
    return restore, tuple(args)


PAYLOADS = {
    # index 0 variant, 1 options, 2 start text, 3 moves (from, to, mid, sweep), 4 max_plies
    "variant unknown": (0, "chess", VALUE),
    "variant int": (0, 1, TYPE),
    "options unknown": (1, ["nope"], VALUE),
    "options str": (1, "abc", TYPE),
    "start garbage": (2, "garbage", VALUE),
    "start 1MB": (2, MB, VALUE),
    "start None": (2, None, TYPE),
    "moves str": (3, "abc", TYPE),
    "moves None": (3, None, TYPE),
    "move too short": (3, [(1, 2)], TYPE),
    "move square 65535": (3, [(65535, 0, 65535, False)], VALUE),
    "move to 65535": (3, lambda a: [(a[3][0][0], 65535, a[3][0][2], a[3][0][3])], VALUE),
    "move mid 2000": (3, lambda a: [(a[3][0][0], a[3][0][1], 2000, a[3][0][3])], VALUE),
    "move negative": (3, [(-1, 0, 0, False)], VALUE),
    "move 70000": (3, [(70000, 0, 0, False)], VALUE),
    "move illegal": (3, lambda a: [a[3][1]], VALUE),
    "moves out of order": (3, lambda a: list(reversed(a[3])), VALUE),
    "sweep str": (3, lambda a: [(*a[3][0][:3], "x")], TYPE),
    "max_plies -1": (4, -1, VALUE),
    "max_plies 2**70": (4, 2**70, VALUE),
    "max_plies str": (4, "x", TYPE),
    "too few": (None, lambda a: a[:3], TYPE),
    "too many": (None, lambda a: [*a, 1, 2, 3, 4], TYPE),
}


@pytest.mark.parametrize("index, value, expected", [pytest.param(*v, id=k) for k, v in PAYLOADS.items()])
def test_unpickling_an_altered_payload_is_an_error(index, value, expected):
    restore, args = _altered(index, value)
    data = pickle.dumps(_Payload(restore, args))
    check_error(
        raised_by(lambda: pickle.loads(data)),
        (*((expected,) if isinstance(expected, type) else expected), pickle.UnpicklingError),
    )


def _kinds_of_games():
    def truncated():
        g = Game(max_plies=3)
        for _ in range(3):
            g.play(g.legal_moves()[0])
        assert g.is_over and g.termination == "max_plies"
        return g

    def from_text_with_moves():
        g = Game.from_text(played_game(plies=6).to_text())
        g.play(g.legal_moves()[0])
        g.max_plies = 50
        return g

    def edited():
        g = played_game()
        g.place("18r", "LN", "white")
        g.play(g.legal_moves()[-1])
        return g

    def royal_captured():
        g = Game.empty()
        g.place("18jj", "K", "black")
        g.place("18a", "K", "white")
        g.place("18b", "G", "black")
        g.play("Gx18a")
        assert g.is_over and g.result == "black"
        return g

    yield "fresh", Game
    yield "played", played_game
    yield "truncated", truncated
    yield "from_text", from_text_with_moves
    yield "edited", edited
    yield "royal captured", royal_captured
    yield "forfeited", over_game


COPIES = {
    "pickle": lambda g: pickle.loads(pickle.dumps(g)),
    "pickle protocol 0": lambda g: pickle.loads(pickle.dumps(g, protocol=0)),
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
    "clone": lambda g: g.clone(),
}


@pytest.mark.parametrize("how", list(COPIES))
@pytest.mark.parametrize("name, make", [pytest.param(*k, id=k[0]) for k in _kinds_of_games()])
def test_copies_keep_everything(name, make, how):
    g = make()
    twin = COPIES[how](g)
    assert game_state(twin) == game_state(g)
    assert twin.legal_move_count() == g.legal_move_count()
    assert twin.repetitions == g.repetitions
    if g.ply and not g.is_over:  # the copy has its own history: undo works, and leaves g alone
        before = game_state(g)
        twin.undo()
        assert game_state(g) == before


# ---------------------------------------------------------------------------------------------
# Messages stay readable: an error about a 1 MB string does not echo the whole string.


@pytest.mark.parametrize(
    "name, call",
    [
        pytest.param("Game(variant)", lambda: Game(MB), id="Game(variant)"),
        pytest.param("piece_at", lambda: Game().piece_at(MB), id="piece_at"),
        pytest.param("place(piece)", lambda: Game().place("1a", MB, "black"), id="place(piece)"),
        pytest.param("play", lambda: Game().play("P" * 1_000_000), id="play"),
        pytest.param("from_text", lambda: Game.from_text(MB), id="from_text"),
        pytest.param("legal_actions(frame)", lambda: Game().legal_actions(MB), id="legal_actions(frame)"),
        pytest.param("TaikyokuEnv(frame)", lambda: taikyoku.TaikyokuEnv(frame=MB), id="TaikyokuEnv(frame)"),
        pytest.param("selfplay(format)", lambda: taikyoku.selfplay("unused", format=MB), id="selfplay(format)"),
        pytest.param("VectorEnv(options)", lambda: taikyoku.VectorEnv(1, options=MB), id="VectorEnv(options)"),
    ],
)
def test_messages_about_huge_strings_stay_short(name, call):
    error = raised_by(call)
    check_error(error, VALUE)
    assert len(str(error)) < 1000, f"{len(str(error))} characters"


# ---------------------------------------------------------------------------------------------
# Issue 29 ("Reliability, round three"): one regression test per item (the catalogue above has the
# evaluator, settings, lock and game-text cases; Ctrl-C, two writers and the pipes are in
# test_faults.py and test_cli.py).


def _damage_manifest(out: Path, damage: Callable[[list], None]) -> None:
    path = out / "manifest.json"
    manifest = json.loads(path.read_text())
    damage(manifest["shards"])
    path.write_text(json.dumps(manifest, indent=2))


@pytest.mark.parametrize(
    "damage, found",
    [
        # Shard 2's entry names shard 1's files, with their sizes and CRC-32s and counts: the games
        # table then holds ids [0, 1, 2, 3, 2, 3, 6, 7].
        (
            lambda shards: shards[2].update(
                {
                    k: shards[1][k]
                    for k in (
                        "games_file",
                        "positions_file",
                        "checks",
                        "positions",
                        "black_wins",
                        "white_wins",
                        "draws",
                        "truncated",
                        "bytes",
                    )
                }
            ),
            (
                2,
                [
                    "its entry names the files games/part-00001.arrow and positions/part-00001.arrow, "
                    "not its own games/part-00002.arrow and positions/part-00002.arrow"
                ],
            ),
        ),
        # A wrong result tally (taikyoku info would report it).
        (
            lambda shards: shards[3].update(truncated=shards[3]["truncated"] - 1, draws=shards[3]["draws"] + 1),
            (3, ["its entry counts 2 games", "draws 1, truncated 1; its games file holds 2 games"]),
        ),
    ],
    ids=["another shard's files", "wrong tally"],
)
def test_verify_finds_what_a_resume_finds(tmp_path, capsys, damage, found):
    from conftest import contents

    from taikyoku.__main__ import main

    out = tmp_path / "ds"
    settings = dict(games=8, max_plies=20, games_per_shard=2)
    taikyoku.selfplay(out, **settings)
    whole = contents(out)
    _damage_manifest(out, damage)
    ds = tds.open(out)  # the manifest's own layout checks pass
    index, why = found
    with pytest.raises(TaikyokuError) as error:
        ds.verify()
    message = str(error.value)
    assert f"shard {index} is damaged: " in message and all(w in message for w in why), message
    assert main(["verify", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("taikyoku verify: error: ") and "Traceback" not in err and all(w in err for w in why), err
    # A resume finds the same, in the same words, and regenerates it.
    summary = taikyoku.selfplay(out, **settings)
    assert len(summary["repaired"]) == 1 and summary["repaired"][0].startswith(f"shard {index}: "), summary["repaired"]
    assert all(w in summary["repaired"][0] for w in why), summary["repaired"]
    assert contents(out) == whole
    assert tds.open(out).verify()["games"] == 8


def _each_ply(variant: str, seed: int, plies: int):
    """A fresh game of ``variant`` and the moves of a seeded random game, replayed ply by ply."""
    moves = taikyoku.random_game(seed, plies, variant=variant).history()
    live = Game(variant)
    for move in moves:
        yield live
        live.play(move)
    yield live


@pytest.mark.parametrize("variant, plies", [("taikyoku", 120), ("tenjiku", 400), ("daidai", 600), ("taishin", 300)])
def test_game_texts_keep_the_history_the_rules_read_at_every_ply(variant, plies):
    with_history = 0
    for live in _each_ply(variant, 29, plies):
        text = live.to_text()
        back = Game.from_text(text)
        assert back.legal_actions().tolist() == live.legal_actions().tolist(), (variant, live.ply)
        assert (back.repetitions, back.is_over, back.result, back.to_text()) == (
            live.repetitions,
            live.is_over,
            live.result,
            text,
        ), (variant, live.ply)
        assert np.array_equal(back.observation(), live.observation())
        assert back.ply == 0 and back.history() == []
        with_history += " moves " in text
    assert with_history > 0


def test_daidai_texts_do_not_offer_moves_the_live_game_forbids():
    """The issue's game: 17 of 1,400 sampled positions offered moves the live game forbids (59
    legal moves against 57) when the text dropped the history; envs started from a text inherit it."""
    forbidding = 0
    for live in _each_ply("daidai", 35, 1500):
        if live.is_over:
            break
        legal = live.legal_actions().tolist()
        plain = Game.from_text(live.to_text(history=False))
        if len(plain.legal_actions()) != len(legal):
            forbidding += 1
            text = live.to_text()
            assert Game.from_text(text).legal_actions().tolist() == legal
            vec = taikyoku.VectorEnv(1, variant="daidai", start=text)
            vec.reset(seed=0)
            assert vec.legal_actions()[0].tolist() == legal
            env = taikyoku.TaikyokuEnv(variant="daidai")
            _, info = env.reset(seed=0, options={"start": text})
            assert info["legal_actions"].tolist() == legal
    assert forbidding > 0, "the game never met a forbidden repetition: pick another"


def test_a_pickled_game_read_from_a_text_keeps_its_history():
    live = next(g for g in _each_ply("daidai", 35, 300) if g.ply == 300)
    back = Game.from_text(live.to_text())
    back.play(back.legal_moves()[0])
    copy_ = pickle.loads(pickle.dumps(back))
    assert (copy_.to_text(), copy_.ply, copy_.history()) == (back.to_text(), 1, back.history())
    assert copy_.legal_actions().tolist() == back.legal_actions().tolist()
    copy_.undo()  # its own move, and no more: the text's moves are history
    with pytest.raises(IllegalMoveError):
        copy_.undo()


def test_engine_io_errors_carry_errno_strerror_and_filename(tmp_path):
    import errno

    if not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full")
    out = tmp_path / "ds"
    taikyoku.selfplay(out, **tiny())
    # The manifest is written under manifest.json.tmp, then renamed: here that file is a full disk.
    os.symlink("/dev/full", out / "manifest.json.tmp")
    with pytest.raises(OSError) as error:
        taikyoku.selfplay(out, **tiny())
    e = error.value
    assert e.errno == errno.ENOSPC and e.strerror == "No space left on device", (e.errno, e.strerror)
    assert e.filename == str(out / "manifest.json") and not isinstance(e, TaikyokuError)
    assert not (out / "manifest.json.tmp").exists() and tds.open(out).complete  # nothing else changed
