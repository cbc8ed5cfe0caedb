"""The package's types, checked the way its users' tools see them.

- ``mypy --strict`` type-checks ``typing_user_script.py``, a user's script of the public API with
  every type spelt out, against the installed package (its ``py.typed`` annotations and
  ``_core.pyi``); the script also runs, so what it states is what the calls return.
- ``pyright --verifytypes`` scores how completely the public API is annotated (the share of
  exported symbols whose type is known; ``--ignoreexternal``: types from numpy, pyarrow, torch
  and gymnasium count as known). The whole package, and each module in ``TYPED`` on its own, must
  score at least ``THRESHOLD``.

Each check runs where its tool is installed (``pip install ".[test]"`` installs both).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "typing_user_script.py"

THRESHOLD = 0.90
#: Modules held to THRESHOLD on their own (the package as a whole is too).
TYPED = [
    "taikyoku.datasets",
    "taikyoku.selfplay",
    "taikyoku.__main__",
    "taikyoku.env",
    "taikyoku.vector",
    "taikyoku.search",
    "taikyoku.arena",
    "taikyoku.ratings",
    "taikyoku.multiagent",
    "taikyoku.render",
    "taikyoku.nn",
    "taikyoku.distributed",
]


def test_the_user_script_runs(tmp_path):
    result = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stdout + result.stderr


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory):
    """One mypy cache for the module's runs (the second one then skips numpy's analysis)."""
    pytest.importorskip("mypy")
    return tmp_path_factory.mktemp("mypy") / "cache"


def test_mypy_strict_accepts_the_user_script(tmp_path, mypy_cache):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-error-summary",
            "--cache-dir",
            str(mypy_cache),
            "--python-executable",
            sys.executable,
            str(SCRIPT),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_catches_a_wrong_use(tmp_path, mypy_cache):
    """The check has teeth: the stubs' Literal types and the summary's TypedDict reject mistakes."""
    wrong = tmp_path / "wrong.py"
    wrong.write_text(
        "import taikyoku\n"
        "side: int = taikyoku.Game().side_to_move\n"
        "taikyoku.Game().legal_actions(frame='sideways')\n"
        "summary = taikyoku.selfplay('ds')\n"
        "summary['gamez']\n",
        encoding="utf-8",
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--cache-dir",
            str(mypy_cache),
            "--python-executable",
            sys.executable,
            str(wrong),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert result.returncode == 1
    for line in (2, 3, 5):
        assert f"wrong.py:{line}: error" in result.stdout, result.stdout


def _pyright() -> list:
    """The command that runs pyright: its PyPI package's, else a pyright on PATH (npm's)."""
    import importlib.util

    if importlib.util.find_spec("pyright") is not None:
        return [sys.executable, "-m", "pyright"]
    found = shutil.which("pyright")
    if found is None:
        pytest.skip("pyright is not installed")
    return [found]


def verifytypes(module: str, tmp_path: Path) -> dict:
    """pyright's ``--verifytypes`` report of ``module``, as JSON."""
    # pyright finds the environment (and so the installed package) through the `python` on PATH.
    bin_dir = os.path.dirname(os.path.abspath(sys.executable))
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""), PYRIGHT_PYTHON_IGNORE_WARNINGS="1")
    result = subprocess.run(
        _pyright() + ["--verifytypes", module, "--ignoreexternal", "--outputjson"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
        env=env,
    )
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"pyright gave no JSON report (exit {result.returncode}):\n{result.stdout}\n{result.stderr}")
    return report["typeCompleteness"]


def _problems(report: dict, limit: int = 20) -> str:
    lines = []
    for symbol in report["symbols"]:
        if symbol["isExported"] and not symbol["isTypeKnown"]:
            messages = "; ".join(d["message"].splitlines()[0] for d in symbol["diagnostics"][:2])
            lines.append(f"{symbol['name']}: {messages}")
    return "\n".join(lines[:limit])


@pytest.mark.parametrize("module", TYPED)
def test_pyright_verifytypes_of_the_typed_modules(module, tmp_path):
    report = verifytypes(module, tmp_path)
    score = report["completenessScore"]
    assert score >= THRESHOLD, f"{module}: type completeness {score:.1%}:\n{_problems(report)}"


def test_pyright_verifytypes_of_the_package(tmp_path):
    report = verifytypes("taikyoku", tmp_path)
    score = report["completenessScore"]
    print(f"taikyoku: type completeness {score:.1%}")
    assert score >= THRESHOLD, f"taikyoku: type completeness {score:.1%}:\n{_problems(report)}"
