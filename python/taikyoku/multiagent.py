"""PettingZoo (AEC) environment: two agents, ``"black"`` and ``"white"``, take turns.

>>> from taikyoku.multiagent import pettingzoo_env
>>> env = pettingzoo_env(max_plies=2)
>>> env.reset(seed=0)
>>> for agent in env.agent_iter():
...     obs, reward, terminated, truncated, info = env.last()
...     done = terminated or truncated
...     env.step(None if done else env.action_space(agent).sample(obs["action_mask"]))
>>> env.unwrapped.game.termination
'max_plies'

Perspective.  Every agent sees the game from its own side, as PettingZoo's chess and go do,
so one network can play both colours:

- ``frame="mover"`` (default): the board is rotated 180° for White, and actions are in the
  same frame (the engine's mover frame).  ``frame="absolute"``: the board and the actions are
  as Black sees them, for both agents.
- The piece planes named ``mover/…`` (``mover_piece`` compact) always hold the *observing
  agent's* pieces and ``opponent/…`` the other side's, whoever is to move.  The engine encodes
  for the side to move, so the waiting agent gets that observation rotated and with the two
  sets of planes swapped.
- The constant planes keep the engine's meaning: ``white_to_move`` says whether White is to
  move (so the waiting agent can tell it is not its turn), ``repetitions`` and the move number
  are the game's.
- ``action_mask`` (int8, length ``NUM_ACTIONS``) is all zeros except for the agent to move of
  an unfinished game; ``infos[agent]["legal_actions"]`` lists the same actions, sorted.

Rewards are +1 to the winner and -1 to the loser when the game ends (0 each for a draw); a
game cut by ``max_plies`` is truncated for both with 0.  The game has no chance element:
``reset(seed=...)`` only seeds ``env.np_random`` (kept for API compatibility); seed the
action spaces yourself for reproducible random play.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Union

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from taikyoku import _core, _validate
from taikyoku import render as render_module
from taikyoku._core import NUM_ACTIONS, Game, IllegalMoveError
from taikyoku._env_config import EnvConfig

if TYPE_CHECKING:
    from taikyoku._core import Frame

__all__ = ["TaikyokuAEC", "pettingzoo_env"]

_AGENTS = ("black", "white")
#: "rgb_array" where resvg-py and pillow are installed (pettingzoo's render_test renders every
#: mode in metadata).
_RGB_MODES: List[str] = ["rgb_array"] if render_module.rgb_available() else []


def _plane_highs(variant: str, compact: bool, dtype: np.dtype[Any]) -> npt.NDArray[Any]:
    """Largest value of each plane, so the observation Box is tight (useful for scaling).

    Piece ids in compact planes go up to the number of piece types; the repetition count is
    clipped to the dtype by the engine; the two move-number planes are bytes; the rest are
    0/1 flags.
    """
    names = _core.plane_names(variant, compact=compact)
    kinds = sum(name.startswith("mover/") for name in _core.plane_names(variant, compact=False))
    highs: List[int] = []
    for name in names:
        if name.endswith("_piece"):
            highs.append(kinds)
        elif name == "repetitions":
            highs.append(np.iinfo(dtype).max)
        elif name.startswith("move_number"):
            highs.append(255)
        else:
            highs.append(1)
    return np.asarray(highs, dtype=dtype)


def _check_start(start: Any) -> None:
    if start is not None and not isinstance(start, str):
        raise _core.TaikyokuError(
            f"start must be a position text (Game.to_text()) or None, not {_validate.show(start)}"
        )


class TaikyokuAEC(AECEnv[str, Dict[str, Any], Any]):
    """Taikyoku shogi for two agents, ``"black"`` (moves first) and ``"white"``.

    Args:
        variant: engine variant name (``taikyoku.variants()``).
        options: rule options (``taikyoku.rule_options()``).
        max_plies: truncate the game after this many plies (``None``: never).
        illegal_action: ``"raise"`` raises ``IllegalMoveError`` and leaves everything as it
            was (the caller can retry); ``"lose"`` ends the game, the offender getting -1.
        render_mode: ``"ansi"`` or ``"svg"`` (both return a ``str``), ``"rgb_array"`` (an
            (H, W, 3) uint8 picture; needs resvg-py and pillow), ``"human"`` (the text board
            printed after every reset and step, and by ``render()``, which returns None), or
            ``None``.
        frame: ``"mover"`` (each agent from its own side) or ``"absolute"`` (Black's view).
        compact: uint16 piece-id planes (8 planes) instead of uint8 one-hot ones.
        start: a position text (``Game.to_text()``) to start from instead of the initial
            setup; ``reset(options={"start": text})`` overrides it for one episode.
    """

    metadata: Dict[str, Any] = {
        "name": "taikyoku_v0",
        "render_modes": ["ansi", "svg", "human", *_RGB_MODES],
        "is_parallelizable": False,
        "render_fps": 1,
    }

    #: The settings shared with TaikyokuEnv and VectorEnv, checked.
    config: EnvConfig
    #: The variant's name.
    variant: str
    #: The rule options.
    options: List[str]
    #: The ply limit (None: never truncated).
    max_plies: Optional[int]
    #: ``"raise"`` or ``"lose"``.
    illegal_action: str
    #: None, ``"ansi"``, ``"svg"``, ``"human"`` or ``"rgb_array"``.
    render_mode: Optional[str]
    #: ``"mover"`` or ``"absolute"``.
    frame: Frame
    #: Piece-id planes instead of one-hot planes.
    compact: bool
    #: The position text every episode starts from (None: the initial setup).
    start: Optional[str]
    #: The game being played.
    game: Game
    possible_agents: List[str]
    agents: List[str]
    observation_spaces: Dict[str, spaces.Dict]
    action_spaces: Dict[str, spaces.Discrete]
    #: Seeded by ``reset(seed=...)``; the game itself has no randomness.
    np_random: np.random.Generator
    rewards: Dict[str, float]
    terminations: Dict[str, bool]
    truncations: Dict[str, bool]
    infos: Dict[str, Dict[str, Any]]
    agent_selection: str

    def __init__(
        self,
        variant: str = "taikyoku",
        options: Optional[Sequence[str]] = None,
        max_plies: Optional[int] = None,
        illegal_action: str = "raise",
        render_mode: Optional[str] = None,
        frame: Frame = "mover",
        compact: bool = False,
        start: Optional[str] = None,
    ) -> None:
        super().__init__()
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
        )
        self.config = config
        self.variant = config.variant
        self.options = list(config.options)
        self.max_plies = config.max_plies
        self.illegal_action = config.illegal_action
        self.render_mode = config.render_mode
        self.frame = config.frame
        self.compact = config.compact
        self.start = config.start
        # Built now so a bad variant, option or start text fails at construction, not later.
        self.game = self._new_game(start)

        self.possible_agents = list(_AGENTS)
        self.agents = []
        names = _core.plane_names(variant, compact=self.compact)
        self._dtype = np.dtype(np.uint16 if self.compact else np.uint8)
        # Writes each agent's view (see observe) in a new array, in memory reused from freed ones.
        self._writer = _core.ObservationWriter(
            self.variant, options=self.options, frame=self.frame, compact=self.compact
        )
        shape = (_core.GRID, _core.GRID, len(names))
        highs = np.broadcast_to(_plane_highs(variant, self.compact, self._dtype), shape)
        # One space object per agent, made once: api_test (and seeding) needs the same object.
        self.observation_spaces = {  # pyright: ignore[reportIncompatibleVariableOverride]
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(0, np.array(highs), shape, self._dtype),
                    "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
                }
            )
            for agent in self.possible_agents
        }
        self.action_spaces = {agent: spaces.Discrete(NUM_ACTIONS) for agent in self.possible_agents}  # pyright: ignore[reportIncompatibleVariableOverride]
        self._legal = np.empty(0, dtype=np.int64)
        self.np_random, _ = seeding.np_random(None)

    # ------------------------------------------------------------------------------------------
    # Spaces

    def observation_space(self, agent: str) -> spaces.Dict:
        """The agent's observation space: a Dict of ``"observation"`` (Box) and ``"action_mask"``."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        """The agent's action space: ``Discrete(NUM_ACTIONS)``."""
        return self.action_spaces[agent]

    # ------------------------------------------------------------------------------------------
    # Episode

    def _new_game(self, start: Optional[str]) -> Game:
        if start is None:
            game = Game(self.variant, options=self.options, max_plies=self.max_plies)
        else:
            game = Game.from_text(start, variant=self.variant, options=self.options)
            if self.max_plies is not None:
                game.max_plies = self.max_plies
        return game

    def reset(self, seed: Optional[int] = None, options: Optional[Dict[str, Any]] = None) -> None:
        """Starts a new game; ``options={"start": text}`` starts this one from a position.

        Other option keys are ignored (PettingZoo's api_test passes arbitrary ones).
        """
        # Everything that can fail comes first: a bad seed or start text changes nothing.
        if seed is not None:
            seed = _validate.integer("seed", seed, 0)
        start = self.start
        if options and options.get("start") is not None:
            start = options["start"]
            _check_start(start)
        game = self._new_game(start)
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        self.game = game
        self.agents = list(self.possible_agents)
        self.rewards = {agent: 0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos = {agent: {} for agent in self.agents}
        self.agent_selection = self.game.side_to_move
        self._skip_agent_selection = None
        self._sync()
        if self.render_mode == "human":
            self.render()

    def _sync(self) -> None:
        """Reads the game's state into the AEC dicts after a move (or a reset)."""
        game = self.game
        if not game.is_over:
            legal = game.legal_actions(frame=self.frame)
            legal.setflags(write=False)  # shared with infos; the action mask is built from it
            self._legal = legal
            for agent in self.agents:
                self.infos[agent] = {"legal_actions": legal} if agent == game.side_to_move else {}
            return
        self._legal = np.empty(0, dtype=np.int64)
        truncated = game.termination == "max_plies"
        for agent in self.agents:
            self.infos[agent] = {"result": game.result, "termination": game.termination}
            if truncated:
                self.truncations[agent] = True
            else:
                self.terminations[agent] = True
                self.rewards[agent] = game.reward(agent)

    def step(self, action: Any) -> None:
        """Plays the action of ``agent_selection`` (``None`` once that agent is done)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        try:
            self._play(action)
        except IllegalMoveError as error:
            if self.illegal_action == "raise":
                raise  # nothing has changed yet: the caller may try another action
            self.game.forfeit()
            self._cumulative_rewards[agent] = 0
            self._clear_rewards()
            self._sync()
            self.infos[agent]["illegal_action"] = action
            self.infos[agent]["error"] = str(error)
        else:
            self._cumulative_rewards[agent] = 0
            self._clear_rewards()
            self._sync()
        self.agent_selection = self._other(agent)
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _play(self, action: Any) -> None:
        """Plays an action of the env's frame, raising IllegalMoveError with the game intact."""
        # Integers, numpy's too (as spaces sample them); never a bool, a float or a string.
        value = _validate.integer("action", action, error=IllegalMoveError)
        if not 0 <= value < NUM_ACTIONS:
            raise IllegalMoveError(f"action {value} is outside the action space [0, {NUM_ACTIONS})")
        if self.frame == "mover":
            self.game.play(value)
        else:
            self.game.play(self.game.move_of(value, frame=self.frame))

    @staticmethod
    def _other(agent: str) -> str:
        return "white" if agent == "black" else "black"

    # ------------------------------------------------------------------------------------------
    # Observations

    def observe(self, agent: str) -> Dict[str, npt.NDArray[Any]]:
        """The board as ``agent`` sees it, and its action mask (see the module docstring)."""
        game = self.game
        # For the waiting agent, the engine writes the side to move's observation with every
        # mover… plane swapped with its opponent… partner and, in the mover frame, the board
        # turned to this agent (tests/test_incremental_observations.py checks it that way).
        obs = self._writer.observe(game, viewer=agent)
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        if agent == game.side_to_move and not game.is_over:
            mask[self._legal] = 1
        return {"observation": obs, "action_mask": mask}

    # ------------------------------------------------------------------------------------------
    # Rendering

    def render(self) -> Union[None, str, npt.NDArray[np.uint8]]:
        """The position per ``render_mode``: ANSI text, SVG, an (H, W, 3) uint8 picture
        (``"rgb_array"``), or None after printing the text board (``"human"``)."""
        if self.render_mode is None:
            gymnasium.logger.warn(
                "You are calling render method without specifying any render mode "
                "(pass render_mode='ansi', 'svg', 'rgb_array' or 'human' to the environment)."
            )
            return None
        if self.render_mode == "ansi":
            return render_module.ansi(self.game)
        if self.render_mode == "rgb_array":
            return render_module.rgb_array(self.game)
        if self.render_mode == "human":
            render_module.print_board(self.game)
            return None
        return render_module.svg(self.game)

    def close(self) -> None:
        """Nothing to release (no window, no subprocess); present as PettingZoo expects."""


def pettingzoo_env(variant: str = "taikyoku", *, wrap: bool = True, **kwargs: Any) -> AECEnv[str, Dict[str, Any], Any]:
    """A :class:`TaikyokuAEC` (keyword arguments as its constructor).

    By default it is wrapped in PettingZoo's ``OrderEnforcingWrapper``, as the classic
    environments are, which turns calls made before ``reset()`` into clear errors;
    ``env.unwrapped`` is the TaikyokuAEC (with its ``game``).  ``wrap=False`` returns it bare.
    The out-of-bounds and illegal-move wrappers are not used: the environment already checks
    actions itself, per ``illegal_action``.
    """
    env = TaikyokuAEC(variant=variant, **kwargs)
    return OrderEnforcingWrapper(env) if wrap else env
