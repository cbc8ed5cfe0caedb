#!/usr/bin/env python3
"""The recipe of the shipped networks (``taikyoku.nn.pretrained``): distillation, then Gumbel self-play.

    python examples/pretrain.py --variant tenjiku --out pretrain-tenjiku          # the full recipe (hours on 2 CPU cores)
    python examples/pretrain.py --variant tenjiku --out pretrain-tenjiku --export python/taikyoku/weights/tenjiku.pt

Stages, each resumable (run the same command again after an interruption: finished work is kept):

1. **Teacher games**: ``--teacher-games`` self-play games of the heuristic MCTS at
   ``--teacher-simulations`` simulations (a strong, cheap teacher: 1,024 simulations beat 16 in
   40 games of 40 in Tenjiku), with their legal actions stored (``OUT/teacher``).
2. **Distillation**: a :class:`taikyoku.nn.PolicyValueNet` on the variant's board learns the
   teacher's visit distributions and the games' outcomes (decided games only) for
   ``--distill-steps`` AdamW steps, cosine learning rate.
3. **Gumbel self-play** (``--loop-iterations``): the network guides a Gumbel-root MCTS
   (``--loop-simulations``) through ``--loop-games`` games (``OUT/loop-k``, the improved policy
   stored as the policy target), then trains ``--loop-steps`` steps on them and the teacher games.

Every ``--eval-every`` steps (and after each iteration) the greedy network plays
``--eval-games`` games against the heuristic MCTS at ``--eval-simulations`` simulations
(``taikyoku.arena.match``, random openings of 6 plies, colours swapped, games cut at 300 plies
counting as draws): ``OUT/metrics.json`` records the losses, the score and the Elo with its 95%
interval, step by step. ``OUT/net.pt`` is the latest network (``taikyoku.nn.load``), ``OUT/state.pt``
the training state; ``--export FILE`` writes the final network in half precision (the package's
``weights/<variant>.pt``). Everything is seeded by ``--seed``; times are recorded in metrics.json.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import torch

import taikyoku
import taikyoku.datasets as tds
import taikyoku.nn as tnn
from taikyoku import arena


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    p.add_argument("--variant", default="tenjiku")
    p.add_argument("--out", type=Path, default=None, help="run directory (default pretrain-VARIANT)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=None, help="self-play and arena threads (default: all cores)")
    p.add_argument("--max-plies", type=int, default=300, help="ply limit of every game")
    g = p.add_argument_group("teacher games")
    g.add_argument("--teacher-games", type=int, default=2000)
    g.add_argument("--teacher-simulations", type=int, default=1024)
    g.add_argument(
        "--teacher-max-plies", type=int, default=None, help="ply limit of the teacher's games (default --max-plies)"
    )
    g = p.add_argument_group("network")
    g.add_argument("--channels", type=int, default=64)
    g.add_argument("--blocks", type=int, default=4)
    g.add_argument("--head-channels", type=int, default=32)
    g = p.add_argument_group("training")
    g.add_argument("--distill-steps", type=int, default=2000)
    g.add_argument("--batch-size", type=int, default=256)
    g.add_argument("--lr", type=float, default=2e-3, help="peak AdamW learning rate (cosine decay to lr/20)")
    g.add_argument("--weight-decay", type=float, default=1e-4)
    g.add_argument("--value-weight", type=float, default=1.0)
    g.add_argument(
        "--truncated",
        choices=["mask", "root_value"],
        default="mask",
        help="value target of positions of games cut by the ply limit: none, or the search's root value",
    )
    g = p.add_argument_group("Gumbel self-play")
    g.add_argument("--loop-iterations", type=int, default=0)
    g.add_argument("--loop-games", type=int, default=64)
    g.add_argument("--loop-simulations", type=int, default=32)
    g.add_argument("--loop-steps", type=int, default=400)
    g.add_argument(
        "--loop-window", type=int, default=3, help="latest self-play datasets trained on (with the teacher's)"
    )
    g.add_argument("--loop-lr", type=float, default=5e-4)
    g = p.add_argument_group("evaluation")
    g.add_argument("--eval-every", type=int, default=500)
    g.add_argument("--eval-games", type=int, default=40)
    g.add_argument("--eval-simulations", type=int, default=16)
    p.add_argument("--export", type=Path, default=None, help="write the final network here, half precision")
    args = p.parse_args(argv)
    if args.out is None:
        args.out = Path(f"pretrain-{args.variant}")
    return args


class Run:
    """The run directory: datasets, the training state, the metrics."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.out: Path = args.out
        self.out.mkdir(parents=True, exist_ok=True)
        self.metrics_path = self.out / "metrics.json"
        self.metrics: Dict[str, Any] = (
            json.loads(self.metrics_path.read_text())
            if self.metrics_path.exists()
            else {"args": {}, "evaluations": [], "times": {}}
        )
        self.metrics["args"] = {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()}

    def save_metrics(self) -> None:
        partial = self.metrics_path.with_suffix(".partial")
        partial.write_text(json.dumps(self.metrics, indent=1) + "\n")
        partial.replace(self.metrics_path)

    def timed(self, name: str, seconds: float) -> None:
        self.metrics["times"][name] = self.metrics["times"].get(name, 0.0) + seconds
        self.save_metrics()


def teacher_games(run: Run) -> tds.Dataset:
    a = run.args
    start = time.perf_counter()
    summary = taikyoku.selfplay(
        run.out / "teacher",
        players="mcts",
        games=a.teacher_games,
        simulations=a.teacher_simulations,
        seed=a.seed,
        variant=a.variant,
        max_plies=a.teacher_max_plies or a.max_plies,
        store_legal_actions=True,
        threads=a.threads,
        progress=True,
    )
    if summary["generated_games"]:
        run.timed("teacher_seconds", time.perf_counter() - start)
    print(f"teacher: {summary['games']} games, {summary['positions']} positions", flush=True)
    return tds.open(run.out / "teacher")


def batches(datasets: List[tds.Dataset], batch_size: int, seed: int, truncated: str) -> Iterator[tnn.TrainingBatch]:
    """Batches from the datasets in turn, each shuffled with ``seed`` (one stream per dataset)."""
    streams = [
        tnn.training_batches(ds, batch_size=batch_size, seed=seed * 1000 + i, truncated=truncated)  # type: ignore[arg-type]
        for i, ds in enumerate(datasets)
    ]
    while True:
        for stream in streams:
            yield next(stream)


def evaluate(run: Run, net: tnn.PolicyValueNet, step: int, stage: str, losses: List[float]) -> None:
    """The greedy network against the heuristic MCTS; appended to the metrics."""
    a = run.args
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one position at a time: intra-op threads only wait
    start = time.perf_counter()
    try:
        result = arena.match(
            arena.PolicyPlayer(net),
            arena.MctsPlayer(a.eval_simulations),
            games=a.eval_games,
            variant=a.variant,
            openings=6,
            seed=a.seed + 7_919 * step,
            max_plies=a.max_plies,
            threads=a.threads,
        )
    finally:
        torch.set_num_threads(threads)
    entry = {
        "stage": stage,
        "step": step,
        "loss": losses[0],
        "policy_loss": losses[1],
        "value_loss": losses[2],
        "wins": result.wins,
        "draws": result.draws,
        "losses": result.losses,
        "score": result.score,
        "elo": result.elo,
        "elo_low": result.elo_low,
        "elo_high": result.elo_high,
        "seconds": time.perf_counter() - start,
    }
    run.metrics["evaluations"].append(entry)
    run.save_metrics()
    print(
        f"{stage} step {step}: loss {losses[0]:.3f} (policy {losses[1]:.3f}, value {losses[2]:.3f}); "
        f"greedy vs mcts:{a.eval_simulations}: {result}",
        flush=True,
    )


def save_state(run: Run, net: tnn.PolicyValueNet, optimizer: torch.optim.Optimizer, stage: str, step: int) -> None:
    tnn.save(net, run.out / "net.pt")
    partial = run.out / "state.pt.partial"
    torch.save({"stage": stage, "step": step, "optimizer": optimizer.state_dict()}, partial)
    partial.replace(run.out / "state.pt")


def train(
    run: Run,
    net: tnn.PolicyValueNet,
    optimizer: torch.optim.Optimizer,
    data: Iterator[tnn.TrainingBatch],
    steps: int,
    lr: float,
    first: int,
    total: int,
) -> List[float]:
    """Steps ``first .. steps`` of a cosine schedule over ``total`` steps; the mean losses."""
    a = run.args
    net.train()
    sums = torch.zeros(3)
    for step in range(first, steps):
        for group in optimizer.param_groups:
            group["lr"] = lr * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * step / max(total, 1))))
        batch = next(data)
        loss, policy, value = tnn.policy_value_loss(net, batch, value_weight=a.value_weight)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        sums += torch.stack([loss, policy, value]).detach()
        if (step + 1) % 100 == 0:
            mean = sums / (step + 1 - first)
            print(f"  step {step + 1}: loss {mean[0]:.3f} (policy {mean[1]:.3f}, value {mean[2]:.3f})", flush=True)
    net.eval()
    return (sums / max(steps - first, 1)).tolist()


def distill(
    run: Run, net: tnn.PolicyValueNet, optimizer: torch.optim.Optimizer, teacher: tds.Dataset, done: int
) -> None:
    a = run.args
    step = done
    while step < a.distill_steps:
        # Resumable at every evaluation: each segment's batches come from its own seed.
        segment = step // a.eval_every
        end = min((segment + 1) * a.eval_every, a.distill_steps)
        start = time.perf_counter()
        losses = train(
            run,
            net,
            optimizer,
            batches([teacher], a.batch_size, a.seed + segment, a.truncated),
            end,
            a.lr,
            step,
            a.distill_steps,
        )
        run.timed("distill_seconds", time.perf_counter() - start)
        step = end
        save_state(run, net, optimizer, "distill", step)
        evaluate(run, net, step, "distill", losses)


def loop(run: Run, net: tnn.PolicyValueNet, optimizer: torch.optim.Optimizer, teacher: tds.Dataset, done: int) -> None:
    a = run.args
    for k in range(done, a.loop_iterations):
        start = time.perf_counter()
        taikyoku.selfplay(
            run.out / f"loop-{k:02d}",
            players="mcts",
            evaluator=net.evaluator(),
            root="gumbel",
            games=a.loop_games,
            simulations=a.loop_simulations,
            seed=a.seed + 1 + k,
            variant=a.variant,
            max_plies=a.max_plies,
            store_legal_actions=True,
            threads=a.threads,
            progress=True,
        )
        run.timed("loop_selfplay_seconds", time.perf_counter() - start)
        window = [tds.open(run.out / f"loop-{i:02d}") for i in range(max(0, k + 1 - a.loop_window), k + 1)]
        start = time.perf_counter()
        data = batches(window + [teacher], a.batch_size, a.seed + 100_000 + k, a.truncated)
        losses = train(run, net, optimizer, data, a.loop_steps, a.loop_lr, 0, a.loop_steps)
        run.timed("loop_train_seconds", time.perf_counter() - start)
        save_state(run, net, optimizer, "loop", k + 1)
        evaluate(run, net, a.distill_steps + (k + 1) * a.loop_steps, f"loop-{k:02d}", losses)


def main(argv: Optional[List[str]] = None) -> int:
    a = parse_args(argv)
    run = Run(a)
    torch.manual_seed(a.seed)
    teacher = teacher_games(run)
    net = tnn.PolicyValueNet(channels=a.channels, blocks=a.blocks, head_channels=a.head_channels, variant=a.variant)
    optimizer = torch.optim.AdamW(net.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    stage, step = "distill", 0
    if (run.out / "state.pt").exists():
        state = torch.load(run.out / "state.pt", weights_only=True)
        net = tnn.load(run.out / "net.pt", variant=a.variant)
        optimizer = torch.optim.AdamW(net.parameters(), lr=a.lr, weight_decay=a.weight_decay)
        optimizer.load_state_dict(state["optimizer"])
        stage, step = state["stage"], state["step"]
        print(f"resuming: {stage} at {step}", flush=True)
    if stage == "distill":
        distill(run, net, optimizer, teacher, step)
        step = 0
    loop(run, net, optimizer, teacher, step)
    if a.export is not None:
        tnn.save(net, a.export, half=True)
        print(f"exported {a.export} ({a.export.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
