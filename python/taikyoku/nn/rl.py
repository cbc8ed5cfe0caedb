"""Reinforcement learning on ``taikyoku.VectorEnv``: CSR rows gathered, the policy's entropy,
:class:`CsrRolloutBuffer` (GAE, shuffled minibatches) and the engine's evaluator as a baseline."""

from __future__ import annotations

from typing import Any, Iterator, List, NamedTuple, Optional, Sequence, Tuple, TypeVar, Union

import numpy as np
import numpy.typing as npt
import torch
from torch import Tensor

from taikyoku import _core
from taikyoku.nn.actions import _as_long
from taikyoku.nn.segments import _rows, segment_log_softmax

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
