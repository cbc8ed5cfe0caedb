"""Arrow columns as numpy arrays: plain columns, boards, and list columns in CSR form (flat values
and row offsets). ``taikyoku.nn`` reads datasets with them too."""

from __future__ import annotations

from typing import Dict, Sequence, Tuple

import numpy as np

from taikyoku._core import TaikyokuError
from taikyoku.datasets.schema import BOARD_SQUARES, POLICY


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
