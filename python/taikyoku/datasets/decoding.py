"""Decoding: observation planes of positions read by any means (any Arrow data)."""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
import numpy.typing as npt

from taikyoku import _validate
from taikyoku._core import TaikyokuError, decode_positions
from taikyoku.datasets._arrow import _position_columns
from taikyoku.datasets.schema import Frame, _pa

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
