#!/usr/bin/env python3
"""A closed self-play loop: the network guides MCTS self-play, then trains on the games it played.

    python examples/closed_loop.py                                   # toy size: well under a minute on 2 cores
    python examples/closed_loop.py --variant tenjiku --iterations 20 --games 64 --simulations 200 --max-plies 400 \\
        --channels 64 --blocks 4 --steps 500 --batch-size 256 --out loop-run

Each iteration ``k``:

1. plays ``--games`` games with ``taikyoku.selfplay(players="mcts", evaluator=net.evaluator())``
   into ``OUT/iter-k`` (a normal dataset: ``taikyoku.datasets.open`` reads it);
2. trains the network ``--steps`` steps on the datasets of the last ``--window`` iterations
   (visit distributions as policy targets, outcomes as value targets where the game has a
   result: games cut by ``--max-plies`` train the policy only);
3. saves the network to ``OUT/net-k.pt`` (``taikyoku.nn.save``: ``taikyoku.nn.load`` reads it
   back) and appends the iteration's figures to ``OUT/metrics.json``.

``--variant`` picks the variant (Taikyoku by default): the network is built for it and plays it.

At toy size the network learns little; the point is the plumbing, which is the same at any size.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import torch

import taikyoku
import taikyoku.datasets as tds
import taikyoku.nn as tnn


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    p.add_argument("--out", type=Path, default=Path("closed-loop"), help="run directory (datasets, weights, metrics)")
    p.add_argument("--overwrite", action="store_true", help="replace the iterations of an earlier run in --out")
    p.add_argument("--variant", default="taikyoku", help="the variant to play and learn")
    p.add_argument("--iterations", type=int, default=3)
    p.add_argument("--games", type=int, default=4, help="self-play games per iteration")
    p.add_argument("--simulations", type=int, default=16, help="MCTS simulations per move")
    p.add_argument("--max-plies", type=int, default=24, help="ply limit per game")
    p.add_argument("--threads", type=int, default=None, help="self-play threads (default: all cores)")
    p.add_argument("--steps", type=int, default=20, help="training steps per iteration")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--window", type=int, default=2, help="train on the datasets of this many latest iterations")
    p.add_argument("--lr", type=float, default=2e-3, help="AdamW learning rate")
    p.add_argument("--channels", type=int, default=16, help="PolicyValueNet trunk width")
    p.add_argument("--blocks", type=int, default=1, help="PolicyValueNet residual blocks")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def prepare(out: Path, overwrite: bool) -> None:
    """An empty run directory. A dataset directory left by an earlier run would be *resumed* by
    ``taikyoku.selfplay`` (the weights are not part of its settings), so old iterations are refused
    unless ``--overwrite``."""
    earlier = sorted(out.glob("iter-*")) + sorted(out.glob("net-*.pt")) + sorted(out.glob("metrics.json"))
    if earlier and not overwrite:
        sys.exit(f"{out} holds an earlier run ({earlier[0].name}, ...): choose another --out or pass --overwrite")
    for path in earlier:
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    out.mkdir(parents=True, exist_ok=True)


def train(
    net: tnn.PolicyValueNet,
    optimizer: torch.optim.Optimizer,
    streams: List,
    steps: int,
) -> List[List[float]]:
    """``steps`` optimizer steps, taking batches from ``streams`` in turn; the losses of each step."""
    net.train()
    losses = []
    for step in range(steps):
        batch = next(streams[step % len(streams)])
        total, policy, value = tnn.policy_value_loss(net, batch)
        optimizer.zero_grad(set_to_none=True)
        total.backward()
        optimizer.step()
        losses.append(torch.stack([total, policy, value]).detach())
    return torch.stack(losses).cpu().tolist()


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    if min(args.iterations, args.games, args.steps, args.batch_size, args.window) < 1:
        sys.exit("--iterations, --games, --steps, --batch-size and --window must be positive")
    prepare(args.out, args.overwrite)
    device = torch.device(args.device)
    torch.manual_seed(args.seed)
    net = tnn.PolicyValueNet(channels=args.channels, blocks=args.blocks, variant=args.variant).to(device)
    optimizer = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=1e-4)
    evaluator = net.evaluator(device)  # shares the weights: each iteration plays with the latest ones
    history: List[Dict[str, Any]] = []
    datasets = []
    for k in range(args.iterations):
        data = args.out / f"iter-{k:02d}"
        start = time.perf_counter()
        summary = taikyoku.selfplay(
            data,
            players="mcts",
            variant=args.variant,
            evaluator=evaluator,
            games=args.games,
            seed=args.seed + k,
            max_plies=args.max_plies,
            simulations=args.simulations,
            threads=args.threads,
        )
        played_s = time.perf_counter() - start
        ds = tds.open(data)
        datasets.append((ds, tnn.LegalActionIndex.from_dataset(ds)))
        window = datasets[-args.window :]
        streams = [
            tnn.training_batches(d, legal, args.batch_size, seed=args.seed + 1000 * k + i, device=device)
            for i, (d, legal) in enumerate(window)
        ]
        start = time.perf_counter()
        losses = train(net, optimizer, streams, args.steps)
        trained_s = time.perf_counter() - start
        # {"format", "config", "state_dict"}: taikyoku.nn.load rebuilds the network.
        tnn.save(net, args.out / f"net-{k:02d}.pt")
        record = {
            "iteration": k,
            "variant": args.variant,
            "dataset": str(data),
            **{key: summary[key] for key in ("games", "positions", "black_wins", "white_wins", "draws", "truncated")},
            "selfplay_seconds": played_s,
            "train_positions": sum(d.num_positions for d, _ in window),
            "train_seconds": trained_s,
            "loss_first": losses[0][0],
            "loss_last": losses[-1][0],
            "policy_loss_last": losses[-1][1],
            "value_loss_last": losses[-1][2],
        }
        history.append(record)
        (args.out / "metrics.json").write_text(json.dumps(history, indent=2) + "\n")
        print(
            f"iteration {k}: {summary['games']} games, {summary['positions']} positions "
            f"(black {summary['black_wins']}, white {summary['white_wins']}, draws {summary['draws']}, "
            f"truncated {summary['truncated']}) in {played_s:.1f} s; "
            f"trained {args.steps} steps on {record['train_positions']} positions in {trained_s:.1f} s, "
            f"loss {record['loss_first']:.3f} -> {record['loss_last']:.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
