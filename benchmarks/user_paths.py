"""What users call from Python, this build against another (issue 27): the Gym step, VectorEnv(64),
Game.legal_moves(), random and MCTS self-play with writing, random Tenjiku play, and self-play's
scaling from 1 to 2 threads. Figures in docs/PERFORMANCE.md.

Run: python benchmarks/user_paths.py (--commit REV | --baseline DIR) [--rounds 3] [--only NAME ...]

--commit REV builds REV's wheel in a temporary git worktree (``maturin build --release``: minutes) and
installs it under ``benchmarks/.builds/REV`` (kept: a second run reuses it). --baseline DIR names a
directory already holding the other build's ``taikyoku`` package (``pip install --no-deps --target DIR
taikyoku-*.whl``). Each round runs every workload in a fresh process, baseline first, then this build
(the package this Python imports); the medians of the rounds and their ratio are printed with the
issue's target. Both builds play the same games (the same seeds and actions), and each workload
reports what it played (positions, moves); the script fails if the builds disagree, except for MCTS
self-play, whose default searches changed (``OWN_GAMES``). Without either option it measures this build
alone.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent

# name: (what is counted, target ratio against the baseline)
WORKLOADS: dict[str, tuple[str, float]] = {
    "gym_step": ("Gym env.step/s, Taikyoku, default observation", 3.0),
    "vector_step": ("VectorEnv(64) env-steps/s, defaults", 3.0),
    "legal_moves_opening": ("legal_moves() calls/s, opening", 10.0),
    "legal_moves_midgame": ("legal_moves() calls/s, after 500 random plies", 10.0),
    "selfplay_random": ("random selfplay plies/s, 1 thread, Arrow, written", 2.0),
    "selfplay_mcts": ("heuristic MCTS selfplay simulations/s, 64 sims, 400 plies", 2.0),
    "tenjiku_random": ("random Tenjiku plies/s", 2.0),
    "selfplay_scaling": ("random selfplay, 32 games, defaults: 2 threads / 1 thread", 1.8),
}
# The scaling target is a ratio within one build, not against the baseline.
WITHIN_BUILD = {"selfplay_scaling"}
# Where the builds may play different games: the heuristic's default counts the opponent's moves at a
# leaf's parent since issue 27 (`opponent_moves="parent"`), which changes the searches; the rate is per
# simulation, and the positions each build played are printed.
OWN_GAMES = {"selfplay_mcts"}


def timed(seconds: float, step: Callable[[], Any]) -> tuple[float, int]:
    """Calls `step` for about `seconds`; returns (calls per second, calls)."""
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        step()
        count += 1
    return count / (time.perf_counter() - start), count


def gym_step() -> dict[str, float]:
    import gymnasium as gym
    import numpy as np

    import taikyoku  # noqa: F401  (registers the envs)

    env = gym.make("taikyoku/Taikyoku-v0")
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    state = {"info": info, "plies": 0}

    def step() -> None:
        legal = np.asarray(state["info"]["legal_actions"])
        _, _, terminated, truncated, info = env.step(int(legal[rng.integers(legal.size)]))
        state["plies"] += 1
        if terminated or truncated:
            _, info = env.reset()
        state["info"] = info

    for _ in range(20):
        step()
    rate, _ = timed(3.0, step)
    return {"rate": rate}


def vector_step() -> dict[str, float]:
    import taikyoku

    env = taikyoku.VectorEnv(64, seed=0)
    env.reset(seed=0)

    def step() -> None:
        env.step(env.random_actions())

    for _ in range(3):
        step()
    rate, _ = timed(4.0, step)
    return {"rate": rate * 64}


def legal_moves(plies: int) -> dict[str, float]:
    import taikyoku

    game = taikyoku.random_game(7, max_plies=plies) if plies else taikyoku.Game()
    game.max_plies = None  # the game goes on: its moves are listed
    moves = len(game.legal_moves())
    rate, _ = timed(2.0, game.legal_moves)
    return {"rate": rate, "check": moves}


def selfplay(
    players: str, games: int, max_plies: int, threads: int | None, seed: int = 1, **extra: Any
) -> dict[str, float]:
    import taikyoku

    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        summary = taikyoku.selfplay(out, players, games=games, seed=seed, threads=threads, max_plies=max_plies, **extra)
        seconds = time.perf_counter() - start
    return {"seconds": seconds, "check": summary["positions"]}


def measure(name: str) -> dict[str, float]:
    if name == "gym_step":
        return gym_step()
    if name == "vector_step":
        return vector_step()
    if name == "legal_moves_opening":
        return legal_moves(0)
    if name == "legal_moves_midgame":
        return legal_moves(500)
    if name == "selfplay_random":
        r = selfplay("random", 4, 3000, 1)
        return {"rate": r["check"] / r["seconds"], "check": r["check"]}
    if name == "selfplay_mcts":
        # Heuristic MCTS games end by royal capture after a dozen plies or so: 16 of them, for
        # seeds 1, 2 and 3 (a third of a second each here: one alone reads the machine's noise).
        runs = [selfplay("mcts", 16, 400, 1, simulations=64, seed=seed) for seed in (1, 2, 3)]
        positions = sum(r["check"] for r in runs)
        return {"rate": positions * 64 / sum(r["seconds"] for r in runs), "check": positions}
    if name == "tenjiku_random":
        import taikyoku

        seeds = iter(range(10**6))
        plies = {"n": 0}

        def game() -> None:
            plies["n"] += taikyoku.random_game(next(seeds), max_plies=2000, variant="tenjiku").ply

        start = time.perf_counter()
        timed(3.0, game)
        return {"rate": plies["n"] / (time.perf_counter() - start)}
    if name == "selfplay_scaling":
        one = selfplay("random", 32, 5000, 1)
        two = selfplay("random", 32, 5000, 2)
        assert one["check"] == two["check"]
        return {"rate": one["seconds"] / two["seconds"], "check": one["check"]}
    raise ValueError(f"unknown workload {name!r}")


def build_commit(rev: str) -> str:
    """The package of commit `rev`, built in a temporary worktree and installed once."""
    commit = subprocess.run(
        ["git", "rev-parse", "--verify", f"{rev}^{{commit}}"], cwd=ROOT, capture_output=True, text=True
    )
    if commit.returncode != 0:
        sys.exit(f"not a commit: {rev}")
    package = ROOT / "benchmarks" / ".builds" / commit.stdout.strip()[:12]
    if (package / "taikyoku").is_dir():
        return str(package)
    with tempfile.TemporaryDirectory(prefix="taikyoku-user-paths-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "worktree", "add", "-q", "--detach", str(tree), rev], cwd=ROOT, check=True)
        try:
            env = {**os.environ, "CARGO_TARGET_DIR": str(Path(tmp) / "target")}
            wheels = Path(tmp) / "wheels"
            maturin = ["maturin", "build", "--release", "-m", "rust/python/Cargo.toml", "--out", str(wheels)]
            subprocess.run(maturin, cwd=tree, env=env, check=True)
            shutil.rmtree(package, ignore_errors=True)
            pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(package)]
            subprocess.run([*pip, *map(str, wheels.glob("*.whl"))], check=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)
    return str(package)


def run(name: str, path: str | None) -> dict[str, float]:
    env = dict(os.environ)
    if path:  # ahead of the rest of the path, which may hold the dependencies
        env["PYTHONPATH"] = os.pathsep.join(p for p in (path, env.get("PYTHONPATH")) if p)
    out = subprocess.run(
        [sys.executable, __file__, "--child", name], env=env, capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        sys.exit(f"{name} failed ({'baseline' if path else 'this build'}):\n{out.stderr}")
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    baseline = parser.add_mutually_exclusive_group()
    baseline.add_argument("--commit", help="build this commit's package and measure against it")
    baseline.add_argument("--baseline", help="directory holding the baseline build's taikyoku package")
    parser.add_argument("--only", nargs="+", choices=sorted(WORKLOADS), help="these workloads alone")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child)))
        return
    if args.commit:
        args.baseline = build_commit(args.commit)
    builds = {"this": None} if args.baseline is None else {"baseline": args.baseline, "this": None}
    for name in args.only or list(WORKLOADS):
        what, target = WORKLOADS[name]
        results: dict[str, list[dict[str, float]]] = {build: [] for build in builds}
        for _ in range(args.rounds):
            for build, path in builds.items():
                results[build].append(run(name, path))
        checks = {build: {r.get("check") for r in rs} for build, rs in results.items()}
        if len({frozenset(c) for c in checks.values()}) != 1 and name not in OWN_GAMES:
            sys.exit(f"{name}: the builds played different games: {checks}")
        medians = {build: statistics.median(r["rate"] for r in rs) for build, rs in results.items()}
        line = ", ".join(f"{build} {value:,.2f}" for build, value in medians.items())
        if name in OWN_GAMES:
            line += " (positions: " + ", ".join(f"{b} {sorted(c)}" for b, c in checks.items()) + ")"
        if name in WITHIN_BUILD:
            verdict = "met" if medians["this"] >= target else "not met"
            print(f"{what}: {line} (target >= {target}x in this build: {verdict})", flush=True)
        elif args.baseline is not None:
            ratio = medians["this"] / medians["baseline"]
            verdict = "met" if ratio >= target else "not met"
            print(f"{what}: {line}, ratio {ratio:.2f}x (target >= {target}x: {verdict})", flush=True)
        else:
            print(f"{what}: {line}", flush=True)


if __name__ == "__main__":
    main()
