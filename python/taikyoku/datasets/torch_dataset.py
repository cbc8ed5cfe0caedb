"""The torch side: :class:`PositionDataset`, a ``torch.utils.data.IterableDataset`` when torch is
installed (built on first use: importing ``taikyoku.datasets`` never imports torch)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Tuple, Union

import numpy.typing as npt

from taikyoku._core import TaikyokuError
from taikyoku.datasets.batches import _fresh_seed, _iter_batches, _samples
from taikyoku.datasets.dataset import Dataset, open
from taikyoku.datasets.schema import Frame, PathLike

# Rows decoded per call when the caller asks for per-position samples (bounds the memory held by
# one decoded chunk: about 50 MB of one-hot uint8 planes).
_SAMPLE_CHUNK = 64


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

    PositionDataset.__module__ = "taikyoku.datasets"
    PositionDataset.__qualname__ = "PositionDataset"  # so that pickle finds it as taikyoku.datasets.PositionDataset
    return PositionDataset


if TYPE_CHECKING:

    class PositionDataset(_PositionDatasetMixin):
        """Positions of a dataset as an iterable of samples, or of batches when ``batch_size`` is
        set (a ``torch.utils.data.IterableDataset`` when torch is installed)."""
