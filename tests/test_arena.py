"""taikyoku.arena: matches between players (pairs, openings, determinism across threads, player
failures), the Elo statistics, Bradley-Terry ratings, player specifications and ``taikyoku match``.
Games are Tenjiku's (16x16: heuristic MCTS games there are short and fast)."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from conftest import run_cli

import taikyoku
from taikyoku import arena
from taikyoku.arena import (
    MatchResult,
    MctsPlayer,
    PlayerError,
    PolicyPlayer,
    RandomPlayer,
    elo,
    elo_interval,
    expected_score,
    match,
    player_from_spec,
    ratings,
    score_interval,
)

pytestmark = pytest.mark.usefixtures("no_hang")
TIMEOUT = 60

V = "tenjiku"


# -- matches -------------------------------------------------------------------------------------


def test_colours_alternate_and_pairs_share_openings():
    result = match(RandomPlayer(1), RandomPlayer(2), games=7, variant=V, openings=6, seed=3, max_plies=40, threads=1)
    assert [r.index for r in result.records] == list(range(7))
    assert [r.a_color for r in result.records] == ["black", "white"] * 3 + ["black"]  # odd: half a last pair
    assert [r.pair for r in result.records] == [0, 0, 1, 1, 2, 2, 3]
    for r in result.records:
        assert len(r.opening) == 6 and r.moves[:6] == r.opening and r.plies == len(r.moves) <= 40
    for k in range(3):
        assert result.records[2 * k].opening == result.records[2 * k + 1].opening
    assert len({r.opening for r in result.records}) == 4  # each pair its own opening
    # The opening is what random_game plays; replaying each record gives its result.
    for r in result.records:
        game = taikyoku.Game(V, max_plies=40)
        for move in r.moves:
            game.play(move)
        assert game.is_over and str(game.termination) == r.termination
        expected = "draw" if game.result not in ("black", "white") else ("win" if game.result == r.a_color else "loss")
        assert r.result == expected and r.winner == (game.result if game.result in ("black", "white") else None)
    assert (result.wins, result.draws, result.losses) == tuple(
        sum(r.result == k for r in result.records) for k in ("win", "draw", "loss")
    )


def test_same_games_whatever_the_thread_count():
    kwargs = dict(games=6, variant=V, openings=4, seed=11)
    one = match(MctsPlayer(16, seed=5), RandomPlayer(9), threads=1, **kwargs)
    four = match(MctsPlayer(16, seed=5), RandomPlayer(9), threads=4, **kwargs)
    assert one == four and one.records == four.records
    other = match(MctsPlayer(16, seed=5), RandomPlayer(9), threads=4, **dict(kwargs, seed=12))
    assert [r.moves for r in other.records] != [r.moves for r in one.records]


def test_random_players_differ_from_game_to_game_without_openings():
    # The per-game seed (current_game_seed) makes games differ even from the initial position.
    result = match(RandomPlayer(), RandomPlayer(), games=4, variant=V, max_plies=30, threads=2)
    assert len({r.moves for r in result.records}) == 4 and all(r.opening == () for r in result.records)


def test_mcts_beats_random_clearly():
    result = match(MctsPlayer(64), RandomPlayer(), games=6, variant=V, openings=4, threads=2)
    assert result.wins >= 5 and result.score >= 0.8, result
    assert result.elo > 0 and result.elo_high == math.inf
    assert "W " in str(result) and "Elo +" in str(result)


def test_max_plies_cuts_games_into_draws():
    result = match(RandomPlayer(1), RandomPlayer(2), games=4, variant=V, openings=2, max_plies=8, threads=1)
    assert result.draws == 4 and result.truncated == 4 and result.score == 0.5 and result.elo == 0
    assert all(r.plies == 8 and r.termination == "max_plies" and r.winner is None for r in result.records)
    # Draws only: the trinomial's variance is 0; the interval takes one win and one loss more.
    low, high = arena.score_interval(0, 4, 0)
    half = 1.959964 * math.sqrt(0.5 / 6 / 4)
    assert (low, high) == pytest.approx((0.5 - half, 0.5 + half))
    assert result.elo_low == pytest.approx(-result.elo_high) and result.elo_low < -100


def test_players_may_return_moves_notation_or_numpy_actions():
    def first_move(game):
        return game.legal_moves()[0]

    def notation(game):
        return game.legal_moves()[-1].notation

    def numpy_action(game):
        return game.legal_actions()[0]  # np.int64

    for player in (first_move, notation, numpy_action):
        result = match(player, RandomPlayer(), games=2, variant=V, max_plies=12, threads=1)
        assert result.games == 2


def test_progress_bar(capsys):
    result = match(RandomPlayer(), RandomPlayer(1), games=2, variant=V, max_plies=6, threads=1, progress=True)
    assert result.games == 2
    assert "match" in capsys.readouterr().err


def test_rule_options_are_used():
    result = match(
        RandomPlayer(), RandomPlayer(1), games=2, variant=V, max_plies=6, options=["fire-demon-sideways"], threads=1
    )
    assert result.games == 2
    with pytest.raises(taikyoku.TaikyokuError, match="bogus"):
        match(RandomPlayer(), RandomPlayer(), games=2, variant=V, options=["bogus"])


# -- player failures -----------------------------------------------------------------------------


class Illegal:
    def __call__(self, game):
        return 5101055  # a valid action number, never a legal move here

    def __repr__(self):
        return "Illegal()"


class Raising:
    def __init__(self, after):
        self.after = after

    def __call__(self, game):
        if game.ply >= self.after:
            raise RuntimeError("out of ideas")
        return int(game.legal_actions()[0])

    def __repr__(self):
        return f"Raising(after={self.after})"


def mutating(game):
    action = int(game.legal_actions()[0])
    game.play(action)  # and never undone
    return action


@pytest.mark.parametrize("threads", [1, 4])
def test_an_illegal_move_stops_the_match(threads):
    with pytest.raises(PlayerError) as caught:
        match(RandomPlayer(), Illegal(), games=8, variant=V, threads=threads)
    e = caught.value
    assert isinstance(e, taikyoku.TaikyokuError) and isinstance(e.__cause__, taikyoku.IllegalMoveError)
    assert e.player == "Illegal()" and e.role == "B"
    assert e.game_index == 0 and e.ply == 1 and e.color == "white"  # game 0: B is White, at ply 1
    first = str(e).splitlines()[0]
    assert "player B Illegal()" in first and "game 0" in first and "ply 1" in first and "5101055" in first
    assert e.position == taikyoku.Game.from_text(e.position, variant=V).to_text() and e.position in str(e)


@pytest.mark.parametrize("threads", [1, 3])
def test_a_raising_player_stops_the_match(threads):
    with pytest.raises(PlayerError) as caught:
        match(Raising(after=4), RandomPlayer(), games=6, variant=V, openings=2, threads=threads)
    e = caught.value
    assert isinstance(e.__cause__, RuntimeError) and "out of ideas" in str(e)
    assert e.player == "Raising(after=4)" and e.role == "A" and e.game_index == 0 and e.ply == 4
    assert "RuntimeError" in str(e).splitlines()[0]


def test_a_player_that_changes_its_game_is_caught():
    with pytest.raises(PlayerError, match="changed the game it was given") as caught:
        match(mutating, RandomPlayer(), games=2, variant=V, threads=1)
    assert caught.value.__cause__ is None and caught.value.ply == 0


def test_a_player_returning_nonsense():
    with pytest.raises(PlayerError, match="not a legal move") as caught:
        match(lambda game: None, RandomPlayer(), games=2, variant=V, threads=1)
    assert isinstance(caught.value.__cause__, taikyoku.TaikyokuError)


# -- bad arguments -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs,words",
    [
        (dict(games=0), "games must be"),
        (dict(games=-2), "games must be"),
        (dict(games=10**12), "games must be"),
        (dict(games=2.0), "games must be"),
        (dict(games=True), "games must be"),
        (dict(openings=-1), "openings must be"),
        (dict(openings=5000, max_plies=None), "openings=5000"),  # every random Tenjiku game ends before
        (dict(openings=10, max_plies=10), "fewer than max_plies"),
        (dict(max_plies=0), "max_plies must be"),
        (dict(variant="chess"), "unknown variant"),
        (dict(threads=0), "threads must be"),
        (dict(seed=-1), "seed must be"),
        (dict(progress="yes"), "progress must be"),
        (dict(options="fire-demon-sideways"), "options must be a list"),
    ],
)
def test_bad_match_arguments(kwargs, words):
    arguments = dict(games=2, variant=V, max_plies=20)
    arguments.update(kwargs)
    with pytest.raises(taikyoku.TaikyokuError, match=words):
        match(RandomPlayer(), RandomPlayer(), **arguments)


def test_players_must_be_callable():
    with pytest.raises(taikyoku.TaikyokuError, match="player b must be callable"):
        match(RandomPlayer(), "random", games=2, variant=V)


@pytest.mark.parametrize(
    "make,words",
    [
        (lambda: RandomPlayer(-1), "seed must be"),
        (lambda: MctsPlayer(0), "simulations must be"),
        (lambda: MctsPlayer(8, root="alphazero"), "unknown root"),
        (lambda: MctsPlayer(8, evaluator="net"), "evaluator must be"),
    ],
)
def test_bad_players(make, words):
    with pytest.raises(taikyoku.TaikyokuError, match=words):
        make()


def test_unknown_search_settings_are_refused():
    with pytest.raises(taikyoku.TaikyokuError, match="unknown MCTS settings nope"):
        MctsPlayer(8, nope=1)


def test_mcts_player_calls_mcts_action(monkeypatch):
    """The player's wiring to taikyoku.mcts_action's final signature, with a stand-in."""
    calls = []

    def mcts_action(game, simulations=64, seed=0, evaluator=None, root="puct", **settings):
        calls.append(dict(simulations=simulations, seed=seed, evaluator=evaluator, root=root, **settings))
        return taikyoku.search.mcts_search(game, simulations, seed=seed).action

    monkeypatch.setattr(taikyoku, "mcts_action", mcts_action, raising=False)

    def evaluator(observations, legal):
        raise AssertionError("not called by the stand-in")

    player = MctsPlayer(4, evaluator=evaluator, root="gumbel", seed=3, c_puct=2.5)
    assert "root='gumbel'" in repr(player) and "c_puct=2.5" in repr(player)
    game = taikyoku.Game(V)
    assert player(game) in set(game.legal_actions().tolist())
    # A Gumbel player plays for strength: no root noise unless asked for.
    expected = dict(simulations=4, seed=arena.move_seed(3, game), evaluator=evaluator, root="gumbel", c_puct=2.5)
    assert calls == [dict(expected, gumbel_scale=0.0)]
    MctsPlayer(4, evaluator=evaluator, root="gumbel", seed=3, c_puct=2.5, gumbel_scale=1.0)(game)
    assert calls[-1] == dict(expected, gumbel_scale=1.0)
    MctsPlayer(4, evaluator=evaluator, seed=3)(game)
    assert "gumbel_scale" not in calls[-1]
    del calls[1:]
    assert arena.move_seed(3, game) != arena.move_seed(4, game)
    game.play(player(game))
    player(game)
    assert calls[-1]["seed"] == arena.move_seed(3, game) != calls[0]["seed"]  # a new position, a new seed


# -- the native search's options --------------------------------------------------------------------


def test_gumbel_root_beats_random():
    result = match(MctsPlayer(16, root="gumbel"), RandomPlayer(), games=4, variant=V, openings=4, threads=2)
    assert result.wins >= 3, result


@pytest.mark.parametrize("root", ["puct", "gumbel"])
def test_network_evaluator(root, torch_one_thread):
    nn = pytest.importorskip("taikyoku.nn")
    net = nn.PolicyValueNet(channels=8, blocks=1, head_channels=8, variant=V)
    player = MctsPlayer(8, evaluator=net.evaluator(), root=root)
    one = match(player, RandomPlayer(), games=2, variant=V, openings=2, max_plies=16, threads=1)
    two = match(player, RandomPlayer(), games=2, variant=V, openings=2, max_plies=16, threads=2)
    assert one == two


# -- PolicyPlayer ----------------------------------------------------------------------------------


def test_importing_the_arena_does_not_import_torch():
    code = "import sys, taikyoku.arena; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=TIMEOUT)


@pytest.fixture
def torch_one_thread():
    """One intra-op thread: a batch of one position gains nothing from more, and on a busy
    machine OpenMP's waiting threads make each call a hundred times slower."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield torch
    torch.set_num_threads(threads)


def test_policy_player(torch_one_thread):
    nn = pytest.importorskip("taikyoku.nn")
    torch = torch_one_thread
    torch.manual_seed(0)
    net = nn.PolicyValueNet(channels=8, blocks=1, head_channels=8, variant=V)
    net.train()
    greedy = PolicyPlayer(net)
    assert net.training and not greedy.net.training  # a frozen copy; the caller's net is left alone
    game = taikyoku.Game(V)
    actions = game.legal_actions()
    with torch.inference_mode():
        out = greedy.net(
            torch.from_numpy(game.observation(compact=True).astype(np.int32))[None],
            torch.from_numpy(actions),
            torch.tensor([0, len(actions)]),
        )
    assert greedy(game) == int(actions[int(out.logits.argmax())])
    hot = PolicyPlayer(net, temperature=5.0, seed=1)
    for _ in range(6):  # samples: a legal action, reproducible
        assert hot(game) == hot(game) and hot(game) in set(game.legal_actions().tolist())
        game.play(hot(game))
    one = match(greedy, hot, games=2, variant=V, openings=2, max_plies=12, threads=1)
    two = match(greedy, hot, games=2, variant=V, openings=2, max_plies=12, threads=2)
    assert one == two
    with pytest.raises(PlayerError, match="made for tenjiku, not daidai"):
        match(greedy, RandomPlayer(), games=1, variant="daidai")
    with pytest.raises(taikyoku.TaikyokuError, match="temperature"):
        PolicyPlayer(net, temperature=-1.0)
    with pytest.raises(taikyoku.TaikyokuError, match="torch module"):
        PolicyPlayer("net.pt")  # type: ignore[arg-type]


# -- statistics ------------------------------------------------------------------------------------


def test_elo_formula():
    assert elo(0.75) == pytest.approx(190.8485, abs=1e-4)  # -400 log10(1/3)
    assert elo(0.25) == pytest.approx(-190.8485, abs=1e-4)
    assert elo(0.5) == 0.0
    assert elo(10 / 11) == pytest.approx(400.0)  # odds of 10: 400 Elo
    assert elo(1.0) == math.inf and elo(0) == -math.inf
    for s in (0.1, 0.3, 0.5, 0.64, 0.99):
        assert expected_score(elo(s)) == pytest.approx(s)
    assert expected_score(math.inf) == 1.0 and expected_score(-1e9) == 0.0
    with pytest.raises(taikyoku.TaikyokuError):
        elo(1.5)
    with pytest.raises(taikyoku.TaikyokuError):
        expected_score(float("nan"))


def test_interval_from_the_trinomial():
    w, d, lost = 12, 3, 5
    n = w + d + lost
    s = (w + d / 2) / n
    se = math.sqrt((w * (1 - s) ** 2 + d * (0.5 - s) ** 2 + lost * s**2) / n / n)
    low, high = score_interval(w, d, lost)
    assert s - low == pytest.approx(high - s) == pytest.approx(1.959964 * se, rel=1e-6)  # symmetric in score
    r = MatchResult(w, d, lost)
    assert (r.games, r.score) == (20, 0.675)
    assert r.elo_low < r.elo < r.elo_high
    assert (r.elo_low, r.elo_high) == pytest.approx((elo(low), elo(high)))
    assert r.elo == pytest.approx(127.0, abs=0.5) and r.elo_low == pytest.approx(-8.3, abs=0.5)
    assert str(r) == "W 12  D 3  L 5  score 0.675  Elo +127 [-8, +318] (95%)"
    wide = score_interval(w, d, lost, confidence=0.99)
    assert wide[0] < low and wide[1] > high
    assert elo_interval(w, d, lost) == (r.elo_low, r.elo_high)
    # More games, the same score: a narrower interval.
    assert MatchResult(120, 30, 50).elo_high - MatchResult(120, 30, 50).elo_low < r.elo_high - r.elo_low


def test_perfect_scores_are_infinite():
    r = MatchResult(5, 0, 0)
    assert r.score == 1.0 and r.elo == r.elo_high == math.inf
    assert r.elo_low == pytest.approx(elo(0.025 ** (1 / 5)))  # the exact binomial bound
    assert "Elo +inf [" in str(r) and str(r).endswith(", +inf] (95%)")
    z = MatchResult(0, 0, 7)
    assert z.elo == z.elo_low == -math.inf and z.elo_high == pytest.approx(-elo(0.025 ** (1 / 7)))
    with pytest.raises(taikyoku.TaikyokuError):
        MatchResult(0, 0, 0)
    with pytest.raises(taikyoku.TaikyokuError):
        MatchResult(-1, 2, 3)


# -- Bradley-Terry ---------------------------------------------------------------------------------


def expected_rows(truth, games=100, draw_share=0.2):
    """Rows whose counts are the expected ones under the logistic model (draws split evenly)."""
    names = list(truth)
    rows = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            s = expected_score(truth[a] - truth[b])
            draws = draw_share * games * 2 * min(s, 1 - s)  # keeps the wins and losses non-negative
            wins = s * games - draws / 2
            rows.append((a, b, wins, draws, games - wins - draws))
    return rows


def test_bradley_terry_recovers_known_ratings():
    truth = {"zero": 0.0, "two": 200.0, "four": 400.0}
    fitted = ratings(expected_rows(truth))
    assert list(fitted) == ["zero", "two", "four"]
    assert fitted == pytest.approx(truth, abs=1e-3)
    assert ratings(expected_rows(truth), anchor="four") == pytest.approx(
        {k: v - 400 for k, v in truth.items()}, abs=1e-3
    )
    # A chain (zero-two, two-four only) determines them too.
    chain = [row for row in expected_rows(truth) if {row[0], row[1]} != {"zero", "four"}]
    assert ratings(chain) == pytest.approx(truth, abs=1e-3)
    # Rows the other way round and split in two add up.
    a, b, w, d, lost = expected_rows(truth)[0]
    flipped = [(b, a, lost / 2, d / 2, w / 2), (b, a, lost / 2, d / 2, w / 2)] + expected_rows(truth)[1:]
    assert ratings(flipped, anchor="zero") == pytest.approx(truth, abs=1e-3)


def test_bradley_terry_of_two_players_is_the_match_elo():
    r = MatchResult(12, 3, 5)
    assert ratings([("a", "b", r)]) == pytest.approx({"a": 0.0, "b": -r.elo})
    assert ratings([("a", "b", 12, 3, 5)]) == pytest.approx({"a": 0.0, "b": -r.elo})


def test_bradley_terry_errors():
    with pytest.raises(taikyoku.TaikyokuError, match="do not connect every player"):
        ratings([("a", "b", 3, 1, 2), ("c", "d", 2, 2, 2)])
    with pytest.raises(taikyoku.TaikyokuError, match="unbounded"):
        ratings([("a", "b", 3, 0, 0), ("b", "c", 2, 1, 1)])
    bounded = ratings([("a", "b", 3, 0, 0), ("b", "c", 2, 1, 1)], prior=1.0)
    assert bounded["a"] == 0.0 and bounded["b"] < 0 and all(math.isfinite(v) for v in bounded.values())
    with pytest.raises(taikyoku.TaikyokuError, match="cannot play itself"):
        ratings([("a", "a", 1, 0, 1)])
    with pytest.raises(taikyoku.TaikyokuError, match="results row 0"):
        ratings([("a", "b", 1, 2)])
    with pytest.raises(taikyoku.TaikyokuError, match="losses"):
        ratings([("a", "b", 1, 2, -3)])
    with pytest.raises(taikyoku.TaikyokuError, match="anchor"):
        ratings([("a", "b", 1, 1, 1)], anchor="z")
    with pytest.raises(taikyoku.TaikyokuError, match="no results"):
        ratings([])


# -- specifications and the command line -------------------------------------------------------------


def test_player_specifications():
    assert repr(player_from_spec("random", V)) == "RandomPlayer(seed=0)"
    assert repr(player_from_spec("random:7", V)) == "RandomPlayer(seed=7)"
    mcts = player_from_spec("mcts:64", V)
    assert isinstance(mcts, MctsPlayer) and mcts.simulations == 64 and mcts.root == "puct" and mcts.evaluator is None
    for spec, words in [
        ("alphabeta", "unknown player"),
        ("mcts", "mcts:N"),
        ("mcts:x", "simulations must be an integer"),
        ("mcts:0", "simulations must be between"),
        ("policy", "policy:FILE.pt"),
        ("random:-1", "seed must be between"),
    ]:
        with pytest.raises(taikyoku.TaikyokuError, match=words):
            player_from_spec(spec, V)
    with pytest.raises(taikyoku.TaikyokuError, match="unknown variant"):
        player_from_spec("random", "chess")


def test_network_specifications_load_through_taikyoku_nn(tmp_path, monkeypatch, torch_one_thread):
    nn = pytest.importorskip("taikyoku.nn")
    loaded = []

    def load(path, variant=None, map_location="cpu"):
        loaded.append((path, variant))
        return nn.PolicyValueNet(channels=4, blocks=0, head_channels=4, variant=variant)

    def pretrained(variant):
        loaded.append(("pretrained", variant))
        return nn.PolicyValueNet(channels=4, blocks=0, head_channels=4, variant=variant)

    monkeypatch.setattr(nn, "load", load, raising=False)
    monkeypatch.setattr(nn, "pretrained", pretrained, raising=False)
    weights = tmp_path / "net.pt"
    weights.write_bytes(b"")
    assert isinstance(player_from_spec(f"policy:{weights}", V), PolicyPlayer)
    assert isinstance(player_from_spec("pretrained", V), PolicyPlayer)
    assert isinstance(player_from_spec("policy:pretrained", V), PolicyPlayer)
    assert loaded == [(str(weights), V), ("pretrained", V), ("pretrained", V)]
    with pytest.raises(taikyoku.TaikyokuError, match="does not exist"):
        player_from_spec(f"policy:{tmp_path / 'missing.pt'}", V)
    for spec in (f"mcts:8:{weights}", f"gumbel:8:{weights}", "gumbel:8:pretrained"):
        player = player_from_spec(spec, V)
        assert isinstance(player, MctsPlayer) and player.evaluator is not None


def test_cli_match(capsys):
    argv = [
        "match",
        "mcts:32",
        "random",
        "--variant",
        V,
        "--games",
        "4",
        "--openings",
        "2",
        "--threads",
        "2",
        "--quiet",
    ]
    code, out, err = run_cli(argv, capsys)
    assert code == 0, err
    assert "A: mcts:32  B: random" in out
    line = next(line for line in out.splitlines() if line.startswith("W "))
    assert "score" in line and "Elo" in line and "(95%)" in line
    result = match(MctsPlayer(32), RandomPlayer(), games=4, variant=V, openings=2, threads=1)
    assert str(result) in out  # the command is the library
    assert "A as black: W" in out and "endings:" in out


@pytest.mark.parametrize(
    "argv,words",
    [
        (["match", "mcts:32", "alphabeta"], "unknown player 'alphabeta'"),
        (["match", "mcts:0", "random"], "simulations must be between"),
        (["match", "random", "random", "--games", "0"], "--games must be between"),
        (["match", "random", "random", "--openings", "-1"], "--openings must be between"),
        (["match", "random", "random", "--threads", "0"], "--threads must be between"),
        (["match", "random", "random", "--openings", "5000", "--variant", V], "openings=5000"),
        (["match", "random", "random", "--max-plies", "4", "--openings", "4"], "fewer than max_plies"),
        (["match", "random", "random", "--variant", V, "--option", "bogus"], "bogus"),
        (["match", "policy:missing.pt", "random", "--variant", V], "missing.pt"),
    ],
)
def test_cli_match_bad_arguments(argv, words, capsys, in_tmp):
    code, out, err = run_cli(argv, capsys)
    assert code == 2, (code, out, err)
    assert err.startswith("usage: taikyoku match") and "Traceback" not in err
    last = err.rstrip("\n").splitlines()[-1]
    assert last.startswith("taikyoku match: error: ") and words in last, err
