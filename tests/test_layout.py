"""The source layout's rules (docs/ARCHITECTURE.md): no import cycle among the modules of any Rust
crate (unit tests aside), no Rust source file over 1,000 lines, no Python module over 800."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CRATES = sorted(p.parent for p in (ROOT / "rust").glob("*/src/lib.rs"))

# `crate::name` anywhere, and the names of a `use crate::{a, b::c, ...}` group.
PATH = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)")
GROUP = re.compile(r"\buse\s+crate::\{([^}]*)\}", re.S)


def top_module(src: Path, file: Path) -> str | None:
    """The crate's top-level module a file belongs to (None for lib.rs, the crate root)."""
    parts = file.relative_to(src).with_suffix("").parts
    return None if parts == ("lib",) else parts[0]


def unit_test_folders(src: Path) -> set[Path]:
    """What `#[cfg(test)] mod NAME;` declarations point at: NAME.rs, or the folder NAME/ (without
    the `.rs`), whose files are all unit tests."""
    found = set()
    for file in src.rglob("*.rs"):
        for name in re.findall(
            r"#\[cfg\(test\)\]\s*(?:pub(?:\([a-z]+\))?\s+)?mod\s+([a-z_0-9]+)\s*;", file.read_text()
        ):
            folder = file.parent if file.name in ("mod.rs", "lib.rs") else file.parent / file.stem
            found |= {folder / f"{name}.rs", folder / name}
    return found


def without_tests(text: str) -> str:
    """The text before its inline unit tests (`#[cfg(test)] mod tests {`, last in a file by the
    crate's convention)."""
    match = re.search(r"^#\[cfg\(test\)\]\s*\nmod [a-z_]+ \{", text, re.M)
    return text[: match.start()] if match else text


def imports(crate: Path) -> dict[str, set[str]]:
    """Each top-level module's imports of the crate's other top-level modules."""
    modules = {top_module(crate, f) for f in crate.rglob("*.rs")} - {None}
    graph: dict[str, set[str]] = {m: set() for m in modules if m}
    tests = unit_test_folders(crate)
    for file in crate.rglob("*.rs"):
        module = top_module(crate, file)
        if module is None or file in tests or any(parent in tests for parent in file.parents):
            continue
        text = without_tests(file.read_text())
        names = set(PATH.findall(text))
        for group in GROUP.findall(text):
            names |= {item.strip().split("::")[0] for item in group.split(",") if item.strip()}
        graph[module] |= {n for n in names if n in modules and n != module}
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of the graph, or None."""
    state: dict[str, int] = {}  # 1: on the stack, 2: done

    def visit(node: str, stack: list[str]) -> list[str] | None:
        state[node] = 1
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return stack[stack.index(target) :] + [target]
            if target not in state and (found := visit(target, [*stack, target])):
                return found
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node, [node])):
            return found
    return None


def test_the_checker_finds_a_cycle():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None
    text = (
        "use crate::{tables, IoFailure};\nfn f() { crate::store::x(); }\n#[cfg(test)]\nmod tests {\nuse crate::play;\n}"
    )
    assert set(PATH.findall(without_tests(text))) == {"store"}


@pytest.mark.parametrize("crate", CRATES, ids=lambda p: p.parent.name)
def test_no_import_cycle(crate):
    graph = imports(crate)
    assert len(graph) >= 2, f"{crate}: too few modules found: {sorted(graph)}"
    assert cycle(graph) is None, f"{crate.parent.name}: import cycle {' -> '.join(cycle(graph) or [])}"


def test_no_long_source_files():
    rust = {p: len(p.read_text().splitlines()) for p in (ROOT / "rust").rglob("*.rs")}
    python = {p: len(p.read_text().splitlines()) for p in (ROOT / "python" / "taikyoku").rglob("*.py")}
    assert len(rust) > 50 and len(python) > 20
    long = [f"{p.relative_to(ROOT)}: {n}" for p, n in rust.items() if n > 1000]
    long += [f"{p.relative_to(ROOT)}: {n}" for p, n in python.items() if n > 800]
    assert not long, long
