"""Matches between players, Elo ratings: ``taikyoku.arena`` and the ``taikyoku match`` command.

>>> from taikyoku.arena import MctsPlayer, RandomPlayer, match
>>> result = match(MctsPlayer(16), RandomPlayer(), games=4, variant="tenjiku", openings=4, threads=1)
>>> result.wins + result.draws + result.losses
4

**Players** are callables ``player(game) -> move``: the move is a :class:`taikyoku.Move`, an
action ``int`` (mover's frame, one of ``game.legal_actions()``; numpy integers too) or a notation
``str``. The arena hands each call a **clone** of the game (``game.clone()``): the player may look
at it and search on it, but must hand it back unchanged; the arena checks ``game.hash`` and
``game.ply`` of the clone after the call, and a player that left it changed (played a move and did
not undo it) stops the match with :class:`PlayerError`, as a player that raises or returns an
illegal move does. Built in: :class:`RandomPlayer`, :class:`MctsPlayer` (``taikyoku.mcts_action``:
heuristic or network evaluator, PUCT or Gumbel root), :class:`PolicyPlayer` (a
``taikyoku.nn.PolicyValueNet`` without search), and :func:`player_from_spec` (the command line's
``random``, ``mcts:64``, ``gumbel:16:FILE.pt``, ``policy:FILE.pt``, ``pretrained``...).

**Determinism.** A match gives the same games whatever ``threads`` is. So a seeded player keeps
no random state across calls (the games of a match run in any order, on several threads): each
move's randomness is a pure function of the player's seed, the game being played and the position,
:func:`move_seed` ``(seed, game)`` = a SplitMix64 mix of ``seed``, :func:`current_game_seed` (a
per-game number the match derives from its ``seed`` and the game's index, set for the thread that
plays the game; 0 outside a match), ``game.hash`` and ``game.ply``. User players should do the same
(or be deterministic). Without the per-game number, deterministic players would replay the same
two games in every pair when ``openings=0``; note that heuristic MCTS picks its most visited move
and is nearly deterministic whatever its seed, so **use ``openings`` > 0** to get different games.

**A match** (:func:`match`, also :func:`play_match`) plays ``games`` games in pairs: game ``2k``
with A as Black, game ``2k + 1`` with A as White, both from the same opening: ``openings`` random
plies (``taikyoku.random_game``, seeded from ``seed``, the pair ``k`` and an attempt number; an
opening that ends the game is drawn again). An odd ``games`` plays the last pair's first game only
(A as Black). Games still running at ``max_plies`` plies (the opening's included) are stopped and
count as draws; ``max_plies=None`` (the default) leaves every game to its natural end (royal
capture, repetition, no moves: measured, random Tenjiku games last 150-700 plies and random
Taikyoku ones up to about 12,000, at some 80 µs a ply in the arena).

**The statistics** (:class:`MatchResult`), from A's side, over ``n = W + D + L`` games:

- score ``s = (W + D/2) / n``;
- Elo difference ``elo(s) = -400 log10(1/s - 1)`` (the logistic model: A's expected score against
  a player ``d`` Elo weaker is ``1 / (1 + 10^(-d/400))``); infinite when ``s`` is 0 or 1;
- its standard error from the win/draw/loss trinomial: with ``w, d, l = W/n, D/n, L/n``, the
  per-game variance is ``w (1 - s)^2 + d (1/2 - s)^2 + l s^2`` and ``se = sqrt(variance / n)``;
- the 95% interval ``s ± 1.96 se`` in score space (clipped to [0, 1]), turned into Elo by
  ``elo()``; so ``elo_low <= elo <= elo_high``, and a bound is infinite where the interval
  reaches 0 or 1. When ``s`` is 1 (every game won) the trinomial's variance is 0 and says nothing:
  the Elo and its upper bound are ``+inf`` and the lower bound is the exact binomial one
  (``s_low = 0.025^(1/n)``, Clopper-Pearson); symmetrically for ``s = 0``. When every game is a
  draw the variance is 0 too and would claim certainty: the variance is then taken with one win
  and one loss added (``0.5 / (n + 2)`` per game).

**Ratings of many players** (:func:`ratings`): the Bradley-Terry model gives each player a
strength ``g_i > 0``, ``P(i beats j) = g_i / (g_i + g_j)``, Elo ``400 log10(g_i)``. It is fitted by
minorisation-maximisation (Hunter 2004, "MM algorithms for generalized Bradley-Terry models"):
``g_i <- P_i / sum_j n_ij / (g_i + g_j)``, where ``n_ij`` is the number of games between ``i`` and
``j`` and ``P_i`` the points ``i`` scored (a win 1, a draw 1/2 to each side), until the ratings
move by less than ``tolerance`` Elo. The maximum-likelihood ratings exist and are unique when the
players are connected by games (else :class:`TaikyokuError`) and no group of them won every game
against the others (else :class:`TaikyokuError` too; ``prior=`` adds that many virtual draws
between every pair of players that met, which keeps them finite).
"""

from __future__ import annotations

import copy
import inspect
import os
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Set, Union

import numpy as np

import taikyoku
from taikyoku import _core, _validate
from taikyoku._core import Game, Move, TaikyokuError
from taikyoku._validate import F32_MAX, U32_MAX, U64_MAX

# The statistics (results, Elo, ratings) live in their own module; its public names are re-exported here.
from taikyoku.ratings import Color as Color
from taikyoku.ratings import (
    GameRecord,
    MatchResult,
    elo,
    elo_interval,
    expected_score,
    ratings,
    score_interval,
)
from taikyoku.ratings import Outcome as Outcome
from taikyoku.ratings import ResultRow as ResultRow

if TYPE_CHECKING:
    from taikyoku.nn import PolicyValueNet

__all__ = [
    "GameRecord",
    "MAX_GAMES",
    "MAX_OPENING_DRAWS",
    "MatchResult",
    "MctsPlayer",
    "MoveLike",
    "Player",
    "PlayerError",
    "PolicyPlayer",
    "RandomPlayer",
    "current_game_seed",
    "elo",
    "elo_interval",
    "expected_score",
    "match",
    "move_seed",
    "play_match",
    "player_from_spec",
    "ratings",
    "score_interval",
]

#: What a player may return: a Move, an action (int or numpy integer, mover's frame) or notation.
MoveLike = Union[Move, int, np.integer, str]
#: A player: ``player(game) -> move``; it must leave ``game`` unchanged.
Player = Callable[[Game], Any]

#: The most games one match plays (each game's record is kept).
MAX_GAMES = 10_000_000
#: The most threads a match uses (as taikyoku.selfplay).
MAX_THREADS = 256
#: How many random openings are drawn for a pair before ``openings`` is declared too long.
MAX_OPENING_DRAWS = 100
#: The most simulations per move (as the engine's mcts_action accepts).
MAX_SIMULATIONS = 1 << 24
#: The search roots of :class:`MctsPlayer`.
ROOTS = ("puct", "gumbel")

# -- seeds ---------------------------------------------------------------------------------------

_MASK = 2**64 - 1
_GOLDEN = 0x9E3779B97F4A7C15
# Domain tags, so that a game's number and an opening's seed never coincide.
_GAME_TAG = 0x67616D65  # "game"
_OPENING_TAG = 0x6F70656E  # "open"


def _splitmix64(x: int) -> int:
    z = (x + _GOLDEN) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def _mix(*values: int) -> int:
    """A 64-bit hash of the integers (SplitMix64 applied after folding in each)."""
    h = _GOLDEN
    for value in values:
        h = _splitmix64(h ^ (int(value) & _MASK))
    return h


_local = threading.local()


def current_game_seed() -> int:
    """The number :func:`match` gives the game this thread is playing (from the match's ``seed``
    and the game's index), 0 outside a match. Seeded players mix it into their moves' seeds
    (:func:`move_seed`), so that two games reaching the same position need not play alike."""
    return int(getattr(_local, "game_seed", 0))


def move_seed(seed: int, game: Game) -> int:
    """The 64-bit seed of a seeded player's move: a mix of its ``seed``, :func:`current_game_seed`,
    ``game.hash`` and ``game.ply``. The same player, game and position give the same move, whatever
    thread plays it and in whatever order the games run."""
    return _mix(seed, current_game_seed(), game.hash, game.ply)


# -- players -------------------------------------------------------------------------------------


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else f"{text[: limit - 15]}...({len(text)} characters)"


def _player_name(player: Any) -> str:
    """A player's repr, cut to a readable length (a broken __repr__ does not hide the real error)."""
    try:
        text = repr(player)
    except Exception:  # noqa: BLE001
        text = f"<{type(player).__name__} object>"
    return _clip(text)


class RandomPlayer:
    """Plays a uniformly random legal action, seeded: ``actions[move_seed(seed, game) % len(actions)]``."""

    def __init__(self, seed: int = 0) -> None:
        self.seed: int = _validate.integer("seed", seed, 0, U64_MAX)

    def __call__(self, game: Game) -> int:
        actions = game.legal_actions()
        if len(actions) == 0:
            raise TaikyokuError("no legal move: the game is over")
        return int(actions[move_seed(self.seed, game) % len(actions)])

    def __repr__(self) -> str:
        return f"RandomPlayer(seed={self.seed})"


class MctsPlayer:
    """Monte Carlo tree search: ``taikyoku.mcts_action(game, simulations=, seed=, evaluator=, root=)``.

    - ``evaluator``: None (the engine's heuristic) or a network evaluator, the protocol of
      ``taikyoku.selfplay``'s (``net.evaluator()`` of a ``taikyoku.nn.PolicyValueNet``). It is
      called from the threads of the match's games, possibly at once.
    - ``root``: ``"puct"`` or ``"gumbel"`` (Gumbel sampling without replacement at the root, then
      sequential halving). A player plays for strength: its Gumbel root has no noise unless
      ``gumbel_scale`` is given (``gumbel_scale=0``, as mctx advises for evaluation in games of
      perfect information; self-play keeps the noise, 1.0, for exploration). With noise, the
      shipped Tenjiku network at 16 simulations scored 0.700 against ``mcts:16``, without it
      0.912 (docs/STRENGTH.md).
    - ``seed``: each move is searched with :func:`move_seed` ``(seed, game)``.
    - ``mcts_settings``: further keyword arguments of :func:`taikyoku.mcts_search`
      (``c_puct``, ``priors``, ``gumbel_considered``, ``gumbel_scale``, ``leaves``...), checked
      when the player is made.
    """

    def __init__(
        self,
        simulations: int = 64,
        evaluator: Optional[Callable[..., Any]] = None,
        root: str = "puct",
        seed: int = 0,
        **mcts_settings: Any,
    ) -> None:
        self.simulations: int = _validate.integer("simulations", simulations, 1, MAX_SIMULATIONS)
        self.root: str = _validate.choice("root", root, ROOTS)
        if evaluator is not None and not callable(evaluator):
            raise TaikyokuError(f"evaluator must be None or callable, not {_validate.show(evaluator)}")
        self.evaluator = evaluator
        self.seed: int = _validate.integer("seed", seed, 0, U64_MAX)
        self.mcts_settings: Dict[str, Any] = dict(mcts_settings)
        if self.root == "gumbel":
            self.mcts_settings.setdefault("gumbel_scale", 0.0)
        known = set(inspect.signature(taikyoku.mcts_search).parameters) - {
            "game",
            "simulations",
            "seed",
            "evaluator",
            "root",
        }
        unknown = sorted(set(self.mcts_settings) - known)
        if unknown:
            raise TaikyokuError(f"unknown MCTS settings {', '.join(unknown)} (known: {', '.join(sorted(known))})")

    def __call__(self, game: Game) -> int:
        return int(
            taikyoku.mcts_action(
                game, self.simulations, move_seed(self.seed, game), self.evaluator, self.root, **self.mcts_settings
            )
        )

    def __repr__(self) -> str:
        parts = [f"simulations={self.simulations}"]
        if self.evaluator is not None:
            parts.append(f"evaluator={_clip(repr(self.evaluator), 80)}")
        if self.root != "puct":
            parts.append(f"root={self.root!r}")
        parts.append(f"seed={self.seed}")
        parts += [f"{k}={v!r}" for k, v in self.mcts_settings.items()]
        return f"MctsPlayer({', '.join(parts)})"


class PolicyPlayer:
    """A policy network played without search: the legal action of highest logit
    (``temperature`` 0), else a sample of ``softmax(logits / temperature)`` seeded by
    :func:`move_seed` ``(seed, game)``.

    ``net`` is a ``taikyoku.nn.PolicyValueNet`` (or any module with its ``forward(observations,
    actions, offsets)``); the player keeps a **frozen copy** of it, in eval mode, made when the
    player is made: the caller's network is left as it is (its mode too), later training does not
    change the player, and the match's threads share the copy safely. It reads compact observations
    (``game.observation(compact=True)``, mover's frame) and runs where the network's parameters are.
    Needs torch (imported when a PolicyPlayer is made, not by ``import taikyoku.arena``).
    """

    def __init__(self, net: PolicyValueNet, temperature: float = 0.0, seed: int = 0) -> None:
        import torch

        if not isinstance(net, torch.nn.Module):
            raise TaikyokuError(f"net must be a torch module (a taikyoku.nn.PolicyValueNet), not {_validate.show(net)}")
        self.temperature: float = _validate.real("temperature", temperature, 0.0, F32_MAX)
        self.seed: int = _validate.integer("seed", seed, 0, U64_MAX)
        frozen = copy.deepcopy(net).eval()
        frozen.requires_grad_(False)
        self.net = frozen
        config = getattr(net, "config", None)
        self.variant: Optional[str] = config.get("variant") if isinstance(config, dict) else None
        self._torch = torch
        try:
            self._device = next(frozen.parameters()).device
        except StopIteration:
            self._device = torch.device("cpu")

    def __call__(self, game: Game) -> int:
        torch = self._torch
        if self.variant is not None and self.variant != game.variant_name:
            raise TaikyokuError(f"the network was made for {self.variant}, not {game.variant_name}")
        actions = game.legal_actions()
        if len(actions) == 0:
            raise TaikyokuError("no legal move: the game is over")
        observation = np.asarray(game.observation(compact=True), dtype=np.int32)[None]
        with torch.inference_mode():
            out = self.net(
                torch.from_numpy(observation).to(self._device),
                torch.from_numpy(np.ascontiguousarray(actions, dtype=np.int64)).to(self._device),
                torch.tensor([0, len(actions)], dtype=torch.int64, device=self._device),
            )
        logits = out[0] if isinstance(out, tuple) else out
        scores = logits.detach().double().cpu().numpy().reshape(-1)
        if scores.shape != (len(actions),) or not np.all(np.isfinite(scores)):
            raise TaikyokuError(
                f"the network returned {scores.size} logits (finite: {bool(np.all(np.isfinite(scores)))}) for {len(actions)} legal actions"
            )
        if self.temperature == 0.0:
            index = int(np.argmax(scores))
        else:
            z = scores / self.temperature
            p = np.exp(z - z.max())
            p /= p.sum()
            index = int(np.random.default_rng(move_seed(self.seed, game)).choice(len(p), p=p))
        return int(actions[index])

    def __repr__(self) -> str:
        config = getattr(self.net, "config", None)
        inner = (
            ", ".join(f"{k}={v!r}" for k, v in config.items() if k != "options" or v)
            if isinstance(config, dict)
            else ""
        )
        return f"PolicyPlayer({type(self.net).__name__}({inner}), temperature={self.temperature:g}, seed={self.seed})"


def _load_network(source: str, variant: str) -> PolicyValueNet:
    """``taikyoku.nn.pretrained(variant)`` for ``"pretrained"``, else ``taikyoku.nn.load(source, variant=variant)``."""
    if source != "pretrained" and not os.path.isfile(source):
        raise TaikyokuError(
            f"network file {source!r} " + ("is not a file" if os.path.exists(source) else "does not exist")
        )
    try:
        import taikyoku.nn as tnn
    except ImportError as e:
        raise TaikyokuError(f'a network player needs PyTorch: pip install "taikyoku[torch]" ({e})') from None
    name = "pretrained" if source == "pretrained" else "load"
    function = getattr(tnn, name, None)
    if function is None:
        raise TaikyokuError(f"this build of taikyoku has no taikyoku.nn.{name}: network players cannot be loaded")
    if source == "pretrained":
        return function(variant)  # type: ignore[no-any-return]
    return function(source, variant=variant)  # type: ignore[no-any-return]


#: The player specifications :func:`player_from_spec` reads (the command line's players).
SPECS = (
    "random | random:SEED",
    "mcts:N (heuristic PUCT, N simulations) | mcts:N:FILE.pt | mcts:N:pretrained",
    "gumbel:N (heuristic evaluator, Gumbel root) | gumbel:N:FILE.pt | gumbel:N:pretrained",
    "policy:FILE.pt | policy:pretrained | pretrained (a network's greedy move, no search)",
)


def player_from_spec(spec: str, variant: str = "taikyoku") -> Player:
    """The player a specification names (the ``taikyoku match`` command's players):

    - ``random`` (``random:SEED``): :class:`RandomPlayer`;
    - ``mcts:N``: :class:`MctsPlayer` with N simulations, the heuristic evaluator and a PUCT root;
      ``gumbel:N``: the same with a Gumbel root;
    - ``mcts:N:FILE.pt``, ``gumbel:N:FILE.pt``: the network in FILE.pt (``taikyoku.nn.load(FILE,
      variant=variant)``) as the evaluator; ``mcts:N:pretrained``, ``gumbel:N:pretrained``: the
      variant's shipped weights (``taikyoku.nn.pretrained(variant)``);
    - ``policy:FILE.pt``, ``policy:pretrained``, ``pretrained``: :class:`PolicyPlayer`, the
      network's greedy move.

    Raises TaikyokuError for an unknown or malformed specification, a missing file, a network of
    another variant, or a player this build cannot play.
    """
    if not isinstance(spec, str):
        raise TaikyokuError(f"a player specification is a string, not {_validate.show(spec)}")
    variant = _validate.choice("variant", variant, _core.variants())
    kind, _, rest = spec.partition(":")
    if kind == "random":
        if not rest:
            return RandomPlayer()
        return RandomPlayer(_spec_int(spec, rest, "seed", 0, U64_MAX))
    if kind in ("mcts", "gumbel"):
        count, _, source = rest.partition(":")
        if not count:
            raise TaikyokuError(f"player {spec!r}: write {kind}:N with N simulations, e.g. {kind}:64")
        simulations = _spec_int(spec, count, "simulations", 1, MAX_SIMULATIONS)
        root = "puct" if kind == "mcts" else "gumbel"
        if not source:
            return MctsPlayer(simulations, root=root)
        return MctsPlayer(simulations, evaluator=_load_network(source, variant).evaluator(), root=root)
    if kind == "pretrained" and not rest:
        return PolicyPlayer(_load_network("pretrained", variant))
    if kind == "policy":
        if not rest:
            raise TaikyokuError(f"player {spec!r}: write policy:FILE.pt or policy:pretrained")
        return PolicyPlayer(_load_network(rest, variant))
    raise TaikyokuError(f"unknown player {spec!r} (use {'; '.join(SPECS)})")


def _spec_int(spec: str, text: str, what: str, low: int, high: int) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise TaikyokuError(f"player {spec!r}: {what} must be an integer, not {text!r}") from None
    if not low <= value <= high:
        raise TaikyokuError(f"player {spec!r}: {what} must be between {low} and {high}, not {value}")
    return value


# -- errors --------------------------------------------------------------------------------------


class PlayerError(TaikyokuError):
    """A player failed during a match: it raised (the exception is chained as ``__cause__``),
    returned something that is not a legal move (the engine's error is chained), or changed the
    game it was given. The match stops at once; nothing of it is returned.

    Attributes: ``player`` (its repr), ``role`` ("A" or "B"), ``color`` (the side it was playing),
    ``game_index``, ``ply`` (of the position it was asked to move in), ``position``
    (``game.to_text()`` of that position). The message's first line names them; the position
    follows.
    """

    def __init__(
        self,
        message: str,
        player: Optional[str] = None,
        role: Optional[str] = None,
        color: Optional[str] = None,
        game_index: Optional[int] = None,
        ply: Optional[int] = None,
        position: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.player = player
        self.role = role
        self.color = color
        self.game_index = game_index
        self.ply = ply
        self.position = position


class _Stopped(Exception):
    """A game abandoned because another one failed (never leaves the module)."""


# -- the match -----------------------------------------------------------------------------------


def _opening(variant: str, options: List[str], plies: int, seed: int, pair: int) -> Game:
    """Pair ``pair``'s start: ``plies`` random plies that do not end the game."""
    if plies == 0:
        return Game(variant, options=options)
    for attempt in range(MAX_OPENING_DRAWS):
        game = _core.random_game(
            _mix(seed, _OPENING_TAG, pair, attempt), max_plies=plies, variant=variant, options=options
        )
        if game.ply == plies and game.termination == "max_plies":
            game.max_plies = None
            if not game.is_over:
                return game
    raise TaikyokuError(
        f"openings={plies}: {MAX_OPENING_DRAWS} random openings of {plies} plies drawn for pair {pair} all ended "
        f"the {variant} game: use fewer plies"
    )


def _as_move(move: Any) -> Any:
    """What Game.play takes: numpy integers become ints (bools are left for play to refuse)."""
    if isinstance(move, np.integer):
        return int(move)
    return move


def _failure(player: Player, role: str, game: Game, index: int, a_color: Color, what: str) -> PlayerError:
    name = _player_name(player)
    position = game.to_text()
    mover = game.side_to_move
    return PlayerError(
        f"player {role} {name} {what}, in game {index} (A plays {a_color}) at ply {game.ply} "
        f"({mover} to move); the position:\n{position}",
        player=name,
        role=role,
        color=mover,
        game_index=index,
        ply=game.ply,
        position=position,
    )


def _play_game(
    index: int,
    start: Game,
    a: Player,
    b: Player,
    seed: int,
    max_plies: Optional[int],
    stop: threading.Event,
) -> GameRecord:
    game = start.clone()
    game.max_plies = max_plies
    a_color: Color = "black" if index % 2 == 0 else "white"
    previous = getattr(_local, "game_seed", None)
    _local.game_seed = _mix(seed, _GAME_TAG, index)
    try:
        while not game.is_over:
            if stop.is_set():
                raise _Stopped()
            player, role = (a, "A") if game.side_to_move == a_color else (b, "B")
            view = game.clone()
            before = (view.hash, view.ply)
            try:
                move = player(view)
            except Exception as e:
                raise _failure(player, role, game, index, a_color, f"raised {type(e).__name__}: {e}") from e
            if (view.hash, view.ply) != before:
                what = (
                    f"changed the game it was given (ply {before[1]} -> {view.ply}): a player must leave it as it was"
                )
                raise _failure(player, role, game, index, a_color, what)
            try:
                game.play(_as_move(move))
            except Exception as e:
                what = f"returned {_validate.show(move)}, not a legal move ({e})"
                raise _failure(player, role, game, index, a_color, what) from e
    finally:
        if previous is None:
            del _local.game_seed
        else:
            _local.game_seed = previous
    result = game.result
    winner: Optional[Color] = "black" if result == "black" else "white" if result == "white" else None
    outcome: Outcome = "draw" if winner is None else ("win" if winner == a_color else "loss")
    history = tuple(game.history())
    return GameRecord(
        index=index,
        a_color=a_color,
        result=outcome,
        winner=winner,
        termination=str(game.termination),
        plies=game.ply,
        opening=history[: start.ply],
        moves=history,
    )


def match(
    a: Player,
    b: Player,
    games: int,
    variant: str = "taikyoku",
    openings: int = 0,
    seed: int = 0,
    max_plies: Optional[int] = None,
    threads: Optional[int] = None,
    progress: bool = False,
    options: Optional[Sequence[str]] = None,
) -> MatchResult:
    """Plays ``games`` games between players ``a`` and ``b``; returns the result from A's side.

    - Games are played in pairs with colours swapped: game ``2k`` with A as Black, ``2k + 1`` with
      A as White, both from pair ``k``'s opening of ``openings`` random plies (drawn from ``seed``
      and ``k``; drawn again while it ends the game: TaikyokuError after ``MAX_OPENING_DRAWS``
      tries, checked on pair 0 before any game is played). An odd ``games`` plays the last
      pair's first game only (A as Black).
    - ``max_plies``: games reaching it (the opening's plies included) stop and count as draws;
      None (the default): every game goes to its natural end. It must exceed ``openings``.
    - ``threads``: games played at once, on Python threads (the native search releases the GIL);
      default ``os.cpu_count()``. The result is the same for any value (see :func:`move_seed`).
    - ``progress``: a tqdm progress bar, one step per game.
    - ``options``: rule options of the variant (``taikyoku.rule_options(variant)``).

    Each player call gets a clone of the game, which it must leave unchanged. A player that raises,
    returns an illegal move or changes its clone stops the match: :class:`PlayerError` (for the
    lowest game index that failed, when several games run at once), with nothing returned.
    """
    for role, player in (("a", a), ("b", b)):
        if not callable(player):
            raise TaikyokuError(f"player {role} must be callable (player(game) -> move), not {_validate.show(player)}")
    games = _validate.integer("games", games, 1, MAX_GAMES)
    variant = _validate.choice("variant", variant, _core.variants())
    openings = _validate.integer("openings", openings, 0, U32_MAX)
    seed = _validate.integer("seed", seed, 0, U64_MAX)
    max_plies = _validate.optional_integer("max_plies", max_plies, 1, U32_MAX)
    if max_plies is not None and openings >= max_plies:
        raise TaikyokuError(
            f"openings ({openings}) must be fewer than max_plies ({max_plies}): no game would be played"
        )
    threads = _validate.optional_integer("threads", threads, 1, MAX_THREADS)
    progress = _validate.boolean("progress", progress)
    rule_options = _validate.string_list("options", options)
    # The engine checks the options; pair 0's opening checks that ``openings`` can be played. The
    # other pairs' openings are drawn in the games' threads (both games of a pair draw the same).
    first = _opening(variant, rule_options, openings, seed, 0)
    workers = min(threads or os.cpu_count() or 1, games)

    records: List[Optional[GameRecord]] = [None] * games
    stop = threading.Event()
    bar: Any = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=games, unit="game", desc="match", dynamic_ncols=True)
    tally = {"win": 0, "draw": 0, "loss": 0}

    def done(record: GameRecord) -> None:
        records[record.index] = record
        tally[record.result] += 1
        if bar is not None:
            bar.update(1)
            bar.set_postfix_str(f"W {tally['win']} D {tally['draw']} L {tally['loss']}", refresh=False)

    def play(index: int) -> GameRecord:
        pair = index // 2
        start = first if pair == 0 or openings == 0 else _opening(variant, rule_options, openings, seed, pair)
        return _play_game(index, start, a, b, seed, max_plies, stop)

    try:
        if workers == 1:
            for index in range(games):
                done(play(index))
        else:
            _play_parallel(play, games, workers, stop, done)
    finally:
        if bar is not None:
            bar.close()
    final = [r for r in records if r is not None]
    assert len(final) == games
    return MatchResult(tally["win"], tally["draw"], tally["loss"], records=tuple(final))


#: Another name of :func:`match` (which shadows the ``match`` soft keyword's name in a namespace).
play_match = match


def _play_parallel(
    play: Callable[[int], GameRecord],
    games: int,
    workers: int,
    stop: threading.Event,
    done: Callable[[GameRecord], None],
) -> None:
    """Plays the games on ``workers`` threads; on a failure, stops the others and raises the
    failure of the lowest game index."""
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="taikyoku-match")
    futures: Dict[Future[GameRecord], int] = {}
    failed = False
    try:
        futures = {pool.submit(play, index): index for index in range(games)}
        pending: Set[Future[GameRecord]] = set(futures)
        while pending and not failed:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in sorted(finished, key=futures.__getitem__):
                if future.exception() is not None:
                    failed = True
                else:
                    done(future.result())
    except BaseException:  # KeyboardInterrupt and the like: stop every game
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    if failed:
        stop.set()
    pool.shutdown(wait=True, cancel_futures=True)
    if failed:
        errors = [
            (index, future.exception())
            for future, index in futures.items()
            if future.done() and not future.cancelled() and future.exception() is not None
        ]
        real = sorted(((i, e) for i, e in errors if not isinstance(e, _Stopped)), key=lambda pair: pair[0])
        raise real[0][1]  # type: ignore[misc]
