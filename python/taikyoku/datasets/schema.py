"""The datasets' format: schemas, shard files' metadata and the manifest's checks (``datasets/README.md``)."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Literal, Optional, Union

import numpy as np

from taikyoku import _core, _validate
from taikyoku._core import TaikyokuError

if TYPE_CHECKING:
    import pyarrow as pa

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


# -- the manifest ---------------------------------------------------------------------------------


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
