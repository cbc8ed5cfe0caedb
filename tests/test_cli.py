"""The command line's errors: every bad flag value of ``taikyoku random-games`` and ``taikyoku selfplay``
ends with a one-line message, never a traceback: exit 2 with argparse's usage for a bad argument, exit 1
with one line on stderr for a file-system failure. Also: the seed printed and recorded is the one typed.
(The self-play output itself is tested in test_selfplay.py and test_datasets.py.)"""

import errno
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import interruptible
from conftest import run_cli as run

import taikyoku
from taikyoku.__main__ import GAME_SEED_MODULUS, game_seed

U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1
HUGE = "99999999999999999999"


pytestmark = pytest.mark.usefixtures("in_tmp")  # conftest.py: each test in its own directory


def error_line(command, err):
    """The one error line on stderr (after argparse's usage lines, if any); no traceback."""
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if "error:" in line]
    assert len(lines) == 1, err
    assert lines[0].startswith(f"taikyoku {command}: error: "), err
    assert err.rstrip("\n").splitlines()[-1] == lines[0], err
    return lines[0]


def usage_error(command, argv, capsys, *words):
    code, out, err = run(argv, capsys)
    assert code == 2, (code, out, err)
    line = error_line(command, err)
    assert err.startswith("usage: taikyoku"), err
    for word in words:
        assert word in line, line
    return line


# ---------------------------------------------------------------- random-games: bad values


@pytest.mark.parametrize(
    "flag,value,words",
    [
        ("--games", "0", ["--games must be between 1 and"]),
        ("--games", "-3", ["--games must be", "-3"]),
        ("--games", HUGE, ["--games must be", HUGE]),
        ("--games", str(U32_MAX + 1), ["--games must be"]),
        ("--games", "four", ["--games", "invalid int value"]),
        ("--seed", "-1", ["--seed must be between 0 and 18446744073709551615, not -1"]),
        ("--seed", str(2**64), ["--seed must be"]),
        ("--seed", HUGE, ["--seed must be", HUGE]),
        ("--seed", "1.5", ["--seed", "invalid int value"]),
        ("--max-plies", "0", ["--max-plies must be between 1 and 4294967295"]),
        ("--max-plies", "-1", ["--max-plies must be"]),
        ("--max-plies", str(U32_MAX + 1), ["--max-plies must be"]),
        ("--max-plies", HUGE, ["--max-plies must be"]),
        ("--max-plies", "", ["--max-plies", "invalid int value"]),
        ("--variant", "chess", ["--variant", "invalid choice"]),
        ("--out", "", ["--out must be a file-system path"]),
    ],
)
def test_random_games_bad_values(flag, value, words, capsys):
    usage_error("random-games", ["random-games", "--games", "1", "--max-plies", "2", flag, value], capsys, *words)


def test_random_games_out_is_an_existing_directory(tmp_path, capsys):
    (tmp_path / "records").mkdir()
    usage_error("random-games", ["random-games", "--games", "1", "--out", "records"], capsys, "is a directory")


def test_random_games_never_overwrites_a_file(tmp_path, capsys):
    (tmp_path / "games.txt").write_text("precious\n")
    usage_error("random-games", ["random-games", "--games", "1", "--out", "games.txt"], capsys, "already exists")
    assert (tmp_path / "games.txt").read_text() == "precious\n"


def test_random_games_out_in_a_missing_directory(tmp_path, capsys):
    usage_error(
        "random-games",
        ["random-games", "--games", "1", "--out", "nowhere/games.txt"],
        capsys,
        "nowhere",
        "does not exist",
    )
    assert not (tmp_path / "nowhere").exists()


def test_random_games_out_under_a_file(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    usage_error("random-games", ["random-games", "--games", "1", "--out", "file/games.txt"], capsys, "Not a directory")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_random_games_full_disk_is_exit_1(capsys):
    code, out, err = run(["random-games", "--games", "2", "--max-plies", "5", "--out", "/dev/full"], capsys)
    assert code == 1 and out == ""
    assert (
        error_line("random-games", err)
        == "taikyoku random-games: error: cannot write /dev/full: No space left on device"
    )
    assert not err.startswith("usage:")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs a user whom permissions restrict (not root)")
def test_random_games_unwritable_directory_is_exit_1(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, out, err = run(["random-games", "--games", "1", "--out", str(locked / "games.txt")], capsys)
    finally:
        locked.chmod(0o700)
    assert code == 1
    assert "Permission denied" in error_line("random-games", err)


def test_random_games_write_failure_leaves_no_partial_file(tmp_path, capsys, monkeypatch):
    def failing(seed, max_plies, variant):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(taikyoku, "random_game", failing)
    code, out, err = run(["random-games", "--games", "2", "--out", "games.txt"], capsys)
    assert code == 1
    assert (
        error_line("random-games", err)
        == "taikyoku random-games: error: cannot write games.txt: No space left on device"
    )
    assert not (tmp_path / "games.txt").exists()


# ---------------------------------------------------------------- random-games: seeds


def test_random_games_prints_and_records_the_seed_typed(tmp_path, capsys):
    code, out, err = run(
        ["random-games", "--games", "2", "--max-plies", "6", "--seed", str(U64_MAX), "--out", "g.txt"], capsys
    )
    assert code == 0, err
    assert out.startswith(f"2 games (master seed {U64_MAX}), ")
    lines = (tmp_path / "g.txt").read_text().splitlines()
    assert lines[0].startswith(f"# taikyoku random-games: master seed {U64_MAX}, 2 games, max plies 6")
    for index in range(2):
        seed = game_seed(U64_MAX, index)
        assert 0 <= seed < GAME_SEED_MODULUS
        assert lines[1 + 2 * index].startswith(f"game {index} seed {seed} ")
        # The recorded seed replays the game.
        assert lines[2 + 2 * index].split() == taikyoku.random_game(seed, max_plies=6).history()


def test_random_games_seed_zero_and_the_documented_derivation(capsys):
    assert [game_seed(0, i) for i in range(3)] == [0, 1, 2]
    assert game_seed(5, 2) == 5 * 1_000_003 + 2
    code, out, _ = run(["random-games", "--help"], capsys)
    assert code == 0 and "mod 2**64" in " ".join(out.split())
    code, out, err = run(["random-games", "--games", "1", "--max-plies", "3"], capsys)
    assert code == 0 and "master seed 0" in out and err == ""


# ---------------------------------------------------------------- selfplay: bad values


@pytest.mark.parametrize(
    "flags,words",
    [
        (["--games", "0"], ["games must be", "not 0"]),
        (["--games", "-2"], ["--games must be"]),
        (["--games", HUGE], ["--games must be"]),
        (["--games", "many"], ["--games", "invalid int value"]),
        (["--seed", "-1"], ["--seed must be between 0 and 18446744073709551615, not -1"]),
        (["--seed", str(2**64)], ["--seed must be"]),
        (["--seed", HUGE], ["--seed must be"]),
        (["--seed", "x"], ["--seed", "invalid int value"]),
        (["--threads", "0"], ["--threads must be between 1 and 256, not 0"]),
        (["--threads", "-1"], ["--threads must be"]),
        (["--threads", "257"], ["--threads must be"]),
        (["--threads", HUGE], ["--threads must be"]),
        (["--threads", "all"], ["--threads", "invalid int value"]),
        (["--max-plies", "0"], ["--max-plies must be"]),
        (["--max-plies", "-5"], ["--max-plies must be"]),
        (["--max-plies", str(U32_MAX + 1)], ["--max-plies must be"]),
        (["--max-plies", "ten"], ["--max-plies", "invalid int value"]),
        (["--simulations", "0"], ["--simulations must be"]),
        (["--simulations", "-1"], ["--simulations must be"]),
        (["--simulations", str(U32_MAX + 1)], ["--simulations must be"]),
        (["--simulations", "x"], ["--simulations", "invalid int value"]),
        (["--games-per-shard", "0"], ["--games-per-shard must be"]),
        (["--games-per-shard", "-1"], ["--games-per-shard must be"]),
        (["--games-per-shard", HUGE], ["--games-per-shard must be"]),
        (["--games-per-shard", "x"], ["--games-per-shard", "invalid int value"]),
        (["--players", "mcts", "--temperature", "-1"], ["--temperature must be"]),
        (["--players", "mcts", "--temperature", "nan"], ["--temperature must be"]),
        (["--players", "mcts", "--temperature", "inf"], ["--temperature must be"]),
        (["--players", "mcts", "--temperature", "1e39"], ["--temperature must be"]),
        (["--players", "mcts", "--temperature", "hot"], ["--temperature", "invalid float value"]),
        (["--temperature", "0.5"], ["--temperature applies to --players mcts"]),
        # The engine's ranges (taikyoku._core.MCTS_LIMITS), naming the value given (issue 29, item 4).
        (
            ["--players", "mcts", "--dirichlet-alpha", "1001"],
            ["--dirichlet-alpha must be a finite number in (0, 1000], not 1001.0"],
        ),
        (["--players", "mcts", "--dirichlet-alpha", "5e-324"], ["--dirichlet-alpha must be", "not 5e-324", "float32"]),
        (["--players", "mcts", "--c-puct", "3e38"], ["--c-puct must be a finite number in (0, 1e+06], not 3e+38"]),
        (
            ["--players", "mcts", "--temperature", "2e6"],
            ["--temperature must be a finite number in [0, 1e+06], not 2000000.0"],
        ),
        (["--players", "mcts", "--root", "gumbel", "--gumbel-scale", "2e6"], ["--gumbel-scale must be", "2000000.0"]),
        (
            ["--players", "mcts", "--root", "gumbel", "--gumbel-considered", "1048577"],
            ["--gumbel-considered must be an integer in [1, 1048576], not 1048577"],
        ),
        (["--players", "alphazero"], ["--players", "invalid choice"]),
        (["--format", "csv"], ["--format", "invalid choice"]),
        (["--variant", "chess"], ["--variant", "invalid choice"]),
    ],
)
def test_selfplay_bad_values(flags, words, tmp_path, capsys):
    usage_error("selfplay", ["selfplay", "--out", "ds", "--quiet", *flags], capsys, *words)
    assert not (tmp_path / "ds").exists()  # refused before anything was written


def test_selfplay_out_is_required_and_not_empty(capsys):
    usage_error("selfplay", ["selfplay"], capsys, "--out")
    usage_error("selfplay", ["selfplay", "--out", ""], capsys, "--out must be a file-system path")


def test_selfplay_out_is_an_existing_file(tmp_path, capsys):
    (tmp_path / "file").write_text("precious\n")
    usage_error("selfplay", ["selfplay", "--out", "file", "--quiet"], capsys, "file")
    assert (tmp_path / "file").read_text() == "precious\n"


def test_selfplay_out_is_a_foreign_directory(tmp_path, capsys):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep\n")
    usage_error("selfplay", ["selfplay", "--out", "mine", "--quiet"], capsys, "mine")
    assert sorted(p.name for p in (tmp_path / "mine").iterdir()) == ["notes.txt"]


def test_selfplay_other_settings_are_refused(tmp_path, capsys):
    code, _, err = run(["selfplay", "--out", "ds", "--games", "1", "--max-plies", "2", "--quiet"], capsys)
    assert code == 0, err
    usage_error(
        "selfplay", ["selfplay", "--out", "ds", "--games", "1", "--max-plies", "3", "--quiet"], capsys, "other settings"
    )


def test_selfplay_out_under_a_file_is_a_one_line_error(tmp_path, capsys):
    # mkdir fails in the file system (ENOTDIR): exit 1, unless the library refuses the path beforehand (2).
    (tmp_path / "file").write_text("")
    code, out, err = run(["selfplay", "--out", "file/ds", "--games", "1", "--max-plies", "2", "--quiet"], capsys)
    assert code in (1, 2), (code, out, err)
    error_line("selfplay", err)


def test_selfplay_file_system_failure_is_exit_1(capsys, monkeypatch):
    def failing(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", "ds/positions/part-00000.arrow.tmp")

    monkeypatch.setattr(sys.modules["taikyoku.selfplay"], "selfplay", failing)
    code, out, err = run(["selfplay", "--out", "ds", "--quiet"], capsys)
    assert code == 1 and not err.startswith("usage:")
    line = error_line("selfplay", err)
    assert "No space left on device" in line and "part-00000" in line


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs a user whom permissions restrict (not root)")
def test_selfplay_unwritable_directory_is_exit_1(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code, out, err = run(
            ["selfplay", "--out", str(locked / "ds"), "--games", "1", "--max-plies", "2", "--quiet"], capsys
        )
    finally:
        locked.chmod(0o700)
    assert code == 1
    assert "denied" in error_line("selfplay", err)


def test_selfplay_good_values_at_the_bounds(tmp_path, capsys):
    code, out, err = run(
        [
            "selfplay",
            "--out",
            "ds",
            "--players",
            "mcts",
            "--games",
            "1",
            "--max-plies",
            "2",
            "--simulations",
            "2",
            "--temperature",
            "0",
            "--threads",
            "1",
            "--games-per-shard",
            "1",
            "--quiet",
        ],
        capsys,
    )
    assert code == 0, err
    assert "1 games" in out


def test_selfplay_largest_seed(tmp_path, capsys):
    # Seeds are unsigned 64-bit integers.
    code, out, err = run(
        ["selfplay", "--out", "ds", "--games", "1", "--max-plies", "2", "--seed", str(2**64 - 1), "--quiet"], capsys
    )
    assert code == 0, err
    assert taikyoku.datasets.open(tmp_path / "ds").settings["seed"] == 2**64 - 1


# ---------------------------------------------------------------- through python -m


@pytest.mark.parametrize(
    "argv,code",
    [
        (["random-games", "--seed", HUGE], 2),
        (["random-games", "--seed", "-1"], 2),
        (["random-games", "--out", "."], 2),
        (["selfplay", "--out", "ds", "--threads", "0"], 2),
    ],
)
def test_python_dash_m_prints_no_traceback(argv, code):
    result = subprocess.run([sys.executable, "-m", "taikyoku", *argv], capture_output=True, text=True, timeout=120)
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr
    error_line(argv[0], result.stderr)


def test_check_variant_reports_a_summary_or_the_first_error(tmp_path, capsys):
    from taikyoku.__main__ import main

    source = Path(__file__).resolve().parent.parent / "rust" / "engine" / "variants"
    assert main(["check-variant", str(source / "taikyoku.rules")]) == 0
    assert "36x36 board, 301 piece types" in capsys.readouterr().out
    for kind in ("rules", "pieces", "setup"):
        (tmp_path / f"mine.{kind}").write_text(
            (source / f"taikyoku.{kind}").read_text(encoding="utf-8"), encoding="utf-8"
        )
    (tmp_path / "mine.rules").write_text("board 36x36\nrepetition once\n", encoding="utf-8")
    assert main(["check-variant", str(tmp_path / "mine.rules")]) == 1
    assert "rules file line 2: repetition must be" in capsys.readouterr().err
    (tmp_path / "mine.setup").unlink()
    assert main(["check-variant", str(tmp_path / "mine.rules")]) == 1
    assert "cannot read" in capsys.readouterr().err


# ---------------------------------------------------------------- Ctrl-C and closed pipes (issue 29, item 8)


def test_ctrl_c_in_random_games_is_one_line_and_leaves_no_partial_record(tmp_path):
    record = tmp_path / "games.txt"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "taikyoku",
            "random-games",
            "--games",
            "100000",
            "--max-plies",
            "3000",
            "--out",
            str(record),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=interruptible,
    )
    deadline = time.monotonic() + 30
    while not (record.exists() and record.stat().st_size > 0) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    assert err.strip() == "taikyoku random-games: interrupted", err
    assert not record.exists(), "an interrupted run left a partial record file"


@pytest.mark.parametrize(
    "argv",
    [
        ["info", "DATASET"],
        ["info", "DATASET", "--json"],
        ["random-games", "--games", "200"],
        ["--help"],
        ["selfplay", "--help"],
    ],
)
def test_output_into_a_closed_pipe_is_no_traceback(argv):
    """``taikyoku info DIR | head -1``: the reader stops after one line; the command ends quietly."""
    sample = Path(__file__).resolve().parent.parent / "datasets" / "samples" / "mcts-tiny"
    argv = [str(sample) if a == "DATASET" else a for a in argv]
    command = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "taikyoku", *argv])
    result = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {command} | head -c 1 > /dev/null"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.stderr == "", result.stderr
    assert result.returncode in (0, 141), result.returncode


def test_verify_lists_every_damaged_shard(tmp_path, capsys):
    out = tmp_path / "ds"
    taikyoku.selfplay(out, games=6, max_plies=10, games_per_shard=2)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["shards"][0]["black_wins"] += 1
    manifest["shards"][2]["truncated"] -= 1
    manifest["shards"][2]["white_wins"] += 1
    (out / "manifest.json").write_text(json.dumps(manifest))
    code, out_text, err = run(["verify", str(out)], capsys)
    assert code == 1 and "Traceback" not in err
    assert err.startswith("taikyoku verify: error: ") and "2 damaged shards" in err, err
    assert "shard 0: its entry counts" in err and "shard 2: its entry counts" in err, err
