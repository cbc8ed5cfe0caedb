"""Search one position: ``taikyoku.mcts_action`` and ``taikyoku.mcts_search``.

The same Monte Carlo tree search as :func:`taikyoku.selfplay` (the Rust search of
``taikyoku-search``), run on one position: with the rules-derived heuristic evaluator, or guided
by a network (any callable of the self-play :data:`~taikyoku.selfplay.Evaluator` protocol, such
as ``taikyoku.nn.PolicyValueNet.evaluator()``), whose leaves are batched ``leaves`` per call. The
root is PUCT or Gumbel (Danihelka et al., ICLR 2022: Gumbel-top-k sampling of
``gumbel_considered`` moves, sequential halving over the simulations), which improves on the
network's policy with budgets as small as 8-16 simulations. No Dirichlet noise, no temperature:
the search plays for strength; a Gumbel root's noise is seeded (``gumbel_scale=0`` removes it).

>>> import taikyoku
>>> g = taikyoku.Game(variant="tenjiku")
>>> action = taikyoku.mcts_action(g, simulations=16, seed=0)
>>> g.move_of(action) in g.legal_moves()
True
>>> result = taikyoku.mcts_search(g, simulations=16, root="gumbel")
>>> int(result.visit_counts.sum()), round(float(result.policy.sum()), 3)
(16, 1.0)
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple, Optional

import numpy as np
import numpy.typing as npt

from taikyoku import _core, _validate
from taikyoku._validate import U32_MAX, U64_MAX

__all__ = ["mcts_action", "mcts_search", "SearchResult", "Root"]

#: How the root spreads its simulations.
Root = Literal["puct", "gumbel"]


class SearchResult(NamedTuple):
    """What :func:`mcts_search` found (actions in the mover's frame, sorted)."""

    #: The move chosen, as an action (``game.move_of(action)``).
    action: int
    #: The root's visited moves and their visit counts.
    visit_actions: npt.NDArray[np.int64]
    visit_counts: npt.NDArray[np.int64]
    #: A Gumbel root's improved policy over every legal move (softmax of the prior logits plus the
    #: transformed completed Q-values), by action; empty for a PUCT root.
    policy_actions: npt.NDArray[np.int64]
    policy: npt.NDArray[np.float32]
    #: The root's mean value for the side to move, in [-1, 1].
    value: float
    #: Simulations run.
    simulations: int


def mcts_search(
    game: _core.Game,
    simulations: int = 64,
    seed: int = 0,
    evaluator: Optional[Any] = None,
    root: Root = "puct",
    *,
    leaves: int = 8,
    observation: Literal["compact", "onehot"] = "compact",
    legal_actions: Literal["csr", "list"] = "csr",
    c_puct: Optional[float] = None,
    priors: Optional[Literal["captures", "uniform"]] = None,
    gumbel_considered: Optional[int] = None,
    gumbel_scale: Optional[float] = None,
    opponent_moves: Optional[Literal["parent", "leaf"]] = None,
) -> SearchResult:
    """Searches ``game`` (left unchanged) and returns the move chosen with the root's statistics.

    Args:
        game: a game that is not over.
        simulations: simulations (leaf evaluations) of the search, at least 1.
        seed: seeds the search (a Gumbel root's noise): the same seed, the same move.
        evaluator: ``None`` for the heuristic evaluator (material and mobility derived from the
            rules), or a network: ``evaluator(observations, legal) -> (priors, values)``, as
            :func:`taikyoku.selfplay` calls it (``help(taikyoku.selfplay)``), with up to
            ``leaves`` leaves per call, in the mover's frame. Called on this thread; its
            exceptions (and Ctrl-C) propagate.
        root: ``"puct"`` or ``"gumbel"``.
        leaves: leaves per evaluator call (spread by virtual loss; a Gumbel root also waits, at
            each round of its sequential halving, for the values that round reads).
        observation, legal_actions: what the evaluator gets, as in :func:`taikyoku.selfplay`.
        c_puct: PUCT's exploration constant (1.5); ``priors``: the heuristic's priors,
            ``"captures"`` (default) or ``"uniform"``.
        gumbel_considered: moves a Gumbel root samples (16); ``gumbel_scale``: its noise (1.0).
        opponent_moves: where the heuristic counts the opponent's moves for a leaf's mobility:
            ``"parent"`` (default: at the parent node, one move generation per leaf) or
            ``"leaf"`` (a second generation, as before; slower, equally strong).

    Raises:
        taikyoku.IllegalMoveError: the game is over. taikyoku.TaikyokuError: a bad argument,
        or an evaluator answer that does not fit the batch. The evaluator's own exceptions.
    """
    if not isinstance(game, _core.Game):
        raise TypeError(f"game must be a taikyoku.Game, not {_validate.show(game)}")
    if evaluator is not None and not callable(evaluator):
        raise _core.TaikyokuError(
            "evaluator must be callable: evaluator(observations, legal_actions) -> (priors, values)"
        )
    root = _validate.choice("root", root, ("puct", "gumbel"))
    if root == "puct" and (gumbel_considered is not None or gumbel_scale is not None):
        raise _core.TaikyokuError("gumbel_considered and gumbel_scale apply to root='gumbel'")
    found = _core.mcts_search(
        game,
        simulations=_validate.integer("simulations", simulations, 1, U32_MAX),
        seed=_validate.integer("seed", seed, 0, U64_MAX),
        evaluator=evaluator,
        root=root,
        leaves=_validate.integer("leaves", leaves, 1, 4096),
        observation=_validate.choice("observation", observation, ("compact", "onehot")),
        legal_actions=_validate.choice("legal_actions", legal_actions, ("csr", "list")),
        c_puct=None if c_puct is None else _validate.real("c_puct", c_puct, 0.0, 1e6, low_open=True),
        priors=None if priors is None else _validate.choice("priors", priors, ("captures", "uniform")),
        gumbel_considered=_validate.optional_integer("gumbel_considered", gumbel_considered, 1, 1 << 20),
        gumbel_scale=None if gumbel_scale is None else _validate.real("gumbel_scale", gumbel_scale, 0.0, 1e6),
        opponent_moves=None
        if opponent_moves is None
        else _validate.choice("opponent_moves", opponent_moves, ("parent", "leaf")),
    )
    return SearchResult(**found)


def mcts_action(
    game: _core.Game,
    simulations: int = 64,
    seed: int = 0,
    evaluator: Optional[Any] = None,
    root: Root = "puct",
    **settings: Any,
) -> int:
    """The move MCTS plays in ``game`` (left unchanged), as an action in the mover's frame:
    ``mcts_search(...).action`` (see :func:`mcts_search` for the arguments).

    ``taikyoku.mcts_action(game, 16, evaluator=net.evaluator(), root="gumbel")`` answers "what
    does my network play here with 16 simulations"; ``game.play(action)`` plays it.
    """
    return mcts_search(game, simulations, seed, evaluator, root, **settings).action
