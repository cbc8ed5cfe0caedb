"""taikyoku.nn: action decoding against the engine, segment operations against per-row references,
dataset targets, the reference network and its MCTS evaluator inside taikyoku.selfplay."""

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import taikyoku  # noqa: E402
import taikyoku.datasets as tds  # noqa: E402
import taikyoku.nn as tnn  # noqa: E402
from conftest import contents  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
MCTS_SAMPLE = REPO / "datasets" / "samples" / "mcts-tiny"
RANDOM_SAMPLE = REPO / "datasets" / "samples" / "random-tiny"

TIMEOUT = 120
pytestmark = pytest.mark.usefixtures("no_hang")


# -- helpers --------------------------------------------------------------------------------------


def csr(lengths, seed=0, dtype=torch.float64):
    """Random flat logits with CSR offsets for rows of the given lengths."""
    offsets = torch.zeros(len(lengths) + 1, dtype=torch.long)
    offsets[1:] = torch.cumsum(torch.tensor(lengths, dtype=torch.long), 0)
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(int(offsets[-1]), generator=gen, dtype=dtype) * 3, offsets


def rows_of(flat, offsets):
    return [flat[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)]


def lion_position(side: str) -> taikyoku.Game:
    """docs/ACTIONS.md's worked example: a lion with double captures and igui (multi-leg actions)."""
    g = taikyoku.Game.empty(side_to_move=side)
    g.place("18r", "LN", side)
    other = "white" if side == "black" else "black"
    g.place("18q", "P", other)
    g.place("17p", "P", other)
    g.place("19s", "P", other)
    g.place("1a", "K", "white")
    g.place("1jj", "K", "black")
    return g


def random_positions(plies=(0, 1, 30, 31, 200, 401), seed=0, variant="taikyoku"):
    """Positions reached by seeded random play (both sides to move)."""
    rng = np.random.default_rng(seed)
    out, g = [], taikyoku.Game(variant)
    for ply in range(max(plies) + 1):
        if ply in plies:
            out.append(g.clone())
        legal = g.legal_actions()
        if len(legal) == 0:
            break
        g.play(int(rng.choice(legal)))
    return out


def positions():
    # Tenjiku's promotion zone gives actions in the promotion block.
    tenjiku = random_positions((60, 61, 150, 151), variant="tenjiku")
    return random_positions() + [lion_position("black"), lion_position("white")] + tenjiku


def grid_square(g: taikyoku.Game, square: str) -> int:
    """The grid square of a board square in the mover's frame (docs/ACTIONS.md §1)."""
    column, row = g.square_xy(square)
    if g.side_to_move == "white":
        row, column = g.height - 1 - row, g.width - 1 - column
    return row * taikyoku.GRID + column


def batch_of(games):
    """Compact observations and CSR legal actions of some games, as the evaluator receives them."""
    legal = [g.legal_actions() for g in games]
    offsets = np.zeros(len(games) + 1, np.int64)
    offsets[1:] = np.cumsum([len(x) for x in legal])
    return taikyoku.encode_observations(games, compact=True), np.concatenate(legal), offsets


# -- actions --------------------------------------------------------------------------------------


def test_decode_matches_the_engine_and_encode_inverts_it():
    multi_leg = promoting = 0
    templates = taikyoku.action_templates()
    for g in positions():
        actions = g.legal_actions()
        parts = tnn.decode_actions(actions)
        for a, f, t, k, p in zip(actions.tolist(), *(part.tolist() for part in parts)):
            move = g.move_of(a)
            assert f == grid_square(g, move.from_square), move.notation
            assert t == grid_square(g, move.to_square), move.notation
            assert p == (a >= taikyoku.PROMOTION_BLOCK)
            assert (k >= 0) == (a % taikyoku.PROMOTION_BLOCK >= taikyoku.MOVE_BLOCK)
            if p:
                promoting += 1
                assert move.promotes, move.notation
            if k >= 0:
                multi_leg += 1
                (dr, dc) = templates[k][0][0]  # the first square captured on the way
                assert f + dr * taikyoku.GRID + dc == grid_square(g, move.mid_square), move.notation
        again = tnn.encode_actions(parts.from_square, parts.to_square, parts.template, parts.promotes)
        assert again.tolist() == actions.tolist()
    # The lion positions exercise the multi-leg block, Tenjiku's promotion zone the promotion block.
    assert multi_leg > 0 and promoting > 0


def test_pass_and_igui_end_on_their_start_square():
    g = lion_position("black")
    parts = tnn.decode_actions(g.legal_actions())
    kinds = {g.move_of(int(a)).notation: (int(f), int(t)) for a, f, t in zip(g.legal_actions(), parts.from_square, parts.to_square)}
    assert kinds["LN-!18r"][0] == kinds["LN-!18r"][1]  # the lion's pass
    assert kinds["LNx!18q+"][0] == kinds["LNx!18q+"][1]  # igui


def test_move_kinds_are_in_range_and_shared_by_equal_displacements():
    actions = np.concatenate([g.legal_actions() for g in positions()])
    kinds = tnn.move_kinds(actions)
    assert int(kinds.min()) >= 0 and int(kinds.max()) < tnn.NUM_MOVE_KINDS
    # One step forward from two squares: the same kind.
    a, b = tnn.encode_actions([700, 900], [700 - taikyoku.GRID, 900 - taikyoku.GRID]).tolist()
    assert tnn.move_kinds([a]).item() == tnn.move_kinds([b]).item()
    # A template's kind differs from every simple move's, and a promoting move's from the plain one.
    multi = tnn.encode_actions([700], [0], [5])
    plain_kinds = tnn.NUM_MOVE_KINDS // 2
    assert plain_kinds - taikyoku.TEMPLATE_COUNT <= tnn.move_kinds(multi).item() < plain_kinds
    promoting = tnn.encode_actions([700, 700], [0, 0], [5, 5], [False, True])
    assert (tnn.move_kinds(promoting) - tnn.move_kinds(multi)).tolist() == [0, plain_kinds]


def test_out_of_range_actions_are_refused():
    with pytest.raises(ValueError, match="must lie in"):
        tnn.decode_actions([taikyoku.NUM_ACTIONS])
    with pytest.raises(ValueError, match="must lie in"):
        tnn.decode_actions([-1])
    with pytest.raises(ValueError, match="from_square"):
        tnn.encode_actions([taikyoku.GRID**2], [0])
    with pytest.raises(ValueError, match="template"):
        tnn.encode_actions([0], [0], [taikyoku.TEMPLATE_COUNT])
    with pytest.raises(ValueError, match="to_square"):
        tnn.encode_actions([0], [-1])


# -- segment operations -------------------------------------------------------------------------------

LENGTHS = [3, 1, 0, 7, 2, 0, 40]


def test_segment_log_softmax_matches_a_per_row_reference():
    logits, offsets = csr(LENGTHS)
    got = tnn.segment_log_softmax(logits, offsets)
    for row, out in zip(rows_of(logits, offsets), rows_of(got, offsets)):
        if len(row):
            torch.testing.assert_close(out, torch.log_softmax(row, 0))
    probs = tnn.segment_softmax(logits, offsets)
    sums = torch.zeros(len(LENGTHS), dtype=probs.dtype).index_add(0, tnn.segment_ids(offsets), probs)
    torch.testing.assert_close(sums, torch.tensor([1.0 if n else 0.0 for n in LENGTHS], dtype=probs.dtype))


def test_segment_logsumexp_is_stable_and_empty_rows_are_minus_infinity():
    logits = torch.tensor([1000.0, 1000.0, -1000.0, 5.0])
    offsets = torch.tensor([0, 2, 2, 3, 4])
    got = tnn.segment_logsumexp(logits, offsets)
    torch.testing.assert_close(got[[0, 2, 3]], torch.tensor([1000.0 + math.log(2.0), -1000.0, 5.0]))
    assert got[1] == float("-inf")


def test_segment_log_softmax_gradients():
    logits, offsets = csr([3, 1, 5, 0, 2])
    logits.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda x: tnn.segment_log_softmax(x, offsets), (logits,))
    targets = torch.rand(logits.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    assert torch.autograd.gradcheck(lambda x: tnn.policy_loss(x, offsets, targets), (logits,))


def test_segment_max_and_argmax():
    values = torch.tensor([1.0, 3.0, 3.0, -2.0, 0.5, 0.5])
    offsets = torch.tensor([0, 3, 3, 4, 6])
    torch.testing.assert_close(tnn.segment_max(values, offsets), torch.tensor([3.0, float("-inf"), -2.0, 0.5]))
    assert tnn.segment_argmax(values, offsets).tolist() == [1, -1, 3, 4]  # first on ties, -1 when empty


def test_segment_sample_respects_segments_and_is_seeded():
    logits, offsets = csr(LENGTHS, dtype=torch.float32)
    draws = [tnn.segment_sample(logits, offsets, generator=torch.Generator().manual_seed(s)) for s in range(50)]
    for draw in draws:
        for i, n in enumerate(LENGTHS):
            if n == 0:
                assert draw[i] == -1
            else:
                assert offsets[i] <= draw[i] < offsets[i + 1]
    again = tnn.segment_sample(logits, offsets, generator=torch.Generator().manual_seed(0))
    assert torch.equal(draws[0], again)
    assert any(not torch.equal(draws[0], d) for d in draws[1:])


def test_segment_sample_follows_the_softmax():
    row = torch.tensor([0.0, 1.0, 2.0, -1.0])
    copies = 20_000
    logits = row.repeat(copies)
    offsets = torch.arange(copies + 1) * len(row)
    index = tnn.segment_sample(logits, offsets, generator=torch.Generator().manual_seed(3))
    frequencies = torch.bincount(index % len(row), minlength=len(row)).double() / copies
    # Binomial standard deviations are below 0.0035 here: 0.02 is more than 5 of them.
    torch.testing.assert_close(frequencies, torch.softmax(row.double(), 0), atol=0.02, rtol=0)


def test_segment_log_prob_matches_the_reference():
    logits, offsets = csr([4, 1, 9])
    index = torch.tensor([2, 4, 10])
    got = tnn.segment_log_prob(logits, offsets, index)
    want = [torch.log_softmax(r, 0)[i - offsets[k]] for k, (r, i) in enumerate(zip(rows_of(logits, offsets), index))]
    torch.testing.assert_close(got, torch.stack(want))


def test_policy_loss_is_cross_entropy_with_normalised_targets():
    logits, offsets = csr([3, 4, 2, 0, 5])
    gen = torch.Generator().manual_seed(5)
    targets = torch.randint(0, 10, logits.shape, generator=gen).double()
    targets[offsets[2] : offsets[3]] = 0  # row 2 has no target
    want = []
    for row, weight in zip(rows_of(logits, offsets), rows_of(targets, offsets)):
        total = weight.sum()
        want.append(-(weight / total * torch.log_softmax(row, 0)).sum() if total > 0 else torch.tensor(0.0, dtype=row.dtype))
    want = torch.stack(want)
    torch.testing.assert_close(tnn.policy_loss(logits, offsets, targets, reduction="none"), want)
    torch.testing.assert_close(tnn.policy_loss(logits, offsets, targets, reduction="sum"), want.sum())
    torch.testing.assert_close(tnn.policy_loss(logits, offsets, targets), want.sum() / 3)  # rows 0, 1, 4
    with pytest.raises(ValueError, match="reduction"):
        tnn.policy_loss(logits, offsets, targets, reduction="max")
    with pytest.raises(ValueError, match="align"):
        tnn.policy_loss(logits, offsets, targets[:-1])


# -- data -----------------------------------------------------------------------------------------


def test_locate_and_targets():
    actions = np.array([9, 4, 7, 4, 5, 1], np.int64)  # rows unsorted on purpose
    offsets = np.array([0, 3, 3, 6], np.int64)
    assert tnn.locate(actions, offsets, [0, 0, 2, 2, 1, 0], [4, 7, 1, 9, 4, 5]).tolist() == [1, 2, 5, -1, -1, -1]
    # Out-of-range actions or rows never match a neighbouring row's key.
    n = taikyoku.NUM_ACTIONS
    assert tnn.locate(actions, offsets, [2, 0, -1, 3], [9 - 2 * n, 2 * n + 4, n + 9, 4]).tolist() == [-1, -1, -1, -1]
    weights = tnn.visit_targets(actions, offsets, np.array([7, 9, 1]), np.array([2, 5, 3]), np.array([0, 2, 2, 3]))
    assert weights.tolist() == [5, 0, 2, 0, 0, 3]
    assert tnn.played_targets(actions, offsets[[0, 1, 3]], np.array([4, 5])).tolist() == [0, 1, 0, 0, 1, 0]
    with pytest.raises(taikyoku.TaikyokuError, match="not among its legal actions"):
        tnn.visit_targets(actions, offsets, np.array([8]), np.array([1]), np.array([0, 1, 1, 1]))


@pytest.mark.parametrize("sample", [MCTS_SAMPLE, RANDOM_SAMPLE], ids=lambda p: p.name)
def test_legal_action_index_replays_the_games(sample):
    ds = tds.open(sample)
    index = tnn.LegalActionIndex.from_dataset(ds)
    assert len(index) == ds.num_positions
    positions = ds.positions
    game_ids = positions.column("game_id").to_numpy().astype(np.int64)
    plies = positions.column("ply").to_numpy().astype(np.int64)
    order = np.random.default_rng(0).permutation(len(game_ids))[:20]
    actions, offsets = index.lookup(game_ids[order], plies[order])
    for i, row in enumerate(order):
        g = ds.new_game()
        for a in ds.game(int(game_ids[row]))["actions"][: plies[row]]:
            g.play(a)
        assert actions[offsets[i] : offsets[i + 1]].tolist() == g.legal_actions().tolist()
    with pytest.raises(KeyError, match="no position"):
        index.lookup([int(game_ids.max()) + 1], [0])
    with pytest.raises(KeyError, match="no position"):
        index.lookup([int(game_ids[0])], [10_000])


def test_training_batches_carry_the_visits_and_outcomes():
    ds = tds.open(MCTS_SAMPLE)
    index = tnn.LegalActionIndex.from_dataset(ds)
    raw = next(ds.batches(batch_size=ds.num_positions, compact=True))
    batch = tnn.training_batch(raw, index)
    assert len(batch) == ds.num_positions
    assert batch.observations.shape == (ds.num_positions, 36, 36, 8)
    per_row = torch.zeros(len(batch), dtype=torch.float32).index_add(0, tnn.segment_ids(batch.offsets), batch.policy)
    assert per_row.tolist() == np.add.reduceat(raw["visit_counts"], raw["visit_offsets"][:-1]).astype(np.float32).tolist()
    assert batch.value.tolist() == raw["outcome"].astype(np.float32).tolist()
    # Random-play datasets have no visits: the target is the move played.
    rds = tds.open(RANDOM_SAMPLE)
    stream = tnn.training_batches(rds, batch_size=16, seed=0, epochs=1)
    batches = list(stream)
    assert sum(len(b) for b in batches) == rds.num_positions // 16 * 16  # full batches only
    for b in batches:
        assert b.policy.sum().item() == len(b)


def test_stored_legal_actions_replace_the_replay(tmp_path):
    # The same games with and without the stored column: the index and the batches agree.
    settings = dict(players="mcts", simulations=8, games=3, max_plies=12, seed=4, threads=1, progress=False)
    taikyoku.selfplay(tmp_path / "replayed", **settings)
    taikyoku.selfplay(tmp_path / "stored", store_legal_actions=True, **settings)
    replayed, stored = tds.open(tmp_path / "replayed"), tds.open(tmp_path / "stored")
    assert stored.has_legal_actions and not replayed.has_legal_actions
    a, b = tnn.LegalActionIndex.from_dataset(replayed), tnn.LegalActionIndex.from_dataset(stored)
    for name in ("game_ids", "plies", "actions", "offsets"):
        assert getattr(a, name).tolist() == getattr(b, name).tolist(), name
    raw = next(stored.batches(batch_size=stored.num_positions, compact=True))
    own, looked_up = tnn.training_batch(raw), tnn.training_batch(raw, a)
    assert own.actions.tolist() == looked_up.actions.tolist() and own.policy.tolist() == looked_up.policy.tolist()
    raw = next(replayed.batches(batch_size=replayed.num_positions, compact=True))
    with pytest.raises(ValueError, match="needs legal"):
        tnn.training_batch(raw)
    assert sum(len(x) for x in tnn.training_batches(stored, batch_size=4, epochs=1)) == stored.num_positions // 4 * 4


# -- the network and its evaluator ------------------------------------------------------------------


def small_net(seed=0):
    torch.manual_seed(seed)
    return tnn.PolicyValueNet(channels=8, blocks=1, head_channels=8)


def test_network_scores_only_the_legal_actions():
    obs, actions, offsets = batch_of(random_positions() + [lion_position("white")])
    net = small_net()
    out = net(torch.from_numpy(obs.astype(np.int32)), torch.from_numpy(actions), torch.from_numpy(offsets))
    assert out.logits.shape == (len(actions),) and out.values.shape == (len(offsets) - 1,)
    assert torch.isfinite(out.logits).all() and (out.values.abs() < 1).all()
    loss = tnn.policy_loss(out.logits, torch.from_numpy(offsets), torch.ones(len(actions))) + out.values.square().mean()
    loss.backward()
    assert all(p.grad is not None for p in net.parameters())
    with pytest.raises(ValueError, match="compact observations"):
        net(torch.zeros(1, 36, 36, 609, dtype=torch.int32), torch.from_numpy(actions[:3]), torch.tensor([0, 3]))


def test_each_position_is_scored_on_its_own():
    # In eval mode a position's output does not depend on the rest of its batch.
    games = random_positions()
    obs, actions, offsets = batch_of(games)
    net = small_net().eval()
    with torch.no_grad():
        whole = net(torch.from_numpy(obs.astype(np.int32)), torch.from_numpy(actions), torch.from_numpy(offsets))
        for i, g in enumerate(games):
            o, a, f = batch_of([g])
            alone = net(torch.from_numpy(o.astype(np.int32)), torch.from_numpy(a), torch.from_numpy(f))
            torch.testing.assert_close(alone.logits, whole.logits[offsets[i] : offsets[i + 1]], atol=1e-5, rtol=1e-4)
            torch.testing.assert_close(alone.values, whole.values[i : i + 1], atol=1e-5, rtol=1e-4)


def test_evaluator_returns_priors_and_values():
    games = random_positions() + [lion_position("black")]
    obs, actions, offsets = batch_of(games)
    net = small_net().train()
    evaluator = net.evaluator()
    priors, values = evaluator(obs, (actions, offsets))
    assert priors.dtype == np.float32 and priors.shape == actions.shape
    assert values.dtype == np.float32 and values.shape == (len(games),)
    np.testing.assert_allclose(np.add.reduceat(priors, offsets[:-1]), 1.0, rtol=1e-5)
    assert (priors >= 0).all() and (np.abs(values) <= 1).all()
    assert net.training  # the evaluator restores the network's mode
    listed, values_listed = evaluator(obs, [actions[offsets[i] : offsets[i + 1]] for i in range(len(games))])
    np.testing.assert_allclose(listed, priors, rtol=1e-6)
    np.testing.assert_allclose(values_listed, values, rtol=1e-6)


def test_evaluator_guides_selfplay_reproducibly(tmp_path):
    net = small_net()
    settings = dict(players="mcts", games=3, max_plies=10, simulations=12, games_per_shard=2, evaluator=net.evaluator())
    one = taikyoku.selfplay(tmp_path / "one", threads=1, **settings)
    two = taikyoku.selfplay(tmp_path / "two", threads=2, **settings)
    assert one["games"] == two["games"] == 3 and one["positions"] > 0
    ds = tds.open(tmp_path / "one")
    assert ds.settings["network"]["name"] == "taikyoku.nn.NetworkEvaluator"
    assert ds.settings["network"]["observation"] == "compact"
    ds.verify()
    # A deterministic network gives the same files whatever the thread count.
    assert contents(tmp_path / "one") == contents(tmp_path / "two")
    # And the games it played train: every visited action is legal where it was visited.
    batch = next(tnn.training_batches(ds, batch_size=8, seed=0))
    total, policy, value = tnn.policy_value_loss(net, batch)
    assert torch.isfinite(total) and policy > 0


def test_a_network_for_another_variant_plays_it(tmp_path):
    torch.manual_seed(0)
    net = tnn.PolicyValueNet(channels=8, blocks=1, head_channels=8, variant="tenjiku")
    summary = taikyoku.selfplay(tmp_path / "tenjiku", players="mcts", variant="tenjiku", games=1, max_plies=6,
                                simulations=8, evaluator=net.evaluator())
    ds = tds.open(tmp_path / "tenjiku")
    assert summary["positions"] == ds.num_positions > 0 and ds.variant == "tenjiku"
    batch = next(tnn.training_batches(ds, batch_size=4, seed=0))
    assert torch.isfinite(tnn.policy_value_loss(net, batch)[0])


def test_import_without_torch_says_what_to_install():
    code = "import sys; sys.modules['torch'] = None\nimport taikyoku\nassert 'taikyoku.nn' not in sys.modules\nimport taikyoku.nn"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert 'pip install "taikyoku[torch]"' in result.stderr
    plain = subprocess.run([sys.executable, "-c", "import sys, taikyoku; assert 'torch' not in sys.modules"], timeout=60)
    assert plain.returncode == 0
