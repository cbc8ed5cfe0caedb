"""Game.legal_moves() calls per second, Taikyoku, at the opening and after 500 random plies, with
and without reading every move's notation (issue 27; figures in docs/PERFORMANCE.md).

Run: python benchmarks/legal_moves.py [--rounds 3] [--baseline DIR]

With --baseline DIR (a directory holding another build's ``taikyoku`` package, e.g. a copy of
python/taikyoku made before a change), each round runs both builds in fresh processes, baseline
first, and the medians and ratios are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CASES = ("opening", "opening, notations", "midgame", "midgame, notations")


def measure(seconds: float = 1.5) -> dict:
    import taikyoku

    def rate(fn) -> float:
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            fn()
            count += 1
        return count / (time.perf_counter() - start)

    opening = taikyoku.Game()
    midgame = taikyoku.random_game(7, max_plies=500)
    midgame.max_plies = None  # the game goes on: its moves are listed
    return {
        "opening": rate(opening.legal_moves),
        "opening, notations": rate(lambda: [m.notation for m in opening.legal_moves()]),
        "midgame": rate(midgame.legal_moves),
        "midgame, notations": rate(lambda: [m.notation for m in midgame.legal_moves()]),
    }


def run(path: str | None) -> dict:
    env = dict(os.environ)
    if path:
        env["PYTHONPATH"] = path
    out = subprocess.run([sys.executable, __file__, "--child"], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", help="directory holding the baseline build's taikyoku package")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure()))
        return
    builds = {"this": None} if args.baseline is None else {"baseline": args.baseline, "this": None}
    rounds = {name: [] for name in builds}
    for _ in range(args.rounds):
        for name, path in builds.items():
            rounds[name].append(run(path))
    for case in CASES:
        medians = {name: statistics.median(r[case] for r in rounds[name]) for name in builds}
        line = ", ".join(f"{name} {value:,.0f}/s" for name, value in medians.items())
        if args.baseline is not None:
            line += f", ratio {medians['this'] / medians['baseline']:.1f}x"
        print(f"legal_moves() {case}: {line}")


if __name__ == "__main__":
    main()
