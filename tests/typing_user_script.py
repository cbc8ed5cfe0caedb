"""A user's script of the public API, written as a user would, with every type spelt out.

``tests/test_typing.py`` type-checks it with ``mypy --strict`` (so the package's annotations and
``_core.pyi`` must describe what the API returns precisely enough for strict code) and runs it, so
the types it states are also what the calls return. It writes only into the directory it is
given (``sys.argv[1]``, default a new temporary one).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Dict, Hashable, List, Optional, Tuple

import numpy as np
import numpy.typing as npt

import taikyoku
import taikyoku.datasets as tds
from taikyoku.selfplay import MCTS_KNOBS, SelfplaySummary, mcts_defaults


def play_a_little(plies: int) -> taikyoku.Game:
    game = taikyoku.Game()
    for _ in range(plies):
        moves: List[taikyoku.Move] = game.legal_moves()
        played: taikyoku.Move = game.play(moves[0])
        assert played.notation
    side: str = game.side_to_move
    assert side in ("black", "white")
    result: Optional[str] = game.result
    assert result is None and game.termination is None
    return game


def actions_and_observations(game: taikyoku.Game) -> Tuple[int, npt.NDArray[np.int64]]:
    legal: npt.NDArray[np.int64] = game.legal_actions()
    absolute: npt.NDArray[np.int64] = game.legal_actions(frame="absolute")
    assert legal.shape == absolute.shape
    action = int(legal[0])
    move: taikyoku.Move = game.move_of(action)
    assert game.action_of(move) == action
    planes: np.ndarray = game.observation(compact=True)
    board: npt.NDArray[np.uint16] = game.compact_board()
    assert planes.shape[:2] == (taikyoku.GRID, taikyoku.GRID) and board.size == taikyoku.GRID**2
    return action, legal


def generate(root: Path) -> SelfplaySummary:
    summary: SelfplaySummary = taikyoku.selfplay(
        root / "data",
        players="mcts",
        games=3,
        seed=1,
        max_plies=6,
        simulations=4,
        games_per_shard=2,
        temperature=0.5,
        c_puct=2.0,
        reuse_tree=False,
    )
    games: int = summary["games"]
    repaired: List[str] = summary["repaired"]
    seconds: float = summary["seconds"]
    assert games == 3 and repaired == [] and seconds >= 0
    defaults: Dict[str, object] = mcts_defaults()
    assert set(defaults) <= set(MCTS_KNOBS) | {"simulations"}
    return summary


def read(root: Path) -> None:
    ds: tds.Dataset = tds.open(root / "data")
    assert len(ds) == ds.num_games == 3
    train, validation = ds.split(val_fraction=0.34, seed=0)
    assert len(train) + len(validation) == 3
    ids: Optional[npt.NDArray[np.uint64]] = validation.game_ids
    assert ids is not None and len(ids) == 1
    info: Dict[str, object] = ds.summary()
    assert info["games"] == 3
    observations: np.ndarray = ds.observations(range(2), compact=True, frame="absolute")
    assert observations.shape[0] == 2
    decoded: np.ndarray = tds.decode(ds.positions.slice(0, 2), "taikyoku", compact=True)
    assert decoded.shape == observations.shape
    for batch in train.batches(batch_size=4, shuffle=True, seed=0, compact=True):
        actions: np.ndarray = batch["action"]
        assert actions.dtype == np.int64
    metadata: Dict[str, object] = tds.file_metadata(ds.positions_files[0])
    assert metadata["table"] == "positions"
    checked: Dict[str, int] = validation.verify()
    assert checked["games"] == 1
    final: taikyoku.Game = ds.replay(0)
    assert final.ply == ds.game(0)["plies"]


def search_and_matches() -> None:
    from taikyoku.arena import MatchResult, MctsPlayer, RandomPlayer, match, ratings

    game = taikyoku.Game(variant="tenjiku")
    action: int = taikyoku.mcts_action(game, 8, seed=1, root="gumbel")
    found: taikyoku.SearchResult = taikyoku.mcts_search(game, 8)
    assert game.move_of(action) in game.legal_moves() and found.simulations == 8
    policy: npt.NDArray[np.float32] = taikyoku.mcts_search(game, 8, root="gumbel").policy
    assert abs(float(policy.sum()) - 1.0) < 1e-4
    result: MatchResult = match(MctsPlayer(8), RandomPlayer(), games=2, variant="tenjiku", openings=2, max_plies=40)
    score: float = result.score
    assert result.games == 2 and 0.0 <= score <= 1.0
    elo: Dict[Hashable, float] = ratings([("a", "b", 3, 1, 1)])
    assert elo["a"] == 0.0


def main(argv: List[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(tempfile.mkdtemp())
    game = play_a_little(4)
    actions_and_observations(game)
    generate(root)
    read(root)
    search_and_matches()
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
