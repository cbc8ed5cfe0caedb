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

from typing import TYPE_CHECKING, Any, List

# Every name where it was before the module became a package (its modules: one concept each).
from taikyoku.datasets.batches import _make_batch as _make_batch
from taikyoku.datasets.dataset import Dataset, open
from taikyoku.datasets.decoding import decode
from taikyoku.datasets.schema import BOARD_SQUARES as BOARD_SQUARES
from taikyoku.datasets.schema import (
    LEGAL_ACTIONS,
    POLICY,
    SCHEMA_VERSION,
    IncompleteDatasetWarning,
    UncheckedShardsWarning,
    file_metadata,
    games_schema,
    positions_schema,
)
from taikyoku.datasets.schema import METADATA_KEYS as METADATA_KEYS
from taikyoku.datasets.schema import READABLE_SCHEMA_VERSIONS as READABLE_SCHEMA_VERSIONS
from taikyoku.datasets.schema import Batch as Batch
from taikyoku.datasets.schema import Frame as Frame
from taikyoku.datasets.schema import PathLike as PathLike
from taikyoku.datasets.schema import TableName as TableName
from taikyoku.datasets.torch_dataset import _build_position_dataset

if TYPE_CHECKING:
    from taikyoku.datasets.torch_dataset import PositionDataset as PositionDataset

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


def __getattr__(name: str) -> Any:
    # PositionDataset is made on first access so that importing this module never imports torch.
    if name == "PositionDataset":
        cls = _build_position_dataset()
        globals()["PositionDataset"] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> List[str]:
    return sorted(set(globals()) | {"PositionDataset"})
