"""Self-play at scale (docs/PERFORMANCE.md, "Self-play at scale"): thread scaling of random and
heuristic-MCTS self-play with writing, network-guided MCTS with a do-nothing numpy evaluator
against the heuristic at the same thread count, and the cost of a new Game and an env reset.

    python benchmarks/selfplay_scaling.py [--threads 1 2] [--repeat 3]

Each figure is the median of --repeat runs; runs of different settings are interleaved so that
a noisy neighbour affects them alike. Efficiency at N threads = rate(N) / (N * rate(1)).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
import timeit

import numpy as np

import taikyoku

RANDOM = dict(players="random", games=32, max_plies=2000, games_per_shard=16, seed=1)
MCTS = dict(players="mcts", games=16, max_plies=24, simulations=64, games_per_shard=16, seed=1)


def null_network(observations, legal):
    actions, offsets = legal
    return np.ones(len(actions), np.float32), np.zeros(len(offsets) - 1, np.float32)


def rate(kind: str, threads: int) -> float:
    """Plies/s (random) or simulations/s (MCTS kinds) of one run in a fresh directory."""
    with tempfile.TemporaryDirectory() as tmp:
        if kind == "random":
            summary = taikyoku.selfplay(f"{tmp}/d", threads=threads, **RANDOM)
            return summary["plies"] / summary["seconds"]
        network = kind == "network"
        summary = taikyoku.selfplay(
            f"{tmp}/d",
            threads=threads,
            evaluator=null_network if network else None,
            concurrent_games=16 if network else 32,
            **MCTS,
        )
        return summary["plies"] * MCTS["simulations"] / summary["seconds"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    kinds = ["random", "mcts", "network"]
    samples = {(k, t): [] for k in kinds for t in args.threads}
    for _ in range(args.repeat):
        for t in args.threads:
            for k in kinds:
                samples[(k, t)].append(rate(k, t))
    median = {key: statistics.median(v) for key, v in samples.items()}
    base = args.threads[0]
    for k in kinds:
        unit = "plies/s" if k == "random" else "simulations/s"
        for t in args.threads:
            efficiency = median[(k, t)] / (t / base * median[(k, base)])
            print(f"{k:8s} threads={t:2d}: {median[(k, t)]:>10,.0f} {unit}  efficiency {efficiency:.0%}")
    for t in args.threads:
        print(f"network / heuristic MCTS at {t} threads: {median[('network', t)] / median[('mcts', t)]:.0%}")
    n = 2000
    game = statistics.median(timeit.repeat(taikyoku.Game, number=n, repeat=5)) / n
    env = taikyoku.TaikyokuEnv()
    env.reset(seed=0)
    reset = statistics.median(timeit.repeat(env.reset, number=500, repeat=5)) / 500
    print(f"taikyoku.Game(): {game * 1e6:.1f} us; TaikyokuEnv.reset(): {reset * 1e6:.1f} us")
    print(time.strftime("measured %Y-%m-%d %H:%M"))


if __name__ == "__main__":
    main()
