"""Vectorized environment: N games stepped in one native call (rayon, GIL released).

``taikyoku.VectorEnv`` is a :class:`gymnasium.vector.VectorEnv` with same-step auto-reset: when
a game ends, the returned observation is already the first one of the next game, and
``infos["final_info"]`` / ``infos["final_obs"]`` describe the finished one (Gymnasium's
``AutoresetMode.SAME_STEP``). By default the agent plays both sides and each reward is from the
view of the side that moved in that env; with ``opponent=`` it plays ``agent_color`` in every
env, as in ``TaikyokuEnv``.

It is the ``vector_entry_point`` of the registered ids, so ``gymnasium.make_vec(id, n)`` builds
one; ``make_vec(id, n, vectorization_mode="sync" | "async")`` runs ``n`` ``TaikyokuEnv`` instead.
Infos of all three batch the same way: ``infos["legal_actions"]`` is an object array with one
entry of legal actions per env (with the ``_legal_actions`` mask), and
:func:`sample_legal_actions` draws one legal action per env from any of them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Callable, Optional, TypeVar, Union

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode
from gymnasium.vector import VectorEnv as GymVectorEnv
from gymnasium.vector.utils import batch_space

from taikyoku import _core, _validate
from taikyoku import render as render_module
from taikyoku._env_config import EnvConfig, Opponent
from taikyoku.env import _RGB_MODES, observation_space

if TYPE_CHECKING:
    from gymnasium.spaces.space import MaskNDArray

    from taikyoku._core import Color, Frame

__all__ = ["LegalMultiDiscrete", "VectorEnv", "sample_legal_actions"]

_Scalar = TypeVar("_Scalar", bound=np.generic)

#: The most games one VectorEnv holds (the native side's limit).
MAX_ENVS = 1 << 20


def _physical_memory() -> Optional[int]:
    """Bytes of RAM of this machine, or None where the OS does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def _check_buffer_size(
    num_envs: int, variant: str, compact: bool, dtype: Optional[npt.DTypeLike], options: list[str]
) -> None:
    """Refuses, with the figures, an observation buffer larger than the machine's memory (the
    native side would fail to allocate it, or the machine would start swapping to death)."""
    planes = len(_core.plane_names(variant, compact=compact, options=options))  # checks variant, options
    if dtype is None:
        itemsize, name = (2, "uint16") if compact else (1, "uint8")
    else:
        try:
            itemsize, name = np.dtype(dtype).itemsize, np.dtype(dtype).name
        except TypeError:
            return  # not a dtype at all: the native side names the accepted ones
    # The buffer, and as much again twice for the batched Box's low and high bounds (gymnasium's
    # batch_space repeats them per env).
    need = 3 * num_envs * _core.GRID * _core.GRID * planes * itemsize
    memory = _physical_memory()
    if memory is not None and need > memory:
        raise _core.TaikyokuError(
            f"VectorEnv({num_envs}) needs {need / 2**30:.1f} GiB for its observations ({num_envs} x {_core.GRID} x "
            f"{_core.GRID} x {planes} {name}: the buffer and the observation space's low and high bounds), more than "
            f"this machine's {memory / 2**30:.1f} GiB of memory: use fewer envs"
            + ("" if compact else ", or compact=True (piece-id planes, about 40 times smaller)")
        )


#: A random generator, an integer seed, or None.
RNG = Union[None, int, np.random.Generator]


def _generator(rng: RNG, default: Callable[[], np.random.Generator]) -> np.random.Generator:
    if rng is None:
        return default()
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(_validate.integer("rng (a seed)", rng, 0))


def _sample_csr(
    flat: npt.NDArray[np.int64], offsets: npt.NDArray[np.int64], rng: np.random.Generator
) -> npt.NDArray[np.int64]:
    """One uniformly random entry of each CSR row (0 for an empty row)."""
    counts = np.diff(offsets)
    picks = offsets[:-1] + np.floor(rng.random(counts.size) * counts).astype(np.int64)
    actions = np.zeros(counts.size, dtype=np.int64)
    has = counts > 0
    actions[has] = flat[picks[has]]
    return actions


def sample_legal_actions(infos: dict[str, Any], rng: RNG = None) -> npt.NDArray[np.int64]:
    """One uniformly random legal action per env, from the ``infos`` of a vector env.

    Works with the infos of :class:`VectorEnv` and of Gymnasium's ``SyncVectorEnv`` and
    ``AsyncVectorEnv`` over ``TaikyokuEnv`` (``gymnasium.make_vec(..., vectorization_mode=...)``),
    from ``reset()`` or ``step()``. ``rng``: a ``numpy.random.Generator``, an integer seed, or
    None (a fresh unseeded generator). Returns int64 actions of shape (num_envs,). An env with no
    legal action there (its game is over, so a ``NEXT_STEP`` vector env resets it and ignores
    the action) gets 0.
    """
    legal = infos["legal_actions"]
    present = infos.get("_legal_actions", np.ones(len(legal), dtype=bool))
    rows = [
        np.asarray(a, dtype=np.int64) if has and a is not None else np.empty(0, np.int64)
        for a, has in zip(legal, present)
    ]
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([r.size for r in rows], out=offsets[1:])
    flat = np.concatenate(rows) if rows else np.empty(0, np.int64)
    return _sample_csr(flat, offsets, _generator(rng, np.random.default_rng))


class LegalMultiDiscrete(spaces.MultiDiscrete):
    """``MultiDiscrete([NUM_ACTIONS] * num_envs)`` whose ``sample()`` draws one legal action per
    env from the current positions (with the space's own seeded generator:
    ``action_space.seed(s)``), so ``envs.step(envs.action_space.sample())`` plays random legal
    moves. ``sample(mask=...)`` keeps the standard behaviour; ``contains`` is the plain test.
    Pickled, it is the plain MultiDiscrete it equals.
    """

    def __init__(
        self,
        num_envs: int,
        legal_flat: Callable[[], tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]],
        seed: Union[int, np.random.Generator, None] = None,
    ) -> None:
        super().__init__(np.full(num_envs, _core.NUM_ACTIONS, dtype=np.int64), dtype=np.int64, seed=seed)
        self._legal_flat = legal_flat

    def sample(
        self,
        mask: Optional[tuple[MaskNDArray, ...]] = None,
        probability: Optional[tuple[MaskNDArray, ...]] = None,
    ) -> npt.NDArray[np.int64]:
        """One legal action per env, uniformly (0 where there is none); with ``mask`` or
        ``probability``, MultiDiscrete's own sampling."""
        if mask is not None or probability is not None:
            return super().sample(mask=mask, probability=probability)
        flat, offsets = self._legal_flat()
        return _sample_csr(flat, offsets, self.np_random)

    def __deepcopy__(self, memo: Optional[dict[int, Any]]) -> LegalMultiDiscrete:
        copy = LegalMultiDiscrete(len(self.nvec), self._legal_flat)
        copy.np_random.bit_generator.state = self.np_random.bit_generator.state
        return copy

    def __reduce__(self) -> tuple[type[spaces.MultiDiscrete], tuple[npt.NDArray[np.integer[Any]], type[np.int64]]]:
        return (spaces.MultiDiscrete, (self.nvec.copy(), np.int64))


def _frozen(array: npt.NDArray[_Scalar]) -> npt.NDArray[_Scalar]:
    array.flags.writeable = False
    return array


def _per_env(values: Sequence[object]) -> npt.NDArray[np.object_]:
    """An object array of ``values``, one per env (never broadcast into a 2-d array)."""
    out = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        out[i] = value
    return out


class VectorEnv(GymVectorEnv[npt.NDArray[Any], npt.NDArray[np.int64], npt.NDArray[Any]]):
    """``num_envs`` games of ``variant`` stepped together.

    Args:
        num_envs: number of games.
        variant: the variant's name.
        seed: seed of ``random_actions()`` and of the built-in opponents, an integer in
            [0, 2**64) (None: drawn from the OS).
        threads: worker threads (None: rayon's default, one per core).
        max_plies: truncate each game after this many plies (1 to 2**32 - 1, or None).
        illegal_action: ``"raise"`` (IllegalMoveError naming the env; nothing is played in any
            env) or ``"lose"`` (that env's mover loses).
        frame, compact, dtype: observation and action frame and layout, as for ``TaikyokuEnv``.
        copy: return a new observation array each step (default; its memory is that of an
            earlier step's array the caller has freed, when there is one). ``copy=False`` returns
            the env's own buffer, rewritten in place by the next step (only the changed entries),
            for loops that consume the observation before stepping again.
        options: rule options.
        render_mode: None, ``"ansi"`` (a tuple of text boards) or ``"rgb_array"`` (a tuple of
            (H, W, 3) uint8 pictures; needs resvg-py and pillow).
        opponent: None (the agent plays both sides), ``"random"``, ``"mcts"`` (both native,
            seeded by ``seed``, one stream per env, in parallel), or a callable
            ``opponent(game) -> action`` (an action of the mover's frame, as for ``TaikyokuEnv``;
            called with a copy of each game where the opponent is to move, in env order). With an
            opponent the agent plays ``agent_color`` in every env, rewards are the agent's, and
            after each step (and each reset) it is the agent's turn everywhere. If the callable
            raises or answers an illegal action (IllegalMoveError naming the env), the agent's
            moves of that step stand and no answer is played: reset() before going on. A game the
            opponent ends before the agent's first move (a start position it wins at once) is
            left over, with no legal actions, and restarted by the next step (its action unused).
        agent_color: the agent's side when there is an opponent.
        mcts_simulations: simulations per move of the ``"mcts"`` opponent.
        start: position text (``Game.to_text()``) every game starts from; ``reset(options=
            {"start": text})`` restarts from another one (later automatic resets use ``start``).
        max_episode_steps: as ``gymnasium.make``'s: truncate after this many agent steps (a
            ply limit: ``max_plies`` of that many plies, twice as many with an opponent).

    Every argument is checked before anything is built: integers (numpy's too, never bools or
    floats) in range, known names, and an observation buffer that fits in this machine's memory;
    a bad one raises TaikyokuError naming it.

    Infos (every array read-only): ``legal_actions``, an object array of each env's sorted int64
    legal actions (views of one flat array, which ``legal_actions_flat()`` returns with its CSR
    offsets); ``to_play`` (object array of ``"black"``/``"white"``); ``ply`` (int64); each with
    its ``_``-mask, as Gymnasium's vector envs batch the infos of single envs. When games end,
    ``final_obs`` and ``final_info`` (object arrays of the finished games' last observation and of
    dicts with ``result``, ``termination``, ``plies`` and the finished ``game``) and their masks.

    ``action_space.sample()`` draws a legal action in every env (:class:`LegalMultiDiscrete`);
    ``sample_legal_actions(rng)`` does the same with a generator you choose, and
    ``random_actions()`` with the native seeded stream (fastest).
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": ["ansi", *_RGB_MODES]}

    #: The number of games.
    num_envs: int
    #: The settings shared with TaikyokuEnv and the PettingZoo env, checked (``max_plies`` there is
    #: as given, before ``max_episode_steps``).
    config: EnvConfig
    #: The variant's name.
    variant: str
    #: The rule options.
    options: list[str]
    #: None, ``"ansi"`` or ``"rgb_array"``.
    render_mode: Optional[str]
    #: The ply limit of every game (None: none).
    max_plies: Optional[int]
    #: The opponent (None, ``"random"``, ``"mcts"`` or a callable).
    opponent: Opponent
    #: The agent's side when there is an opponent.
    agent_color: Color
    #: The position text every game starts from (None: the initial setup).
    start: Optional[str]
    single_observation_space: spaces.Box
    single_action_space: spaces.Discrete
    #: ``single_observation_space`` batched: a Box of shape (num_envs, 36, 36, P).
    observation_space: spaces.Space[Any]
    action_space: LegalMultiDiscrete

    def __init__(
        self,
        num_envs: int,
        variant: str = "taikyoku",
        seed: Optional[int] = None,
        threads: Optional[int] = None,
        max_plies: Optional[int] = None,
        illegal_action: str = "raise",
        frame: Frame = "mover",
        compact: bool = False,
        dtype: Optional[npt.DTypeLike] = None,
        copy: bool = True,
        options: Optional[Sequence[str]] = None,
        render_mode: Optional[str] = None,
        opponent: Opponent = None,
        agent_color: Color = "black",
        mcts_simulations: int = 64,
        start: Optional[str] = None,
        max_episode_steps: Optional[int] = None,
    ) -> None:
        num_envs = _validate.integer("num_envs", num_envs, 1, MAX_ENVS)
        config = EnvConfig.check(
            self.metadata["render_modes"],
            variant=variant,
            options=options,
            max_plies=max_plies,
            illegal_action=illegal_action,
            render_mode=render_mode,
            frame=frame,
            compact=compact,
            start=start,
            opponent=opponent,
            agent_color=agent_color,
            mcts_simulations=mcts_simulations,
        )
        copy = _validate.boolean("copy", copy)
        threads = _validate.optional_integer("threads", threads, 1, 256)
        variant, options, max_plies = config.variant, list(config.options), config.max_plies
        if max_episode_steps is not None:
            steps = _validate.integer("max_episode_steps", max_episode_steps, 1, _validate.U32_MAX // 2 - 1)
            plies = steps if config.opponent is None else 2 * steps + (config.agent_color == "white")
            max_plies = plies if max_plies is None else min(max_plies, plies)
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
        seed = _validate.integer("seed", seed, 0, _validate.U64_MAX)
        _check_buffer_size(num_envs, variant, config.compact, dtype, options)
        self.config = config
        self.variant = variant
        self.options = options
        self._core = _core.VectorEnvCore(
            num_envs,
            variant=variant,
            options=options,
            seed=seed,
            threads=threads,
            frame=config.frame,
            max_plies=max_plies,
            illegal_action=config.illegal_action,
            compact=config.compact,
            dtype=dtype,
            copy=copy,
            opponent=config.opponent,
            agent_color=config.agent_color,
            mcts_simulations=config.mcts_simulations,
            start=self._start_game(config.start),
        )
        self.num_envs = int(num_envs)
        self.render_mode = config.render_mode
        self.max_plies = max_plies
        self.opponent = config.opponent
        self.agent_color = config.agent_color
        self.start = config.start
        self.single_observation_space = observation_space(variant, config.compact, self._core.dtype, options)  # pyright: ignore[reportIncompatibleVariableOverride]
        self.single_action_space = spaces.Discrete(_core.NUM_ACTIONS)  # pyright: ignore[reportIncompatibleVariableOverride]
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = LegalMultiDiscrete(self.num_envs, self.legal_actions_flat)  # pyright: ignore[reportIncompatibleVariableOverride]
        self._frame = config.frame
        self._compact = config.compact

    def _start_game(self, start: Optional[str]) -> Optional[_core.Game]:
        if start is None:
            return None
        return _core.Game.from_text(start, variant=self.variant, options=self.options)

    def _infos(self) -> dict[str, Any]:
        flat, offsets = self.legal_actions_flat()
        bounds = offsets.tolist()
        n = self.num_envs
        infos: dict[str, Any] = {
            "legal_actions": _per_env([flat[bounds[i] : bounds[i + 1]] for i in range(n)]),
            "to_play": np.array(self._core.sides_to_move(), dtype=object),
            "ply": self._core.plies(),
        }
        for key in list(infos):
            infos[f"_{key}"] = np.ones(n, dtype=bool)
        for value in infos.values():
            _frozen(value)
        return infos

    def reset(
        self, *, seed: Optional[int] = None, options: Optional[dict[str, Any]] = None
    ) -> tuple[npt.NDArray[Any], dict[str, Any]]:
        """Restarts every game (or, with ``options={"reset_mask": mask}``, those where the boolean
        mask of shape (num_envs,) is true). ``seed`` reseeds ``random_actions()``, the built-in
        opponents, ``np_random`` and ``action_space`` (games have no randomness of their own).
        ``options={"start": text}`` starts these games from a position text; other option keys
        are ignored. Returns (observations, infos) of all envs."""
        # Everything that can fail comes first: a bad seed, mask or start changes nothing.
        if seed is not None:
            seed = _validate.integer("seed", seed, 0, _validate.U64_MAX)
        options = options or {}
        start = options.get("start")
        if start is not None and not isinstance(start, str):
            raise _core.TaikyokuError(
                f"options['start'] must be a position text (Game.to_text()), not {_validate.show(start)}"
            )
        start_game = self._start_game(start)
        mask = options.get("reset_mask")
        if mask is not None:
            if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.shape != (self.num_envs,):
                raise _core.TaikyokuError(
                    f"options['reset_mask'] must be a numpy bool array of shape ({self.num_envs},), not {_validate.show(mask)}"
                )
        if seed is not None:
            self._core.seed(seed)
            self._np_random, self._np_random_seed = seeding.np_random(seed)
            self.action_space.seed(int(self._np_random.integers(2**31)))
        observations = self._core.reset(mask=mask, start=start_game)
        return observations, self._infos()

    def step(
        self, actions: npt.ArrayLike
    ) -> tuple[npt.NDArray[Any], npt.NDArray[np.float32], npt.NDArray[np.bool_], npt.NDArray[np.bool_], dict[str, Any]]:
        """Plays one action per env (an integer array of shape (num_envs,)); returns the batched
        (observations, rewards, terminated, truncated, infos), games that ended already restarted."""
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or not np.issubdtype(actions.dtype, np.integer):
            raise _core.TaikyokuError(
                f"step() needs an integer array of shape ({self.num_envs},), not {actions.dtype} {actions.shape}"
            )
        # Checked before the int64 conversion, which would turn a huge uint64 into a negative.
        outside = np.flatnonzero((actions < 0) | (actions >= _core.NUM_ACTIONS))
        if outside.size:
            env = int(outside[0])
            raise _core.IllegalMoveError(
                f"env {env}: action {int(actions[env])} is outside the action space [0, {_core.NUM_ACTIONS}) (nothing was played)"
            )
        observations, rewards, terminated, truncated, finished = self._core.step(actions.astype(np.int64, copy=False))
        infos = self._infos()
        if finished:
            done = np.zeros(self.num_envs, dtype=bool)
            final_obs = np.empty(self.num_envs, dtype=object)
            final_info = np.empty(self.num_envs, dtype=object)
            for index, game in finished:
                done[index] = True
                obs = game.observation(
                    dtype=self.single_observation_space.dtype, frame=self._frame, compact=self._compact
                )
                final_obs[index] = _frozen(obs)
                final_info[index] = {
                    "result": game.result,
                    "termination": game.termination,
                    "plies": game.ply,
                    "game": game,
                }
            infos["final_obs"], infos["_final_obs"] = _frozen(final_obs), _frozen(done)
            infos["final_info"], infos["_final_info"] = _frozen(final_info), _frozen(done.copy())
        return observations, rewards, terminated, truncated, infos

    def legal_actions(self) -> list[npt.NDArray[np.int64]]:
        """The sorted legal actions of every env (read-only int64 arrays)."""
        return [_frozen(a) for a in self._core.legal_actions()]

    def legal_actions_flat(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """All legal actions in one read-only int64 array plus ``num_envs + 1`` offsets (CSR
        layout): env i's are ``flat[offsets[i]:offsets[i + 1]]``."""
        flat, offsets = self._core.legal_actions_flat()
        return _frozen(flat), _frozen(offsets)

    def legal_action_mask(self) -> npt.NDArray[np.bool_]:
        """Dense (num_envs, NUM_ACTIONS) boolean mask: ~2.5 MB per env, build it only if needed."""
        return self._core.legal_action_mask()

    def random_actions(self) -> npt.NDArray[np.int64]:
        """A uniformly random legal action per env, from the native seeded stream (``seed``)."""
        return self._core.random_actions()

    def sample_legal_actions(self, rng: RNG = None) -> npt.NDArray[np.int64]:
        """A uniformly random legal action per env, int64 of shape (num_envs,).

        ``rng``: a ``numpy.random.Generator``, an integer seed, or None for the env's
        ``np_random`` (seeded by ``reset(seed=...)``).
        """
        flat, offsets = self.legal_actions_flat()
        return _sample_csr(flat, offsets, _generator(rng, lambda: self.np_random))

    def game(self, index: int) -> _core.Game:
        """A copy of env ``index``'s game."""
        return self._core.game(_validate.integer("index", index, 0, self.num_envs - 1))

    def heuristic_values(self, color: Optional[Color] = None) -> npt.NDArray[np.float32]:
        """``taikyoku.heuristic_value`` of every env's position: float32 of shape (num_envs,), in
        [-1, 1], for each env's side to move (or for ``color`` everywhere).

        A baseline or a reward-shaping term for agents trained on this env (the evaluator MCTS
        self-play uses). One call per env on a copy of its game, in a Python loop: on 2 cores, 64
        Taikyoku envs take about 3 ms, less than one ``step()`` of them.
        """
        if color is not None:
            color = _validate.choice("color", color, ("black", "white"))
        values = np.empty(self.num_envs, dtype=np.float32)
        for i in range(self.num_envs):
            values[i] = _core.heuristic_value(self._core.game(i), color)
        return values

    def render(self) -> Union[tuple[str, ...], tuple[npt.NDArray[np.uint8], ...], None]:
        """Every env's position per ``render_mode``: a tuple of text boards (``"ansi"``) or of
        (H, W, 3) uint8 pictures (``"rgb_array"``); None without a render mode."""
        if self.render_mode == "ansi":
            return tuple(render_module.ansi(self._core.game(i)) for i in range(self.num_envs))
        if self.render_mode == "rgb_array":
            return tuple(render_module.rgb_array(self._core.game(i)) for i in range(self.num_envs))
        return None

    def close_extras(self, **kwargs: Any) -> None:
        """Nothing to release: the games live in the native core, freed with the env."""
        pass
