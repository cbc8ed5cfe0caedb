"""Reading self-play datasets: tables, observations, replays and training batches.

A dataset is the directory one self-play run writes (layout and schemas: ``datasets/README.md``):
``manifest.json`` plus one games file and one positions file per shard, as Arrow IPC or Parquet.

>>> import taikyoku.datasets as tds                                    # doctest: +SKIP
>>> ds = tds.open("datasets/samples/random-tiny")                      # doctest: +SKIP
>>> ds.positions.num_rows, ds.observations(ds.positions.slice(0, 4)).shape   # doctest: +SKIP
(120, (4, 36, 36, 609))

pyarrow is imported on first use, not with this module, so ``import taikyoku`` never needs it;
torch is optional too (:class:`PositionDataset` subclasses its ``IterableDataset`` only when it
is installed).
"""

from __future__ import annotations

import functools
import json
import math
import os
import warnings
import zlib
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, List, Literal, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from taikyoku import _core, _validate
from taikyoku._core import Game, TaikyokuError, decode_positions

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "LEGAL_ACTIONS",
    "POLICY",
    "SCHEMA_VERSION",
    "Dataset",
    "IncompleteDatasetWarning",
    "PositionDataset",
    "UncheckedShardsWarning",
    "decode",
    "file_metadata",
    "games_schema",
    "open",
    "positions_schema",
]

#: A path naming a dataset directory or a file.
PathLike = Union[str, "os.PathLike[str]"]
#: A training batch (``Dataset.batches``): names to numpy arrays.
Batch = Dict[str, np.ndarray]
#: The frame of observations: ``"mover"`` (the side to move's view, the actions' frame) or
#: ``"absolute"`` (Black's view, the stored boards' frame).
Frame = Literal["mover", "absolute"]
#: The two tables.
TableName = Literal["games", "positions"]

#: The layout version this module reads (``manifest.json``'s ``schema_version``).
SCHEMA_VERSION = _core.SCHEMA_VERSION
#: Manifest versions this taikyoku reads: version 1 differs only in the action space, which
#: version 2 extended without changing any version-1 action.
READABLE_SCHEMA_VERSIONS = tuple(_core.READABLE_SCHEMA_VERSIONS)

#: Squares of the compact board (36 x 36, row-major).
BOARD_SQUARES = _core.GRID * _core.GRID

_FORMATS = {"arrow": ".arrow", "parquet": ".parquet"}
_MANIFEST_KEYS = ("schema_version", "settings", "shards", "complete")
_SETTINGS_KEYS = ("variant", "options", "players", "games", "seed", "max_plies", "format", "games_per_shard")
_SHARD_KEYS = ("index", "first_game", "games", "positions", "games_file", "positions_file")
# Rows decoded per call when the caller asks for per-position samples (bounds the memory held by
# one decoded chunk: about 50 MB of one-hot uint8 planes).
_SAMPLE_CHUNK = 64


class IncompleteDatasetWarning(UserWarning):
    """The run that wrote the dataset has not finished: only its complete shards are read."""


class UncheckedShardsWarning(UserWarning):
    """:meth:`Dataset.verify` found shards whose manifest entries have no checksums (written before
    they existed): only the replay vouches for their contents."""


def _pa() -> Any:
    """pyarrow, imported on first use so that the package itself does not depend on it."""
    try:
        import pyarrow
        import pyarrow.ipc  # noqa: F401  (submodules used below)
        import pyarrow.parquet  # noqa: F401
    except ImportError as e:  # pragma: no cover - pyarrow is installed where the tests run
        raise ImportError("taikyoku.datasets needs pyarrow: pip install pyarrow") from e
    return pyarrow


@functools.cache
def _schema(table: TableName, legal_actions: bool = False, policy: bool = False) -> pa.Schema:
    # The writer's own definition (rust/selfplay/src/tables.rs), sent as an empty IPC stream.
    pa = _pa()
    return pa.ipc.open_stream(
        pa.py_buffer(_core.dataset_schema(table, legal_actions=legal_actions, policy=policy))
    ).schema


def games_schema() -> pa.Schema:
    """The Arrow schema of the games table (one row per game), as the writer defines it.

    Each field's metadata holds its ``description``; the files add the schema-level metadata
    :func:`file_metadata` reads.
    """
    return _schema("games")


def positions_schema(legal_actions: bool = False, policy: bool = False) -> pa.Schema:
    """The Arrow schema of the positions table (one row per position a move was played from).

    ``legal_actions=True`` gives the schema of datasets made with ``store_legal_actions``: the
    same, ending with the ``legal_actions`` column (list<uint32>); ``policy=True`` that of
    datasets made with a Gumbel root (``root="gumbel"``), ending with the ``policy`` column
    (list<struct<action: uint32, weight: float32>>), after ``legal_actions`` when both are there.
    """
    return _schema("positions", _validate.boolean("legal_actions", legal_actions), _validate.boolean("policy", policy))


#: The optional positions column of each position's legal actions (``store_legal_actions``).
LEGAL_ACTIONS = "legal_actions"
#: The optional positions column of a Gumbel root's improved policy (``root="gumbel"``).
POLICY = "policy"


def _stores_policy(settings: Dict[str, Any]) -> bool:
    """Whether a run's positions hold the ``policy`` column: MCTS players with a Gumbel root."""
    players = settings.get("players")
    return isinstance(players, dict) and players.get("kind") == "mcts" and players.get("gumbel") is not None


# The column _iter_batches joins onto positions from the games table (whether each position's game
# has a result), and the batch key it becomes. The column's name cannot clash with a stored one.
_DECIDED_COLUMN = "__taikyoku_decided"


#: The schema-level metadata keys of every shard file (datasets/README.md §2), by the name
#: :func:`file_metadata` gives them.
METADATA_KEYS = {
    "schema_version": "taikyoku.schema_version",
    "engine_version": "taikyoku.engine_version",
    "table": "taikyoku.table",
    "description": "taikyoku.description",
    "variant": "taikyoku.variant",
    "settings": "taikyoku.settings",
}


def file_metadata(source: Any) -> Dict[str, Any]:
    """What a shard file says about itself: its schema-level metadata, decoded.

    ``source`` is a shard file's path (``.arrow`` or ``.parquet``; only the schema is read), or a
    ``pyarrow.Schema`` or anything with a ``schema`` (a Table read from the files). Returns
    ``{"schema_version": int, "engine_version": str, "table": "games" | "positions",
    "description": str, "variant": str, "settings": dict}`` with the keys present (none for
    files written before the metadata existed). Each column's meaning is its field's
    ``description`` metadata.
    """
    pa = _pa()
    schema = source
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        try:
            if path.suffix == ".parquet":
                schema = pa.parquet.read_schema(str(path))
            else:
                with pa.memory_map(str(path), "rb") as f:
                    schema = pa.ipc.open_file(f).schema
        except (OSError, pa.ArrowException) as e:
            raise TaikyokuError(f"cannot read the schema of {path}: {e}") from e
    elif not isinstance(source, pa.Schema):
        schema = getattr(source, "schema", None)
        if not isinstance(schema, pa.Schema):
            raise TaikyokuError(f"expected a shard file's path or a pyarrow schema, got {type(source).__name__}")
    raw = {k.decode("utf-8", "replace"): v.decode("utf-8", "replace") for k, v in (schema.metadata or {}).items()}
    out: Dict[str, Any] = {}
    for name, key in METADATA_KEYS.items():
        if key in raw:
            value: Any = raw[key]
            if name == "schema_version":
                value = int(value) if value.isdigit() else value
            elif name == "settings":
                try:
                    value = json.loads(value)
                except json.JSONDecodeError as e:
                    raise TaikyokuError(f"the {key} metadata is not valid JSON: {e}") from e
            out[name] = value
    return out


_SCHEMAS = {"games": games_schema, "positions": positions_schema}


#: Positions columns that schema version 4 added (datasets of versions 1-3 lack them: zeros).
_PASS_COLUMNS = ("passes", "opponent_passes")


def _table_schema(table: str, settings: Dict[str, Any], version: int = SCHEMA_VERSION) -> pa.Schema:
    """The schema of ``table`` in a dataset of schema ``version`` with ``settings`` (its
    positions hold ``legal_actions`` when the settings store them, and the pass counters from
    version 4 on)."""
    if table == "positions":
        schema = positions_schema(bool(settings.get("store_legal_actions", False)), _stores_policy(settings))
        if version < 4:
            for name in _PASS_COLUMNS:
                schema = schema.remove(schema.get_field_index(name))
        return schema
    return games_schema()


# -- opening ------------------------------------------------------------------------------------


def open(path: PathLike) -> Dataset:  # noqa: A001 - the module's entry point, as in io.open
    """Opens the dataset in directory ``path`` after checking its manifest.

    Raises :class:`taikyoku.TaikyokuError` when the directory, its manifest or a listed shard file
    is missing, or the manifest is corrupt or of another schema version. A run that has not
    finished (``complete: false``) opens with an :class:`IncompleteDatasetWarning`, exposing only
    the shards its manifest lists (the ones written completely).
    """
    root = Path(path)
    if not root.exists():
        raise TaikyokuError(f"no dataset at {root}: the directory does not exist")
    if not root.is_dir():
        raise TaikyokuError(f"{root} is not a dataset directory (it is a file)")
    manifest_path = root / "manifest.json"
    if not manifest_path.is_file():
        raise TaikyokuError(
            f"{root} holds no manifest.json, so it is not a taikyoku dataset (or its run never started)"
        )
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise TaikyokuError(f"{manifest_path} is corrupt (not valid JSON: {e})") from e
    _check_manifest(manifest, manifest_path)
    dataset = Dataset(root, manifest)
    if not manifest["complete"]:
        settings = manifest["settings"]
        warnings.warn(
            f"{root}: the run that writes this dataset has not finished ({len(dataset.shards)} of "
            f"{math.ceil(settings['games'] / settings['games_per_shard'])} shards, {len(dataset)} of "
            f"{settings['games']} games); reading the complete shards only. Re-run the same command to finish it.",
            IncompleteDatasetWarning,
            stacklevel=2,
        )
    return dataset


def _check_manifest(manifest: Any, where: Path) -> None:
    """Raises TaikyokuError unless ``manifest`` is a manifest this version can read."""

    def bad(why: str) -> TaikyokuError:
        return TaikyokuError(f"{where} is not a valid taikyoku manifest: {why}")

    if not isinstance(manifest, dict):
        raise bad(f"expected a JSON object, found {type(manifest).__name__}")
    if "schema_version" not in manifest:
        raise bad("no schema_version")
    version = manifest["schema_version"]
    if isinstance(version, bool) or version not in READABLE_SCHEMA_VERSIONS:
        raise TaikyokuError(
            f"{where} has schema_version {version!r}, but this taikyoku reads versions "
            f"{', '.join(map(str, READABLE_SCHEMA_VERSIONS))}: "
            "read it with the taikyoku version that wrote it, or regenerate the dataset"
        )
    missing = [k for k in _MANIFEST_KEYS if k not in manifest]
    if missing:
        raise bad(f"missing {', '.join(missing)}")
    settings = manifest["settings"]
    if not isinstance(settings, dict):
        raise bad("settings is not an object")
    missing = [k for k in _SETTINGS_KEYS if k not in settings]
    if missing:
        raise bad(f"settings lack {', '.join(missing)}")
    if settings["format"] not in _FORMATS:
        raise bad(f"unknown format {settings['format']!r} (expected 'arrow' or 'parquet')")
    if not isinstance(settings.get("store_legal_actions", False), bool):
        raise bad("settings.store_legal_actions is not true/false")
    if not isinstance(manifest["complete"], bool):
        raise bad("complete is not true/false")
    shards = manifest["shards"]
    if not isinstance(shards, list):
        raise bad("shards is not a list")
    try:
        per_shard, games = int(settings["games_per_shard"]), int(settings["games"])
    except (TypeError, ValueError):
        raise bad("games and games_per_shard must be integers") from None
    if per_shard < 1 or games < 1:
        raise bad("games and games_per_shard must be positive")
    shard_count = -(-games // per_shard)
    seen = set()
    for i, shard in enumerate(shards):
        if not isinstance(shard, dict) or any(k not in shard for k in _SHARD_KEYS):
            raise bad(f"shard entry {i} lacks some of {', '.join(_SHARD_KEYS)}")
        index = shard["index"]
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < shard_count:
            raise bad(f"shard entry {i} has index {index!r}, outside 0..{shard_count - 1}")
        if index in seen:
            raise bad(f"shard {index} is listed twice (re-run the generating command: it repairs the manifest)")
        seen.add(index)
        first, count = index * per_shard, min(per_shard, games - index * per_shard)
        if shard["first_game"] != first or shard["games"] != count:
            raise bad(
                f"shard {index} claims games {shard['first_game']}.. ({shard['games']} games), "
                f"but the run's shard {index} holds games {first}..{first + count - 1}"
            )
        for key in ("games_file", "positions_file"):
            relative = Path(str(shard[key]))
            # Shard paths are relative to the directory: refuse anything that would leave it.
            if relative.is_absolute() or ".." in relative.parts:
                raise bad(f"shard {index}: {key} {relative} is outside the dataset directory")
            path = where.parent / relative
            if not path.is_file():
                raise TaikyokuError(
                    f"{where.parent}: shard {index} lists {relative}, which is missing; "
                    "re-run the generating command to regenerate it"
                )
            check = _check_of(shard, key)
            if check is not None and path.stat().st_size != check["bytes"]:
                raise TaikyokuError(
                    f"{path} has {path.stat().st_size} bytes but the manifest says {check['bytes']}: the file is damaged; "
                    "re-run the generating command to regenerate it"
                )
    if manifest["complete"] and len(seen) != shard_count:
        absent = sorted(set(range(shard_count)) - seen)
        raise TaikyokuError(
            f"{where} says the dataset is complete but lists {len(seen)} of its {shard_count} shards "
            f"(missing: {', '.join(map(str, absent[:10]))}{'...' if len(absent) > 10 else ''}); "
            "re-run the generating command to regenerate them"
        )


def _check_of(shard: Dict[str, Any], key: str) -> Optional[Dict[str, int]]:
    """The size and CRC-32 the manifest records for a shard's games or positions file (None in
    manifests written before checks existed)."""
    checks = shard.get("checks")
    if not isinstance(checks, dict):
        return None
    check = checks.get(key[: -len("_file")])
    if (
        not isinstance(check, dict)
        or not isinstance(check.get("bytes"), int)
        or not isinstance(check.get("crc32"), int)
    ):
        return None
    return check


# -- the dataset ----------------------------------------------------------------------------------


class Dataset:
    """One self-play dataset directory, or a subset of its games (:meth:`split`, :meth:`subset`).

    Tables are read lazily, on first access, then kept. A subset reads the same files and keeps
    the rows of its games: every method (tables, observations, batches, verify) sees only them.
    """

    path: Path
    manifest: Dict[str, Any]

    def __init__(self, path: PathLike, manifest: Dict[str, Any], game_ids: Optional[npt.ArrayLike] = None) -> None:
        self.path = Path(path)
        self.manifest = manifest
        self._game_ids: Optional[np.ndarray] = None
        if game_ids is not None:
            self._game_ids = np.unique(np.asarray(game_ids, dtype=np.uint64).reshape(-1))

    # Pickling (e.g. to DataLoader workers) sends the path, manifest and subset, never loaded tables.
    def __getstate__(self) -> Dict[str, Any]:
        return {"path": self.path, "manifest": self.manifest, "_game_ids": self._game_ids}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        state.setdefault("_game_ids", None)
        self.__dict__.update(state)

    # ---- manifest views

    @property
    def settings(self) -> Dict[str, Any]:
        """The run's settings (variant, options, players, games, seed, max_plies, format, ...)."""
        return self.manifest["settings"]

    @property
    def shards(self) -> List[Dict[str, Any]]:
        """The complete shards, in game order, as the manifest lists them (for a subset: those
        holding some of its games)."""
        shards = sorted(self.manifest["shards"], key=lambda s: s["first_game"])
        if self._game_ids is None:
            return shards
        ids = self._game_ids
        return [
            s
            for s in shards
            if np.searchsorted(ids, s["first_game"] + s["games"]) > np.searchsorted(ids, s["first_game"])
        ]

    @property
    def game_ids(self) -> Optional[np.ndarray]:
        """The ``game_id`` values of a subset (sorted uint64), or None for the whole dataset."""
        return None if self._game_ids is None else self._game_ids.copy()

    @property
    def variant(self) -> str:
        return self.settings["variant"]

    @property
    def options(self) -> List[str]:
        return list(self.settings.get("options") or [])

    @property
    def max_plies(self) -> int:
        return int(self.settings["max_plies"])

    @property
    def format(self) -> str:
        """The file format: "arrow" (Arrow IPC files) or "parquet"."""
        return self.settings["format"]

    @property
    def complete(self) -> bool:
        return bool(self.manifest["complete"])

    @property
    def has_policy(self) -> bool:
        """Whether the positions hold each position's improved policy (the ``policy`` column of
        runs with a Gumbel root, ``root="gumbel"``): the policy target to train on."""
        return _stores_policy(self.settings)

    @property
    def has_legal_actions(self) -> bool:
        """Whether the positions table stores each position's legal actions (the
        ``legal_actions`` column of runs made with ``store_legal_actions``)."""
        return bool(self.settings.get("store_legal_actions", False))

    @property
    def num_games(self) -> int:
        """Games in the complete shards (of a subset: its games)."""
        if self._game_ids is not None:
            return int(self._game_ids.size)
        return sum(int(s["games"]) for s in self.shards)

    @property
    def num_positions(self) -> int:
        """Positions of those games (a subset reads the games table to count them)."""
        if self._game_ids is not None:
            return int(np.asarray(self.games.column("plies").to_numpy(), dtype=np.int64).sum())
        return sum(int(s["positions"]) for s in self.shards)

    def __len__(self) -> int:
        return self.num_games

    @property
    def games_files(self) -> List[Path]:
        return [self.path / s["games_file"] for s in self.shards]

    @property
    def positions_files(self) -> List[Path]:
        return [self.path / s["positions_file"] for s in self.shards]

    @property
    def files(self) -> List[Path]:
        """Every shard file (games then positions, shard by shard): what plain pyarrow/polars should read."""
        return [self.path / s[k] for s in self.shards for k in ("games_file", "positions_file")]

    def __repr__(self) -> str:
        players = self.settings["players"].get("kind", "?") if isinstance(self.settings["players"], dict) else "?"
        state = "" if self.complete else ", incomplete"
        if self._game_ids is not None:
            # A subset's position count needs the games table: not read for a repr.
            return (
                f"Dataset({str(self.path)!r}, games={self.num_games}, subset, shards={len(self.shards)}, "
                f"players={players!r}, format={self.format!r}{state})"
            )
        return (
            f"Dataset({str(self.path)!r}, games={self.num_games}, positions={self.num_positions}, "
            f"shards={len(self.shards)}, players={players!r}, format={self.format!r}{state})"
        )

    # ---- summary, subsets and splits

    def summary(self) -> Dict[str, Any]:
        """What the dataset holds, from its manifest (``taikyoku info``): variant, options,
        players, format, versions, counts (games, positions, shards, results) and bytes on disk.

        ``games`` and ``shards`` count the complete shards; ``planned_games`` and
        ``planned_shards`` what the finished run holds. A subset counts its own games and
        results (read from the games table) and the bytes of the shards it reads.
        """
        settings = self.settings
        shards = self.shards
        out: Dict[str, Any] = {
            "path": str(self.path),
            "variant": self.variant,
            "options": self.options,
            "players": settings["players"],
            "network": settings.get("network"),
            "format": self.format,
            "seed": settings["seed"],
            "max_plies": self.max_plies,
            "games_per_shard": settings["games_per_shard"],
            "legal_actions": self.has_legal_actions,
            "schema_version": self.manifest["schema_version"],
            "engine_version": self.manifest.get("engine_version"),
            "complete": self.complete,
            "subset": self._game_ids is not None,
            "games": self.num_games,
            "planned_games": settings["games"],
            "positions": 0,
            "shards": len(shards),
            "planned_shards": -(-int(settings["games"]) // int(settings["games_per_shard"])),
            "black_wins": 0,
            "white_wins": 0,
            "draws": 0,
            "truncated": 0,
            "bytes": sum(int(s.get("bytes", 0)) for s in shards),
        }
        if self._game_ids is None:
            for key in ("positions", "black_wins", "white_wins", "draws", "truncated"):
                out[key] = sum(int(s.get(key, 0)) for s in shards)
        else:
            games = self.games
            out["positions"] = int(np.asarray(games.column("plies").to_numpy(), dtype=np.int64).sum())
            results = games.column("result").to_pylist()
            out["black_wins"] = results.count("black")
            out["white_wins"] = results.count("white")
            out["draws"] = results.count("draw")
            out["truncated"] = results.count(None)
        return out

    def _all_game_ids(self) -> np.ndarray:
        """The game ids of the view (the subset's, or every game of the complete shards), sorted."""
        if self._game_ids is not None:
            return self._game_ids
        ranges = [np.arange(s["first_game"], s["first_game"] + s["games"], dtype=np.uint64) for s in self.shards]
        return np.concatenate(ranges) if ranges else np.empty(0, np.uint64)

    def subset(self, game_ids: Iterable[int]) -> Dataset:
        """The dataset restricted to the games ``game_ids`` (of this dataset or subset): a
        :class:`Dataset` that reads the same files and keeps only their rows."""
        ids = np.asarray(list(game_ids) if not isinstance(game_ids, np.ndarray) else game_ids)
        if ids.size and not np.issubdtype(ids.dtype, np.integer):
            raise TaikyokuError(f"game_ids must be integers, not {ids.dtype}")
        if ids.size and ids.min() < 0:
            raise TaikyokuError(f"game id {int(ids.min())} is negative")
        ids = np.unique(ids.astype(np.uint64).reshape(-1))
        known = self._all_game_ids()
        unknown = ids[~np.isin(ids, known)]
        if unknown.size:
            raise TaikyokuError(f"no game {int(unknown[0])} in {self.path} (its shards hold games {self._id_ranges()})")
        return Dataset(self.path, self.manifest, ids)

    def split(self, val_fraction: float = 0.1, seed: int = 0) -> Tuple[Dataset, Dataset]:
        """``(train, validation)``: the games split in two, so that no game has positions in both.

        The validation games are the ``round(val_fraction * games)`` games (at least one, and
        at least one left for training) whose ``splitmix64(splitmix64(game_id) ^ seed)`` is
        smallest: the same arguments give the same split on every machine, whatever the shard
        layout or thread count, and a game's side rarely changes as a dataset grows.
        """
        val_fraction = _validate.real("val_fraction", val_fraction, 0.0, 1.0)
        if not 0.0 < val_fraction < 1.0:
            raise TaikyokuError(f"val_fraction must be between 0 and 1 (exclusive), not {val_fraction}")
        seed = _validate.integer("seed", seed, 0, _validate.U64_MAX)
        ids = self._all_game_ids()
        if ids.size < 2:
            raise TaikyokuError(f"{self.path}: a split needs at least 2 games, this dataset has {ids.size}")
        count = min(max(int(round(val_fraction * ids.size)), 1), int(ids.size) - 1)
        keys = _splitmix64(_splitmix64(ids) ^ np.uint64(seed))
        order = np.lexsort((ids, keys))
        validation = np.sort(ids[order[:count]])
        train = np.sort(ids[order[count:]])
        return Dataset(self.path, self.manifest, train), Dataset(self.path, self.manifest, validation)

    # ---- tables

    def read_shard(self, shard: int, table: TableName = "positions") -> pa.Table:
        """Reads one shard's ``"games"`` or ``"positions"`` table (``shard`` indexes :attr:`shards`).

        The file's size and CRC-32 are checked against the manifest, and its row count against
        the shard's entry: a damaged file raises TaikyokuError naming it. A subset keeps the
        rows of its games.
        """
        data = self._read_checked(shard, table)
        if self._game_ids is not None:
            import pyarrow.compute as pc

            pa = _pa()
            data = data.filter(pc.is_in(data.column("game_id"), value_set=pa.array(self._game_ids, pa.uint64())))
        return data

    def _read_checked(self, shard: int, table: str) -> pa.Table:
        """One shard's whole table, checked (``read_shard`` without a subset's filter)."""
        if table not in _SCHEMAS:
            raise TaikyokuError(f"unknown table {_validate.show(table)} (use 'games' or 'positions')")
        shard = _validate.integer("shard", shard, 0, len(self.shards) - 1) if self.shards else self._no_shards()
        entry = self.shards[shard]
        key = f"{table}_file"
        data = self._read_file(self.path / entry[key], table, _check_of(entry, key))
        if data.num_rows != entry[table]:
            raise TaikyokuError(
                f"{self.path / entry[key]} holds {data.num_rows} rows, the manifest says {entry[table]} {table}: "
                "the dataset is damaged; re-run the generating command to regenerate the shard"
            )
        return data

    def _read_file(self, path: Path, table: str, check: Optional[Dict[str, int]] = None) -> pa.Table:
        pa = _pa()
        try:
            raw = path.read_bytes()
        except OSError as e:
            raise TaikyokuError(f"cannot read {path}: {e}") from e
        if check is not None and (len(raw) != check["bytes"] or zlib.crc32(raw) != check["crc32"]):
            raise TaikyokuError(
                f"{path} fails its size or CRC-32 check (the file is damaged); "
                "re-run the generating command to regenerate it"
            )
        try:
            if self.format == "arrow":
                data = pa.ipc.open_file(pa.py_buffer(raw)).read_all()
            else:
                data = pa.parquet.read_table(pa.BufferReader(raw))
        except (pa.ArrowException, OSError) as e:
            raise TaikyokuError(f"cannot read {path} as {self.format}: {e}") from e
        expected = _table_schema(table, self.settings, self.manifest["schema_version"])
        if data.schema.names != expected.names or any(
            not data.schema.field(n).type.equals(expected.field(n).type) for n in expected.names
        ):
            raise TaikyokuError(
                f"{path} does not have the {table} schema of version {self.manifest['schema_version']}"
                f"{' with legal_actions' if table == 'positions' and self.has_legal_actions else ''}:\n{data.schema}\n"
                f"expected:\n{expected}"
            )
        return data

    def pyarrow_dataset(self, table: TableName = "positions") -> Any:
        """The table as a lazy ``pyarrow.dataset.Dataset`` over the complete shards' files (for
        a subset, filtered to its games): project, filter and stream batches without reading
        everything, or hand it to DuckDB or polars. Unlike :meth:`read_shard`, it does not check
        the files' CRC-32s (:meth:`verify` or ``taikyoku verify`` does)."""
        import pyarrow.dataset as pds

        if table not in _SCHEMAS:
            raise TaikyokuError(f"unknown table {_validate.show(table)} (use 'games' or 'positions')")
        files = [str(f) for f in (self.games_files if table == "games" else self.positions_files)]
        fmt = "ipc" if self.format == "arrow" else "parquet"
        schema = _table_schema(table, self.settings, self.manifest["schema_version"])
        dataset = pds.dataset(files, format=fmt) if files else pds.dataset([], format=fmt, schema=schema)
        if self._game_ids is not None:
            dataset = dataset.filter(pds.field("game_id").isin(_pa().array(self._game_ids, _pa().uint64())))
        return dataset

    def _read_all(self, table: TableName) -> pa.Table:
        pa = _pa()
        parts = [self.read_shard(i, table) for i in range(len(self.shards))]
        if not parts:
            return _table_schema(table, self.settings, self.manifest["schema_version"]).empty_table()
        return pa.concat_tables(parts)

    @cached_property
    def games(self) -> pa.Table:
        """The games table (``pyarrow.Table``, one row per game), all shards concatenated."""
        return self._read_all("games")

    @cached_property
    def positions(self) -> pa.Table:
        """The positions table (``pyarrow.Table``, one row per position), all shards concatenated.

        Boards take 2.6 KB per position before compression: for big datasets, stream
        :meth:`batches` or :meth:`read_shard` instead.
        """
        return self._read_all("positions")

    def _no_shards(self) -> Any:
        raise TaikyokuError(f"{self.path} holds no complete shard yet")

    def _shard_of(self, game_id: int) -> int:
        game_id = _validate.integer("game_id", game_id, 0)
        if self._game_ids is not None and not np.isin(np.uint64(game_id), self._game_ids):
            raise TaikyokuError(f"game {game_id} is not in this subset of {self.path}")
        for i, s in enumerate(self.shards):
            if s["first_game"] <= game_id < s["first_game"] + s["games"]:
                return i
        raise TaikyokuError(f"no game {game_id} in {self.path} (its shards hold games {self._id_ranges()})")

    def _id_ranges(self) -> str:
        return ", ".join(f"{s['first_game']}..{s['first_game'] + s['games'] - 1}" for s in self.shards) or "none"

    def _game_tables(self, game_id: int, table: TableName) -> pa.Table:
        """``table`` rows of one game, from the loaded table if any, else from its shard alone."""
        game_id = _validate.integer("game_id", game_id, 0)
        pa = _pa()
        import pyarrow.compute as pc

        if table in self.__dict__:
            data = self.__dict__[table]
            self._shard_of(game_id)  # a clear error for an unknown id
        else:
            data = self.read_shard(self._shard_of(game_id), table)
        rows = data.filter(pc.equal(data.column("game_id"), pa.scalar(game_id, pa.uint64())))
        if table == "positions":
            rows = rows.sort_by("ply")
        return rows

    def game(self, game_id: int) -> Dict[str, Any]:
        """One row of the games table as a dict (``game_id``, ``result``, ``actions``, ``moves``, ...)."""
        rows = self._game_tables(game_id, "games").to_pylist()
        if len(rows) != 1:
            raise TaikyokuError(f"{self.path}: game {game_id} has {len(rows)} rows in the games table")
        return rows[0]

    def game_positions(self, game_id: int) -> pa.Table:
        """The positions of one game, by ply (``pyarrow.Table``)."""
        return self._game_tables(game_id, "positions")

    # ---- replay

    def new_game(self) -> Game:
        """The initial position with the run's variant, options and ply limit."""
        return Game(self.variant, options=self.options, max_plies=self.max_plies)

    def replay(self, game_id: int) -> Game:
        """Replays game ``game_id`` from the stored actions: the returned Game is at its final position."""
        game = self.new_game()
        for ply, action in enumerate(self.game(game_id)["actions"]):
            try:
                game.play(int(action))
            except TaikyokuError as e:
                raise TaikyokuError(
                    f"{self.path}: game {game_id}, ply {ply}: stored action {action} does not replay: {e}"
                ) from e
        return game

    def legal_actions(self, positions: Any = None, *, check: bool = True) -> Tuple[np.ndarray, np.ndarray]:
        """``(actions, offsets)``: the legal actions of stored positions, in CSR form.

        Row ``i``'s legal actions (int64, sorted, in the mover's frame, as ``Game.legal_actions()``
        gives them: the support of a policy target aligned with ``visits``) are
        ``actions[offsets[i]:offsets[i + 1]]``. ``positions`` is any Arrow positions data
        :func:`decode` takes (with ``game_id`` and ``ply``), or None for :attr:`positions`.

        Datasets made with ``store_legal_actions`` (:attr:`has_legal_actions`) hold them in the
        ``legal_actions`` column, which is read as it is; otherwise the positions' games are
        replayed (in Rust, in parallel: ``taikyoku._core.replay_legal_actions``), reading their
        games table. With ``check``, each row's count must equal its ``legal_moves`` (when the
        data has that column): a mismatch raises TaikyokuError (another engine version, or
        damage).
        """
        check = _validate.boolean("check", check)
        table = self.positions if positions is None else _as_arrow(positions, _LEGAL_COLUMNS)
        names = table.schema.names
        if LEGAL_ACTIONS in names:
            actions, offsets = _list_csr(_column(table, LEGAL_ACTIONS))
        else:
            game_ids = np.asarray(_numpy(_column(table, "game_id")), dtype=np.int64)
            plies = np.asarray(_numpy(_column(table, "ply")), dtype=np.int64)
            actions, offsets = self._replayed_legal_actions(game_ids, plies)
        if check and "legal_moves" in names:
            found = np.diff(offsets)
            stored = np.asarray(_numpy(table.column("legal_moves")), dtype=np.int64)
            bad = np.flatnonzero(found != stored)
            if bad.size:
                i = int(bad[0])
                where = ""
                if "game_id" in names and "ply" in names:
                    where = f" (game {table.column('game_id')[i].as_py()}, ply {table.column('ply')[i].as_py()})"
                raise TaikyokuError(
                    f"{self.path}: row {i}{where} has {found[i]} legal actions, its legal_moves says {stored[i]} "
                    "(another engine version, or a damaged dataset)"
                )
        return actions, offsets

    def _replayed_legal_actions(self, game_ids: np.ndarray, plies: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """The legal actions of positions ``(game_ids[i], plies[i])``, CSR, by replaying their games."""
        pa = _pa()
        import pyarrow.compute as pc

        empty = (np.zeros(0, np.int64), np.zeros(len(game_ids) + 1, np.int64))
        if game_ids.size == 0:
            return empty
        wanted = np.unique(game_ids)
        if not self.shards:
            self._no_shards()
        firsts = np.array([s["first_game"] for s in self.shards], dtype=np.int64)
        sizes = np.array([s["games"] for s in self.shards], dtype=np.int64)
        shard = np.maximum(np.searchsorted(firsts, wanted, side="right") - 1, 0)
        known = (wanted >= firsts[shard]) & (wanted < firsts[shard] + sizes[shard])
        if self._game_ids is not None:
            known &= np.isin(wanted.astype(np.uint64), self._game_ids)
        if not known.all():
            self._shard_of(int(wanted[~known][0]))  # raises, naming the game
        games = pa.concat_tables([self.read_shard(int(i), "games") for i in np.unique(shard)])
        games = games.filter(
            pc.is_in(games.column("game_id"), value_set=pa.array(wanted.astype(np.uint64), pa.uint64()))
        )
        ids = np.asarray(_numpy(games.column("game_id")), dtype=np.int64)
        order = np.argsort(ids, kind="stable")
        games, ids = games.take(order), ids[order]
        played, starts = _list_csr(games.column("actions"))
        try:
            flat, ends = _core.replay_legal_actions(played, starts, variant=self.variant, options=self.options)
        except TaikyokuError:
            for game_id, lo, hi in zip(ids.tolist(), starts[:-1].tolist(), starts[1:].tolist()):
                try:
                    _core.replay_legal_actions(
                        played[lo:hi], np.array([0, hi - lo], np.int64), self.variant, self.options
                    )
                except TaikyokuError as e:
                    raise TaikyokuError(f"{self.path}: game {game_id} does not replay: {e}") from e
            raise
        lengths = np.diff(starts)
        first = np.zeros(len(ids), dtype=np.int64)
        np.cumsum(lengths[:-1], out=first[1:])
        where = np.searchsorted(ids, game_ids)
        bad = (plies < 0) | (plies >= lengths[where])
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise TaikyokuError(f"{self.path}: game {int(game_ids[i])} has no position at ply {int(plies[i])}")
        rows = first[where] + plies
        begins = ends[rows]
        counts = ends[rows + 1] - begins
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        gather = np.arange(offsets[-1], dtype=np.int64) - np.repeat(offsets[:-1] - begins, counts)
        return flat[gather].astype(np.int64), offsets

    def verify(self, game_ids: Optional[Sequence[int]] = None, *, progress: bool = False) -> Dict[str, int]:
        """Checks the shards as a resume does, then replays games (default: all) and checks every
        stored column against the engine.

        First every shard holding games to check must pass the checks the generating command makes
        before resuming (the engine's own, ``taikyoku._core.check_dataset``): its manifest entry
        (its place in the run, its own file names), both files' sizes and CRC-32s, and its counts
        (games, positions, results, bytes) and game ids against its games file. The damaged shards
        found raise one TaikyokuError listing each with why (a rerun of the generating command
        regenerates them). Then each position's board, side to move, repetitions, legal-move count
        (and legal actions, when stored) and outcome, and each game's actions, notation, ply
        count, result and termination must match the replay exactly; the first difference raises
        TaikyokuError. Returns ``{"games": ..., "positions": ...}`` checked. This is how to trust a
        dataset written by another engine version before training on it. ``progress=True`` shows
        a progress bar (tqdm), one step per game.
        """
        wanted = None if game_ids is None else {_validate.integer("game id", g, 0) for g in game_ids}
        if wanted is not None:
            for game_id in wanted:
                self._shard_of(game_id)
        elif self._game_ids is not None:
            wanted = {int(g) for g in self._game_ids}
        self._check_shards(wanted)
        checked = {"games": 0, "positions": 0}
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(
                total=len(wanted) if wanted is not None else self.num_games,
                unit="game",
                desc="verify",
                dynamic_ncols=True,
            )
        try:
            self._verify_shards(wanted, checked, bar)
        finally:
            if bar is not None:
                bar.close()
        return checked

    def _check_shards(self, wanted: Optional[set]) -> None:
        """Raises TaikyokuError listing the shards (those holding ``wanted`` games, or all) that
        fail the engine's resume checks."""
        involved = {
            s["index"]
            for s in self.shards
            if wanted is None or any(s["first_game"] <= g < s["first_game"] + s["games"] for g in wanted)
        }
        try:
            found, unchecked = _core.check_dataset(str(self.path))
        except OSError as e:
            raise TaikyokuError(f"cannot check {self.path}: {e}") from e
        unchecked = [index for index in unchecked if index in involved]
        if unchecked:
            warnings.warn(
                f"{self.path}: shard{'s' if len(unchecked) > 1 else ''} {', '.join(map(str, unchecked))} "
                f"{'have' if len(unchecked) > 1 else 'has'} no checksums (a manifest older than them): "
                "only the replay vouches for their contents (a rerun of the generating command regenerates them)",
                UncheckedShardsWarning,
                stacklevel=3,
            )
        damaged = [(index, why) for index, why in found if wanted is None or index in involved]
        if len(damaged) == 1:
            index, why = damaged[0]
            raise TaikyokuError(
                f"{self.path}: shard {index} is damaged: {why}; re-run the generating command to regenerate it"
            )
        if damaged:
            lines = "\n".join(f"  shard {index}: {why}" for index, why in damaged[:20])
            more = f"\n  ... and {len(damaged) - 20} more" if len(damaged) > 20 else ""
            raise TaikyokuError(
                f"{self.path}: {len(damaged)} damaged shards (re-run the generating command to regenerate them):\n"
                f"{lines}{more}"
            )

    def _verify_shards(self, wanted: Optional[set], checked: Dict[str, int], bar: Any) -> None:
        for i, shard in enumerate(self.shards):
            ids = range(shard["first_game"], shard["first_game"] + shard["games"])
            if wanted is not None and not wanted.intersection(ids):
                continue
            games_table = self._read_checked(i, "games")
            positions = self._read_checked(i, "positions")
            for name, table in (("games", games_table), ("positions", positions)):
                self._verify_metadata(shard, name, table)
            games = games_table.to_pylist()
            if len(games) != shard["games"] or positions.num_rows != shard["positions"]:
                raise TaikyokuError(
                    f"{self.path}: shard {shard['index']} holds {len(games)} games and {positions.num_rows} positions, "
                    f"its manifest entry says {shard['games']} and {shard['positions']}"
                )
            names = ("game_id", "ply", "white_to_move", "board", "repetitions", "action", "legal_moves", "outcome")
            columns = _position_columns(
                positions, names + tuple(c for c in _PASS_COLUMNS if c in positions.schema.names)
            )
            legal = _list_csr(_column(positions, LEGAL_ACTIONS)) if self.has_legal_actions else None
            order = np.lexsort((columns["ply"], columns["game_id"]))
            starts = np.searchsorted(
                columns["game_id"][order], np.array([g["game_id"] for g in games], dtype=np.uint64)
            )
            for record, start in zip(games, starts):
                if wanted is not None and record["game_id"] not in wanted:
                    continue
                rows = order[start : start + record["plies"]]
                stored = None if legal is None else [legal[0][legal[1][r] : legal[1][r + 1]] for r in rows]
                self._verify_game(record, {k: v[rows] for k, v in columns.items()}, stored)
                checked["games"] += 1
                checked["positions"] += len(rows)
                if bar is not None:
                    bar.update(1)

    def _verify_metadata(self, shard: Dict[str, Any], name: str, table: Any) -> None:
        """A file's own metadata (when it has some: files of schema version 1 have none) must
        agree with the manifest."""
        meta = file_metadata(table.schema)
        expected = {
            "table": name,
            "schema_version": self.manifest["schema_version"],
            "engine_version": self.manifest.get("engine_version"),
            "variant": self.variant,
            "settings": self.settings,
        }
        for key, value in expected.items():
            if key in meta and meta[key] != value:
                raise TaikyokuError(
                    f"{self.path / shard[name + '_file']}: its metadata says {key} {meta[key]!r}, "
                    f"the manifest {value!r}: the file belongs to another dataset"
                )

    def _verify_game(
        self, record: Dict[str, Any], rows: Dict[str, np.ndarray], legal: Optional[List[np.ndarray]] = None
    ) -> None:
        game_id = record["game_id"]

        def fail(why: str) -> TaikyokuError:
            return TaikyokuError(f"{self.path}: game {game_id}: {why}")

        plies = record["plies"]
        if len(record["actions"]) != plies or len(record["moves"]) != plies:
            raise fail(f"plies {plies} but {len(record['actions'])} actions and {len(record['moves'])} moves")
        if len(rows["ply"]) != plies or not np.array_equal(rows["game_id"], np.full(plies, game_id)):
            raise fail(f"{len(rows['ply'])} positions stored for {plies} plies")
        if not np.array_equal(rows["ply"], np.arange(plies)):
            raise fail("positions are not plies 0, 1, 2, ... in order")
        winner_of = {"black": "black", "white": "white"}
        game = self.new_game()
        for k in range(plies):
            where = f"ply {k}"
            if not np.array_equal(game.compact_board(), rows["board"][k]):
                raise fail(f"{where}: stored board differs from the replayed position")
            if (game.side_to_move == "white") != bool(rows["white_to_move"][k]):
                raise fail(
                    f"{where}: white_to_move is {bool(rows['white_to_move'][k])}, the replay has {game.side_to_move} to move"
                )
            if min(game.repetitions - 1, 255) != int(rows["repetitions"][k]):
                raise fail(f"{where}: repetitions {int(rows['repetitions'][k])}, the replay has {game.repetitions - 1}")
            for name, side in (
                ("passes", game.side_to_move),
                ("opponent_passes", "black" if game.side_to_move == "white" else "white"),
            ):
                if name in rows and game.consecutive_passes(side) != int(rows[name][k]):
                    raise fail(f"{where}: {name} {int(rows[name][k])}, the replay has {game.consecutive_passes(side)}")
            if game.legal_move_count() != int(rows["legal_moves"][k]):
                raise fail(
                    f"{where}: legal_moves {int(rows['legal_moves'][k])}, the replay has {game.legal_move_count()}"
                )
            if legal is not None and not np.array_equal(legal[k], game.legal_actions()):
                raise fail(
                    f"{where}: the stored legal_actions differ from the replay's ({len(legal[k])} stored, "
                    f"{game.legal_move_count()} legal)"
                )
            action = int(rows["action"][k])
            if action != record["actions"][k]:
                raise fail(f"{where}: positions table plays {action}, games table {record['actions'][k]}")
            mover = "white" if rows["white_to_move"][k] else "black"
            winner = winner_of.get(record["result"])
            expected = 0 if winner is None else (1 if winner == mover else -1)
            if int(rows["outcome"][k]) != expected:
                raise fail(
                    f"{where}: outcome {int(rows['outcome'][k])}, expected {expected} for {mover} with result {record['result']}"
                )
            try:
                game.play(action)
            except TaikyokuError as e:
                raise fail(f"{where}: stored action {action} is not legal: {e}") from e
        if game.history() != list(record["moves"]):
            raise fail("stored move notation differs from the replay's")
        if game.ply != plies or game.result != record["result"] or game.termination != record["termination"]:
            raise fail(
                f"stored end ({record['result']}, {record['termination']}, {plies} plies) differs from the replay's "
                f"({game.result}, {game.termination}, {game.ply} plies)"
            )

    # ---- observations and batches

    def observations(
        self,
        positions: Any = None,
        *,
        dtype: Optional[npt.DTypeLike] = None,
        frame: Frame = "mover",
        compact: bool = False,
        chunk_size: int = 4096,
    ) -> np.ndarray:
        """Observation planes ``(N, 36, 36, P)`` of stored positions, as ``Game.observation()`` gives.

        ``positions``: any Arrow positions data :func:`decode` takes (e.g. a slice or filter of
        :attr:`positions`, a polars DataFrame), a Python ``slice`` or row indices into
        :attr:`positions`, or None for all of them. Mind the size: the default one-hot layout
        takes 789 KB per position (``compact=True``: 21 KB).
        """
        if positions is None:
            positions = self.positions
        elif isinstance(positions, slice):
            start, stop, step = positions.indices(self.positions.num_rows)
            positions = self.positions.take(np.arange(start, stop, step))
        elif isinstance(positions, (range, list, tuple, np.ndarray)):
            rows = np.asarray(positions)
            if rows.size and not np.issubdtype(rows.dtype, np.integer):
                raise TaikyokuError(f"positions must be row indices (integers), not {_validate.show(positions)}")
            rows = rows.astype(np.int64, copy=False).reshape(-1)
            count = self.positions.num_rows
            bad = rows[(rows < -count) | (rows >= count)]
            if bad.size:
                raise TaikyokuError(f"row {int(bad[0])} is out of range: the dataset has {count} positions")
            positions = self.positions.take(np.where(rows < 0, rows + count, rows))
        return decode(
            positions, self.variant, self.options, dtype=dtype, frame=frame, compact=compact, chunk_size=chunk_size
        )

    def batches(
        self,
        batch_size: int = 64,
        shuffle: bool = False,
        seed: Optional[int] = None,
        *,
        dtype: Optional[npt.DTypeLike] = None,
        frame: Frame = "mover",
        compact: bool = False,
        visits: bool = True,
        drop_last: bool = False,
        legal_actions: bool = True,
    ) -> Iterator[Batch]:
        """Training batches: dicts of numpy arrays (keys in ``datasets/README.md``), reading one shard at a time.

        ``shuffle`` permutes the shard order and the rows inside each shard (memory stays bounded by
        one shard); ``seed`` makes that order reproducible. Batches span shard boundaries; the last
        one is shorter unless ``drop_last``. Datasets that store legal actions
        (:attr:`has_legal_actions`) add them as ``legal_actions`` and ``legal_offsets`` (CSR, like
        the visits) unless ``legal_actions=False``.

        ``decided`` (bool) says whether each position's game has a result (its games row's
        ``result`` is not null; each shard's games table is read for it): the ``outcome`` of a game
        cut by ``max_plies`` is 0 without being a draw, so value targets should leave those out.
        Positions tables with the :data:`POLICY` column (Gumbel self-play) add it as
        ``policy_actions``, ``policy_weights`` and ``policy_offsets`` (CSR); ``visits=False``
        leaves those out with the visits.
        """
        batch_size = _validate.integer("batch_size", batch_size, 1)
        shuffle, visits, drop_last, legal_actions = (
            _validate.boolean(n, v)
            for n, v in (
                ("shuffle", shuffle),
                ("visits", visits),
                ("drop_last", drop_last),
                ("legal_actions", legal_actions),
            )
        )
        if seed is not None:
            seed = _validate.integer("seed", seed, 0, _validate.U64_MAX)
        shards = list(range(len(self.shards)))
        if shuffle and seed is None:
            seed = _fresh_seed()
        return _iter_batches(
            self,
            shards,
            batch_size,
            shuffle,
            seed,
            0,
            dict(dtype=dtype, frame=frame, compact=compact),
            visits,
            drop_last,
            legal_actions,
        )


# -- decoding -------------------------------------------------------------------------------------


_DECODED_COLUMNS = ("board", "white_to_move", "repetitions", "ply", "passes", "opponent_passes")
# Of those, the ones older data (schema versions 1-3, or a selection of columns) may lack.
_OPTIONAL_DECODED = ("passes", "opponent_passes")
# What Dataset.legal_actions reads.
_LEGAL_COLUMNS = ("game_id", "ply", "legal_moves", "legal_actions")


def _as_arrow(data: Any, columns: Sequence[str] = _DECODED_COLUMNS) -> Any:
    """Arrow data of any kind as a ``pyarrow.Table`` or ``RecordBatch``.

    Takes pyarrow Tables, RecordBatches, RecordBatchReaders, datasets and scanners; any object
    of the Arrow PyCapsule interface (``__arrow_c_stream__``: polars and pandas DataFrames,
    DuckDB results, nanoarrow, ...; ``__arrow_c_array__``: a record batch); and, for older
    libraries, objects with ``to_arrow()``, ``arrow()`` or ``fetch_arrow_table()``. Of a
    ``pyarrow.dataset`` dataset only ``columns`` are read (those it has).
    """
    pa = _pa()
    if isinstance(data, (pa.Table, pa.RecordBatch)):
        return data
    if isinstance(data, pa.RecordBatchReader):
        return data.read_all()
    try:
        import pyarrow.dataset as pds
    except ImportError:  # pragma: no cover - pyarrow.dataset is part of every pyarrow wheel
        pds = None
    if pds is not None and isinstance(data, (pds.Dataset, pds.Scanner)):
        names = data.schema.names if isinstance(data, pds.Dataset) else data.projected_schema.names
        wanted = [c for c in columns if c in names]
        return data.to_table(columns=wanted) if isinstance(data, pds.Dataset) else data.to_table()
    if hasattr(data, "__arrow_c_stream__"):
        return pa.table(data)
    if hasattr(data, "__arrow_c_array__"):
        return pa.record_batch(data)
    for method in ("to_arrow", "arrow", "fetch_arrow_table"):
        convert = getattr(data, method, None)
        if callable(convert):
            converted = convert()
            if isinstance(converted, pa.RecordBatchReader):
                converted = converted.read_all()
            if isinstance(converted, (pa.Table, pa.RecordBatch)):
                return converted
    raise TaikyokuError(
        f"expected Arrow positions data (a pyarrow Table, RecordBatch or RecordBatchReader, or an object with "
        f"__arrow_c_stream__ such as a polars DataFrame or a DuckDB result), got {type(data).__name__}"
    )


def decode(
    positions: Any,
    variant: str = "taikyoku",
    options: Optional[Sequence[str]] = None,
    *,
    dtype: Optional[npt.DTypeLike] = None,
    frame: Frame = "mover",
    compact: bool = False,
    chunk_size: int = 4096,
) -> np.ndarray:
    """Observation planes ``(N, 36, 36, P)`` of a positions table read by any means.

    ``positions`` is any Arrow data holding at least the ``board``, ``white_to_move``,
    ``repetitions`` and ``ply`` columns: a ``pyarrow.Table``, ``RecordBatch`` or
    ``RecordBatchReader`` (read whole), a ``pyarrow.dataset`` dataset or scanner, or any object
    of the Arrow PyCapsule stream interface (``__arrow_c_stream__``), such as a polars DataFrame
    or a DuckDB result (objects with ``to_arrow()`` work too). Decoding runs in parallel in
    Rust, ``chunk_size`` rows per call, which bounds the temporary arrays next to the output.
    """
    positions = _as_arrow(positions)
    chunk_size = _validate.integer("chunk_size", chunk_size, 1)
    n = positions.num_rows
    options = list(options or [])

    def one(part: Any) -> np.ndarray:
        names = set(part.schema.names)
        wanted = [c for c in _DECODED_COLUMNS if c not in _OPTIONAL_DECODED or c in names]
        columns = _position_columns(part, wanted)
        return decode_positions(
            columns["board"],
            columns["white_to_move"],
            columns["repetitions"],
            columns["ply"],
            variant=variant,
            options=options,
            dtype=dtype,
            frame=frame,
            compact=compact,
            passes=columns.get("passes"),
            opponent_passes=columns.get("opponent_passes"),
        )

    if n <= chunk_size:
        return one(positions)
    first = one(positions.slice(0, chunk_size))
    out = np.empty((n,) + first.shape[1:], dtype=first.dtype)
    out[:chunk_size] = first
    for start in range(chunk_size, n, chunk_size):
        part = positions.slice(start, chunk_size)
        out[start : start + part.num_rows] = one(part)
    return out


def _column(data, name: str):
    try:
        return data.column(name)
    except KeyError:
        raise TaikyokuError(
            f"the positions have no '{name}' column (columns: {', '.join(data.schema.names)})"
        ) from None


def _chunks(column) -> list:
    return list(column.chunks) if hasattr(column, "chunks") else [column]


def _numpy(column) -> np.ndarray:
    parts = [c.to_numpy(zero_copy_only=False) for c in _chunks(column)]
    return np.concatenate(parts) if parts else np.empty(0)


_POSITION_DTYPES = {
    "game_id": np.uint64,
    "ply": np.uint32,
    "white_to_move": np.bool_,
    "repetitions": np.uint8,
    "passes": np.uint8,
    "opponent_passes": np.uint8,
    "action": np.uint32,
    "legal_moves": np.uint32,
    "root_value": np.float32,
    "outcome": np.int8,
}


def _position_columns(
    data,
    names: Sequence[str] = (
        "game_id",
        "ply",
        "white_to_move",
        "board",
        "repetitions",
        "action",
        "legal_moves",
        "outcome",
    ),
):
    """Columns of a positions table as C-contiguous numpy arrays of the stored dtypes (board: (N, 1296) uint16)."""
    out = {}
    for name in names:
        column = _column(data, name)
        if name == "board":
            parts = [c.flatten().to_numpy(zero_copy_only=False) for c in _chunks(column)]
            flat = np.concatenate(parts) if parts else np.empty(0, np.uint16)
            if flat.size != data.num_rows * BOARD_SQUARES:
                raise TaikyokuError(f"board must hold {BOARD_SQUARES} squares per row")
            out[name] = np.ascontiguousarray(flat.reshape(data.num_rows, BOARD_SQUARES), dtype=np.uint16)
        else:
            # root_value's nulls (random players) become NaN.
            out[name] = np.ascontiguousarray(_numpy(column), dtype=_POSITION_DTYPES[name])
    return out


def _visit_columns(data) -> Dict[str, np.ndarray]:
    """The sparse ``visits`` lists as flat arrays plus CSR offsets (row i: ``offsets[i]:offsets[i+1]``)."""
    lengths, actions, counts = [], [], []
    for chunk in _chunks(_column(data, "visits")):
        lengths.append(chunk.value_lengths().to_numpy(zero_copy_only=False))
        action, count = chunk.flatten().flatten()  # struct fields, honouring slices
        actions.append(action.to_numpy(zero_copy_only=False))
        counts.append(count.to_numpy(zero_copy_only=False))
    joined = lambda parts: np.concatenate(parts).astype(np.int64) if parts else np.empty(0, np.int64)  # noqa: E731
    offsets = np.zeros(data.num_rows + 1, dtype=np.int64)
    np.cumsum(joined(lengths), out=offsets[1:])
    return {"visit_actions": joined(actions), "visit_counts": joined(counts), "visit_offsets": offsets}


def _policy_columns(data) -> Dict[str, np.ndarray]:
    """The :data:`POLICY` lists as ``policy_actions`` (int64), ``policy_weights`` (float32) and CSR ``policy_offsets``."""
    lengths, actions, weights = [], [], []
    for chunk in _chunks(_column(data, POLICY)):
        lengths.append(chunk.value_lengths().to_numpy(zero_copy_only=False))
        entries = chunk.flatten()  # honours slices
        actions.append(entries.field("action").to_numpy(zero_copy_only=False))
        weights.append(entries.field("weight").to_numpy(zero_copy_only=False))
    offsets = np.zeros(data.num_rows + 1, dtype=np.int64)
    if lengths:
        np.cumsum(np.concatenate(lengths).astype(np.int64), out=offsets[1:])
    return {
        "policy_actions": np.concatenate(actions).astype(np.int64) if actions else np.empty(0, np.int64),
        "policy_weights": np.concatenate(weights).astype(np.float32) if weights else np.empty(0, np.float32),
        "policy_offsets": offsets,
    }


def _decided(positions, games) -> pa.Array:
    """Per position, whether its game has a result (games row ``result`` not null), joined on ``game_id``."""
    pa = _pa()
    import pyarrow.compute as pc

    ids = np.asarray(_numpy(games.column("game_id")), dtype=np.uint64)
    has_result = np.asarray(_numpy(pc.is_valid(games.column("result"))), dtype=np.bool_)
    order = np.argsort(ids, kind="stable")
    ids, has_result = ids[order], has_result[order]
    wanted = np.asarray(_numpy(positions.column("game_id")), dtype=np.uint64)
    at = np.minimum(np.searchsorted(ids, wanted), max(len(ids) - 1, 0))
    missing = (ids[at] != wanted) if len(ids) else np.ones(len(wanted), dtype=bool)
    if missing.any():
        raise TaikyokuError(
            f"positions of game {int(wanted[np.flatnonzero(missing)[0]])} have no row in the games table"
        )
    return pa.array(has_result[at] if len(ids) else np.zeros(0, np.bool_), pa.bool_())


def _list_csr(column) -> Tuple[np.ndarray, np.ndarray]:
    """A list<integer> column (chunked or not, sliced or not) as flat int64 values and row offsets."""
    lengths, values = [], []
    for chunk in _chunks(column):
        lengths.append(chunk.value_lengths().to_numpy(zero_copy_only=False))
        values.append(chunk.flatten().to_numpy(zero_copy_only=False))  # flatten() honours slices
    flat = np.concatenate(values).astype(np.int64) if values else np.zeros(0, np.int64)
    counts = np.concatenate(lengths).astype(np.int64) if lengths else np.zeros(0, np.int64)
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return flat, offsets


def _make_batch(data, variant, options, decode_args, visits: bool, legal: bool = True) -> Dict[str, np.ndarray]:
    columns = _position_columns(data, ("game_id", "ply", "action", "outcome", "legal_moves", "root_value"))
    # uint32/uint64 become int64: torch indexes and embeds with int64 and lacks most unsigned types.
    batch = {"observation": decode(data, variant, options, **decode_args)}
    for name in ("game_id", "ply", "action", "legal_moves"):
        batch[name] = columns[name].astype(np.int64)
    batch["outcome"] = columns["outcome"]
    batch["root_value"] = columns["root_value"]
    if _DECIDED_COLUMN in data.schema.names:
        batch["decided"] = np.ascontiguousarray(_numpy(data.column(_DECIDED_COLUMN)), dtype=np.bool_)
    if visits:
        batch.update(_visit_columns(data))
        if POLICY in data.schema.names:
            batch.update(_policy_columns(data))
    if legal and LEGAL_ACTIONS in data.schema.names:
        batch["legal_actions"], batch["legal_offsets"] = _list_csr(data.column(LEGAL_ACTIONS))
    return batch


def _fresh_seed() -> int:
    return int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]  # an int when drawn


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's output function on uint64 arrays (the mixing the engine seeds games with)."""
    z = np.asarray(x, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = z + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _iter_batches(dataset, shards, batch_size, shuffle, seed, epoch, decode_args, visits, drop_last, legal=True):
    """Batches of the positions of ``shards`` (indices into ``dataset.shards``).

    Shuffled, the shard order comes from ``(seed, epoch)`` and each shard's row order from
    ``(seed, epoch, shard index)``, so a shard is shuffled the same way whichever worker reads it.
    """
    if batch_size < 1:
        raise TaikyokuError(f"batch_size must be positive, not {batch_size}")
    pa = _pa()
    shards = list(shards)
    if shuffle:
        order = np.random.default_rng([seed, epoch]).permutation(len(shards))
        shards = [shards[i] for i in order]
    pending = None
    for shard in shards:
        table = dataset.read_shard(shard, "positions")
        # Whether each position's game has a result travels with its row, across shard boundaries.
        table = table.append_column(_DECIDED_COLUMN, _decided(table, dataset.read_shard(shard, "games")))
        if shuffle:
            index = dataset.shards[shard]["index"]
            table = table.take(np.random.default_rng([seed, epoch, index, 1]).permutation(table.num_rows))
        if pending is not None and pending.num_rows:
            table = pa.concat_tables([pending, table])
        start = 0
        while table.num_rows - start >= batch_size:
            yield _make_batch(
                table.slice(start, batch_size), dataset.variant, dataset.options, decode_args, visits, legal
            )
            start += batch_size
        pending = table.slice(start)
    if pending is not None and pending.num_rows and not drop_last:
        yield _make_batch(pending, dataset.variant, dataset.options, decode_args, visits, legal)


def _samples(batch: Dict[str, np.ndarray]) -> Iterator[Dict[str, Any]]:
    """Splits a batch into per-position dicts (visits, improved policy and legal actions as that position's own arrays)."""
    ragged = {
        "visit_offsets": ("visit_actions", "visit_counts"),
        "policy_offsets": ("policy_actions", "policy_weights"),
        "legal_offsets": ("legal_actions",),
    }
    grouped = {name for offsets, names in ragged.items() if offsets in batch for name in (offsets, *names)}
    plain = [k for k in batch if k not in grouped]
    for i in range(len(batch["action"])):
        sample = {k: batch[k][i] for k in plain}
        for offsets, names in ragged.items():
            if offsets in batch:
                lo, hi = batch[offsets][i], batch[offsets][i + 1]
                for name in names:
                    sample[name] = batch[name][lo:hi]
        yield sample


# -- PyTorch-style iterable dataset ---------------------------------------------------------------


class _PositionDatasetMixin:
    """The logic of :class:`PositionDataset`; the class itself is built on first use (see below)."""

    _get_worker_info: Any = None
    dataset: Dataset
    batch_size: Optional[int]
    shuffle: bool
    seed: Optional[int]
    epoch: int
    decode_args: Dict[str, Any]
    visits: bool
    drop_last: bool
    legal_actions: bool

    def __init__(
        self,
        source: Union[PathLike, Dataset],
        batch_size: Optional[int] = None,
        shuffle: bool = False,
        seed: Optional[int] = None,
        *,
        dtype: Optional[npt.DTypeLike] = None,
        frame: Frame = "mover",
        compact: bool = False,
        visits: bool = True,
        drop_last: bool = False,
        legal_actions: bool = True,
    ) -> None:
        super().__init__()
        self.dataset = source if isinstance(source, Dataset) else open(source)
        if batch_size is not None and batch_size < 1:
            raise TaikyokuError(f"batch_size must be positive or None, not {batch_size}")
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.epoch = 0
        self.decode_args = dict(dtype=dtype, frame=frame, compact=compact)
        self.visits = visits
        self.drop_last = drop_last
        self.legal_actions = legal_actions

    def set_epoch(self, epoch: int) -> None:
        """With a fixed seed, gives each epoch its own (reproducible) order."""
        self.epoch = int(epoch)

    def _worker(self) -> Tuple[int, int]:
        """``(worker id, worker count)`` inside a torch DataLoader worker, else ``(0, 1)``."""
        info = self._get_worker_info() if self._get_worker_info is not None else None
        return (0, 1) if info is None else (info.id, info.num_workers)

    def worker_shards(self, worker: int = 0, workers: int = 1) -> List[int]:
        """The shards (indices into ``dataset.shards``) that worker ``worker`` of ``workers`` reads."""
        return list(range(len(self.dataset.shards)))[worker::workers]

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        worker, workers = self._worker()
        seed = self.seed
        if self.shuffle and seed is None:
            seed = _fresh_seed()
        batches = _iter_batches(
            self.dataset,
            self.worker_shards(worker, workers),
            self.batch_size or _SAMPLE_CHUNK,
            self.shuffle,
            seed,
            self.epoch,
            self.decode_args,
            self.visits,
            self.drop_last and self.batch_size is not None,
            self.legal_actions,
        )
        if self.batch_size is not None:
            yield from batches
        else:
            for batch in batches:
                yield from _samples(batch)

    def __repr__(self) -> str:
        return (
            f"PositionDataset({self.dataset!r}, batch_size={self.batch_size}, shuffle={self.shuffle}, seed={self.seed})"
        )


def _build_position_dataset() -> type:
    """Builds PositionDataset on a torch ``IterableDataset`` if torch imports, else on ``object``."""
    try:
        from torch.utils.data import IterableDataset, get_worker_info
    except ImportError:
        base, worker_info = object, None
    else:
        base, worker_info = IterableDataset, get_worker_info

    class PositionDataset(_PositionDatasetMixin, base):  # type: ignore[valid-type,misc]  # torch's or object
        """Positions of a dataset as an iterable of samples, or of batches when ``batch_size`` is set.

        A ``torch.utils.data.IterableDataset`` when torch is installed: in a DataLoader each worker
        reads its own shards (shard ``i`` goes to worker ``i % num_workers``), so give a dataset at
        least as many shards as workers. Use ``DataLoader(ds, batch_size=None)`` with ``batch_size``
        set here; per-position samples with MCTS visits need a custom ``collate_fn`` (or ``visits=False``)
        because their visit lists differ in length.
        """

        _get_worker_info = staticmethod(worker_info) if worker_info is not None else None

    PositionDataset.__module__ = __name__
    PositionDataset.__qualname__ = "PositionDataset"  # so that pickle finds it as taikyoku.datasets.PositionDataset
    return PositionDataset


if TYPE_CHECKING:

    class PositionDataset(_PositionDatasetMixin):
        """Positions of a dataset as an iterable of samples, or of batches when ``batch_size`` is
        set (a ``torch.utils.data.IterableDataset`` when torch is installed)."""


def __getattr__(name: str) -> Any:
    # PositionDataset is made on first access so that importing this module never imports torch.
    if name == "PositionDataset":
        cls = _build_position_dataset()
        globals()["PositionDataset"] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> List[str]:
    return sorted(set(globals()) | {"PositionDataset"})
