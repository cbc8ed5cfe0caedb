#!/usr/bin/env python3
"""Train taikyoku.nn.PolicyValueNet on a self-play dataset, save it, and time the pipeline.

    python examples/train_from_dataset.py                       # generate 32 MCTS games into train-data/, 200 steps
    python examples/train_from_dataset.py --data DIR --steps 2000 --batch-size 256 --channels 64 --blocks 4 --save tenjiku.pt

The network is built for the dataset's own variant and rule options. Each position's policy
target is the improved policy of a Gumbel root where the dataset has one, else its MCTS visit
distribution (or the move played, for random-play datasets) over its legal actions, and its
value target the game's outcome, for positions of games with a result only (games cut by
``--max-plies`` have none). Datasets store the visits, not the legal actions, so these are
recovered once by replaying the games (``taikyoku.nn.LegalActionIndex``).

The trained network is saved with ``taikyoku.nn.save`` (``--save``, default ``net.pt`` in the
current directory; ``--no-save`` skips it): ``taikyoku.nn.load(path)`` reads it back.

Printed at the end, for comparison:

- **pipeline**: positions per second from the dataset files to the optimizer step (reading shards,
  decoding compact observations in Rust, gathering legal actions and targets, the training step),
  and the share of that time spent on the data side (which runs on the CPU, one batch after another);
- **network alone**: the same network stepping on one batch already on the device;
- their ratio (the data pipeline should cost less than the network: a ratio under 2).

``--metrics FILE`` writes the figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

import torch

import taikyoku
import taikyoku.datasets as tds
import taikyoku.nn as tnn


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    p.add_argument("--data", type=Path, help="an existing dataset directory (else one is generated into --out)")
    p.add_argument(
        "--out", type=Path, default=Path("train-data"), help="where to generate the dataset (resumed if present)"
    )
    p.add_argument("--variant", default="taikyoku", help="variant of the generated games (--data: the dataset's own)")
    p.add_argument("--games", type=int, default=32, help="games to generate (heuristic MCTS)")
    p.add_argument("--simulations", type=int, default=64, help="MCTS simulations per move when generating")
    p.add_argument("--max-plies", type=int, default=200, help="ply limit per generated game")
    p.add_argument("--threads", type=int, default=None, help="self-play threads (default: all cores)")
    p.add_argument("--steps", type=int, default=200, help="optimizer steps")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=2e-3, help="AdamW learning rate")
    p.add_argument("--channels", type=int, default=32, help="PolicyValueNet trunk width")
    p.add_argument("--blocks", type=int, default=2, help="PolicyValueNet residual blocks")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--seed", type=int, default=0, help="seeds generation, shuffling and initialisation")
    p.add_argument("--network-steps", type=int, default=20, help="steps of the network-only timing")
    p.add_argument("--metrics", type=Path, help="write the figures to this JSON file")
    p.add_argument(
        "--save", type=Path, default=Path("net.pt"), help="where taikyoku.nn.save writes the trained network"
    )
    p.add_argument("--no-save", action="store_true", help="do not save the network")
    return p.parse_args(argv)


def open_dataset(args: argparse.Namespace) -> tds.Dataset:
    if args.data is not None:
        return tds.open(args.data)
    summary = taikyoku.selfplay(
        args.out,
        players="mcts",
        variant=args.variant,
        games=args.games,
        seed=args.seed,
        max_plies=args.max_plies,
        simulations=args.simulations,
        threads=args.threads,
    )
    print(
        f"self-play: {summary['games']} games, {summary['positions']} positions in {args.out} "
        f"({summary['generated_games']} generated now, {summary['seconds']:.1f} s)"
    )
    return tds.open(args.out)


def synchronize(device: torch.device) -> None:
    """Waits for the device, so that wall-clock times include the queued GPU work."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def train(args: argparse.Namespace) -> Dict[str, float]:
    device = torch.device(args.device)
    torch.manual_seed(args.seed)
    ds = open_dataset(args)
    print(ds)

    start = time.perf_counter()
    legal = tnn.LegalActionIndex.from_dataset(ds)
    replay_s = time.perf_counter() - start
    # The first call also pays one-time imports (pyarrow's numpy conversion loads pandas: ~0.3 s).
    print(f"legal actions recovered by replay: {len(legal)} positions in {replay_s:.2f} s")

    # The dataset's own variant and options: the network reads its planes and runs on its board.
    net = tnn.PolicyValueNet(channels=args.channels, blocks=args.blocks, variant=ds.variant, options=ds.options).to(
        device
    )
    optimizer = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=1e-4)

    def step(batch: tnn.TrainingBatch) -> torch.Tensor:
        total, policy, value = tnn.policy_value_loss(net, batch)
        optimizer.zero_grad(set_to_none=True)
        total.backward()
        optimizer.step()
        return torch.stack([total, policy, value]).detach()

    # Dataset to optimizer step. The first steps (allocator, kernel selection) are left out of the timing.
    batches = tnn.training_batches(ds, legal, args.batch_size, seed=args.seed, device=device)
    warmup = min(5, max(args.steps // 10, 1))
    losses, positions, data_s = [], 0, 0.0
    # Positions with a value target (their game has a result), counted on the device: no synchronisation per step.
    seen, decided = 0, torch.zeros((), dtype=torch.long, device=device)
    for i in range(args.steps):
        if i == warmup:
            synchronize(device)
            timed_from, positions, data_s = time.perf_counter(), 0, 0.0
        t = time.perf_counter()
        batch = next(batches)
        data_s += time.perf_counter() - t
        losses.append(step(batch))
        positions += len(batch)
        seen += len(batch)
        decided += batch.value_mask.sum()
    synchronize(device)
    timed = args.steps > warmup
    pipeline_s = time.perf_counter() - timed_from if timed else float("nan")
    pipeline_rate = positions / pipeline_s if timed else float("nan")

    # Saved now: the timing below goes on stepping on one batch.
    saved = None
    if not args.no_save:
        tnn.save(net, args.save)
        saved = str(args.save)

    # The network alone on the last batch, already on the device.
    for _ in range(2):
        step(batch)
    synchronize(device)
    t = time.perf_counter()
    for _ in range(args.network_steps):
        step(batch)
    synchronize(device)
    network_rate = args.network_steps * len(batch) / (time.perf_counter() - t)

    history = torch.stack(losses).cpu()
    window = max(1, min(10, len(history) // 4))
    first, last = history[:window].mean(0), history[-window:].mean(0)
    metrics = {
        "device": str(device),
        "variant": ds.variant,
        "positions": ds.num_positions,
        "value_target_share": int(decided) / seen if seen else float("nan"),
        "saved": saved,
        "steps": args.steps,
        "batch_size": args.batch_size,
        "replay_seconds": replay_s,
        "pipeline_positions_per_s": pipeline_rate,
        "data_share": data_s / pipeline_s if timed else float("nan"),
        "data_positions_per_s": positions / data_s if timed else float("nan"),
        "network_positions_per_s": network_rate,
        "ratio": network_rate / pipeline_rate if timed else float("nan"),
        "loss_first": float(first[0]),
        "loss_last": float(last[0]),
        "policy_loss_first": float(first[1]),
        "policy_loss_last": float(last[1]),
        "value_loss_first": float(first[2]),
        "value_loss_last": float(last[2]),
    }
    print(
        f"loss (policy + value), mean of {window} steps: {metrics['loss_first']:.3f} -> {metrics['loss_last']:.3f} "
        f"(policy {metrics['policy_loss_first']:.3f} -> {metrics['policy_loss_last']:.3f}, "
        f"value {metrics['value_loss_first']:.3f} -> {metrics['value_loss_last']:.3f})"
    )
    print(
        f"pipeline, dataset to optimizer step: {pipeline_rate:,.0f} positions/s on {device} "
        f"(the data side {100 * metrics['data_share']:.0f}% of the time: {metrics['data_positions_per_s']:,.0f} positions/s alone)"
    )
    print(
        f"network alone, same batch:          {network_rate:,.0f} positions/s "
        f"(network / pipeline = {metrics['ratio']:.2f})"
    )
    print(
        f"value targets: {100 * metrics['value_target_share']:.0f}% of the positions trained on (games with a result)"
    )
    if saved is not None:
        print(f"saved the {ds.variant} network to {saved} (taikyoku.nn.load reads it)")
    if args.metrics is not None:
        args.metrics.write_text(json.dumps(metrics, indent=2) + "\n")
    return metrics


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    if args.steps < 1 or args.batch_size < 1 or args.network_steps < 1:
        sys.exit("--steps, --batch-size and --network-steps must be positive")
    train(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
