"""Actions as tensors: decoded into squares, templates and promotion, encoded back, and their move kinds
(the action layout: docs/ACTIONS.md)."""

from __future__ import annotations

from functools import cache
from typing import NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np
import torch
from torch import Tensor

from taikyoku import _core

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
