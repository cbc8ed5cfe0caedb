"""The statistics of ``taikyoku.arena`` (which re-exports its public names; its module docstring gives the
formulas): Elo differences and their intervals, a game's and a match's records
(:class:`GameRecord`, :class:`MatchResult`), and Bradley-Terry :func:`ratings` of many players.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Dict, Hashable, Iterable, List, Literal, Optional, Set, Tuple, Union

import numpy as np

from taikyoku import _validate
from taikyoku._core import TaikyokuError

#: A side.
Color = Literal["black", "white"]
#: A game's result from A's side.
Outcome = Literal["win", "draw", "loss"]

#: z of the two-sided 95% interval.
_Z95 = statistics.NormalDist().inv_cdf(0.975)


# -- results -------------------------------------------------------------------------------------


def expected_score(elo_difference: float) -> float:
    """The expected score of a player ``elo_difference`` Elo stronger: ``1 / (1 + 10^(-d/400))``
    (``elo()``'s inverse; infinite differences give 0 and 1)."""
    if isinstance(elo_difference, (bool, np.bool_)) or not isinstance(elo_difference, (int, float, np.number)):
        raise TaikyokuError(f"elo_difference must be a number, not {_validate.show(elo_difference)}")
    exponent = -float(elo_difference) / 400.0
    if math.isnan(exponent):
        raise TaikyokuError("elo_difference must be a number, not NaN")
    if exponent > 300:
        return 0.0
    if exponent < -300:
        return 1.0
    return float(1.0 / (1.0 + 10.0**exponent))


def elo(score: float) -> float:
    """The Elo difference of a score in [0, 1]: ``-400 log10(1/score - 1)``; ``-inf`` at 0,
    ``+inf`` at 1.

    >>> round(elo(0.75), 1)
    190.8
    """
    s = _validate.real("score", score, 0.0, 1.0)
    if s <= 0.0:
        return -math.inf
    if s >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / s - 1.0)


def _counts(wins: float, draws: float, losses: float) -> Tuple[float, float, float, float]:
    w = _validate.real("wins", wins, 0.0)
    d = _validate.real("draws", draws, 0.0)
    l_ = _validate.real("losses", losses, 0.0)
    n = w + d + l_
    if n <= 0:
        raise TaikyokuError("no games: wins + draws + losses must be positive")
    return w, d, l_, n


def score_interval(wins: float, draws: float, losses: float, confidence: float = 0.95) -> Tuple[float, float]:
    """The ``confidence`` interval of the score, ``s ± z se`` clipped to [0, 1], ``se`` from the
    win/draw/loss trinomial (module docstring). At ``s`` = 1 (0) the trinomial's variance is 0:
    the lower (upper) bound is then the exact binomial one, ``alpha^(1/n)`` with
    ``alpha = (1 - confidence) / 2``. With draws only it is 0 too, which would claim certainty
    from a handful of games: the variance is then taken with one win and one loss added."""
    w, d, l_, n = _counts(wins, draws, losses)
    c = _validate.real("confidence", confidence, 0.0, 1.0, low_open=True)
    if c >= 1.0:
        return 0.0, 1.0
    alpha = (1.0 - c) / 2.0
    s = (w + d / 2.0) / n
    if l_ == 0 and d == 0:  # every game won
        return alpha ** (1.0 / n), 1.0
    if w == 0 and d == 0:  # every game lost
        return 0.0, 1.0 - alpha ** (1.0 / n)
    if w == 0 and l_ == 0:  # draws only: s = 1/2
        variance = 0.5 / (n + 2)
    else:
        variance = (w * (1.0 - s) ** 2 + d * (0.5 - s) ** 2 + l_ * s**2) / n
    half = statistics.NormalDist().inv_cdf(1.0 - alpha) * math.sqrt(variance / n)
    return max(0.0, s - half), min(1.0, s + half)


def elo_interval(wins: float, draws: float, losses: float, confidence: float = 0.95) -> Tuple[float, float]:
    """:func:`score_interval` in Elo (a bound at score 0 or 1 is infinite)."""
    low, high = score_interval(wins, draws, losses, confidence)
    return elo(low), elo(high)


def _signed(value: float) -> str:
    if math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    rounded = round(value)
    return "0" if rounded == 0 else f"{rounded:+d}"


@dataclass(frozen=True)
class GameRecord:
    """One game of a match."""

    #: The game's index in the match (0-based); its pair is ``index // 2``.
    index: int
    #: The side A played: "black" in even games, "white" in odd ones.
    a_color: Color
    #: The game's result from A's side: "win", "draw" or "loss" (a game cut by max_plies is a draw).
    result: Outcome
    #: The side that won, or None (a draw, or a game cut by max_plies).
    winner: Optional[Color]
    #: Why the game ended (``Game.termination``: "royal_capture", "repetition", ..., "max_plies").
    termination: str
    #: Plies played, the opening's included.
    plies: int
    #: The opening's moves, in notation (the same in both games of a pair).
    opening: Tuple[str, ...]
    #: Every move of the game in notation, the opening's first (``Game.history()``).
    moves: Tuple[str, ...] = field(repr=False)

    @property
    def pair(self) -> int:
        """The pair the game belongs to (its opening's number)."""
        return self.index // 2


@dataclass(frozen=True)
class MatchResult:
    """A match's result from A's side: counts, score, Elo difference with its 95% interval, and
    the games' records (in game order). ``MatchResult(wins, draws, losses)`` builds one from counts
    alone (``records`` empty). ``str()`` gives e.g. ``W 12  D 3  L 5  score 0.675  Elo +127 [-8, +318] (95%)``.
    """

    wins: int
    draws: int
    losses: int
    #: Every game, in game order (empty when built from counts).
    records: Tuple[GameRecord, ...] = field(default=(), repr=False)
    #: ``wins + draws + losses``.
    games: int = field(init=False)
    #: ``(wins + draws / 2) / games``.
    score: float = field(init=False)
    #: ``elo(score)``: A's Elo advantage over B (infinite at a score of 0 or 1).
    elo: float = field(init=False)
    #: The 95% interval of ``elo`` (:func:`elo_interval`).
    elo_low: float = field(init=False)
    elo_high: float = field(init=False)

    def __post_init__(self) -> None:
        for name in ("wins", "draws", "losses"):
            object.__setattr__(self, name, _validate.integer(name, getattr(self, name), 0))
        games = self.wins + self.draws + self.losses
        if games == 0:
            raise TaikyokuError("a MatchResult needs at least one game")
        records = tuple(self.records)
        if records and len(records) != games:
            raise TaikyokuError(f"{len(records)} records for {games} games")
        object.__setattr__(self, "records", records)
        object.__setattr__(self, "games", games)
        score = (self.wins + self.draws / 2) / games
        object.__setattr__(self, "score", score)
        object.__setattr__(self, "elo", elo(score))
        low, high = elo_interval(self.wins, self.draws, self.losses)
        object.__setattr__(self, "elo_low", low)
        object.__setattr__(self, "elo_high", high)

    @property
    def truncated(self) -> int:
        """Games cut by ``max_plies`` (counted as draws)."""
        return sum(1 for r in self.records if r.termination == "max_plies")

    def __str__(self) -> str:
        return (
            f"W {self.wins}  D {self.draws}  L {self.losses}  score {self.score:.3f}  "
            f"Elo {_signed(self.elo)} [{_signed(self.elo_low)}, {_signed(self.elo_high)}] (95%)"
        )


# -- ratings -------------------------------------------------------------------------------------

ResultRow = Union[Tuple[Hashable, Hashable, float, float, float], Tuple[Hashable, Hashable, MatchResult]]


def ratings(
    results: Iterable[ResultRow],
    anchor: Optional[Hashable] = None,
    prior: float = 0.0,
    tolerance: float = 1e-6,
    max_iterations: int = 100_000,
) -> Dict[Hashable, float]:
    """Bradley-Terry Elo ratings of the players of a results table (module docstring).

    ``results``: rows ``(a, b, wins, draws, losses)`` (counts from ``a``'s side; non-negative
    numbers, so expected counts work too) or ``(a, b, match_result)`` (a :class:`MatchResult`, or
    anything with ``wins``, ``draws`` and ``losses``). Rows of the same players add up. Names are
    any hashable values.

    Returns ``{name: elo}`` in order of first appearance, ``anchor`` (default: the first player)
    at 0. ``prior``: virtual draws added between every pair of players that met. Raises
    TaikyokuError for a malformed row, players not all connected by games, or ratings that are
    unbounded (a group of players won every game against the others, and ``prior`` is 0).
    """
    prior = _validate.real("prior", prior, 0.0)
    tolerance = _validate.real("tolerance", tolerance, 0.0, low_open=True)
    max_iterations = _validate.integer("max_iterations", max_iterations, 1)
    names: List[Hashable] = []
    slot: Dict[Hashable, int] = {}
    pairs: Dict[Tuple[int, int], List[float]] = {}  # (i, j), i < j -> [points of i, points of j, games]
    for number, row in enumerate(results):
        a, b, w, d, l_ = _row(number, row)
        for name in (a, b):
            if name not in slot:
                slot[name] = len(names)
                names.append(name)
        i, j = slot[a], slot[b]
        if i > j:
            i, j, w, l_ = j, i, l_, w
        entry = pairs.setdefault((i, j), [0.0, 0.0, 0.0])
        entry[0] += w + d / 2
        entry[1] += l_ + d / 2
        entry[2] += w + d + l_
    if not names:
        raise TaikyokuError("no results: give rows (a, b, wins, draws, losses) or (a, b, MatchResult)")
    if anchor is None:
        anchor = names[0]
    elif anchor not in slot:
        raise TaikyokuError(f"anchor {_validate.show(anchor)} played no game in the results")
    n = len(names)
    games = np.zeros((n, n))
    points = np.zeros((n, n))  # points[i, j]: what i scored against j
    for (i, j), (pi, pj, count) in pairs.items():
        if count <= 0:
            continue
        games[i, j] = games[j, i] = count + prior
        points[i, j] = pi + prior / 2
        points[j, i] = pj + prior / 2
    _check_connected(names, games)
    _check_bounded(names, points)
    totals = points.sum(axis=1)
    gamma = np.ones(n)
    for _ in range(max_iterations):
        denominators = (games / (gamma[:, None] + gamma[None, :])).sum(axis=1)
        updated = totals / denominators
        updated /= math.exp(float(np.mean(np.log(updated))))  # geometric mean 1
        change = float(np.max(np.abs(np.log(updated) - np.log(gamma)))) * 400 / math.log(10)
        gamma = updated
        if change < tolerance:
            break
    rating = 400.0 * np.log10(gamma / gamma[slot[anchor]])
    return {name: float(rating[k]) for k, name in enumerate(names)}


def _row(number: int, row: Any) -> Tuple[Hashable, Hashable, float, float, float]:
    try:
        items = tuple(row)
    except TypeError:
        raise TaikyokuError(
            f"results row {number} must be (a, b, wins, draws, losses) or (a, b, MatchResult), not {_validate.show(row)}"
        ) from None
    if len(items) == 3 and all(hasattr(items[2], k) for k in ("wins", "draws", "losses")):
        a, b, counts = items[0], items[1], (items[2].wins, items[2].draws, items[2].losses)
    elif len(items) == 5:
        a, b, counts = items[0], items[1], items[2:]
    else:
        raise TaikyokuError(
            f"results row {number} must be (a, b, wins, draws, losses) or (a, b, MatchResult), not {_validate.show(row)}"
        )
    try:
        hash(a)
        hash(b)
    except TypeError:
        raise TaikyokuError(f"results row {number}: player names must be hashable (strings, say)") from None
    if a == b:
        raise TaikyokuError(f"results row {number}: {_validate.show(a)} cannot play itself")
    w, d, l_ = (
        _validate.real(f"results row {number}: {what}", value, 0.0)
        for what, value in zip(("wins", "draws", "losses"), counts)
    )
    return a, b, w, d, l_


def _reach(start: int, edges: np.ndarray) -> Set[int]:
    """The nodes reachable from ``start`` along ``edges[i, j] > 0``."""
    seen = {start}
    todo = [start]
    while todo:
        i = todo.pop()
        for j in np.flatnonzero(edges[i] > 0):
            if int(j) not in seen:
                seen.add(int(j))
                todo.append(int(j))
    return seen


def _listing(names: List[Hashable], group: Iterable[int]) -> str:
    return ", ".join(_validate.show(names[i]) for i in sorted(group))


def _check_connected(names: List[Hashable], games: np.ndarray) -> None:
    group = _reach(0, games)
    if len(group) < len(names):
        rest = set(range(len(names))) - group
        raise TaikyokuError(
            f"the results do not connect every player: no game links {{{_listing(names, group)}}} "
            f"to {{{_listing(names, rest)}}}, so their ratings cannot be compared"
        )


def _check_bounded(names: List[Hashable], points: np.ndarray) -> None:
    """Finite ratings exist iff every player took points, directly or along a chain, from every
    other (Hunter 2004, Assumption 1)."""
    smallest: Optional[Set[int]] = None
    for i in range(len(names)):
        group = _reach(i, points)
        if len(group) < len(names) and (smallest is None or len(group) < len(smallest)):
            smallest = group
    if smallest is not None:
        rest = set(range(len(names))) - smallest
        raise TaikyokuError(
            f"the ratings are unbounded: {{{_listing(names, rest)}}} won every game against "
            f"{{{_listing(names, smallest)}}} (play more games, or give prior= virtual draws)"
        )
