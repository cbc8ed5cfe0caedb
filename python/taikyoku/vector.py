"""Vectorized environment: N games stepped in one native call (rayon, GIL released).

``taikyoku.VectorEnv`` is a :class:`gymnasium.vector.VectorEnv` with same-step auto-reset: when
a game ends, the returned observation is already the first one of the next game, and
``infos["final_info"]`` / ``infos["final_obs"]`` describe the finished one (Gymnasium's
``AutoresetMode.SAME_STEP``). The agent plays both sides: each reward is from the view of the
side that moved in that env.
"""

from __future__ import annotations

import os
from typing import Any, Optional

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector import VectorEnv as GymVectorEnv
from gymnasium.vector.utils import batch_space

from taikyoku import _core, _validate
from taikyoku.env import observation_space

__all__ = ["VectorEnv"]

#: The most games one VectorEnv holds (the native side's limit).
MAX_ENVS = 1 << 20


def _physical_memory() -> Optional[int]:
    """Bytes of RAM of this machine, or None where the OS does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def _check_buffer_size(num_envs: int, variant: str, compact: bool, dtype, options: list) -> None:
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


class VectorEnv(GymVectorEnv):
    """``num_envs`` games of ``variant`` stepped together.

    Args:
        num_envs: number of games.
        variant: the variant's name.
        seed: seed of ``random_actions()``, an integer in [0, 2**64) (None: drawn from the OS).
        threads: worker threads (None: rayon's default, one per core).
        max_plies: truncate each game after this many plies (1 to 2**32 - 1, or None).
        illegal_action: ``"raise"`` (IllegalMoveError naming the env; nothing is played in any
            env) or ``"lose"`` (that env's mover loses).
        frame, compact, dtype: observation and action frame and layout, as for ``TaikyokuEnv``.
        copy: return a fresh observation array each step (default). ``copy=False`` returns the
            env's own buffer, rewritten in place by the next step: much faster (only changed
            entries are written), for loops that consume the observation before stepping again.
        options: rule options.

    Every argument is checked before anything is built: integers (numpy's too, never bools or
    floats) in range, known names, and an observation buffer that fits in this machine's memory;
    a bad one raises TaikyokuError naming it.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": ["ansi"]}

    def __init__(
        self,
        num_envs: int,
        variant: str = "taikyoku",
        seed: Optional[int] = None,
        threads: Optional[int] = None,
        max_plies: Optional[int] = None,
        illegal_action: str = "raise",
        frame: str = "mover",
        compact: bool = False,
        dtype=None,
        copy: bool = True,
        options=None,
        render_mode: Optional[str] = None,
    ):
        num_envs = _validate.integer("num_envs", num_envs, 1, MAX_ENVS)
        if not isinstance(variant, str):
            raise _core.TaikyokuError(f"variant must be a variant name (str), not {_validate.show(variant)}")
        render_mode = _validate.choice("render_mode", render_mode, (None, "ansi"))
        illegal_action = _validate.choice("illegal_action", illegal_action, _core.ILLEGAL_ACTIONS)
        frame = _validate.choice("frame", frame, _core.FRAMES)
        compact = _validate.boolean("compact", compact)
        copy = _validate.boolean("copy", copy)
        options = _validate.string_list("options", options)
        threads = _validate.optional_integer("threads", threads, 1, 256)
        max_plies = _validate.optional_integer("max_plies", max_plies, 1, _validate.U32_MAX)
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0])
        seed = _validate.integer("seed", seed, 0, _validate.U64_MAX)
        _check_buffer_size(num_envs, variant, compact, dtype, options)
        self._core = _core.VectorEnvCore(
            num_envs,
            variant=variant,
            options=options,
            seed=seed,
            threads=threads,
            frame=frame,
            max_plies=max_plies,
            illegal_action=illegal_action,
            compact=compact,
            dtype=dtype,
            copy=copy,
        )
        self.num_envs = int(num_envs)
        self.variant = variant
        self.render_mode = render_mode
        self.single_observation_space = observation_space(variant, compact, self._core.dtype, options)
        self.single_action_space = spaces.Discrete(_core.NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._frame = frame
        self._compact = compact

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        """Restarts every game. ``seed`` reseeds ``random_actions()`` (games have no randomness)."""
        if seed is not None:
            self._core.seed(_validate.integer("seed", seed, 0, _validate.U64_MAX))
        observations = self._core.reset()
        return observations, {"legal_actions": self._core.legal_actions()}

    def step(self, actions):
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or not np.issubdtype(actions.dtype, np.integer):
            raise _core.TaikyokuError(f"step() needs an integer array of shape ({self.num_envs},), not {actions.dtype} {actions.shape}")
        # Checked before the int64 conversion, which would turn a huge uint64 into a negative.
        outside = np.flatnonzero((actions < 0) | (actions >= _core.NUM_ACTIONS))
        if outside.size:
            env = int(outside[0])
            raise _core.IllegalMoveError(
                f"env {env}: action {int(actions[env])} is outside the action space [0, {_core.NUM_ACTIONS}) (nothing was played)"
            )
        observations, rewards, terminated, truncated, finished = self._core.step(actions.astype(np.int64, copy=False))
        infos: dict[str, Any] = {"legal_actions": self._core.legal_actions()}
        if finished:
            done = np.zeros(self.num_envs, dtype=bool)
            final_obs = np.empty(self.num_envs, dtype=object)
            final_info = np.empty(self.num_envs, dtype=object)
            for index, game in finished:
                done[index] = True
                final_obs[index] = game.observation(dtype=self.single_observation_space.dtype, frame=self._frame, compact=self._compact)
                final_info[index] = {"result": game.result, "termination": game.termination, "plies": game.ply, "game": game}
            infos["final_obs"], infos["_final_obs"] = final_obs, done
            infos["final_info"], infos["_final_info"] = final_info, done
        return observations, rewards, terminated, truncated, infos

    def legal_actions(self) -> list[np.ndarray]:
        """The sorted legal actions of every env."""
        return self._core.legal_actions()

    def legal_actions_flat(self) -> tuple[np.ndarray, np.ndarray]:
        """All legal actions in one array plus ``num_envs + 1`` offsets (CSR layout)."""
        return self._core.legal_actions_flat()

    def legal_action_mask(self) -> np.ndarray:
        """Dense (num_envs, NUM_ACTIONS) boolean mask: ~2.5 MB per env, build it only if needed."""
        return self._core.legal_action_mask()

    def random_actions(self) -> np.ndarray:
        """A uniformly random legal action per env, from the seeded stream."""
        return self._core.random_actions()

    def game(self, index: int) -> _core.Game:
        """A copy of env ``index``'s game."""
        return self._core.game(_validate.integer("index", index, 0, self.num_envs - 1))

    def render(self):
        if self.render_mode == "ansi":
            from taikyoku import render

            return tuple(render.ansi(self._core.game(i)) for i in range(self.num_envs))
        return None

    def close_extras(self, **kwargs):
        pass
