"""The reference network: :class:`PolicyValueNet` (on the variant's own board, a sparse policy head) and
:class:`NetworkEvaluator`, the network as ``taikyoku.selfplay``'s evaluator."""

from __future__ import annotations

import threading
import weakref
from functools import cache
from typing import Any, Dict, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

import taikyoku
from taikyoku import _core
from taikyoku.nn.actions import _GRID, NUM_MOVE_KINDS, _decode, move_kinds
from taikyoku.nn.segments import segment_ids, segment_softmax


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


# selfplay records an evaluator by its module and name (a dataset's settings.network.name): the
# package's, where users find it.
NetworkEvaluator.__module__ = "taikyoku.nn"
