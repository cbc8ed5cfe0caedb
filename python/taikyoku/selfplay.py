"""Self-play datasets: ``taikyoku.selfplay(out, ...)`` and the ``taikyoku selfplay`` command.

The games are played in Rust, in parallel, with the GIL released. Each game's randomness comes
from its own ChaCha8 stream, seeded from ``seed`` and the game's index, so the same arguments
give byte-identical files whatever ``threads`` is. Shards are written under temporary names and
renamed when complete; running the same command again resumes an interrupted run. The layout
and schemas are in datasets/README.md; read the result with :func:`taikyoku.datasets.open`.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from taikyoku import _core

__all__ = ["selfplay", "Evaluator"]

#: A network: ``evaluator(observations, legal_actions) -> (priors, values)``. ``observations`` is
#: a uint8 array (B, 36, 36, P) in the mover's frame (docs/ACTIONS.md), ``legal_actions`` a
#: list of B int64 arrays. It returns B prior arrays (or one flat array), each aligned with that
#: leaf's legal actions (any non-negative scale: they are normalised), and B values in [-1, 1]
#: from the view of the leaf's side to move.
Evaluator = Callable[[np.ndarray, list], tuple]


def _evaluate(evaluator: Evaluator, observations: np.ndarray, actions: np.ndarray, offsets: np.ndarray):
    """Calls the user's evaluator on one batch and checks what it returns (called from Rust)."""
    legal = [actions[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)]
    returned = evaluator(observations, legal)
    if not isinstance(returned, (tuple, list)) or len(returned) != 2:
        raise _core.TaikyokuError("the evaluator must return (priors, values)")
    priors, values = returned
    values = np.asarray(values, dtype=np.float32).reshape(-1)
    if values.shape != (len(legal),):
        raise _core.TaikyokuError(f"the evaluator returned {values.size} values for {len(legal)} positions")
    if isinstance(priors, np.ndarray) and priors.ndim == 1:
        flat = priors.astype(np.float32, copy=False)
    else:
        if len(priors) != len(legal):
            raise _core.TaikyokuError(f"the evaluator returned {len(priors)} prior arrays for {len(legal)} positions")
        parts = [np.asarray(p, dtype=np.float32).reshape(-1) for p in priors]
        for i, (part, moves) in enumerate(zip(parts, legal)):
            if part.size != moves.size:
                raise _core.TaikyokuError(f"position {i}: {part.size} priors for {moves.size} legal actions")
        flat = np.concatenate(parts) if parts else np.zeros(0, np.float32)
    if flat.size != actions.size:
        raise _core.TaikyokuError(f"the evaluator returned {flat.size} priors for {actions.size} legal actions")
    if not (np.all(np.isfinite(flat)) and np.all(np.isfinite(values))):
        raise _core.TaikyokuError("the evaluator returned NaN or infinite numbers")
    return np.ascontiguousarray(flat, dtype=np.float32), np.ascontiguousarray(values, dtype=np.float32)


def _evaluator_name(evaluator: Evaluator) -> str:
    name = getattr(evaluator, "__qualname__", None) or type(evaluator).__qualname__
    module = getattr(evaluator, "__module__", None) or type(evaluator).__module__
    return f"{module}.{name}"


def selfplay(
    out: Union[str, os.PathLike],
    players: str = "random",
    games: int = 8,
    seed: int = 0,
    threads: Optional[int] = None,
    format: str = "arrow",
    max_plies: int = 5000,
    simulations: int = 64,
    evaluator: Optional[Evaluator] = None,
    *,
    variant: str = "taikyoku",
    options: Optional[Sequence[str]] = None,
    games_per_shard: int = 16,
    progress: bool = False,
    leaves_per_game: int = 8,
    concurrent_games: int = 32,
    **mcts: Any,
) -> dict:
    """Plays ``games`` self-play games and writes them as a dataset in ``out``.

    Args:
        out: dataset directory: new, empty, or holding an interrupted run with the same
            settings (which is resumed). Anything else is refused before writing.
        players: ``"random"`` (uniform legal moves) or ``"mcts"`` (PUCT search; the leaf value
            is a material and mobility evaluation derived from the rules, unless ``evaluator``).
        games, seed, max_plies: how many games, the master seed, and the ply limit per game.
        threads: worker threads (default: all cores). Does not change the output.
        format: ``"arrow"`` (Arrow IPC, zstd) or ``"parquet"`` (zstd).
        simulations: MCTS simulations per move.
        evaluator: a network guiding MCTS (see :data:`Evaluator`); the leaves of
            ``concurrent_games`` games, ``leaves_per_game`` each (virtual loss), are evaluated in
            one call. The output is reproducible if the evaluator is deterministic.
        games_per_shard: games per shard file.
        progress: show a progress bar (tqdm) and nothing else.
        **mcts: MCTS settings: ``temperature``, ``temperature_plies``, ``dirichlet_alpha``,
            ``dirichlet_fraction``, ``c_puct``, ``priors`` ("captures" or "uniform"),
            ``rollout_plies``.

    Returns:
        A summary: games, plies, black_wins, white_wins, draws, truncated, bytes,
        generated_games, generated_plies (this run), seconds, out.

    Raises:
        taikyoku.TaikyokuError (a ValueError): bad arguments or an unusable directory; nothing
            is written. OSError: the file system failed (full disk, permissions); complete
            shards are kept and a rerun resumes.
    """
    known = {"temperature", "temperature_plies", "dirichlet_alpha", "dirichlet_fraction", "c_puct", "priors", "rollout_plies"}
    unknown = set(mcts) - known
    if unknown:
        raise _core.TaikyokuError(f"unknown selfplay arguments: {', '.join(sorted(unknown))}")
    if mcts and players != "mcts":
        raise _core.TaikyokuError(f"{', '.join(sorted(mcts))} apply to players='mcts'")
    if evaluator is not None and not callable(evaluator):
        raise _core.TaikyokuError("evaluator must be callable: evaluator(observations, legal_actions) -> (priors, values)")
    for name, value in (("games", games), ("seed", seed), ("max_plies", max_plies), ("simulations", simulations)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise _core.TaikyokuError(f"{name} must be an integer, not {value!r}")
    bar = None
    callback = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=int(games), unit="game", desc="self-play", dynamic_ncols=True)

        def callback(plies: int) -> None:
            bar.update(1)
            bar.set_postfix(plies=plies, refresh=False)

    try:
        return _core.selfplay_run(
            os.fspath(out),
            players=players,
            games=int(games),
            seed=int(seed),
            threads=threads,
            format=format,
            max_plies=int(max_plies),
            simulations=int(simulations),
            games_per_shard=int(games_per_shard),
            variant=variant,
            options=list(options or []),
            progress=callback,
            evaluator=evaluator,
            evaluator_name=_evaluator_name(evaluator) if evaluator is not None else None,
            leaves_per_game=int(leaves_per_game),
            concurrent_games=int(concurrent_games),
            **mcts,
        )
    finally:
        if bar is not None:
            bar.close()
