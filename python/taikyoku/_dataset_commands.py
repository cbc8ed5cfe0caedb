"""The dataset commands of the command line, ``taikyoku info DIR`` and ``taikyoku verify DIR``
(``taikyoku.__main__`` parses and checks their arguments first)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from typing import Any, Dict, List, Tuple

import taikyoku


def open_dataset(path: str, parser: argparse.ArgumentParser) -> Tuple[Any, List[str]]:
    """``(dataset, warnings)``. Not a dataset directory: a usage error (exit 2); a damaged one:
    TaikyokuError, for the caller to report (exit 1)."""
    import taikyoku.datasets as tds

    if not os.path.isdir(path):
        parser.error(f"{path} is not a directory" if os.path.exists(path) else f"{path} does not exist")
    if not os.path.exists(os.path.join(path, "manifest.json")):
        parser.error(f"{path} holds no manifest.json: it is not a taikyoku dataset")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", tds.IncompleteDatasetWarning)
        dataset = tds.open(path)
    return dataset, [str(w.message) for w in caught if issubclass(w.category, tds.IncompleteDatasetWarning)]


def _describe_players(players: Dict[str, Any]) -> str:
    if players.get("kind") != "mcts":
        return str(players.get("kind", "?"))
    knobs = ", ".join(f"{k} {json.dumps(v)}" for k, v in players.items() if k not in ("kind", "simulations"))
    return f"mcts, {players.get('simulations')} simulations ({knobs})"


def _size(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def info(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    try:
        dataset, notes = open_dataset(args.dir, parser)
        info = dataset.summary()
    except taikyoku.TaikyokuError as e:
        print(f"taikyoku info: error: {e}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(dict(info, notes=notes), indent=2))
        return 0
    state = (
        "complete"
        if info["complete"]
        else (
            f"incomplete: {info['shards']} of {info['planned_shards']} shards; rerun the generating command to finish it"
        )
    )
    network = info.get("network")
    rows = [
        ("dataset", info["path"]),
        ("variant", f"{info['variant']} ({', '.join(info['options']) or 'standard rules'})"),
        ("players", _describe_players(info["players"]) + (f", evaluator {network['name']}" if network else "")),
        ("games", f"{info['games']:,} of {info['planned_games']:,} ({state})"),
        ("positions", f"{info['positions']:,}"),
        (
            "results",
            f"black {info['black_wins']:,}, white {info['white_wins']:,}, draws {info['draws']:,}, "
            f"truncated {info['truncated']:,}",
        ),
        (
            "shards",
            f"{info['shards']} {info['format']} shard{'' if info['shards'] == 1 else 's'} of up to "
            f"{info['games_per_shard']} games",
        ),
        (
            "legal actions",
            "stored (the positions' legal_actions column)"
            if info.get("legal_actions")
            else "not stored (Dataset.legal_actions() replays the games)",
        ),
        ("size", f"{_size(info['bytes'])} ({info['bytes'] / max(info['positions'], 1):.1f} bytes/position)"),
        ("seed", f"{info['seed']}, max plies {info['max_plies']}"),
        ("written by", f"taikyoku {info['engine_version']}, dataset schema version {info['schema_version']}"),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    return 0


def verify(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    try:
        dataset, notes = open_dataset(args.dir, parser)
        import taikyoku.datasets as tds

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", tds.UncheckedShardsWarning)
            checked = dataset.verify(args.game, progress=args.progress)
        notes += [str(w.message) for w in caught if issubclass(w.category, tds.UncheckedShardsWarning)]
    except taikyoku.TaikyokuError as e:
        print(f"taikyoku verify: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("taikyoku verify: interrupted", file=sys.stderr)
        return 130
    for note in notes:
        print(f"note: {note}")
    print(
        f"ok: {args.dir}: {checked['games']:,} games and {checked['positions']:,} positions verified "
        "(every shard checked as a resume checks it, and every position replayed in the engine)"
    )
    return 0
