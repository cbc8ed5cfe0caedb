"""Type stubs of the native module taikyoku._core (Rust, pyo3)."""

import os
from typing import Any, Callable, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt
from typing_extensions import Literal, TypeAlias

from taikyoku.selfplay import SelfplaySummary

# Type aliases of this stub only (not attributes of the module at runtime: import them under
# `if TYPE_CHECKING:`). taikyoku.datasets.Frame and taikyoku.selfplay.Players/Format/Priors exist at runtime.
Square = Union[str, Tuple[int, int]]
#: The sides.
Color: TypeAlias = Literal["black", "white"]
#: How a game ended: its winner, or a draw.
Result: TypeAlias = Literal["black", "white", "draw"]
#: Why a game ended (docs/RULES.md).
Termination: TypeAlias = Literal[
    "royal_capture", "repetition", "perpetual_check", "no_moves", "max_plies", "illegal_move"
]
#: The frame of actions and observations: the side to move's view, or Black's.
Frame: TypeAlias = Literal["mover", "absolute"]
#: Dataset file formats.
Format: TypeAlias = Literal["arrow", "parquet"]

__version__: str
NUM_ACTIONS: int  # 5,101,056: 2 * PROMOTION_BLOCK
MOVE_BLOCK: int  # 1296 * 1296 actions from * 1296 + to
PROMOTION_BLOCK: (
    int  # 2,550,528 = MOVE_BLOCK + 1296 * TEMPLATE_COUNT: a promoting move's action is its unpromoted one plus this
)
TEMPLATE_COUNT: int  # 672 multi-leg templates per start square
GRID: int  # 36: every variant is padded into a 36 x 36 grid

class TaikyokuError(ValueError): ...
class IllegalMoveError(TaikyokuError): ...
class NotationError(TaikyokuError): ...
class AmbiguousMoveError(NotationError): ...
class UnknownSquareError(TaikyokuError): ...
class UnknownPieceError(TaikyokuError): ...
class PositionTextError(TaikyokuError): ...
class InternalError(TaikyokuError): ...

FRAMES: list[str]  # "mover", "absolute"
ILLEGAL_ACTIONS: list[str]  # "raise", "lose"
FORMATS: list[str]  # "arrow", "parquet"
SCHEMA_VERSION: int  # dataset layout version written (3)
READABLE_SCHEMA_VERSIONS: list[int]  # layout versions read (1, 2 and 3)
DEFAULT_SHARD_POSITIONS: int  # 100,000: the default target size of a dataset shard, in positions
ROWS_PER_BATCH: int  # 4096: rows per record batch (Arrow) or row group (Parquet) of a dataset file, at most

class Piece:
    abbrev: str  # notation code: "LN", or "+FL" when promoted
    name: str  # English name of how it moves now
    kanji: str
    color: Color
    promoted: bool
    royal: bool
    kind: str  # table key of the type it moves as
    origin: str  # table key of the type it was set up as

class Move:
    from_square: str
    to_square: str
    captures: list[str]
    promotes: bool
    notation: str
    mid_square: Optional[str]
    is_pass: bool
    is_igui: bool
    is_capture: bool

class PieceType:
    abbrev: str
    name: str
    kanji: str
    promotes_to: Optional[str]
    royal: bool
    promoted_only: bool
    range_rank: Optional[int]  # range-capture rank: who may fly over whom
    aliases: list[str]  # other names the sources give the piece (Game.place accepts them)

class Game:
    def __init__(
        self, variant: str = "taikyoku", options: Optional[Sequence[str]] = None, max_plies: Optional[int] = None
    ) -> None: ...
    @staticmethod
    def empty(
        variant: str = "taikyoku", side_to_move: Color = "black", options: Optional[Sequence[str]] = None
    ) -> Game: ...
    @staticmethod
    def from_text(text: str, variant: Optional[str] = None, options: Optional[Sequence[str]] = None) -> Game: ...
    def to_text(self, history: bool = True) -> str: ...  # history=False: the position alone
    variant_name: str
    options: list[str]
    width: int
    height: int
    side_to_move: Color
    ply: int
    move_number: int
    max_plies: Optional[int]
    is_over: bool
    result: Optional[Result]
    termination: Optional[Termination]
    repetitions: int
    hash: int
    def place(self, square: Square, piece: str, color: Color, promoted: bool = False) -> None: ...
    def remove(self, square: Square) -> Optional[Piece]: ...
    def piece_at(self, square: Square) -> Optional[Piece]: ...
    def pieces(self) -> list[tuple[str, Piece]]: ...
    def legal_moves(self) -> list[Move]: ...
    def legal_move_count(self) -> int: ...
    def moves_from(self, square: Square) -> list[Move]: ...
    def play(self, mv: Union[Move, str, int]) -> Move: ...
    def undo(self) -> Move: ...
    def royal_count(self, color: Color) -> int: ...
    def consecutive_passes(self, color: Color) -> int: ...
    def in_check(self, color: Color) -> bool: ...
    def reward(self, color: Color) -> int: ...
    def square_xy(self, square: Square) -> tuple[int, int]: ...
    rank_names: list[str]
    def compact_board(self) -> npt.NDArray[np.uint16]: ...
    def history(self) -> list[str]: ...
    def clone(self) -> Game: ...
    def forfeit(self) -> None: ...
    def legal_actions(self, frame: Frame = "mover") -> npt.NDArray[np.int64]: ...
    def _env_step(self, action: int, frame: Frame = "mover") -> npt.NDArray[np.int64]: ...
    def legal_action_mask(self, frame: Frame = "mover") -> npt.NDArray[np.bool_]: ...
    def action_of(self, mv: Union[Move, str], frame: Frame = "mover") -> int: ...
    def move_of(self, action: int, frame: Frame = "mover") -> Move: ...
    def observation(self, dtype: Any = None, frame: Frame = "mover", compact: bool = False) -> np.ndarray: ...
    def plane_count(self, compact: bool = False) -> int: ...
    def _repr_svg_(self) -> str: ...

class ObservationMemory:
    """The memory under an observation array of an ObservationWriter or VectorEnvCore (its base)."""

class ObservationWriter:
    def __init__(
        self,
        variant: str = "taikyoku",
        options: Optional[Sequence[str]] = None,
        frame: Frame = "mover",
        compact: bool = False,
        dtype: Any = None,
    ) -> None: ...
    def observe(self, game: Game, viewer: Optional[Color] = None) -> np.ndarray: ...
    @property
    def dtype(self) -> str: ...

class VectorEnvCore:
    def __init__(
        self,
        num_envs: int,
        variant: str = "taikyoku",
        options: Optional[Sequence[str]] = None,
        seed: int = 0,
        threads: Optional[int] = None,
        frame: str = "mover",
        max_plies: Optional[int] = None,
        illegal_action: str = "raise",
        compact: bool = False,
        dtype: Any = None,
        copy: bool = True,
        opponent: Union[None, str, Callable[[Game], int]] = None,  # None, "random", "mcts" or a callable
        agent_color: str = "black",
        mcts_simulations: int = 64,
        start: Optional[Game] = None,  # the position every game (re)starts from
    ) -> None: ...
    num_envs: int
    options: list[str]
    observation_shape: tuple[int, int, int]
    dtype: str
    def seed(self, seed: int) -> None: ...
    def reset(self, mask: Optional[npt.NDArray[np.bool_]] = None, start: Optional[Game] = None) -> np.ndarray: ...
    def observations_now(self) -> np.ndarray: ...
    def step(
        self, actions: npt.NDArray[np.int64]
    ) -> tuple[
        np.ndarray, npt.NDArray[np.float32], npt.NDArray[np.bool_], npt.NDArray[np.bool_], list[tuple[int, Game]]
    ]: ...
    def legal_actions(self) -> list[npt.NDArray[np.int64]]: ...
    def legal_actions_flat(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]: ...
    def legal_action_mask(self) -> npt.NDArray[np.bool_]: ...
    def random_actions(self) -> npt.NDArray[np.int64]: ...
    def sides_to_move(self) -> list[str]: ...
    def plies(self) -> npt.NDArray[np.int64]: ...
    def game(self, index: int) -> Game: ...
    threads: Optional[int]

def plane_names(
    variant: str = "taikyoku", compact: bool = False, options: Optional[Sequence[str]] = None
) -> list[str]: ...
def encode_observations(
    games: Sequence[Game], dtype: Any = None, frame: Frame = "mover", compact: bool = False
) -> np.ndarray: ...
def action_templates() -> list[tuple[list[tuple[int, int]], tuple[int, int]]]: ...
def piece_types(variant: str = "taikyoku") -> list[PieceType]: ...
def rule_options(variant: str = "taikyoku") -> list[tuple[str, str]]: ...
def variants() -> list[str]: ...
def replay_legal_actions(
    actions: npt.NDArray[np.int64],
    offsets: npt.NDArray[np.int64],
    variant: str = "taikyoku",
    options: Optional[Sequence[str]] = None,
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64]]: ...
def heuristic_value(game: Game, color: Optional[Color] = None) -> float: ...
def heuristic_priors(game: Game) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]: ...
def random_game(
    seed: int, max_plies: int = 1000, variant: str = "taikyoku", options: Optional[Sequence[str]] = None
) -> Game: ...
def check_variant(name: str, rules: str, pieces: str, setup: str) -> str: ...
def load_variant(path: str) -> str: ...
def register_variant(name: str, rules: str, pieces: str, setup: str) -> str: ...
def variant_texts(name: str) -> tuple[str, str, str]: ...
def variant_info(name: str) -> dict[str, Any]: ...
def _restore_game(
    variant: str,
    options: list[str],
    start: str,
    moves: list[tuple[Any, ...]],
    max_plies: Optional[int] = None,
    forfeited: bool = False,
) -> Game: ...  # pickle's reconstructor of a Game

# ---- self-play and datasets (rust/python/src/selfplay.rs)

def dataset_schema(
    table: Literal["games", "positions"], legal_actions: bool = False, policy: bool = False
) -> bytes: ...  # the table's Arrow schema, as an IPC stream (positions: with the optional columns asked for)
def check_dataset(
    path: Union[str, os.PathLike[str]],
) -> tuple[
    list[tuple[int, str]], list[int]
]: ...  # the resume checks: ((shard, why) per damaged shard, shards without checksums)

#: The numeric MCTS settings' ranges: {name: (integer, low, high, low_open)}.
MCTS_LIMITS: dict[str, tuple[bool, float, float, bool]]

def mcts_search(
    game: Game,
    simulations: int = 64,
    seed: int = 0,
    evaluator: Optional[Any] = None,
    root: Literal["puct", "gumbel"] = "puct",
    leaves: int = 8,
    observation: Literal["compact", "onehot"] = "compact",
    legal_actions: Literal["csr", "list"] = "csr",
    c_puct: Optional[float] = None,
    priors: Optional[Literal["captures", "uniform"]] = None,
    gumbel_considered: Optional[int] = None,
    gumbel_scale: Optional[float] = None,
    opponent_moves: Optional[Literal["parent", "leaf"]] = None,
) -> dict[str, Any]: ...
def decode_positions(
    boards: npt.NDArray[np.uint16],
    white_to_move: npt.NDArray[np.bool_],
    repetitions: npt.NDArray[np.uint8],
    ply: npt.NDArray[np.uint32],
    variant: str = "taikyoku",
    options: Optional[Sequence[str]] = None,
    dtype: Any = None,
    frame: Frame = "mover",
    compact: bool = False,
    passes: Optional[npt.NDArray[np.uint8]] = None,
    opponent_passes: Optional[npt.NDArray[np.uint8]] = None,
) -> np.ndarray: ...
def selfplay_settings(
    players: Literal["random", "mcts"] = "random",
    games: int = 8,
    seed: int = 0,
    format: Format = "arrow",
    max_plies: int = 5000,
    simulations: int = 64,
    games_per_shard: Optional[int] = None,  # None: derived from shard_positions
    variant: str = "taikyoku",
    options: Optional[Sequence[str]] = None,
    temperature: Optional[float] = None,
    temperature_plies: Optional[int] = None,
    dirichlet_alpha: Optional[float] = None,
    dirichlet_fraction: Optional[float] = None,
    c_puct: Optional[float] = None,
    priors: Optional[Literal["captures", "uniform"]] = None,
    rollout_plies: Optional[int] = None,
    evaluator_name: Optional[str] = None,
    leaves_per_game: int = 8,
    observation: Literal["compact", "onehot"] = "compact",
    reuse_tree: Optional[bool] = None,
    shard_positions: Optional[int] = None,  # None: DEFAULT_SHARD_POSITIONS (not with games_per_shard)
    store_legal_actions: bool = False,
    root: Optional[Literal["puct", "gumbel"]] = None,
    gumbel_considered: Optional[int] = None,
    gumbel_scale: Optional[float] = None,
    opponent_moves: Optional[Literal["parent", "leaf"]] = None,
) -> str: ...  # the run's settings (the manifest's "settings") as JSON
def selfplay_run(
    out: Union[str, os.PathLike[str]],
    settings: str,
    threads: Optional[int] = None,
    progress: Optional[Callable[[int], object]] = None,
    evaluator: Optional[Callable[..., Any]] = None,
    concurrent_games: int = 32,
    legal_actions: Literal["csr", "list"] = "csr",
) -> SelfplaySummary: ...
def selfplay_shards(
    out: Union[str, os.PathLike[str]], settings: str, indices: Sequence[int], threads: Optional[int] = None
) -> list[str]: ...  # the shards' manifest entries, as JSON

class DatasetWriter:
    """The driver's side of a run spread over machines (taikyoku.distributed)."""

    def __init__(self, out: Union[str, os.PathLike[str]], settings: str) -> None: ...
    @property
    def missing(self) -> list[int]: ...
    def record(self, entry: str) -> None: ...
    def finish(self) -> SelfplaySummary: ...
    def abandon(self) -> None: ...
