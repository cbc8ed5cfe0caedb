"""Command line (also ``python -m taikyoku``):

- ``taikyoku selfplay``: generate a self-play dataset (flags, or ``--recipe FILE.json``);
- ``taikyoku info DIR``: what a dataset holds; ``taikyoku verify DIR``: check it completely;
- ``taikyoku random-games``: play seeded random games and summarise them;
- ``taikyoku match A B``: play a match between two players and print the score and Elo difference;
- ``taikyoku check-variant``: check a variant's rules files; ``taikyoku --version``.

Errors never print a traceback: a bad argument (a value out of range, an output path that cannot be
used as given, a directory that is not a dataset) ends with the usage and a one-line message, exit
status 2, as argparse does; a failure of the file system while writing (permissions, full disk), an
output directory another run is writing (``selfplay --wait`` waits for it instead), a damaged
dataset found by ``info`` or ``verify`` (``verify`` lists every damaged shard), or a player failing
during a ``match``, ends with a message on stderr, exit status 1. Ctrl-C stops any command with
one line on stderr, exit status 130; output piped into a command that stops reading (``taikyoku
info DIR | head``) ends quietly, exit status 141 (as a process killed by SIGPIPE).
"""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
import time
from typing import Any, Dict, List, Mapping, Optional, Tuple

import taikyoku

U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1
MAX_THREADS = 256  # as taikyoku.selfplay accepts
SELFPLAY_SEED_MAX = U64_MAX  # seeds are unsigned 64-bit integers
# random-games: game i of master seed S is played with this seed (random_game takes any u64).
GAME_SEED_MULTIPLIER = 1_000_003
GAME_SEED_MODULUS = 2**64


def game_seed(master_seed: int, index: int) -> int:
    """The seed ``taikyoku random-games --seed S`` plays its game ``index`` with."""
    return (master_seed * GAME_SEED_MULTIPLIER + index) % GAME_SEED_MODULUS


def _check_int(parser: argparse.ArgumentParser, flag: str, value: Optional[int], low: int, high: int) -> None:
    if value is not None and not low <= value <= high:
        parser.error(f"{flag} must be between {low} and {high}, not {value}")


def _check_mcts(parser: argparse.ArgumentParser, name: str, value: Any) -> None:
    """An MCTS flag's value against the engine's range for it (taikyoku._core.MCTS_LIMITS, the
    list taikyoku.selfplay and the engine check too)."""
    if value is None:
        return
    from taikyoku.selfplay import check_mcts_setting

    try:
        check_mcts_setting(name, value)
    except taikyoku.TaikyokuError as e:
        parser.error(str(e).replace(name, _flag(name), 1))


def _os_error(e: OSError) -> str:
    """An OSError as one line: ``path: strerror`` where it names a path, else its text."""
    if e.filename is not None and e.strerror:
        return f"{e.filename}: {e.strerror}"
    return str(e.strerror or e)


def _check_path_text(parser: argparse.ArgumentParser, flag: str, value: Optional[str]) -> None:
    if value is not None and (not value or "\0" in value):
        parser.error(f"{flag} must be a file-system path, not {value!r}")


def _open_record_file(parser: argparse.ArgumentParser, path: str) -> Tuple[Any, bool]:
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
    except KeyboardInterrupt:
        _discard(out, args.out if created else None)
        print("taikyoku random-games: interrupted", file=sys.stderr)
        return 130
    except OSError as e:
        _discard(out, args.out if created else None)
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


def _discard(out: Any, created: Optional[str]) -> None:
    """Closes a record file that failed or was interrupted, removing it if this run created it
    (no partial record file is left behind)."""
    if out:
        try:
            out.close()
        except OSError:
            pass
    if created:
        try:
            os.remove(created)
        except OSError:
            pass


#: ``taikyoku selfplay``'s defaults (those of ``taikyoku.selfplay``, but 5000 plies and 8 games
#: are the command's own choice too). A recipe's ``args`` replace them; flags replace both.
SELFPLAY_DEFAULTS: Dict[str, Any] = {
    "players": "random",
    "games": 8,
    "seed": 0,
    "threads": None,
    "format": "arrow",
    "max_plies": 5000,
    "simulations": 64,
    "games_per_shard": None,  # derived from shard_positions (taikyoku.selfplay)
    "shard_positions": None,  # taikyoku._core.DEFAULT_SHARD_POSITIONS
    "store_legal_actions": False,
    "variant": "taikyoku",
    "options": None,
}
#: The MCTS flags: argument name -> (flag, type, help). Their defaults are the engine's.
MCTS_FLAGS: Dict[str, Tuple[str, Any, str]] = {
    "c_puct": ("--c-puct", float, "PUCT exploration constant, > 0"),
    "dirichlet_alpha": ("--dirichlet-alpha", float, "concentration of the root's Dirichlet noise, > 0"),
    "dirichlet_fraction": ("--dirichlet-fraction", float, "weight of the root noise, 0 to 1 (0: none)"),
    "temperature": ("--temperature", float, "move-sampling temperature, >= 0 (0: most visited)"),
    "temperature_plies": ("--temperature-plies", int, "plies the temperature applies to; then the most visited move"),
    "priors": ("--priors", str, "leaf priors: captures (heuristic) or uniform"),
    "rollout_plies": ("--rollout-plies", int, "random plies before the heuristic evaluates a leaf (0: none)"),
    "opponent_moves": (
        "--opponent-moves",
        str,
        "where the heuristic counts the opponent's moves at a leaf: parent (its parent node) or leaf (a second "
        "generation, slower)",
    ),
    "reuse_tree": (
        "--reuse-tree",
        bool,
        "keep the chosen subtree for the next move (--no-reuse-tree: a new tree per move)",
    ),
    "root": ("--root", str, "root search: puct, or gumbel (sequential halving; stores the improved policy)"),
    "gumbel_considered": ("--gumbel-considered", int, "moves a Gumbel root samples (16)"),
    "gumbel_scale": ("--gumbel-scale", float, "scale of a Gumbel root's noise, >= 0 (1.0; 0: none)"),
}
#: What a recipe file (datasets/recipes/*.json, datasets/README.md §11) may hold.
RECIPE_KEYS = ("name", "description", "out", "args", "settings", "command", "python", "expect")
#: The keys of a recipe's ``args``: keyword arguments of ``taikyoku.selfplay`` that a command runs with.
RECIPE_ARGS = tuple(SELFPLAY_DEFAULTS) + tuple(MCTS_FLAGS)


def _flag(name: str) -> str:
    return MCTS_FLAGS[name][0] if name in MCTS_FLAGS else "--" + name.replace("_", "-")


def _read_recipe(parser: argparse.ArgumentParser, path: str) -> Dict[str, Any]:
    """The recipe at ``path``, checked: a JSON object of RECIPE_KEYS whose ``args`` name only
    RECIPE_ARGS. Anything else is a usage error naming what is wrong."""
    try:
        with open(path, encoding="utf-8") as f:
            recipe = json.load(f)
    except OSError as e:
        parser.error(f"--recipe {path}: cannot read it: {e.strerror or e}")
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        parser.error(f"--recipe {path} is not valid JSON: {e}")
    if not isinstance(recipe, dict):
        parser.error(f"--recipe {path} must hold a JSON object, not {type(recipe).__name__}")
    unknown = sorted(set(recipe) - set(RECIPE_KEYS))
    if unknown:
        parser.error(
            f"--recipe {path}: unknown keys {', '.join(map(repr, unknown))} (a recipe holds {', '.join(RECIPE_KEYS)})"
        )
    arguments = recipe.get("args", {})
    if not isinstance(arguments, dict):
        parser.error(f"--recipe {path}: 'args' must be an object of taikyoku.selfplay arguments")
    unknown = sorted(set(arguments) - set(RECIPE_ARGS))
    if unknown:
        parser.error(f"--recipe {path}: unknown args {', '.join(map(repr, unknown))} (known: {', '.join(RECIPE_ARGS)})")
    if "out" in recipe and (not isinstance(recipe["out"], str) or not recipe["out"]):
        parser.error(f"--recipe {path}: 'out' must be a directory name")
    return recipe


def _selfplay_arguments(
    args: argparse.Namespace, parser: argparse.ArgumentParser
) -> Tuple[str, Dict[str, Any], Optional[Dict[str, Any]]]:
    """``(out, keyword arguments of taikyoku.selfplay, recipe or None)``: the defaults, replaced by
    the recipe's ``args``, replaced by the flags given."""
    recipe = _read_recipe(parser, args.recipe) if args.recipe is not None else None
    merged: Dict[str, Any] = dict(SELFPLAY_DEFAULTS)
    if recipe is not None:
        merged.update(recipe.get("args", {}))
    given = {name: getattr(args, name) for name in RECIPE_ARGS if getattr(args, name, None) is not None}
    merged.update(given)
    out = args.out if args.out is not None else (recipe or {}).get("out")
    if out is None:
        parser.error("the following arguments are required: --out (or a --recipe that names its 'out')")
    _check_path_text(parser, "--out", out)
    _check_int(parser, "--games", given.get("games"), 1, U32_MAX)
    _check_int(parser, "--seed", given.get("seed"), 0, SELFPLAY_SEED_MAX)
    _check_int(parser, "--threads", given.get("threads"), 1, MAX_THREADS)
    _check_int(parser, "--max-plies", given.get("max_plies"), 1, U32_MAX)
    _check_int(parser, "--games-per-shard", given.get("games_per_shard"), 1, U32_MAX)
    _check_int(parser, "--shard-positions", given.get("shard_positions"), 1, U32_MAX)
    if merged.get("games_per_shard") is not None and merged.get("shard_positions") is not None:
        parser.error("give --games-per-shard or --shard-positions, not both (a recipe's args count too)")
    for name in taikyoku._core.MCTS_LIMITS:  # --simulations and every numeric MCTS flag
        _check_mcts(parser, name, given.get(name))
    mcts = [name for name in MCTS_FLAGS if merged.get(name) is not None]
    if mcts and merged["players"] != "mcts":
        where = _flag(mcts[0]) if mcts[0] in given else f"the recipe's {mcts[0]!r}"
        parser.error(f"{where} applies to --players mcts")
    return out, merged, recipe


def _selfplay(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from taikyoku.selfplay import selfplay, settings_json

    out, arguments, recipe = _selfplay_arguments(args, parser)
    common = {k: v for k, v in arguments.items() if k != "threads" and (v is not None or k not in MCTS_FLAGS)}
    common["progress"] = not args.quiet
    threads = arguments.get("threads")
    if recipe is not None and "settings" in recipe and arguments == dict(SELFPLAY_DEFAULTS, **recipe.get("args", {})):
        # The recipe run as it is: its recorded settings should be what this taikyoku records.
        try:
            mcts = {k: v for k, v in common.items() if k in MCTS_FLAGS}
            plain = {k: v for k, v in common.items() if k not in MCTS_FLAGS}
            recorded = json.loads(
                settings_json(threads=threads, leaves_per_game=8, concurrent_games=1, mcts=mcts, **plain)
            )
        except taikyoku.TaikyokuError as e:
            parser.error(f"--recipe {args.recipe}: {e}")
        if recorded != recipe["settings"]:
            print(
                f"taikyoku selfplay: warning: --recipe {args.recipe}: its 'settings' differ from what this taikyoku "
                f"records ({json.dumps(recorded, sort_keys=True)}); the dataset will not match the recipe's",
                file=sys.stderr,
            )
    summary: Mapping[str, Any]
    try:
        if args.ray is not None:
            import taikyoku.distributed as distributed

            address = None if args.ray == "local" else args.ray
            summary = distributed.selfplay(out, address=address, cpus_per_task=threads or 1, wait=args.wait, **common)
        else:
            summary = selfplay(out, threads=threads, wait=args.wait, **common)
    except taikyoku.TaikyokuError as e:  # refused before anything was written
        parser.error(str(e))
    except OverflowError as e:  # a value the engine's bindings cannot take
        parser.error(f"a value is out of the engine's range: {e}")
    except ImportError as e:
        parser.error(f"--ray needs Ray: pip install 'taikyoku[ray]' ({e})")
    except OSError as e:  # the file system failed, or another run writes --out (BlockingIOError)
        print(f"taikyoku selfplay: error: {_os_error(e)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(
            "taikyoku selfplay: interrupted; complete shards are kept, run the same command to resume", file=sys.stderr
        )
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


# -- match ----------------------------------------------------------------------------------------

#: ``taikyoku match``'s defaults (``taikyoku.arena.match``'s, but for the openings: 4 random plies,
#: so that deterministic players do not replay the same two games in every pair).
MATCH_DEFAULTS: Dict[str, Any] = {"games": 20, "openings": 4, "seed": 0, "max_plies": None}


def _match(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from taikyoku import arena

    _check_int(parser, "--games", args.games, 1, arena.MAX_GAMES)
    _check_int(parser, "--openings", args.openings, 0, U32_MAX)
    _check_int(parser, "--seed", args.seed, 0, U64_MAX)
    _check_int(parser, "--max-plies", args.max_plies, 1, U32_MAX)
    _check_int(parser, "--threads", args.threads, 1, MAX_THREADS)
    players = []
    for spec in (args.a, args.b):
        try:
            players.append(arena.player_from_spec(spec, args.variant))
        except taikyoku.TaikyokuError as e:
            parser.error(str(e))
        except Exception as e:  # noqa: BLE001 - a network file torch cannot read, say
            parser.error(f"player {spec!r}: cannot load it: {type(e).__name__}: {e}")
    started = time.perf_counter()
    try:
        result = arena.match(
            players[0],
            players[1],
            args.games,
            variant=args.variant,
            openings=args.openings,
            seed=args.seed,
            max_plies=args.max_plies,
            threads=args.threads,
            progress=not args.quiet,
            options=args.options,
        )
    except arena.PlayerError as e:
        print(f"taikyoku match: error: {str(e).splitlines()[0]}", file=sys.stderr)
        return 1
    except taikyoku.TaikyokuError as e:  # an argument the match refuses (e.g. openings that always end the game)
        parser.error(str(e))
    except KeyboardInterrupt:
        print("taikyoku match: interrupted", file=sys.stderr)
        return 130
    elapsed = time.perf_counter() - started
    pairs = f"{args.games // 2} colour-swapped pair{'' if args.games // 2 == 1 else 's'}"
    if args.games % 2:
        pairs += " and one game with A as black"
    limit = f"max plies {args.max_plies}" if args.max_plies is not None else "no ply limit"
    print(f"A: {args.a}  B: {args.b}")
    print(
        f"{args.variant}, {args.games} game{'' if args.games == 1 else 's'} ({pairs}), openings of {args.openings} "
        f"random plies, seed {args.seed}, {limit}"
    )
    print(f"{result}  (A's view)")
    for color in ("black", "white"):
        own = [r.result for r in result.records if r.a_color == color]
        if own:
            print(f"A as {color}: W {own.count('win')}  D {own.count('draw')}  L {own.count('loss')}")
    endings: Dict[str, int] = {}
    for record in result.records:
        endings[record.termination] = endings.get(record.termination, 0) + 1
    print("endings: " + ", ".join(f"{name} {count}" for name, count in sorted(endings.items())))
    plies = [r.plies for r in result.records]
    print(f"plies: mean {sum(plies) / len(plies):.0f}, longest {max(plies)}; {elapsed:.1f} s")
    return 0


# -- info and verify: taikyoku/_dataset_commands.py runs them, once the arguments are checked here.


def _info(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from taikyoku import _dataset_commands

    _check_path_text(parser, "DIR", args.dir)
    return _dataset_commands.info(args, parser)


def _verify(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from taikyoku import _dataset_commands

    for game in args.game or []:
        _check_int(parser, "--game", game, 0, U64_MAX)
    _check_path_text(parser, "DIR", args.dir)
    return _dataset_commands.verify(args, parser)


def build_parser() -> Tuple[argparse.ArgumentParser, argparse.ArgumentParser, argparse.ArgumentParser]:
    """The parser and two of its subcommand parsers: ``(parser, random_games, selfplay)``."""
    parser, commands = _build_parsers()
    return parser, commands["random-games"], commands["selfplay"]


def _build_parsers() -> Tuple[argparse.ArgumentParser, Dict[str, argparse.ArgumentParser]]:
    """The parser and each command's own parser (its usage goes with its errors)."""
    parser = argparse.ArgumentParser(
        prog="taikyoku",
        description="Taikyoku shogi engine tools",
        epilog="Exit status: 0 done, 2 a bad argument (with the usage), 1 a file-system failure while writing, "
        "a damaged dataset or a player failing during a match.",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"taikyoku {taikyoku.__version__} (dataset schema version {taikyoku._core.SCHEMA_VERSION})",
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
    games.add_argument("--variant", default="taikyoku", type=_variant, help=VARIANT_HELP)
    games.add_argument(
        "--out",
        help="write each game's seed, result and moves in notation to this new text file "
        "(its directory must exist; an existing file is never overwritten)",
    )
    play = commands.add_parser(
        "selfplay",
        help="generate a self-play dataset (Arrow IPC or Parquet)",
        description="Generate a seeded self-play dataset; see datasets/README.md. "
        "With only --out it makes a small random dataset (8 games). With --recipe FILE.json "
        "(datasets/recipes/) the recipe's args and out are used; flags given as well override them.",
    )
    d = SELFPLAY_DEFAULTS
    play.add_argument(
        "--recipe", metavar="FILE.json", default=None, help="a recipe file (datasets/recipes/*.json): its args and out"
    )
    play.add_argument(
        "--out",
        default=None,
        help="dataset directory (new, empty, or an interrupted run to resume); required without --recipe",
    )
    play.add_argument(
        "--players", default=None, choices=["random", "mcts"], help=f"who plays both sides (default {d['players']})"
    )
    play.add_argument("--games", type=int, default=None, help=f"number of games, 1 to {U32_MAX} (default {d['games']})")
    play.add_argument("--seed", type=int, default=None, help="master seed, 0 to 2**64-1 (default 0)")
    play.add_argument(
        "--threads",
        type=int,
        default=None,
        help=f"worker threads, 1 to {MAX_THREADS} (default: all cores; output is the same)",
    )
    play.add_argument("--format", default=None, choices=["arrow", "parquet"], help="file format (default arrow)")
    play.add_argument(
        "--max-plies", type=int, default=None, help=f"ply limit per game, 1 to {U32_MAX} (default {d['max_plies']})"
    )
    shard_target = taikyoku._core.DEFAULT_SHARD_POSITIONS
    play.add_argument(
        "--games-per-shard",
        type=int,
        default=None,
        help="games per shard file (default: derived from --shard-positions and the players' expected game length, "
        "datasets/README.md §2)",
    )
    play.add_argument(
        "--shard-positions",
        type=int,
        default=None,
        help=f"target positions per shard, from which --games-per-shard is derived (default {shard_target:,}); "
        "not with --games-per-shard",
    )
    play.add_argument(
        "--store-legal-actions",
        action="store_true",
        default=None,
        help="also store each position's legal actions (a legal_actions column), so policy targets need no replay",
    )
    play.add_argument("--variant", default=None, type=_variant, help=VARIANT_HELP)
    play.add_argument(
        "--option",
        dest="options",
        action="append",
        default=None,
        metavar="NAME",
        help="a rule option (taikyoku.rule_options()); repeat for several",
    )
    mcts = play.add_argument_group("MCTS (with --players mcts; the defaults are the engine's)")
    mcts.add_argument(
        "--simulations", type=int, default=None, help=f"simulations per move (default {d['simulations']})"
    )
    try:
        from taikyoku.selfplay import mcts_defaults

        engine = mcts_defaults()
    except Exception:  # noqa: BLE001 - help text only
        engine = {}
    for name, (flag, kind, text) in MCTS_FLAGS.items():
        default = engine.get(name)
        shown = (
            f" (default {str(default).lower() if isinstance(default, bool) else default})"
            if default is not None
            else ""
        )
        if kind is bool:
            mcts.add_argument(flag, dest=name, action=argparse.BooleanOptionalAction, default=None, help=text + shown)
        elif name == "priors":
            mcts.add_argument(flag, dest=name, choices=["captures", "uniform"], default=None, help=text + shown)
        elif name == "opponent_moves":
            mcts.add_argument(flag, dest=name, choices=["parent", "leaf"], default=None, help=text + shown)
        elif name == "root":
            mcts.add_argument(flag, dest=name, choices=["puct", "gumbel"], default=None, help=text + " (default puct)")
        else:
            mcts.add_argument(flag, dest=name, type=kind, default=None, help=text + shown)
    play.add_argument("--quiet", action="store_true", help="no progress bar")
    play.add_argument(
        "--wait",
        action="store_true",
        help="if another run is writing --out (it holds the directory's writer lock), wait for it to finish, "
        "then resume its dataset, instead of failing at once",
    )
    play.add_argument(
        "--ray",
        metavar="ADDRESS",
        default=None,
        help="play on a Ray cluster (ray.init address: 'auto', 'ray://host:10001', 'local'); "
        "--out must then be seen by every machine (a shared directory or a pyarrow URI). Needs taikyoku[ray].",
    )
    duel = commands.add_parser(
        "match",
        help="play a match between two players: score and Elo difference",
        description="Play games between players A and B in colour-swapped pairs (A is Black in even games), each "
        "pair from its own seeded random opening, and print A's wins, draws and losses, score and Elo difference "
        "with its 95% interval (taikyoku.arena.match). Players: "
        "random; mcts:N (heuristic PUCT, N simulations); gumbel:N (heuristic evaluator, Gumbel root); "
        "mcts:N:FILE.pt, gumbel:N:FILE.pt (a network file as evaluator); policy:FILE.pt (a network's greedy "
        "move, no search); pretrained (= policy:pretrained), mcts:N:pretrained, gumbel:N:pretrained (the "
        "variant's shipped network). The same arguments give the same games, whatever --threads is.",
    )
    m = MATCH_DEFAULTS
    duel.add_argument("a", metavar="A", help="player A (the score and Elo are A's)")
    duel.add_argument("b", metavar="B", help="player B")
    duel.add_argument("--variant", default="taikyoku", type=_variant, help=VARIANT_HELP)
    duel.add_argument(
        "--games",
        type=int,
        default=m["games"],
        help=f"number of games (default {m['games']}; odd: the last pair plays one game)",
    )
    duel.add_argument(
        "--openings",
        type=int,
        default=m["openings"],
        help=f"random plies that open each pair's games (default {m['openings']}; 0: the initial position)",
    )
    duel.add_argument(
        "--seed", type=int, default=m["seed"], help="seed of the openings and players, 0 to 2**64-1 (default 0)"
    )
    duel.add_argument(
        "--max-plies",
        type=int,
        default=m["max_plies"],
        help="stop games at this many plies, the opening's included, as draws (default: no limit)",
    )
    duel.add_argument(
        "--threads",
        type=int,
        default=None,
        help=f"games played at once, 1 to {MAX_THREADS} (default: all cores; the games are the same)",
    )
    duel.add_argument(
        "--option",
        dest="options",
        action="append",
        default=None,
        metavar="NAME",
        help="a rule option (taikyoku.rule_options()); repeat for several",
    )
    duel.add_argument("--quiet", action="store_true", help="no progress bar")
    check = commands.add_parser(
        "check-variant",
        help="check a variant's rules file, piece table and setup",
        description="Load NAME.rules with NAME.pieces and NAME.setup beside it (formats: docs/PIECE_TABLE.md), "
        "with every rule option, and print a summary or the first error with its file and line.",
    )
    check.add_argument("rules", help="path of the variant's .rules file")
    info = commands.add_parser(
        "info",
        help="what a self-play dataset holds",
        description="Print what the dataset in DIR holds, from its manifest: variant, players and settings, "
        "games, positions and shards (complete or not), the results, size on disk and the versions that wrote it. "
        "The counts are the manifest's: taikyoku verify checks them against the files.",
    )
    info.add_argument("dir", metavar="DIR", help="dataset directory")
    info.add_argument("--json", action="store_true", help="print it as JSON (taikyoku.datasets.Dataset.summary())")
    verify = commands.add_parser(
        "verify",
        help="check a self-play dataset completely",
        description="Check the dataset in DIR: first every shard as a resume checks it (its manifest entry and "
        "file names, both files' sizes and CRC-32s, its counts and game ids against its games file), then every "
        "stored game replayed in the engine (boards, side to move, repetitions, legal-move counts, outcomes, "
        "notation, results). Exit status 0: intact; 1: damaged (every damaged shard is listed, or the first "
        "difference of a replay); 2: not a dataset.",
    )
    verify.add_argument("dir", metavar="DIR", help="dataset directory")
    verify.add_argument("--game", type=int, action="append", metavar="ID", help="verify only this game id (repeatable)")
    verify.add_argument("--progress", action="store_true", help="show a progress bar (one step per game)")
    return parser, {
        "random-games": games,
        "selfplay": play,
        "match": duel,
        "check-variant": check,
        "info": info,
        "verify": verify,
    }


VARIANT_HELP = (
    f"a variant ({', '.join(taikyoku.variants())}; default taikyoku), or the path of a variant's rules file "
    "NAME.rules with NAME.pieces and NAME.setup beside it (taikyoku.load_variant)"
)


def _variant(text: str) -> str:
    """The value of --variant: a known variant's name, or a rules file's path, loaded."""
    if text.endswith(".rules"):
        try:
            return taikyoku.load_variant(text)
        except (OSError, taikyoku.TaikyokuError) as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    if text not in taikyoku.variants():
        known = ", ".join(repr(name) for name in taikyoku.variants())
        raise argparse.ArgumentTypeError(
            f"invalid choice: '{text}' (choose from {known}, or give the path of a NAME.rules file)"
        )
    return text


def main(argv: Optional[List[str]] = None) -> int:
    """Runs the command line with ``argv`` (default: ``sys.argv[1:]``); returns the exit status.

    Ctrl-C in any command ends it with one line and status 130; a reader that closes the pipe
    (``| head``) ends it quietly with status 141: never a traceback."""
    try:
        status = _command(argv)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's last flush
        return status
    except KeyboardInterrupt:
        print("taikyoku: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Nothing more can be written: stdout goes to /dev/null so that Python's own flush at
        # exit does not report the broken pipe either.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 141


def _command(argv: Optional[List[str]]) -> int:
    parser, commands = _build_parsers()
    args = parser.parse_args(argv)
    if args.command == "selfplay":
        return _selfplay(args, commands["selfplay"])
    if args.command == "check-variant":
        return _check_variant(args, parser)
    if args.command == "info":
        return _info(args, commands["info"])
    if args.command == "verify":
        return _verify(args, commands["verify"])
    if args.command == "match":
        return _match(args, commands["match"])
    return _random_games(args, commands["random-games"])


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
