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

try:
    import torch  # noqa: F401  (the check: each module below imports it)
except ImportError as _error:  # pragma: no cover - exercised only where torch is absent
    raise ImportError('taikyoku.nn needs PyTorch: pip install "taikyoku[torch]" (or pip install torch)') from _error

# Every name where it was before the module became a package (its modules: one concept each).
from taikyoku.nn.actions import NUM_MOVE_KINDS, ActionParts, decode_actions, encode_actions, move_kinds
from taikyoku.nn.actions import ArrayLike as ArrayLike
from taikyoku.nn.files import SAVE_FORMAT, load, pretrained, pretrained_variants, save
from taikyoku.nn.files import PathLike as PathLike
from taikyoku.nn.network import NetworkEvaluator, PolicyValueNet, PolicyValueOutput
from taikyoku.nn.rl import CsrRolloutBuffer, RolloutMinibatch, gather_rows, heuristic_values, segment_entropy
from taikyoku.nn.rl import Rows as Rows
from taikyoku.nn.segments import (
    policy_loss,
    segment_argmax,
    segment_ids,
    segment_log_prob,
    segment_log_softmax,
    segment_logsumexp,
    segment_max,
    segment_sample,
    segment_softmax,
)
from taikyoku.nn.training import (
    LegalActionIndex,
    TrainingBatch,
    locate,
    played_targets,
    policy_value_loss,
    training_batch,
    training_batches,
    value_loss,
    visit_targets,
)
from taikyoku.nn.training import Truncated as Truncated

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
