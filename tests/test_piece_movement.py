"""Where every Taikyoku piece can go from the middle of an empty board.

The expected moves come from tests/data/taikyoku_diagrams.txt: one movement diagram per piece type,
drawn in the seed's own glyphs (see the comment at the top of that file). Each piece is put alone on
square 18r (file 18, rank 18) of an empty 36x36 board, for Black and for White, and the set of
destination squares of its moves must equal the diagram's:

- ○ ☆ 3 cells, and every cell of a ranging line (│ ─ ＼ ／), are destinations;
- a ranging-line cell on the diagram's border continues as a ray to the edge of the board;
- the diagram's top row is forward for the piece's owner; for White the diagram is turned 180°.

Special cases:
- hook movers (hook mover, long-nosed goblin, capricorn, peacock) are checked by an explicit rule
  in test_hook_mover_destinations instead of by their diagram;
- lion-like pieces may also pass (a move back to their own square); moves whose to_square equals
  from_square are left out of the comparison, and only lion-like pieces may have them.
"""

import importlib
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

DATA_FILE = Path(__file__).parent / "data" / "taikyoku_diagrams.txt"

BOARD_SIZE = 36
START = "18r"  # file 18, rank 18: a 13x13 diagram window fits around it

# --------------------------------------------------------------------------------------------
# Squares: "12h" = file 12 (counted from Black's right), rank h (from the top); ranks a..z, aa..jj.
# --------------------------------------------------------------------------------------------

RANK_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def rank_name(rank):
    if rank <= 26:
        return RANK_LETTERS[rank - 1]
    return RANK_LETTERS[rank - 27] * 2


def square_name(file, rank):
    return f"{file}{rank_name(rank)}"


def parse_square(name):
    match = re.fullmatch(r"(\d+)([a-z]+)", name)
    assert match, f"bad square name {name!r}"
    file, letters = int(match.group(1)), match.group(2)
    if len(letters) == 1:
        rank = RANK_LETTERS.index(letters) + 1
    else:
        assert len(letters) == 2 and letters[0] == letters[1], f"bad rank in {name!r}"
        rank = RANK_LETTERS.index(letters[0]) + 27
    return file, rank


def on_board(file, rank):
    return 1 <= file <= BOARD_SIZE and 1 <= rank <= BOARD_SIZE


# --------------------------------------------------------------------------------------------
# The diagram file
# --------------------------------------------------------------------------------------------

CENTRE = "?"
EMPTY = "."
TARGETS = set("○☆3")  # a destination, nothing more
LINES = {  # ranging line glyph -> its two directions as (row step, column step) in the diagram
    "│": [(-1, 0), (1, 0)],
    "─": [(0, -1), (0, 1)],
    "＼": [(-1, -1), (1, 1)],
    "／": [(-1, 1), (1, -1)],
}
HOOK = "✕"  # hook-move line: handled by test_hook_mover_destinations
GLYPHS = {CENTRE, EMPTY, HOOK} | TARGETS | set(LINES)
KEYS = ("kanji", "abbrev", "alias", "source", "text", "note")


@dataclass
class Block:
    name: str
    line: int
    fields: dict = field(default_factory=dict)  # key -> list of values
    grid: list = field(default_factory=list)  # list of rows, each a list of glyphs

    @property
    def aliases(self):
        return self.fields.get("alias", [])

    @property
    def glyphs(self):
        return {g for row in self.grid for g in row}


def parse_diagram_file(text):
    blocks = []
    block = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if line.startswith("#"):
            continue
        if line.startswith("== "):
            block = Block(name=line[3:].strip(), line=number)
            blocks.append(block)
            continue
        if not line:
            block = None
            continue
        assert block is not None, f"line {number}: text outside a block: {line!r}"
        key, sep, value = line.partition(": ")
        if sep and key in KEYS:
            assert not block.grid, f"line {number}: {key!r} after the diagram of {block.name}"
            block.fields.setdefault(key, []).append(value.strip())
            continue
        cells = line.split(" ")
        assert all(len(c) == 1 for c in cells), f"line {number}: not a diagram row: {line!r}"
        block.grid.append(cells)
    return blocks


BLOCKS = parse_diagram_file(DATA_FILE.read_text(encoding="utf-8"))
BLOCK_BY_NAME = {b.name: b for b in BLOCKS}


def centre_of(grid):
    return len(grid) // 2, len(grid[0]) // 2


def rotate_180(grid):
    return [list(reversed(row)) for row in reversed(grid)]


def sign(x):
    return (x > 0) - (x < 0)


def diagram_destinations(grid, start=START, color="black"):
    """Squares named by a diagram for a piece of `color` on `start`, on an empty board."""
    if color == "white":
        grid = rotate_180(grid)
    file0, rank0 = parse_square(start)
    height, width = len(grid), len(grid[0])
    hr, hc = centre_of(grid)

    def square(r, c):  # diagram cell -> (file, rank); columns to the right = lower file numbers
        return file0 - (c - hc), rank0 + (r - hr)

    out = set()
    for r, row in enumerate(grid):
        for c, glyph in enumerate(row):
            if glyph in (EMPTY, CENTRE):
                continue
            if on_board(*square(r, c)):
                out.add(square(r, c))
            if glyph in LINES:
                directions = LINES[glyph]
            elif glyph == HOOK and (r == hr or c == hc or abs(r - hr) == abs(c - hc)):
                directions = [(sign(r - hr), sign(c - hc))]
            else:
                continue
            for dr, dc in directions:
                if 0 <= r + dr < height and 0 <= c + dc < width:
                    continue  # the line goes on inside the diagram, or stops there
                rr, cc = r + dr, c + dc  # a line on the border: the ray goes on to the board's edge
                while on_board(*square(rr, cc)):
                    out.add(square(rr, cc))
                    rr, cc = rr + dr, cc + dc
    return {square_name(f, k) for f, k in out}


# --------------------------------------------------------------------------------------------
# Matching diagram names with the engine's piece type names
# --------------------------------------------------------------------------------------------


def name_keys(name):
    """Spelling-tolerant keys: 'Mountain eagle (left)' ~ 'Left mountain eagle', 'Go-between' ~ 'Go Between'."""
    words = re.findall(r"[a-z]+", name.casefold().replace("’", "").replace("'", ""))
    return {" ".join(sorted(words)), "".join(words)}


def block_keys(block):
    keys = set()
    for n in [block.name, *block.aliases]:
        keys |= name_keys(n)
    return keys


@pytest.fixture(scope="module")
def engine():
    return importlib.import_module("taikyoku")


@pytest.fixture(scope="module")
def engine_types(engine):
    return list(engine.piece_types("taikyoku"))


def engine_type_for(block, engine_types):
    matches = [t for t in engine_types if name_keys(t.name) & block_keys(block)]
    assert len(matches) == 1, (
        f"{block.name}: expected exactly one engine piece type with this name, found {[t.name for t in matches]}"
    )
    return matches[0]


def destinations_on_empty_board(engine, piece_name, color, start=START):
    """Destinations of the piece alone on `start`, and all its moves."""
    g = engine.Game.empty(variant="taikyoku", side_to_move="black")
    g.place(start, piece_name, color)
    placed = g.piece_at(start)
    assert placed is not None and placed.name == piece_name and placed.color == color
    moves = list(g.moves_from(start))
    for m in moves:
        assert m.from_square == start, f"{piece_name}: move {m.notation} starts on {m.from_square}"
        assert list(m.captures) == [], f"{piece_name}: capture {m.notation} on an empty board"
        assert not m.promotes, f"{piece_name}: promotion {m.notation} without a capture"
    return {m.to_square for m in moves if m.to_square != start}, moves


LION_LIKE = {"Lion", "Lion Hawk", "Buddhist spirit", "Furious fiend"}
HOOK_MOVERS = {"Hook Mover", "Longnosed Goblin", "Capricorn", "Peacock"}
DIAGRAM_PIECES = [b.name for b in BLOCKS if b.name not in HOOK_MOVERS]

# --------------------------------------------------------------------------------------------
# The diagram file itself (these run without the engine)
# --------------------------------------------------------------------------------------------


def test_diagram_file_has_one_block_per_piece_type():
    names = [b.name for b in BLOCKS]
    assert len(names) == len(set(names)), "a piece name appears twice"
    # 207 legend codes (HD and ME each stand for a left and a right piece) + 92 promoted-only pieces
    assert len(BLOCKS) == 301
    all_keys = [k for b in BLOCKS for k in block_keys(b)]
    assert len(all_keys) == len(set(all_keys)), "two blocks could match the same engine name"


@pytest.mark.parametrize("name", [b.name for b in BLOCKS])
def test_diagram_is_well_formed(name):
    block = BLOCK_BY_NAME[name]
    grid = block.grid
    assert grid, f"{name}: no diagram"
    height, width = len(grid), len(grid[0])
    assert all(len(row) == width for row in grid), f"{name}: ragged diagram"
    assert height % 2 == 1 and width % 2 == 1, f"{name}: diagram without a middle cell"
    assert block.glyphs <= GLYPHS, f"{name}: unknown glyphs {block.glyphs - GLYPHS}"
    hr, hc = centre_of(grid)
    assert grid[hr][hc] == CENTRE, f"{name}: the piece '?' is not in the middle"
    assert sum(row.count(CENTRE) for row in grid) == 1, f"{name}: more than one '?'"
    assert re.fullmatch(r"seed line \d+ \((diagram|text; .+)\)", block.fields["source"][0]), name
    assert block.fields.get("text"), f"{name}: no seed text quoted"
    assert diagram_destinations(grid), f"{name}: the diagram shows no move at all"


def test_hook_glyph_only_in_hook_movers():
    assert {b.name for b in BLOCKS if HOOK in b.glyphs} == HOOK_MOVERS


def test_diagram_reading_examples():
    """The diagram reader itself, on three pieces a reader can check by hand."""
    # Pawn: one step forward. Black moves towards rank a, White towards rank jj.
    pawn = BLOCK_BY_NAME["Pawn"].grid
    assert diagram_destinations(pawn, "18r", "black") == {"18q"}
    assert diagram_destinations(pawn, "18r", "white") == {"18s"}
    # Knight: two forward and one to either side.
    knight = BLOCK_BY_NAME["Knight"].grid
    assert diagram_destinations(knight, "18r", "black") == {"17p", "19p"}
    assert diagram_destinations(knight, "18r", "white") == {"17t", "19t"}
    # Lance: the whole file in front of it, to the board's edge.
    lance = BLOCK_BY_NAME["Lance"].grid
    assert diagram_destinations(lance, "18r", "black") == {square_name(18, k) for k in range(1, 18)}
    assert diagram_destinations(lance, "18r", "white") == {square_name(18, k) for k in range(19, 37)}
    # Right chariot (Black): steps one square right (towards file 1), ranges forward-right.
    chariot = diagram_destinations(BLOCK_BY_NAME["Right Chariot"].grid, "18r", "black")
    assert "17r" in chariot and "16r" not in chariot and "19r" not in chariot
    assert "1a" in chariot  # the forward-right diagonal from 18r runs to file 1, rank a


# --------------------------------------------------------------------------------------------
# The engine against the diagrams
# --------------------------------------------------------------------------------------------


def test_diagram_names_are_the_engine_piece_types(engine_types):
    """Every engine piece type has exactly one diagram, and every diagram an engine piece type."""
    unmatched_types = []
    matched_blocks = []
    for t in engine_types:
        blocks = [b.name for b in BLOCKS if name_keys(t.name) & block_keys(b)]
        if len(blocks) != 1:
            unmatched_types.append((t.name, blocks))
        matched_blocks.extend(blocks)
    unmatched_blocks = sorted({b.name for b in BLOCKS} - set(matched_blocks))
    assert unmatched_types == [], "engine piece types without exactly one diagram"
    assert unmatched_blocks == [], "diagrams without an engine piece type"
    assert len(engine_types) == len(BLOCKS)


@pytest.mark.parametrize("color", ["black", "white"])
@pytest.mark.parametrize("name", DIAGRAM_PIECES)
def test_piece_moves_match_diagram(name, color, engine, engine_types):
    block = BLOCK_BY_NAME[name]
    piece = engine_type_for(block, engine_types)
    got, moves = destinations_on_empty_board(engine, piece.name, color)
    expected = diagram_destinations(block.grid, START, color)
    missing, extra = sorted(expected - got), sorted(got - expected)
    assert (missing, extra) == ([], []), f"{name} ({color}) from {START}: missing {missing}, unexpected {extra}"
    if name not in LION_LIKE:
        passes = [m.notation for m in moves if m.to_square == m.from_square]
        assert passes == [], f"{name}: only lion-like pieces may move back to their own square"


# --------------------------------------------------------------------------------------------
# Hook movers: ranging, with one optional 90° turn anywhere on the way
# --------------------------------------------------------------------------------------------

# (file step, rank step) for Black; White's are the opposite. Left = towards higher file numbers.
DIRECTIONS = {
    "f": (0, -1),
    "b": (0, 1),
    "l": (1, 0),
    "r": (-1, 0),
    "fl": (1, -1),
    "fr": (-1, -1),
    "bl": (1, 1),
    "br": (-1, 1),
}


def hook_destinations(start, first_directions, color):
    """Squares reached by ranging along one of first_directions, then (optionally) turning 90°."""
    file0, rank0 = parse_square(start)
    flip = 1 if color == "black" else -1
    out = set()
    for d in first_directions:
        df, dk = (flip * x for x in DIRECTIONS[d])
        f, k = file0 + df, rank0 + dk
        while on_board(f, k):
            out.add((f, k))
            for tf, tk in ((-dk, df), (dk, -df)):  # the two 90° turns
                f2, k2 = f + tf, k + tk
                while on_board(f2, k2):
                    out.add((f2, k2))
                    f2, k2 = f2 + tf, k2 + tk
            f, k = f + df, k + dk
    return {square_name(f, k) for f, k in out}


def all_squares():
    return {square_name(f, k) for f in range(1, BOARD_SIZE + 1) for k in range(1, BOARD_SIZE + 1)}


def same_colour_squares(square):
    f0, k0 = parse_square(square)
    return {s for s in all_squares() if sum(parse_square(s)) % 2 == (f0 + k0) % 2}


def peacock_destinations(color):
    # hook move starting along a forward diagonal, plus one or two squares along a rear diagonal
    out = hook_destinations(START, ["fl", "fr"], color)
    file0, rank0 = parse_square(START)
    flip = 1 if color == "black" else -1
    for d in ("bl", "br"):
        df, dk = DIRECTIONS[d]
        for n in (1, 2):
            out.add(square_name(file0 + flip * df * n, rank0 + flip * dk * n))
    return out


HOOK_RULES = {
    # the hook mover reaches every square of the board except its own
    "Hook Mover": lambda color: all_squares() - {START},
    # the diagonal hook movers reach every square of their own colour except their own square
    "Longnosed Goblin": lambda color: same_colour_squares(START) - {START},
    "Capricorn": lambda color: same_colour_squares(START) - {START},
    "Peacock": peacock_destinations,
}


def test_hook_rules_cover_the_hook_movers():
    assert set(HOOK_RULES) == HOOK_MOVERS
    # the short rules above agree with the step-by-step hook walk
    for color in ("black", "white"):
        assert HOOK_RULES["Hook Mover"](color) == hook_destinations(START, ["f", "b", "l", "r"], color)
        assert HOOK_RULES["Capricorn"](color) == hook_destinations(START, ["fl", "fr", "bl", "br"], color)
    # the peacock's hook starts forward only: two squares straight behind it are out of reach
    assert "18t" in same_colour_squares(START) and "18t" not in peacock_destinations("black")
    # ... but its hook may turn backward: 17q (forward-right) then back-right to 15s
    assert "15s" in peacock_destinations("black")


@pytest.mark.parametrize("color", ["black", "white"])
@pytest.mark.parametrize("name", sorted(HOOK_MOVERS))
def test_hook_mover_destinations(name, color, engine, engine_types):
    piece = engine_type_for(BLOCK_BY_NAME[name], engine_types)
    got, moves = destinations_on_empty_board(engine, piece.name, color)
    expected = HOOK_RULES[name](color)
    missing, extra = sorted(expected - got), sorted(got - expected)
    assert (missing, extra) == ([], []), (
        f"{name} ({color}) from {START}: missing {missing[:20]}, unexpected {extra[:20]}"
    )
    assert not [m for m in moves if m.to_square == m.from_square], f"{name} cannot pass"
