"""Self-play datasets: ``taikyoku.selfplay(out, ...)`` and the ``taikyoku selfplay`` command.

The games are played in Rust, in parallel, with the GIL released. Each game's randomness comes
from its own ChaCha8 stream, seeded from ``seed`` and the game's index, so the same arguments
give byte-identical files whatever ``threads`` is. Shards are written under temporary names and
renamed when complete; running the same command again resumes an interrupted run. The layout
and schemas are in datasets/README.md; read the result with :func:`taikyoku.datasets.open`.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any, Callable, Dict, List, Literal, Optional, Sequence, Tuple, TypedDict, Union

import numpy as np

from taikyoku import _core, _validate
from taikyoku._validate import U32_MAX, U64_MAX

__all__ = [
    "selfplay",
    "Evaluator",
    "SelfplaySummary",
    "Players",
    "Format",
    "Priors",
    "MCTS_KNOBS",
    "MCTS_LIMITS",
    "mcts_defaults",
]

#: Who plays both sides.
Players = Literal["random", "mcts"]
#: The shard file format.
Format = Literal["arrow", "parquet"]
#: MCTS priors: heuristic ones favouring captures, or uniform.
Priors = Literal["captures", "uniform"]


class SelfplaySummary(TypedDict):
    """What :func:`selfplay` returns. Totals count the whole dataset, ``generated_*`` what this
    call played (the rest was resumed)."""

    games: int
    positions: int
    plies: int  # the same as positions
    black_wins: int
    white_wins: int
    draws: int
    truncated: int
    bytes: int
    generated_games: int
    generated_plies: int
    repaired: List[str]  # shards found damaged and generated again, with why
    seconds: float
    out: str


#: A network guiding MCTS: ``evaluator(observations, legal) -> (priors, values)``.
#:
#: - ``observations``: the leaves of one batch, (B, 36, 36, P) in the mover's frame
#:   (docs/ACTIONS.md): ``observation="compact"`` (default) gives P = 8 uint16 planes of piece
#:   ids (embed them), ``"onehot"`` the uint8 one-hot planes. The array is a view of a buffer the
#:   run reuses for its next batches: use it during the call, copy it to keep it.
#: - ``legal``: the leaves' legal actions. ``legal_actions="csr"`` (default): a pair
#:   ``(actions, offsets)`` of int64 arrays, leaf i's actions being ``actions[offsets[i]:offsets[i+1]]``;
#:   ``"list"``: a list of B int64 arrays.
#: - It returns ``priors``, aligned with the actions (one flat array, or one array per leaf), and B
#:   ``values``, real numbers (numpy, torch on the CPU, lists), checked on every call:
#:
#:   - priors finite and non-negative, at any scale (each leaf's are normalised), with a positive
#:     float32 sum per leaf (not all zero, not so large that the sum overflows);
#:   - values finite, in [-1, 1], from the view of each leaf's side to move.
#:
#:   An answer that breaks a rule raises :class:`taikyoku.TaikyokuError` naming the rule and the
#:   first offending entry (its leaf, action and index), before anything of the batch is used.
#:
#: It is called on the thread that called :func:`selfplay` (the trees are worked on by the run's
#: threads meanwhile), so Ctrl-C interrupts it even while it blocks (a stuck inference server):
#: the run stops with KeyboardInterrupt, keeping its complete shards.
Evaluator = Callable[[np.ndarray, Any], Tuple[Any, Any]]


def _real_array(what: str, data: Any) -> np.ndarray:
    """``data`` as a flat float32 array, refusing what is not real numbers (complex numbers,
    strings, objects) rather than converting it silently."""
    array = np.asarray(data)
    if array.dtype.kind not in "biuf":
        raise _core.TaikyokuError(
            f"the evaluator broke its contract: {what} must be real numbers; it returned an array of {array.dtype}"
        )
    return array.astype(np.float32, copy=False).reshape(-1)


def _evaluate(
    evaluator: Evaluator, observations: np.ndarray, actions: np.ndarray, offsets: np.ndarray, csr: bool
) -> Tuple[np.ndarray, np.ndarray]:
    """Calls the user's evaluator on one batch and checks what it returns (called from Rust)."""
    leaves = len(offsets) - 1
    legal = (actions, offsets) if csr else [actions[offsets[i] : offsets[i + 1]] for i in range(leaves)]
    returned = evaluator(observations, legal)
    if not isinstance(returned, (tuple, list)) or len(returned) != 2:
        raise _core.TaikyokuError("the evaluator must return (priors, values)")
    priors, values = returned
    values = _real_array("values", values)
    if values.shape != (leaves,):
        raise _core.TaikyokuError(f"the evaluator returned {values.size} values for {leaves} positions")
    if isinstance(priors, np.ndarray) and priors.ndim == 1 or hasattr(priors, "__array__") and np.ndim(priors) == 1:
        flat = _real_array("priors", priors)
    else:
        if len(priors) != leaves:
            raise _core.TaikyokuError(f"the evaluator returned {len(priors)} prior arrays for {leaves} positions")
        parts = [_real_array("priors", p) for p in priors]
        for i, part in enumerate(parts):
            wanted = int(offsets[i + 1] - offsets[i])
            if part.size != wanted:
                raise _core.TaikyokuError(f"position {i}: {part.size} priors for {wanted} legal actions")
        flat = np.concatenate(parts) if parts else np.zeros(0, np.float32)
    if flat.size != actions.size:
        raise _core.TaikyokuError(f"the evaluator returned {flat.size} priors for {actions.size} legal actions")
    # The values themselves (finite, non-negative priors with a positive sum, values in [-1, 1])
    # are checked by the engine, for every evaluator alike (taikyoku_selfplay::network::check_evaluation).
    return np.ascontiguousarray(flat, dtype=np.float32), np.ascontiguousarray(values, dtype=np.float32)


def _evaluator_name(evaluator: Evaluator) -> str:
    name = getattr(evaluator, "__qualname__", None) or type(evaluator).__qualname__
    module = getattr(evaluator, "__module__", None) or type(evaluator).__module__
    return f"{module}.{name}"


#: The numeric MCTS settings and their ranges, ``{name: (integer, low, high, low_open)}``: the
#: engine's own list (``taikyoku._core.MCTS_LIMITS``), so that Python, the command line and the
#: engine accept the same values.
MCTS_LIMITS: Dict[str, Tuple[bool, float, float, bool]] = dict(_core.MCTS_LIMITS)


def check_mcts_setting(name: str, value: Any) -> Any:
    """``value`` checked as the numeric MCTS setting ``name`` against :data:`MCTS_LIMITS`, as
    given and as the engine stores it (a float32), the engine's own rule: TaikyokuError naming
    the setting, its range and the value given."""
    integer, low, high, low_open = MCTS_LIMITS[name]
    if integer:
        return _validate.integer(name, value, int(low), int(high))
    number = _validate.real(name, value, low, high, low_open=low_open)
    stored = float(np.float32(number))
    if stored > high or stored < low or (low_open and stored == low):
        bounds = f"{'(' if low_open else '['}{low:g}, {high:g}]"
        raise _core.TaikyokuError(
            f"{name} must be a finite number in {bounds}, not {_validate.show(value)} "
            f"(it is {stored!r} as a float32, as settings are stored)"
        )
    return number


#: The MCTS settings ``selfplay(**mcts)`` takes, with their checks (None keeps the default).
_MCTS_KNOBS: Dict[str, Callable[[str, Any], Any]] = {
    "temperature": check_mcts_setting,
    "temperature_plies": check_mcts_setting,
    "dirichlet_alpha": check_mcts_setting,
    "dirichlet_fraction": check_mcts_setting,
    "c_puct": check_mcts_setting,
    "priors": lambda name, v: _validate.choice(name, v, ("captures", "uniform")),
    "rollout_plies": check_mcts_setting,
    "reuse_tree": lambda name, v: _validate.boolean(name, v),
    "root": lambda name, v: _validate.choice(name, v, ("puct", "gumbel")),
    "gumbel_considered": check_mcts_setting,
    "gumbel_scale": check_mcts_setting,
    "opponent_moves": lambda name, v: _validate.choice(name, v, ("parent", "leaf")),
}

#: The names of the MCTS settings :func:`selfplay` takes by keyword (``**mcts``).
MCTS_KNOBS: Tuple[str, ...] = tuple(_MCTS_KNOBS)


def mcts_defaults() -> Dict[str, Any]:
    """The engine's default MCTS settings (what a manifest records when none is given)."""
    import json

    players = dict(json.loads(_core.selfplay_settings(players="mcts"))["players"])
    players.pop("kind")
    return players


def _checked_settings(
    *,
    players: Any,
    games: Any,
    seed: Any,
    threads: Any,
    format: Any,
    max_plies: Any,
    simulations: Any,
    evaluator: Any,
    variant: Any,
    options: Any,
    games_per_shard: Any,
    progress: Any,
    leaves_per_game: Any,
    concurrent_games: Any,
    mcts: Dict[str, Any],
    shard_positions: Any = None,
    store_legal_actions: Any = False,
) -> Dict[str, Any]:
    """Every argument of :func:`selfplay` checked in Python (before anything touches the disk) and
    converted to plain ints, floats and strings for the native call. Ranges are those the native
    side can hold, so it never sees a number it would have to refuse with an OverflowError."""
    unknown = set(mcts) - set(_MCTS_KNOBS)
    if unknown:
        raise _core.TaikyokuError(f"unknown selfplay arguments: {', '.join(sorted(unknown))}")
    players = _validate.choice("players", players, ("random", "mcts"))
    if mcts and players != "mcts":
        raise _core.TaikyokuError(f"{', '.join(sorted(mcts))} apply to players='mcts'")
    if evaluator is not None and not callable(evaluator):
        raise _core.TaikyokuError(
            "evaluator must be callable: evaluator(observations, legal_actions) -> (priors, values)"
        )
    if evaluator is not None and players != "mcts":
        raise _core.TaikyokuError("an evaluator guides MCTS: use players='mcts'")
    if not isinstance(variant, str):
        raise _core.TaikyokuError(f"variant must be a variant name (str), not {_validate.show(variant)}")
    _validate.boolean("progress", progress)
    if games_per_shard is not None and shard_positions is not None:
        raise _core.TaikyokuError(
            "give games_per_shard or shard_positions, not both (games_per_shard fixes the games of a shard; "
            "shard_positions derives them)"
        )
    settings: Dict[str, Any] = dict(
        players=players,
        games=_validate.integer("games", games, 1, U32_MAX),
        seed=_validate.integer("seed", seed, 0, U64_MAX),
        threads=_validate.optional_integer("threads", threads, 1, 256),
        format=_validate.choice("format", format, ("arrow", "parquet")),
        max_plies=_validate.integer("max_plies", max_plies, 1, U32_MAX),
        simulations=check_mcts_setting("simulations", simulations),
        games_per_shard=_validate.optional_integer("games_per_shard", games_per_shard, 1, U32_MAX),
        shard_positions=_validate.optional_integer("shard_positions", shard_positions, 1, U32_MAX),
        store_legal_actions=_validate.boolean("store_legal_actions", store_legal_actions),
        variant=variant,
        options=_validate.string_list("options", options),
        leaves_per_game=_validate.integer("leaves_per_game", leaves_per_game, 1, 4096),
        concurrent_games=_validate.integer("concurrent_games", concurrent_games, 1, 65536),
    )
    for name, value in mcts.items():
        if value is not None:
            settings[name] = _MCTS_KNOBS[name](name, value)
    return settings


def settings_json(evaluator: Optional[Evaluator] = None, observation: str = "compact", **arguments: Any) -> str:
    """The settings of a run (what decides its bytes: the manifest's ``settings``) as the engine's
    JSON, from :func:`selfplay`'s arguments. Shared by one-machine and Ray runs."""
    checked = _checked_settings(evaluator=evaluator, **arguments)
    for run_only in ("threads", "concurrent_games"):
        checked.pop(run_only)
    if evaluator is None:
        checked.pop("leaves_per_game")
    return _core.selfplay_settings(
        evaluator_name=_evaluator_name(evaluator) if evaluator is not None else None,
        observation=_validate.choice("observation", observation, ("compact", "onehot")),
        **checked,
    )


def selfplay(
    out: Union[str, os.PathLike[str]],
    players: Players = "random",
    games: int = 8,
    seed: int = 0,
    threads: Optional[int] = None,
    format: Format = "arrow",
    max_plies: int = 5000,
    simulations: int = 64,
    evaluator: Optional[Evaluator] = None,
    *,
    variant: str = "taikyoku",
    options: Optional[Sequence[str]] = None,
    games_per_shard: Optional[int] = None,
    shard_positions: Optional[int] = None,
    store_legal_actions: bool = False,
    progress: bool = False,
    leaves_per_game: int = 8,
    concurrent_games: int = 32,
    observation: Literal["compact", "onehot"] = "compact",
    legal_actions: Literal["csr", "list"] = "csr",
    wait: bool = False,
    **mcts: Any,
) -> SelfplaySummary:
    """Plays ``games`` self-play games and writes them as a dataset in ``out``.

    Args:
        out: dataset directory: new, empty, or holding an interrupted run with the same
            settings (which is resumed). Anything else is refused before writing, and so is
            ``""`` (write ``"."`` for the current directory).
        players: ``"random"`` (uniform legal moves) or ``"mcts"`` (PUCT search; the leaf value
            is a material and mobility evaluation derived from the rules, unless ``evaluator``).
        games, seed, max_plies: how many games, the master seed, and the ply limit per game.
        threads: worker threads (default: all cores). Does not change the output.
        format: ``"arrow"`` (Arrow IPC, zstd) or ``"parquet"`` (zstd).
        simulations: MCTS simulations per move.
        evaluator: a network guiding MCTS (see :data:`Evaluator`). ``concurrent_games`` games
            are in play, in two halves: the evaluator gets one half's leaves
            (``leaves_per_game`` per game, spread by virtual loss) while the other half's trees
            are worked on, on all threads, with the GIL released, so a GPU sees back-to-back
            batches. The output is reproducible if the evaluator is deterministic.
        observation: what the evaluator sees: ``"compact"`` (piece ids, uint16; the default)
            or ``"onehot"`` (uint8 planes, 75x larger).
        legal_actions: how the evaluator gets the legal actions: ``"csr"`` (one flat array
            and offsets; the default) or ``"list"`` (one array per leaf).
        games_per_shard: games per shard (the last shard may hold fewer). By default it is
            derived from ``shard_positions``; given, it wins (and ``shard_positions`` must not be).
        shard_positions: the target size of a shard, in positions (default
            ``taikyoku._core.DEFAULT_SHARD_POSITIONS``, 100,000): ``games_per_shard`` becomes
            ``round(shard_positions / expected plies per game)``, the expected plies being the
            variant's measured mean game length for these players, capped by ``max_plies``
            (datasets/README.md §2). It depends on the settings alone, never on the games
            played, so the files stay reproducible; real shards come out near the target, not
            on it. The manifest records the resulting ``games_per_shard``.
        store_legal_actions: also store each position's legal actions (sorted, mover's frame)
            in a ``legal_actions`` column of the positions table, so that policy targets need
            no replay. It adds about 200-350 bytes per position on disk: MCTS datasets grow
            about threefold, random ones (~30 bytes a position) tenfold.
        progress: show a progress bar (tqdm) and nothing else.
        wait: when another process is writing ``out`` (it holds the directory's writer lock,
            datasets/README.md §1), wait for it to finish, then resume its dataset, instead of
            failing at once; the wait is announced once as a warning of the ``taikyoku`` logger.
            Ctrl-C stops the wait.
        **mcts: MCTS settings (:data:`MCTS_KNOBS`): ``temperature``, ``temperature_plies``,
            ``dirichlet_alpha``, ``dirichlet_fraction``, ``c_puct``, ``priors`` ("captures" or
            "uniform"), ``rollout_plies``, ``opponent_moves`` (where the heuristic counts the
            opponent's moves for a leaf's mobility: ``"parent"``, the default, at the parent node,
            one move generation per leaf; ``"leaf"``, at the leaf, a second generation and about
            1.6x the time, as before; equally strong, docs/STRENGTH.md), ``reuse_tree``, and the
            root: ``root="puct"`` (the
            default) or ``"gumbel"`` (Gumbel-top-k sampling of ``gumbel_considered`` moves, 16,
            with noise ``gumbel_scale``, 1.0, and sequential halving; the Dirichlet noise and the
            temperature do not apply, and each position's improved policy is stored in the
            positions' ``policy`` column, the better policy target: datasets/README.md).

    Returns:
        A :class:`SelfplaySummary`: games, positions (= plies), black_wins, white_wins, draws,
        truncated, bytes, generated_games, generated_plies (this run), repaired, seconds, out.

    Raises:
        taikyoku.TaikyokuError (a ValueError): bad arguments (checked here, before anything is
            written: integers, numpy's too, in the range the run can hold; finite numbers; known
            names) or an unusable directory; nothing is written. OSError: the file system failed
            (full disk, permissions), with ``errno``, ``strerror`` and ``filename`` set; complete
            shards are kept and a rerun resumes. BlockingIOError (an OSError): another process is
            writing ``out`` and ``wait`` is False; the message names it (pid, host, command).
            Whatever the error, a run that completed no shard in a new or empty directory leaves it
            as it was (the evaluator's own exceptions included).
    """
    settings = settings_json(
        players=players,
        games=games,
        seed=seed,
        threads=threads,
        format=format,
        max_plies=max_plies,
        simulations=simulations,
        evaluator=evaluator,
        variant=variant,
        options=options,
        games_per_shard=games_per_shard,
        shard_positions=shard_positions,
        store_legal_actions=store_legal_actions,
        progress=progress,
        leaves_per_game=leaves_per_game,
        concurrent_games=concurrent_games,
        mcts=mcts,
        observation=observation,
    )
    out = _validate.path("out", out)
    wait = _validate.boolean("wait", wait)
    bar = None
    callback = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=int(games), unit="game", desc="self-play", dynamic_ncols=True)

        def callback(plies: int) -> None:
            bar.update(1)
            bar.set_postfix(plies=plies, refresh=False)

    def run() -> SelfplaySummary:
        return _core.selfplay_run(
            out,
            settings,
            threads=_validate.optional_integer("threads", threads, 1, 256),
            progress=callback,
            evaluator=evaluator,
            concurrent_games=_validate.integer("concurrent_games", concurrent_games, 1, 65536),
            legal_actions=_validate.choice("legal_actions", legal_actions, ("csr", "list")),
        )

    try:
        return _when_unlocked(run, wait)
    finally:
        if bar is not None:
            bar.close()


#: How often a waiting writer tries the lock again, in seconds.
WAIT_POLL = 0.25


def _when_unlocked(write: Callable[[], Any], wait: bool) -> Any:
    """``write()``; while another process holds the dataset's writer lock (BlockingIOError) and
    ``wait``, tries again every WAIT_POLL seconds (a stale lock of a killed run is free: the
    operating system released it), saying so once on the ``taikyoku`` logger (a warning, which
    Python prints on stderr unless logging is configured). Ctrl-C interrupts the wait."""
    told = False
    while True:
        try:
            return write()
        except BlockingIOError as e:
            if not wait:
                raise
            if not told:
                holder = str(e.strerror).split("; ")[0]
                logging.getLogger("taikyoku").warning("taikyoku: %s; waiting for it to finish", holder)
                told = True
            time.sleep(WAIT_POLL)
