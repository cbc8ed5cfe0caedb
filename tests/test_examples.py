"""The training examples (examples/README.md) run end to end at toy size, as a user runs them."""

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import taikyoku  # noqa: E402
import taikyoku.datasets as tds  # noqa: E402
import taikyoku.nn as tnn  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
MCTS_SAMPLE = Path(__file__).resolve().parent.parent / "datasets" / "samples" / "mcts-tiny"

TIMEOUT = 180
pytestmark = pytest.mark.usefixtures("no_hang")


def run(script: str, *args, cwd: Path) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=TIMEOUT - 10,
    )
    assert result.returncode == 0, f"{script} failed:\n{result.stdout}\n{result.stderr}"
    return result


def test_train_from_dataset_generates_trains_and_times(tmp_path):
    result = run(
        "train_from_dataset.py",
        "--out",
        "data",
        "--games",
        2,
        "--simulations",
        8,
        "--max-plies",
        16,
        "--steps",
        30,
        "--batch-size",
        16,
        "--network-steps",
        3,
        "--device",
        "cpu",
        "--metrics",
        "m.json",
        cwd=tmp_path,
    )
    metrics = json.loads((tmp_path / "m.json").read_text())
    assert metrics["steps"] == 30 and metrics["positions"] == tds.open(tmp_path / "data").num_positions > 0
    for key in ("pipeline_positions_per_s", "network_positions_per_s", "ratio", "loss_first", "loss_last"):
        assert math.isfinite(metrics[key]) and metrics[key] > 0, key
    # 30 steps on at most 32 positions: the network fits them.
    assert metrics["loss_last"] < metrics["loss_first"]
    assert "pipeline, dataset to optimizer step" in result.stdout and "network alone, same batch" in result.stdout
    # Saved into the current directory (never into the dataset), and it reloads.
    assert metrics["saved"] == "net.pt" and metrics["variant"] == "taikyoku"
    net = tnn.load(tmp_path / "net.pt", variant="taikyoku")
    assert net.config["channels"] == 32 and not net.training


def test_train_from_dataset_reads_a_given_dataset(tmp_path):
    result = run(
        "train_from_dataset.py",
        "--data",
        MCTS_SAMPLE,
        "--steps",
        3,
        "--batch-size",
        4,
        "--network-steps",
        1,
        "--device",
        "cpu",
        "--no-save",
        cwd=tmp_path,
    )
    assert "self-play" not in result.stdout and list(tmp_path.iterdir()) == []  # nothing generated, nothing saved
    assert "positions/s" in result.stdout


def test_train_from_dataset_builds_the_datasets_variant_and_saves_it(tmp_path):
    data = tmp_path / "tenjiku-data"
    taikyoku.selfplay(
        data, players="mcts", variant="tenjiku", games=4, simulations=8, max_plies=40, seed=8, threads=1, progress=False
    )  # seed 8: one game decided, three cut
    summary = tds.open(data).summary()
    assert 0 < summary["truncated"] < summary["games"]  # some games have a value target, some not
    (tmp_path / "run" / "nets").mkdir(parents=True)
    result = run(
        "train_from_dataset.py",
        "--data",
        data,
        "--steps",
        4,
        "--batch-size",
        16,
        "--network-steps",
        1,
        "--channels",
        8,
        "--blocks",
        1,
        "--device",
        "cpu",
        "--save",
        "nets/tenjiku.pt",
        "--metrics",
        "m.json",
        cwd=tmp_path / "run",
    )
    metrics = json.loads((tmp_path / "run" / "m.json").read_text())
    assert metrics["variant"] == "tenjiku" and 0 < metrics["value_target_share"] < 1
    assert "saved the tenjiku network to nets/tenjiku.pt" in result.stdout
    net = tnn.load(tmp_path / "run" / "nets" / "tenjiku.pt", variant="tenjiku")
    assert (net.height, net.width) == (16, 16) and net.config["channels"] == 8
    with pytest.raises(taikyoku.TaikyokuError, match="for tenjiku, not for taikyoku"):
        tnn.load(tmp_path / "run" / "nets" / "tenjiku.pt", variant="taikyoku")


def test_closed_loop_plays_trains_and_saves_each_iteration(tmp_path):
    args = [
        "--out",
        "loop",
        "--variant",
        "tenjiku",
        "--iterations",
        2,
        "--games",
        2,
        "--simulations",
        8,
        "--max-plies",
        12,
        "--steps",
        5,
        "--batch-size",
        8,
        "--channels",
        8,
        "--device",
        "cpu",
    ]
    result = run("closed_loop.py", *args, cwd=tmp_path)
    loop = tmp_path / "loop"
    history = json.loads((loop / "metrics.json").read_text())
    assert [h["iteration"] for h in history] == [0, 1]
    assert result.stdout.count("iteration ") == 2
    for h in history:
        ds = tds.open(loop / f"iter-{h['iteration']:02d}")
        assert ds.complete and ds.num_positions == h["positions"] > 0 and ds.variant == h["variant"] == "tenjiku"
        assert ds.settings["network"]["name"] == "taikyoku.nn.NetworkEvaluator"
        assert math.isfinite(h["loss_first"]) and math.isfinite(h["loss_last"])
        saved = torch.load(loop / f"net-{h['iteration']:02d}.pt", weights_only=True)
        assert saved["format"] == 1
        net = tnn.PolicyValueNet(**saved["config"])  # the config rebuilds it by hand too
        net.load_state_dict(saved["state_dict"])
        assert tnn.load(loop / f"net-{h['iteration']:02d}.pt", variant="tenjiku").config == net.config
    assert history[1]["train_positions"] == history[0]["positions"] + history[1]["positions"]  # window of 2
    # A second run into the same directory would resume the old datasets: refused without --overwrite.
    again = subprocess.run(
        [sys.executable, str(EXAMPLES / "closed_loop.py"), *map(str, args)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode != 0 and "--overwrite" in again.stderr


def test_ppo_trains_against_random_evaluates_and_saves(tmp_path):
    result = run(
        "ppo.py",
        "--updates",
        2,
        "--envs",
        4,
        "--steps",
        6,
        "--epochs",
        2,
        "--minibatch",
        8,
        "--channels",
        8,
        "--blocks",
        1,
        "--head-channels",
        8,
        "--max-plies",
        20,
        "--shaping",
        0.5,
        "--eval-every",
        1,
        "--eval-games",
        2,
        "--eval-max-plies",
        20,
        "--threads",
        1,
        "--device",
        "cpu",
        "--seed",
        3,
        "--save",
        "nets/ppo.pt",
        "--metrics",
        "ppo.json",
        cwd=tmp_path,
    )
    metrics = json.loads((tmp_path / "ppo.json").read_text())
    assert metrics["settings"]["variant"] == "tenjiku" and metrics["updates_done"] == 2
    assert [u["update"] for u in metrics["updates"]] == [1, 2]
    for u in metrics["updates"]:
        assert u["env_steps"] == u["update"] * 4 * 6 and u["epochs"] >= 1
        for key in ("policy_loss", "value_loss", "entropy", "approx_kl", "wall_seconds", "cpu_seconds"):
            assert math.isfinite(u[key]), key
        assert u["value_loss"] >= 0 and u["entropy"] > 0
    # Games cut at 20 plies (10 agent moves): each of the 4 ends within the 12 moves played, its return recorded.
    assert sum(u["episodes"] for u in metrics["updates"]) >= 4
    # Before training, after update 1 (--eval-every 1), and the final one, from the arena's true results.
    evaluations = metrics["evaluations"]
    assert [e["update"] for e in evaluations] == [0, 1, 2] and metrics["final"] == evaluations[-1]
    for e in evaluations:
        assert e["wins"] + e["draws"] + e["losses"] == 2 and 0 <= e["score"] <= 1
    assert metrics["final"]["line"] in result.stdout and "greedy network vs RandomPlayer, 2 games" in result.stdout
    assert metrics["cpu_seconds"] > 0 and metrics["wall_seconds"] > 0
    net = tnn.load(tmp_path / "nets" / "ppo.pt", variant="tenjiku")
    assert (net.height, net.width) == (16, 16) and net.config["channels"] == 8 and not net.training
