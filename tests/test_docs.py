"""The documentation's examples run, verbatim.

- Every ```python block of the pages in ``PAGES`` runs, each page's blocks in order in one namespace
  (like a notebook), inside a fresh temporary directory that holds a copy of the repository's
  ``datasets/samples``. A block whose first line starts with ``>>>`` is a doctest and its output is
  checked. Blocks write only into that temporary directory.
- An HTML comment on the line right before a fence changes that:
  ``<!-- doctest: skip (reason) -->`` skips the block (reported with the reason),
  ``<!-- doctest: requires torch datasets -->`` runs it only if those modules import (else skipped),
  ``<!-- doctest: xfail (reason) -->`` expects it to fail (a known library bug, named in the reason).
  A skipped block does not stop the blocks after it; a block that fails skips the rest of its page
  (they would fail on names it did not define).
- Every ``taikyoku ...`` command in a ```bash / ```sh block runs as its own test, through
  ``python -m taikyoku``, in a temporary directory (other commands, such as the README's
  ``pip install .`` and ``bash .ci/run``, are what CI itself runs, and are not run here).
- The docstrings of the package's modules run as doctests.

The expected number of blocks per page is pinned, so that a renamed fence or a moved page cannot make
the examples silently untested.
"""

from __future__ import annotations

import doctest
import importlib
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# page -> number of ```python blocks it holds (README.md must have some).
PAGES = {
    "README.md": 7,
    "docs/ACTIONS.md": 2,
    "docs/RULES.md": 0,
    "docs/PIECE_TABLE.md": 0,
    "docs/PERFORMANCE.md": 0,
    "docs/STRENGTH.md": 0,
    "datasets/README.md": 12,
}
SHELL_LANGUAGES = {"bash", "sh", "shell", "console"}
# taikyoku commands in the shell blocks of all pages, counted (a smoke check against losing them).
EXPECTED_COMMANDS = 8

MODULES = [
    "taikyoku",
    "taikyoku._core",
    "taikyoku.env",
    "taikyoku.vector",
    "taikyoku.selfplay",
    "taikyoku.datasets",
    "taikyoku.multiagent",
    "taikyoku.render",
    "taikyoku.__main__",
    "taikyoku.arena",
    "taikyoku.ratings",
    "taikyoku.search",
    "taikyoku.nn.actions",
    "taikyoku.nn.rl",
]

FENCE = re.compile(r"^(?P<indent>[ \t]*)```(?P<lang>[\w+-]*)[ \t]*$")
MARKER = re.compile(r"^\s*<!--\s*doctest:\s*(?P<what>.*?)\s*-->\s*$")


@dataclass
class Block:
    page: str
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    marker: str | None = None  # the text after "doctest:" in the comment before the fence
    skip: str | None = None  # reason to skip
    requires: list = field(default_factory=list)
    xfail: str | None = None

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def parse_marker(text: str, where: str):
    """``skip (reason)`` / ``requires mod ...`` / ``xfail (reason)`` -> (skip, requires, xfail)."""
    m = re.fullmatch(r"(skip|xfail)\s*\((.+)\)", text)
    if m:
        return (m.group(2), [], None) if m.group(1) == "skip" else (None, [], m.group(2))
    m = re.fullmatch(r"requires\s+([\w.]+(?:[\s,]+[\w.]+)*)", text)
    if m:
        return None, re.split(r"[\s,]+", m.group(1)), None
    raise ValueError(
        f"{where}: unknown doctest marker {text!r} (use 'skip (reason)', 'requires MODULE', 'xfail (reason)')"
    )


def blocks(page: str) -> list:
    """The fenced code blocks of a page, with the marker comment right before each."""
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    found = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or not m.group("lang"):
            if m:  # a bare fence opens a block without a language: skip to its end
                i += 1
                while i < len(lines) and lines[i].strip() != "```":
                    i += 1
            i += 1
            continue
        indent, lang, start = m.group("indent"), m.group("lang"), i
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            line = lines[i]
            body.append(line[len(indent) :] if line.startswith(indent) else line.lstrip())
            i += 1
        assert i < len(lines), f"{page}:{start + 1}: unclosed code fence"
        i += 1
        block = Block(page, start + 1, lang, "\n".join(body) + "\n")
        previous = start - 1
        while previous >= 0 and not lines[previous].strip():
            previous -= 1
        if previous >= 0:
            marker = MARKER.match(lines[previous])
            if marker:
                block.marker = marker.group("what")
                block.skip, block.requires, block.xfail = parse_marker(block.marker, block.id)
        found.append(block)
    # A marker must sit right before a fence, or it is a typo that would silently do nothing.
    marked = {b.line for b in found if b.marker is not None}
    for n, line in enumerate(lines):
        if MARKER.match(line):
            following = n + 1
            while following < len(lines) and not lines[following].strip():
                following += 1
            assert following + 1 in marked, f"{page}:{n + 1}: doctest marker not right before a code fence"
    return found


def python_blocks(page: str) -> list:
    return [b for b in blocks(page) if b.lang == "python"]


def missing_module(names) -> str | None:
    """The first of ``names`` that does not import as a real module (a bare directory that happens to
    be on sys.path, such as the repository's own ``datasets/``, does not count)."""
    for name in names:
        try:
            module = importlib.import_module(name)
        except ImportError:
            return name
        if getattr(module, "__file__", None) is None:
            return name
    return None


def copy_samples(directory: Path) -> None:
    shutil.copytree(ROOT / "datasets" / "samples", directory / "datasets" / "samples")


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A fresh working directory holding a copy of datasets/samples."""
    copy_samples(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run_block(block: Block, namespace: dict) -> None:
    if block.code.lstrip().startswith(">>>"):
        test = doctest.DocTestParser().get_doctest(block.code, namespace, block.id, block.page, block.line)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        output = []
        runner.run(test, out=output.append, clear_globs=False)
        if runner.failures:
            raise AssertionError(f"doctest in {block.id} failed:\n" + "".join(output))
    else:
        exec(compile(block.code, f"{block.page} (block at line {block.line})", "exec"), namespace)


def skip_reason(block: Block) -> str | None:
    if block.skip:
        return block.skip
    missing = missing_module(block.requires)
    return f"needs {missing}" if missing else None


class PageRun:
    """One page's blocks run in order in one namespace and one working directory, like a notebook."""

    def __init__(self, page: str, directory: Path):
        self.blocks = python_blocks(page)
        self.directory = directory
        self.namespace = {"__name__": "__doc_example__"}
        self.next = 0  # index of the first block not run yet
        self.broken = None  # the block that failed, after which the page stops

    def run(self, index: int) -> None:
        """Runs block ``index``, first running the blocks before it that have not run (``-k`` may
        select a later block alone); pytest.skip/xfail as its marker says."""
        while self.next <= index:
            block, target = self.blocks[self.next], self.next == index
            self.next += 1
            if self.broken:
                pytest.skip(f"an earlier block failed: {self.broken}")
            reason = skip_reason(block)
            if reason:
                if target:
                    pytest.skip(f"{block.id}: {reason}")
                continue
            try:
                run_block(block, self.namespace)
            except Exception as error:
                self.broken = block.id
                if not target:
                    pytest.fail(f"an earlier block failed: {block.id}: {type(error).__name__}: {error}")
                if block.xfail:
                    pytest.xfail(f"{block.xfail} ({type(error).__name__}: {error})")
                raise AssertionError(
                    f"{block.id} failed: {type(error).__name__}: {error}\n--- code ---\n{block.code}"
                ) from error
            if target and block.xfail:
                pytest.fail(f"{block.id} is marked xfail ({block.xfail}) but passed: remove the marker")


@pytest.fixture(scope="module")
def page_runs(tmp_path_factory):
    runs = {}

    def get(page: str) -> PageRun:
        if page not in runs:
            directory = tmp_path_factory.mktemp(re.sub(r"\W", "_", page))
            copy_samples(directory)
            runs[page] = PageRun(page, directory)
        return runs[page]

    return get


def test_pages_have_the_expected_python_blocks():
    counts = {page: len(python_blocks(page)) for page in PAGES}
    assert counts == PAGES
    assert counts["README.md"] > 0


EXAMPLES = [(page, index) for page in PAGES for index in range(len(python_blocks(page)))]


@pytest.mark.parametrize("page,index", EXAMPLES, ids=[python_blocks(p)[i].id for p, i in EXAMPLES])
def test_python_example(page, index, page_runs, monkeypatch):
    run = page_runs(page)
    monkeypatch.chdir(run.directory)
    run.run(index)


def shell_commands():
    """(id, argv, block) for each ``taikyoku ...`` command of the pages' shell blocks."""
    found = []
    for page in PAGES:
        for block in blocks(page):
            if block.lang not in SHELL_LANGUAGES:
                continue
            for offset, line in enumerate(block.code.splitlines(), start=1):
                words = shlex.split(line, comments=True)
                # Split "a && b" into commands; only the taikyoku ones are run.
                command = []
                for word in words + ["&&"]:
                    if word != "&&":
                        command.append(word)
                        continue
                    if command and command[0] == "taikyoku":
                        found.append((f"{page}:{block.line + offset}", command, block))
                    command = []
    return found


def test_shell_commands_are_found():
    assert len(shell_commands()) == EXPECTED_COMMANDS


@pytest.mark.parametrize("where,argv,block", shell_commands(), ids=[c[0] for c in shell_commands()])
def test_shell_command_runs(where, argv, block, workdir):
    if block.skip:
        pytest.skip(block.skip)
    missing = missing_module(block.requires)
    if missing:
        pytest.skip(f"needs {missing}")
    result = subprocess.run([sys.executable, "-m", "taikyoku", *argv[1:]], capture_output=True, text=True, timeout=300)
    if block.xfail and result.returncode != 0:
        pytest.xfail(block.xfail)
    assert result.returncode == 0, f"{where}: {shlex.join(argv)} exited {result.returncode}:\n{result.stderr}"
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("name", MODULES)
def test_module_doctests(name, workdir):
    if name == "taikyoku.multiagent":
        pytest.importorskip("pettingzoo")
    if name.startswith("taikyoku.nn"):
        pytest.importorskip("torch")
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    output = []
    tests = [t for t in finder.find(module, name) if t.examples]
    for test in tests:
        runner.run(test, out=output.append)
    assert runner.failures == 0, "".join(output)
    if name == "taikyoku":
        assert runner.tries > 0, "taikyoku/__init__.py should hold at least one doctest"


def test_markers_parse_and_typos_fail():
    assert parse_marker("skip (needs a GPU)", "x") == ("needs a GPU", [], None)
    assert parse_marker("requires torch datasets", "x") == (None, ["torch", "datasets"], None)
    assert parse_marker("xfail (bug: random_game(2**63))", "x") == (None, [], "bug: random_game(2**63)")
    with pytest.raises(ValueError):
        parse_marker("skipp (typo)", "x")
    assert missing_module(["json"]) is None
    assert missing_module(["json", "surely_not_a_module_here"]) == "surely_not_a_module_here"


# -- what a first-time user meets before any example runs (issue 29, items 10 and 11) ----------------


def test_the_readme_says_how_long_the_build_takes_and_how_to_watch_it():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "25 minutes on a busy 2-core machine" in readme
    assert "`pip install -v .`" in readme


def test_ci_prints_progress_and_runs_the_readme_test_command():
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "set -euo pipefail" in script
    assert "pip install -v" in script and '--quiet ".[' not in script, "the long build must show its progress"
    assert script.count('step "') >= 4, "a timestamped line per step"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "bash .ci/run" in readme
    assert "cargo test --release --locked -p taikyoku-engine -p taikyoku-search -p taikyoku-selfplay" in script
    assert "python3 -m pytest -q -p no:cacheprovider ." in script


def test_what_the_examples_write_is_ignored_by_git():
    """Every directory the README's commands and the examples write by default is in .gitignore."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and the repository")
    written = set()
    for page in ("README.md", "datasets/README.md", "examples/README.md"):
        text = (ROOT / page).read_text(encoding="utf-8")
        written |= {m for m in re.findall(r"--out[ =]([\w./-]+)", text) if m not in ("DIR", "s3", "elsewhere")}
    for example in sorted((ROOT / "examples").glob("*.py")):
        source = example.read_text(encoding="utf-8")
        written |= set(re.findall(r'"--(?:out|save)", type=Path, default=Path\("([\w./-]+)"\)', source))
    written |= {"tenjiku-data", "closed-loop", "train-data", "loop-run"}
    # A name without a suffix is a directory (asked with its slash: git then matches "dir/" patterns).
    paths = sorted(w if "." in Path(w).name else w.rstrip("/") + "/" for w in written)
    result = subprocess.run(["git", "check-ignore", "--no-index", *paths], cwd=ROOT, capture_output=True, text=True)
    ignored = {p.rstrip("/") for p in result.stdout.split()}
    written = {w.rstrip("/") for w in written}
    assert sorted(written - ignored) == [], ".gitignore misses what the docs' commands write"


def test_the_dataloader_example_asks_for_no_more_workers_than_shards():
    text = (ROOT / "datasets" / "README.md").read_text(encoding="utf-8")
    assert "num_workers=4" not in text and "min(4, len(train.dataset.shards))" in text
