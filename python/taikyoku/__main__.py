"""Command line: ``taikyoku random-games`` (also ``python -m taikyoku random-games``)."""

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="taikyoku", description="Taikyoku shogi engine tools")
    commands = parser.add_subparsers(dest="command", required=True)
    games = commands.add_parser("random-games", help="play seeded random games and summarise them")
    games.add_argument("--games", type=int, default=4, help="number of games (default 4)")
    games.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    games.add_argument("--max-plies", type=int, default=2000, help="ply limit per game (default 2000)")
    games.add_argument("--variant", default="taikyoku", choices=taikyoku.variants())
    games.add_argument("--out", help="write each game's moves in notation to this text file")
    args = parser.parse_args(argv)
    if args.command == "random-games":
        if args.games < 1 or args.max_plies < 1:
            parser.error("--games and --max-plies must be positive")
        return _random_games(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
