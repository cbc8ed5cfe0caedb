#!/usr/bin/env python3
"""PPO on ``taikyoku.VectorEnv``: a policy over the legal actions only (CSR), against a random opponent.

    python examples/ppo.py --updates 3 --envs 8 --steps 8 --channels 8 --blocks 1 --eval-games 4   # toy size, seconds
    python examples/ppo.py --threads 1 --eval-every 10 --metrics ppo.json --save ppo.pt     # Tenjiku: 40-0 vs random, ~16 CPU min

The agent is a :class:`taikyoku.nn.PolicyValueNet` (``--channels``, ``--blocks``) on the variant's own
board. It plays ``--envs`` games at once in two native ``taikyoku.VectorEnv`` (``opponent="random"``:
the engine's seeded random player answers every move), half of them as Black and half as White, so
the network, which sees every position in the mover's frame, learns both sides. Each update:

1. **Rollout**: ``--steps`` moves in every game, sampled from the policy (``segment_sample`` over each
   position's legal actions, ``vec.legal_actions_flat()``), stored with their log-probabilities and
   values in a :class:`taikyoku.nn.CsrRolloutBuffer` (``alternating=False``: the agent moves in every
   step, the opponent's reply is part of the environment). The reward is the game's result for the
   agent, +1 / -1 / 0, when it ends; games cut at ``--max-plies`` count 0, as the arena counts them (a
   draw), and GAE does not bootstrap past them. ``--shaping C`` adds the potential-based term
   ``C * (gamma * phi(s') - phi(s))`` with ``phi`` the engine's heuristic value for the agent
   (``vec.heuristic_values()``) and ``phi = 0`` once the game is over; it is off by default.
2. **GAE** (``--gamma``, ``--gae-lambda``), then ``--epochs`` passes over the rollout in shuffled
   minibatches of ``--minibatch`` positions: the clipped-ratio objective (``--clip``) on advantages
   normalised per minibatch, plus ``--value-coef`` times the squared error of the value against the
   GAE return, minus ``--entropy-coef`` times the mean entropy (``segment_entropy``); Adam,
   gradients clipped to ``--max-grad-norm``. An epoch loop stops early once the approximate KL
   passes ``--target-kl``.

**Batch norm.** ``PolicyValueNet`` has batch norm; the network stays in **eval mode throughout**,
rollouts and updates alike. In training mode the batch statistics of each minibatch would change
the log-probabilities the PPO ratios compare (the ratio would not be 1 before the first step, and
would depend on which positions share a minibatch), and the rollout would be scored by other
statistics than the update. In eval mode batch norm is a fixed per-channel affine map whose scale and
shift still learn (its running statistics stay at their initial 0 and 1; the saved network plays as
it trained).

**Evaluation**: every ``--eval-every`` updates (0: only at the end) and at the end, the greedy network
(``taikyoku.arena.PolicyPlayer``, temperature 0) plays ``--eval-games`` games against
``taikyoku.arena.RandomPlayer`` with ``taikyoku.arena.match``: pairs of games from the same
``--eval-openings`` random plies, colours swapped, games still running at ``--eval-max-plies`` plies
counting as draws; the result is the true game result, whatever the shaping. The match line (W/D/L,
score, Elo with its 95% interval) is printed.

``--save`` writes the final network (``taikyoku.nn.save``; ``taikyoku.nn.load`` reads it) and
``--metrics`` a JSON file with the settings, every update's losses (policy, value, entropy,
approximate KL, clip fraction), the games that ended in its rollout (wins, losses, truncations,
plies, mean return: the game results plus the shaping terms when ``--shaping``) and its times, and
the evaluations (before training too when ``--eval-every`` is set: the untrained baseline). Everything is seeded by ``--seed``; CPU time (``resource.getrusage``, all threads)
and wall time are reported.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import torch

import taikyoku
import taikyoku.nn as tnn
from taikyoku import arena


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    p.add_argument("--variant", default="tenjiku", help="the variant to play and learn")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch, environment and arena threads (default: torch's and rayon's defaults, all cores)",
    )
    g = p.add_argument_group("environment")
    g.add_argument(
        "--envs", type=int, default=64, help="games played at once, half as Black, half as White (at least 2)"
    )
    g.add_argument(
        "--opponent", default="random", choices=["random", "mcts"], help="the built-in opponent of the VectorEnv"
    )
    g.add_argument("--opponent-simulations", type=int, default=16, help="simulations per move of --opponent mcts")
    g.add_argument("--max-plies", type=int, default=300, help="games cut here count as draws (reward 0, no bootstrap)")
    g.add_argument(
        "--shaping",
        type=float,
        default=0.0,
        help="coefficient of the potential-based heuristic shaping term (0: the game result only)",
    )
    g = p.add_argument_group("network")
    g.add_argument("--channels", type=int, default=32)
    g.add_argument("--blocks", type=int, default=2)
    g.add_argument("--head-channels", type=int, default=32)
    g = p.add_argument_group("PPO")
    g.add_argument("--updates", type=int, default=60, help="rollout + optimisation rounds")
    g.add_argument("--steps", type=int, default=32, help="agent moves per game per rollout")
    g.add_argument("--epochs", type=int, default=3, help="passes over each rollout")
    g.add_argument("--minibatch", type=int, default=512, help="positions per optimizer step")
    g.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate (linear decay to 0 over --updates)")
    g.add_argument("--gamma", type=float, default=0.99, help="discount: below 1 a quicker win is worth more")
    g.add_argument("--gae-lambda", type=float, default=0.95)
    g.add_argument("--clip", type=float, default=0.2, help="PPO ratio clip")
    g.add_argument("--value-coef", type=float, default=0.5)
    g.add_argument("--entropy-coef", type=float, default=0.01)
    g.add_argument("--max-grad-norm", type=float, default=0.5)
    g.add_argument(
        "--target-kl", type=float, default=0.05, help="stop an update's epochs past this approximate KL (0: never)"
    )
    g.add_argument(
        "--cpu-budget",
        type=float,
        default=None,
        help="stop updating once this process has used this many CPU minutes (default: no limit)",
    )
    g = p.add_argument_group("evaluation")
    g.add_argument("--eval-every", type=int, default=0, help="evaluate every K updates (0: only at the end)")
    g.add_argument("--eval-games", type=int, default=40, help="games against RandomPlayer, colours swapped")
    g.add_argument("--eval-openings", type=int, default=4, help="random plies opening each pair of games")
    g.add_argument("--eval-max-plies", type=int, default=300, help="games still running here count as draws")
    g.add_argument("--eval-seed", type=int, default=1, help="seed of the match (openings) and of RandomPlayer")
    p.add_argument("--save", type=Path, default=Path("ppo.pt"), help="write the final network here (taikyoku.nn.save)")
    p.add_argument("--no-save", action="store_true", help="do not save the network")
    p.add_argument(
        "--metrics", type=Path, default=None, help="write the settings, per-update figures and evaluations as JSON"
    )
    args = p.parse_args(argv)
    if args.envs < 2 or args.envs % 2:
        p.error("--envs must be even and at least 2 (half play Black, half White)")
    if min(args.updates, args.steps, args.epochs, args.minibatch, args.eval_games) < 1:
        p.error("--updates, --steps, --epochs, --minibatch and --eval-games must be positive")
    if args.eval_every < 0:
        p.error("--eval-every must be 0 or positive")
    return args


def cpu_seconds() -> float:
    """User + system CPU time of this process so far, all its threads."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class Games:
    """Two ``VectorEnv`` against the opponent, the agent Black in one and White in the other,
    seen as one batch of ``envs`` games (rows: the Black games, then the White ones)."""

    def __init__(self, args: argparse.Namespace) -> None:
        half = args.envs // 2
        self.vecs = [
            taikyoku.VectorEnv(
                half,
                variant=args.variant,
                seed=args.seed * 2 + i,
                threads=args.threads,
                max_plies=args.max_plies,
                compact=True,
                copy=False,
                opponent=args.opponent,
                agent_color=color,
                mcts_simulations=args.opponent_simulations,
            )
            for i, color in enumerate(("black", "white"))
        ]
        self.colors = ("black", "white")
        self.half = half
        probe = taikyoku.Game(args.variant)
        self.crop = (int(probe.height), int(probe.width))

    def _board(self, observations: List[np.ndarray]) -> np.ndarray:
        """The boards' corner of the grid, copied (``copy=False`` buffers are rewritten by the next step)."""
        h, w = self.crop
        return np.concatenate([o[:, :h, :w] for o in observations]).astype(np.int32)

    def reset(self, seed: int) -> np.ndarray:
        return self._board([v.reset(seed=seed * 2 + i)[0] for i, v in enumerate(self.vecs)])

    def legal(self) -> Tuple[np.ndarray, np.ndarray]:
        """Every game's legal actions, CSR (the White games' offsets shifted after the Black ones')."""
        (a0, o0), (a1, o1) = (v.legal_actions_flat() for v in self.vecs)
        return np.concatenate([a0, a1]), np.concatenate([o0, o1[1:] + o0[-1]])

    def heuristic(self) -> np.ndarray:
        """The engine's heuristic value of each position for the agent (its side is to move everywhere)."""
        return np.concatenate([v.heuristic_values(c) for v, c in zip(self.vecs, self.colors)])

    def step(self, actions: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, List[Dict[str, Any]]]:
        """Plays the agent's actions (and the opponent's answers); returns (boards, rewards,
        terminated, truncated, finished games' infos per row: None where none ended)."""
        results = [v.step(actions[i * self.half : (i + 1) * self.half]) for i, v in enumerate(self.vecs)]
        observations = self._board([r[0] for r in results])
        rewards = np.concatenate([r[1] for r in results]).astype(np.float32)
        terminated = np.concatenate([r[2] for r in results])
        truncated = np.concatenate([r[3] for r in results])
        finals: List[Optional[Dict[str, Any]]] = []
        for r in results:
            infos = r[4]
            if "final_info" in infos:
                finals += [infos["final_info"][j] if infos["_final_info"][j] else None for j in range(self.half)]
            else:
                finals += [None] * self.half
        return observations, rewards, terminated, truncated, finals


def evaluate(net: tnn.PolicyValueNet, args: argparse.Namespace) -> arena.MatchResult:
    """The greedy network against RandomPlayer: the arena's true game results."""
    player = arena.PolicyPlayer(net)  # a frozen copy, eval mode, temperature 0
    return arena.match(
        player,
        arena.RandomPlayer(args.eval_seed),
        games=args.eval_games,
        variant=args.variant,
        openings=args.eval_openings,
        max_plies=args.eval_max_plies,
        seed=args.eval_seed,
        threads=args.threads,
    )


def evaluation_record(result: arena.MatchResult, update: int, wall: float, cpu: float) -> Dict[str, Any]:
    finite = lambda x: x if math.isfinite(x) else (None if math.isnan(x) else ("+inf" if x > 0 else "-inf"))  # noqa: E731
    return {
        "update": update,
        "wins": result.wins,
        "draws": result.draws,
        "losses": result.losses,
        "truncated": result.truncated,
        "score": result.score,
        "elo": finite(result.elo),
        "elo_low": finite(result.elo_low),
        "elo_high": finite(result.elo_high),
        "mean_plies": float(np.mean([r.plies for r in result.records])),
        "line": str(result),
        "wall_seconds": wall,
        "cpu_seconds": cpu,
    }


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    wall0, cpu0 = time.perf_counter(), cpu_seconds()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    games = Games(args)
    net = tnn.PolicyValueNet(
        channels=args.channels, blocks=args.blocks, head_channels=args.head_channels, variant=args.variant
    ).to(device)
    net.eval()  # and it stays so: see "Batch norm" in the module doc
    optimizer = torch.optim.Adam(net.parameters(), lr=args.lr, eps=1e-5)
    buffer = tnn.CsrRolloutBuffer(
        args.steps, args.envs, gamma=args.gamma, gae_lambda=args.gae_lambda, alternating=False, crop=games.crop
    )
    generator = torch.Generator(device=device).manual_seed(args.seed)
    shuffle = np.random.default_rng(args.seed)
    print(
        f"PPO on {args.variant}: {args.envs} games against the {args.opponent} opponent (half as Black, half as "
        f"White), {args.steps} moves each per update, {args.updates} updates; PolicyValueNet(channels={args.channels}, "
        f"blocks={args.blocks}), {sum(p.numel() for p in net.parameters()):,} parameters, on {device}"
    )

    def policy(boards: np.ndarray, actions: np.ndarray, offsets: np.ndarray) -> tnn.PolicyValueOutput:
        with torch.no_grad():
            return net(
                torch.from_numpy(boards).to(device),
                torch.from_numpy(actions).to(device),
                torch.from_numpy(offsets).to(device),
            )

    if args.metrics:
        args.metrics.parent.mkdir(parents=True, exist_ok=True)
    boards = games.reset(args.seed)
    phi = games.heuristic() if args.shaping else None
    episode_return = np.zeros(args.envs, dtype=np.float64)
    history: List[Dict[str, Any]] = []
    evaluations: List[Dict[str, Any]] = []
    metrics: Dict[str, Any] = {
        "settings": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "updates": history,
        "evaluations": evaluations,
    }
    if args.eval_every:  # the untrained network's score: the baseline the training is measured against
        result = evaluate(net, args)
        evaluations.append(evaluation_record(result, 0, time.perf_counter() - wall0, cpu_seconds() - cpu0))
        print(f"  evaluation before training, greedy network vs RandomPlayer: {result}", flush=True)
    stopped_early = False
    update = 0
    for update in range(1, args.updates + 1):
        lr = args.lr * (1.0 - (update - 1) / args.updates)
        for group in optimizer.param_groups:
            group["lr"] = lr
        start_wall, start_cpu = time.perf_counter(), cpu_seconds()
        # -- rollout ----------------------------------------------------------------------------
        buffer.reset()
        finished = {"win": 0, "draw": 0, "loss": 0, "truncated": 0}
        returns: List[float] = []
        lengths: List[int] = []
        for _ in range(args.steps):
            actions, offsets = games.legal()
            if (np.diff(offsets) == 0).any():  # never in Tenjiku: no start position is lost in one ply
                raise taikyoku.TaikyokuError("a game at the agent's turn has no legal action")
            out = policy(boards, actions, offsets)
            t_offsets = torch.from_numpy(offsets).to(device)
            choice = tnn.segment_sample(out.logits, t_offsets, generator=generator)
            log_prob = tnn.segment_log_prob(out.logits, t_offsets, choice)
            choice_np = choice.cpu().numpy()
            next_boards, rewards, terminated, truncated, finals = games.step(actions[choice_np])
            done = terminated | truncated
            if phi is not None:
                phi_next = games.heuristic()  # after a finished game: the next game's start
                rewards = rewards + args.shaping * (args.gamma * phi_next * ~done - phi)
                phi = phi_next
            buffer.add(boards, (actions, offsets), choice_np, log_prob, out.values, rewards, done)
            episode_return += rewards
            for i in np.flatnonzero(done):
                info = finals[i] or {}
                color = games.colors[i // games.half]
                result = info.get("result")
                outcome = "win" if result == color else "draw" if result in (None, "draw") else "loss"
                finished[outcome] += 1
                finished["truncated"] += bool(truncated[i])
                returns.append(float(episode_return[i]))
                lengths.append(int(info.get("plies", 0)))
                episode_return[i] = 0.0
            boards = next_boards
        actions, offsets = games.legal()
        buffer.compute_returns(policy(boards, actions, offsets).values.cpu())
        rollout_wall = time.perf_counter() - start_wall
        # -- optimisation --------------------------------------------------------------------------
        stats: Dict[str, List[float]] = {
            k: [] for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction")
        }
        epochs_done = 0
        for _ in range(args.epochs):
            kls = []
            for mb in buffer.minibatches(args.minibatch, seed=shuffle, device=device):
                out = net(mb.observations, mb.actions, mb.offsets)
                new_log_prob = tnn.segment_log_prob(out.logits, mb.offsets, mb.index)
                log_ratio = new_log_prob - mb.log_probs
                ratio = log_ratio.exp()
                advantages = (mb.advantages - mb.advantages.mean()) / (mb.advantages.std(unbiased=False) + 1e-8)
                policy_loss = -torch.min(
                    ratio * advantages, ratio.clamp(1 - args.clip, 1 + args.clip) * advantages
                ).mean()
                value_loss = (out.values - mb.returns).square().mean()
                entropy = tnn.segment_entropy(out.logits, mb.offsets).mean()
                loss = policy_loss + args.value_coef * value_loss - args.entropy_coef * entropy
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
                optimizer.step()
                with torch.no_grad():
                    kl = float(((ratio - 1) - log_ratio).mean())  # the k3 estimator, >= 0
                    kls.append(kl)
                    stats["approx_kl"].append(kl)
                    stats["clip_fraction"].append(float(((ratio - 1).abs() > args.clip).float().mean()))
                stats["policy_loss"].append(float(policy_loss.detach()))
                stats["value_loss"].append(float(value_loss.detach()))
                stats["entropy"].append(float(entropy.detach()))
            epochs_done += 1
            if args.target_kl and float(np.mean(kls)) > args.target_kl:
                break
        record = {
            "update": update,
            "lr": lr,
            "env_steps": update * args.steps * args.envs,
            "episodes": len(returns),
            **{f"episodes_{k}": v for k, v in finished.items()},
            "mean_return": float(np.mean(returns)) if returns else None,
            "mean_plies": float(np.mean(lengths)) if lengths else None,
            **{k: float(np.mean(v)) for k, v in stats.items()},
            "epochs": epochs_done,
            "rollout_seconds": rollout_wall,
            "update_seconds": time.perf_counter() - start_wall,
            "update_cpu_seconds": cpu_seconds() - start_cpu,
            "wall_seconds": time.perf_counter() - wall0,
            "cpu_seconds": cpu_seconds() - cpu0,
        }
        history.append(record)
        won = finished["win"] / max(1, len(returns))
        print(
            f"update {update:3d}: {len(returns):3d} games ended (won {won:.0%}, lost "
            f"{finished['loss'] / max(1, len(returns)):.0%}, {record['mean_plies'] or 0:.0f} plies), return "
            f"{record['mean_return'] or 0:+.3f}; policy {record['policy_loss']:+.4f} value "
            f"{record['value_loss']:.4f} entropy {record['entropy']:.3f} kl {record['approx_kl']:.4f} "
            f"({epochs_done} epochs); {record['update_seconds']:.1f} s, {record['update_cpu_seconds']:.1f} CPU s; "
            f"total {record['cpu_seconds'] / 60:.1f} CPU min",
            flush=True,
        )
        if args.eval_every and update % args.eval_every == 0 and update < args.updates:
            result = evaluate(net, args)
            evaluations.append(evaluation_record(result, update, time.perf_counter() - wall0, cpu_seconds() - cpu0))
            print(f"  evaluation after update {update}, greedy network vs RandomPlayer: {result}", flush=True)
        if args.metrics:
            args.metrics.write_text(json.dumps(metrics, indent=2) + "\n")
        if args.cpu_budget is not None and cpu_seconds() - cpu0 >= 60 * args.cpu_budget:
            stopped_early = update < args.updates
            break
    train_wall, train_cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
    if stopped_early:
        print(f"stopped after update {update}: {train_cpu / 60:.1f} CPU minutes reached --cpu-budget {args.cpu_budget}")
    if not args.no_save:
        args.save.parent.mkdir(parents=True, exist_ok=True)
        tnn.save(net, args.save)
        print(f"saved the {args.variant} network to {args.save} (taikyoku.nn.load reads it)")
    result = evaluate(net, args)
    wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
    final = evaluation_record(result, update, wall, cpu)
    evaluations.append(final)
    metrics.update(
        final=final,
        updates_done=update,
        train_wall_seconds=train_wall,
        train_cpu_seconds=train_cpu,
        wall_seconds=wall,
        cpu_seconds=cpu,
        saved=None if args.no_save else str(args.save),
    )
    if args.metrics:
        args.metrics.write_text(json.dumps(metrics, indent=2) + "\n")
    print(
        f"greedy network vs RandomPlayer, {args.eval_games} games ({args.variant}, openings {args.eval_openings}, "
        f"max plies {args.eval_max_plies}, colours swapped): {result}"
    )
    print(
        f"time: training {train_cpu / 60:.1f} CPU min ({train_wall / 60:.1f} wall min), "
        f"in all {cpu / 60:.1f} CPU min ({wall / 60:.1f} wall min)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
