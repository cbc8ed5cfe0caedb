"""Training networks on taikyoku with PyTorch: sparse actions, a reference network, MCTS evaluators.

The action space has ``taikyoku.NUM_ACTIONS`` = 5,101,056 actions (docs/ACTIONS.md) but a position
has a few hundred legal ones, so nothing here ever builds a dense policy. Policies live on the **legal actions in CSR form**, the
form ``taikyoku.selfplay`` hands its evaluator and :class:`LegalActionIndex` builds for datasets:

- ``actions``: one flat int64 tensor, every row's legal actions one after the other;
- ``offsets``: int64, length ``B + 1``; row ``i`` owns ``actions[offsets[i]:offsets[i + 1]]``.

A network scores each flat entry (``logits``, aligned with ``actions``) and the segment operations
below (:func:`segment_log_softmax`, :func:`segment_sample`, :func:`policy_loss`, ...) normalise,
sample and train per row, vectorised, without a Python loop over rows.

Contents:

- Actions: :func:`decode_actions`, :func:`encode_actions`, :func:`move_kinds`.
- Segments: :func:`segment_ids`, :func:`segment_max`, :func:`segment_logsumexp`,
  :func:`segment_log_softmax`, :func:`segment_softmax`, :func:`segment_argmax`,
  :func:`segment_sample`, :func:`segment_log_prob`, :func:`segment_entropy`, :func:`policy_loss`,
  :func:`gather_rows`.
- Data: :class:`LegalActionIndex` (a dataset's legal actions, recovered by replaying its games),
  :func:`locate`, :func:`visit_targets`, :func:`played_targets`, :class:`TrainingBatch`,
  :func:`training_batch`, :func:`training_batches`.
- Network: :class:`PolicyValueNet` (runs on the variant's own board) and :class:`NetworkEvaluator`
  (``evaluator=`` for ``taikyoku.selfplay(players="mcts")``), :func:`policy_value_loss`,
  :func:`value_loss`; :func:`save`, :func:`load`, :func:`pretrained` (weights shipped in the package).
- Reinforcement learning on ``taikyoku.VectorEnv``: :class:`CsrRolloutBuffer` (GAE, shuffled
  minibatches), :func:`heuristic_values` (the engine's evaluator as a baseline).

Needs torch (``pip install "taikyoku[torch]"``); ``import taikyoku`` itself never imports it.
"""

from __future__ import annotations

import errno
import importlib.resources
import os
import threading
import weakref
from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path
from typing import Any, Dict, Iterator, List, Literal, NamedTuple, Optional, Sequence, Tuple, TypeVar, Union

import numpy as np
import numpy.typing as npt

try:
    import torch
    import torch.nn.functional as F
    from torch import Tensor, nn
except ImportError as _error:  # pragma: no cover - exercised only where torch is absent
    raise ImportError('taikyoku.nn needs PyTorch: pip install "taikyoku[torch]" (or pip install torch)') from _error

import taikyoku
from taikyoku import _core

__all__ = [
    "ActionParts",
    "CsrRolloutBuffer",
    "LegalActionIndex",
    "NUM_MOVE_KINDS",
    "NetworkEvaluator",
    "PolicyValueNet",
    "PolicyValueOutput",
    "RolloutMinibatch",
    "SAVE_FORMAT",
    "TrainingBatch",
    "decode_actions",
    "encode_actions",
    "gather_rows",
    "heuristic_values",
    "load",
    "locate",
    "move_kinds",
    "played_targets",
    "policy_loss",
    "policy_value_loss",
    "pretrained",
    "pretrained_variants",
    "save",
    "segment_argmax",
    "segment_entropy",
    "segment_ids",
    "segment_log_prob",
    "segment_log_softmax",
    "segment_logsumexp",
    "segment_max",
    "segment_sample",
    "segment_softmax",
    "training_batch",
    "training_batches",
    "value_loss",
    "visit_targets",
]

ArrayLike = Union[Tensor, np.ndarray, Sequence[int]]

# The action layout comes from the package (docs/ACTIONS.md §2); nothing below restates it.
_GRID = int(_core.GRID)
_SQUARES = _GRID * _GRID
_MOVE_BLOCK = int(_core.MOVE_BLOCK)
_TEMPLATES = int(_core.TEMPLATE_COUNT)
_PROMOTION_BLOCK = int(_core.PROMOTION_BLOCK)
_NUM_ACTIONS = int(_core.NUM_ACTIONS)
# A simple move's displacement (rows, columns), each in [-(GRID-1), GRID-1], is one "move kind";
# each multi-leg template is one more; and each of those again when the move promotes.
_SPAN = 2 * _GRID - 1
_PLAIN_KINDS = _SPAN * _SPAN + _TEMPLATES
#: Number of distinct :func:`move_kinds`: one per simple-move displacement and one per template,
#: twice (declining or choosing promotion).
NUM_MOVE_KINDS = 2 * _PLAIN_KINDS


# -- actions ----------------------------------------------------------------------------------------


class ActionParts(NamedTuple):
    """What an action is made of, in the frame its action was written in (the mover's, normally)."""

    #: Grid square the piece starts on: ``row * 36 + column``.
    from_square: Tensor
    #: Grid square the piece ends on (a multi-leg move's end, from its template; the start square
    #: for igui and the lion's pass); -1 where a template would leave the grid (never for a legal action).
    to_square: Tensor
    #: Multi-leg template index (``taikyoku.action_templates()``), -1 for a simple move.
    template: Tensor
    #: True for the promotion block: the move chooses to promote (docs/ACTIONS.md §2).
    promotes: Tensor


@cache
def _template_ends(device: torch.device) -> Tuple[Tensor, Tensor]:
    """(rows, columns) of each template's end offset, from the engine's own table, on ``device``."""
    ends = torch.tensor([end for _, end in _core.action_templates()], dtype=torch.long).reshape(-1, 2)
    if len(ends) != _TEMPLATES:  # pragma: no cover - the engine's table and its constant agree
        raise _core.InternalError(f"action_templates() lists {len(ends)} templates, TEMPLATE_COUNT is {_TEMPLATES}")
    return ends[:, 0].contiguous().to(device), ends[:, 1].contiguous().to(device)


def _as_long(values: ArrayLike, device: Optional[torch.device] = None) -> Tensor:
    if isinstance(values, Tensor):
        return values.to(device=device if device is not None else values.device, dtype=torch.long)
    return torch.as_tensor(np.asarray(values, dtype=np.int64), device=device)


def _decode(actions: Tensor) -> ActionParts:
    """:func:`decode_actions` without the range check (no device synchronisation: the network's path)."""
    promotes = actions >= _PROMOTION_BLOCK
    a = torch.where(promotes, actions - _PROMOTION_BLOCK, actions)
    simple = a < _MOVE_BLOCK
    rest = (a - _MOVE_BLOCK).clamp_min(0)
    from_square = torch.where(simple, a // _SQUARES, rest // _TEMPLATES)
    template = torch.where(simple, torch.full_like(a, -1), rest % _TEMPLATES)
    end_rows, end_columns = _template_ends(a.device)
    t = template.clamp_min(0)
    row = from_square // _GRID + end_rows[t]
    column = from_square % _GRID + end_columns[t]
    inside = (row >= 0) & (row < _GRID) & (column >= 0) & (column < _GRID)
    multi_end = torch.where(inside, row * _GRID + column, torch.full_like(a, -1))
    return ActionParts(from_square, torch.where(simple, a % _SQUARES, multi_end), template, promotes)


def decode_actions(actions: ArrayLike) -> ActionParts:
    """Splits actions into start square, end square, multi-leg template and promotion (vectorised).

    Works on any shape; the result has the same shape and device. Raises ``ValueError`` for an
    integer outside ``[0, taikyoku.NUM_ACTIONS)``. The squares are grid squares of the frame the
    actions were written in (the mover's for everything ``taikyoku`` produces).

    >>> import taikyoku, taikyoku.nn as tnn
    >>> parts = tnn.decode_actions(taikyoku.Game().legal_actions())
    >>> bool((parts.template == -1).all())      # the opening has no multi-leg move
    True
    """
    a = _as_long(actions)
    if a.numel() and (int(a.min()) < 0 or int(a.max()) >= _NUM_ACTIONS):
        raise ValueError(f"actions must lie in [0, {_NUM_ACTIONS}), got values in [{int(a.min())}, {int(a.max())}]")
    return _decode(a)


def encode_actions(
    from_square: ArrayLike,
    to_square: ArrayLike,
    template: Optional[ArrayLike] = None,
    promotes: Optional[ArrayLike] = None,
) -> Tensor:
    """The actions of start squares, end squares, templates and promotions: the inverse of :func:`decode_actions`.

    Where ``template`` is -1 (or ``template`` is None) the action is the simple move ``from -> to``;
    elsewhere it is the multi-leg move ``(from, template)``, and ``to_square`` is not used (the
    template fixes the end). Where ``promotes`` is true the action is the promoting one. Raises
    ``ValueError`` for squares or templates out of range.
    """
    f = _as_long(from_square)
    t = _as_long(to_square, f.device)
    k = torch.full_like(f, -1) if template is None else _as_long(template, f.device)
    for name, values, high in (("from_square", f, _SQUARES), ("template", k, _TEMPLATES)):
        if values.numel() and (int(values.min()) < (-1 if name == "template" else 0) or int(values.max()) >= high):
            raise ValueError(f"{name} out of range: values in [{int(values.min())}, {int(values.max())}], limit {high}")
    simple = k < 0
    if bool(((t < 0) | (t >= _SQUARES))[simple].any()):
        raise ValueError(f"to_square of a simple move must lie in [0, {_SQUARES})")
    plain = torch.where(simple, f * _SQUARES + t, _MOVE_BLOCK + f * _TEMPLATES + k.clamp_min(0))
    if promotes is None:
        return plain
    return torch.where(_as_long(promotes, f.device) != 0, plain + _PROMOTION_BLOCK, plain)


def move_kinds(actions: ArrayLike, parts: Optional[ActionParts] = None) -> Tensor:
    """A small vocabulary for actions, for an embedding: ``0 <= kind < NUM_MOVE_KINDS``.

    A simple move's kind is its displacement (rows, columns) on the grid, the same from any square;
    a multi-leg move's kind is its template; a promoting move has kinds of its own. ``parts`` (from
    :func:`decode_actions`) saves decoding twice.
    """
    p = decode_actions(actions) if parts is None else parts
    rows = p.to_square // _GRID - p.from_square // _GRID + (_GRID - 1)
    columns = p.to_square % _GRID - p.from_square % _GRID + (_GRID - 1)
    plain = torch.where(p.template < 0, rows * _SPAN + columns, _SPAN * _SPAN + p.template)
    return torch.where(p.promotes, plain + _PLAIN_KINDS, plain)


# -- segment operations -----------------------------------------------------------------------------


def segment_ids(offsets: Tensor, total: Optional[int] = None) -> Tensor:
    """The row of each flat entry: ``[0, 0, 1, 2, 2, 2, ...]`` for CSR ``offsets`` (length B + 1).

    ``total`` (``offsets[-1]``, the flat length) spares a device synchronisation on GPUs.
    """
    counts = offsets[1:] - offsets[:-1]
    rows = torch.arange(counts.numel(), device=offsets.device)
    return torch.repeat_interleave(rows, counts, output_size=total)


def _rows(values: Tensor, offsets: Tensor, ids: Optional[Tensor]) -> Tuple[int, Tensor]:
    if values.dim() != 1:
        raise ValueError(f"segment operations take flat (1-D) values, got shape {tuple(values.shape)}")
    return offsets.numel() - 1, segment_ids(offsets, values.numel()) if ids is None else ids


def segment_max(values: Tensor, offsets: Tensor, ids: Optional[Tensor] = None) -> Tensor:
    """Per-row maximum, shape (B,); ``-inf`` for an empty row."""
    rows, ids = _rows(values, offsets, ids)
    out = values.new_full((rows,), float("-inf"))
    return out.scatter_reduce(0, ids, values, reduce="amax", include_self=True)


def segment_logsumexp(logits: Tensor, offsets: Tensor, ids: Optional[Tensor] = None) -> Tensor:
    """Per-row ``log(sum(exp(logits)))``, shape (B,), computed stably; ``-inf`` for an empty row."""
    rows, ids = _rows(logits, offsets, ids)
    # The shift only keeps exp() in range and cancels out, so it needs no gradient.
    shift = segment_max(logits.detach(), offsets, ids)
    shift = torch.where(torch.isfinite(shift), shift, torch.zeros_like(shift))
    sums = logits.new_zeros(rows).index_add(0, ids, torch.exp(logits - shift[ids]))
    return torch.log(sums) + shift


def segment_log_softmax(logits: Tensor, offsets: Tensor, ids: Optional[Tensor] = None) -> Tensor:
    """``log_softmax`` of each row's logits, flat like ``logits`` (differentiable)."""
    _, ids = _rows(logits, offsets, ids)
    return logits - segment_logsumexp(logits, offsets, ids)[ids]


def segment_softmax(logits: Tensor, offsets: Tensor, ids: Optional[Tensor] = None) -> Tensor:
    """``softmax`` of each row's logits, flat like ``logits``: each row sums to 1."""
    return torch.exp(segment_log_softmax(logits, offsets, ids))


def segment_argmax(values: Tensor, offsets: Tensor, ids: Optional[Tensor] = None) -> Tensor:
    """Per row, the flat index of its largest value (the first one on ties); -1 for an empty row."""
    rows, ids = _rows(values, offsets, ids)
    best = segment_max(values, offsets, ids)
    n = values.numel()
    position = torch.arange(n, device=values.device)
    candidate = torch.where(values == best[ids], position, torch.full_like(position, n))
    first = torch.full((rows,), n, dtype=torch.long, device=values.device)
    first = first.scatter_reduce(0, ids, candidate, reduce="amin", include_self=True)
    return torch.where(first == n, torch.full_like(first, -1), first)


def segment_sample(
    logits: Tensor, offsets: Tensor, generator: Optional[torch.Generator] = None, ids: Optional[Tensor] = None
) -> Tensor:
    """Draws one entry per row from ``softmax(row logits)``: flat indices (B,), -1 for an empty row.

    The Gumbel-max trick (argmax of ``logits + Gumbel noise``), so one pass over the flat array.
    With a seeded ``generator`` (on the logits' device) the draw is reproducible. The sampled
    actions are ``actions[index]``.
    """
    _, ids = _rows(logits, offsets, ids)
    with torch.no_grad():
        # -log(Exp(1)) is Gumbel(0, 1).
        noise = torch.empty_like(logits, dtype=torch.float32).exponential_(generator=generator)
        return segment_argmax(logits.detach().float() - torch.log(noise), offsets, ids)


def segment_log_prob(logits: Tensor, offsets: Tensor, index: Tensor, ids: Optional[Tensor] = None) -> Tensor:
    """``log pi(index[i] | row i)`` for one flat index per row (e.g. from :func:`segment_sample`), shape (B,).

    An index of -1 (an empty row's draw) gives ``-inf``.
    """
    log_p = segment_log_softmax(logits, offsets, ids)
    if log_p.numel() == 0:
        return log_p.new_full(index.shape, float("-inf"))
    return torch.where(index >= 0, log_p[index.clamp_min(0)], log_p.new_tensor(float("-inf")))


def policy_loss(
    logits: Tensor, offsets: Tensor, targets: Tensor, reduction: str = "mean", ids: Optional[Tensor] = None
) -> Tensor:
    """Cross entropy between each row's ``softmax(logits)`` and its target distribution.

    ``targets`` are non-negative weights aligned with the flat legal actions (MCTS visit counts,
    say, from :func:`visit_targets`); each row's weights are normalised to sum to 1, so raw counts
    do. Rows whose weights are all zero have no target: they count 0 and are left out of the mean.
    ``reduction``: ``"mean"`` (over rows with a target), ``"sum"`` or ``"none"`` (per row, (B,)).
    """
    rows, ids = _rows(logits, offsets, ids)
    if targets.shape != logits.shape:
        raise ValueError(f"targets {tuple(targets.shape)} must align with logits {tuple(logits.shape)}")
    targets = targets.to(logits.dtype)
    totals = logits.new_zeros(rows).index_add(0, ids, targets)
    log_p = segment_log_softmax(logits, offsets, ids)
    per_row = -logits.new_zeros(rows).index_add(0, ids, targets * log_p) / totals.clamp_min(
        torch.finfo(logits.dtype).tiny
    )
    if reduction == "none":
        return per_row
    if reduction == "sum":
        return per_row.sum()
    if reduction == "mean":
        return per_row.sum() / (totals > 0).sum().clamp_min(1)
    raise ValueError(f"reduction must be 'mean', 'sum' or 'none', not {reduction!r}")


# -- data: legal actions and targets ---------------------------------------------------------------


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


def _int_column(column) -> np.ndarray:
    """A pyarrow integer column (no nulls) as int64."""
    parts = [chunk.to_numpy(zero_copy_only=False) for chunk in column.chunks]
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)


def _list_column(column) -> Tuple[np.ndarray, np.ndarray]:
    """A pyarrow list<int> column as flat int64 values and row offsets (without boxing every item)."""
    values, lengths = [], []
    for chunk in column.chunks:
        values.append(chunk.flatten().to_numpy(zero_copy_only=False))  # flatten() honours slices
        lengths.append(chunk.value_lengths().to_numpy(zero_copy_only=False))
    flat = np.concatenate(values).astype(np.int64) if values else np.zeros(0, np.int64)
    offsets = np.zeros(sum(map(len, lengths)) + 1, dtype=np.int64)
    if lengths:
        np.cumsum(np.concatenate(lengths), out=offsets[1:])
    return flat, offsets


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
            played, starts = _list_column(games.column("actions"))
            ids.append(_int_column(games.column("game_id")))
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
            game_ids, ply = (_int_column(positions.column(name)) for name in ("game_id", "ply"))
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
        game_ids, plies, stored = (_int_column(positions.column(name)) for name in ("game_id", "ply", "legal_moves"))
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


# -- the reference network --------------------------------------------------------------------------


class PolicyValueOutput(NamedTuple):
    """What :class:`PolicyValueNet` returns."""

    #: (N,) one logit per flat legal action.
    logits: Tensor
    #: (B,) position values in (-1, 1), for the side to move.
    values: Tensor


@cache
def _board_shape(variant: str, options: Tuple[str, ...] = ()) -> Tuple[int, int]:
    """(height, width) of ``variant``'s board, from the engine (an empty board of it)."""
    game = taikyoku.Game.empty(variant, options=list(options))
    return int(game.height), int(game.width)


class _Block(nn.Module):
    """A residual block: two 3x3 convolutions with batch norm."""

    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.norm1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.norm2 = nn.BatchNorm2d(channels)

    def forward(self, x: Tensor) -> Tensor:
        y = F.relu(self.norm1(self.conv1(x)))
        return F.relu(x + self.norm2(self.conv2(y)))


class PolicyValueNet(nn.Module):
    """A small reference policy-value network over compact observations, with a sparse policy head.

    - **Input**: compact observations (B, 36, 36, 8), mover's frame, as ``taikyoku.selfplay`` hands
      its evaluator (``observation="compact"``) and ``Dataset.batches(compact=True)`` yields. The
      planes are found by name (``taikyoku.plane_names(variant, compact=True)``): each square's
      mover and opponent piece ids are embedded (one table each, ``len(piece_types) + 1`` ids), and
      the flag and constant planes (promoted, on board, repetitions, side, move number) enter
      through a linear layer.
    - **Board size**: the network runs on the variant's own ``height x width`` board only. Smaller
      boards sit in the grid's top-left corner in either frame (docs/ACTIONS.md §1), so the
      observations are cropped to ``[:, :height, :width]`` before anything else: a Tenjiku
      (16 x 16) position costs a fifth of the 36 x 36 grid, and the board's edge is the
      convolutions' zero padding. Already-cropped observations (B, height, width, P) are taken
      as they are. Grid squares of actions (``row * 36 + column``) are mapped to the cropped
      board (``row * width + column``). No weight depends on the board size.
    - **Trunk**: ``blocks`` residual blocks of ``channels`` 3x3 convolutions. Its receptive field
      grows by 4 squares per block, so the policy head also gets the board-wide mean of the
      features: long-range pieces are not blind to the far side of the board.
    - **Value head**: 1x1 convolution, mean over the board, two linear layers, ``tanh``.
    - **Policy head**: scores only the legal actions. Each action is decoded into its start and end
      squares and its :func:`move_kinds` (displacement or multi-leg template, and whether it
      promotes); its logit is
      ``w . relu(F[from] + T[to] + K[kind] + G)``, with ``F`` and ``T`` per-square features of the
      trunk, ``K`` a learned embedding and ``G`` from the board-wide mean. Its cost is linear in the
      number of legal actions.

    ``forward(observations, actions, offsets)`` takes the legal actions in CSR form and returns
    :class:`PolicyValueOutput`. :meth:`evaluator` wraps the network for ``taikyoku.selfplay``.
    """

    #: The constructor's arguments (``channels``, ``blocks``, ``head_channels``, ``variant``, ``options``).
    config: Dict[str, Any]
    #: Planes of the compact observations it reads.
    plane_count: int
    #: The variant's board (rows, columns): the part of the 36 x 36 grid the network runs on.
    height: int
    width: int
    mover_embedding: nn.Embedding
    opponent_embedding: nn.Embedding
    scalars: nn.Linear
    trunk: nn.Sequential
    policy_from: nn.Conv2d
    policy_to: nn.Conv2d
    policy_global: nn.Linear
    kind_embedding: nn.Embedding
    policy_out: nn.Linear
    value_conv: nn.Conv2d
    value_hidden: nn.Linear
    value_out: nn.Linear

    def __init__(
        self,
        channels: int = 32,
        blocks: int = 2,
        head_channels: int = 32,
        variant: str = "taikyoku",
        options: Optional[Sequence[str]] = None,
    ) -> None:
        super().__init__()
        if channels < 1 or blocks < 0 or head_channels < 1:
            raise ValueError("channels and head_channels must be positive and blocks non-negative")
        names = _core.plane_names(variant, compact=True, options=list(options or []))
        self.config = dict(
            channels=channels, blocks=blocks, head_channels=head_channels, variant=variant, options=list(options or [])
        )
        self._mover = names.index("mover_piece")
        self._opponent = names.index("opponent_piece")
        self._on_board = names.index("on_board")
        self._high, self._low = names.index("move_number_high"), names.index("move_number_low")
        self._repetitions = names.index("repetitions")
        self._flags = [names.index("promoted"), self._on_board, names.index("white_to_move")]
        # Taishin's runs of passes (0-3), where the variant limits them.
        self._flags += [names.index(n) for n in ("mover_passes", "opponent_passes") if n in names]
        self.plane_count = len(names)
        self.height, self.width = _board_shape(variant, tuple(options or ()))
        ids = len(_core.piece_types(variant)) + 1  # 0 is "no piece"
        self.mover_embedding = nn.Embedding(ids, channels)
        self.opponent_embedding = nn.Embedding(ids, channels)
        # promoted, on board, white to move (, the two pass runs), repetitions, move number.
        self.scalars = nn.Linear(len(self._flags) + 2, channels)
        self.trunk = nn.Sequential(*(_Block(channels) for _ in range(blocks)))
        self.policy_from = nn.Conv2d(channels, head_channels, 1)
        self.policy_to = nn.Conv2d(channels, head_channels, 1)
        self.policy_global = nn.Linear(channels, head_channels, bias=False)
        self.kind_embedding = nn.Embedding(NUM_MOVE_KINDS, head_channels)
        self.policy_out = nn.Linear(head_channels, 1)
        self.value_conv = nn.Conv2d(channels, head_channels, 1)
        self.value_hidden = nn.Linear(head_channels, head_channels)
        self.value_out = nn.Linear(head_channels, 1)

    def _crop(self, observations: Tensor) -> Tensor:
        """The variant's board of compact observations: (B, height, width, P)."""
        shape = tuple(observations.shape)
        if observations.dim() != 4 or shape[-1] != self.plane_count:
            raise ValueError(
                f"expected compact observations (B, 36, 36, {self.plane_count}), got {shape}: "
                "use observation='compact' / compact=True"
            )
        if shape[1:3] == (self.height, self.width):
            return observations
        if shape[1:3] != (_GRID, _GRID):
            raise ValueError(
                f"expected observations of the {_GRID} x {_GRID} grid or of the {self.config['variant']} board "
                f"({self.height} x {self.width}), got {shape}"
            )
        return observations[:, : self.height, : self.width]

    def features(self, observations: Tensor) -> Tensor:
        """Trunk features (B, channels, height, width) of compact observations, any integer dtype.

        ``observations``: (B, 36, 36, P) as the package hands them, or already cropped to the
        variant's board, (B, height, width, P). The features cover the board only (see the class
        doc): feature ``[:, :, row, column]`` is grid square ``row * 36 + column``.
        """
        return self._trunk(self._crop(observations))

    def _trunk(self, board: Tensor) -> Tensor:
        planes = board.long()
        x = self.mover_embedding(planes[..., self._mover]) + self.opponent_embedding(planes[..., self._opponent])
        flags = planes[..., self._flags].float()
        repetitions = planes[..., self._repetitions : self._repetitions + 1].float().clamp(max=3.0) / 3.0
        move_number = (planes[..., self._high] * 256 + planes[..., self._low]).float().unsqueeze(-1) / 1000.0
        x = x + self.scalars(torch.cat([flags, repetitions, move_number], dim=-1))
        return self.trunk(x.permute(0, 3, 1, 2).contiguous())

    def forward(self, observations: Tensor, actions: Tensor, offsets: Tensor) -> PolicyValueOutput:
        """Logits of the legal actions (flat, aligned with ``actions``) and values of the positions.

        ``observations``: compact, (B, 36, 36, P) or cropped (B, height, width, P).
        ``actions`` (N,) and ``offsets`` (B + 1,) are the legal actions in CSR form (mover's frame).
        """
        board = self._crop(observations)
        x = self._trunk(board)
        if offsets.numel() != x.shape[0] + 1:
            raise ValueError(f"offsets must have B + 1 = {x.shape[0] + 1} entries, got {offsets.numel()}")
        on_board = board[..., self._on_board].unsqueeze(1).to(x.dtype)
        mean = (x * on_board).sum((2, 3)) / on_board.sum((2, 3)).clamp_min(1.0)  # (B, channels)
        return PolicyValueOutput(self._policy(x, mean, actions, offsets), self._value(x, on_board))

    def _square(self, grid_square: Tensor) -> Tensor:
        """Grid squares (``row * 36 + column``) as squares of the cropped board (``row * width + column``)."""
        if self.width == _GRID:
            return grid_square
        return grid_square // _GRID * self.width + grid_square % _GRID

    def _policy(self, x: Tensor, mean: Tensor, actions: Tensor, offsets: Tensor) -> Tensor:
        batch, squares = x.shape[0], x.shape[2] * x.shape[3]
        parts = _decode(actions)
        rows = segment_ids(offsets, actions.numel())
        base = rows * squares

        def per_square(conv: nn.Conv2d) -> Tensor:  # (B * squares, head_channels), square-major per row
            return conv(x).flatten(2).transpose(1, 2).reshape(batch * squares, -1)

        # The board-wide mean (per row) lets every action see the whole position, beyond the
        # trunk's receptive field.
        hidden = (
            per_square(self.policy_from).index_select(0, base + self._square(parts.from_square))
            + per_square(self.policy_to).index_select(0, base + self._square(parts.to_square))
            + self.kind_embedding(move_kinds(actions, parts))
            + self.policy_global(mean).index_select(0, rows)
        )
        return self.policy_out(F.relu(hidden)).squeeze(-1)

    def _value(self, x: Tensor, on_board: Tensor) -> Tensor:
        v = F.relu(self.value_conv(x))
        v = (v * on_board).sum((2, 3)) / on_board.sum((2, 3)).clamp_min(1.0)
        return torch.tanh(self.value_out(F.relu(self.value_hidden(v)))).squeeze(-1)

    def evaluator(self, device: Union[str, torch.device, None] = None) -> NetworkEvaluator:
        """This network as ``evaluator=`` for ``taikyoku.selfplay(players="mcts")`` (see :class:`NetworkEvaluator`)."""
        return NetworkEvaluator(self, device)


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


_LOCKS: weakref.WeakKeyDictionary[nn.Module, threading.Lock] = weakref.WeakKeyDictionary()
_LOCKS_LOCK = threading.Lock()


def _lock_of(net: nn.Module) -> threading.Lock:
    """The lock that evaluators of ``net`` take turns with (one per network, however many evaluators)."""
    with _LOCKS_LOCK:
        lock = _LOCKS.get(net)
        if lock is None:
            lock = _LOCKS[net] = threading.Lock()
        return lock


class NetworkEvaluator:
    """Adapts a :class:`PolicyValueNet` to ``taikyoku.selfplay``'s evaluator protocol.

    ``taikyoku.selfplay(out, players="mcts", evaluator=net.evaluator(device), ...)`` calls it with
    one batch of MCTS leaves at a time:

    - ``observations``: (B, 36, 36, 8) uint16 compact planes, mover's frame (the default
      ``observation="compact"``). **The array is a view of a buffer the run reuses for its next
      batches**: it is read during the call (copied to the device) and never kept.
    - ``legal``: the leaves' legal actions, ``(actions, offsets)`` int64 (``legal_actions="csr"``,
      the default; reused buffers too) or a list of B arrays (``legal_actions="list"``).

    It returns ``(priors, values)``: float32 numpy arrays, the softmax of the network's logits over
    each leaf's legal actions (flat, aligned with ``actions``) and B values in [-1, 1] for each
    leaf's side to move. The network runs in eval mode under ``torch.inference_mode()``; its mode is
    restored afterwards, so the evaluator can serve self-play between training steps and always
    sees the current weights. Calls from several threads at once (an arena's games) take turns on
    the network: switching its mode is not thread-safe, and batch norm in training mode would
    make the answer depend on who else is evaluating. ``device``: where the network runs; given,
    the network is moved there (``net.to(device)``), else it runs where its parameters are.
    """

    #: The network (moved to ``device`` when one was given).
    net: PolicyValueNet
    #: Where the network runs.
    device: torch.device

    def __init__(self, net: PolicyValueNet, device: Union[str, torch.device, None] = None) -> None:
        self.net = net if device is None else net.to(device)
        self.device = next(self.net.parameters()).device

    def __call__(self, observations: np.ndarray, legal: Any) -> Tuple[np.ndarray, np.ndarray]:
        if isinstance(legal, tuple) and len(legal) == 2 and isinstance(legal[0], np.ndarray):
            actions, offsets = legal
        else:  # legal_actions="list"
            lengths = np.fromiter((len(a) for a in legal), dtype=np.int64, count=len(legal))
            offsets = np.zeros(len(legal) + 1, dtype=np.int64)
            np.cumsum(lengths, out=offsets[1:])
            actions = np.concatenate(legal).astype(np.int64) if len(legal) else np.zeros(0, np.int64)
        # Copies: the run's buffers are rewritten once this call returns.
        obs = torch.from_numpy(np.asarray(observations, dtype=np.int32)).to(self.device)
        acts = torch.from_numpy(np.array(actions, dtype=np.int64)).to(self.device)
        offs = torch.from_numpy(np.array(offsets, dtype=np.int64)).to(self.device)
        with _lock_of(self.net):
            training = self.net.training
            self.net.eval()
            try:
                with torch.inference_mode():
                    out = self.net(obs, acts, offs)
                    priors = segment_softmax(out.logits.float(), offs)
            finally:
                self.net.train(training)
        return priors.cpu().numpy(), out.values.float().cpu().numpy()

    def __repr__(self) -> str:
        return f"NetworkEvaluator({type(self.net).__name__}, device={self.device})"


# -- saving and loading -----------------------------------------------------------------------------

#: The version of the files :func:`save` writes (the ``"format"`` key). Files without it (written
#: by ``examples/closed_loop.py`` before it existed) read as version 0, the same layout.
SAVE_FORMAT = 1
_CONFIG_KEYS = ("channels", "blocks", "head_channels", "variant", "options")

PathLike = Union[str, "os.PathLike[str]"]


def save(net: PolicyValueNet, path: PathLike, half: bool = False) -> None:
    """Writes ``net`` to ``path`` as ``{"format": 1, "config": net.config, "state_dict": ...}``.

    The config rebuilds the network (:func:`load` does, for any variant); the weights are saved
    from the CPU, so the file loads on a machine without the GPU it trained on. The file is written
    next to ``path`` first and then renamed over it, so an interrupted save never leaves half a network.
    ``half``: floating-point tensors stored in float16 (half the size; :func:`load` gives them back
    as the network's float32), as the shipped weights are.
    """
    if not isinstance(net, PolicyValueNet):
        raise TypeError(f"save() writes a PolicyValueNet, not {type(net).__name__}")
    target = Path(path)
    state = {name: tensor.detach().cpu() for name, tensor in net.state_dict().items()}
    if half:
        state = {name: t.half() if t.is_floating_point() else t for name, t in state.items()}
    partial = target.with_name(target.name + ".partial")
    torch.save({"format": SAVE_FORMAT, "config": dict(net.config), "state_dict": state}, partial)
    os.replace(partial, target)


def load(
    path: PathLike, variant: Optional[str] = None, map_location: Union[str, torch.device] = "cpu"
) -> PolicyValueNet:
    """The :class:`PolicyValueNet` saved in ``path`` (by :func:`save`, or any ``{"config",
    "state_dict"}`` dict), in eval mode, on ``map_location``.

    Reads with ``torch.load(weights_only=True)``: a file can hold tensors and plain values only,
    never code. ``variant``: the variant the caller will play; a network of another variant is
    refused, naming both. Raises ``OSError`` when the file is missing or unreadable and
    ``taikyoku.TaikyokuError`` when it is not a taikyoku network, was written by a newer taikyoku,
    or holds weights that do not fit its own config.
    """
    source = Path(path)
    if not source.exists():
        raise FileNotFoundError(errno.ENOENT, f"no network file at {source}", str(source))
    if source.is_dir():
        raise _core.TaikyokuError(f"{source} is a directory, not a network file (taikyoku.nn.save writes one)")
    try:
        saved = torch.load(source, map_location=map_location, weights_only=True)
    except OSError:
        raise
    except Exception as e:  # torch reports a foreign file with many exception types
        raise _core.TaikyokuError(
            f"{source} is not a taikyoku network file (torch.load(weights_only=True) refused it: {type(e).__name__}: {e})"
        ) from e
    if not isinstance(saved, dict) or "config" not in saved or "state_dict" not in saved:
        found = f"a dict with keys {sorted(map(str, saved))[:8]}" if isinstance(saved, dict) else type(saved).__name__
        raise _core.TaikyokuError(
            f"{source} holds no taikyoku network: expected a dict with 'config' and 'state_dict' (taikyoku.nn.save "
            f"writes one), found {found}"
        )
    version = saved.get("format", 0)
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise _core.TaikyokuError(f"{source}: its format {version!r} is not a version number")
    if version > SAVE_FORMAT:
        raise _core.TaikyokuError(
            f"{source} has format {version}, this taikyoku reads up to {SAVE_FORMAT}: load it with a newer taikyoku"
        )
    config, state = saved["config"], saved["state_dict"]
    if not isinstance(config, dict) or not isinstance(state, dict):
        raise _core.TaikyokuError(f"{source}: 'config' and 'state_dict' must be dicts")
    unknown = sorted(str(k) for k in config if k not in _CONFIG_KEYS)
    if unknown:
        raise _core.TaikyokuError(
            f"{source}: config has keys PolicyValueNet does not take ({', '.join(unknown)}; it takes {', '.join(_CONFIG_KEYS)})"
        )
    own = config.get("variant", "taikyoku")
    if variant is not None and own != variant:
        raise _core.TaikyokuError(f"{source} holds a network for {own}, not for {variant}")
    try:
        net = PolicyValueNet(**config)
    except (TypeError, ValueError) as e:  # TaikyokuError (an unknown variant) is a ValueError
        raise _core.TaikyokuError(f"{source}: its config {config} does not build a PolicyValueNet: {e}") from e
    try:
        net.load_state_dict(state)
    except RuntimeError as e:
        first = str(e).strip().splitlines()
        raise _core.TaikyokuError(
            f"{source}: its state_dict does not fit its config {config}: {' '.join(line.strip() for line in first[:4])}"
        ) from e
    if isinstance(map_location, (str, torch.device)):
        net = net.to(map_location)
    return net.eval()


def _weights_dir() -> Any:
    """The package's ``weights`` directory (an ``importlib.resources`` Traversable)."""
    return importlib.resources.files("taikyoku") / "weights"


def pretrained_variants() -> List[str]:
    """The variants that :func:`pretrained` has weights for (``taikyoku/weights/<variant>.pt``)."""
    directory = _weights_dir()
    if not directory.is_dir():
        return []
    known = set(_core.variants())
    names = (
        entry.name[: -len(".pt")] for entry in directory.iterdir() if entry.name.endswith(".pt") and entry.is_file()
    )
    return sorted(name for name in names if name in known)


def pretrained(variant: str = "tenjiku", map_location: Union[str, torch.device] = "cpu") -> PolicyValueNet:
    """The network shipped with the package for ``variant`` (``taikyoku/weights/<variant>.pt``), in eval mode.

    Raises ``taikyoku.TaikyokuError`` for an unknown variant, or one without shipped weights
    (naming those that have some: :func:`pretrained_variants`).
    """
    known = _core.variants()
    if variant not in known:
        raise _core.TaikyokuError(f"unknown variant {variant!r} (variants: {', '.join(known)})")
    available = pretrained_variants()
    if variant not in available:
        have = ", ".join(available) if available else "none yet"
        raise _core.TaikyokuError(
            f"no pretrained network for {variant} ships with this taikyoku (variants with weights: {have}); "
            "train one (examples/train_from_dataset.py --save FILE.pt) and read it with taikyoku.nn.load"
        )
    with importlib.resources.as_file(_weights_dir() / f"{variant}.pt") as file:
        return load(file, variant=variant, map_location=map_location)


# -- reinforcement learning -------------------------------------------------------------------------

Rows = TypeVar("Rows", Tensor, np.ndarray)


def gather_rows(values: Rows, offsets: Rows, rows: Union[Rows, Sequence[int]]) -> Tuple[Rows, Rows]:
    """Rows ``rows`` of a CSR array: ``(values, offsets)`` of the picked rows, in that order.

    ``values`` is any flat array aligned with the CSR entries (legal actions, logits, targets);
    ``rows`` may repeat and be in any order. Vectorised (no loop over rows). Torch tensors in give
    tensors out (on their device), numpy arrays give numpy arrays; offsets are int64.

    >>> import numpy as np, taikyoku.nn as tnn
    >>> tnn.gather_rows(np.array([5, 6, 7, 8]), np.array([0, 1, 1, 4]), [2, 0])
    (array([6, 7, 8, 5]), array([0, 3, 4]))
    """
    if isinstance(values, Tensor):
        offs = (
            offsets.to(device=values.device, dtype=torch.long)
            if isinstance(offsets, Tensor)
            else _as_long(offsets, values.device)
        )
        picked = _as_long(rows, values.device)
        count = offs.numel() - 1
        if picked.numel() and (int(picked.min()) < -count or int(picked.max()) >= count):
            raise IndexError(f"rows must lie in [0, {count}), got values in [{int(picked.min())}, {int(picked.max())}]")
        picked = torch.where(picked < 0, picked + count, picked)
        starts = offs[picked]
        counts = offs[picked + 1] - starts
        out = torch.zeros(picked.numel() + 1, dtype=torch.long, device=values.device)
        torch.cumsum(counts, 0, out=out[1:])
        total = int(out[-1])
        shift = torch.repeat_interleave(out[:-1] - starts, counts, output_size=total)
        return values[torch.arange(total, device=values.device) - shift], out
    array = np.asarray(values)
    offs_np = np.asarray(offsets, dtype=np.int64)
    picked_np = np.asarray(rows, dtype=np.int64).reshape(-1)
    count = len(offs_np) - 1
    if picked_np.size and (picked_np.min() < -count or picked_np.max() >= count):
        raise IndexError(f"rows must lie in [0, {count}), got values in [{picked_np.min()}, {picked_np.max()}]")
    picked_np = np.where(picked_np < 0, picked_np + count, picked_np)
    starts_np = offs_np[picked_np]
    counts_np = offs_np[picked_np + 1] - starts_np
    out_np = np.zeros(len(picked_np) + 1, dtype=np.int64)
    np.cumsum(counts_np, out=out_np[1:])
    gather = np.arange(out_np[-1], dtype=np.int64) - np.repeat(out_np[:-1] - starts_np, counts_np)
    return array[gather], out_np


def segment_entropy(logits: Tensor, offsets: Tensor, ids: Optional[Tensor] = None) -> Tensor:
    """Entropy of each row's ``softmax(logits)`` (nats), shape (B,); 0 for an empty row (differentiable).

    An entropy bonus for policy-gradient training; ``-inf`` logits (masked actions) count 0
    without making the gradient NaN.
    """
    rows, ids = _rows(logits, offsets, ids)
    log_p = segment_log_softmax(logits, offsets, ids)
    # p * log p with log p clamped: 0 * finite where p underflows or a logit is -inf.
    terms = torch.exp(log_p) * log_p.clamp_min(torch.finfo(log_p.dtype).min)
    return -logits.new_zeros(rows).index_add(0, ids, terms)


class RolloutMinibatch(NamedTuple):
    """One shuffled minibatch of a :class:`CsrRolloutBuffer` (tensors on the requested device)."""

    #: (M, H, W, P) int32 observations, as stored (compact; cropped when the buffer crops).
    observations: Tensor
    #: (L,) int64 legal actions of the M rows, CSR with ``offsets`` (M + 1,).
    actions: Tensor
    offsets: Tensor
    #: (M,) int64 flat index into ``actions`` of the action each row took.
    index: Tensor
    #: (M,) float32: the action's log-probability when it was taken, the value then, and the
    #: advantage and return computed by :meth:`CsrRolloutBuffer.compute_returns`.
    log_probs: Tensor
    values: Tensor
    advantages: Tensor
    returns: Tensor
    #: (M,) int64 rows of the buffer (``step * num_envs + env``) the minibatch holds.
    rows: Tensor


class CsrRolloutBuffer:
    """On-policy rollouts of a ``taikyoku.VectorEnv`` with legal actions in CSR form, for PPO-style training.

    Per step it keeps every env's observation (compact planes, as given; ``crop=(height, width)``
    keeps only the board's corner, which :class:`PolicyValueNet` takes as it is: a fifth of the
    memory for Tenjiku), its legal actions (``vec.legal_actions_flat()``), the action taken (a
    flat index into them, as :func:`segment_sample` returns), its log-probability, the value
    estimate, the reward and whether the game ended. :meth:`compute_returns` then fills GAE
    advantages and returns, and :meth:`minibatches` yields shuffled minibatches whose legal
    actions are gathered with :func:`gather_rows`.

    ``alternating=True`` (self-play: ``VectorEnv(opponent=None)``, where each reward is the
    mover's and the next position is the opponent's to move) bootstraps with the *negated* value
    of the next position (negamax); ``alternating=False`` when the agent moves in every step
    (``VectorEnv(opponent=...)``). ``done`` ends the bootstrap (terminated or truncated: a
    truncated game's continuation is valued 0, like a draw; with ``VectorEnv``'s same-step reset
    the next observation already belongs to a new game).

    :class:`PolicyValueNet` has batch norm: score rollouts and minibatches alike in eval mode (or
    with frozen statistics), else the probability ratios of a PPO step depend on the minibatch.
    """

    #: Steps per rollout and envs per step: rows are ``step * num_envs + env``.
    num_steps: int
    num_envs: int
    #: GAE's discount and lambda.
    gamma: float
    gae_lambda: float
    #: Whether the next position is the opponent's (its value negated): self-play.
    alternating: bool
    #: ``(height, width)`` of the grid corner kept of each observation, or None for all of it.
    crop: Optional[Tuple[int, int]]
    #: (num_steps, num_envs, H, W, P) stored observations (allocated by the first ``add``).
    observations: Optional[np.ndarray]
    #: (num_steps, num_envs): index of the action taken within its row of legal actions.
    choices: npt.NDArray[np.int64]
    #: (num_steps, num_envs) per-step records, and the advantages and returns of ``compute_returns``.
    log_probs: npt.NDArray[np.float32]
    values: npt.NDArray[np.float32]
    rewards: npt.NDArray[np.float32]
    dones: npt.NDArray[np.bool_]
    advantages: npt.NDArray[np.float32]
    returns: npt.NDArray[np.float32]
    #: Steps stored so far.
    step: int

    def __init__(
        self,
        num_steps: int,
        num_envs: int,
        gamma: float = 1.0,
        gae_lambda: float = 0.95,
        *,
        alternating: bool = True,
        crop: Optional[Tuple[int, int]] = None,
    ) -> None:
        if num_steps < 1 or num_envs < 1:
            raise ValueError("num_steps and num_envs must be positive")
        if not 0.0 <= gamma <= 1.0 or not 0.0 <= gae_lambda <= 1.0:
            raise ValueError("gamma and gae_lambda must lie in [0, 1]")
        self.num_steps, self.num_envs = int(num_steps), int(num_envs)
        self.gamma, self.gae_lambda = float(gamma), float(gae_lambda)
        self.alternating = bool(alternating)
        self.crop = None if crop is None else (int(crop[0]), int(crop[1]))
        self.observations: Optional[np.ndarray] = None
        shape = (self.num_steps, self.num_envs)
        self.choices = np.zeros(shape, dtype=np.int64)  # index within each row's legal actions
        self.log_probs = np.zeros(shape, dtype=np.float32)
        self.values = np.zeros(shape, dtype=np.float32)
        self.rewards = np.zeros(shape, dtype=np.float32)
        self.dones = np.zeros(shape, dtype=np.bool_)
        self.advantages = np.zeros(shape, dtype=np.float32)
        self.returns = np.zeros(shape, dtype=np.float32)
        self.reset()

    def reset(self) -> None:
        """Empties the buffer (the observation array is kept for reuse)."""
        self.step = 0
        self._legal: List[np.ndarray] = []
        self._counts: List[np.ndarray] = []
        self._csr: Optional[Tuple[np.ndarray, np.ndarray]] = None
        self._ready = False

    def __len__(self) -> int:
        """Rows stored: steps so far times envs."""
        return self.step * self.num_envs

    @property
    def full(self) -> bool:
        return self.step == self.num_steps

    def add(
        self,
        observations: Any,
        legal: Tuple[Any, Any],
        choice: Any,
        log_prob: Any,
        value: Any,
        reward: Any,
        done: Any,
    ) -> None:
        """Stores one step of every env.

        ``observations``: (num_envs, 36, 36, P) compact planes (or already cropped);
        ``legal``: ``(actions, offsets)``, the envs' legal actions in CSR form
        (``vec.legal_actions_flat()`` before the step); ``choice``: (num_envs,) flat indices into
        ``actions`` of the actions played (:func:`segment_sample`); ``log_prob``, ``value``: the
        policy's log-probability of them and the value of each observation (mover's view);
        ``reward``, ``done``: what ``step()`` returned (``done = terminated | truncated``).
        Numpy arrays or tensors (copied to the CPU).
        """
        if self.step >= self.num_steps:
            raise _core.TaikyokuError(
                f"the buffer is full ({self.num_steps} steps): compute_returns, train, then reset()"
            )
        n = self.num_envs
        obs = _numpy(observations)
        if obs.ndim != 4 or obs.shape[0] != n:
            raise ValueError(f"observations must be (num_envs={n}, rows, columns, planes), got {obs.shape}")
        if self.crop is not None:
            obs = obs[:, : self.crop[0], : self.crop[1]]
        actions = _numpy(legal[0]).astype(np.int64, copy=False).reshape(-1)
        offsets = _numpy(legal[1]).astype(np.int64, copy=False).reshape(-1)
        if offsets.shape != (n + 1,) or offsets[0] != 0 or offsets[-1] != actions.size:
            raise ValueError(f"legal offsets must have num_envs + 1 = {n + 1} entries from 0 to len(actions)")
        flat = _numpy(choice).astype(np.int64, copy=False).reshape(-1)
        if flat.shape != (n,) or (flat < offsets[:-1]).any() or (flat >= offsets[1:]).any():
            raise ValueError("choice must hold one flat index per env, inside that env's row of legal actions")
        scalars = {}
        for name, array in (("log_prob", log_prob), ("value", value), ("reward", reward), ("done", done)):
            scalars[name] = _numpy(array).reshape(-1)
            if scalars[name].shape != (n,):
                raise ValueError(f"{name} must hold num_envs = {n} values, got shape {scalars[name].shape}")
        fits = self.observations is not None and self.observations.shape[2:] == obs.shape[1:]
        if not fits or self.observations.dtype != obs.dtype:  # type: ignore[union-attr]
            if self.step:
                raise ValueError(f"observations changed shape or dtype within a rollout: {obs.shape} {obs.dtype}")
            self.observations = np.zeros((self.num_steps,) + obs.shape, dtype=obs.dtype)
        t = self.step
        self.observations[t] = obs  # type: ignore[index]
        self._legal.append(actions.copy())
        self._counts.append(np.diff(offsets))
        self.choices[t] = flat - offsets[:-1]
        self.log_probs[t], self.values[t] = scalars["log_prob"], scalars["value"]
        self.rewards[t], self.dones[t] = scalars["reward"], scalars["done"]
        self.step += 1
        self._csr, self._ready = None, False

    def compute_returns(self, last_value: Any) -> None:
        """GAE(``gamma``, ``gae_lambda``) advantages and returns (``advantage + value``) of the stored steps.

        ``last_value``: (num_envs,) values of the observations after the last stored step (each
        env's current position, for its side to move).
        """
        if self.step == 0:
            raise _core.TaikyokuError("the buffer is empty: add() steps first")
        following = _numpy(last_value).astype(np.float32, copy=False).reshape(-1)
        if following.shape != (self.num_envs,):
            raise ValueError(f"last_value must hold num_envs = {self.num_envs} values")
        sign = -1.0 if self.alternating else 1.0
        running = np.zeros(self.num_envs, dtype=np.float32)
        for t in reversed(range(self.step)):  # a loop over steps, vectorised over the envs
            going_on = 1.0 - self.dones[t].astype(np.float32)
            following_value = following if t == self.step - 1 else self.values[t + 1]
            delta = self.rewards[t] + sign * self.gamma * going_on * following_value - self.values[t]
            running = delta + sign * self.gamma * self.gae_lambda * going_on * running
            self.advantages[t] = running
        self.returns[: self.step] = self.advantages[: self.step] + self.values[: self.step]
        self._ready = True

    def legal_csr(self) -> Tuple[np.ndarray, np.ndarray]:
        """Every stored row's legal actions, CSR over rows ``step * num_envs + env``."""
        if self._csr is None:
            counts = np.concatenate(self._counts) if self._counts else np.zeros(0, np.int64)
            offsets = np.zeros(counts.size + 1, dtype=np.int64)
            np.cumsum(counts, out=offsets[1:])
            self._csr = (np.concatenate(self._legal) if self._legal else np.zeros(0, np.int64), offsets)
        return self._csr

    def minibatches(
        self,
        batch_size: int,
        seed: Union[int, np.random.Generator, None] = None,
        device: Union[str, torch.device, None] = None,
        drop_last: bool = False,
    ) -> Iterator[RolloutMinibatch]:
        """One pass over the stored rows in a random order (``seed``: an int or a numpy Generator),
        ``batch_size`` rows at a time, as :class:`RolloutMinibatch` on ``device``.

        Call :meth:`compute_returns` first. Advantages are as computed: normalise them per
        minibatch in the loss if you wish.
        """
        if not self._ready:
            raise _core.TaikyokuError("compute_returns(last_value) must run before minibatches()")
        if batch_size < 1:
            raise ValueError("batch_size must be positive")
        assert self.observations is not None
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        total = len(self)
        order = rng.permutation(total)
        actions, offsets = self.legal_csr()
        observations = self.observations[: self.step].reshape((total,) + self.observations.shape[2:])
        flat = {
            name: getattr(self, name)[: self.step].reshape(-1)
            for name in ("choices", "log_probs", "values", "advantages", "returns")
        }
        target = torch.device(device) if device is not None else torch.device("cpu")
        for start in range(0, total, batch_size):
            rows = order[start : start + batch_size]
            if drop_last and len(rows) < batch_size:
                break
            picked, picked_offsets = gather_rows(actions, offsets, rows)
            index = picked_offsets[:-1] + flat["choices"][rows]
            tensor = lambda a: torch.from_numpy(np.ascontiguousarray(a)).to(target)  # noqa: E731
            yield RolloutMinibatch(
                observations=tensor(observations[rows].astype(np.int32)),
                actions=tensor(picked),
                offsets=tensor(picked_offsets),
                index=tensor(index),
                log_probs=tensor(flat["log_probs"][rows]),
                values=tensor(flat["values"][rows]),
                advantages=tensor(flat["advantages"][rows]),
                returns=tensor(flat["returns"][rows]),
                rows=tensor(rows.astype(np.int64)),
            )


def _numpy(values: Any) -> np.ndarray:
    """A tensor or array-like as a numpy array (tensors detached and copied to the CPU)."""
    if isinstance(values, Tensor):
        return values.detach().cpu().numpy()
    return np.asarray(values)


def heuristic_values(source: Any, color: Optional[str] = None) -> np.ndarray:
    """``taikyoku.heuristic_value`` of many positions: float32 (N,), in [-1, 1], each for its side to move
    (or for ``color``).

    ``source``: a ``taikyoku.VectorEnv`` (every env: :meth:`taikyoku.VectorEnv.heuristic_values`)
    or a sequence of ``taikyoku.Game``. A baseline, or a reward-shaping term, next to a network's values.
    """
    if hasattr(source, "heuristic_values"):
        return np.asarray(source.heuristic_values(color), dtype=np.float32)
    games = list(source)
    out = np.empty(len(games), dtype=np.float32)
    for i, game in enumerate(games):
        out[i] = _core.heuristic_value(game, color)
    return out
