"""Playing strength: the shipped networks load and play in every variant that has them, the search
takes them as its evaluator, and the recipe that made them (examples/pretrain.py) runs end to end at
toy size. The strength itself is measured by docs/STRENGTH.md's commands, not here (a test cannot
afford the games)."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import taikyoku  # noqa: E402
import taikyoku.nn as tnn  # noqa: E402
from taikyoku.arena import MctsPlayer, PolicyPlayer, RandomPlayer, match  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TIMEOUT = 180
pytestmark = pytest.mark.usefixtures("no_hang")

#: The variants the issue asks weights for, at least.
REQUIRED = ("tenjiku", "daidai")


@pytest.fixture(autouse=True)
def one_thread():
    """One intra-op thread: positions are searched one at a time, and on a busy 2-core machine
    OpenMP's spinning threads make each small call far slower."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_the_required_variants_ship_weights_within_the_size_limit():
    shipped = tnn.pretrained_variants()
    assert set(REQUIRED) <= set(shipped), shipped
    weights = Path(taikyoku.__file__).parent / "weights"
    for variant in shipped:
        assert (weights / f"{variant}.pt").stat().st_size <= 2_000_000, variant


@pytest.mark.parametrize("variant", tnn.pretrained_variants())
def test_pretrained_networks_play_legal_moves(variant):
    net = tnn.pretrained(variant)
    assert not net.training and net.config["variant"] == variant
    assert all(p.device.type == "cpu" and p.dtype == torch.float32 for p in net.parameters())
    game = taikyoku.Game(variant=variant)
    greedy, searched = PolicyPlayer(net), MctsPlayer(8, evaluator=net.evaluator(), root="gumbel")
    for ply in range(6):
        player = greedy if ply % 2 == 0 else searched
        before = game.hash
        action = player(game)
        assert game.hash == before and action in set(game.legal_actions().tolist())
        game.play(action)
    # Its values are numbers in [-1, 1] and its policy a distribution over the legal moves.
    actions = game.legal_actions()
    obs = torch.from_numpy(game.observation(compact=True)[None].astype(np.int32))
    with torch.inference_mode():
        out = net(obs, torch.from_numpy(actions), torch.tensor([0, len(actions)]))
    assert torch.isfinite(out.logits).all() and -1 <= float(out.values[0]) <= 1


def test_pretrained_refuses_other_variants_clearly():
    missing = [v for v in taikyoku.variants() if v not in tnn.pretrained_variants()]
    for variant in missing:
        with pytest.raises(taikyoku.TaikyokuError, match="no pretrained network"):
            tnn.pretrained(variant)
    with pytest.raises(taikyoku.TaikyokuError):
        tnn.pretrained("chess")


def test_a_pretrained_network_of_one_variant_is_refused_for_another(tmp_path):
    net = tnn.pretrained("tenjiku")
    path = tmp_path / "tenjiku.pt"
    tnn.save(net, path, half=True)
    assert tnn.load(path, variant="tenjiku").config == net.config
    with pytest.raises(taikyoku.TaikyokuError, match="network for tenjiku, not for daidai"):
        tnn.load(path, variant="daidai")


def test_a_short_match_with_the_shipped_network():
    net = tnn.pretrained("tenjiku")
    result = match(PolicyPlayer(net), RandomPlayer(), games=2, variant="tenjiku", openings=4, max_plies=200, threads=1)
    assert result.games == 2 and len(result.records) == 2


def test_the_recipe_runs_end_to_end_at_toy_size(tmp_path):
    args = [
        "--out",
        "run",
        "--teacher-games",
        3,
        "--teacher-simulations",
        16,
        "--distill-steps",
        8,
        "--eval-every",
        4,
        "--batch-size",
        16,
        "--channels",
        8,
        "--blocks",
        1,
        "--head-channels",
        8,
        "--eval-games",
        2,
        "--eval-simulations",
        4,
        "--loop-iterations",
        1,
        "--loop-games",
        2,
        "--loop-simulations",
        4,
        "--loop-steps",
        3,
        "--max-plies",
        40,
        "--threads",
        1,
        "--export",
        "exported.pt",
    ]
    command = [sys.executable, str(EXAMPLES / "pretrain.py"), *map(str, args)]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT - 20)
    assert result.returncode == 0, result.stdout + result.stderr
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    stages = [(e["stage"], e["step"]) for e in metrics["evaluations"]]
    assert stages == [("distill", 4), ("distill", 8), ("loop-00", 11)]
    assert all(e["wins"] + e["draws"] + e["losses"] == 2 for e in metrics["evaluations"])
    assert {"teacher_seconds", "distill_seconds", "loop_selfplay_seconds", "loop_train_seconds"} <= set(
        metrics["times"]
    )
    # The loop's games carry the Gumbel root's improved policy, the exported network reloads.
    loop = taikyoku.datasets.open(tmp_path / "run" / "loop-00")
    assert loop.has_policy and loop.settings["network"]["name"] == "taikyoku.nn.NetworkEvaluator"
    exported = tnn.load(tmp_path / "exported.pt", variant="tenjiku")
    assert exported.config["channels"] == 8
    # Run again: everything is resumed, nothing is played or trained again.
    again = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT - 20)
    assert again.returncode == 0, again.stderr
    assert "resuming: loop at 1" in again.stdout
    assert len(json.loads((tmp_path / "run" / "metrics.json").read_text())["evaluations"]) == 3
