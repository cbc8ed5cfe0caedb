"""Fixtures and helpers shared by the test modules."""

from __future__ import annotations

import faulthandler
import json
import os
import signal
import time
from pathlib import Path

import pytest


class Hang(BaseException):
    """Raised by the alarm: a BaseException, so that no ``except Exception`` swallows it."""


@pytest.fixture
def no_hang(request):
    """Fails a test that runs longer than its module's ``TIMEOUT`` seconds (a hang inside native
    code, where the alarm cannot interrupt, dumps the tracebacks and exits at 3x that)."""
    timeout = getattr(request.module, "TIMEOUT", 60)

    def alarm(signum, frame):
        raise Hang(f"{request.node.name} ran for more than {timeout} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(timeout)
    faulthandler.dump_traceback_later(3 * timeout, exit=True)
    try:
        yield
    finally:
        signal.alarm(0)
        faulthandler.cancel_dump_traceback_later()
        signal.signal(signal.SIGALRM, previous)


def contents(root: Path) -> dict:
    """Every file below ``root`` with its bytes: datasets compared byte for byte."""
    return {p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    """Runs the test in its own empty working directory (the command-line tests)."""
    monkeypatch.chdir(tmp_path)


def run_cli(argv, capsys):
    """``(exit status, stdout, stderr)`` of ``taikyoku ARGV``, run in this process."""
    from taikyoku.__main__ import main

    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def hold_writer_lock(directory: Path):
    """Takes ``directory``'s writer lock as another writer would (an open file with an flock on
    it, and who holds it written in), and returns the open file: the lock lasts until it closes."""
    import fcntl

    lock = open(directory / ".taikyoku-writer.lock", "a+")
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    record = {
        "pid": os.getpid(),
        "host": "elsewhere",
        "started": int(time.time()) - 5,
        "command": "taikyoku selfplay --out x",
    }
    lock.write(json.dumps(record))
    lock.flush()
    return lock


def copy_variant(directory: Path, name: str, of: str = "tenjiku", gym_id: str | None = None) -> Path:
    """Writes built-in ``of``'s three files into ``directory`` as ``name.*``; the rules file's
    ``gym-id`` line becomes ``gym_id`` (dropped when None: the id comes from the name)."""
    from taikyoku.registry import variant_texts

    rules, pieces, setup = variant_texts(of)
    lines = [line for line in rules.splitlines() if not line.startswith("gym-id")]
    if gym_id is not None:
        lines.append(f"gym-id {gym_id}")
    (directory / f"{name}.rules").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (directory / f"{name}.pieces").write_text(pieces, encoding="utf-8")
    (directory / f"{name}.setup").write_text(setup, encoding="utf-8")
    return directory / f"{name}.rules"


def interruptible() -> None:
    """``preexec_fn`` for a child process the test stops with SIGINT: Ctrl-C's default action in
    the child, whatever this process inherited (a shell starts background jobs with SIGINT
    ignored, and a Python started with SIGINT ignored never raises KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
