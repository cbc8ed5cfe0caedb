"""Self-play on many machines (taikyoku.distributed) on a local Ray instance: the same bytes as
one machine, a worker killed mid-shard, a driver killed mid-run, reading with ray.data."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from conftest import contents, copy_variant  # noqa: E402

import taikyoku  # noqa: E402
import taikyoku.datasets as tds  # noqa: E402
import taikyoku.distributed as td  # noqa: E402

SETTINGS = dict(players="random", games=12, seed=11, max_plies=1200, games_per_shard=2)


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()


@pytest.fixture(scope="module")
def one_machine(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("one") / "data"
    taikyoku.selfplay(out, threads=2, **SETTINGS)
    return contents(out)


def test_a_ray_run_equals_a_one_machine_run(cluster, tmp_path, one_machine):
    summary = td.selfplay(tmp_path / "data", shards_per_task=2, **SETTINGS)
    assert summary["games"] == 12 and summary["generated_games"] == 12
    assert contents(tmp_path / "data") == one_machine
    again = td.selfplay(tmp_path / "data", **SETTINGS)  # resumed: nothing to do
    assert again["generated_games"] == 0 and contents(tmp_path / "data") == one_machine


def test_a_variant_loaded_from_files_travels_to_the_workers(cluster, tmp_path):
    """Ray workers are other processes: the driver sends them the variant's files."""
    name = taikyoku.load_variant(copy_variant(tmp_path, "copy-ray", gym_id="CopyRay-v0"))
    settings = dict(players="random", games=4, seed=3, max_plies=200, games_per_shard=2, variant=name)
    taikyoku.selfplay(tmp_path / "one", threads=1, **settings)
    td.selfplay(tmp_path / "ray", **settings)
    assert contents(tmp_path / "ray") == contents(tmp_path / "one")
    assert tds.open(tmp_path / "ray").variant == name


def test_a_derived_shard_layout_and_stored_legal_actions_match_one_machine(cluster, tmp_path):
    """games_per_shard derived from shard_positions (no games_per_shard given) is the same on the
    driver as on one machine, and so are the files with the legal_actions column."""
    settings = dict(
        players="mcts", games=5, seed=2, max_plies=6, simulations=4, shard_positions=12, store_legal_actions=True
    )
    taikyoku.selfplay(tmp_path / "one", threads=1, **settings)
    td.selfplay(tmp_path / "ray", shards_per_task=2, **settings)
    assert contents(tmp_path / "ray") == contents(tmp_path / "one")
    ds = tds.open(tmp_path / "ray")
    assert ds.settings["games_per_shard"] == 2 and len(ds.shards) == 3 and ds.has_legal_actions


def test_a_uri_root_through_pyarrow(cluster, tmp_path, one_machine):
    td.selfplay(f"file://{tmp_path}/uri-data", shards_per_task=3, **SETTINGS)
    assert contents(tmp_path / "uri-data") == one_machine


def _task_processes() -> list:
    """Pids of Ray workers running a shard task (Ray titles them after the task)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if b"ray::_play_shards" in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:  # the process ended meanwhile
                continue
    return pids


def test_a_worker_killed_mid_shard_is_retried(cluster, tmp_path, one_machine):
    killed = []

    def killer():
        deadline = time.monotonic() + 60
        while not killed and time.monotonic() < deadline:
            pids = _task_processes()
            if pids:
                time.sleep(0.05)  # mid-shard
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])
            time.sleep(0.01)

    thread = threading.Thread(target=killer)
    thread.start()
    td.selfplay(tmp_path / "data", **SETTINGS)
    thread.join()
    assert killed, "no shard task was seen running"
    assert contents(tmp_path / "data") == one_machine


DRIVER = """
import sys, taikyoku.distributed as td
print("started", flush=True)
td.selfplay(sys.argv[1], address=sys.argv[2], **{settings})
"""


def test_a_driver_killed_mid_run_resumes_exactly(cluster, tmp_path, one_machine):
    out = tmp_path / "data"
    process = subprocess.Popen(
        [sys.executable, "-c", DRIVER.format(settings=SETTINGS), str(out), cluster],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout.readline().strip() == "started"
    deadline = time.monotonic() + 60
    while not (out / "manifest.json").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    process.kill()
    process.communicate(timeout=30)
    summary = td.selfplay(out, **SETTINGS)
    assert summary["games"] == 12
    assert contents(out) == one_machine


@pytest.mark.parametrize("fmt", ["arrow", "parquet"])
def test_ray_data_reads_the_tables(cluster, tmp_path, fmt):
    out = tmp_path / fmt
    taikyoku.selfplay(out, format=fmt, players="random", games=3, max_plies=20, games_per_shard=1)
    dataset = tds.open(out)
    positions = td.read_table(out)
    assert positions.count() == dataset.num_positions
    assert td.read_table(out, "games").count() == 3
    if fmt == "parquet":  # plain Ray on the files works too
        assert ray.data.read_parquet([str(p) for p in dataset.positions_files]).count() == dataset.num_positions


def test_the_cli_runs_on_ray(cluster, tmp_path, one_machine):
    flags = ["--games", "12", "--seed", "11", "--max-plies", "1200", "--games-per-shard", "2", "--quiet"]
    result = subprocess.run(
        [sys.executable, "-m", "taikyoku", "selfplay", "--out", str(tmp_path / "data"), "--ray", cluster, *flags],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert contents(tmp_path / "data") == one_machine


def test_ray_data_gives_torch_batches(cluster, tmp_path):
    """read_table then Ray Data's iter_torch_batches: Ray imports ray.train for it, which needs
    pydantic; the ``ray`` extra brings it (issue 29, item 13)."""
    torch = pytest.importorskip("torch")
    out = tmp_path / "data"
    taikyoku.selfplay(out, players="random", games=3, max_plies=20, games_per_shard=1)
    positions = td.read_table(out).select_columns(["game_id", "ply", "action"])
    rows = 0
    for batch in positions.iter_torch_batches(batch_size=16):
        assert isinstance(batch["action"], torch.Tensor)
        rows += len(batch["action"])
    assert rows == 60
