"""Self-play generation: players, determinism across threads, resume, the network callback, the
CLI and its errors (the dataset layout itself is tested in test_datasets.py)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.ipc as ipc
import pytest

import taikyoku
from taikyoku.__main__ import main


def files(path):
    """Every data file's bytes, by relative name."""
    root = Path(path)
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("part-*")) if p.is_file()}


def table(path, name):
    return ipc.open_file(str(Path(path) / name / "part-00000.arrow")).read_all()


@pytest.mark.parametrize("format", ["arrow", "parquet"])
def test_same_bytes_with_one_or_two_threads(tmp_path, format):
    a = taikyoku.selfplay(tmp_path / "a", games=5, seed=7, threads=1, format=format, max_plies=300, games_per_shard=2)
    b = taikyoku.selfplay(tmp_path / "b", games=5, seed=7, threads=2, format=format, max_plies=300, games_per_shard=2)
    assert a["games"] == b["games"] == 5 and a["plies"] == b["plies"]
    assert files(tmp_path / "a") == files(tmp_path / "b")
    assert len(files(tmp_path / "a")) == 6  # 3 shards × (games, positions)
    c = taikyoku.selfplay(tmp_path / "c", games=5, seed=8, threads=2, format=format, max_plies=300, games_per_shard=2)
    assert files(tmp_path / "c") != files(tmp_path / "a") and c["games"] == 5


def test_mcts_players_record_visits_and_values(tmp_path):
    summary = taikyoku.selfplay(tmp_path / "m", players="mcts", games=2, simulations=12, max_plies=6, seed=1)
    assert summary["games"] == 2 and summary["plies"] == 12
    positions = table(tmp_path / "m", "positions")
    visits = positions.column("visits").to_pylist()
    assert all(sum(v["count"] for v in row) >= 11 for row in visits)
    assert all(any(v["action"] == a for v in row) for row, a in zip(visits, positions.column("action").to_pylist()))
    assert positions.column("root_value").null_count == 0
    manifest = json.loads((tmp_path / "m" / "manifest.json").read_text())
    assert manifest["settings"]["players"]["kind"] == "mcts" and manifest["settings"]["players"]["simulations"] == 12
    again = taikyoku.selfplay(tmp_path / "m2", players="mcts", games=2, simulations=12, max_plies=6, seed=1, threads=1)
    assert files(tmp_path / "m") == files(tmp_path / "m2") and again["plies"] == 12


class TinyNetwork:
    """A numpy "network": a fixed random linear map of the observation to a value, and priors
    that favour captures-looking actions (large action numbers) a little."""

    def __init__(self):
        self.weights = np.random.default_rng(0).standard_normal(609).astype(np.float32) / 100
        self.batches = []

    def __call__(self, observations, legal_actions):
        self.batches.append(len(observations))
        assert observations.dtype == np.uint8 and observations.shape[1:] == (36, 36, 609)
        values = np.tanh(observations.reshape(len(observations), -1, 609).sum(axis=1) @ self.weights)
        priors = [1.0 + (actions % 7) for actions in legal_actions]
        return priors, values


def test_network_guided_mcts_batches_leaves_and_is_reproducible(tmp_path):
    network = TinyNetwork()
    one_hot = dict(observation="onehot", legal_actions="list")
    summary = taikyoku.selfplay(
        tmp_path / "n",
        players="mcts",
        games=3,
        simulations=8,
        max_plies=4,
        seed=2,
        evaluator=network,
        leaves_per_game=4,
        concurrent_games=4,
        **one_hot,
    )
    assert summary["games"] == 3 and summary["plies"] == 12
    assert max(network.batches) > 3  # leaves of several games (and several per game) in one call
    taikyoku.selfplay(
        tmp_path / "n2",
        players="mcts",
        games=3,
        simulations=8,
        max_plies=4,
        seed=2,
        evaluator=TinyNetwork(),
        leaves_per_game=4,
        concurrent_games=1,
        threads=1,
        **one_hot,
    )
    assert files(tmp_path / "n") == files(tmp_path / "n2")
    manifest = json.loads((tmp_path / "n" / "manifest.json").read_text())
    assert manifest["settings"]["network"]["leaves_per_game"] == 4
    assert manifest["settings"]["network"]["name"].endswith("TinyNetwork")


class CompactNetwork:
    """A numpy "network" on compact observations (piece ids) and CSR legal actions, as a real
    network with an embedding layer and a sparse policy head would take them."""

    def __init__(self):
        self.embedding = np.random.default_rng(1).standard_normal((512, 3)).astype(np.float32) / 50
        self.seen = []

    def __call__(self, observations, legal):
        actions, offsets = legal
        self.seen.append((observations.dtype, observations.shape[1:], len(offsets) - 1, actions.dtype))
        ids = observations[..., :2].astype(np.int64)  # mover's and opponent's piece ids (0: none)
        values = np.tanh(self.embedding[ids].sum(axis=(1, 2, 3)) @ np.ones(3, np.float32))
        priors = 1.0 + (actions % 5)  # one flat array aligned with `actions`
        return priors, values


def test_network_guided_mcts_with_compact_observations_and_csr_actions(tmp_path):
    network = CompactNetwork()
    settings = dict(players="mcts", games=4, simulations=6, max_plies=5, seed=3, leaves_per_game=2, games_per_shard=2)
    taikyoku.selfplay(tmp_path / "c", evaluator=network, concurrent_games=4, threads=2, **settings)
    dtype, shape, leaves, action_dtype = network.seen[0]
    assert (dtype, shape, action_dtype) == (np.uint16, (36, 36, 8), np.int64)
    assert max(s[2] for s in network.seen) > 2  # two halves of two games, two leaves each
    manifest = json.loads((tmp_path / "c" / "manifest.json").read_text())
    assert manifest["settings"]["network"]["observation"] == "compact"
    # Any thread count and any number of games in play give the same files.
    taikyoku.selfplay(tmp_path / "c1", evaluator=CompactNetwork(), concurrent_games=1, threads=1, **settings)
    taikyoku.selfplay(tmp_path / "c7", evaluator=CompactNetwork(), concurrent_games=7, threads=2, **settings)
    assert files(tmp_path / "c") == files(tmp_path / "c1") == files(tmp_path / "c7")


def test_a_gumbel_root_stores_the_improved_policy_whatever_the_threads(tmp_path):
    settings = dict(
        players="mcts",
        games=4,
        simulations=8,
        max_plies=6,
        seed=5,
        leaves_per_game=4,
        games_per_shard=2,
        variant="tenjiku",
        root="gumbel",
        gumbel_considered=4,
    )
    taikyoku.selfplay(tmp_path / "g", evaluator=CompactNetwork(), concurrent_games=4, threads=2, **settings)
    taikyoku.selfplay(tmp_path / "g1", evaluator=CompactNetwork(), concurrent_games=1, threads=1, **settings)
    assert files(tmp_path / "g") == files(tmp_path / "g1")
    ds = taikyoku.datasets.open(tmp_path / "g")
    assert ds.has_policy and ds.settings["players"]["gumbel"] == {"considered": 4, "scale": 1.0}
    assert ds.verify()["positions"] == ds.num_positions == 24
    batch = next(ds.batches(24, compact=True))
    counts = np.diff(batch["policy_offsets"])
    assert np.array_equal(counts, batch["legal_moves"])  # every legal move has its weight
    totals = np.add.reduceat(batch["policy_weights"], batch["policy_offsets"][:-1])
    assert np.allclose(totals, 1.0, atol=1e-4)
    # Four moves considered: a first search (no subtree reused) visits four moves.
    visited = np.diff(batch["visit_offsets"])
    assert np.all(visited[batch["ply"] == 0] == 4) and visited.max() > 4  # later: reused visits too
    # The heuristic evaluator with a Gumbel root too.
    summary = taikyoku.selfplay(
        tmp_path / "h", players="mcts", games=2, simulations=8, max_plies=4, variant="tenjiku", root="gumbel"
    )
    assert summary["positions"] == 8 and taikyoku.datasets.open(tmp_path / "h").has_policy
    with pytest.raises(taikyoku.TaikyokuError, match="root"):
        taikyoku.selfplay(tmp_path / "bad", players="mcts", root="alphazero")
    with pytest.raises(taikyoku.TaikyokuError, match="apply to players='mcts'"):
        taikyoku.selfplay(tmp_path / "bad", root="gumbel")


def test_network_guided_runs_store_legal_actions_and_size_shards_conservatively(tmp_path):
    """The network path stores the legal actions (the root's moves) like the heuristic one; its
    default shards assume random-length games (an untrained network plays about randomly)."""
    settings = dict(
        players="mcts", games=3, simulations=4, max_plies=5, seed=1, leaves_per_game=2, store_legal_actions=True
    )
    taikyoku.selfplay(tmp_path / "n", evaluator=CompactNetwork(), concurrent_games=2, threads=2, **settings)
    taikyoku.selfplay(tmp_path / "n1", evaluator=CompactNetwork(), concurrent_games=3, threads=1, **settings)
    assert files(tmp_path / "n") == files(tmp_path / "n1")
    ds = taikyoku.datasets.open(tmp_path / "n")
    assert ds.has_legal_actions and ds.verify()["positions"] == ds.num_positions  # verify replays the stored lists
    assert ds.settings["games_per_shard"] == 20_000  # 100,000 / min(max_plies 5, ...)
    from taikyoku.selfplay import settings_json

    def derived(**overrides):
        arguments = dict(
            players="mcts",
            games=1,
            seed=0,
            threads=None,
            format="arrow",
            max_plies=5000,
            simulations=4,
            variant="tenjiku",
            options=None,
            games_per_shard=None,
            progress=False,
            leaves_per_game=8,
            concurrent_games=1,
            mcts={},
        )
        arguments.update(overrides)
        return json.loads(settings_json(**arguments))["games_per_shard"]

    # Tenjiku: heuristic MCTS games ~150 plies, random ones ~300; a network is sized as the longer.
    assert derived() == 667 and derived(evaluator=CompactNetwork()) == 333 and derived(players="random") == 333


def test_the_evaluator_gets_reused_buffers(tmp_path):
    seen = []

    def network(observations, legal):
        seen.append(observations.base if observations.base is not None else observations)
        actions, offsets = legal
        return np.ones(len(actions), np.float32), np.zeros(len(offsets) - 1, np.float32)

    taikyoku.selfplay(
        tmp_path / "b", players="mcts", games=4, simulations=4, max_plies=3, evaluator=network, concurrent_games=4
    )
    assert len(seen) > 4 and len({id(buffer) for buffer in seen}) == 2  # one buffer per half, reused


def test_network_errors_surface_as_raised(tmp_path):
    def broken(observations, legal_actions):
        raise RuntimeError("GPU on fire")

    with pytest.raises(RuntimeError, match="GPU on fire"):
        taikyoku.selfplay(tmp_path / "x", players="mcts", games=1, simulations=4, max_plies=2, evaluator=broken)

    def short(observations, legal_actions):
        return [np.ones(1) for _ in legal_actions], np.zeros(len(legal_actions))

    with pytest.raises(taikyoku.TaikyokuError, match="priors"):
        taikyoku.selfplay(
            tmp_path / "y", players="mcts", games=1, simulations=4, max_plies=2, evaluator=short, legal_actions="list"
        )
    with pytest.raises(taikyoku.TaikyokuError, match="mcts"):
        taikyoku.selfplay(tmp_path / "z", games=1, evaluator=TinyNetwork())


def test_resume_after_interruption(tmp_path):
    out = tmp_path / "r"
    taikyoku.selfplay(out, games=5, max_plies=100, games_per_shard=2)
    complete = files(out)
    # An interrupted run: the last shard is missing and a temporary file is left behind.
    (out / "games" / "part-00002.arrow").unlink()
    (out / "positions" / "part-00002.arrow").rename(out / "positions" / "part-00002.arrow.tmp")
    summary = taikyoku.selfplay(out, games=5, max_plies=100, games_per_shard=2)
    assert summary["generated_games"] == 1 and summary["games"] == 5
    assert files(out) == complete
    assert not list(out.rglob("*.tmp"))
    assert json.loads((out / "manifest.json").read_text())["complete"] is True


def test_bad_arguments_and_directories_lose_nothing(tmp_path):
    for kwargs in (
        {"games": 0},
        {"players": "alphazero"},
        {"format": "csv"},
        {"max_plies": -1},
        {"threads": 0},
        {"seed": -5},
        {"games": 1.5},
        {"temperature": 0.5},
        {"bogus": 1},
        {"variant": "chess"},
        {"players": "mcts", "simulations": 0},
    ):
        with pytest.raises(ValueError):
            taikyoku.selfplay(tmp_path / "bad", **kwargs)
    assert not (tmp_path / "bad").exists() or not any((tmp_path / "bad").iterdir())
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("precious")
    with pytest.raises(taikyoku.TaikyokuError, match="not empty"):
        taikyoku.selfplay(foreign, games=1)
    assert (foreign / "thesis.tex").read_text() == "precious" and len(list(foreign.iterdir())) == 1
    taikyoku.selfplay(tmp_path / "ds", games=1, max_plies=10)
    before = files(tmp_path / "ds")
    with pytest.raises(taikyoku.TaikyokuError, match="other settings"):
        taikyoku.selfplay(tmp_path / "ds", games=2, max_plies=10)
    assert files(tmp_path / "ds") == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_missing_permission_is_an_os_error(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(OSError):
            taikyoku.selfplay(locked / "ds", games=1, max_plies=10)
    finally:
        locked.chmod(0o700)


def test_a_failing_write_is_an_os_error_and_keeps_complete_shards(tmp_path):
    # (A full disk itself is tested in Rust: tables::tests::a_full_disk_is_reported.)
    out = tmp_path / "fail"
    taikyoku.selfplay(out, games=3, max_plies=50, games_per_shard=1)
    kept = {k: v for k, v in files(out).items() if "00002" not in k}
    (out / "games" / "part-00002.arrow").unlink()
    (out / "positions" / "part-00002.arrow").unlink()
    # Something the generator cannot replace stands where the last shard's file goes.
    (out / "positions" / "part-00002.arrow").mkdir()
    with pytest.raises(OSError, match="part-00002"):
        taikyoku.selfplay(out, games=3, max_plies=50, games_per_shard=1)
    assert {k: v for k, v in files(out).items() if "00002" not in k} == kept
    assert not list(out.rglob("*.tmp"))


def test_cli_default_small_dataset_and_summary(tmp_path, capsys):
    assert main(["selfplay", "--out", str(tmp_path / "cli"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "8 games" in out and "plies/s" in out and "results: black" in out and "bytes/position" in out
    ds = taikyoku.datasets.open(tmp_path / "cli")
    assert ds.games.num_rows == 8


def test_cli_errors_exit_nonzero(tmp_path, capsys):
    with pytest.raises(SystemExit) as error:
        main(["selfplay", "--out", str(tmp_path / "e"), "--games", "0"])
    assert error.value.code == 2
    assert "games must be" in capsys.readouterr().err


def test_python_dash_m_works(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "taikyoku",
            "selfplay",
            "--out",
            str(tmp_path / "m"),
            "--games",
            "2",
            "--max-plies",
            "30",
            "--format",
            "parquet",
            "--quiet",
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "m" / "positions" / "part-00000.parquet").is_file()
