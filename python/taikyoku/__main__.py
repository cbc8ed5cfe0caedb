"""Command line: ``taikyoku selfplay`` and ``taikyoku random-games`` (also ``python -m taikyoku``).

Errors never print a traceback: a bad argument (a value out of range, an output path that cannot be
used as given) ends with the usage and a one-line message, exit status 2, as argparse does; a
failure of the file system while writing (permissions, full disk) ends with one line on stderr,
exit status 1.
"""

from __future__ import annotations

import argparse
import math
import os
import stat
import sys
import time

import taikyoku

U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1
F32_MAX = 3.4028234663852886e38
MAX_THREADS = 256  # as taikyoku.selfplay accepts
SELFPLAY_SEED_MAX = U64_MAX  # seeds are unsigned 64-bit integers
# random-games: game i of master seed S is played with this seed (random_game takes any u64).
GAME_SEED_MULTIPLIER = 1_000_003
GAME_SEED_MODULUS = 2**64


def game_seed(master_seed: int, index: int) -> int:
    """The seed ``taikyoku random-games --seed S`` plays its game ``index`` with."""
    return (master_seed * GAME_SEED_MULTIPLIER + index) % GAME_SEED_MODULUS


def _check_int(parser: argparse.ArgumentParser, flag: str, value, low: int, high: int) -> None:
    if value is not None and not low <= value <= high:
        parser.error(f"{flag} must be between {low} and {high}, not {value}")


def _check_path_text(parser: argparse.ArgumentParser, flag: str, value) -> None:
    if value is not None and (not value or "\0" in value):
        parser.error(f"{flag} must be a file-system path, not {value!r}")


def _open_record_file(parser: argparse.ArgumentParser, path: str):
    """Opens random-games' --out for writing, refusing to overwrite anything: a new regular file
    (its directory must exist), or an existing special file such as /dev/stdout. Returns
    ``(file, created)``; argument problems are ``parser.error``, file-system failures OSError."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as e:  # e.g. a component of the path is a file
        parser.error(f"--out {path}: {e.strerror}")
    if mode is not None and stat.S_ISDIR(mode):
        parser.error(f"--out {path} is a directory: give the name of a new file")
    if mode is not None and stat.S_ISREG(mode):
        parser.error(f"--out {path} already exists: give the name of a new file (records are never overwritten)")
    if mode is not None:  # a device or a pipe, e.g. /dev/stdout
        return open(path, "w", encoding="utf-8"), False
    parent = os.path.dirname(path) or "."
    if not os.path.isdir(parent):
        what = "is not a directory" if os.path.exists(parent) else "does not exist"
        parser.error(f"--out {path}: the directory {parent} {what}")
    try:
        return open(path, "x", encoding="utf-8"), True
    except FileExistsError:  # appeared meanwhile, or a dangling symbolic link
        parser.error(f"--out {path} already exists: give the name of a new file (records are never overwritten)")


def _random_games(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    _check_int(parser, "--games", args.games, 1, U32_MAX)
    _check_int(parser, "--seed", args.seed, 0, U64_MAX)
    _check_int(parser, "--max-plies", args.max_plies, 1, U32_MAX)
    _check_path_text(parser, "--out", args.out)
    out, created = None, False
    try:
        if args.out is not None:
            out, created = _open_record_file(parser, args.out)
            out.write(
                f"# taikyoku random-games: master seed {args.seed}, {args.games} games, max plies {args.max_plies}, "
                f"variant {args.variant}; game i is played with seed ({args.seed} * {GAME_SEED_MULTIPLIER} + i) "
                f"mod 2**64: taikyoku.random_game(seed, max_plies)\n"
            )
        results: dict[str, int] = {}
        plies = 0
        started = time.perf_counter()
        for index in range(args.games):
            seed = game_seed(args.seed, index)
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
    except OSError as e:
        if out:
            try:
                out.close()
            except OSError:
                pass
            if created:  # no partial record file left behind
                try:
                    os.remove(args.out)
                except OSError:
                    pass
        print(f"taikyoku random-games: error: cannot write {args.out}: {e.strerror or e}", file=sys.stderr)
        return 1
    print(
        f"{args.games} games (master seed {args.seed}), {plies} plies in {elapsed:.2f} s "
        f"({plies / max(elapsed, 1e-9):,.0f} plies/s)"
    )
    for key, count in sorted(results.items()):
        print(f"  {key}: {count}")
    if args.out:
        print(f"game records written to {args.out}")
    return 0


def _selfplay(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from taikyoku.selfplay import selfplay

    _check_path_text(parser, "--out", args.out)
    _check_int(parser, "--games", args.games, 1, U32_MAX)
    _check_int(parser, "--seed", args.seed, 0, SELFPLAY_SEED_MAX)
    _check_int(parser, "--threads", args.threads, 1, MAX_THREADS)
    _check_int(parser, "--max-plies", args.max_plies, 1, U32_MAX)
    _check_int(parser, "--simulations", args.simulations, 1, U32_MAX)
    _check_int(parser, "--games-per-shard", args.games_per_shard, 1, U32_MAX)
    mcts = {}
    if args.temperature is not None:
        if not (math.isfinite(args.temperature) and 0 <= args.temperature <= F32_MAX):
            parser.error(f"--temperature must be a number from 0 to {F32_MAX:.4g}, not {args.temperature}")
        if args.players != "mcts":
            parser.error("--temperature applies to --players mcts")
        mcts["temperature"] = args.temperature
    common = dict(
        players=args.players,
        games=args.games,
        seed=args.seed,
        format=args.format,
        max_plies=args.max_plies,
        simulations=args.simulations,
        variant=args.variant,
        games_per_shard=args.games_per_shard,
        progress=not args.quiet,
        **mcts,
    )
    try:
        if args.ray is not None:
            import taikyoku.distributed as distributed

            address = None if args.ray == "local" else args.ray
            summary = distributed.selfplay(args.out, address=address, cpus_per_task=args.threads or 1, **common)
        else:
            summary = selfplay(args.out, threads=args.threads, **common)
    except taikyoku.TaikyokuError as e:  # refused before anything was written
        parser.error(str(e))
    except OverflowError as e:  # a value the engine's bindings cannot take
        parser.error(f"a value is out of the engine's range: {e}")
    except ImportError as e:
        parser.error(f"--ray needs Ray: pip install 'taikyoku[ray]' ({e})")
    except OSError as e:
        print(f"taikyoku selfplay: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("taikyoku selfplay: interrupted; complete shards are kept, run the same command to resume", file=sys.stderr)
        return 130
    for repair in summary.get("repaired", []):
        print(f"regenerated {repair}", file=sys.stderr)
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


def build_parser() -> tuple:
    """The parser and its two subcommand parsers: ``(parser, random_games, selfplay)``."""
    parser = argparse.ArgumentParser(
        prog="taikyoku",
        description="Taikyoku shogi engine tools",
        epilog="Exit status: 0 done, 2 a bad argument (with the usage), 1 a file-system failure while writing.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    games = commands.add_parser(
        "random-games",
        help="play seeded random games and summarise them",
        description="Play seeded uniformly random games in the engine and summarise their results. "
        f"Game i (0-based) is played with seed (S * {GAME_SEED_MULTIPLIER} + i) mod 2**64, where S is --seed: "
        "taikyoku.random_game(seed, max_plies) replays it. The summary prints S; --out records each game's seed.",
    )
    games.add_argument("--games", type=int, default=4, help=f"number of games, 1 to {U32_MAX} (default 4)")
    games.add_argument("--seed", type=int, default=0, help="master seed S, 0 to 2**64-1 (default 0)")
    games.add_argument("--max-plies", type=int, default=2000, help=f"ply limit per game, 1 to {U32_MAX} (default 2000)")
    games.add_argument("--variant", default="taikyoku", choices=taikyoku.variants())
    games.add_argument(
        "--out",
        help="write each game's seed, result and moves in notation to this new text file "
        "(its directory must exist; an existing file is never overwritten)",
    )
    play = commands.add_parser(
        "selfplay",
        help="generate a self-play dataset (Arrow IPC or Parquet)",
        description="Generate a seeded self-play dataset; see datasets/README.md. "
        "With only --out it makes a small random dataset (8 games).",
    )
    play.add_argument("--out", required=True, help="dataset directory (new, empty, or an interrupted run to resume)")
    play.add_argument("--players", default="random", choices=["random", "mcts"], help="who plays both sides (default random)")
    play.add_argument("--games", type=int, default=8, help=f"number of games, 1 to {U32_MAX} (default 8)")
    play.add_argument("--seed", type=int, default=0, help="master seed, 0 to 2**64-1 (default 0)")
    play.add_argument(
        "--threads", type=int, default=None, help=f"worker threads, 1 to {MAX_THREADS} (default: all cores; output is the same)"
    )
    play.add_argument("--format", default="arrow", choices=["arrow", "parquet"], help="file format (default arrow)")
    play.add_argument("--max-plies", type=int, default=5000, help=f"ply limit per game, 1 to {U32_MAX} (default 5000)")
    play.add_argument("--simulations", type=int, default=64, help="MCTS simulations per move (default 64)")
    play.add_argument(
        "--temperature", type=float, default=None, help="MCTS move-sampling temperature, >= 0 (default 1.0; 0: most visited)"
    )
    play.add_argument("--games-per-shard", type=int, default=16, help="games per shard file (default 16)")
    play.add_argument("--variant", default="taikyoku", choices=taikyoku.variants())
    play.add_argument("--quiet", action="store_true", help="no progress bar")
    play.add_argument(
        "--ray",
        metavar="ADDRESS",
        default=None,
        help="play on a Ray cluster (ray.init address: 'auto', 'ray://host:10001', 'local'); "
        "--out must then be seen by every machine (a shared directory or a pyarrow URI). Needs taikyoku[ray].",
    )
    check = commands.add_parser(
        "check-variant",
        help="check a variant's rules file, piece table and setup",
        description="Load NAME.rules with NAME.pieces and NAME.setup beside it (formats: docs/PIECE_TABLE.md), "
        "with every rule option, and print a summary or the first error with its file and line.",
    )
    check.add_argument("rules", help="path of the variant's .rules file")
    return parser, games, play


def main(argv: list[str] | None = None) -> int:
    parser, games, play = build_parser()
    args = parser.parse_args(argv)
    if args.command == "selfplay":
        return _selfplay(args, play)
    if args.command == "check-variant":
        return _check_variant(args, parser)
    return _random_games(args, games)


def _check_variant(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from pathlib import Path

    rules = Path(args.rules)
    if rules.suffix != ".rules":
        parser.error(f"{rules} is not a .rules file")
    texts = {}
    for kind in ("rules", "pieces", "setup"):
        path = rules.with_suffix(f".{kind}")
        try:
            texts[kind] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            print(f"taikyoku check-variant: error: cannot read {path}: {e}", file=sys.stderr)
            return 1
    try:
        print(taikyoku._core.check_variant(rules.stem, texts["rules"], texts["pieces"], texts["setup"]))
    except taikyoku.TaikyokuError as e:
        print(f"taikyoku check-variant: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
