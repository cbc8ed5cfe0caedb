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

``info["legal_actions"]`` is a :class:`LegalActions`: the sorted legal actions, read-only, which
``np.asarray`` turns into an int64 array without copying. It is not itself an ndarray so that
Gymnasium's ``SyncVectorEnv`` / ``AsyncVectorEnv`` batch it into an object array (one entry per
env) instead of failing on arrays of different lengths.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Optional, Union

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from taikyoku import _core, _validate
from taikyoku import render as render_module
from taikyoku._env_config import EnvConfig, Opponent
from taikyoku.search import mcts_action

if TYPE_CHECKING:
    from gymnasium.spaces.space import MaskNDArray

    from taikyoku._core import Color, Frame

__all__ = ["LegalActionSpace", "LegalActions", "TaikyokuEnv", "observation_space"]


def observation_space(
    variant: str = "taikyoku",
    compact: bool = False,
    dtype: Optional[npt.DTypeLike] = None,
    options: Optional[Sequence[str]] = None,
) -> spaces.Box:
    """The Box of one observation: (36, 36, P) of the layout and dtype."""
    planes = len(_core.plane_names(variant, compact=compact, options=options))
    dtype = np.dtype(dtype if dtype is not None else (np.uint16 if compact else np.uint8))
    high = 255
    if compact:
        high = max(255, len(_core.piece_types(variant)))
    return spaces.Box(low=0, high=high, shape=(_core.GRID, _core.GRID, planes), dtype=dtype)


class LegalActions(Sequence[np.int64]):
    """The sorted legal actions of a position: a read-only sequence of int64 actions.

    It behaves as the read-only int64 array it wraps for reading: ``len``, ``in`` (a binary
    search), indexing and slicing (numpy results), iteration, and the array's attributes and
    methods (``dtype``, ``size``, ``flags``, ``tolist()``, ``copy()``, ...). ``np.asarray(la)``
    is that array, read-only and without a copy (``np.array(la)`` is a writable copy), and numpy
    accepts it wherever it takes an array (``logits[la]``, ``np.isin(a, la)``). Writing raises
    ``ValueError`` as for a read-only array.

    It is deliberately not an ``ndarray``: Gymnasium's ``SyncVectorEnv`` and ``AsyncVectorEnv``
    batch an ndarray info into one fixed-shape array, which fails for lists of different lengths;
    any other object is batched into an object array, ``infos["legal_actions"][i]`` for env i.
    Two of them compare equal (``==`` is a ``bool``) when they hold the same actions. They pickle.
    """

    __slots__ = ("_array",)

    _array: npt.NDArray[np.int64]

    def __init__(self, actions: npt.ArrayLike) -> None:
        if isinstance(actions, np.ndarray) and not actions.flags.writeable:
            array = np.asarray(actions, dtype=np.int64)  # already read-only: shared, not copied
        else:
            array = np.array(actions, dtype=np.int64)  # the caller's writable data: a copy
        if array.ndim != 1:
            raise _core.TaikyokuError(f"legal actions are a 1-d list, not of shape {array.shape}")
        array.flags.writeable = False
        object.__setattr__(self, "_array", array)

    @classmethod
    def _of(cls, array: npt.NDArray[np.int64]) -> LegalActions:
        """Wraps the env's own sorted, read-only 1-d int64 array as it is (no checks, no copy)."""
        legal = object.__new__(cls)
        object.__setattr__(legal, "_array", array)
        return legal

    @property
    def array(self) -> npt.NDArray[np.int64]:
        """The read-only int64 array (no copy)."""
        return self._array

    @property
    def __array_struct__(self) -> Any:
        # What numpy looks for first: np.asarray(la) is then a view at once, without probing
        # (through __getattr__, an exception each) for the protocols this class does not have.
        return self._array.__array_struct__

    def __array__(self, dtype: Optional[npt.DTypeLike] = None, copy: Optional[bool] = None) -> npt.NDArray[Any]:
        if copy:
            return self._array.astype(dtype if dtype is not None else self._array.dtype, copy=True)
        if dtype is not None and np.dtype(dtype) != self._array.dtype:
            if copy is False:
                raise ValueError(f"LegalActions are int64: converting them to {np.dtype(dtype)} needs a copy")
            return self._array.astype(dtype)
        return self._array

    def __len__(self) -> int:
        return self._array.size

    def __getitem__(self, index: Any) -> Any:
        return self._array[index]

    def __setitem__(self, index: Any, value: Any) -> None:
        raise ValueError("assignment destination is read-only (legal actions are the env's; copy them to change)")

    def __delitem__(self, index: Any) -> None:
        raise ValueError("assignment destination is read-only (legal actions are the env's; copy them to change)")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"LegalActions are read-only: cannot set {name!r}")

    def __iter__(self) -> Iterator[np.int64]:
        return iter(self._array)

    def __reversed__(self) -> Iterator[np.int64]:
        return iter(self._array[::-1])

    def __contains__(self, action: object) -> bool:
        try:
            value = _validate.integer("action", action)
        except (TypeError, ValueError):
            return False
        index = int(np.searchsorted(self._array, value)) if -(2**63) <= value < 2**63 else self._array.size
        return index < self._array.size and int(self._array[index]) == value

    def index(self, action: Any, *args: Any) -> int:
        """The position of ``action`` (a binary search), as ``Sequence.index``."""
        if action in self and not args:
            return int(np.searchsorted(self._array, int(action)))
        return super().index(action, *args)

    def count(self, action: Any) -> int:
        """1 if ``action`` is legal, else 0 (the actions are distinct)."""
        return int(action in self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LegalActions):
            return bool(np.array_equal(self._array, other._array))
        return NotImplemented

    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    def __getattr__(self, name: str) -> Any:
        # The array's attributes and methods (dtype, size, flags, tolist, copy, ...). Private
        # names are not forwarded (copy and pickle probe them before __init__ has run).
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._array, name)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | {n for n in dir(self._array) if not n.startswith("_")})

    def __reduce__(self) -> tuple[type[LegalActions], tuple[npt.NDArray[np.int64]]]:
        return (LegalActions, (self._array,))

    def __copy__(self) -> LegalActions:
        return self

    def __deepcopy__(self, memo: Optional[dict[int, Any]]) -> LegalActions:
        return self

    def __repr__(self) -> str:
        return f"LegalActions({np.array2string(self._array, separator=', ', threshold=12)}, n={self._array.size})"


class LegalActionSpace(spaces.Discrete):
    """``Discrete(NUM_ACTIONS)`` whose ``sample()`` draws a legal action of the current position.

    With ~2.5 million actions and a few hundred legal ones, a uniform sample of the whole space
    is almost never legal; sampling the legal ones keeps the usual Gymnasium random-agent loop
    working. ``sample(mask=...)`` keeps the standard masked behaviour, and ``contains`` is the
    plain Discrete test.
    """

    def __init__(
        self, legal_actions: Callable[[], npt.NDArray[np.int64]], seed: Union[int, np.random.Generator, None] = None
    ):
        super().__init__(_core.NUM_ACTIONS, seed=seed)
        self._legal_actions = legal_actions

    def sample(self, mask: Optional[MaskNDArray] = None, probability: Optional[MaskNDArray] = None) -> np.int64:
        """A legal action of the current position, uniformly (any action when there is none);
        with ``mask`` or ``probability``, Discrete's own sampling."""
        if mask is not None or probability is not None:
            return super().sample(mask=mask, probability=probability)
        legal = self._legal_actions()
        if len(legal) == 0:
            return super().sample()
        return np.int64(legal[self.np_random.integers(len(legal))])

    def __deepcopy__(self, memo: Optional[dict[int, Any]]) -> LegalActionSpace:
        # A space describes the env; copies keep asking the same env for its legal actions.
        copy = LegalActionSpace(self._legal_actions)
        copy.np_random.bit_generator.state = self.np_random.bit_generator.state
        return copy

    def __reduce__(self) -> tuple[type[spaces.Discrete], tuple[np.int64]]:
        # Pickled (AsyncVectorEnv sends the spaces to its workers to compare them), it is the
        # plain Discrete it equals: a copy in another process has no position to sample from.
        return (spaces.Discrete, (self.n,))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, spaces.Discrete) and other.n == self.n and other.start == self.start

    def __hash__(self) -> int:
        return hash((spaces.Discrete, self.n))


#: "rgb_array" where its rasteriser (resvg-py and pillow) is installed: the modes in metadata
#: are those that work here (gymnasium's env checker renders each of them).
_RGB_MODES: list[str] = ["rgb_array"] if render_module.rgb_available() else []


class TaikyokuEnv(gymnasium.Env[npt.NDArray[Any], np.int64]):
    """Taikyoku shogi (or a relative) as a Gymnasium environment.

    Args:
        variant: the variant's name (``taikyoku.variants()``).
        opponent: None (the agent plays both sides), ``"random"``, ``"mcts"``, or a callable
            ``opponent(game) -> action``.
        agent_color: the agent's side when there is an opponent (``"black"`` or ``"white"``).
        max_plies: truncate after this many plies, at least 1 (None: play to the end).
        illegal_action: ``"raise"`` (IllegalMoveError, nothing changes) or ``"lose"`` (the seed's
            rule: the mover loses at once, reward -1).
        render_mode: None, ``"ansi"`` (text board), ``"svg"`` (SVG document string),
            or ``"rgb_array"`` (an (H, W, 3) uint8 picture, for ``gymnasium.wrappers.RecordVideo``;
            needs resvg-py and pillow).
        frame: ``"mover"`` (board rotated for White; default) or ``"absolute"``.
        compact: piece-id planes instead of one-hot planes.
        dtype: observation dtype (uint8 one-hot / uint16 compact by default; float32 on request).
        options: rule options (``taikyoku.rule_options()``).
        mcts_simulations: simulations per move of the ``"mcts"`` opponent.
        start: position text (``Game.to_text()``) to start every episode from, instead of the
            initial setup; ``reset(options={"start": text})`` overrides it for one episode.

    ``info`` holds ``legal_actions`` (a read-only :class:`LegalActions`), ``to_play`` and
    ``ply``, and once the game is over ``result`` and ``termination``.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi", "svg", *_RGB_MODES], "render_fps": 4}

    #: Every setting, checked (shared with VectorEnv and the PettingZoo env).
    config: EnvConfig
    #: The variant's name.
    variant: str
    #: The rule options (``config.options``, as a list).
    rule_options: list[str]
    #: The ply limit (None: play to the end).
    max_plies: Optional[int]
    #: ``"raise"`` or ``"lose"``.
    illegal_action: str
    #: ``"mover"`` or ``"absolute"``.
    frame: Frame
    #: Piece-id planes instead of one-hot planes.
    compact: bool
    #: The agent's side when there is an opponent.
    agent_color: Color
    #: The position text every episode starts from (None: the initial setup).
    start: Optional[str]
    #: The game being played.
    game: _core.Game
    observation_space: spaces.Box
    action_space: LegalActionSpace

    def __init__(
        self,
        variant: str = "taikyoku",
        opponent: Opponent = None,
        agent_color: Color = "black",
        max_plies: Optional[int] = None,
        illegal_action: str = "raise",
        render_mode: Optional[str] = None,
        frame: Frame = "mover",
        compact: bool = False,
        dtype: Optional[npt.DTypeLike] = None,
        options: Optional[Sequence[str]] = None,
        mcts_simulations: int = 64,
        start: Optional[str] = None,
    ) -> None:
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
        self.config = config
        self.variant = config.variant
        self.rule_options = list(config.options)
        self.max_plies = config.max_plies
        self.illegal_action = config.illegal_action
        self.render_mode = config.render_mode
        self.frame = config.frame
        self.compact = config.compact
        self.agent_color = config.agent_color
        self.start = config.start
        # Checks the variant, options, start and max_plies at once, with the engine's own errors.
        self.game = self._new_game()
        # And the dtype: the engine refuses those it cannot write (before the space is built).
        # The writer returns a new array every step, in memory reused from freed observations.
        self._writer = _core.ObservationWriter(
            self.variant, options=self.rule_options, frame=self.frame, compact=self.compact, dtype=dtype
        )
        self.observation_space = observation_space(self.variant, self.compact, dtype, self.rule_options)  # pyright: ignore[reportIncompatibleVariableOverride]
        self._dtype = self.observation_space.dtype
        self.action_space = LegalActionSpace(self._current_legal_actions)  # pyright: ignore[reportIncompatibleVariableOverride]
        self._refresh()
        self._opponent = self._make_opponent(config.opponent, config.mcts_simulations)

    # -- helpers ----------------------------------------------------------------------------

    def _make_opponent(self, opponent: Opponent, simulations: int) -> Optional[Callable[[_core.Game], Any]]:
        if opponent is None or callable(opponent):
            return opponent
        if opponent == "random":
            return lambda game: int(self.np_random.choice(game.legal_actions()))
        if opponent == "mcts":
            return lambda game: mcts_action(game, simulations, seed=int(self.np_random.integers(2**63)))
        raise AssertionError(f"EnvConfig.check let opponent {opponent!r} through")

    def _new_game(self, start: Optional[str] = None) -> _core.Game:
        start = self.start if start is None else start
        if start is None:
            return _core.Game(self.variant, options=self.rule_options, max_plies=self.max_plies)
        game = _core.Game.from_text(start, variant=self.variant, options=self.rule_options)
        game.max_plies = self.max_plies
        return game

    def _current_legal_actions(self) -> npt.NDArray[np.int64]:
        return self._legal

    def _observe(self) -> npt.NDArray[Any]:
        # game.observation(dtype=self._dtype, frame=self.frame, compact=self.compact), faster.
        return self._writer.observe(self.game)

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            # The env's own array, read-only, in a wrapper that vector envs batch (see LegalActions).
            "legal_actions": LegalActions._of(self._legal),
            "to_play": self.game.side_to_move,
            "ply": self.game.ply,
        }
        if self.game.is_over:
            info["result"] = self.game.result
            info["termination"] = self.game.termination
        return info

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

    def _reward_for(self, color: Color) -> float:
        return float(self.game.reward(color))

    # -- Gymnasium API ----------------------------------------------------------------------

    def reset(
        self, *, seed: Optional[int] = None, options: Optional[dict[str, Any]] = None
    ) -> tuple[npt.NDArray[Any], dict[str, Any]]:
        """Starts a new game; ``options={"start": text}`` starts this one from a position text
        (``Game.to_text()``) instead of the env's ``start``. Other option keys are ignored."""
        # Everything that can fail comes first: a bad seed or start text changes nothing.
        if seed is not None:
            seed = _validate.integer("seed", seed, 0)
        start = None
        if options and options.get("start") is not None:
            start = options["start"]
            if not isinstance(start, str):
                raise _core.TaikyokuError(
                    f"options['start'] must be a position text (Game.to_text()), not {_validate.show(start)}"
                )
        game = self._new_game(start)
        super().reset(seed=seed)
        if seed is not None:
            self.action_space.seed(int(self.np_random.integers(2**31)))
        self.game = game
        self._refresh()
        self._opponent_moves()
        return self._observe(), self._info()

    def step(self, action: Union[int, np.integer[Any]]) -> tuple[npt.NDArray[Any], float, bool, bool, dict[str, Any]]:
        """Plays ``action``: an integer (numpy's too) of the action space. Anything else (a float,
        even an integral one, as for Gymnasium's ``Discrete.contains``; a string; a bool) raises
        IllegalMoveError and changes nothing, whatever ``illegal_action`` says."""
        if self.game.is_over:
            raise _core.IllegalMoveError("the game is over: call reset()")
        mover = self.game.side_to_move
        # Integers only (numpy's too): never a float, a numeric string or a bool, which int()
        # would have turned into some action. Refused whatever illegal_action says: not a move.
        action = _validate.integer("action", action, error=_core.IllegalMoveError)
        try:
            if not 0 <= action < _core.NUM_ACTIONS:
                raise _core.IllegalMoveError(f"action {action} is outside the action space [0, {_core.NUM_ACTIONS})")
            # Plays and lists the next legal actions in one call, describing no Move; an
            # illegal action raises an IllegalMoveError that names it, changing nothing.
            legal = self.game._env_step(action, self.frame)
        except _core.IllegalMoveError:
            if self.illegal_action != "lose":
                raise
            self.game.forfeit()
            self._refresh()
        else:
            legal.flags.writeable = False
            self._legal = legal
        self._opponent_moves()
        viewer = mover if self._opponent is None else self.agent_color
        reward = self._reward_for(viewer)
        truncated = self.game.termination == "max_plies"
        terminated = self.game.is_over and not truncated
        return self._observe(), reward, terminated, truncated, self._info()

    def render(self) -> Union[str, npt.NDArray[np.uint8], None]:
        """The position per ``render_mode``: text (``"ansi"``), an SVG document (``"svg"``) or an
        (H, W, 3) uint8 picture (``"rgb_array"``)."""
        if self.render_mode == "ansi":
            return render_module.ansi(self.game)
        if self.render_mode == "svg":
            return render_module.svg(self.game)
        if self.render_mode == "rgb_array":
            return render_module.rgb_array(self.game)
        gymnasium.logger.warn("render() called without a render_mode; use render_mode='ansi', 'svg' or 'rgb_array'")
        return None

    def legal_action_mask(self) -> npt.NDArray[np.bool_]:
        """Dense boolean mask of the legal actions (NUM_ACTIONS entries: build it only if needed)."""
        return self.game.legal_action_mask(self.frame)
