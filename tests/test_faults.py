"""Faults a user meets: fork after parallel calls, Ctrl-C and SIGKILL during self-play.

- Fork: rayon's pools do not survive fork, so the bindings rebuild theirs in a child; a torch
  DataLoader with workers and a multiprocessing fork pool must both work after the parent made
  parallel native calls.
- Ctrl-C stops a run within a second, leaving only whole shards; a rerun resumes to the bytes of
  an uninterrupted run. SIGKILL at random moments, then a rerun, gives the same bytes too.
- Ctrl-C reaches a Python evaluator (self-play, mcts_search) and a callable opponent even while it
  blocks (a sleeping or dead inference server): the run stops within a second.
- Two writers on one directory: the second fails at once naming the first, or waits for it
  (``wait=True``); the lock a killed run leaves never blocks a resume.
"""

from __future__ import annotations

import json
import multiprocessing
import random
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import contents, hold_writer_lock, interruptible

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

    loader = torch.utils.data.DataLoader(
        Positions(), batch_size=2, num_workers=2, multiprocessing_context="fork", timeout=120
    )
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
        preexec_fn=interruptible,
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
    manifest = json.loads((out / "manifest.json").read_text())
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
        preexec_fn=interruptible,
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
    for _trial in range(3):
        process = start_run(out)
        time.sleep(rng.uniform(0.05, 0.9))
        process.kill()
        process.communicate(timeout=30)
    taikyoku.selfplay(out, threads=2, **SETTINGS)
    assert contents(out) == uninterrupted


# -- Ctrl-C while a Python evaluator or opponent blocks (issue 29, item 5) ----------------------------

BLOCKING = """
import sys, threading, time, numpy as np, taikyoku

def evaluator(observations, legal):
    print("evaluating", flush=True)
    if sys.argv[2] == "sleeps":
        time.sleep(30)
    else:
        threading.Event().wait()  # a dead inference server: never returns
    actions, offsets = legal
    return np.ones(len(actions)), np.zeros(len(offsets) - 1)

what = sys.argv[3]
if what == "selfplay":
    taikyoku.selfplay(sys.argv[1], players="mcts", games=2, max_plies=4, simulations=4, evaluator=evaluator)
elif what == "mcts_search":
    taikyoku.mcts_search(taikyoku.Game(variant="tenjiku"), 8, evaluator=evaluator)
elif what == "vector opponent":
    vec = taikyoku.VectorEnv(2, variant="tenjiku", opponent=lambda game: evaluator(None, ([], [0])) and 0)
    vec.reset(seed=0)
    vec.step(vec.random_actions())
elif what == "env opponent":
    env = taikyoku.TaikyokuEnv(variant="tenjiku", opponent=lambda game: evaluator(None, ([], [0])) and 0)
    env.reset(seed=0)
    env.step(int(env.action_space.sample()))
print("finished", flush=True)
"""


@pytest.mark.parametrize("how", ["sleeps", "blocks"])
@pytest.mark.parametrize("what", ["selfplay", "mcts_search", "vector opponent", "env opponent"])
def test_ctrl_c_stops_a_run_within_a_second_while_the_evaluator_blocks(tmp_path, how, what):
    out = tmp_path / "data"
    process = subprocess.Popen(
        [sys.executable, "-c", BLOCKING, str(out), how, what],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=interruptible,
    )
    assert process.stdout.readline().strip() == "evaluating", process.communicate()[1]
    time.sleep(0.3)
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    try:
        _, stderr = process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail("Ctrl-C did not stop a run whose evaluator blocks")
    assert time.monotonic() - sent < 1.5, "Ctrl-C took more than a second"
    assert process.returncode != 0 and "KeyboardInterrupt" in stderr, stderr
    assert not out.exists(), "an interrupted first run leaves nothing behind"


# -- two writers on one directory (issue 29, item 6) ------------------------------------------------


LONG_RUN = ["--players", "random", "--games", "5000", "--max-plies", "1500", "--games-per-shard", "2", "--quiet"]


def _command(out: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "taikyoku", "selfplay", "--out", str(out), *LONG_RUN, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=interruptible,
    )


def _wait_for(condition, seconds=30.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_two_selfplay_commands_on_one_out(tmp_path):
    """The second fails at once naming the first (no false "not empty" error, no missing
    manifest); with --wait it waits, then goes on with the first one's dataset."""
    out = tmp_path / "data"
    first = _command(out)  # minutes long uninterrupted
    _wait_for(lambda: (out / "manifest.json").exists())
    second = subprocess.run(
        [sys.executable, "-m", "taikyoku", "selfplay", "--out", str(out), *LONG_RUN],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert second.returncode == 1 and "Traceback" not in second.stderr, second.stderr
    assert f"is being written by another run (process {first.pid}" in second.stderr, second.stderr
    assert "--wait" in second.stderr and "not empty" not in second.stderr
    started = time.monotonic()
    with pytest.raises(BlockingIOError, match=f"process {first.pid}"):
        taikyoku.selfplay(out, players="random", games=5000, max_plies=1500, games_per_shard=2)
    assert time.monotonic() - started < 1.0
    waiting = _command(out, "--wait")
    ready, _, _ = select.select([waiting.stderr], [], [], 60)  # it starts, finds the lock taken, says so
    assert ready, "the waiting run never said that it waits"
    announced = waiting.stderr.readline()
    assert f"is being written by another run (process {first.pid}" in announced, announced
    assert announced.rstrip().endswith("waiting for it to finish"), announced
    time.sleep(0.5)
    assert waiting.poll() is None, waiting.communicate()
    assert first.poll() is None, first.communicate()
    first.send_signal(signal.SIGINT)
    first.communicate(timeout=30)
    assert first.returncode == 130
    shards_then = len(json.loads((out / "manifest.json").read_text())["shards"])
    # The waiting run takes the lock and resumes: it writes shards of its own.
    _wait_for(lambda: len(json.loads((out / "manifest.json").read_text())["shards"]) > shards_then + 1, 120)
    waiting.send_signal(signal.SIGINT)
    _, stderr = waiting.communicate(timeout=30)
    assert waiting.returncode == 130, stderr
    assert "Traceback" not in stderr, stderr
    with pytest.warns(tds.IncompleteDatasetWarning):
        partial = tds.open(out)
    assert partial.verify([partial.shards[-1]["first_game"]])["games"] == 1


def test_wait_waits_for_the_lock_then_resumes(tmp_path, uninterrupted):
    out = tmp_path / "data"
    taikyoku.selfplay(out, threads=2, **SETTINGS)
    holder = hold_writer_lock(out)
    done = {}
    waiter = threading.Thread(target=lambda: done.update(summary=taikyoku.selfplay(out, wait=True, **SETTINGS)))
    waiter.start()
    time.sleep(1.0)
    assert waiter.is_alive() and not done, "wait=True did not wait for the lock"
    holder.close()  # the other writer is done
    waiter.join(timeout=60)
    assert done["summary"]["generated_games"] == 0
    assert contents(out) == uninterrupted


def test_a_killed_runs_lock_never_blocks_a_resume(tmp_path, uninterrupted):
    out = tmp_path / "data"
    process = start_run(out)
    deadline = time.monotonic() + 20
    while not (out / "manifest.json").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.2)
    process.kill()
    process.communicate(timeout=30)
    assert (out / ".taikyoku-writer.lock").exists(), "the killed run's lock file stays (the lock itself is gone)"
    started = time.monotonic()
    taikyoku.selfplay(out, threads=2, **SETTINGS)  # no wait: the stale lock is free
    assert time.monotonic() - started < 30
    assert contents(out) == uninterrupted
