"""taikyoku.nn: action decoding against the engine, segment operations against per-row references,
dataset targets, the reference network and its MCTS evaluator inside taikyoku.selfplay."""

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from conftest import contents  # noqa: E402

import taikyoku  # noqa: E402
import taikyoku.datasets as tds  # noqa: E402
import taikyoku.nn as tnn  # noqa: E402

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
    kinds = {
        g.move_of(int(a)).notation: (int(f), int(t))
        for a, f, t in zip(g.legal_actions(), parts.from_square, parts.to_square)
    }
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
        want.append(
            -(weight / total * torch.log_softmax(row, 0)).sum() if total > 0 else torch.tensor(0.0, dtype=row.dtype)
        )
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
    assert (
        per_row.tolist() == np.add.reduceat(raw["visit_counts"], raw["visit_offsets"][:-1]).astype(np.float32).tolist()
    )
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
    summary = taikyoku.selfplay(
        tmp_path / "tenjiku",
        players="mcts",
        variant="tenjiku",
        games=1,
        max_plies=6,
        simulations=8,
        evaluator=net.evaluator(),
    )
    ds = tds.open(tmp_path / "tenjiku")
    assert summary["positions"] == ds.num_positions > 0 and ds.variant == "tenjiku"
    batch = next(tnn.training_batches(ds, batch_size=4, seed=0))
    assert torch.isfinite(tnn.policy_value_loss(net, batch)[0])


def test_import_without_torch_says_what_to_install():
    code = "import sys; sys.modules['torch'] = None\nimport taikyoku\nassert 'taikyoku.nn' not in sys.modules\nimport taikyoku.nn"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert 'pip install "taikyoku[torch]"' in result.stderr
    plain = subprocess.run(
        [sys.executable, "-c", "import sys, taikyoku; assert 'torch' not in sys.modules"], timeout=60
    )
    assert plain.returncode == 0


# -- networks sized to the variant ------------------------------------------------------------------


def reference_logits(net, obs, actions, offsets):
    """PolicyValueNet's logits recomputed action by action from its cropped features (a Python loop)."""
    with torch.no_grad():
        x = net.features(obs)
        board = obs[:, : net.height, : net.width]
        on_board = board[..., net._on_board].unsqueeze(1).float()
        mean = (x * on_board).sum((2, 3)) / on_board.sum((2, 3)).clamp_min(1.0)
        origin, target = net.policy_from(x), net.policy_to(x)
        parts = tnn.decode_actions(actions)
        kinds = tnn.move_kinds(actions, parts)
        out = []
        for b in range(len(offsets) - 1):
            for j in range(int(offsets[b]), int(offsets[b + 1])):
                fr, fc = divmod(int(parts.from_square[j]), taikyoku.GRID)
                tr, tc = divmod(int(parts.to_square[j]), taikyoku.GRID)
                hidden = (
                    origin[b, :, fr, fc]
                    + target[b, :, tr, tc]
                    + net.kind_embedding.weight[kinds[j]]
                    + net.policy_global(mean[b])
                )
                out.append(net.policy_out(torch.relu(hidden)).squeeze(-1))
        return torch.stack(out)


@pytest.mark.parametrize("variant", ["tenjiku", "taishin", "taikyoku"])
def test_network_runs_on_the_variants_board(variant):
    torch.manual_seed(0)
    net = tnn.PolicyValueNet(channels=8, blocks=1, head_channels=8, variant=variant).eval()
    empty = taikyoku.Game.empty(variant)
    assert (net.height, net.width) == (empty.height, empty.width)
    games = random_positions((0, 1, 31), variant=variant)
    obs, actions, offsets = batch_of(games)
    obs, actions, offsets = torch.from_numpy(obs.astype(np.int32)), torch.from_numpy(actions), torch.from_numpy(offsets)
    assert net.features(obs).shape == (len(games), 8, net.height, net.width)
    with torch.no_grad():
        out = net(obs, actions, offsets)
        torch.testing.assert_close(out.logits, reference_logits(net, obs, actions, offsets), atol=1e-5, rtol=1e-4)
        # Observations cropped beforehand give the same outputs, and the padding is never read.
        cropped = net(obs[:, : net.height, : net.width].clone(), actions, offsets)
        torch.testing.assert_close(cropped.logits, out.logits)
        torch.testing.assert_close(cropped.values, out.values)
        noisy = obs.clone()
        noisy[:, net.height :] = 7
        noisy[:, :, net.width :] = 7
        torch.testing.assert_close(net(noisy, actions, offsets).logits, out.logits)
    with pytest.raises(ValueError, match="grid or of the"):
        net(obs[:, :5, :5], actions, offsets)


def test_no_weight_depends_on_the_board_size():
    # The same weights run on the whole 36 x 36 grid, as networks did before they were sized to
    # their variant: checkpoints of either kind load into the other.
    torch.manual_seed(0)
    net = tnn.PolicyValueNet(channels=8, blocks=1, head_channels=8, variant="tenjiku").eval()
    whole = tnn.PolicyValueNet(channels=8, blocks=1, head_channels=8, variant="tenjiku").eval()
    whole.height = whole.width = taikyoku.GRID
    whole.load_state_dict(net.state_dict())
    obs, actions, offsets = batch_of(random_positions((0, 40), variant="tenjiku"))
    obs, actions, offsets = torch.from_numpy(obs.astype(np.int32)), torch.from_numpy(actions), torch.from_numpy(offsets)
    with torch.no_grad():
        assert whole.features(obs).shape[-2:] == (taikyoku.GRID, taikyoku.GRID)
        assert net.features(obs).shape[-2:] == (16, 16)
        a, b = net(obs, actions, offsets), whole(obs, actions, offsets)
    assert a.logits.shape == b.logits.shape and torch.isfinite(b.logits).all()


# -- value targets of decided games only ------------------------------------------------------------


@pytest.fixture(scope="module")
def mixed_results(tmp_path_factory):
    """A Tenjiku MCTS dataset of 4 one-game shards: one decided game, three cut by max_plies."""
    out = tmp_path_factory.mktemp("mixed") / "ds"
    taikyoku.selfplay(
        out,
        players="mcts",
        variant="tenjiku",
        games=4,
        simulations=8,
        max_plies=40,
        seed=8,  # game 1 decided, games 0, 2 and 3 cut (seeds chosen for the mix)
        games_per_shard=1,
        threads=1,
        progress=False,
    )
    ds = tds.open(out)
    results = ds.games.column("result").to_pylist()
    assert None in results and any(r is not None for r in results)
    return ds


@pytest.mark.parametrize("shuffle", [False, True])
def test_batches_say_which_positions_have_a_decided_game(mixed_results, shuffle):
    ds = mixed_results
    has_result = {
        g: r is not None for g, r in zip(ds.games.column("game_id").to_pylist(), ds.games.column("result").to_pylist())
    }
    seen = 0
    for batch in ds.batches(batch_size=7, shuffle=shuffle, seed=3, compact=True):  # batches span shards
        assert batch["decided"].dtype == np.bool_
        assert batch["decided"].tolist() == [has_result[int(g)] for g in batch["game_id"]]
        seen += len(batch["decided"])
    assert seen == ds.num_positions
    # A subset reads only its own games' results.
    one = ds.subset([3])
    assert all(
        b["decided"].tolist() == [has_result[3]] * len(b["decided"]) for b in one.batches(batch_size=5, compact=True)
    )


def test_the_value_loss_leaves_truncated_games_out(mixed_results):
    ds = mixed_results
    batch = next(tnn.training_batches(ds, batch_size=ds.num_positions, seed=0, epochs=1))
    assert batch.value_mask.dtype == torch.bool and 0 < int(batch.value_mask.sum()) < len(batch)
    net = tnn.PolicyValueNet(channels=8, blocks=1, head_channels=8, variant="tenjiku")
    total, policy, value = tnn.policy_value_loss(net, batch)
    with torch.no_grad():
        values = net(batch.observations, batch.actions, batch.offsets).values
    kept = [(float(v) - float(z)) ** 2 for v, z, m in zip(values, batch.value, batch.value_mask) if m]
    assert value.item() == pytest.approx(sum(kept) / len(kept), rel=1e-5)
    torch.testing.assert_close(total, policy + value)
    # No decided position: the value loss is 0 and still backpropagates.
    rds = tds.open(RANDOM_SAMPLE)  # two games cut at 60 plies
    random_batch = next(tnn.training_batches(rds, batch_size=16, seed=0))
    assert not random_batch.value_mask.any()
    small = small_net()
    total, policy, value = tnn.policy_value_loss(small, random_batch)
    assert value.item() == 0.0
    total.backward()
    assert all(p.grad is not None for p in small.parameters())
    # A batch without a mask (built by hand) counts every position.
    plain = tnn.TrainingBatch(
        random_batch.observations, random_batch.actions, random_batch.offsets, random_batch.policy, random_batch.value
    )
    assert plain.to("cpu").value_mask is None
    torch.testing.assert_close(tnn.value_loss(torch.tensor([0.5, -0.5]), torch.tensor([1.0, 0.0])), torch.tensor(0.25))
    torch.testing.assert_close(
        tnn.value_loss(torch.tensor([0.5, -0.5]), torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0])),
        torch.tensor(0.25),
    )


def test_truncated_games_can_take_the_search_value_as_a_bootstrapped_target(mixed_results):
    ds = mixed_results
    raw = next(ds.batches(ds.num_positions, compact=True))
    legal = tnn.LegalActionIndex.from_dataset(ds)
    masked = tnn.training_batch(raw, legal)
    booted = tnn.training_batch(raw, legal, truncated="root_value")
    decided = raw["decided"]
    # Decided games keep their outcome; the others take the root value, and now count.
    assert booted.value_mask.all() and masked.value_mask.tolist() == decided.tolist()
    assert booted.value[decided].tolist() == raw["outcome"][decided].astype(np.float32).tolist()
    assert booted.value[~decided].tolist() == raw["root_value"][~decided].tolist()
    assert booted.value[~decided].abs().sum() > 0  # real estimates, not the zeros of a truncation
    # Random players store no root value: nothing to bootstrap from, the mask stays.
    random_raw = next(tds.open(RANDOM_SAMPLE).batches(16, compact=True))
    legal = tnn.LegalActionIndex.from_dataset(tds.open(RANDOM_SAMPLE))
    assert not tnn.training_batch(random_raw, legal, truncated="root_value").value_mask.any()
    with pytest.raises(ValueError, match="truncated must be"):
        tnn.training_batch(raw, legal, truncated="zero")
    streamed = next(tnn.training_batches(ds, batch_size=8, seed=0, truncated="root_value"))
    assert streamed.value_mask.all()


# -- improved-policy targets ------------------------------------------------------------------------


def policy_type():
    import pyarrow as pa

    return pa.list_(
        pa.field(
            "item",
            pa.struct(
                [pa.field("action", pa.uint32(), nullable=False), pa.field("weight", pa.float32(), nullable=False)]
            ),
            nullable=False,
        )
    )


def improved_policy(legal_rows, seed=0):
    """A random distribution over each row's legal actions, as Gumbel self-play writes them (sorted, summing to 1)."""
    rng = np.random.default_rng(seed)
    out = []
    for row in legal_rows:
        row = sorted(int(a) for a in row)
        picked = sorted(rng.choice(row, size=min(3, len(row)), replace=False).tolist())
        weights = rng.random(len(picked)).astype(np.float32)
        out.append([{"action": a, "weight": float(w)} for a, w in zip(picked, weights / weights.sum())])
    return out


def with_policy_column(table, legal_rows, seed=0):
    import pyarrow as pa

    return table.append_column(
        pa.field(tds.POLICY, policy_type(), nullable=False), pa.array(improved_policy(legal_rows, seed), policy_type())
    )


def test_batches_carry_the_improved_policy_of_a_synthetic_table():
    import pyarrow as pa

    ds = tds.open(MCTS_SAMPLE)
    positions = ds.positions
    actions, offsets = ds.legal_actions()
    legal_rows = [actions[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)]
    table = with_policy_column(positions, legal_rows)
    # Chunked and sliced, as a batch spanning shards is.
    table = pa.concat_tables([table.slice(0, 3), table.slice(3)]).slice(1, 6)
    stored = table.column(tds.POLICY).to_pylist()
    batch = tds._make_batch(table, ds.variant, ds.options, dict(compact=True), visits=True)
    assert batch["policy_actions"].dtype == np.int64 and batch["policy_weights"].dtype == np.float32
    assert batch["policy_offsets"].dtype == np.int64 and batch["policy_offsets"][-1] == len(batch["policy_actions"])
    for i, row in enumerate(stored):
        lo, hi = batch["policy_offsets"][i], batch["policy_offsets"][i + 1]
        assert batch["policy_actions"][lo:hi].tolist() == [e["action"] for e in row]
        np.testing.assert_allclose(batch["policy_weights"][lo:hi], [e["weight"] for e in row])
    assert "policy_actions" not in tds._make_batch(table, ds.variant, ds.options, dict(compact=True), visits=False)
    # training_batch prefers it to the visits.
    index = tnn.LegalActionIndex.from_dataset(ds)
    target = tnn.training_batch(batch, index)
    for i, row in enumerate(stored):
        got = target.policy[target.offsets[i] : target.offsets[i + 1]]
        legal = target.actions[target.offsets[i] : target.offsets[i + 1]].tolist()
        want = np.zeros(len(legal), np.float32)
        for e in row:
            want[legal.index(e["action"])] = e["weight"]
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    visits_only = {k: v for k, v in batch.items() if not k.startswith("policy_")}
    assert not torch.equal(tnn.training_batch(visits_only, index).policy, target.policy)
    # An improved policy over an action that is not legal is an error naming it.
    bad = dict(batch, policy_actions=batch["policy_actions"].copy())
    bad["policy_actions"][0] = taikyoku.NUM_ACTIONS - 1
    with pytest.raises(taikyoku.TaikyokuError, match="improved-policy action"):
        tnn.training_batch(bad, index)


def rewrite_positions(root, change, gumbel=True):
    """Rewrites every positions file of a dataset with ``change(table, shard index)``, and its manifest
    checks; ``gumbel``: the manifest's players become a Gumbel root's, whose positions hold the policy column."""
    import json
    import zlib

    import pyarrow.parquet as pq

    manifest = json.loads((root / "manifest.json").read_text())
    if gumbel:
        manifest["settings"]["players"]["gumbel"] = {"considered": 16, "scale": 1.0}
    for i, shard in enumerate(sorted(manifest["shards"], key=lambda s: s["first_game"])):
        path = root / shard["positions_file"]
        table = change(pq.read_table(path), i)
        pq.write_table(table, path)
        raw = path.read_bytes()
        shard["checks"]["positions"] = {"bytes": len(raw), "crc32": zlib.crc32(raw)}
    (root / "manifest.json").write_text(json.dumps(manifest))


def test_a_dataset_with_the_policy_column_trains_on_it(tmp_path):
    import shutil

    import pyarrow as pa

    try:
        tds.positions_schema(policy=True)
    except TypeError:
        pytest.skip("this engine does not define the policy column yet (Gumbel self-play)")

    root = tmp_path / "gumbel"
    shutil.copytree(MCTS_SAMPLE, root)
    plain = tds.open(MCTS_SAMPLE)

    def add(table, shard):
        actions, offsets = plain.legal_actions(table)
        return with_policy_column(table, [actions[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)])

    rewrite_positions(root, add)
    ds = tds.open(root)
    assert ds.has_policy
    stored = ds.positions.column(tds.POLICY).to_pylist()
    rows = [b for b in ds.batches(batch_size=3, compact=True)]
    assert all({"policy_actions", "policy_weights", "policy_offsets", "decided"} <= set(b) for b in rows)
    assert [len(np.diff(b["policy_offsets"])) for b in rows] == [len(b["action"]) for b in rows]
    flat = np.concatenate([b["policy_actions"] for b in rows])
    assert flat.tolist() == [e["action"] for row in stored for e in row]
    batch = next(tnn.training_batches(ds, batch_size=ds.num_positions, seed=0, epochs=1))
    sums = torch.zeros(len(batch)).index_add(0, tnn.segment_ids(batch.offsets), batch.policy)
    torch.testing.assert_close(sums, torch.ones(len(batch)))  # the improved policy, not visit counts
    # Per-position samples get their own slices.
    samples = list(tds.PositionDataset(ds, compact=True))
    assert [[int(a) for a in s["policy_actions"]] for s in samples] == [[e["action"] for e in row] for row in stored]
    # A column of another type is refused, and so is the column in a run that did not use a Gumbel root.
    for name, change, gumbel in (
        (
            "mistyped",
            lambda t, i: t.append_column(tds.POLICY, pa.array([[1]] * t.num_rows, pa.list_(pa.uint32()))),
            True,
        ),
        ("unannounced", add, False),
    ):
        shutil.copytree(MCTS_SAMPLE, tmp_path / name)
        rewrite_positions(tmp_path / name, change, gumbel)
        with pytest.raises(taikyoku.TaikyokuError, match="does not have the positions schema"):
            next(tds.open(tmp_path / name).batches(compact=True))


# -- saving and loading -----------------------------------------------------------------------------


def test_save_and_load_round_trip(tmp_path):
    torch.manual_seed(0)
    net = tnn.PolicyValueNet(channels=8, blocks=1, head_channels=8, variant="tenjiku").train()
    tnn.save(net, tmp_path / "net.pt")
    saved = torch.load(tmp_path / "net.pt", weights_only=True)
    assert saved["format"] == tnn.SAVE_FORMAT == 1 and saved["config"] == net.config
    assert not list(tmp_path.glob("*.partial"))
    again = tnn.load(tmp_path / "net.pt", variant="tenjiku")
    assert isinstance(again, tnn.PolicyValueNet) and not again.training and again.config == net.config
    for (name, a), (_, b) in zip(net.state_dict().items(), again.state_dict().items()):
        assert torch.equal(a, b), name
    obs, actions, offsets = batch_of(random_positions((0, 30), variant="tenjiku"))
    args = torch.from_numpy(obs.astype(np.int32)), torch.from_numpy(actions), torch.from_numpy(offsets)
    with torch.no_grad():
        torch.testing.assert_close(again(*args).logits, net.eval()(*args).logits)
    assert tnn.load(str(tmp_path / "net.pt")).config["variant"] == "tenjiku"  # variant=None takes any
    # The files examples/closed_loop.py wrote before the format key existed still load.
    torch.save({"config": net.config, "state_dict": net.state_dict()}, tmp_path / "old.pt")
    assert tnn.load(tmp_path / "old.pt").config == net.config


def test_load_refuses_what_is_not_a_fitting_network(tmp_path):
    net = tnn.PolicyValueNet(channels=8, blocks=1, head_channels=8, variant="tenjiku")
    tnn.save(net, tmp_path / "tenjiku.pt")
    with pytest.raises(OSError, match="no network file"):
        tnn.load(tmp_path / "missing.pt")
    with pytest.raises(taikyoku.TaikyokuError, match="holds a network for tenjiku, not for taikyoku"):
        tnn.load(tmp_path / "tenjiku.pt", variant="taikyoku")
    (tmp_path / "text.pt").write_text("not a network")
    with pytest.raises(taikyoku.TaikyokuError, match="is not a taikyoku network file"):
        tnn.load(tmp_path / "text.pt")
    torch.save({k: v for k, v in net.state_dict().items()}, tmp_path / "bare.pt")
    with pytest.raises(taikyoku.TaikyokuError, match="expected a dict with 'config' and 'state_dict'"):
        tnn.load(tmp_path / "bare.pt")
    torch.save({"config": dict(net.config, channels=16), "state_dict": net.state_dict()}, tmp_path / "misfit.pt")
    with pytest.raises(taikyoku.TaikyokuError, match="does not fit its config"):
        tnn.load(tmp_path / "misfit.pt")
    torch.save({"config": dict(net.config, depth=3), "state_dict": net.state_dict()}, tmp_path / "odd.pt")
    with pytest.raises(taikyoku.TaikyokuError, match="depth"):
        tnn.load(tmp_path / "odd.pt")
    torch.save({"format": 99, "config": net.config, "state_dict": net.state_dict()}, tmp_path / "future.pt")
    with pytest.raises(taikyoku.TaikyokuError, match="format 99"):
        tnn.load(tmp_path / "future.pt")
    # weights_only: a file that would run code on load is refused.
    torch.save({"config": net.config, "state_dict": net.state_dict(), "extra": Path("x")}, tmp_path / "code.pt")
    with pytest.raises(taikyoku.TaikyokuError, match="weights_only"):
        tnn.load(tmp_path / "code.pt")
    with pytest.raises(taikyoku.TaikyokuError, match="directory"):
        tnn.load(tmp_path)


def test_pretrained_loads_the_shipped_weights(tmp_path, monkeypatch):
    net = tnn.PolicyValueNet(channels=8, blocks=1, head_channels=8, variant="tenjiku")
    tnn.save(net, tmp_path / "tenjiku.pt")
    (tmp_path / "notes.txt").write_text("not weights")
    monkeypatch.setattr("taikyoku.nn.files._weights_dir", lambda: tmp_path)  # where pretrained looks it up
    assert tnn.pretrained_variants() == ["tenjiku"]
    got = tnn.pretrained("tenjiku")
    assert got.config == net.config and not got.training
    with pytest.raises(
        taikyoku.TaikyokuError, match=r"no pretrained network for taikyoku .*variants with weights: tenjiku"
    ):
        tnn.pretrained("taikyoku")
    with pytest.raises(taikyoku.TaikyokuError, match="unknown variant 'chess'"):
        tnn.pretrained("chess")
    # A file of another variant under a variant's name is caught.
    tnn.save(net, tmp_path / "daidai.pt")
    with pytest.raises(taikyoku.TaikyokuError, match="for tenjiku, not for daidai"):
        tnn.pretrained("daidai")


def test_pretrained_without_weights_says_so():
    if "taikyoku" in tnn.pretrained_variants():
        pytest.skip("Taikyoku weights ship with this package")
    with pytest.raises(taikyoku.TaikyokuError, match="no pretrained network for taikyoku ships with this taikyoku"):
        tnn.pretrained("taikyoku")


def test_shipped_weights_would_go_into_the_wheel():
    # maturin puts every file under python-source's package directory into the wheel, except the
    # ones git ignores: python/taikyoku/weights/*.pt must be neither excluded nor ignored.
    import re
    import shutil

    maturin = (REPO / "pyproject.toml").read_text().split("[tool.maturin]", 1)[1].split("\n[", 1)[0]
    assert re.search(r'^python-source\s*=\s*"python"', maturin, re.M)
    assert "exclude" not in maturin
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    ignored = subprocess.run(["git", "check-ignore", "-q", "python/taikyoku/weights/tenjiku.pt"], cwd=REPO, timeout=30)
    assert ignored.returncode == 1  # 1: not ignored


# -- reinforcement learning helpers -----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["numpy", "torch"])
def test_gather_rows_matches_a_loop(kind):
    lengths = [3, 0, 5, 1, 0, 7, 2]
    offsets = np.zeros(len(lengths) + 1, np.int64)
    offsets[1:] = np.cumsum(lengths)
    values = np.arange(offsets[-1]) * 10 + 1
    rows = [5, 0, 1, 5, 6, 3, -1]  # repeats, an empty row, any order, a negative index
    want, want_offsets = [], [0]
    for r in rows:
        r = r % len(lengths)
        want.extend(values[offsets[r] : offsets[r + 1]].tolist())
        want_offsets.append(len(want))
    if kind == "torch":
        got, got_offsets = tnn.gather_rows(torch.from_numpy(values), torch.from_numpy(offsets), torch.tensor(rows))
        assert isinstance(got, torch.Tensor) and got_offsets.dtype == torch.long
    else:
        got, got_offsets = tnn.gather_rows(values, offsets, rows)
        assert isinstance(got, np.ndarray) and got_offsets.dtype == np.int64
    assert got.tolist() == want and got_offsets.tolist() == want_offsets
    empty, empty_offsets = tnn.gather_rows(values, offsets, [])
    assert len(empty) == 0 and list(empty_offsets) == [0]
    with pytest.raises(IndexError, match="rows must lie"):
        tnn.gather_rows(values, offsets, [len(lengths)])


def test_segment_entropy_matches_a_loop_and_has_gradients():
    logits, offsets = csr(LENGTHS)
    got = tnn.segment_entropy(logits, offsets)
    for i, row in enumerate(rows_of(logits, offsets)):
        want = (
            -(torch.softmax(row, 0) * torch.log_softmax(row, 0)).sum()
            if len(row)
            else torch.tensor(0.0, dtype=row.dtype)
        )
        torch.testing.assert_close(got[i], want)
    logits, offsets = csr([3, 1, 4, 0])
    logits.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda x: tnn.segment_entropy(x, offsets), (logits,))
    # Masked (-inf) actions count 0, without NaN gradients.
    masked = torch.tensor([0.0, float("-inf"), 0.0], requires_grad=True)
    entropy = tnn.segment_entropy(masked, torch.tensor([0, 3]))
    torch.testing.assert_close(entropy, torch.tensor([math.log(2.0)]))
    entropy.sum().backward()
    assert torch.isfinite(masked.grad).all()


def gae_reference(rewards, values, dones, last, gamma, lam, alternating):
    """GAE one env at a time, one step at a time (negamax bootstrap when the mover alternates)."""
    steps, envs = rewards.shape
    advantages = np.zeros((steps, envs))
    sign = -1.0 if alternating else 1.0
    for e in range(envs):
        following_advantage = 0.0
        for t in reversed(range(steps)):
            following = last[e] if t == steps - 1 else values[t + 1, e]
            if dones[t, e]:
                delta, following_advantage = rewards[t, e] - values[t, e], 0.0
            else:
                delta = rewards[t, e] + sign * gamma * following - values[t, e]
            advantages[t, e] = delta + sign * gamma * lam * following_advantage
            following_advantage = advantages[t, e]
    return advantages, advantages + values


def fill_buffer(buffer, vec, rng, steps):
    """Random play through ``vec`` into ``buffer``; returns what was stored, step by step."""
    observations, _ = vec.reset(seed=0)
    stored = []
    for _ in range(steps):
        actions, offsets = vec.legal_actions_flat()
        choice = offsets[:-1] + (rng.random(vec.num_envs) * np.diff(offsets)).astype(np.int64)
        log_prob, value = rng.standard_normal(vec.num_envs), rng.uniform(-1, 1, vec.num_envs)
        taken = actions[choice]
        stored.append(
            dict(
                obs=observations.copy(),
                actions=actions.copy(),
                offsets=offsets.copy(),
                taken=taken,
                log_prob=log_prob,
                value=value,
            )
        )
        next_obs, rewards, terminated, truncated, _ = vec.step(taken)
        stored[-1].update(reward=rewards, done=terminated | truncated)
        buffer.add(
            observations, (actions, offsets), choice, log_prob, torch.from_numpy(value), rewards, terminated | truncated
        )
        observations = next_obs
    return stored


@pytest.mark.parametrize("alternating", [True, False])
def test_rollout_buffer_gae_matches_a_loop(alternating):
    rng = np.random.default_rng(0)
    steps, envs = 9, 3
    buffer = tnn.CsrRolloutBuffer(steps, envs, gamma=0.9, gae_lambda=0.8, alternating=alternating)
    vec = taikyoku.VectorEnv(envs, variant="tenjiku", seed=1, compact=True, max_plies=4)  # games end often
    stored = fill_buffer(buffer, vec, rng, steps)
    assert buffer.full and len(buffer) == steps * envs
    rewards = np.stack([s["reward"] for s in stored])
    rewards[2, 1] = 1.0  # a reward in the middle of a game too
    buffer.rewards[:] = rewards
    values = np.stack([s["value"] for s in stored]).astype(np.float32)
    dones = np.stack([s["done"] for s in stored])
    assert dones.any() and not dones.all()
    last = rng.uniform(-1, 1, envs).astype(np.float32)
    buffer.compute_returns(torch.from_numpy(last))
    advantages, returns = gae_reference(rewards, values, dones, last, 0.9, 0.8, alternating)
    np.testing.assert_allclose(buffer.advantages, advantages, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(buffer.returns, returns, rtol=1e-5, atol=1e-6)


def test_rollout_buffer_minibatches_cover_every_row_once():
    rng = np.random.default_rng(1)
    steps, envs = 5, 4
    buffer = tnn.CsrRolloutBuffer(steps, envs, crop=(16, 16))
    vec = taikyoku.VectorEnv(envs, variant="tenjiku", seed=2, compact=True, max_plies=50)
    stored = fill_buffer(buffer, vec, rng, steps)
    with pytest.raises(taikyoku.TaikyokuError, match="compute_returns"):
        next(buffer.minibatches(6))
    buffer.compute_returns(np.zeros(envs))
    seen = []
    for mb in buffer.minibatches(6, seed=0):
        assert mb.observations.shape[1:] == (16, 16, 8) and mb.observations.dtype == torch.int32
        for k, row in enumerate(mb.rows.tolist()):
            t, e = divmod(row, envs)
            s = stored[t]
            legal = s["actions"][s["offsets"][e] : s["offsets"][e + 1]]
            assert mb.actions[mb.offsets[k] : mb.offsets[k + 1]].tolist() == legal.tolist()
            assert int(mb.actions[mb.index[k]]) == int(s["taken"][e])
            assert np.array_equal(mb.observations[k].numpy(), s["obs"][e, :16, :16].astype(np.int32))
            assert mb.log_probs[k].item() == pytest.approx(float(s["log_prob"][e]), rel=1e-6)
            assert mb.values[k].item() == pytest.approx(float(s["value"][e]), rel=1e-6)
            assert mb.returns[k].item() == pytest.approx(float(buffer.returns[t, e]), rel=1e-6)
            seen.append(row)
    assert sorted(seen) == list(range(steps * envs))
    again = [mb.rows.tolist() for mb in buffer.minibatches(6, seed=0)]
    assert sum(again, []) == seen  # the seed fixes the order
    assert [len(mb.rows) for mb in buffer.minibatches(6, seed=0, drop_last=True)] == [6, 6, 6]
    with pytest.raises(taikyoku.TaikyokuError, match="full"):
        buffer.add(*[None] * 7)
    buffer.reset()
    assert len(buffer) == 0 and not buffer.full
    with pytest.raises(ValueError, match="choice"):
        actions, offsets = vec.legal_actions_flat()
        buffer.add(
            np.zeros((envs, 36, 36, 8), np.uint16),
            (actions, offsets),
            offsets[1:],
            np.zeros(envs),
            np.zeros(envs),
            np.zeros(envs),
            np.zeros(envs, bool),
        )
    assert len(buffer) == 0  # nothing stored by a refused step


def test_a_ppo_step_on_a_vector_env():
    # The pieces together: sample from the network, store, compute returns, one clipped-objective step.
    torch.manual_seed(0)
    envs, steps = 4, 6
    # Eval mode while training too: batch norm's batch statistics would make the ratios depend on the minibatch.
    net = tnn.PolicyValueNet(channels=8, blocks=1, head_channels=8, variant="tenjiku").eval()
    vec = taikyoku.VectorEnv(envs, variant="tenjiku", seed=0, compact=True, max_plies=30)
    buffer = tnn.CsrRolloutBuffer(steps, envs, crop=(net.height, net.width))
    observations, _ = vec.reset(seed=0)
    generator = torch.Generator().manual_seed(0)
    for _ in range(steps):
        actions, offsets = (torch.from_numpy(a.copy()) for a in vec.legal_actions_flat())
        with torch.no_grad():
            out = net(torch.from_numpy(observations.astype(np.int32)), actions, offsets)
        choice = tnn.segment_sample(out.logits, offsets, generator=generator)
        log_prob = tnn.segment_log_prob(out.logits, offsets, choice)
        next_obs, rewards, terminated, truncated, _ = vec.step(actions[choice].numpy())
        buffer.add(observations, (actions, offsets), choice, log_prob, out.values, rewards, terminated | truncated)
        observations = next_obs
    with torch.no_grad():
        last = net(
            torch.from_numpy(observations.astype(np.int32)),
            *(torch.from_numpy(a.copy()) for a in vec.legal_actions_flat()),
        ).values
    buffer.compute_returns(last)
    for mb in buffer.minibatches(8, seed=0):
        out = net(mb.observations, mb.actions, mb.offsets)
        new_log_prob = tnn.segment_log_prob(out.logits, mb.offsets, mb.index)
        ratio = torch.exp(new_log_prob - mb.log_probs)
        clipped = torch.min(ratio * mb.advantages, ratio.clamp(0.8, 1.2) * mb.advantages)
        loss = (
            -clipped.mean()
            + (out.values - mb.returns).square().mean()
            - 0.01 * tnn.segment_entropy(out.logits, mb.offsets).mean()
        )
        net.zero_grad()
        loss.backward()
        assert torch.isfinite(loss)
        # Before any update the policy is the one that played: the ratios are 1.
        torch.testing.assert_close(ratio.detach(), torch.ones_like(ratio), atol=1e-4, rtol=0)


def test_heuristic_values_of_a_vector_env():
    vec = taikyoku.VectorEnv(5, variant="tenjiku", seed=3, compact=True)
    vec.reset(seed=3)
    for _ in range(7):
        vec.step(vec.random_actions())
    want = [taikyoku.heuristic_value(vec.game(i)) for i in range(5)]
    got = vec.heuristic_values()
    assert got.dtype == np.float32 and got.shape == (5,)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(tnn.heuristic_values(vec), want, rtol=1e-6)
    np.testing.assert_allclose(tnn.heuristic_values([vec.game(i) for i in range(5)]), want, rtol=1e-6)
    white = [taikyoku.heuristic_value(vec.game(i), "white") for i in range(5)]
    np.testing.assert_allclose(vec.heuristic_values("white"), white, rtol=1e-6)
    with pytest.raises(taikyoku.TaikyokuError):
        vec.heuristic_values("red")
