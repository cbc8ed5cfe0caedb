"""Opening a dataset, and :class:`Dataset`: its manifest, tables, games, replays, observations and batches."""

from __future__ import annotations

import json
import math
import warnings
import zlib
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, Iterable, Iterator, List, Optional, Tuple

import numpy as np
import numpy.typing as npt

from taikyoku import _core, _validate
from taikyoku._core import Game, TaikyokuError
from taikyoku.datasets._arrow import _column, _list_csr, _numpy
from taikyoku.datasets.batches import _fresh_seed, _iter_batches, _splitmix64
from taikyoku.datasets.decoding import _LEGAL_COLUMNS, _as_arrow, decode
from taikyoku.datasets.schema import (
    _SCHEMAS,
    LEGAL_ACTIONS,
    Batch,
    Frame,
    IncompleteDatasetWarning,
    PathLike,
    TableName,
    _check_manifest,
    _check_of,
    _pa,
    _stores_policy,
    _table_schema,
)
from taikyoku.datasets.verify import _Verification

if TYPE_CHECKING:
    import pyarrow as pa


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


# -- the dataset ----------------------------------------------------------------------------------


class Dataset(_Verification):
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
