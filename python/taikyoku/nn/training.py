"""Training on datasets: legal actions of stored positions (:class:`LegalActionIndex`), policy targets,
:class:`TrainingBatch` and the losses."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Dict, Iterator, List, Literal, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt
import torch
from torch import Tensor

import taikyoku
from taikyoku import _core
from taikyoku.datasets._arrow import _list_csr, _numpy
from taikyoku.nn.actions import _NUM_ACTIONS
from taikyoku.nn.segments import policy_loss

if TYPE_CHECKING:
    from taikyoku.nn.network import PolicyValueNet


def locate(actions: np.ndarray, offsets: np.ndarray, rows: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Flat index of ``wanted[j]`` among row ``rows[j]``'s actions (CSR), or -1 where it is not there.

    Vectorised with numpy: ``(row, action)`` pairs become one sortable key each. Rows need not be sorted.
    """
    actions = np.asarray(actions, dtype=np.int64)
    offsets = np.asarray(offsets, dtype=np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    wanted = np.asarray(wanted, dtype=np.int64)
    owner = np.repeat(np.arange(len(offsets) - 1, dtype=np.int64), np.diff(offsets))
    keys = owner * _NUM_ACTIONS + actions
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    query = rows * _NUM_ACTIONS + wanted
    at = np.searchsorted(sorted_keys, query)
    # A key outside its own row's range would match another row's action.
    found = (at < len(sorted_keys)) & (wanted >= 0) & (wanted < _NUM_ACTIONS) & (rows >= 0) & (rows < len(offsets) - 1)
    found[found] = sorted_keys[at[found]] == query[found]
    out = np.full(len(query), -1, dtype=np.int64)
    out[found] = order[at[found]]
    return out


def visit_targets(
    actions: np.ndarray,
    offsets: np.ndarray,
    visit_actions: np.ndarray,
    visit_counts: np.ndarray,
    visit_offsets: np.ndarray,
) -> np.ndarray:
    """MCTS visit counts spread over the legal actions: float32 weights aligned with ``actions``.

    ``visit_*`` are the CSR visit columns of ``Dataset.batches()`` (one row per position, as for
    ``actions``/``offsets``); legal actions never visited get 0. Raises ``TaikyokuError`` if a visited
    action is not among its position's legal actions (the visits and the legal actions disagree).
    """
    return _scatter_targets(actions, offsets, visit_actions, visit_counts, visit_offsets, "visited")


def _scatter_targets(
    actions: np.ndarray,
    offsets: np.ndarray,
    target_actions: np.ndarray,
    target_weights: np.ndarray,
    target_offsets: np.ndarray,
    what: str,
) -> np.ndarray:
    """CSR (action, weight) rows spread over the CSR legal actions (see :func:`visit_targets`)."""
    rows = np.repeat(np.arange(len(target_offsets) - 1, dtype=np.int64), np.diff(target_offsets))
    where = locate(actions, offsets, rows, target_actions)
    if (where < 0).any():
        j = int(np.flatnonzero(where < 0)[0])
        raise _core.TaikyokuError(
            f"row {int(rows[j])}: {what} action {int(target_actions[j])} is not among its legal actions"
        )
    weights = np.zeros(len(actions), dtype=np.float32)
    np.add.at(weights, where, np.asarray(target_weights, dtype=np.float32))
    return weights


def played_targets(actions: np.ndarray, offsets: np.ndarray, played: np.ndarray) -> np.ndarray:
    """One-hot targets on the move each position played (for datasets without visits, e.g. random play)."""
    where = locate(actions, offsets, np.arange(len(played)), played)
    if (where < 0).any():
        i = int(np.flatnonzero(where < 0)[0])
        raise _core.TaikyokuError(f"row {i}: played action {int(played[i])} is not among its legal actions")
    weights = np.zeros(len(actions), dtype=np.float32)
    weights[where] = 1.0
    return weights


def _replay(dataset, game_id: int, played: np.ndarray) -> List[np.ndarray]:
    """The legal actions before each move of one stored game, replayed from the start."""
    game, legal = dataset.new_game(), []
    for ply, action in enumerate(played.tolist()):
        legal.append(game.legal_actions())
        try:
            game.play(action)
        except _core.TaikyokuError as e:
            raise _core.TaikyokuError(f"{dataset.path}: game {game_id} ply {ply} does not replay: {e}") from e
    return legal


class LegalActionIndex:
    """The legal actions (mover's frame, sorted) of every stored position of a dataset.

    Datasets store each position's legal-move *count* and the MCTS visits; the legal actions
    themselves only when made with ``store_legal_actions``. :meth:`from_dataset` reads that column
    when it is there, and otherwise recovers them by replaying the games (in Rust, in parallel:
    ``taikyoku._core.replay_legal_actions``), one shard at a time. They are kept as int32, 4 bytes
    per legal action (1–3 KB per position). :meth:`lookup` then gathers a batch's legal actions in
    CSR form.

    >>> import taikyoku.datasets as tds, taikyoku.nn as tnn          # doctest: +SKIP
    >>> ds = tds.open("datasets/samples/mcts-tiny")                  # doctest: +SKIP
    >>> legal = tnn.LegalActionIndex.from_dataset(ds)                # doctest: +SKIP
    >>> actions, offsets = legal.lookup(game_ids, plies)             # doctest: +SKIP
    """

    game_ids: npt.NDArray[np.int64]
    plies: npt.NDArray[np.int64]
    actions: npt.NDArray[np.int32]
    offsets: npt.NDArray[np.int64]

    def __init__(self, game_ids: np.ndarray, plies: np.ndarray, actions: np.ndarray, offsets: np.ndarray) -> None:
        #: Game ids, and each game's ply count, in the order their positions are stored here.
        self.game_ids = np.asarray(game_ids, dtype=np.int64)
        self.plies = np.asarray(plies, dtype=np.int64)
        #: Every position's legal actions (CSR over positions: game by game, ply by ply).
        self.actions = np.asarray(actions, dtype=np.int32)  # every action fits: NUM_ACTIONS < 2**31
        self.offsets = np.asarray(offsets, dtype=np.int64)
        if len(self.offsets) != self.plies.sum() + 1 or self.offsets[-1] != len(self.actions):
            raise ValueError("offsets must hold one entry per position plus one, ending at len(actions)")
        first = np.zeros(len(self.plies), dtype=np.int64)
        np.cumsum(self.plies[:-1], out=first[1:])
        # game id -> index of its ply-0 position (-1: not in the index).
        self._first = np.full(int(self.game_ids.max(initial=-1)) + 1, -1, dtype=np.int64)
        self._first[self.game_ids] = first
        self._plies = np.zeros(len(self._first), dtype=np.int64)
        self._plies[self.game_ids] = self.plies

    @classmethod
    def from_dataset(cls, dataset: taikyoku.datasets.Dataset, check: bool = True) -> LegalActionIndex:
        """The legal actions of every position of ``dataset`` (its complete shards): its stored
        ``legal_actions`` column (:attr:`~taikyoku.datasets.Dataset.has_legal_actions`), else a
        replay of every game. With ``check``, each position's legal-action count is compared with
        the stored ``legal_moves`` (a ``TaikyokuError`` names the first mismatch: the dataset was
        written by another engine version, or is damaged)."""
        if dataset.has_legal_actions:
            return cls._stored(dataset, check)
        ids, plies, actions, lengths = [], [], [], []
        for shard in range(len(dataset.shards)):
            games = dataset.read_shard(shard, "games")
            played, starts = _list_csr(games.column("actions"))
            ids.append(_numpy(games.column("game_id")).astype(np.int64))
            plies.append(np.diff(starts))
            try:  # every game of the shard replayed in Rust, in parallel
                flat, ends = _core.replay_legal_actions(
                    np.ascontiguousarray(played, dtype=np.int64),
                    np.ascontiguousarray(starts, dtype=np.int64),
                    variant=dataset.variant,
                    options=list(dataset.options),
                )
            except _core.TaikyokuError:
                # Name the game and ply that does not replay (the slow path, only on bad data).
                for game_id, lo, hi in zip(ids[-1], starts[:-1], starts[1:]):
                    _replay(dataset, game_id, played[lo:hi])
                raise
            lengths.extend(np.diff(ends).tolist())
            actions.append(flat)
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(np.asarray(lengths, dtype=np.int64), out=offsets[1:])
        join = lambda parts, dtype: np.concatenate(parts) if parts else np.zeros(0, dtype)  # noqa: E731
        index = cls(join(ids, np.int64), join(plies, np.int64), join(actions, np.int32), offsets)
        if check:
            for shard in range(len(dataset.shards)):
                index._check(dataset, dataset.read_shard(shard, "positions"))
        return index

    @classmethod
    def _stored(cls, dataset: taikyoku.datasets.Dataset, check: bool) -> LegalActionIndex:
        """From the ``legal_actions`` column, shard by shard (positions are stored game by game,
        ply by ply, as the index keeps them)."""
        ids, plies, actions, lengths = [], [], [], []
        for shard in range(len(dataset.shards)):
            positions = dataset.read_shard(shard, "positions")
            game_ids, ply = (_numpy(positions.column(name)).astype(np.int64) for name in ("game_id", "ply"))
            if len(game_ids) and not np.all((np.diff(game_ids) > 0) | ((np.diff(game_ids) == 0) & (np.diff(ply) == 1))):
                raise _core.TaikyokuError(f"shard {shard}: positions are not stored game by game, ply by ply")
            starts = np.flatnonzero(np.r_[True, game_ids[1:] != game_ids[:-1]])
            ids.append(game_ids[starts])
            plies.append(np.diff(np.r_[starts, len(game_ids)]))
            flat, offsets = dataset.legal_actions(positions, check=check)
            actions.append(np.asarray(flat, dtype=np.int32))
            lengths.extend(np.diff(offsets).tolist())
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(np.asarray(lengths, dtype=np.int64), out=offsets[1:])
        join = lambda parts, dtype: np.concatenate(parts) if parts else np.zeros(0, dtype)  # noqa: E731
        return cls(join(ids, np.int64), join(plies, np.int64), join(actions, np.int32), offsets)

    def _check(self, dataset, positions) -> None:
        game_ids, plies, stored = (
            _numpy(positions.column(name)).astype(np.int64) for name in ("game_id", "ply", "legal_moves")
        )
        rows = self._rows(game_ids, plies)
        found = self.offsets[rows + 1] - self.offsets[rows]
        bad = np.flatnonzero(found != stored)
        if bad.size:
            i = int(bad[0])
            raise _core.TaikyokuError(
                f"{dataset.path}: game {game_ids[i]} ply {plies[i]} has {found[i]} legal actions on replay, "
                f"the dataset says {stored[i]} (another engine version, or a damaged dataset)"
            )

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def _rows(self, game_ids: np.ndarray, plies: np.ndarray) -> np.ndarray:
        game_ids = np.asarray(game_ids, dtype=np.int64)
        plies = np.asarray(plies, dtype=np.int64)
        known = (game_ids >= 0) & (game_ids < len(self._first))
        first = np.where(known, self._first[np.where(known, game_ids, 0)], -1)
        bad = (first < 0) | (plies < 0) | (plies >= self._plies[np.where(known, game_ids, 0)])
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise KeyError(f"no position (game {int(game_ids[i])}, ply {int(plies[i])}) in this index")
        return first + plies

    def lookup(self, game_ids: np.ndarray, plies: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
        """``(actions, offsets)``: the legal actions of positions ``(game_ids[i], plies[i])``, in CSR form."""
        rows = self._rows(game_ids, plies)
        starts = self.offsets[rows]
        counts = self.offsets[rows + 1] - starts
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        # Flat gather index: each row's range starts[i] .. starts[i] + counts[i], concatenated.
        gather = np.arange(offsets[-1], dtype=np.int64) - np.repeat(offsets[:-1] - starts, counts)
        return self.actions[gather].astype(np.int64), offsets


@dataclass
class TrainingBatch:
    """One batch of training positions as tensors (see :func:`training_batch`)."""

    #: (B, 36, 36, P) int32 compact observation planes, mover's frame.
    observations: Tensor
    #: (N,) int64 flat legal actions and (B + 1,) int64 CSR offsets.
    actions: Tensor
    offsets: Tensor
    #: (N,) float32 policy target weights aligned with ``actions`` (improved policy, visit counts or one-hot).
    policy: Tensor
    #: (B,) float32 value targets in [-1, 1] (the game's outcome for the side to move).
    value: Tensor
    #: (B,) bool: which value targets count. A game cut by ``max_plies`` has no result and its
    #: positions an outcome of 0 that is no draw: they are left out of the value loss (False).
    #: None counts every position (batches built by hand before this field existed).
    value_mask: Optional[Tensor] = None

    def __len__(self) -> int:
        return self.offsets.numel() - 1

    def to(self, device: Union[str, torch.device], non_blocking: bool = False) -> TrainingBatch:
        """The same batch on ``device``."""
        moved = {}
        for f in fields(self):
            value = getattr(self, f.name)
            moved[f.name] = None if value is None else value.to(device, non_blocking=non_blocking)
        return TrainingBatch(**moved)


#: What becomes of the value target of a position whose game was cut by ``max_plies`` (no result).
Truncated = Literal["mask", "root_value"]


def training_batch(
    batch: Dict[str, np.ndarray],
    legal: Optional[LegalActionIndex] = None,
    device: Union[str, torch.device, None] = None,
    truncated: Truncated = "mask",
) -> TrainingBatch:
    """A :class:`TrainingBatch` from a ``Dataset.batches(compact=True)`` batch and its dataset's legal actions.

    The legal actions come from the batch itself when its dataset stores them (the
    ``legal_actions`` / ``legal_offsets`` keys), else from ``legal``. The policy target is, in
    order of preference, the improved policy of a Gumbel root search (the ``policy_*`` keys, from
    the positions' ``policy`` column), the MCTS visit distribution (``visit_*``), or the move
    played; each is scattered onto the legal actions (:func:`visit_targets`). The value target is
    ``outcome``, and ``value_mask`` the batch's ``decided`` (games cut by ``max_plies`` have no
    result: their zeros are not draws); all True for a batch without that key. With
    ``truncated="root_value"`` a position of such a game gets a bootstrapped target instead, the
    MCTS root value the dataset stores (the search's estimate for the side to move; masked where
    there is none, as for random players): for variants whose games outlast any affordable ply
    limit (Dai dai), the only value signal.
    """
    if truncated not in ("mask", "root_value"):
        raise ValueError(f"truncated must be 'mask' or 'root_value', not {truncated!r}")
    observations = batch["observation"]
    if observations.ndim != 4 or observations.dtype.kind not in "iu":
        raise ValueError("training_batch needs compact observations: Dataset.batches(compact=True)")
    if "legal_actions" in batch and "legal_offsets" in batch:
        actions = np.asarray(batch["legal_actions"], dtype=np.int64)
        offsets = np.asarray(batch["legal_offsets"], dtype=np.int64)
    elif legal is not None:
        actions, offsets = legal.lookup(batch["game_id"], batch["ply"])
    else:
        raise ValueError("training_batch needs legal: the batch's dataset does not store legal actions")
    improved = batch.get("policy_offsets")
    visits = batch.get("visit_offsets")
    if improved is not None and len(batch["policy_actions"]):
        weights = _scatter_targets(
            actions, offsets, batch["policy_actions"], batch["policy_weights"], improved, "improved-policy"
        )
    elif visits is not None and len(batch["visit_actions"]):
        weights = visit_targets(actions, offsets, batch["visit_actions"], batch["visit_counts"], visits)
    else:
        weights = played_targets(actions, offsets, batch["action"])
    decided = batch.get("decided")
    count = len(batch["outcome"])
    value = batch["outcome"].astype(np.float32)
    mask = np.ones(count, np.bool_) if decided is None else np.asarray(decided, dtype=np.bool_).copy()
    if truncated == "root_value" and "root_value" in batch:
        root = np.asarray(batch["root_value"], dtype=np.float32)
        bootstrapped = ~mask & np.isfinite(root)
        value[bootstrapped] = root[bootstrapped]
        mask |= bootstrapped
    out = TrainingBatch(
        observations=torch.from_numpy(observations.astype(np.int32)),
        actions=torch.from_numpy(actions),
        offsets=torch.from_numpy(offsets),
        policy=torch.from_numpy(weights),
        value=torch.from_numpy(value),
        value_mask=torch.from_numpy(mask),
    )
    if device is not None and torch.device(device).type != "cpu":
        out = out.to(device, non_blocking=True)
    return out


def training_batches(
    dataset: taikyoku.datasets.Dataset,
    legal: Optional[LegalActionIndex] = None,
    batch_size: int = 64,
    *,
    seed: int = 0,
    epochs: Optional[int] = None,
    device: Union[str, torch.device, None] = None,
    truncated: Truncated = "mask",
) -> Iterator[TrainingBatch]:
    """Shuffled batches of ``dataset`` as :class:`TrainingBatch`, epoch after epoch (forever if ``epochs`` is None).

    Reads one shard at a time (``Dataset.batches(compact=True)``); epoch ``e`` is shuffled with
    seed ``(seed, e)``. ``legal`` defaults to the batches' own legal actions when the dataset
    stores them, else to :meth:`LegalActionIndex.from_dataset`. Batches are full (``drop_last``)
    unless the dataset holds fewer than ``batch_size`` positions. ``truncated``: the value target
    of positions of games cut by ``max_plies``, as in :func:`training_batch`.
    """
    if dataset.num_positions == 0:
        raise _core.TaikyokuError(f"{dataset.path} holds no positions to train on")
    if legal is None and not dataset.has_legal_actions:
        legal = LegalActionIndex.from_dataset(dataset)
    drop_last = dataset.num_positions >= batch_size
    epoch = 0
    while epochs is None or epoch < epochs:
        order = int(np.random.SeedSequence([seed, epoch]).generate_state(1, np.uint64)[0])
        for batch in dataset.batches(batch_size, shuffle=True, seed=order, compact=True, drop_last=drop_last):
            yield training_batch(batch, legal, device, truncated)
        epoch += 1


def value_loss(values: Tensor, targets: Tensor, mask: Optional[Tensor] = None) -> Tensor:
    """Mean squared error over the positions where ``mask`` is true (bool or 0/1 weights; None: all).

    Positions of truncated games (``TrainingBatch.value_mask`` False) have no value target: they
    are left out of the mean, and a batch without any decided position gives 0 (with a gradient of
    0, so a backward pass still works).
    """
    error = (values - targets.to(values.dtype)).square()
    if mask is None:
        return error.mean()
    weights = mask.to(values.dtype)
    return (error * weights).sum() / weights.sum().clamp_min(1.0)


def policy_value_loss(
    net: PolicyValueNet, batch: TrainingBatch, value_weight: float = 1.0
) -> Tuple[Tensor, Tensor, Tensor]:
    """``(total, policy, value)`` losses of ``net`` on ``batch``: cross entropy against the policy
    targets (:func:`policy_loss`) plus ``value_weight`` times the mean squared value error over
    the positions whose game has a result (``batch.value_mask``, :func:`value_loss`)."""
    out = net(batch.observations, batch.actions, batch.offsets)
    policy = policy_loss(out.logits, batch.offsets, batch.policy)
    value = value_loss(out.values, batch.value, batch.value_mask)
    return policy + value_weight * value, policy, value
