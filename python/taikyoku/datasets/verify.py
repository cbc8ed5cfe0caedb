"""Checking a dataset against the engine: :meth:`Dataset.verify` and its steps."""

from __future__ import annotations

import warnings
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from taikyoku import _core, _validate
from taikyoku._core import TaikyokuError
from taikyoku.datasets._arrow import _column, _list_csr, _position_columns
from taikyoku.datasets.schema import _PASS_COLUMNS, LEGAL_ACTIONS, UncheckedShardsWarning, file_metadata


class _Verification:
    """:class:`Dataset`'s checks against the engine (:meth:`verify`), a base of :class:`Dataset`."""

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
