"""Taikyoku shogi: a rules engine written in Rust, with a Python API.

>>> import taikyoku
>>> g = taikyoku.Game()
>>> len(g.pieces())
804
>>> g.side_to_move
'black'
"""

from typing import TYPE_CHECKING, Any, Dict

from taikyoku import (
    arena,  # after the names it calls (mcts_action)
    datasets,
)
from taikyoku._core import (
    GRID,
    MOVE_BLOCK,
    NUM_ACTIONS,
    PROMOTION_BLOCK,
    TEMPLATE_COUNT,
    AmbiguousMoveError,
    Game,
    IllegalMoveError,
    Move,
    NotationError,
    Piece,
    PieceType,
    PositionTextError,
    TaikyokuError,
    UnknownPieceError,
    UnknownSquareError,
    __version__,
    action_templates,
    encode_observations,
    heuristic_priors,
    heuristic_value,
    piece_types,
    plane_names,
    random_game,
    rule_options,
    variants,
)
from taikyoku.env import TaikyokuEnv
from taikyoku.registry import GYM_IDS, load_variant, variant_info
from taikyoku.search import SearchResult, mcts_action, mcts_search
from taikyoku.selfplay import selfplay
from taikyoku.vector import VectorEnv

if TYPE_CHECKING:
    from pettingzoo import AECEnv


def pettingzoo_env(variant: str = "taikyoku", **kwargs: Any) -> "AECEnv[str, Dict[str, Any], Any]":
    """A PettingZoo AEC environment with agents "black" and "white" (needs pettingzoo)."""
    from taikyoku.multiagent import pettingzoo_env as make

    return make(variant=variant, **kwargs)


__all__ = [
    "AmbiguousMoveError",
    "GRID",
    "MOVE_BLOCK",
    "PROMOTION_BLOCK",
    "NUM_ACTIONS",
    "TEMPLATE_COUNT",
    "TaikyokuEnv",
    "VectorEnv",
    "action_templates",
    "encode_observations",
    "datasets",
    "pettingzoo_env",
    "selfplay",
    "plane_names",
    "Game",
    "IllegalMoveError",
    "Move",
    "NotationError",
    "Piece",
    "PieceType",
    "PositionTextError",
    "TaikyokuError",
    "UnknownPieceError",
    "UnknownSquareError",
    "__version__",
    "piece_types",
    "random_game",
    "rule_options",
    "variants",
    "load_variant",
    "variant_info",
    "heuristic_priors",
    "heuristic_value",
    "GYM_IDS",
    "SearchResult",
    "arena",
    "mcts_action",
    "mcts_search",
]
