"""Segment operations: per-row reductions, softmax, sampling and the policy loss over CSR rows of
flat values (each row a position's legal actions), vectorised, without a loop over rows."""

from __future__ import annotations

from typing import Optional, Tuple

import torch
from torch import Tensor


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
