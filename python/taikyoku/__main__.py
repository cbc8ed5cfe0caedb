"""Command line: ``taikyoku selfplay`` and ``taikyoku random-games`` (also ``python -m taikyoku``)."""

from __future__ import annotations

import argparse
import sys
import time

import taikyoku


def _random_games(args: argparse.Namespace) -> int:
    out = open(args.out, "w", encoding="utf-8") if args.out else None
    results: dict[str, int] = {}
    plies = 0
    started = time.perf_counter()
    for index in range(args.games):
        seed = args.seed * 1_000_003 + index
        game = taikyoku.random_game(seed, max_plies=args.max_plies, variant=args.variant)
        key = f"{game.result or 'none'} ({game.termination})"
        results[key] = results.get(key, 0) + 1
        plies += game.ply
        if out:
            out.write(f"game {index} seed {seed} result {game.result} termination {game.termination}\n")
            out.write(" ".join(game.history()) + "\n")
    elapsed = time.perf_counter() - started
    if out:
        out.close()
    print(f"{args.games} games, {plies} plies in {elapsed:.2f} s ({plies / max(elapsed, 1e-9):,.0f} plies/s)")
    for key, count in sorted(results.items()):
        print(f"  {key}: {count}")
    if args.out:
        print(f"game records written to {args.out}")
    return 0


def _selfplay(args: argparse.Namespace) -> int:
    from taikyoku.selfplay import selfplay

    mcts = {}
    if args.temperature is not None:
        mcts["temperature"] = args.temperature
    if mcts and args.players != "mcts":
        raise taikyoku.TaikyokuError("--temperature applies to --players mcts")
    summary = selfplay(
        args.out,
        players=args.players,
        games=args.games,
        seed=args.seed,
        threads=args.threads,
        format=args.format,
        max_plies=args.max_plies,
        simulations=args.simulations,
        variant=args.variant,
        games_per_shard=args.games_per_shard,
        progress=not args.quiet,
        **mcts,
    )
    seconds = max(summary["seconds"], 1e-9)
    generated = summary["generated_plies"]
    print(f"dataset: {summary['out']}")
    print(
        f"{summary['games']} games, {summary['plies']:,} plies "
        f"({summary['generated_games']} games generated now, {summary['games'] - summary['generated_games']} resumed)"
    )
    print(
        f"results: black {summary['black_wins']}, white {summary['white_wins']}, "
        f"draws {summary['draws']}, truncated {summary['truncated']}"
    )
    print(
        f"{seconds:.2f} s: {generated / seconds:,.0f} plies/s, {summary['generated_games'] / seconds * 3600:,.0f} games/hour; "
        f"{summary['bytes'] / 1e6:.2f} MB on disk ({summary['bytes'] / max(summary['plies'], 1):.1f} bytes/position)"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="taikyoku", description="Taikyoku shogi engine tools")
    commands = parser.add_subparsers(dest="command", required=True)
    games = commands.add_parser("random-games", help="play seeded random games and summarise them")
    games.add_argument("--games", type=int, default=4, help="number of games (default 4)")
    games.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    games.add_argument("--max-plies", type=int, default=2000, help="ply limit per game (default 2000)")
    games.add_argument("--variant", default="taikyoku", choices=taikyoku.variants())
    games.add_argument("--out", help="write each game's moves in notation to this text file")
    play = commands.add_parser(
        "selfplay",
        help="generate a self-play dataset (Arrow IPC or Parquet)",
        description="Generate a seeded self-play dataset; see datasets/README.md. "
        "With only --out it makes a small random dataset (8 games).",
    )
    play.add_argument("--out", required=True, help="dataset directory (new, empty, or an interrupted run to resume)")
    play.add_argument("--players", default="random", choices=["random", "mcts"], help="who plays both sides (default random)")
    play.add_argument("--games", type=int, default=8, help="number of games (default 8)")
    play.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    play.add_argument("--threads", type=int, default=None, help="worker threads (default: all cores; output is the same)")
    play.add_argument("--format", default="arrow", choices=["arrow", "parquet"], help="file format (default arrow)")
    play.add_argument("--max-plies", type=int, default=5000, help="ply limit per game (default 5000)")
    play.add_argument("--simulations", type=int, default=64, help="MCTS simulations per move (default 64)")
    play.add_argument("--temperature", type=float, default=None, help="MCTS move-sampling temperature (default 1.0)")
    play.add_argument("--games-per-shard", type=int, default=16, help="games per shard file (default 16)")
    play.add_argument("--variant", default="taikyoku", choices=taikyoku.variants())
    play.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.command == "selfplay":
        try:
            return _selfplay(args)
        except taikyoku.TaikyokuError as e:
            parser.error(str(e))
        except OSError as e:
            print(f"taikyoku selfplay: {e}", file=sys.stderr)
            return 1
    if args.command == "random-games":
        if args.games < 1 or args.max_plies < 1:
            parser.error("--games and --max-plies must be positive")
        return _random_games(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
