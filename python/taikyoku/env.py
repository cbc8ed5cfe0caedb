"""Gymnasium environment: Taikyoku shogi with 36×36×P observations and integer actions.

Registered as ``"taikyoku/Taikyoku-v0"`` when :mod:`taikyoku` is imported::

    import gymnasium as gym
    import taikyoku

    env = gym.make("taikyoku/Taikyoku-v0", max_plies=200)
    obs, info = env.reset(seed=0)
    done = False
    while not done:
        action = env.action_space.sample()  # a random *legal* action
        obs, reward, terminated, truncated, info = env.step(action)
        done = terminated or truncated

The agent plays both sides by default (rewards from the view of the side that just moved), or
one side against a built-in opponent (``opponent="random"`` or ``"mcts"``, or any callable that
takes a :class:`taikyoku.Game` and returns an action). See docs/ACTIONS.md for the spaces.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Union

import gymnasium
import numpy as np
from gymnasium import spaces

from taikyoku import _core, _validate

__all__ = ["LegalActionSpace", "TaikyokuEnv", "observation_space"]

Opponent = Union[None, str, Callable[["_core.Game"], int]]


def observation_space(variant: str = "taikyoku", compact: bool = False, dtype=None, options=None) -> spaces.Box:
    """The Box of one observation: (36, 36, P) of the layout and dtype."""
    planes = len(_core.plane_names(variant, compact=compact, options=options))
    dtype = np.dtype(dtype if dtype is not None else (np.uint16 if compact else np.uint8))
    high = 255
    if compact:
        high = max(255, len(_core.piece_types(variant)))
    return spaces.Box(low=0, high=high, shape=(_core.GRID, _core.GRID, planes), dtype=dtype)


class LegalActionSpace(spaces.Discrete):
    """``Discrete(NUM_ACTIONS)`` whose ``sample()`` draws a legal action of the current position.

    With ~2.5 million actions and a few hundred legal ones, a uniform sample of the whole space
    is almost never legal; sampling the legal ones keeps the usual Gymnasium random-agent loop
    working. ``sample(mask=...)`` keeps the standard masked behaviour, and ``contains`` is the
    plain Discrete test.
    """

    def __init__(self, legal_actions: Callable[[], np.ndarray], seed=None):
        super().__init__(_core.NUM_ACTIONS, seed=seed)
        self._legal_actions = legal_actions

    def sample(self, mask=None, probability=None) -> np.int64:
        if mask is not None or probability is not None:
            return super().sample(mask=mask, probability=probability)
        legal = self._legal_actions()
        if len(legal) == 0:
            return super().sample()
        return np.int64(legal[self.np_random.integers(len(legal))])

    def __deepcopy__(self, memo):
        # A space describes the env; copies keep asking the same env for its legal actions.
        copy = LegalActionSpace(self._legal_actions)
        copy.np_random.bit_generator.state = self.np_random.bit_generator.state
        return copy

    def __eq__(self, other):
        return isinstance(other, spaces.Discrete) and other.n == self.n and other.start == self.start

    def __hash__(self):
        return hash((spaces.Discrete, self.n))


class TaikyokuEnv(gymnasium.Env):
    """Taikyoku shogi (or a relative) as a Gymnasium environment.

    Args:
        variant: the variant's name (``taikyoku.variants()``).
        opponent: None (the agent plays both sides), ``"random"``, ``"mcts"``, or a callable
            ``opponent(game) -> action``.
        agent_color: the agent's side when there is an opponent (``"black"`` or ``"white"``).
        max_plies: truncate after this many plies, at least 1 (None: play to the end).
        illegal_action: ``"raise"`` (IllegalMoveError, nothing changes) or ``"lose"`` (the seed's
            rule: the mover loses at once, reward -1).
        render_mode: None, ``"ansi"`` (text board) or ``"svg"`` (SVG document string).
        frame: ``"mover"`` (board rotated for White; default) or ``"absolute"``.
        compact: piece-id planes instead of one-hot planes.
        dtype: observation dtype (uint8 one-hot / uint16 compact by default; float32 on request).
        options: rule options (``taikyoku.rule_options()``).
        mcts_simulations: simulations per move of the ``"mcts"`` opponent.
        start: position text (``Game.to_text()``) to start every episode from, instead of the
            initial setup.
    """

    metadata = {"render_modes": ["ansi", "svg"], "render_fps": 4}

    def __init__(
        self,
        variant: str = "taikyoku",
        opponent: Opponent = None,
        agent_color: str = "black",
        max_plies: Optional[int] = None,
        illegal_action: str = "raise",
        render_mode: Optional[str] = None,
        frame: str = "mover",
        compact: bool = False,
        dtype=None,
        options=None,
        mcts_simulations: int = 64,
        start: Optional[str] = None,
    ):
        if not isinstance(variant, str):
            raise _core.TaikyokuError(f"variant must be a variant name (str), not {_validate.show(variant)}")
        illegal_action = _validate.choice("illegal_action", illegal_action, _core.ILLEGAL_ACTIONS)
        render_mode = _validate.choice("render_mode", render_mode, (None, *self.metadata["render_modes"]))
        agent_color = _validate.choice("agent_color", agent_color, ("black", "white"))
        frame = _validate.choice("frame", frame, _core.FRAMES)
        if start is not None and not isinstance(start, str):
            raise _core.TaikyokuError(f"start must be a position text (Game.to_text()) or None, not {_validate.show(start)}")
        self.variant = variant
        self.rule_options = _validate.string_list("options", options)
        self.max_plies = _validate.optional_integer("max_plies", max_plies, 1, _validate.U32_MAX)
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        self.frame = frame
        self.compact = _validate.boolean("compact", compact)
        self.agent_color = agent_color
        self.start = start
        # Checks the variant, options, start and max_plies at once, with the engine's own errors.
        self.game = self._new_game()
        # And the dtype: the engine refuses those it cannot write (before the space is built).
        self.game.observation(dtype=dtype, frame=frame, compact=self.compact)
        self.observation_space = observation_space(variant, self.compact, dtype, self.rule_options)
        self._dtype = self.observation_space.dtype
        self.action_space = LegalActionSpace(self._current_legal_actions)
        self._refresh()
        self._opponent = self._make_opponent(opponent, mcts_simulations)

    # -- helpers ----------------------------------------------------------------------------

    def _make_opponent(self, opponent: Opponent, simulations: int):
        if opponent is None or callable(opponent):
            return opponent
        if opponent == "random":
            return lambda game: int(self.np_random.choice(game.legal_actions()))
        if opponent == "mcts":
            simulations = _validate.integer("mcts_simulations", simulations, 1, _validate.U32_MAX)
            return lambda game: _core.mcts_action(game, simulations, seed=int(self.np_random.integers(2**63)))
        raise _core.TaikyokuError(f"unknown opponent {_validate.show(opponent)} (use None, 'random', 'mcts' or a callable)")

    def _new_game(self) -> "_core.Game":
        if self.start is None:
            return _core.Game(self.variant, options=self.rule_options, max_plies=self.max_plies)
        game = _core.Game.from_text(self.start, variant=self.variant, options=self.rule_options)
        game.max_plies = self.max_plies
        return game

    def _current_legal_actions(self) -> np.ndarray:
        return self._legal

    def _observe(self) -> np.ndarray:
        return self.game.observation(dtype=self._dtype, frame=self.frame, compact=self.compact)

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "legal_actions": self._legal,
            "to_play": self.game.side_to_move,
            "ply": self.game.ply,
        }
        if self.game.is_over:
            info["result"] = self.game.result
            info["termination"] = self.game.termination
        return info

    def _is_legal(self, action: int) -> bool:
        index = int(np.searchsorted(self._legal, action))
        return index < self._legal.size and int(self._legal[index]) == action

    def _refresh(self) -> None:
        # Read-only: the same array is info["legal_actions"] and what step() checks against, so
        # a caller shuffling or overwriting it must get an error, not break the next step.
        self._legal = self.game.legal_actions(self.frame)
        self._legal.flags.writeable = False

    def _opponent_moves(self) -> None:
        """Lets the opponent play while it is its turn and the game goes on."""
        while self._opponent is not None and not self.game.is_over and self.game.side_to_move != self.agent_color:
            action = self._opponent(self.game.clone())
            self.game.play(_validate.integer("the opponent's action", action, error=_core.IllegalMoveError))
            self._refresh()

    def _reward_for(self, color: str) -> float:
        return float(self.game.reward(color))

    # -- Gymnasium API ----------------------------------------------------------------------

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        if seed is not None:
            seed = _validate.integer("seed", seed, 0)
        super().reset(seed=seed)
        if seed is not None:
            self.action_space.seed(int(self.np_random.integers(2**31)))
        self.game = self._new_game()
        self._refresh()
        self._opponent_moves()
        return self._observe(), self._info()

    def step(self, action):
        """Plays ``action``: an integer (numpy's too) of the action space. Anything else (a float,
        even an integral one, as for Gymnasium's ``Discrete.contains``; a string; a bool) raises
        IllegalMoveError and changes nothing, whatever ``illegal_action`` says."""
        if self.game.is_over:
            raise _core.IllegalMoveError("the game is over: call reset()")
        mover = self.game.side_to_move
        # Integers only (numpy's too): never a float, a numeric string or a bool, which int()
        # would have turned into some action. Refused whatever illegal_action says: not a move.
        action = _validate.integer("action", action, error=_core.IllegalMoveError)
        in_space = 0 <= action < _core.NUM_ACTIONS
        if in_space and self._is_legal(action):
            self.game.play(action if self.frame == "mover" else self.game.move_of(action, frame=self.frame))
        elif self.illegal_action == "lose":
            self.game.forfeit()
        elif not in_space:
            raise _core.IllegalMoveError(f"action {action} is outside the action space [0, {_core.NUM_ACTIONS})")
        else:
            self.game.move_of(action, frame=self.frame)  # raises IllegalMoveError naming the action
            raise _core.IllegalMoveError(f"action {action} is not legal in this position")
        self._refresh()
        self._opponent_moves()
        viewer = mover if self._opponent is None else self.agent_color
        reward = self._reward_for(viewer)
        truncated = self.game.termination == "max_plies"
        terminated = self.game.is_over and not truncated
        return self._observe(), reward, terminated, truncated, self._info()

    def render(self):
        from taikyoku import render

        if self.render_mode == "ansi":
            return render.ansi(self.game)
        if self.render_mode == "svg":
            return render.svg(self.game)
        gymnasium.logger.warn("render() called without a render_mode; use render_mode='ansi' or 'svg'")
        return None

    def legal_action_mask(self) -> np.ndarray:
        """Dense boolean mask of the legal actions (NUM_ACTIONS entries: build it only if needed)."""
        return self.game.legal_action_mask(self.frame)
