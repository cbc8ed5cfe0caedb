#!/usr/bin/env python3
"""The engine's hot paths at this checkout against an earlier commit, in one run (issue 13).

    python benchmarks/compare_commits.py BASE_REV [--runs 7] [--callgrind]

Builds BASE_REV in a temporary git worktree with this checkout's measuring examples copied in
(`rust/engine/examples/{generation,playout}.rs`, `rust/search/examples/search.rs`: older commits
may lack them; they use only long-standing public APIs), then runs each workload on both builds,
A B A B ..., and prints the medians of the time each example reports (set-up excluded) and the
ratio. With --callgrind it also counts instructions per unit (a generation, a ply, a simulation)
under valgrind, set-up subtracted: the machine-independent figure for docs/PERFORMANCE.md.

Every workload prints a checksum or a move count; the script fails if the two builds disagree,
so a speed-up that changed the games is caught here too. One change of the searches was meant: since
issue 27 the heuristic counts the opponent's moves at a leaf's parent (`OpponentMoves::Parent`), so
against an earlier base the MCTS workloads search differently and are compared per simulation, each
build's own simulations counted.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = [
    "rust/engine/examples/generation.rs",
    "rust/engine/examples/playout.rs",
    "rust/search/examples/search.rs",
    "rust/search/examples/mcts_selfplay.rs",
]

# name, example, arguments, arguments of the set-up-only run, units per run (or None: the run
# prints them, `(\d+) simulations`), unit, regex of the time it prints (value, unit; per unit for
# mcts_selfplay), regex of the result both builds must agree on.
WORKLOADS = [
    (
        "opening generation",
        "generation",
        ["100000", "taikyoku", "0"],
        ["0", "taikyoku", "0"],
        100000,
        "generation",
        r"([\d.]+)(ns|µs|ms) per generation",
        r"^(\d+) moves",
    ),
    (
        "midgame generation (200 plies)",
        "generation",
        ["50000", "taikyoku", "200"],
        ["0", "taikyoku", "200"],
        50000,
        "generation",
        r"([\d.]+)(ns|µs|ms) per generation",
        r"^(\d+) moves",
    ),
    (
        "MCTS, capture priors (200 plies)",
        "search",
        ["20", "200"],
        ["0", "200"],
        20 * 400,
        "simulation",
        r"([\d.]+)(µs|ms|s) each",
        r"checksum (\w+)",
    ),
    (
        "MCTS, uniform priors (opening)",
        "search",
        ["20", "0", "uniform"],
        ["0", "0", "uniform"],
        20 * 400,
        "simulation",
        r"([\d.]+)(µs|ms|s) each",
        r"checksum (\w+)",
    ),
    # As heuristic MCTS `selfplay` plays (issue 27): 64 simulations a move, tree reuse, noise,
    # games of up to 400 plies (seeds 1-4), so the searches run to the end of real games.
    (
        "MCTS self-play, 64 sims (4 games)",
        "mcts_selfplay",
        ["4", "400", "64"],
        ["0", "400", "64"],
        None,
        "simulation",
        r"([\d.]+)(µs|ms|s) each",
        r"checksum (\w+)",
    ),
    (
        "random play, Taikyoku",
        "playout",
        ["60000", "taikyoku"],
        ["0", "taikyoku"],
        60000,
        "ply",
        r"in ([\d.]+)(µs|ms|s),",
        r"checksum (\w+)",
    ),
    # As the criterion bench `random_playout/1000_plies`: new games (set-up included), cut at 1000 plies.
    (
        "random play, 1000-ply games",
        "playout",
        ["40000", "taikyoku", "1000"],
        ["0", "taikyoku"],
        40000,
        "ply",
        r"in ([\d.]+)(µs|ms|s),",
        r"checksum (\w+)",
    ),
]
SCALE = {"ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "s": 1.0}


def build(tree: Path, target: Path, required: bool) -> dict[str, Path]:
    """The examples' binaries. At the base commit an example that does not build (an API it
    uses is newer) is left out, and its workloads are skipped; at this checkout all must build."""
    binaries = {}
    for crate, example in [
        ("taikyoku-engine", "generation"),
        ("taikyoku-engine", "playout"),
        ("taikyoku-search", "search"),
        ("taikyoku-search", "mcts_selfplay"),
    ]:
        done = subprocess.run(
            ["cargo", "build", "--release", "-q", "-p", crate, "--example", example],
            cwd=tree,
            check=required,
            env={**os.environ, "CARGO_TARGET_DIR": str(target)},
        )
        if done.returncode == 0:
            binaries[example] = target / "release" / "examples" / example
        else:
            print(f"{example} does not build at the base commit: its workloads are skipped", file=sys.stderr)
    return binaries


def run(binary: Path, args: list[str], time_re: str, result_re: str) -> tuple[float, str]:
    out = subprocess.run([str(binary), *args], capture_output=True, text=True, check=True).stdout
    value, unit = re.search(time_re, out).groups()
    return float(value) * SCALE[unit], re.search(result_re, out, re.M).group(1), out


def instructions(binary: Path, args: list[str]) -> tuple[int, str]:
    """Instructions counted by callgrind, and what the run printed."""
    with tempfile.NamedTemporaryFile() as out:
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}", str(binary), *args],
            capture_output=True,
            text=True,
            check=True,
        )
    return int(re.search(r"Collected : ([\d,]+)", done.stderr).group(1).replace(",", "")), done.stdout


def printed_units(out: str) -> int:
    """The units a run says it did (`N simulations`), for workloads whose count is not fixed."""
    return int(re.search(r"(\d+) simulations", out).group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="the commit to compare against (any git revision)")
    parser.add_argument("--runs", type=int, default=7, help="runs of each build per workload (default 7)")
    parser.add_argument("--callgrind", action="store_true", help="also count instructions under valgrind")
    options = parser.parse_args()
    if options.callgrind and not shutil.which("valgrind"):
        parser.error("--callgrind needs valgrind on the PATH")
    work = Path(tempfile.mkdtemp(prefix="compare-commits-"))
    base_tree = work / "base"
    try:
        subprocess.run(["git", "worktree", "add", "-q", "--detach", str(base_tree), options.base], cwd=ROOT, check=True)
        for example in EXAMPLES:
            (base_tree / example).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / example, base_tree / example)
        print(f"building {options.base} and this checkout ...", file=sys.stderr)
        binaries = {"base": build(base_tree, work / "target-base", False), "this": build(ROOT, ROOT / "target", True)}
        # The base predates the heuristic's opponent count at the parent: its searches differ.
        searches_differ = "OpponentMoves" not in (base_tree / "rust/search/src/evaluation.rs").read_text()
        print(
            f"{'workload':34} {'base':>12} {'this':>12} {'speed-up':>9}"
            + ("  instructions per unit: base, this, ratio" if options.callgrind else "")
        )
        for name, example, args, setup_args, units, unit, time_re, result_re in WORKLOADS:
            if example not in binaries["base"]:
                print(f"{name:34} skipped: no {example} example at {options.base}", flush=True)
                continue
            times = {"base": [], "this": []}
            results = {"base": set(), "this": set()}
            own_units = {}
            for _ in range(options.runs):
                for build_name in ("base", "this"):
                    seconds, result, out = run(binaries[build_name][example], args, time_re, result_re)
                    own_units[build_name] = units if units is not None else printed_units(out)
                    times[build_name].append(seconds)
                    results[build_name].add(result)
            differ = searches_differ and example in ("search", "mcts_selfplay")
            if len(results["base"] | results["this"]) != 1 and not differ:
                print(f"{name}: the builds disagree ({sorted(results['base'] | results['this'])})", file=sys.stderr)
                return 1
            if differ:
                print(f"{name}: searches differ by design (the base counts the opponent at the leaf)", file=sys.stderr)
            # Each example prints the time per unit of its loop (generation, search) or the loop's total (playout).
            per = {b: statistics.median(t) / (units if example == "playout" else 1) for b, t in times.items()}
            if example == "search":
                per = {b: p / 400 for b, p in per.items()}
            line = (
                f"{name:34} {per['base'] * 1e6:9.2f} µs {per['this'] * 1e6:9.2f} µs {per['base'] / per['this']:8.2f}x"
            )
            if options.callgrind:
                counts = {
                    b: (instructions(binaries[b][example], args)[0] - instructions(binaries[b][example], setup_args)[0])
                    / own_units[b]
                    for b in binaries
                }
                line += f"  {counts['base']:9.0f} {counts['this']:9.0f} {counts['base'] / counts['this']:6.2f}x"
            print(f"{line}   (per {unit}, medians of {options.runs})", flush=True)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(base_tree)], cwd=ROOT, check=False)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
