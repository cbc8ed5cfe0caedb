"""Regenerates the committed sample datasets (datasets/README.md §12).

Run ``python datasets/samples/regenerate.py`` after a change of rules, seeding or schema (the test
``test_the_samples_regenerate_identically`` says when). The manifest is written by the engine
itself, so its key order and bytes are the engine's.
"""

from __future__ import annotations

import shutil
from pathlib import Path

#: The arguments of ``taikyoku.selfplay`` for each sample.
SAMPLES = {
    "random-tiny": dict(players="random", games=2, seed=0, max_plies=60, format="arrow", games_per_shard=1),
    "mcts-tiny": dict(
        players="mcts", games=2, seed=0, max_plies=8, simulations=16, format="parquet", games_per_shard=2
    ),
}


def main() -> None:
    import taikyoku

    here = Path(__file__).resolve().parent
    for name, arguments in SAMPLES.items():
        shutil.rmtree(here / name, ignore_errors=True)
        summary = taikyoku.selfplay(here / name, **arguments)
        print(f"{name}: {summary['games']} games, {summary['positions']} positions, {summary['bytes']} bytes")


if __name__ == "__main__":
    main()
