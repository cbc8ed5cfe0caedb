#!/usr/bin/env python3
"""The strength ladder of docs/STRENGTH.md: every player against one reference, with the arena.

    python benchmarks/strength.py --variant tenjiku                       # the ladder of STRENGTH.md
    python benchmarks/strength.py --variant tenjiku --players pretrained gumbel:16:pretrained --games 20
    python benchmarks/strength.py --plot pretrain-tenjiku/metrics.json --out docs/strength-tenjiku.svg

Each player (a ``taikyoku match`` specification: ``random``, ``mcts:N``, ``gumbel:N``,
``pretrained``, ``mcts:N:pretrained``, ``gumbel:N:FILE.pt``...) plays ``--games`` games against
``--reference`` (heuristic MCTS at 16 simulations by default): colour-swapped pairs from random
openings of ``--openings`` plies, games cut at ``--max-plies`` counting as draws, seeded. The table
gives W/D/L from the player's side, its score and its Elo difference to the reference with the 95%
interval (``taikyoku.arena.match``), and the seconds the match took; ``--json`` keeps it all.

``--plot METRICS`` draws the Elo of the greedy network against the reference, with its interval,
step by step, from ``examples/pretrain.py``'s metrics.json (needs matplotlib).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

DEFAULT_PLAYERS = [
    "random",
    "mcts:64",
    "mcts:256",
    "pretrained",
    "mcts:16:pretrained",
    "gumbel:16:pretrained",
    "mcts:64:pretrained",
    "gumbel:64:pretrained",
]


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    p.add_argument("--variant", default="tenjiku")
    p.add_argument("--players", nargs="+", default=DEFAULT_PLAYERS)
    p.add_argument("--reference", default="mcts:16")
    p.add_argument("--games", type=int, default=40)
    p.add_argument("--openings", type=int, default=6)
    p.add_argument("--max-plies", type=int, default=300)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument(
        "--opponent-moves",
        choices=["parent", "leaf"],
        default="parent",
        help="where the heuristic MCTS players (the reference included) count the opponent's moves at a leaf "
        "(leaf: as before 2026-11-28)",
    )
    p.add_argument("--json", type=Path, default=None, help="write the results here")
    p.add_argument("--plot", type=Path, default=None, help="plot this metrics.json of examples/pretrain.py instead")
    p.add_argument("--out", type=Path, default=None, help="the plot's file (SVG or PNG)")
    return p.parse_args(argv)


def signed(x: float) -> str:
    return ("+inf" if x > 0 else "-inf") if math.isinf(x) else f"{x:+.0f}"


def ladder(args: argparse.Namespace) -> List[Dict[str, Any]]:
    import torch

    from taikyoku import arena

    torch.set_num_threads(1)  # one position at a time per game: the games run in parallel instead

    def made(spec: str) -> arena.Player:
        player = arena.player_from_spec(spec, args.variant)
        if isinstance(player, arena.MctsPlayer) and player.evaluator is None:
            player.mcts_settings["opponent_moves"] = args.opponent_moves
        return player

    reference = made(args.reference)
    rows = []
    print(f"| player | W | D | L | score | Elo vs {args.reference} (95%) | seconds |")
    print("|---|---|---|---|---|---|---|")
    for spec in args.players:
        player = made(spec)
        start = time.perf_counter()
        r = arena.match(
            player,
            reference,
            games=args.games,
            variant=args.variant,
            openings=args.openings,
            seed=args.seed,
            max_plies=args.max_plies,
            threads=args.threads,
        )
        seconds = time.perf_counter() - start
        rows.append(
            dict(
                player=spec,
                wins=r.wins,
                draws=r.draws,
                losses=r.losses,
                score=r.score,
                elo=r.elo,
                elo_low=r.elo_low,
                elo_high=r.elo_high,
                truncated=r.truncated,
                seconds=seconds,
            )
        )
        print(
            f"| `{spec}` | {r.wins} | {r.draws} | {r.losses} | {r.score:.3f} | {signed(r.elo)} "
            f"[{signed(r.elo_low)}, {signed(r.elo_high)}] | {seconds:.0f} |",
            flush=True,
        )
    return rows


def plot(metrics_path: Path, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = json.loads(metrics_path.read_text())
    points = metrics["evaluations"]
    steps = [p["step"] for p in points]
    clip = lambda x: max(-800.0, min(800.0, x))  # noqa: E731 - infinite bounds drawn at the frame
    elo = [clip(p["elo"]) for p in points]
    low = [clip(p["elo_low"]) for p in points]
    high = [clip(p["elo_high"]) for p in points]
    reference = metrics["args"].get("eval_simulations", 16)
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.fill_between(steps, low, high, alpha=0.25, label="95% interval")
    ax.plot(steps, elo, marker="o", label=f"greedy network vs heuristic MCTS ({reference} simulations)")
    if any(p["stage"].startswith("loop") for p in points):
        distilled = max((p["step"] for p in points if p["stage"] == "distill"), default=0)
        ax.axvline(distilled, color="grey", linestyle=":", label="distillation ends, Gumbel self-play begins")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xlabel("training steps")
    ax.set_ylabel("Elo difference")
    ax.set_title(f"{metrics['args'].get('variant', '')}: {metrics['args'].get('eval_games', '')} games per point")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(out)
    print(f"wrote {out}")


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    if args.plot is not None:
        plot(args.plot, args.out or args.plot.with_suffix(".svg"))
        return 0
    rows = ladder(args)
    if args.json is not None:
        args.json.write_text(
            json.dumps({"args": {k: str(v) for k, v in vars(args).items()}, "rows": rows}, indent=1) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
