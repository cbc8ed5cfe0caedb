"""Variants loaded from files at run time (taikyoku.load_variant): a copy of a built-in variant's
three files, loaded under another name, plays exactly the built-in games everywhere a built-in
name works (Game, random_game, the Gym and vector environments, self-play, the command line), and
bad files, clashing names and unreadable files get clear errors that change nothing.

Loaded variants live for the whole test process: each test loads its own name."""

from __future__ import annotations

import subprocess
import sys

import gymnasium
import numpy as np
import pyarrow as pa
import pytest
from conftest import copy_variant
from gymnasium.utils.env_checker import check_env

import taikyoku
import taikyoku.datasets as tds


def test_a_copy_plays_the_built_in_games(tmp_path):
    rules = copy_variant(tmp_path, "copy-games")
    assert taikyoku.load_variant(rules) == "copy-games"
    assert taikyoku.load_variant(str(rules)) == "copy-games"  # again: the same variant
    assert taikyoku.variants()[:4] == ["taikyoku", "daidai", "tenjiku", "taishin"]
    assert "copy-games" in taikyoku.variants()
    info = taikyoku.variant_info("copy-games")
    assert info == {
        "name": "copy-games",
        "title": "Tenjiku shogi",
        "gym_id": "taikyoku/Copy-games-v0",
        "built_in": False,
        "width": 16,
        "height": 16,
        "piece_types": 44,
        "pieces_per_side": 78,
    }
    assert taikyoku.variant_info("tenjiku")["built_in"] is True
    for seed in range(3):
        ours = taikyoku.random_game(seed, max_plies=300, variant="copy-games")
        theirs = taikyoku.random_game(seed, max_plies=300, variant="tenjiku")
        assert ours.history() == theirs.history() and ours.ply == theirs.ply
        assert ours.to_text() == theirs.to_text() and ours.result == theirs.result
    game = taikyoku.Game("copy-games")
    assert game.variant_name == "copy-games" and len(game.legal_moves()) == len(taikyoku.Game("tenjiku").legal_moves())
    assert taikyoku.Game.empty("copy-games").pieces() == []

    def described(variant):
        return [(t.abbrev, t.name, t.promotes_to, t.promoted_only, t.aliases) for t in taikyoku.piece_types(variant)]

    assert described("copy-games") == described("tenjiku")
    assert sum(t.promoted_only for t in taikyoku.piece_types("copy-games")) == 8
    assert taikyoku.rule_options("copy-games") == taikyoku.rule_options("tenjiku")
    # Rule options come with the files.
    touch = taikyoku.Game("copy-games", options=["promotion-touch"])
    assert touch.options == ["promotion-touch"]


def test_the_environments_take_a_loaded_variant(tmp_path):
    name = taikyoku.load_variant(copy_variant(tmp_path, "copy-envs", gym_id="CopyEnvs-v3"))
    assert taikyoku.GYM_IDS[name] == "taikyoku/CopyEnvs-v3"
    ours, theirs = gymnasium.make("taikyoku/CopyEnvs-v3"), gymnasium.make(taikyoku.GYM_IDS["tenjiku"])
    (a, info), (b, _) = ours.reset(seed=5), theirs.reset(seed=5)
    assert np.array_equal(a, b)
    rng = np.random.default_rng(0)
    for _ in range(20):
        action = int(rng.choice(np.asarray(info["legal_actions"])))
        a, ra, done, trunc, info = ours.step(action)
        b, rb, *_ = theirs.step(action)
        assert np.array_equal(a, b) and ra == rb
        if done or trunc:
            break
    check_env(ours.unwrapped, skip_render_check=True)
    vec = taikyoku.VectorEnv(2, variant=name)
    obs, _ = vec.reset(seed=1)
    assert obs.shape[0] == 2
    vec.close()
    env = taikyoku.pettingzoo_env(variant=name)
    env.reset(seed=1)
    assert env.agents == ["black", "white"]


def test_selfplay_with_a_loaded_variant_writes_the_built_in_games(tmp_path):
    name = taikyoku.load_variant(copy_variant(tmp_path, "copy-selfplay"))
    settings = dict(players="random", games=3, seed=4, max_plies=200)
    taikyoku.selfplay(tmp_path / "ours", variant=name, **settings)
    taikyoku.selfplay(tmp_path / "theirs", variant="tenjiku", **settings)
    ours, theirs = tds.open(tmp_path / "ours"), tds.open(tmp_path / "theirs")
    assert ours.variant == name
    # The same rows, but for the games' variant column (the files' metadata name it too).
    assert isinstance(ours.positions, pa.Table) and ours.num_positions == theirs.num_positions > 0
    assert ours.positions.equals(theirs.positions)
    assert set(ours.games.column("variant").to_pylist()) == {name}
    assert ours.games.drop_columns(["variant"]).equals(theirs.games.drop_columns(["variant"]))
    assert ours.replay(0).to_text() == theirs.replay(0).to_text()


def test_the_command_line_takes_a_rules_file(tmp_path):
    rules = copy_variant(tmp_path, "copy-cli")
    run = [sys.executable, "-m", "taikyoku"]
    games = [*run, "random-games", "--games", "2", "--max-plies", "100"]
    subprocess.run([*games, "--variant", str(rules), "--out", str(tmp_path / "ours.txt")], check=True)
    subprocess.run([*games, "--variant", "tenjiku", "--out", str(tmp_path / "theirs.txt")], check=True)
    ours, theirs = (tmp_path / "ours.txt").read_text(), (tmp_path / "theirs.txt").read_text()
    assert "copy-cli" in ours and ours.replace("copy-cli", "tenjiku") == theirs
    subprocess.run(
        [
            *run,
            "selfplay",
            "--variant",
            str(rules),
            "--games",
            "2",
            "--max-plies",
            "50",
            "--out",
            str(tmp_path / "data"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert tds.open(tmp_path / "data").variant == "copy-cli"
    bad = subprocess.run(
        [*run, "random-games", "--variant", str(tmp_path / "missing.rules")], capture_output=True, text=True
    )
    assert bad.returncode == 2 and "missing.rules" in bad.stderr and "Traceback" not in bad.stderr
    unknown = subprocess.run([*run, "random-games", "--variant", "nosuch"], capture_output=True, text=True)
    assert unknown.returncode == 2 and "invalid choice: 'nosuch'" in unknown.stderr


def test_bad_files_and_names_are_refused_and_change_nothing(tmp_path):
    before = (taikyoku.variants(), dict(taikyoku.GYM_IDS))
    # A built-in name, a taken Gym id, a name that cannot be a variant's.
    with pytest.raises(taikyoku.TaikyokuError, match="'tenjiku' is a built-in variant"):
        taikyoku.load_variant(copy_variant(tmp_path, "tenjiku", gym_id="Other-v0"))
    with pytest.raises(taikyoku.TaikyokuError, match="gym-id 'Tenjiku-v0' is already tenjiku's"):
        taikyoku.load_variant(copy_variant(tmp_path, "keepsid", gym_id="Tenjiku-v0"))
    with pytest.raises(taikyoku.TaikyokuError, match="cannot name a variant"):
        taikyoku.load_variant(copy_variant(tmp_path, "two words", gym_id="Two-v0"))
    # Files that cannot be read: OSError subclasses naming the file.
    with pytest.raises(FileNotFoundError) as missing:
        taikyoku.load_variant(tmp_path / "absent.rules")
    assert missing.value.filename.endswith("absent.rules")
    with pytest.raises(taikyoku.TaikyokuError, match="not a .rules file"):
        taikyoku.load_variant(tmp_path / "absent.pieces")
    # A bad line: the file and line, as check-variant says.
    rules = copy_variant(tmp_path, "broken", gym_id="Broken-v0")
    rules.with_suffix(".setup").write_text("# one rank\nK Q\n", encoding="utf-8")
    with pytest.raises(taikyoku.TaikyokuError, match="setup: line 2: 2 cells, the board is 16 files wide"):
        taikyoku.load_variant(rules)
    rules.write_text("board 16x16\npromotion sometimes\n", encoding="utf-8")
    with pytest.raises(taikyoku.TaikyokuError, match="rules file line 2: promotion must be capture or zone"):
        taikyoku.load_variant(rules)
    # An unmarked promoted-only piece (its key is a name, not a code).
    rules = copy_variant(tmp_path, "unmarked", gym_id="Unmarked-v0")
    pieces = rules.with_suffix(".pieces")
    pieces.write_text(pieces.read_text(encoding="utf-8").replace("royal promoted-only |", "royal |"), encoding="utf-8")
    with pytest.raises(taikyoku.TaikyokuError, match="marked `promoted-only`"):
        taikyoku.load_variant(rules)
    assert (taikyoku.variants(), taikyoku.GYM_IDS) == before
    with pytest.raises(taikyoku.TaikyokuError, match=r"load_variant\(path\)"):
        taikyoku.Game("broken")
    # Other files under a loaded name are refused; the loaded variant is unchanged.
    name = taikyoku.load_variant(copy_variant(tmp_path, "copy-fixed", gym_id="CopyFixed-v0"))
    other = tmp_path / "other"
    other.mkdir()
    with pytest.raises(taikyoku.TaikyokuError, match="already loaded in this process"):
        taikyoku.load_variant(copy_variant(other, "copy-fixed", of="daidai", gym_id="CopyFixed2-v0"))
    assert taikyoku.variant_info(name)["width"] == 16
