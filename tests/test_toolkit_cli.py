"""The dataset toolkit on the command line: ``taikyoku --version``, ``taikyoku info DIR``,
``taikyoku verify DIR``, ``taikyoku selfplay --recipe FILE.json`` and every MCTS knob as a flag.

Exit statuses as the module docstring of ``taikyoku.__main__`` says: 0 done, 2 a bad argument
(argparse's usage and one error line), 1 a damaged dataset (one error line, no usage).
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli as run

import taikyoku
from taikyoku.__main__ import MCTS_FLAGS, RECIPE_ARGS, RECIPE_KEYS
from taikyoku.selfplay import MCTS_KNOBS, mcts_defaults

pytest.importorskip("pyarrow")

REPO = Path(__file__).resolve().parent.parent
RECIPES = sorted((REPO / "datasets" / "recipes").glob("*.json"))
SAMPLES = REPO / "datasets" / "samples"


pytestmark = pytest.mark.usefixtures("in_tmp")  # conftest.py: each test in its own directory


def one_error(command, err):
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if "error:" in line]
    assert len(lines) == 1 and lines[0].startswith(f"taikyoku {command}: error: "), err
    return lines[0]


def usage_error(command, argv, capsys, *words):
    code, out, err = run(argv, capsys)
    assert code == 2, (code, out, err)
    assert err.startswith("usage: taikyoku"), err
    line = one_error(command, err)
    for word in words:
        assert word in line, line
    return line


def settings_of(root):
    return json.loads((Path(root) / "manifest.json").read_text())["settings"]


def settings_json_of(args):
    """The settings ``taikyoku.selfplay(out, **args)`` records, computed without playing."""
    from taikyoku.__main__ import SELFPLAY_DEFAULTS
    from taikyoku.selfplay import settings_json

    merged = dict(SELFPLAY_DEFAULTS, **{k: v for k, v in args.items() if k not in MCTS_KNOBS})
    mcts = {k: v for k, v in args.items() if k in MCTS_KNOBS}
    return json.loads(settings_json(mcts=mcts, progress=False, leaves_per_game=8, concurrent_games=1, **merged))


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A small complete MCTS dataset: 3 games in 2 shards."""
    root = tmp_path_factory.mktemp("toolkit") / "ds"
    taikyoku.selfplay(root, players="mcts", games=3, seed=5, max_plies=8, simulations=4, games_per_shard=2)
    return root


# ---------------------------------------------------------------- --version


def test_version(capsys):
    code, out, err = run(["--version"], capsys)
    assert code == 0 and err == ""
    assert out.strip() == f"taikyoku {taikyoku.__version__} (dataset schema version {taikyoku._core.SCHEMA_VERSION})"


def test_version_through_python_dash_m():
    result = subprocess.run([sys.executable, "-m", "taikyoku", "--version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.startswith(f"taikyoku {taikyoku.__version__}")


# ---------------------------------------------------------------- info


def test_info_tells_what_the_dataset_holds(small, capsys):
    code, out, err = run(["info", str(small)], capsys)
    assert code == 0 and err == "", err
    fields = dict(
        line.split(None, 1) if not line.startswith("written by") else ("written by", line[10:].strip())
        for line in out.splitlines()
    )
    ds = taikyoku.datasets.open(small)
    assert fields["variant"] == "taikyoku (standard rules)"
    assert fields["players"].startswith("mcts, 4 simulations (c_puct 1.5, ")
    assert fields["games"] == "3 of 3 (complete)"
    assert fields["positions"] == f"{ds.num_positions:,}"
    games = ds.games.column("result").to_pylist()
    assert fields["results"] == (
        f"black {games.count('black')}, white {games.count('white')}, draws {games.count('draw')}, truncated {games.count(None)}"
    )
    assert fields["shards"] == "2 arrow shards of up to 2 games"
    assert fields["seed"] == "5, max plies 8"
    assert (
        fields["written by"]
        == f"taikyoku {taikyoku.__version__}, dataset schema version {taikyoku._core.SCHEMA_VERSION}"
    )


def test_info_json_is_the_dataset_summary(small, capsys):
    code, out, _ = run(["info", str(small), "--json"], capsys)
    assert code == 0
    info = json.loads(out)
    summary = taikyoku.datasets.open(small).summary()
    assert info == dict(summary, notes=[])
    assert info["games"] == info["planned_games"] == 3 and info["shards"] == info["planned_shards"] == 2
    assert info["black_wins"] + info["white_wins"] + info["draws"] + info["truncated"] == 3
    assert info["bytes"] == sum(p.stat().st_size for p in small.rglob("part-*"))


def partial_copy(small, tmp_path):
    """A copy of `small` whose manifest lists only its first shard, as an interrupted run leaves it."""
    root = tmp_path / "partial"
    shutil.copytree(small, root)
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["shards"], manifest["complete"] = manifest["shards"][:1], False
    (root / "manifest.json").write_text(json.dumps(manifest))
    return root


def test_info_of_an_incomplete_dataset(small, tmp_path, capsys):
    root = partial_copy(small, tmp_path)
    code, out, err = run(["info", str(root)], capsys)
    assert code == 0 and err == ""
    assert "2 of 3 (incomplete: 1 of 2 shards; rerun the generating command to finish it)" in out
    code, out, _ = run(["info", str(root), "--json"], capsys)
    info = json.loads(out)
    assert not info["complete"] and len(info["notes"]) == 1 and "has not finished" in info["notes"][0]


def test_info_of_the_committed_samples(capsys):
    for name in ("random-tiny", "mcts-tiny"):
        code, out, err = run(["info", str(SAMPLES / name)], capsys)
        assert code == 0 and any(
            line.split() == ["games", "2", "of", "2", "(complete)"] for line in out.splitlines()
        ), err


@pytest.mark.parametrize("command", ["info", "verify"])
def test_not_a_dataset_is_a_usage_error(command, tmp_path, capsys):
    usage_error(command, [command, "nowhere"], capsys, "nowhere does not exist")
    (tmp_path / "file").write_text("")
    usage_error(command, [command, "file"], capsys, "is not a directory")
    (tmp_path / "empty").mkdir()
    usage_error(command, [command, "empty"], capsys, "no manifest.json")
    usage_error(command, [command, ""], capsys, "DIR must be a file-system path")
    usage_error(command, [command], capsys, "required")


@pytest.mark.parametrize("command", ["info", "verify"])
def test_a_corrupt_manifest_is_exit_1(command, small, tmp_path, capsys):
    root = tmp_path / "corrupt"
    shutil.copytree(small, root)
    (root / "manifest.json").write_text("{not json")
    code, out, err = run([command, str(root)], capsys)
    assert code == 1 and not err.startswith("usage:")
    assert "is corrupt" in one_error(command, err)


# ---------------------------------------------------------------- verify


def test_verify_an_intact_dataset(small, capsys):
    code, out, err = run(["verify", str(small)], capsys)
    assert code == 0 and err == "", err
    ds = taikyoku.datasets.open(small)
    assert out.strip() == (
        f"ok: {small}: {len(ds)} games and {ds.num_positions} positions verified "
        "(every shard checked as a resume checks it, and every position replayed in the engine)"
    )
    code, out, _ = run(["verify", str(small), "--game", "1", "--game", "2"], capsys)
    assert code == 0 and "2 games" in out


def test_verify_with_a_progress_bar(small, capsys):
    code, out, err = run(["verify", str(small), "--progress"], capsys)
    assert code == 0 and out.startswith("ok:")
    assert "verify" in err and "Traceback" not in err  # tqdm's bar, on stderr


def test_verify_an_unknown_game_or_a_bad_id(small, capsys):
    code, _, err = run(["verify", str(small), "--game", "7"], capsys)
    assert code == 1 and "no game 7" in one_error("verify", err)
    usage_error("verify", ["verify", str(small), "--game", "-1"], capsys, "--game must be between 0 and")
    usage_error("verify", ["verify", str(small), "--game", "one"], capsys, "invalid int value")


def test_verify_finds_a_flipped_bit(small, tmp_path, capsys):
    root = tmp_path / "flipped"
    shutil.copytree(small, root)
    target = root / "positions" / "part-00001.arrow"
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0x01
    target.write_bytes(bytes(data))
    code, out, err = run(["verify", str(root)], capsys)
    assert code == 1 and out == ""
    assert "shard 1 is damaged: positions/part-00001.arrow fails its CRC-32 check" in one_error("verify", err)


def test_verify_finds_a_rewritten_file(small, tmp_path, capsys):
    """A file replaced by valid Arrow data with other contents: the checks in the manifest are
    dropped (as in old manifests), so only the replay can tell."""
    import pyarrow as pa

    root = tmp_path / "rewritten"
    shutil.copytree(small, root)
    path = root / "positions" / "part-00000.arrow"
    table = pa.ipc.open_file(pa.py_buffer(path.read_bytes())).read_all()  # not mapped: the file is rewritten
    legal = pa.array([v + 1 for v in table.column("legal_moves").to_pylist()], pa.uint32())
    table = table.set_column(table.schema.get_field_index("legal_moves"), table.schema.field("legal_moves"), legal)
    with pa.OSFile(str(path), "wb") as f, pa.ipc.new_file(f, table.schema) as writer:
        writer.write_table(table)
    manifest = json.loads((root / "manifest.json").read_text())
    for shard in manifest["shards"]:
        shard.pop("checks")
        shard["bytes"] = sum((root / shard[key]).stat().st_size for key in ("games_file", "positions_file"))
    (root / "manifest.json").write_text(json.dumps(manifest))
    code, _, err = run(["verify", str(root)], capsys)
    assert code == 1 and "legal_moves" in one_error("verify", err)
    # Intact again, it passes with a note that only the replay vouches for those shards.
    shutil.copy(small / "positions" / "part-00000.arrow", path)
    manifest["shards"][0]["bytes"] = sum(
        (root / manifest["shards"][0][k]).stat().st_size for k in ("games_file", "positions_file")
    )
    (root / "manifest.json").write_text(json.dumps(manifest))
    code, out, err = run(["verify", str(root)], capsys)
    assert code == 0 and out.startswith("note: ") and "no checksums" in out, (out, err)


def test_verify_finds_a_file_of_another_dataset(small, tmp_path, capsys):
    """Files carry their settings: a shard copied in from another run (same layout, other seed)
    is caught even where the manifest's checks were updated to match it."""
    import zlib

    other = tmp_path / "other"
    taikyoku.selfplay(other, players="mcts", games=3, seed=6, max_plies=8, simulations=4, games_per_shard=2)
    root = tmp_path / "mixed"
    shutil.copytree(small, root)
    name = "games/part-00001.arrow"
    shutil.copy(other / name, root / name)
    manifest = json.loads((root / "manifest.json").read_text())
    data = (root / name).read_bytes()
    manifest["shards"][1]["checks"]["games"] = {"bytes": len(data), "crc32": zlib.crc32(data)}
    (root / "manifest.json").write_text(json.dumps(manifest))
    code, _, err = run(["verify", str(root)], capsys)
    assert code == 1
    line = one_error("verify", err)
    assert "part-00001.arrow" in line and "settings" in line and "another dataset" in line


def test_verify_an_incomplete_dataset_checks_its_complete_shards(small, tmp_path, capsys):
    root = partial_copy(small, tmp_path)
    code, out, _ = run(["verify", str(root)], capsys)
    assert code == 0 and "2 games" in out and "note:" in out and "has not finished" in out


def test_verify_the_committed_samples_through_python_dash_m():
    for name in ("random-tiny", "mcts-tiny"):
        result = subprocess.run(
            [sys.executable, "-m", "taikyoku", "verify", str(SAMPLES / name)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0 and result.stdout.startswith("ok:"), result.stderr


# ---------------------------------------------------------------- selfplay --recipe


@pytest.mark.parametrize("path", RECIPES, ids=lambda p: p.stem)
def test_every_recipe_runs_directly(path, tmp_path, capsys):
    """A recipe runs as it is written; flags given as well replace its values (here scaled down)."""
    recipe = json.loads(path.read_text())
    code, out, err = run(
        ["selfplay", "--recipe", str(path), "--out", "ds", "--games", "1", "--max-plies", "2", "--quiet"], capsys
    )
    assert code == 0, err
    assert "warning" not in err
    # Fewer plies make more games per shard: games_per_shard is derived from the settings.
    derived = settings_json_of(dict(recipe["args"], games=1, max_plies=2))["games_per_shard"]
    assert settings_of(tmp_path / "ds") == dict(recipe["settings"], games=1, max_plies=2, games_per_shard=derived)
    assert settings_json_of(recipe["args"]) == recipe["settings"]


def test_a_recipe_supplies_out_and_every_arg(tmp_path, capsys):
    recipe = {
        "name": "mine",
        "out": "from-recipe",
        "args": {
            "players": "mcts",
            "games": 2,
            "seed": 4,
            "max_plies": 3,
            "simulations": 5,
            "games_per_shard": 1,
            "format": "parquet",
            "threads": 1,
            "temperature": 0.0,
            "temperature_plies": 3,
            "c_puct": 2.5,
            "dirichlet_alpha": 0.5,
            "dirichlet_fraction": 0.0,
            "priors": "uniform",
            "rollout_plies": 1,
            "opponent_moves": "leaf",
            "reuse_tree": False,
            "variant": "taikyoku",
            "options": [],
        },
    }
    (tmp_path / "mine.json").write_text(json.dumps(recipe))
    code, _, err = run(["selfplay", "--recipe", "mine.json", "--quiet"], capsys)
    assert code == 0, err
    settings = settings_of(tmp_path / "from-recipe")
    players = dict(settings["players"])
    assert players.pop("kind") == "mcts"
    args = recipe["args"]
    assert players == {k: args[k] for k in players}
    assert (settings["games"], settings["seed"], settings["format"], settings["games_per_shard"]) == (
        2,
        4,
        "parquet",
        1,
    )


def test_flags_override_the_recipe(tmp_path, capsys):
    path = next(p for p in RECIPES if p.stem == "mcts-heuristic-small")
    code, _, err = run(
        [
            "selfplay",
            "--recipe",
            str(path),
            "--out",
            "ds",
            "--games",
            "1",
            "--max-plies",
            "2",
            "--simulations",
            "3",
            "--c-puct",
            "0.5",
            "--priors",
            "uniform",
            "--format",
            "parquet",
            "--seed",
            "9",
            "--quiet",
        ],
        capsys,
    )
    assert code == 0, err
    settings = settings_of(tmp_path / "ds")
    assert settings["players"]["simulations"] == 3 and settings["players"]["c_puct"] == 0.5
    assert settings["players"]["priors"] == "uniform" and settings["format"] == "parquet" and settings["seed"] == 9
    assert settings["players"]["dirichlet_alpha"] == 0.03  # from the recipe (the engine's default)


def test_a_recipe_whose_settings_drifted_warns(tmp_path, capsys):
    recipe = json.loads(RECIPES[0].read_text())
    recipe["args"].update(games=1, max_plies=2)
    recipe["settings"] = dict(recipe["settings"], seed=12345)
    (tmp_path / "drift.json").write_text(json.dumps(recipe))
    code, _, err = run(["selfplay", "--recipe", "drift.json", "--out", "ds", "--quiet"], capsys)
    assert code == 0
    assert "taikyoku selfplay: warning: --recipe drift.json: its 'settings' differ" in err


@pytest.mark.parametrize(
    "content,words",
    [
        ({"args": {"games": 1}, "outt": "x"}, ["unknown keys 'outt'", "a recipe holds name, description, out, args"]),
        ({"args": {"gamez": 1, "seed": 0}}, ["unknown args 'gamez'", "known: players, games"]),
        ({"args": {"evaluator": "net"}}, ["unknown args 'evaluator'"]),
        ({"args": [1, 2]}, ["'args' must be an object"]),
        ([1, 2], ["must hold a JSON object, not list"]),
        ({"args": {"games": 1}, "out": 7}, ["'out' must be a directory name"]),
        ({"args": {"players": "random", "c_puct": 2.0}}, ["the recipe's 'c_puct' applies to --players mcts"]),
        ({"args": {"games": "64"}}, ["games must be an integer"]),
        ({"args": {"players": "mcts", "priors": "greedy"}}, ["priors"]),
    ],
)
def test_bad_recipes_are_usage_errors(content, words, tmp_path, capsys):
    (tmp_path / "r.json").write_text(json.dumps(content))
    usage_error("selfplay", ["selfplay", "--recipe", "r.json", "--out", "ds", "--quiet"], capsys, *words)
    assert not (tmp_path / "ds").exists()


def test_unreadable_recipes_are_usage_errors(tmp_path, capsys):
    usage_error(
        "selfplay", ["selfplay", "--recipe", "missing.json", "--out", "ds"], capsys, "missing.json", "cannot read"
    )
    (tmp_path / "broken.json").write_text("{")
    usage_error("selfplay", ["selfplay", "--recipe", "broken.json", "--out", "ds"], capsys, "is not valid JSON")
    (tmp_path / "nameless.json").write_text(json.dumps({"args": {"games": 1}}))
    usage_error("selfplay", ["selfplay", "--recipe", "nameless.json"], capsys, "--out")


def test_the_recipe_format_is_what_the_recipes_use():
    for path in RECIPES:
        recipe = json.loads(path.read_text())
        assert set(recipe) <= set(RECIPE_KEYS) and set(recipe["args"]) <= set(RECIPE_ARGS)


# ---------------------------------------------------------------- MCTS flags


ROOT_KNOBS = {"root", "gumbel_considered", "gumbel_scale"}


def test_every_mcts_knob_has_a_flag():
    assert set(MCTS_FLAGS) == set(MCTS_KNOBS)
    # Every setting the manifest records; the root's are recorded as "gumbel" when it is one.
    assert set(mcts_defaults()) == set(MCTS_KNOBS) - ROOT_KNOBS | {"simulations"}


def test_every_mcts_flag_reaches_the_manifest(tmp_path, capsys):
    values = {
        "c_puct": "2.25",
        "dirichlet_alpha": "0.5",
        "dirichlet_fraction": "0.75",
        "temperature": "0.5",
        "temperature_plies": "4",
        "priors": "uniform",
        "rollout_plies": "2",
        "opponent_moves": "leaf",
    }
    argv = [
        "selfplay",
        "--out",
        "ds",
        "--players",
        "mcts",
        "--games",
        "1",
        "--max-plies",
        "3",
        "--simulations",
        "5",
        "--quiet",
    ]
    for name, value in values.items():
        argv += [MCTS_FLAGS[name][0], value]
    code, _, err = run(argv + ["--no-reuse-tree"], capsys)
    assert code == 0, err
    players = settings_of(tmp_path / "ds")["players"]
    for name, value in values.items():
        assert str(players[name]) == value, name
    assert players["reuse_tree"] is False and players["simulations"] == 5
    code, _, err = run(
        [
            "selfplay",
            "--out",
            "ds2",
            "--players",
            "mcts",
            "--games",
            "1",
            "--max-plies",
            "2",
            "--reuse-tree",
            "--quiet",
        ],
        capsys,
    )
    assert code == 0 and settings_of(tmp_path / "ds2")["players"]["reuse_tree"] is True
    assert "gumbel" not in settings_of(tmp_path / "ds2")["players"]  # PUCT: manifests as before
    gumbel = ["--root", "gumbel", "--gumbel-considered", "4", "--gumbel-scale", "0.5"]
    code, _, err = run(
        ["selfplay", "--out", "ds3", "--players", "mcts", "--games", "1", "--max-plies", "2", *gumbel, "--quiet"],
        capsys,
    )
    assert code == 0, err
    assert settings_of(tmp_path / "ds3")["players"]["gumbel"] == {"considered": 4, "scale": 0.5}
    code, _, err = run(["selfplay", "--out", "ds4", "--games", "1", "--root", "gumbel", "--quiet"], capsys)
    assert code == 2 and "--root applies to --players mcts" in err


def test_the_help_shows_the_engine_defaults(capsys):
    code, out, _ = run(["selfplay", "--help"], capsys)
    text = " ".join(out.split())
    assert code == 0
    for _name, (flag, _, _) in MCTS_FLAGS.items():
        assert flag in text
    assert "(default 1.5)" in text and "(default 0.03)" in text and "(default captures)" in text


@pytest.mark.parametrize(
    "flags,words",
    [
        (["--c-puct", "0"], ["--c-puct must be a finite number in (0, 1e+06], not 0.0"]),
        (["--c-puct", "-1"], ["--c-puct must be"]),
        (["--c-puct", "nan"], ["--c-puct must be"]),
        (["--dirichlet-alpha", "0"], ["--dirichlet-alpha must be a finite number in (0, 1000], not 0.0"]),
        (["--dirichlet-alpha", "inf"], ["--dirichlet-alpha must be"]),
        (["--dirichlet-fraction", "1.5"], ["--dirichlet-fraction must be a finite number in [0, 1], not 1.5"]),
        (["--dirichlet-fraction", "-0.1"], ["--dirichlet-fraction must be"]),
        (["--temperature", "-1"], ["--temperature must be"]),
        (["--temperature-plies", "-1"], ["--temperature-plies must be an integer in [0, 4294967295], not -1"]),
        (["--temperature-plies", str(2**32)], ["--temperature-plies must be"]),
        (["--rollout-plies", "-2"], ["--rollout-plies must be an integer in [0,"]),
        (["--rollout-plies", "x"], ["--rollout-plies", "invalid int value"]),
        (["--priors", "greedy"], ["--priors", "invalid choice"]),
    ],
)
def test_bad_mcts_flags(flags, words, tmp_path, capsys):
    usage_error("selfplay", ["selfplay", "--out", "ds", "--players", "mcts", "--quiet", *flags], capsys, *words)
    assert not (tmp_path / "ds").exists()


@pytest.mark.parametrize(
    "flag,value",
    [(f, "1") for f in ("--c-puct", "--dirichlet-alpha", "--temperature-plies", "--rollout-plies")]
    + [("--priors", "uniform"), ("--no-reuse-tree", None)],
)
def test_mcts_flags_need_mcts_players(flag, value, capsys):
    usage_error(
        "selfplay",
        ["selfplay", "--out", "ds", flag] + ([value] if value else []),
        capsys,
        f"{flag.replace('no-', '')} applies to --players mcts",
    )


def test_rule_options_as_flags(tmp_path, capsys):
    option = taikyoku.rule_options()[0][0]
    code, _, err = run(
        ["selfplay", "--out", "ds", "--games", "1", "--max-plies", "2", "--option", option, "--quiet"], capsys
    )
    assert code == 0, err
    assert settings_of(tmp_path / "ds")["options"] == [option]
    usage_error(
        "selfplay", ["selfplay", "--out", "bad", "--option", "no-such-option", "--quiet"], capsys, "no-such-option"
    )


# ---------------------------------------------------------------- shard size and stored legal actions


def test_shard_positions_and_store_legal_actions_flags(tmp_path, capsys):
    argv = [
        "selfplay",
        "--out",
        "ds",
        "--players",
        "mcts",
        "--games",
        "5",
        "--max-plies",
        "4",
        "--simulations",
        "3",
        "--shard-positions",
        "8",
        "--store-legal-actions",
        "--quiet",
    ]
    code, _, err = run(argv, capsys)
    assert code == 0, err
    settings = settings_of(tmp_path / "ds")
    # 4-ply games (the limit caps MCTS's ~30), 8 positions a shard: 2 games per shard.
    assert settings["games_per_shard"] == 2 and settings["store_legal_actions"] is True
    ds = taikyoku.datasets.open(tmp_path / "ds")
    assert len(ds.shards) == 3 and ds.positions.schema.names[-1] == "legal_actions"
    code, out, err = run(["info", "ds"], capsys)
    assert code == 0 and "legal actions  stored (the positions' legal_actions column)" in out, out
    code, out, _ = run(["verify", "ds"], capsys)
    assert code == 0 and out.startswith("ok:")
    # Without the flags: the default target and no column.
    code, _, err = run(["selfplay", "--out", "plain", "--games", "1", "--max-plies", "2", "--quiet"], capsys)
    assert code == 0, err
    settings = settings_of(tmp_path / "plain")
    assert settings["games_per_shard"] == 50_000 and "store_legal_actions" not in settings
    code, out, _ = run(["info", "plain"], capsys)
    assert "legal actions  not stored (Dataset.legal_actions() replays the games)" in out
    code, out, _ = run(["selfplay", "--help"], capsys)
    text = " ".join(out.split())
    assert "--shard-positions" in text and "(default 100,000)" in text and "--store-legal-actions" in text


def test_games_per_shard_and_shard_positions_together_are_refused(tmp_path, capsys):
    usage_error(
        "selfplay",
        ["selfplay", "--out", "ds", "--games-per-shard", "2", "--shard-positions", "100", "--quiet"],
        capsys,
        "give --games-per-shard or --shard-positions, not both",
    )
    usage_error(
        "selfplay",
        ["selfplay", "--out", "ds", "--shard-positions", "0", "--quiet"],
        capsys,
        "--shard-positions must be between 1 and",
    )
    (tmp_path / "r.json").write_text(json.dumps({"args": {"games": 1, "games_per_shard": 4}}))
    usage_error(
        "selfplay",
        ["selfplay", "--recipe", "r.json", "--out", "ds", "--shard-positions", "100", "--quiet"],
        capsys,
        "not both",
    )
    (tmp_path / "s.json").write_text(json.dumps({"args": {"games": 1, "store_legal_actions": "yes"}}))
    usage_error(
        "selfplay",
        ["selfplay", "--recipe", "s.json", "--out", "ds", "--quiet"],
        capsys,
        "store_legal_actions must be True or False",
    )
    assert not (tmp_path / "ds").exists()
