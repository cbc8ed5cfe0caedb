"""The settings the three environments share (:class:`taikyoku.TaikyokuEnv`,
:class:`taikyoku.VectorEnv` and the PettingZoo env), checked in one place: one name per setting,
and one error per mistake whichever environment is built (a ``TaikyokuError``, a ``ValueError``,
naming the setting; an ``ImportError`` naming what to install for ``render_mode="rgb_array"``).
Each environment keeps its checked settings as ``env.config``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, Tuple, Union

from taikyoku import _core, _validate
from taikyoku import render as render_module

if TYPE_CHECKING:
    from typing_extensions import TypeAlias

    from taikyoku._core import Color, Frame

#: Who plays the other side: nobody (None), "random", "mcts", or a callable ``opponent(game) -> action``.
Opponent: TypeAlias = Union[None, str, Callable[["_core.Game"], int]]

#: The most simulations a move of the ``"mcts"`` opponent may take.
MAX_OPPONENT_SIMULATIONS = 1 << 24


@dataclass(frozen=True)
class EnvConfig:
    """An environment's settings, checked (see :meth:`check`)."""

    #: The variant's name (``taikyoku.variants()``).
    variant: str = "taikyoku"
    #: The rule options (``taikyoku.rule_options()``).
    options: Tuple[str, ...] = ()
    #: Truncate after this many plies (None: play to the end).
    max_plies: Optional[int] = None
    #: ``"raise"`` (IllegalMoveError, nothing changes) or ``"lose"`` (the mover loses at once).
    illegal_action: str = "raise"
    #: None or one of the environment's ``metadata["render_modes"]``.
    render_mode: Optional[str] = None
    #: ``"mover"`` (the board rotated for White) or ``"absolute"``.
    frame: Frame = "mover"
    #: Piece-id planes instead of one-hot planes.
    compact: bool = False
    #: The position text every episode starts from (None: the initial setup).
    start: Optional[str] = None
    #: Who plays the other side (the single-agent environments).
    opponent: Opponent = None
    #: The agent's side when there is an opponent.
    agent_color: Color = "black"
    #: Simulations per move of the ``"mcts"`` opponent.
    mcts_simulations: int = 64

    @classmethod
    def check(
        cls,
        render_modes: Sequence[str],
        *,
        variant: Any = "taikyoku",
        options: Any = None,
        max_plies: Any = None,
        illegal_action: Any = "raise",
        render_mode: Any = None,
        frame: Any = "mover",
        compact: Any = False,
        start: Any = None,
        opponent: Any = None,
        agent_color: Any = "black",
        mcts_simulations: Any = 64,
    ) -> EnvConfig:
        """The settings checked, in this order, with the first mistake raised. The variant's
        name, its options and the start text are checked by the engine when the environment
        builds its first game (its errors name the variant's own problem)."""
        if not isinstance(variant, str):
            raise _core.TaikyokuError(f"variant must be a variant name (str), not {_validate.show(variant)}")
        illegal_action = _validate.choice("illegal_action", illegal_action, _core.ILLEGAL_ACTIONS)
        if render_mode == "rgb_array":
            render_module.require_rgb()  # a clear ImportError naming what to install
        render_mode = _validate.choice("render_mode", render_mode, (None, *render_modes))
        agent_color = _validate.choice("agent_color", agent_color, ("black", "white"))
        frame = _validate.choice("frame", frame, _core.FRAMES)
        if start is not None and not isinstance(start, str):
            raise _core.TaikyokuError(
                f"start must be a position text (Game.to_text()) or None, not {_validate.show(start)}"
            )
        if not (
            opponent is None or callable(opponent) or (isinstance(opponent, str) and opponent in ("random", "mcts"))
        ):
            raise _core.TaikyokuError(
                f"unknown opponent {_validate.show(opponent)} (use None, 'random', 'mcts' or a callable)"
            )
        return cls(
            variant=variant,
            options=tuple(_validate.string_list("options", options)),
            max_plies=_validate.optional_integer("max_plies", max_plies, 1, _validate.U32_MAX),
            illegal_action=illegal_action,
            render_mode=render_mode,
            frame=frame,
            compact=_validate.boolean("compact", compact),
            start=start,
            opponent=opponent,
            agent_color=agent_color,
            mcts_simulations=_validate.integer("mcts_simulations", mcts_simulations, 1, MAX_OPPONENT_SIMULATIONS),
        )
