"""Faults a user meets: fork after parallel calls, Ctrl-C and SIGKILL during self-play.

- Fork: rayon's pools do not survive fork, so the bindings rebuild theirs in a child; a torch
  DataLoader with workers and a multiprocessing fork pool must both work after the parent made
  parallel native calls.
- Ctrl-C stops a run within a second, leaving only whole shards; a rerun resumes to the bytes of
  an uninterrupted run. SIGKILL at random moments, then a rerun, gives the same bytes too.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import contents

import taikyoku
import taikyoku.datasets as tds

SAMPLE = Path(__file__).resolve().parent.parent / "datasets" / "samples" / "random-tiny"


def parallel_calls() -> tuple:
    """Native calls that run on the worker pool; returns a fingerprint of their results."""
    games = [taikyoku.random_game(seed, max_plies=20) for seed in range(4)]
    observations = taikyoku.encode_observations(games, compact=True)
    vec = taikyoku.VectorEnv(4, seed=1, compact=True, threads=2)
    vec.reset()
    stepped, *_ = vec.step(vec.random_actions())
    decoded = tds.open(SAMPLE).observations(range(3), compact=True)
    return int(observations.sum()), int(stepped.sum()), int(decoded.sum())


def _in_child(_: int) -> tuple:
    return parallel_calls()


def test_parallel_calls_work_in_a_forked_child():
    expected = parallel_calls()  # the parent's pools exist now
    context = multiprocessing.get_context("fork")
    with context.Pool(2) as pool:
        result = pool.map_async(_in_child, range(4))
        assert result.get(timeout=120) == [expected] * 4


def test_torch_dataloader_workers_after_parallel_calls():
    torch = pytest.importorskip("torch")
    expected = parallel_calls()

    class Positions(torch.utils.data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return np.asarray(parallel_calls())

    loader = torch.utils.data.DataLoader(Positions(), batch_size=2, num_workers=2, multiprocessing_context="fork", timeout=120)
    rows = [tuple(int(v) for v in row) for batch in loader for row in batch]
    assert rows == [expected] * 4


# -- self-play under SIGINT and SIGKILL -------------------------------------------------------------

# Long enough (about 2 s on two cores of the CI machine kind, 400,000 random plies) that the
# signals below land mid-run.
SETTINGS = dict(players="random", games=288, seed=7, max_plies=1500, games_per_shard=2, format="arrow")

RUNNER = """
import sys, taikyoku
print("started", flush=True)
taikyoku.selfplay(sys.argv[1], threads=2, **{settings})
print("finished", flush=True)
"""


def start_run(out: Path) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-c", RUNNER.format(settings=SETTINGS), str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout.readline().strip() == "started"
    return process


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("whole") / "data"
    taikyoku.selfplay(out, threads=2, **SETTINGS)
    return contents(out)


def test_ctrl_c_stops_within_a_second_and_a_rerun_resumes_exactly(tmp_path, uninterrupted):
    out = tmp_path / "data"
    process = start_run(out)
    time.sleep(0.6)
    assert process.poll() is None, "the run ended before it could be interrupted: make SETTINGS bigger"
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert time.monotonic() - sent < 1.5, "Ctrl-C took more than a second to stop the run"
    assert process.returncode != 0 and "KeyboardInterrupt" in stderr, stderr
    manifest = tds.json.loads((out / "manifest.json").read_text())
    assert not manifest["complete"] and len(manifest["shards"]) < SETTINGS["games"] // 2
    assert not list(out.rglob("*.tmp")), "a partial shard was left behind"
    with pytest.warns(tds.IncompleteDatasetWarning):
        partial = tds.open(out)
    if partial.shards:  # what was kept is whole and right
        assert partial.verify([partial.shards[-1]["first_game"]])["games"] == 1
    summary = taikyoku.selfplay(out, threads=1, **SETTINGS)
    assert summary["generated_games"] == SETTINGS["games"] - 2 * len(manifest["shards"])
    assert contents(out) == uninterrupted


def test_the_cli_reports_an_interruption(tmp_path):
    out = tmp_path / "data"
    # Long enough (minutes uninterrupted) that the interruption always lands mid-run, however
    # fast the machine: the signal is sent once the run has started writing.
    flags = ["--players", "random", "--games", "5000", "--max-plies", "1500", "--games-per-shard", "2", "--quiet"]
    process = subprocess.Popen(
        [sys.executable, "-m", "taikyoku", "selfplay", "--out", str(out), *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 20
    while not (out / "manifest.json").exists() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    time.sleep(0.3)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr


def test_sigkill_at_random_moments_then_rerun_gives_the_same_bytes(tmp_path, uninterrupted):
    out = tmp_path / "data"
    rng = random.Random(2026)
    for trial in range(3):
        process = start_run(out)
        time.sleep(rng.uniform(0.05, 0.9))
        process.kill()
        process.communicate(timeout=30)
    taikyoku.selfplay(out, threads=2, **SETTINGS)
    assert contents(out) == uninterrupted
