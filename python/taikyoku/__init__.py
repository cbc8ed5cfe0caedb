"""Taikyoku shogi: a rules engine written in Rust, with a Python API.

>>> import taikyoku
>>> g = taikyoku.Game()
>>> len(g.pieces())
804
>>> g.side_to_move
'black'
"""

from taikyoku._core import (
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
    piece_types,
    random_game,
    rule_options,
    variants,
)

__all__ = [
    "AmbiguousMoveError",
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
]
