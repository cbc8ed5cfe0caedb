"""Plain helpers shared by the variant test modules (test_daidai.py, test_tenjiku.py,
test_move_categories.py): games built from (square, piece, colour) lists, the moves of a piece,
squares of a square board, and the reader of the seeds' ASCII movement diagrams.

Squares are the engine's: files 1..size counted from Black's right, ranks a.. from the top; Black
moves up (towards rank a). Diagrams are written in the seeds' glyphs (the piece is `?`):
- `○` step / limited range, `☆` jump (or a lion-type square), `!` igui square: a destination;
- `│ ─ ╲ ╱` ranging: every such cell is a destination, and a line that reaches the edge of the
  diagram goes on to the edge of the board; `.` an unreachable cell;
- the diagram's top is forward for the piece's owner; for White it is turned 180 degrees.
"""

import string

import pytest

import taikyoku

# --------------------------------------------------------------------------------------------
# games and moves
# --------------------------------------------------------------------------------------------


def make_game(variant, *pieces, to_move="black", options=None):
    """An empty `variant` board with `pieces`: (square, piece, color) or (square, piece, color,
    promoted)."""
    g = taikyoku.Game.empty(variant=variant, side_to_move=to_move, options=options)
    for square, piece, color, *promoted in pieces:
        g.place(square, piece, color, promoted=bool(promoted and promoted[0]))
    return g


def pawns(color, *squares):
    """Pawns of `color` on `squares`, as make_game arguments."""
    return [(square, "Pawn", color) for square in squares]


def destinations(g, square):
    return {m.to_square for m in g.moves_from(square)}


def move_keys(g, square):
    """Each move of the piece on `square` as (destination, frozenset of captured squares);
    a move offered promoting and declining is one key."""
    return {(m.to_square, frozenset(m.captures)) for m in g.moves_from(square)}


def k(to, *captures):
    """A move key: destination and captured squares."""
    return (to, frozenset(captures))


def moves_to(g, square, to, captures=None, promotes=None):
    """Moves of the piece on `square` to `to` (with exactly these captured squares, and this
    promotion choice, if given)."""
    return [
        m
        for m in g.moves_from(square)
        if m.to_square == to
        and (captures is None or set(m.captures) == set(captures))
        and (promotes is None or m.promotes == promotes)
    ]


def play(g, square, to, captures=None, promotes=None, unique=True):
    """Plays the move moves_to names (`unique`: it must be the only one; else the first)."""
    candidates = moves_to(g, square, to, captures, promotes)
    assert candidates, f"no move {square} -> {to} capturing {captures}"
    if unique:
        assert len(candidates) == 1, f"several moves {square} -> {to} capturing {captures}: {candidates}"
    g.play(candidates[0])
    return candidates[0]


# --------------------------------------------------------------------------------------------
# movement diagrams (seed glyphs)
# --------------------------------------------------------------------------------------------

STEPS = {  # direction -> (file step, rank step) for Black; White's are the negatives
    "f": (0, -1),
    "b": (0, 1),
    "l": (1, 0),
    "r": (-1, 0),
    "fl": (1, -1),
    "fr": (-1, -1),
    "bl": (1, 1),
    "br": (-1, 1),
}
TARGETS = set("○☆!")
LINES = {  # ranging glyph -> its two directions as (row step, column step) in the diagram
    "│": [(-1, 0), (1, 0)],
    "─": [(0, -1), (0, 1)],
    "╲": [(-1, -1), (1, 1)],
    "╱": [(-1, 1), (1, -1)],
}


def parse_diagram(text):
    grid = [line.split() for line in text.strip("\n").splitlines() if line.strip()]
    width = len(grid[0])
    assert all(len(row) == width for row in grid), f"ragged diagram:\n{text}"
    cells = {c for row in grid for c in row}
    assert cells <= TARGETS | set(LINES) | {".", "?"}, f"unknown glyphs {cells}"
    assert sum(row.count("?") for row in grid) == 1
    return grid


# --------------------------------------------------------------------------------------------
# one variant's square board
# --------------------------------------------------------------------------------------------


class VariantBoard:
    """The squares of a `size` x `size` variant (at most 26 ranks, a..), its games, and its
    diagrams read from `start`."""

    def __init__(self, variant, size, start):
        self.variant, self.size, self.start = variant, size, start
        self.ranks = string.ascii_lowercase[:size]
        self.all_squares = {self.sq(f, r) for f in range(1, size + 1) for r in range(1, size + 1)}

    def sq(self, file, rank):
        """Square name from a file number and a rank number (1 = a)."""
        return f"{file}{self.ranks[rank - 1]}"

    def parse_sq(self, name):
        return int(name[:-1]), self.ranks.index(name[-1]) + 1

    def on_board_or_none(self, f, r):
        return (f, r) if 1 <= f <= self.size and 1 <= r <= self.size else None

    def make_game(self, *pieces, to_move="black", options=None):
        """pieces: (square, piece, color) or (square, piece, color, promoted)."""
        return make_game(self.variant, *pieces, to_move=to_move, options=options)

    def black_square(self, file_letter_index, own_rank):
        """Black's own (file a.. = 0.., rank 1..) -> engine square: file a is `size`, rank 1 the
        last rank."""
        return self.sq(self.size - file_letter_index, self.size + 1 - own_rank)

    def rotated(self, square):
        f, r = self.parse_sq(square)
        return self.sq(self.size + 1 - f, self.size + 1 - r)

    def start_game_fixture(self):
        """A module-scoped fixture `start_game`: the variant's set-up position."""
        return pytest.fixture(scope="module", name="start_game")(lambda: taikyoku.Game(variant=self.variant))

    def diagram_destinations(self, text, start=None, color="black", igui_only=False):
        """The squares a diagram names for a piece of `color` on `start` of an empty board
        (`igui_only`: `!` cells are igui squares, not destinations)."""
        grid = parse_diagram(text)
        if color == "white":
            grid = [list(reversed(row)) for row in reversed(grid)]
        height, width = len(grid), len(grid[0])
        ((hr, hc),) = [(r, c) for r in range(height) for c in range(width) if grid[r][c] == "?"]
        file0, rank0 = self.parse_sq(self.start if start is None else start)

        def square(r, c):  # columns to the right are lower file numbers, rows down are higher ranks
            return file0 - (c - hc), rank0 + (r - hr)

        def on_board(f, r):
            return 1 <= f <= self.size and 1 <= r <= self.size

        out = set()
        for r, row in enumerate(grid):
            for c, glyph in enumerate(row):
                if glyph in (".", "?") or (glyph == "!" and igui_only):
                    continue
                assert on_board(*square(r, c)), "diagram larger than the board"
                out.add(square(r, c))
                for dr, dc in LINES.get(glyph, []):
                    rr, cc = r + dr, c + dc
                    if 0 <= rr < height and 0 <= cc < width:
                        continue  # the line goes on (or stops) inside the diagram
                    while on_board(*square(rr, cc)):  # on the diagram's edge: on to the board's edge
                        out.add(square(rr, cc))
                        rr, cc = rr + dr, cc + dc
        return {self.sq(f, r) for f, r in out}


# The lion dog worked example (Dai dai and Taishin; docs/PIECE_TABLE.md, `lionline(D,n,n)`, and
# docs/RULES.md, Dai dai "Lion dog"): a black lion dog on 9i, the forward line crowded.
OTHER_SEVEN_LINES_FROM_9I = {  # the lion dog's plain moves to the three squares of the empty lines
    "backward": ("9j", "9k", "9l"),
    "left": ("10i", "11i", "12i"),
    "right": ("8i", "7i", "6i"),
    "forward-left": ("10h", "11g", "12f"),
    "forward-right": ("8h", "7g", "6f"),
    "backward-left": ("10j", "11k", "12l"),
    "backward-right": ("8j", "7k", "6l"),
}
