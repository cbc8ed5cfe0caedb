"""Training batches: a dataset's positions read shard by shard, shuffled or not, as dicts of numpy arrays."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterator

import numpy as np

from taikyoku._core import TaikyokuError
from taikyoku.datasets._arrow import _list_csr, _numpy, _policy_columns, _position_columns, _visit_columns
from taikyoku.datasets.decoding import decode
from taikyoku.datasets.schema import _DECIDED_COLUMN, LEGAL_ACTIONS, POLICY, _pa

if TYPE_CHECKING:
    import pyarrow as pa


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
