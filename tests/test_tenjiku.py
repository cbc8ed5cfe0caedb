"""Tenjiku shogi (variant "tenjiku"), checked against its seed.

Seed: the "Individual pieces" section of the English Wikipedia article "Tenjiku shogi"; "L123" is
line 123 of its plain-text copy, seed 004 (docs/RULES.md, "Tenjiku shogi"). Setup: the reference
setup; promotions: the promotion pairs (both copied below); rules the seed lacks: the public sources
named by ID ([W-sum], [CV-c39081], ...), all in docs/RULES.md, "Tenjiku shogi". Semantics of the
Tenjiku atoms and of burning, with several of the worked examples used here: docs/RULES.md, "Tenjiku
shogi" ("Movement", "Burning"), and docs/PIECE_TABLE.md, "Movement atoms"; each example is spelled
out in its test. Data under test: rust/engine/variants/tenjiku.{rules,pieces,setup}; reading
choices: docs/RULES.md, "Tenjiku shogi", "Reading choices (no option)".

Squares are the engine's: files 1..16 counted from Black's right, ranks a..p from the top; "1a" is
the top right corner. Black moves up (towards rank a). From Black's 8h: forward 8g, backward 8i,
left 9h, right 7h, forward-left 9g, forward-right 7g. Black's promotion zone is ranks a-e, White's
ranks l-p (the far 5 ranks, [W-sum]); 8h is outside both.

Movement diagrams: the seed's diagrams were lost in extraction; only their igui marks `!` survive,
one line per diagram row (L36, L39, L77-L79, L114-L115, L125-L127, L143-L145). Each diagram below
is rebuilt from the entry's text and Betza string, in the seed's glyphs (the piece is `?`):
- `○` a step, limited range or area-move square; `☆` a jump, or a lion-type square;
- `!` an igui square: also a destination (a step), except for the heavenly tetrarch, which may
  capture there without moving but never moves there (L76, L80);
- `│ ─ ╲ ╱` ranging: every such cell is a destination, and a line that reaches the edge of the
  diagram goes on to the edge of the board; `.` unreachable;
- the diagram's top is forward for the piece's owner; for White it is turned 180 degrees.
Pieces with lion power, an area move or a double move may also pass (L27, L38, L41, L70, L138,
L149): that move (back to their own square) is checked apart from the diagram.
"""

import random
from pathlib import Path

import pytest
from boards import STEPS, VariantBoard, destinations, k, move_keys, moves_to, parse_diagram, pawns, play

import taikyoku
import taikyoku._core

pytestmark = pytest.mark.skipif(
    "tenjiku" not in taikyoku.variants(),
    reason="variant 'tenjiku' is not built into this taikyoku",
)

VARIANT = "tenjiku"
VARIANT_DIR = Path(__file__).resolve().parent.parent / "rust" / "engine" / "variants"
SIZE = 16
START = "8h"
ZONE_DEPTH = 5

# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------

BOARD = VariantBoard(VARIANT, SIZE, START)
sq, parse_sq, make_game = BOARD.sq, BOARD.parse_sq, BOARD.make_game
diagram_destinations, on_board_or_none = BOARD.diagram_destinations, BOARD.on_board_or_none
ALL_SQUARES = BOARD.all_squares


def other(color):
    return "white" if color == "black" else "black"


def in_zone(square, color):
    """Whether `square` is in `color`'s promotion zone (its far 5 ranks)."""
    rank = parse_sq(square)[1]
    return rank <= ZONE_DEPTH if color == "black" else rank > SIZE - ZONE_DEPTH


def rank_from_front(square, color):
    """0 on `color`'s far rank, 1 on the next, ..."""
    rank = parse_sq(square)[1]
    return rank - 1 if color == "black" else SIZE - rank


def kings():
    """Both kings, in the corners far from the action (so a game has royals)."""
    return [("1p", "King", "black"), ("16a", "King", "white")]


def ray(start, direction, color="black", limit=SIZE):
    """The squares from `start` along `direction` (STEPS key) for `color`, to the board's edge."""
    sign = 1 if color == "black" else -1
    dx, dy = (sign * c for c in STEPS[direction])
    f, r = parse_sq(start)
    out = []
    for i in range(1, limit + 1):
        ff, rr = f + i * dx, r + i * dy
        if not (1 <= ff <= SIZE and 1 <= rr <= SIZE):
            break
        out.append(sq(ff, rr))
    return out


ORTH = ["f", "b", "l", "r"]
DIAG = ["fl", "fr", "bl", "br"]
ALL8 = ORTH + DIAG

# --------------------------------------------------------------------------------------------
# the table: 44 types, promotions, ranks
# --------------------------------------------------------------------------------------------

# The promotion pairs of docs/RULES.md, "Tenjiku shogi" (promoted-only targets marked *).
PROMOTIONS = {
    "Pawn": "Gold general",
    "Gold general": "Rook",
    "Ferocious leopard": "Bishop",
    "Rook": "Dragon king",
    "Bishop": "Dragon horse",
    "Dragon king": "Soaring eagle",
    "Dragon horse": "Horned falcon",
    "Soaring eagle": "Rook general",
    "Horned falcon": "Bishop general",
    "Rook general": "Great general",
    "Bishop general": "Vice general",
    "Drunk elephant": "Crown prince*",
    "Knight": "Side soldier",
    "Iron general": "Vertical soldier",
    "Side soldier": "Water buffalo",
    "Vertical soldier": "Chariot soldier",
    "Water buffalo": "Fire demon",
    "Chariot soldier": "Heavenly tetrarch*",
    "Phoenix": "Free king",
    "Kirin": "Lion",
    "Free king": "Free eagle",
    "Lion": "Lion hawk",
    "Copper general": "Side mover",
    "Silver general": "Vertical mover",
    "Side mover": "Free boar*",
    "Vertical mover": "Flying ox*",
    "Dog": "Multi general*",
    "Blind tiger": "Flying stag*",
    "Lance": "White horse*",
    "Reverse chariot": "Whale*",
}
PROMOTED_ONLY = {t.rstrip("*") for t in PROMOTIONS.values() if t.endswith("*")}
NON_PROMOTING_SETUP = {"King", "Great general", "Vice general", "Free eagle", "Lion hawk", "Fire demon"}
# Range-jump ranks (L25, L29, L32, L34): royals 0, then GG, VG, RG = BG.
RANKS_OF = {"King": 0, "Crown prince": 0, "Great general": 1, "Vice general": 2, "Rook general": 3, "Bishop general": 3}


def piece_types():
    return {t.name: t for t in taikyoku.piece_types(VARIANT)}


def test_44_types_36_set_up_8_promoted_only():
    types = piece_types()
    assert len(types) == 44
    assert {n for n, t in types.items() if t.promoted_only} == PROMOTED_ONLY
    assert len(PROMOTED_ONLY) == 8
    assert {n for n, t in types.items() if t.royal} == {"King", "Crown prince"}


def test_promotions_match_the_reference():
    types = piece_types()
    got = {n: t.promotes_to for n, t in types.items() if t.promotes_to}
    assert got == {n: p.rstrip("*") for n, p in PROMOTIONS.items()}
    assert {n for n, t in types.items() if not t.promotes_to and not t.promoted_only} == NON_PROMOTING_SETUP


def test_range_jump_ranks():
    types = piece_types()
    got = {n: t.range_rank for n, t in types.items() if t.range_rank is not None}
    assert got == RANKS_OF


def test_fire_demon_is_the_only_burner():
    """Only the fire demon burns (L71-L74): a piece next to an enemy gold is not burned."""
    g = make_game(("8h", "Gold general", "black"), ("8f", "Gold general", "white"), *kings())
    play(g, "8h", "8g")
    assert g.piece_at("8g").name == "Gold general"


# --------------------------------------------------------------------------------------------
# movement diagrams (seed glyphs), one per piece type
# --------------------------------------------------------------------------------------------


def igui_rows(text):
    """The number of `!` cells on each diagram row that has any (the seed's surviving residue)."""
    return [row.count("!") for row in parse_diagram(text) if "!" in row]


# name -> (seed lines of its entry, diagram rebuilt from the text and Betza string)
DIAGRAMS = {
    "King": (
        "L7-L10, L16-L19 (K)",
        """
○ ○ ○
○ ? ○
○ ○ ○
""",
    ),
    "Crown prince": (
        "L12-L14 (K)",
        """
○ ○ ○
○ ? ○
○ ○ ○
""",
    ),
    "Drunk elephant": (
        "L21 (FfrlW): every direction but straight back",
        """
○ ○ ○
○ ? ○
○ . ○
""",
    ),
    # Range jump along the diagonals (no pieces: plain ranging), or an area move of up to three
    # king steps: every square within three (L23-L27).
    "Vice general": (
        "L22-L27 (KddKdd3KmBcppB)",
        """
╲ ○ ○ ○ ○ ○ ╱
○ ╲ ○ ○ ○ ╱ ○
○ ○ ╲ ○ ╱ ○ ○
○ ○ ○ ? ○ ○ ○
○ ○ ╱ ○ ╲ ○ ○
○ ╱ ○ ○ ○ ╲ ○
╱ ○ ○ ○ ○ ○ ╲
""",
    ),
    "Great general": (
        "L28-L29 (mQcppQ)",
        """
╲ │ ╱
─ ? ─
╱ │ ╲
""",
    ),
    "Bishop general": (
        "L31-L32 (mBcppB)",
        """
╲ . ╱
. ? .
╱ . ╲
""",
    ),
    "Rook general": (
        "L33-L34 (mRcppR)",
        """
. │ .
─ ? ─
. │ .
""",
    ),
    # Ranges every way but straight forward (L37); lion power straight forward (L38): the igui
    # square L36 (one `!`) and the second square.
    "Horned falcon": (
        "L36-L38 (BrlbRdhfW)",
        """
╲ . ☆ . ╱
. ╲ ! ╱ .
─ ─ ? ─ ─
. ╱ │ ╲ .
╱ . │ . ╲
""",
    ),
    "Soaring eagle": (
        "L39-L41 (RbBdhfF)",
        """
☆ . │ . ☆
. ! │ ! .
─ ─ ? ─ ─
. ╱ │ ╲ .
╱ . │ . ╲
""",
    ),
    "Dragon horse": (
        "L43-L45 (WB)",
        """
╲ ○ ╱
○ ? ○
╱ ○ ╲
""",
    ),
    "Dragon king": (
        "L46-L48 (FR)",
        """
○ │ ○
─ ? ─
○ │ ○
""",
    ),
    "Bishop": (
        "L50 (B)",
        """
╲ . ╱
. ? .
╱ . ╲
""",
    ),
    "Rook": (
        "L54 (R)",
        """
. │ .
─ ? ─
. │ .
""",
    ),
    "Ferocious leopard": (
        "L56-L57 (FfbW)",
        """
○ ○ ○
. ? .
○ ○ ○
""",
    ),
    "Gold general": (
        "L58-L59 (WfF)",
        """
○ ○ ○
○ ? ○
. ○ .
""",
    ),
    "Pawn": (
        "L61 (fW)",
        """
○
?
""",
    ),
    # Range along the diagonals and the file (L67), or an area move of up to three steps (L69).
    "Fire demon": (
        "L66-L72 (BfbRKddKdd3K)",
        """
╲ ○ ○ │ ○ ○ ╱
○ ╲ ○ │ ○ ╱ ○
○ ○ ╲ │ ╱ ○ ○
○ ○ ○ ? ○ ○ ○
○ ○ ╱ │ ╲ ○ ○
○ ╱ ○ │ ○ ╲ ○
╱ ○ ○ │ ○ ○ ╲
""",
    ),
    # Never to an adjacent square: igui there (L76, L80, the `!` rows L77-L79); ranges along the
    # diagonals and the file from the second square (L81); two or three squares sideways (L82).
    "Heavenly tetrarch": (
        "L76-L82 (ttfbttrlttshK)",
        """
╲ . . │ . . ╱
. ╲ . │ . ╱ .
. . ! ! ! . .
○ ○ ! ? ! ○ ○
. . ! ! ! . .
. ╱ . │ . ╲ .
╱ . . │ . . ╲
""",
    ),
    "Water buffalo": (
        "L89-L90 (BrlRfbR2)",
        """
╲ . ○ . ╱
. ╲ ○ ╱ .
─ ─ ? ─ ─
. ╱ ○ ╲ .
╱ . ○ . ╲
""",
    ),
    "Chariot soldier": (
        "L94-L95 (BfbRrlR2)",
        """
╲ . │ . ╱
. ╲ │ ╱ .
○ ○ ? ○ ○
. ╱ │ ╲ .
╱ . │ . ╲
""",
    ),
    "Side soldier": (
        "L97-L99 (rlRfR2bW)",
        """
. . ○ . .
. . ○ . .
─ ─ ? ─ ─
. . ○ . .
""",
    ),
    "Vertical soldier": (
        "L100-L102 (fRrlR2bW)",
        """
. . │ . .
○ ○ ? ○ ○
. . ○ . .
""",
    ),
    "Knight": (
        "L104 (ffN)",
        """
☆ . ☆
. . .
. ? .
""",
    ),
    "Iron general": (
        "L108 (fK)",
        """
○ ○ ○
. ? .
""",
    ),
    # Queen, a double diagonal step (the `!` rows L114-L115 on the four diagonal squares) and the
    # jumps to the second square orthogonally and diagonally (L116-L119, QdFDA).
    "Free eagle": (
        "L113-L119 (QdFDA)",
        """
╲ . . │ . . ╱
. ☆ . ☆ . ☆ .
. . ! │ ! . .
─ ☆ ─ ? ─ ☆ ─
. . ! │ ! . .
. ☆ . ☆ . ☆ .
╱ . . │ . . ╲
""",
    ),
    # Bishop plus full lion power (L123-L129, the `!` rows L125-L127).
    "Lion hawk": (
        "L121-L129 (BKNADdK)",
        """
╲ . . . . . ╱
. ☆ ☆ ☆ ☆ ☆ .
. ☆ ! ! ! ☆ .
. ☆ ! ? ! ☆ .
. ☆ ! ! ! ☆ .
. ☆ ☆ ☆ ☆ ☆ .
╱ . . . . . ╲
""",
    ),
    "Free king": (
        "L140-L141 (Q)",
        """
╲ │ ╱
─ ? ─
╱ │ ╲
""",
    ),
    "Lion": (
        "L142-L151 (KNADdK; the `!` rows L143-L145)",
        """
☆ ☆ ☆ ☆ ☆
☆ ! ! ! ☆
☆ ! ? ! ☆
☆ ! ! ! ☆
☆ ☆ ☆ ☆ ☆
""",
    ),
    "Phoenix": (
        "L156-L157 (WA)",
        """
☆ . . . ☆
. . ○ . .
. ○ ? ○ .
. . ○ . .
☆ . . . ☆
""",
    ),
    "Kirin": (
        "L158-L159 (FD)",
        """
. . ☆ . .
. ○ . ○ .
☆ . ? . ☆
. ○ . ○ .
. . ☆ . .
""",
    ),
    "Free boar": (
        "L164 (BrlR)",
        """
╲ . ╱
─ ? ─
╱ . ╲
""",
    ),
    "Flying ox": (
        "L165 (BfbR)",
        """
╲ │ ╱
. ? .
╱ │ ╲
""",
    ),
    "Side mover": (
        "L167-L168 (rlRW)",
        """
. ○ .
─ ? ─
. ○ .
""",
    ),
    "Vertical mover": (
        "L169-L170 (fbRW)",
        """
. │ .
○ ? ○
. │ .
""",
    ),
    "Copper general": (
        "L172 (fFfbW)",
        """
○ ○ ○
. ? .
. ○ .
""",
    ),
    "Silver general": (
        "L173 (FfW)",
        """
○ ○ ○
. ? .
○ . ○
""",
    ),
    "Multi general": (
        "L175 (fRbB)",
        """
. │ .
. ? .
╱ . ╲
""",
    ),
    "Flying stag": (
        "L177-L178 (fbRK)",
        """
○ │ ○
○ ? ○
○ │ ○
""",
    ),
    "Dog": (
        "L180 (fWbF)",
        """
. ○ .
. ? .
○ . ○
""",
    ),
    "Blind tiger": (
        "L181 (FrlbW)",
        """
○ . ○
○ ? ○
○ ○ ○
""",
    ),
    "White horse": (
        "L183 (fbRfB)",
        """
╲ │ ╱
. ? .
. │ .
""",
    ),
    "Whale": (
        "L184 (fbRbB)",
        """
. │ .
. ? .
╱ │ ╲
""",
    ),
    "Lance": (
        "L186 (fR)",
        """
│
?
""",
    ),
    "Reverse chariot": (
        "L190 (fbR)",
        """
│
?
│
""",
    ),
}

PASSERS = {  # they may pass (skip a turn) on an empty board
    "Vice general",  # L27
    "Horned falcon",
    "Soaring eagle",  # L38, L41
    "Fire demon",  # L70
    "Free eagle",  # the double move, as every d piece (docs/RULES.md, Tenjiku "Reading choices")
    "Lion hawk",
    "Lion",  # L129, L149
}
IGUI_ONLY = {"Heavenly tetrarch"}  # its `!` squares are captured from a distance, never entered

# The surviving `!` rows of the seed's diagrams (the cells between are lost).
SEED_IGUI_ROWS = {
    "Horned falcon": ("L36", [1]),
    "Soaring eagle": ("L39", [2]),
    "Heavenly tetrarch": ("L77-L79", [3, 2, 3]),
    "Free eagle": ("L114-L115", [2, 2]),
    "Lion hawk": ("L125-L127", [3, 2, 3]),
    "Lion": ("L143-L145", [3, 2, 3]),
}

# Forced promotion (promotion-forced dead-end): where the unpromoted piece could never move
# again: the far rank for the pawn (L63), iron general (L110) and lance (L188), the last two
# ranks for the knight (L106). Value: ranks from the front where promotion is compulsory.
FORCED = {"Pawn": {0}, "Iron general": {0}, "Lance": {0}, "Knight": {0, 1}}

PIECE_NAMES = sorted(DIAGRAMS)


def test_every_piece_type_has_a_diagram():
    assert set(DIAGRAMS) == set(piece_types())


@pytest.mark.parametrize("name", sorted(SEED_IGUI_ROWS))
def test_igui_marks_match_the_seed_residue(name):
    """The `!` rows of each rebuilt diagram are the rows the seed's text still holds."""
    lines, rows = SEED_IGUI_ROWS[name]
    assert igui_rows(DIAGRAMS[name][1]) == rows, lines
    assert not any("!" in DIAGRAMS[n][1] for n in set(DIAGRAMS) - set(SEED_IGUI_ROWS))


def expected_promotion(name, color, to):
    """How a move of an unpromoted `name` of `color` from 8h (outside the zone) to `to` may
    promote: "no", "both" (optional: two moves) or "forced" (one move, promoting)."""
    if name not in PROMOTIONS or not in_zone(to, color):
        return "no"
    if rank_from_front(to, color) in FORCED.get(name, set()):
        return "forced"
    return "both"


@pytest.mark.parametrize("color", ["black", "white"])
@pytest.mark.parametrize("name", PIECE_NAMES)
def test_moves_on_an_empty_board(name, color):
    g = make_game((START, name, color), to_move=color)
    assert g.piece_at(START).name == name
    moves = list(g.moves_from(START))
    for m in moves:
        assert m.from_square == START
        assert list(m.captures) == [], f"{m.notation}: a capture on an empty board"
    passes = [m for m in moves if m.to_square == START]
    if name in PASSERS:
        assert len(passes) == 1 and passes[0].is_pass, f"{name}: one pass expected, got {passes}"
    else:
        assert passes == []
    got = {m.to_square for m in moves} - {START}
    expected = diagram_destinations(DIAGRAMS[name][1], START, color, igui_only=name in IGUI_ONLY)
    assert got == expected, (
        f"{name} ({color}), seed {DIAGRAMS[name][0]}: missing {sorted(expected - got)}, extra {sorted(got - expected)}"
    )
    # The zone (ranks a-e for Black, l-p for White): every move into it of a piece that promotes
    # comes twice, promoting (`+`) and declining (`=`), or once, promoting, where the piece
    # would be stuck; every other move once, not promoting.
    for to in got | {START} if passes else got:
        here = [m for m in moves if m.to_square == to]
        kind = expected_promotion(name, color, to)
        if kind == "both":
            assert sorted(m.promotes for m in here) == [False, True], (to, here)
            assert {m.notation[-1] for m in here} == {"+", "="}
        elif kind == "forced":
            assert [m.promotes for m in here] == [True], (to, here)
            assert here[0].notation.endswith("+")
        else:
            assert [m.promotes for m in here] == [False], (to, here)
            assert here[0].notation[-1] not in "+="


def test_diagram_reader_orientation():
    """The diagram reader itself: Black's forward is rank a, its left is the higher file."""
    assert diagram_destinations("○\n?", "8h", "black") == {"8g"}
    assert diagram_destinations("○\n?", "8h", "white") == {"8i"}
    assert diagram_destinations("○ ?", "8h", "black") == {"9h"}
    assert diagram_destinations("○ ?", "8h", "white") == {"7h"}
    assert diagram_destinations("│\n?", "8c", "black") == {"8b", "8a"}


# --------------------------------------------------------------------------------------------
# blocking and capturing, per movement category
# --------------------------------------------------------------------------------------------


def test_step_blocked_by_friend_captures_foe():
    """A friend on the square stops a step; an enemy is captured (gold general, L58)."""
    g = make_game(("8h", "Gold general", "black"), ("8g", "Pawn", "black"), ("7g", "Pawn", "white"))
    assert destinations(g, "8h") == {"9g", "7g", "9h", "7h", "8i"}
    assert [list(m.captures) for m in moves_to(g, "8h", "7g")] == [["7g"]]


def test_limited_range_stops_at_pieces():
    """Water buffalo: one or two squares forward or backward (L90), ending at the first piece."""
    g = make_game(("8h", "Water buffalo", "black"), ("8g", "Pawn", "white"), ("8j", "Pawn", "black"))
    got = destinations(g, "8h")
    assert "8g" in got and "8f" not in got  # captures on the first square, not beyond
    assert "8i" in got and "8j" not in got  # stops short of a friend
    # chariot soldier: two squares sideways (L95)
    g = make_game(("8h", "Chariot soldier", "black"), ("6h", "Pawn", "white"), ("9h", "Pawn", "black"))
    got = destinations(g, "8h")
    assert {"7h", "6h"} <= got and not got & {"5h", "9h", "10h"}


def test_ranging_blocked_and_capturing():
    """A ranging piece stops short of a friend, and stops where it captures (rook, L54)."""
    g = make_game(("8h", "Rook", "black"), ("8d", "Pawn", "black"), ("4h", "Pawn", "white"))
    expected = (
        {"8g", "8f", "8e"}  # forward, short of the friend on 8d
        | {"7h", "6h", "5h", "4h"}  # right, up to the enemy on 4h
        | {sq(f, 8) for f in range(9, 17)}  # left, to the edge
        | {sq(8, r) for r in range(9, 17)}  # backward, to the edge
    )
    assert destinations(g, "8h") == expected
    assert [list(m.captures) for m in moves_to(g, "8h", "4h")] == [["4h"]]


def test_jumps_pass_over_any_piece():
    """The kirin jumps to the second square orthogonally over friend or foe (L159)."""
    g = make_game(
        ("8h", "Kirin", "black"),
        ("8g", "Pawn", "black"),  # jumped over
        ("8f", "Pawn", "white"),  # captured by the jump
        ("10h", "Pawn", "black"),  # a friend on the landing square: no jump left
        ("7h", "Pawn", "white"),  # jumped over (and out of reach of the diagonal steps)
        ("7g", "Pawn", "white"),  # a diagonal step captures it
    )
    assert destinations(g, "8h") == {"8f", "8j", "6h", "9g", "7g", "9i", "7i"}
    # the phoenix jumps diagonally (L157), the knight over anything (L104)
    g = make_game(("8h", "Phoenix", "black"), ("7g", "Pawn", "white"), ("9g", "Pawn", "black"), ("6f", "Pawn", "white"))
    assert destinations(g, "8h") == {"8g", "9h", "7h", "8i", "10f", "6f", "10j", "6j"}
    g = make_game(("8h", "Knight", "black"), *pawns("black", "8g", "7g", "9g", "8f"))
    assert destinations(g, "8h") == {"9f", "7f"}


def test_tetrarch_worked_example():
    """docs/RULES.md, Tenjiku "Movement", "Heavenly tetrarch" (L76-L82): black tetrarch 8h, black
    pawns 8g and 6h, white pawns 7g and 9h."""
    g = make_game(("8h", "Heavenly tetrarch", "black"), *pawns("black", "8g", "6h"), *pawns("white", "7g", "9h"))
    got = move_keys(g, "8h")
    assert {k("8h", "7g"), k("8h", "9h")} <= got  # igui (L80)
    assert (
        {to for to, _ in got if to != "8h"}
        == (
            set(ray("8h", "f")[1:])  # forward from 8f, jumping its own pawn (L81)
            | set(ray("8h", "b")[1:])
            | set().union(*(ray("8h", d)[1:] for d in DIAG))
            | {"10h", "11h"}  # left: two or three squares (L82)
        )
    )  # right: nothing, its own pawn on 6h, the second square
    assert not any(to in {"7g", "9h", "7h", "8g"} for to, _ in got)  # never to an adjacent square
    assert len([m for m in g.moves_from("8h") if m.is_igui]) == 2


def test_tetrarch_captures_on_the_second_square_and_stops():
    g = make_game(
        ("8h", "Heavenly tetrarch", "black"), ("10h", "Pawn", "white"), ("8f", "Pawn", "white"), ("6f", "Pawn", "black")
    )
    got = move_keys(g, "8h")
    assert k("10h", "10h") in got and not any(to == "11h" for to, _ in got)  # L82
    assert k("8f", "8f") in got and not any(to in {"8e", "8d"} for to, _ in got)  # not a range jumper (L81)
    assert not any(to in {"6f", "5e"} for to, _ in got)  # a friend on the second square blocks


def test_tetrarch_western_option_has_no_file_range():
    """Option heavenly-tetrarch-western (L84): the range along the file is gone."""
    g = make_game(("8h", "Heavenly tetrarch", "black"), ("7g", "Pawn", "white"), options=["heavenly-tetrarch-western"])
    got = move_keys(g, "8h")
    assert k("8h", "7g") in got
    assert not any(to in ray("8h", "f") + ray("8h", "b") for to, _ in got)
    assert {"10h", "11h", "6h", "5h", "10f", "6j"} <= {to for to, _ in got}


# ---- range jumping (L22-L34; docs/RULES.md, Tenjiku "Movement", "Range jump") ----

GG_EXAMPLE = [  # RULES.md's example: black pawn 8g; white pawn 8e, vice general 8d, great general 8c, pawn 8b
    ("8g", "Pawn", "black"),
    ("8e", "Pawn", "white"),
    ("8d", "Vice general", "white"),
    ("8c", "Great general", "white"),
    ("8b", "Pawn", "white"),
]


def forward_keys(g, square="8h"):
    line = set(ray(square, "f"))
    return {(to, caps) for to, caps in move_keys(g, square) if to in line}


def test_great_general_jumps_lower_ranks_when_capturing():
    """L28-L29: it captures over its own pawn, the white pawn and the vice general (rank 2), up to
    the great general (its own rank), which it may take but not pass."""
    g = make_game(("8h", "Great general", "black"), *GG_EXAMPLE)
    assert forward_keys(g) == {k("8e", "8e"), k("8d", "8d"), k("8c", "8c")}  # no 8f, no 8b
    for to in ("8e", "8d", "8c"):
        (m,) = moves_to(g, "8h", to)
        assert list(m.captures) == [to]  # the jumped pieces stay (L24)
    play(g, "8h", "8c")
    assert [g.piece_at(s).name for s in ("8g", "8e", "8d")] == ["Pawn", "Pawn", "Vice general"]


def test_rook_general_stops_at_the_vice_general():
    """L33-L34: a rook general (rank 3) takes 8e or 8d; the vice general is the first piece it
    cannot jump. Both captures are in the zone: a rook general may promote there."""
    g = make_game(("8h", "Rook general", "black"), *GG_EXAMPLE)
    assert forward_keys(g) == {k("8e", "8e"), k("8d", "8d")}
    assert sorted(m.promotes for m in moves_to(g, "8h", "8d")) == [False, True]


def test_vice_and_bishop_generals_on_the_diagonal():
    """L24-L25, L31-L32: a vice general jumps rook and bishop generals but not a great general or
    another vice general; a bishop general jumps none of them. (Only the squares four or more
    away are looked at: the vice general's area move reaches every nearer square round a piece.)"""
    far = ["4d", "3c", "2b", "1a"]  # the forward-right diagonal from 8h, from the 4th square
    pieces = [
        ("7g", "Rook general", "white"),
        ("6f", "Bishop general", "black"),
        ("4d", "Pawn", "white"),
        ("3c", "Vice general", "white"),
        ("2b", "Pawn", "white"),
    ]
    g = make_game(("8h", "Vice general", "black"), *pieces)
    got = {(to, caps) for to, caps in move_keys(g, "8h") if to in far}
    assert got == {k("4d", "4d"), k("3c", "3c")}
    assert k("7g", "7g") in move_keys(g, "8h")
    g = make_game(("8h", "Bishop general", "black"), *pieces)
    assert {to for to, caps in move_keys(g, "8h") if to in ray("8h", "fr")} == {"7g"}
    g = make_game(("8h", "Vice general", "black"), ("7g", "Great general", "black"), ("4d", "Pawn", "white"))
    assert not any(to in far for to, _ in move_keys(g, "8h"))
    g = make_game(("8h", "Vice general", "black"), ("7g", "Vice general", "white"), ("4d", "Pawn", "white"))
    assert k("7g", "7g") in move_keys(g, "8h")
    assert not any(to in far for to, _ in move_keys(g, "8h"))


def test_a_king_or_crown_prince_cannot_be_jumped():
    """L25, L29, L32, L34: not even by a great general. It may be captured, as the first piece or
    beyond jumped pieces (the engine's reading, docs/RULES.md)."""
    for royal in ("King", "Crown prince"):
        g = make_game(("8h", "Great general", "black"), ("8f", royal, "black"), ("8d", "Pawn", "white"))
        assert forward_keys(g) == {k("8g")}
        g = make_game(
            ("8h", "Great general", "black"),
            ("8g", "Pawn", "black"),
            ("8e", royal, "white"),
            ("8c", "Pawn", "white"),
            ("1p", "King", "black"),
        )
        assert forward_keys(g) == {k("8e", "8e")}
        m = play(g, "8h", "8e")
        if royal == "King":
            assert g.is_over and g.result == "black" and g.termination == "royal_capture", m


def test_unranked_pieces_are_jumped_by_any_general():
    """Every piece outside the rank order (a lion, a free eagle, a fire demon ...) is jumped."""
    g = make_game(
        ("8h", "Rook general", "black"),
        ("8g", "Lion", "white"),
        ("8f", "Free eagle", "black"),
        ("8e", "Lion hawk", "white"),
        ("8d", "Fire demon", "black"),
        ("8b", "Pawn", "white"),
    )
    assert forward_keys(g) == {k("8g", "8g"), k("8e", "8e"), k("8b", "8b")}


def test_range_jump_only_when_capturing():
    """L24: "Otherwise it ranges without jumping": no move beyond a piece to an empty square."""
    g = make_game(("8h", "Great general", "black"), ("8f", "Pawn", "black"))
    assert forward_keys(g) == {k("8g")}
    g = make_game(("8h", "Great general", "black"), ("8f", "Pawn", "white"))
    assert forward_keys(g) == {k("8g"), k("8f", "8f")}


def test_range_jump_always_option():
    """Option range-jump-always ([W-md]): also to the empty squares beyond jumped pieces."""
    g = make_game(("8h", "Great general", "black"), *GG_EXAMPLE, options=["range-jump-always"])
    assert forward_keys(g) == {k("8f"), k("8e", "8e"), k("8d", "8d"), k("8c", "8c")}
    g = make_game(
        ("8h", "Rook general", "black"),
        ("8g", "Pawn", "black"),
        ("8e", "Great general", "white"),
        options=["range-jump-always"],
    )
    assert forward_keys(g) == {k("8f"), k("8e", "8e")}
    for name in ("Vice general", "Bishop general"):
        g = make_game(("8h", name, "black"), ("7g", "Pawn", "black"), options=["range-jump-always"])
        assert set(ray("8h", "fr")[1:]) <= destinations(g, "8h"), name


def test_range_jump_captures_are_attacks():
    """Checks by jumping ([HGM-forum]): a king beyond jumped pieces is in check."""
    g = make_game(
        ("8h", "Great general", "black"), ("8g", "Pawn", "white"), ("8c", "King", "white"), ("1p", "King", "black")
    )
    assert g.in_check("white")
    g = make_game(
        ("8h", "Great general", "black"),
        ("8g", "Vice general", "white"),
        ("8c", "King", "white"),
        ("8f", "Great general", "white"),
        ("1p", "King", "black"),
    )
    assert not g.in_check("white")


# ---- area moves (L26-L27, L69-L70, L138; docs/RULES.md, Tenjiku "Movement", "Area move") ----

AREA_EXAMPLE = [*pawns("black", "9g", "8g", "7g", "9i", "8i", "7i"), ("7h", "Pawn", "white")]
AREA_3 = {
    k("9h"),
    k("7h", "7h"),  # one step; a capture ends the move
    k("10g"),
    k("10h"),
    k("10i"),  # two steps
    k("11f"),
    k("10f"),
    k("9f"),
    k("11g"),
    k("11h"),
    k("11i"),
    k("11j"),
    k("10j"),
    k("9j"),
    k("8h"),  # the pass, 8h -> 9h -> 8h (L27)
}


def test_vice_general_area_move_worked_example():
    """The example of docs/RULES.md, Tenjiku "Movement", "Area move": 15 destinations, the pass
    included; not 8f or 8e (no path), nothing past 7h."""
    g = make_game(("8h", "Vice general", "black"), *AREA_EXAMPLE)
    assert move_keys(g, "8h") == AREA_3
    assert len(list(g.moves_from("8h"))) == 15
    (p,) = moves_to(g, "8h", "8h")
    assert p.is_pass and not p.is_igui


def test_fire_demon_area_move_worked_example():
    """The same area move (L69-L70); its pass beside the white pawn on 7h burns it (L71)."""
    g = make_game(("8h", "Fire demon", "black"), *AREA_EXAMPLE)
    assert move_keys(g, "8h") == AREA_3 - {k("8h")} | {k("8h", "7h")}


def test_lion_hawk_tsa_area_move():
    """Option lion-hawk-tsa (L136-L138): two steps, stopping at a capture, no jump."""
    g = make_game(("8h", "Lion hawk", "black"), *AREA_EXAMPLE, options=["lion-hawk-tsa"])
    assert move_keys(g, "8h") == {k("9h"), k("7h", "7h"), k("10g"), k("10h"), k("10i"), k("8h")}
    g = make_game(("8h", "Lion hawk", "black"), *AREA_EXAMPLE)  # the modern lion hawk jumps
    got = move_keys(g, "8h")
    assert {k("8f"), k("8j"), k("6h"), k("8h", "7h"), k("6g", "7h")} <= got


def test_area_move_stops_at_the_first_capture():
    """L26, L69: no igui and no second capture."""
    g = make_game(("8h", "Vice general", "black"), *pawns("white", "8g", "8f"))
    got = move_keys(g, "8h")
    assert k("8g", "8g") in got and k("8h", "8g") not in got
    assert not any(len(caps) > 1 for _, caps in got)
    assert k("8f", "8f") in got  # reached round 8g: 8h -> 9g -> 8f
    g = make_game(("8h", "Vice general", "black"), *pawns("black", "9g", "8g", "7g", "9h", "7h", "9i", "8i", "7i"))
    assert move_keys(g, "8h") == set()  # walled in: no move, no pass


# ---- lion moves along one line (L35-L41; docs/RULES.md, Tenjiku "Movement", "Lion power along one line") ----


def test_horned_falcon_enemies_ahead():
    g = make_game(("8h", "Horned falcon", "black"), *pawns("white", "8g", "8f", "7g"))
    assert forward_keys(g) == {k("8g", "8g"), k("8f", "8f"), k("8f", "8g", "8f")}
    got = move_keys(g, "8h")
    assert k("8h", "8g") in got  # igui
    assert k("8h") not in got  # no pass: 8g is occupied
    assert k("7g", "7g") in got  # the diagonal range, not the lion power
    assert not any(caps >= {"8g"} and to not in {"8g", "8f", "8h"} for to, caps in got)  # no turning


def test_horned_falcon_own_pawn_ahead():
    g = make_game(("8h", "Horned falcon", "black"), ("8g", "Pawn", "black"))
    assert forward_keys(g) == {k("8f")}
    assert k("8h") not in move_keys(g, "8h")


def test_soaring_eagle_worked_example():
    g = make_game(("8h", "Soaring eagle", "black"), ("7g", "Pawn", "white"), ("9g", "Pawn", "black"))
    got = move_keys(g, "8h")
    diagonal = {(to, caps) for to, caps in got if to in {"7g", "6f", "9g", "10f", "8h"}}
    assert diagonal == {k("7g", "7g"), k("6f"), k("6f", "7g"), k("8h", "7g"), k("10f")}


def test_horned_falcon_three_squares_ahead_is_out_of_reach():
    g = make_game(("8h", "Horned falcon", "black"))
    assert forward_keys(g) == {k("8g"), k("8f")}


# ---- the free eagle's double move (L113-L119; docs/RULES.md, Tenjiku "Movement", "Free eagle") ----


def test_free_eagle_worked_example():
    g = make_game(
        ("8h", "Free eagle", "black"),
        ("7g", "Pawn", "white"),
        ("8f", "Silver general", "white"),
        ("9g", "Pawn", "black"),
    )
    got = move_keys(g, "8h")
    assert {(to, caps) for to, caps in got if "7g" in caps} == {
        k("7g", "7g"),
        k("6f", "7g"),
        k("6h", "7g"),
        k("8f", "7g", "8f"),
        k("8h", "7g"),
    }
    assert {k("10f"), k("8f", "8f")} <= got  # the A jump over its own pawn; the D jump / range
    assert not any(to == "9g" or "9g" in caps for to, caps in got)
    assert k("8h") in got  # a pass through an empty diagonal square


def test_free_eagle_options():
    base = [
        ("8h", "Free eagle", "black"),
        ("7g", "Pawn", "white"),
        ("8f", "Silver general", "white"),
        ("9g", "Pawn", "black"),
        ("8g", "Pawn", "black"),
    ]
    # English sources (L130-L134): queen plus the orthogonal jump; no double move, no A jump
    got = move_keys(make_game(*base, options=["free-eagle-english"]), "8h")
    assert {k("7g", "7g"), k("8f", "8f")} <= got
    assert not any(len(caps) > 1 or to in {"10f", "6f", "8h"} for to, caps in got)
    # Edo reading without the jumps (L117-L119): the double move only; 8f only through 7g
    got = move_keys(make_game(*base, options=["free-eagle-edo-no-jump"]), "8h")
    assert {k("6f", "7g"), k("8f", "7g", "8f"), k("8h", "7g")} <= got
    assert k("10f") not in got and k("8f", "8f") not in got


# ---- the lion (L142-L153) ----


def test_lion_with_one_enemy_beside_it():
    g = make_game(("8h", "Lion", "black"), ("8g", "Pawn", "white"))
    five_by_five = {sq(f, r) for f in range(6, 11) for r in range(6, 11)} - {"8h", "8g"}
    expected = (
        {k(s) for s in five_by_five}
        | {k("8g", "8g"), k("8h", "8g"), k("8h")}
        | {k(s, "8g") for s in ("9f", "8f", "7f", "9g", "7g", "9h", "7h")}
    )
    assert move_keys(g, "8h") == expected
    assert len(list(g.moves_from("8h"))) == 33


def test_no_chu_lion_restrictions():
    """L153: a lion may take a protected lion from two squares away."""
    g = make_game(("8h", "Lion", "black"), ("8f", "Lion", "white"), ("8e", "Pawn", "white"), *kings())
    assert k("8f", "8f") in move_keys(g, "8h")
    play(g, "8h", "8f")
    assert k("8f", "8f") in move_keys(g, "8e")  # and it may be recaptured by a pawn


# --------------------------------------------------------------------------------------------
# burning (L71-L74, L92; docs/RULES.md, Tenjiku "Burning"): the TSA reading
# --------------------------------------------------------------------------------------------

BURN_EXAMPLE = [
    ("8i", "Fire demon", "black"),
    ("7e", "Pawn", "white"),
    ("9f", "Gold general", "white"),
    ("7g", "Silver general", "white"),
    ("9e", "Pawn", "black"),
    *kings(),
]


def test_active_burn():
    """L71: where it stops, every adjacent enemy is removed; friends are not."""
    g = make_game(*BURN_EXAMPLE)
    (m,) = moves_to(g, "8i", "8f")
    assert sorted(m.captures) == ["7e", "7g", "9f"]
    g.play(m)
    assert g.piece_at("8f").name == "Fire demon"
    assert all(g.piece_at(s) is None for s in ("7e", "9f", "7g"))
    assert g.piece_at("9e").name == "Pawn" and g.piece_at("9e").color == "black"
    g.undo()
    assert [g.piece_at(s).name for s in ("8i", "7e", "9f", "7g")] == [
        "Fire demon",
        "Pawn",
        "Gold general",
        "Silver general",
    ]


def test_active_burn_with_a_capture():
    """L71: the piece it lands on, plus up to seven burned."""
    g = make_game(("8i", "Fire demon", "black"), ("8f", "Pawn", "white"), *pawns("white", "7e", "9g"), *kings())
    (m,) = moves_to(g, "8i", "8f")
    assert sorted(m.captures) == ["7e", "8f", "9g"]


def test_fire_demon_next_to_an_enemy_fire_demon_tsa():
    """L74 (TSA): only the moving demon burns; the stationary one and every other piece survive."""
    g = make_game(*BURN_EXAMPLE, ("9g", "Fire demon", "white"))
    (m,) = moves_to(g, "8i", "8f")
    assert list(m.captures) == []
    g.play(m)
    assert g.piece_at("8f") is None and g.piece_at("8i") is None
    assert [g.piece_at(s).name for s in ("7e", "9f", "7g", "9g")] == [
        "Pawn",
        "Gold general",
        "Silver general",
        "Fire demon",
    ]
    assert g.side_to_move == "white"


def test_fire_demon_capturing_a_fire_demon_survives():
    """The demon it lands on is gone, so nothing burns the mover; it burns the rest."""
    g = make_game(("8h", "Fire demon", "black"), ("8d", "Fire demon", "white"), ("7c", "Pawn", "white"), *kings())
    (m,) = moves_to(g, "8h", "8d")
    assert sorted(m.captures) == ["7c", "8d"]
    g.play(m)
    assert g.piece_at("8d").name == "Fire demon" and g.piece_at("8d").color == "black"
    # another enemy demon beside the landing square burns the mover
    g = make_game(
        ("8h", "Fire demon", "black"),
        ("8d", "Fire demon", "white"),
        ("7c", "Fire demon", "white"),
        ("9c", "Pawn", "white"),
        *kings(),
    )
    g.play(moves_to(g, "8h", "8d")[0])
    assert g.piece_at("8d") is None and g.piece_at("9c") is not None and g.piece_at("7c") is not None


def test_passive_burn():
    """L72: a white silver captures a black pawn beside the black demon and is burned; then it is
    Black's turn (it cost Black nothing)."""
    g = make_game(
        ("8f", "Fire demon", "black"),
        ("7d", "Silver general", "white"),
        ("7e", "Pawn", "black"),
        *kings(),
        to_move="white",
    )
    (m,) = moves_to(g, "7d", "7e")
    assert list(m.captures) == ["7e"]
    g.play(m)
    assert g.piece_at("7e") is None and g.piece_at("7d") is None
    assert g.piece_at("8f").name == "Fire demon"
    assert g.side_to_move == "black"
    g.undo()
    assert (g.piece_at("7d").name, g.piece_at("7e").name) == ("Silver general", "Pawn")


def test_fire_demon_pass_burns():
    """L70-L71: the area move may return to its square ("skip"), and it burns wherever it stops."""
    g = make_game(("8h", "Fire demon", "black"), *pawns("white", "7g", "9i"), ("6f", "Pawn", "white"), *kings())
    (p,) = [m for m in g.moves_from("8h") if m.to_square == "8h"]
    assert p.is_pass and sorted(p.captures) == ["7g", "9i"]
    g.play(p)
    assert g.piece_at("8h").name == "Fire demon"
    assert g.piece_at("7g") is None and g.piece_at("9i") is None and g.piece_at("6f") is not None


def test_multi_step_movers_burn_only_where_they_stop():
    """docs/RULES.md, Tenjiku "Burning", "Where it stops": passing next to a demon is safe; igui or a
    pass beside one is a stop."""
    base = [("5h", "Fire demon", "black"), ("6h", "Pawn", "black"), ("7h", "Lion", "white"), *kings()]
    g = make_game(*base, to_move="white")
    m = play(g, "7h", "7i", captures=["6h"])  # capture beside the demon, then step away
    assert g.piece_at("7i").name == "Lion" and g.piece_at("6h") is None, m
    g = make_game(*base, to_move="white")
    play(g, "7h", "6h", captures=["6h"])  # stops beside the demon
    assert g.piece_at("6h") is None and g.piece_at("7h") is None
    g = make_game(*base, to_move="white")
    play(g, "7h", "7h", captures=["6h"])  # igui, two squares from the demon: safe
    assert g.piece_at("7h").name == "Lion"
    # igui beside the demon burns the lion; igui on the demon itself does not
    base = [("5h", "Fire demon", "black"), ("6g", "Lion", "white"), ("7g", "Pawn", "black"), *kings()]
    g = make_game(*base, to_move="white")
    play(g, "6g", "6g", captures=["7g"])
    assert g.piece_at("6g") is None and g.piece_at("7g") is None
    g = make_game(*base, to_move="white")
    play(g, "6g", "6g", captures=["5h"])
    assert g.piece_at("6g").name == "Lion" and g.piece_at("5h") is None
    # a pass beside the demon burns the passer
    g = make_game(*base, to_move="white")
    (p,) = [m for m in g.moves_from("6g") if m.is_pass]
    g.play(p)
    assert g.piece_at("6g") is None


def test_water_buffalo_promoting_does_not_burn():
    """L92: the promotion happens when the move is over, so the new demon burns from then on."""
    g = make_game(("8g", "Water buffalo", "black"), *pawns("white", "7d", "9e", "8b"), *kings())
    m = play(g, "8g", "8e", promotes=True)
    assert m.notation.endswith("+") and list(m.captures) == []
    assert g.piece_at("8e").name == "Fire demon" and g.piece_at("8e").abbrev == "+WB"
    assert g.piece_at("7d") is not None and g.piece_at("9e") is not None
    play(g, "8b", "8c")  # White's pawn steps forward, not yet beside the demon
    assert g.piece_at("8c") is not None
    (p,) = [m for m in g.moves_from("8e") if m.is_pass]  # the promoted demon's pass burns
    assert sorted(p.captures) == ["7d", "9e"]


def test_burned_piece_next_to_a_promoted_fire_demon():
    g = make_game(("8e", "WB", "black", True), ("8c", "Pawn", "white"), *kings(), to_move="white")
    play(g, "8c", "8d")
    assert g.piece_at("8d") is None and g.side_to_move == "black"


def test_king_burned_loses():
    """A king that stops next to an enemy fire demon is burned; its side has lost ([W-en])."""
    g = make_game(("8f", "Fire demon", "black"), ("7d", "King", "white"), ("1p", "King", "black"), to_move="white")
    play(g, "7d", "7e")
    assert g.royal_count("white") == 0
    assert g.is_over and g.result == "black" and g.termination == "royal_capture"


def test_burning_the_last_king_wins():
    """A fire demon that stops next to the enemy's only king burns it (L71): a win."""
    g = make_game(("8h", "Fire demon", "black"), ("7d", "King", "white"), ("1p", "King", "black"))
    (m,) = moves_to(g, "8h", "8e")
    assert list(m.captures) == ["7d"]
    g.play(m)
    assert g.is_over and g.result == "black" and g.termination == "royal_capture"


def test_capturing_the_last_king_wins_even_if_burned():
    """The move's captures come first: the mover's side wins though the mover burns."""
    g = make_game(
        ("8f", "Fire demon", "black"),
        ("7e", "King", "black"),
        ("7c", "Lion", "white"),
        ("16a", "King", "white"),
        to_move="white",
    )
    play(g, "7c", "7e", captures=["7e"])
    assert g.piece_at("7e") is None
    assert g.is_over and g.result == "white"


def test_crown_prince_keeps_the_game_going():
    """Notes §2.7: a side loses when its king and its crown prince are both gone."""
    g = make_game(("8f", "Drunk elephant", "black"), *kings())
    play(g, "8f", "8e", promotes=True)
    prince = g.piece_at("8e")
    assert (prince.name, prince.royal, prince.abbrev) == ("Crown prince", True, "+DE")
    assert g.royal_count("black") == 2
    g = make_game(
        ("8e", "DE", "black", True),
        ("1p", "King", "black"),
        ("1a", "Rook", "white"),
        ("16a", "King", "white"),
        to_move="white",
    )
    play(g, "1a", "1p", captures=["1p"], promotes=False)
    assert not g.is_over and g.royal_count("black") == 1
    play(g, "8e", "8f")
    play(g, "1p", "8p")
    play(g, "8f", "8g")
    play(g, "8p", "8g", captures=["8g"], promotes=False)  # a capture from inside its zone: may promote
    assert g.is_over and g.result == "white" and g.termination == "royal_capture"


# --------------------------------------------------------------------------------------------
# promotion in the zone ([W-sum]; tenjiku.rules)
# --------------------------------------------------------------------------------------------


def both(g, square, to, captures=None):
    here = moves_to(g, square, to, captures)
    assert sorted(m.promotes for m in here) == [False, True], here
    return sorted(here, key=lambda m: m.promotes)


def one(g, square, to, captures=None):
    here = moves_to(g, square, to, captures)
    assert len(here) == 1, here
    return here[0]


def test_entering_the_zone_offers_promotion():
    g = make_game(("8f", "Silver general", "black"), *kings())
    declines, promotes = both(g, "8f", "8e")
    assert (declines.notation, promotes.notation) == ("S-8e=", "S-8e+")
    h = g.clone()
    h.play("S-8e+")
    assert (h.piece_at("8e").name, h.piece_at("8e").abbrev, h.piece_at("8e").promoted) == ("Vertical mover", "+S", True)
    h = g.clone()
    h.play("S-8e=")
    assert (h.piece_at("8e").name, h.piece_at("8e").promoted) == ("Silver general", False)
    with pytest.raises(taikyoku.AmbiguousMoveError):
        g.clone().play("S-8e")
    assert not one(g, "8f", "9g").promotes  # backwards, outside the zone


def test_capture_in_the_zone_offers_promotion():
    """enter-or-capture ([CV-c39081]): a capture whose start or end is in the zone."""
    g = make_game(("8d", "Silver general", "black"), ("8c", "Pawn", "white"), ("7e", "Pawn", "white"), *kings())
    both(g, "8d", "8c", ["8c"])  # forward, inside the zone
    both(g, "8d", "7e", ["7e"])  # backward, still inside (rank e is the zone's last)
    g = make_game(("8e", "Silver general", "black"), ("7f", "Pawn", "white"), *kings())
    both(g, "8e", "7f", ["7f"])  # a capture leaving the zone
    g = make_game(("8g", "Silver general", "black"), ("7f", "Pawn", "white"), *kings())
    assert not one(g, "8g", "7f", ["7f"]).promotes  # a capture outside it


def test_plain_move_inside_or_out_of_the_zone_does_not_promote():
    g = make_game(("8d", "Silver general", "black"), *kings())
    m = one(g, "8d", "8c")
    assert not m.promotes and m.notation == "S-8c"
    g = make_game(("8e", "Silver general", "black"), *kings())
    assert not one(g, "8e", "7f").promotes
    g = make_game(("8h", "Silver general", "black"), *kings())
    assert not one(g, "8h", "8g").promotes


def test_declined_piece_promotes_again_by_capture_or_re_entry():
    """enter-or-capture: after declining, a plain move in the zone may not promote; a capture
    there may, and so may leaving the zone and entering it again."""
    g = make_game(("8f", "Silver general", "black"), ("7c", "Pawn", "white"), ("16b", "Pawn", "white"), *kings())
    g.play("S-8e=")
    play(g, "16b", "16c")
    assert not one(g, "8e", "8d").promotes  # a plain move inside the zone
    assert not one(g, "8e", "9f").promotes  # a plain move out of it
    g.play(one(g, "8e", "8d"))
    play(g, "16c", "16d")
    both(g, "8d", "7c", ["7c"])  # a capture inside the zone
    g.play(one(g, "8d", "9e"))
    play(g, "16d", "16e")
    g.play(one(g, "9e", "10f"))  # out
    play(g, "16e", "16f")
    both(g, "10f", "10e")  # and in again


def test_forced_promotion_on_the_far_ranks():
    """L63, L188, L110: pawn, lance and iron general on the far rank; L106: knight on the last two."""
    cases = [
        ("Pawn", "8b", "8a"),
        ("Lance", "8h", "8a"),
        ("Lance", "8c", "8a"),
        ("Iron general", "8b", "9a"),
        ("Iron general", "8b", "8a"),
        ("Iron general", "8b", "7a"),
        ("Knight", "8c", "9a"),
        ("Knight", "8d", "7b"),
        ("Knight", "8d", "9b"),
    ]
    for name, frm, to in cases:
        g = make_game((frm, name, "black"), *kings())
        m = one(g, frm, to)
        assert m.promotes and m.notation.endswith("+"), (name, frm, to)
        h = g.clone()
        h.play(m.notation)
        assert h.piece_at(to).promoted
        h = g.clone()
        with pytest.raises(taikyoku.TaikyokuError):
            h.play(m.notation[:-1] + "=")


def test_forward_pieces_short_of_the_dead_end_may_wait():
    g = make_game(("8c", "Pawn", "black"), *kings())
    assert not one(g, "8c", "8b").promotes  # a plain move inside the zone
    g = make_game(("8f", "Pawn", "black"), *kings())
    both(g, "8f", "8e")
    g = make_game(("8h", "Lance", "black"), *kings())
    for to in ("8b", "8c", "8d", "8e"):
        both(g, "8h", to)
    g = make_game(("8e", "Knight", "black"), *kings())
    assert not one(g, "8e", "9c").promotes  # third rank: it may still move
    g = make_game(("8f", "Knight", "black"), *kings())
    both(g, "8f", "9d")  # entering


def test_white_promotes_in_ranks_l_to_p():
    g = make_game(("8k", "Silver general", "white"), ("8o", "Pawn", "white"), *kings(), to_move="white")
    both(g, "8k", "8l")
    assert one(g, "8o", "8p").promotes
    assert not one(g, "8k", "7j").promotes


def test_white_knight_and_lance_forced_on_ranks_o_and_p():
    g = make_game(
        ("8n", "Knight", "white"),
        ("4m", "Knight", "white"),
        ("12k", "Knight", "white"),
        ("14h", "Lance", "white"),
        *kings(),
        to_move="white",
    )
    assert one(g, "8n", "9p").promotes and one(g, "8n", "7p").promotes  # the far rank
    assert one(g, "4m", "5o").promotes and one(g, "4m", "3o").promotes  # the next one
    both(g, "12k", "11m")  # entering, third rank from the end: a choice
    assert one(g, "14h", "14p").promotes
    both(g, "14h", "14o")


def test_promoted_and_non_promoting_pieces_never_promote():
    g = make_game(
        ("8f", "S", "black", True),
        ("10f", "Whale", "black"),
        ("12f", "Great general", "black"),
        ("14f", "Lion hawk", "black"),
        *kings(),
    )
    for square, to in (("8f", "8e"), ("10f", "10a"), ("12f", "12a"), ("14f", "12d")):
        here = moves_to(g, square, to)
        assert [m.promotes for m in here] == [False], (square, here)


def test_lion_double_move_ending_in_the_zone_may_promote():
    g = make_game(("8f", "Lion", "black"), ("8e", "Pawn", "white"), *kings())
    both(g, "8f", "8d", ["8e"])  # capture 8e and go on into the zone
    both(g, "8f", "8e", ["8e"])


@pytest.mark.parametrize("name", ["Lion", "Horned falcon", "Soaring eagle"])
def test_lion_next_to_the_zone_promotes_without_appearing_to_move(name):
    """L148-L150: "A lion next to the promotion zone can make a similar move [igui, or a pass]
    into and out of the zone, promoting without appearing to move" (the partial lions have the
    same power, L38, L41). Black's piece on 8f, just outside its zone (ranks a-e)."""
    target = "7e" if name == "Soaring eagle" else "8e"  # a first square of its lion move, in the zone
    g = make_game(("8f", name, "black"), (target, "Pawn", "white"), *kings())
    igui = moves_to(g, "8f", "8f", [target])
    assert sorted(m.promotes for m in igui) == [False, True], igui
    g = make_game(("8f", name, "black"), *kings())
    passes = [m for m in g.moves_from("8f") if m.is_pass]
    assert sorted(m.promotes for m in passes) == [False, True], passes


def test_promotion_actions_and_round_trips():
    for color, frm, to in (("black", "8f", "8e"), ("white", "8k", "8l")):
        g = make_game((frm, "Silver general", color), *kings(), to_move=color)
        declines, promotes = both(g, frm, to)
        for frame in ("mover", "absolute"):
            a, b = g.action_of(declines, frame=frame), g.action_of(promotes, frame=frame)
            assert a < taikyoku.PROMOTION_BLOCK <= b and b - a == taikyoku.PROMOTION_BLOCK
            assert b < taikyoku.NUM_ACTIONS
            legal = set(int(x) for x in g.legal_actions(frame=frame))
            assert {a, b} <= legal
            assert g.move_of(a, frame=frame) == declines and g.move_of(b, frame=frame) == promotes
            assert g.action_of(promotes.notation, frame=frame) == b
        h = g.clone()
        played = h.play(g.action_of(promotes))
        assert played.promotes and h.piece_at(to).promoted


def test_multi_leg_promotions_round_trip():
    """Lion-type moves into the zone come twice too; each has its own action and notation."""
    positions = [
        [("8f", "Lion", "black"), *pawns("white", "8e", "7e", "9f")],
        [("8f", "Horned falcon", "black"), *pawns("white", "8e", "8d")],
        [("8f", "Soaring eagle", "black"), *pawns("white", "7e", "6d")],
        [("8f", "Kirin", "black"), ("8d", "Pawn", "white")],
    ]
    for pieces in positions:
        g = make_game(*pieces, *kings())
        moves = list(g.moves_from("8f"))
        actions = set(int(a) for a in g.legal_actions())
        assert any(m.promotes and len(m.captures) == 2 for m in moves) or pieces[0][1] == "Kirin"
        for m in moves:
            a = g.action_of(m)
            assert a in actions and g.move_of(a) == m, m.notation
            assert g.clone().play(m.notation) == m
    g = make_game(("8f", "Lion", "black"), *pawns("white", "8e", "8d"), *kings())
    declines, promotes = both(g, "8f", "8d", ["8e", "8d"])
    assert (declines.notation, promotes.notation) == ("LNx8ex8d=", "LNx8ex8d+")


def test_repetition_ends_the_game_as_no_contest():
    """tenjiku.rules `repetition 4` (the sources say nothing; Taikyoku's default)."""
    g = make_game(("1p", "King", "black"), ("16a", "King", "white"))
    shuffle = [("1p", "2p"), ("16a", "15a"), ("2p", "1p"), ("15a", "16a")]
    for _ in range(3):
        for frm, to in shuffle:
            assert not g.is_over
            play(g, frm, to)
    assert g.is_over and g.result == "draw" and g.termination == "repetition"


def test_notation_round_trip_of_every_opening_move():
    g = taikyoku.Game(variant=VARIANT)
    for m in g.legal_moves():
        h = g.clone()
        assert h.play(m.notation) == m


# --------------------------------------------------------------------------------------------
# reference move generators written from the seed, on random positions
# --------------------------------------------------------------------------------------------


class Board:
    """Pieces around a mover: (file, rank) -> (color, name); off-board squares are None."""

    def __init__(self, pieces, color):
        self.pieces, self.color = pieces, color

    def ok(self, p):  # may be landed on: on the board and not a friend
        return p is not None and (p not in self.pieces or self.pieces[p][0] != self.color)

    def enemy(self, p):
        return p in self.pieces and self.pieces[p][0] != self.color

    def caps(self, *squares):
        return frozenset(p for p in squares if self.enemy(p))


def vec(d, color):
    sign = 1 if color == "black" else -1
    return tuple(sign * c for c in STEPS[d])


def rank_of(name):
    return RANKS_OF.get(name, 99)


def ref_range(b, s0, dirs, limit=SIZE):
    out = set()
    for d in dirs:
        dx, dy = vec(d, b.color)
        for i in range(1, limit + 1):
            p = on_board_or_none(s0[0] + i * dx, s0[1] + i * dy)
            if not b.ok(p):
                break
            out.add((p, b.caps(p)))
            if b.caps(p):
                break
    return out


def ref_rankjump(b, s0, dirs, own_rank, hop=False):
    """L24, L28, L31, L33: ranges; capturing, jumps pieces of lower rank (they stay)."""
    out = set()
    for d in dirs:
        dx, dy = vec(d, b.color)
        passed = False
        for i in range(1, SIZE + 1):
            p = on_board_or_none(s0[0] + i * dx, s0[1] + i * dy)
            if p is None:
                break
            if p not in b.pieces:
                if not passed or hop:
                    out.add((p, frozenset()))
                continue
            if b.enemy(p):
                out.add((p, frozenset([p])))
            passed = True
            if rank_of(b.pieces[p][1]) <= own_rank:
                break
    return out


def ref_area(b, s0, n):
    """L26-L27: every path of up to n king steps over empty squares, a capture ending it."""
    out = set()

    def walk(p, left):
        for d in ALL8:
            dx, dy = STEPS[d]
            q = on_board_or_none(p[0] + dx, p[1] + dy)
            if q is None:
                continue
            if q == s0:
                out.add((s0, frozenset()))  # back home: a pass
                if left > 1:
                    walk(q, left - 1)
            elif q not in b.pieces:
                out.add((q, frozenset()))
                if left > 1:
                    walk(q, left - 1)
            elif b.enemy(q):
                out.add((q, frozenset([q])))

    walk(s0, n)
    return out


def ref_lionline2(b, s0, dirs):
    """L38, L41: step twice or jump two squares along the line, capturing up to two; igui; pass."""
    out = set()
    for d in dirs:
        dx, dy = vec(d, b.color)
        s1, s2 = (on_board_or_none(s0[0] + i * dx, s0[1] + i * dy) for i in (1, 2))
        if b.ok(s1):
            out.add((s1, b.caps(s1)))
            out.add((s0, b.caps(s1)))  # igui, or a pass through an empty s1
        if b.ok(s2):
            out.add((s2, b.caps(s2)))
            if b.ok(s1):
                out.add((s2, b.caps(s1, s2)))
    return out


def ref_lion(b, s0):
    """L146-L151: any square within two; two king steps, capturing on each."""
    out = set()
    near = [(dx, dy) for dx in (-2, -1, 0, 1, 2) for dy in (-2, -1, 0, 1, 2) if (dx, dy) != (0, 0)]
    for dx, dy in near:
        p = on_board_or_none(s0[0] + dx, s0[1] + dy)
        if b.ok(p):
            out.add((p, b.caps(p)))
        if max(abs(dx), abs(dy)) == 1 and b.ok(p):
            for ex, ey in near:
                if max(abs(ex), abs(ey)) == 1:
                    q = on_board_or_none(p[0] + ex, p[1] + ey)
                    if q == s0 or b.ok(q):
                        out.add((q, b.caps(p, q)))
    return out


def ref_double_diag(b, s0):
    """L117: two diagonal steps, capturing on either (lion-style), back to the start included."""
    out = set()
    for d1 in DIAG:
        s1 = on_board_or_none(s0[0] + STEPS[d1][0], s0[1] + STEPS[d1][1])
        if not b.ok(s1):
            continue
        out.add((s1, b.caps(s1)))
        for d2 in DIAG:
            s2 = on_board_or_none(s1[0] + STEPS[d2][0], s1[1] + STEPS[d2][1])
            if s2 == s0 or b.ok(s2):
                out.add((s2, b.caps(s1, s2)))
    return out


def ref_jumps(b, s0, dirs, dist=2):
    out = set()
    for d in dirs:
        dx, dy = vec(d, b.color)
        p = on_board_or_none(s0[0] + dist * dx, s0[1] + dist * dy)
        if b.ok(p):
            out.add((p, b.caps(p)))
    return out


def ref_tetrarch(b, s0):
    """L76-L82: igui on the 8 neighbours; range from the 2nd square along the diagonals and the
    file; 2-3 squares sideways, the 2nd square ending a capture."""
    out = set()
    for d in ALL8:
        dx, dy = STEPS[d]
        p = on_board_or_none(s0[0] + dx, s0[1] + dy)
        if b.enemy(p):
            out.add((s0, frozenset([p])))
    for dirs, limit in ((DIAG + ["f", "b"], SIZE), (["l", "r"], 3)):
        for d in dirs:
            dx, dy = vec(d, b.color)
            for i in range(2, limit + 1):
                p = on_board_or_none(s0[0] + i * dx, s0[1] + i * dy)
                if not b.ok(p):
                    break
                out.add((p, b.caps(p)))
                if b.caps(p):
                    break
    return out


REFERENCES = {
    "Great general": lambda b, s0: ref_rankjump(b, s0, ALL8, 1),
    "Vice general": lambda b, s0: ref_rankjump(b, s0, DIAG, 2) | ref_area(b, s0, 3),
    "Rook general": lambda b, s0: ref_rankjump(b, s0, ORTH, 3),
    "Bishop general": lambda b, s0: ref_rankjump(b, s0, DIAG, 3),
    "Horned falcon": lambda b, s0: ref_range(b, s0, ["b", "l", "r"] + DIAG) | ref_lionline2(b, s0, ["f"]),
    "Soaring eagle": lambda b, s0: ref_range(b, s0, ORTH + ["bl", "br"]) | ref_lionline2(b, s0, ["fl", "fr"]),
    "Free eagle": lambda b, s0: ref_range(b, s0, ALL8) | ref_double_diag(b, s0) | ref_jumps(b, s0, ALL8),
    "Lion hawk": lambda b, s0: ref_range(b, s0, DIAG) | ref_lion(b, s0),
    "Lion": lambda b, s0: ref_lion(b, s0),
    "Fire demon": lambda b, s0: ref_range(b, s0, DIAG + ["f", "b"]) | ref_area(b, s0, 3),
    "Heavenly tetrarch": lambda b, s0: ref_tetrarch(b, s0),
}
OPTION_REFERENCES = {
    ("Great general", "range-jump-always"): lambda b, s0: ref_rankjump(b, s0, ALL8, 1, hop=True),
    ("Vice general", "range-jump-always"): lambda b, s0: ref_rankjump(b, s0, DIAG, 2, hop=True) | ref_area(b, s0, 3),
    ("Rook general", "range-jump-always"): lambda b, s0: ref_rankjump(b, s0, ORTH, 3, hop=True),
    ("Bishop general", "range-jump-always"): lambda b, s0: ref_rankjump(b, s0, DIAG, 3, hop=True),
    ("Fire demon", "fire-demon-sideways"): lambda b, s0: ref_range(b, s0, DIAG + ["l", "r"]) | ref_area(b, s0, 3),
    ("Heavenly tetrarch", "heavenly-tetrarch-western"): lambda b, s0: {
        (to, caps) for to, caps in ref_tetrarch(b, s0) if not (to[0] == s0[0] and abs(to[1] - s0[1]) >= 2)
    },
    ("Free eagle", "free-eagle-english"): lambda b, s0: ref_range(b, s0, ALL8) | ref_jumps(b, s0, ORTH),
    ("Free eagle", "free-eagle-edo-no-jump"): lambda b, s0: ref_range(b, s0, ALL8) | ref_double_diag(b, s0),
    ("Lion hawk", "lion-hawk-tsa"): lambda b, s0: ref_range(b, s0, DIAG) | ref_area(b, s0, 2),
}
BLOCKERS = (
    ["Pawn"] * 4
    + ["Great general", "Vice general", "Rook general", "Bishop general"] * 2
    + ["King", "Crown prince", "Lion", "Fire demon", "Gold general"]
)


def ref_burns(b, s0, to, caps, mover):
    """L71-L74 (TSA): an enemy demon beside where the mover stops burns it (and it burns
    nothing); else a demon mover burns every adjacent enemy but demons."""
    adjacent = set()
    for d in ALL8:
        p = on_board_or_none(to[0] + STEPS[d][0], to[1] + STEPS[d][1])
        if p is not None and p != s0 and p not in caps and b.enemy(p):
            adjacent.add(p)
    if any(b.pieces[p][1] == "Fire demon" for p in adjacent):
        return frozenset(), True
    if mover == "Fire demon":
        return frozenset(p for p in adjacent if b.pieces[p][1] != "Fire demon"), False
    return frozenset(), False


def random_position(rng, name, options=None):
    color = rng.choice(["black", "white"])
    s0 = (rng.randint(1, SIZE), rng.randint(1, SIZE))
    g = make_game((sq(*s0), name, color), to_move=color, options=options)
    pieces = {}
    for _ in range(rng.randint(0, 20)):
        p = on_board_or_none(s0[0] + rng.randint(-4, 4), s0[1] + rng.randint(-4, 4))
        if rng.random() < 0.4:  # some further away, on the lines
            d = STEPS[rng.choice(ALL8)]
            i = rng.randint(2, 12)
            p = on_board_or_none(s0[0] + i * d[0], s0[1] + i * d[1])
        if p is None or p == s0 or p in pieces:
            continue
        piece_color = color if rng.random() < 0.4 else other(color)
        piece = rng.choice(BLOCKERS)
        pieces[p] = (piece_color, piece)
        g.place(sq(*p), piece, piece_color)
    return g, color, s0, pieces


def check_against_reference(rng, name, reference, options=None, play_moves=False):
    g, color, s0, pieces = random_position(rng, name, options)
    b = Board(pieces, color)
    expected = {}
    for to, caps in reference(b, s0):
        burned, mover_burned = ref_burns(b, s0, to, caps, name)
        expected[(sq(*to), frozenset(sq(*c) for c in caps | burned))] = (caps, burned, mover_burned)
    moves = list(g.moves_from(sq(*s0)))
    where = f"{name} ({color}) on {sq(*s0)}, pieces { {sq(*p): v for p, v in pieces.items()} }, {options}"
    keys = [(m.to_square, frozenset(m.captures)) for m in moves]
    for key in set(keys):
        flags = sorted(m.promotes for m in moves if (m.to_square, frozenset(m.captures)) == key)
        assert flags in ([False], [True], [False, True]), f"{where}: {key} generated as {flags}"
    got = set(keys)
    assert got == set(expected), (
        f"{where}: missing {sorted((t, sorted(c)) for t, c in set(expected) - got)}, "
        f"extra {sorted((t, sorted(c)) for t, c in got - set(expected))}"
    )
    if play_moves:
        for m in moves:
            caps, burned, mover_burned = expected[(m.to_square, frozenset(m.captures))]
            h = g.clone()
            h.play(m)
            removed = {sq(*p) for p in caps | burned}
            for p, (_c, _piece) in pieces.items():
                if sq(*p) == m.to_square and not mover_burned:
                    continue  # the mover took its place
                assert (h.piece_at(sq(*p)) is None) == (sq(*p) in removed), (where, m.notation, sq(*p))
            landed = h.piece_at(m.to_square)
            if mover_burned:
                assert landed is None, (where, m.notation)
            else:
                assert landed is not None and landed.color == color, (where, m.notation)
                assert landed.promoted == m.promotes or name not in PROMOTIONS
            h.undo()
            assert h.to_text() == g.to_text()


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_moves_match_the_reference(name):
    """150 random positions each: the piece anywhere (edges too), for either side, with up to 20
    pieces of both colours (ranked generals, royals, fire demons among them). Every move once (or
    twice, promoting and not); exactly the reference's moves, burned squares included."""
    rng = random.Random(f"tenjiku-{name}")
    for _ in range(150):
        check_against_reference(rng, name, REFERENCES[name])


@pytest.mark.parametrize("name,option", sorted(OPTION_REFERENCES))
def test_option_moves_match_the_reference(name, option):
    rng = random.Random(f"tenjiku-{name}-{option}")
    for _ in range(100):
        check_against_reference(rng, name, OPTION_REFERENCES[(name, option)], options=[option])


@pytest.mark.parametrize("name", ["Fire demon", "Lion", "Vice general", "Heavenly tetrarch", "Free eagle"])
def test_moves_played_burn_as_the_reference_says(name):
    """Every move of 40 random positions played and undone: the pieces removed (captured and
    burned) and the mover's fate are the reference's."""
    rng = random.Random(f"tenjiku-burn-{name}")
    for _ in range(40):
        check_against_reference(rng, name, REFERENCES[name], play_moves=True)


def ref_knight(b, s0):
    """L104: one square forward plus one diagonally forward, over anything."""
    forward = -1 if b.color == "black" else 1
    out = set()
    for dx in (1, -1):
        p = on_board_or_none(s0[0] + dx, s0[1] + 2 * forward)
        if b.ok(p):
            out.add((p, b.caps(p)))
    return out


# Every other piece, from its entry (steps are ranges of one square).
ALL_REFERENCES = dict(
    REFERENCES,
    **{
        "King": lambda b, s0: ref_range(b, s0, ALL8, 1),
        "Crown prince": lambda b, s0: ref_range(b, s0, ALL8, 1),
        "Drunk elephant": lambda b, s0: ref_range(b, s0, ["f", "l", "r"] + DIAG, 1),
        "Dragon horse": lambda b, s0: ref_range(b, s0, DIAG) | ref_range(b, s0, ORTH, 1),
        "Dragon king": lambda b, s0: ref_range(b, s0, ORTH) | ref_range(b, s0, DIAG, 1),
        "Bishop": lambda b, s0: ref_range(b, s0, DIAG),
        "Rook": lambda b, s0: ref_range(b, s0, ORTH),
        "Ferocious leopard": lambda b, s0: ref_range(b, s0, DIAG + ["f", "b"], 1),
        "Gold general": lambda b, s0: ref_range(b, s0, ORTH + ["fl", "fr"], 1),
        "Pawn": lambda b, s0: ref_range(b, s0, ["f"], 1),
        "Water buffalo": lambda b, s0: ref_range(b, s0, DIAG + ["l", "r"]) | ref_range(b, s0, ["f", "b"], 2),
        "Chariot soldier": lambda b, s0: ref_range(b, s0, DIAG + ["f", "b"]) | ref_range(b, s0, ["l", "r"], 2),
        "Side soldier": lambda b, s0: (
            ref_range(b, s0, ["l", "r"]) | ref_range(b, s0, ["f"], 2) | ref_range(b, s0, ["b"], 1)
        ),
        "Vertical soldier": lambda b, s0: (
            ref_range(b, s0, ["f"]) | ref_range(b, s0, ["l", "r"], 2) | ref_range(b, s0, ["b"], 1)
        ),
        "Knight": ref_knight,
        "Iron general": lambda b, s0: ref_range(b, s0, ["f", "fl", "fr"], 1),
        "Free king": lambda b, s0: ref_range(b, s0, ALL8),
        "Phoenix": lambda b, s0: ref_range(b, s0, ORTH, 1) | ref_jumps(b, s0, DIAG),
        "Kirin": lambda b, s0: ref_range(b, s0, DIAG, 1) | ref_jumps(b, s0, ORTH),
        "Free boar": lambda b, s0: ref_range(b, s0, DIAG + ["l", "r"]),
        "Flying ox": lambda b, s0: ref_range(b, s0, DIAG + ["f", "b"]),
        "Side mover": lambda b, s0: ref_range(b, s0, ["l", "r"]) | ref_range(b, s0, ["f", "b"], 1),
        "Vertical mover": lambda b, s0: ref_range(b, s0, ["f", "b"]) | ref_range(b, s0, ["l", "r"], 1),
        "Copper general": lambda b, s0: ref_range(b, s0, ["f", "b", "fl", "fr"], 1),
        "Silver general": lambda b, s0: ref_range(b, s0, DIAG + ["f"], 1),
        "Multi general": lambda b, s0: ref_range(b, s0, ["f", "bl", "br"]),
        "Flying stag": lambda b, s0: ref_range(b, s0, ["f", "b"]) | ref_range(b, s0, ALL8, 1),
        "Dog": lambda b, s0: ref_range(b, s0, ["f", "bl", "br"], 1),
        "Blind tiger": lambda b, s0: ref_range(b, s0, ["l", "r", "b"] + DIAG, 1),
        "White horse": lambda b, s0: ref_range(b, s0, ["f", "b", "fl", "fr"]),
        "Whale": lambda b, s0: ref_range(b, s0, ["f", "b", "bl", "br"]),
        "Lance": lambda b, s0: ref_range(b, s0, ["f"]),
        "Reverse chariot": lambda b, s0: ref_range(b, s0, ["f", "b"]),
    },
)


def ref_promotion_flags(name, promoted, color, frm, to, captures, path=()):
    """The zone rule (tenjiku.rules): [False], [True] (forced) or [False, True] (a choice).
    `path`: the other squares the move passes through (captures on the way; for a pass, the
    empty zone squares next to it the piece can step to), which count as its end does (L150)."""
    if promoted or name not in PROMOTIONS:
        return [False]
    if in_zone(to, color) and rank_from_front(to, color) in FORCED.get(name, set()):
        return [True]
    reaches = in_zone(to, color) or any(in_zone(p, color) for p in path)
    enters = not in_zone(frm, color) and reaches
    captures_there = bool(captures) and (in_zone(frm, color) or reaches)
    return [False, True] if enters or captures_there else [False]


def check_every_legal_move(g):
    color = g.side_to_move
    pieces = {parse_sq(s): (p.color, p.name) for s, p in g.pieces()}
    promoted = {parse_sq(s): p.promoted for s, p in g.pieces()}
    legal = g.legal_moves()
    got = {}
    for m in legal:
        got.setdefault((m.from_square, m.to_square, frozenset(m.captures)), []).append(m.promotes)
    expected = {}
    b = Board(pieces, color)
    for s0, (c, name) in pieces.items():
        if c != color:
            continue
        moves = list(ALL_REFERENCES[name](b, s0))
        # A pass goes through an empty square next to it that the piece can step to.
        steps = [
            sq(*to)
            for to, caps in moves
            if not caps and to != s0 and to not in pieces and max(abs(to[0] - s0[0]), abs(to[1] - s0[1])) == 1
        ]
        for to, caps in moves:
            burned, _ = ref_burns(b, s0, to, caps, name)
            key = (sq(*s0), sq(*to), frozenset(sq(*x) for x in caps | burned))
            path = steps if (to == s0 and not caps) else [sq(*x) for x in caps if x != to]
            expected[key] = ref_promotion_flags(name, promoted[s0], color, sq(*s0), sq(*to), caps, path)
    assert set(got) == set(expected), (
        f"{g.to_text()}: extra {sorted(set(got) - set(expected))[:5]}, missing {sorted(set(expected) - set(got))[:5]}"
    )
    for key, flags in got.items():
        assert sorted(flags) == expected[key], (g.to_text(), key, flags)
    return legal


def test_every_piece_type_has_a_reference():
    assert set(ALL_REFERENCES) == set(DIAGRAMS)


@pytest.mark.parametrize("seed", range(8))
def test_every_legal_move_matches_the_reference_in_random_games(seed):
    """Games from the set-up position, half their moves captures: in every position, every legal
    move of the side to move (squares, captured and burned squares, the promotion choice) is the
    references' (the zone rule as tenjiku.rules states it)."""
    rng = random.Random(seed)
    g = taikyoku.Game(variant=VARIANT, max_plies=400)
    while not g.is_over:
        legal = check_every_legal_move(g)
        captures = [m for m in legal if m.captures]
        g.play(rng.choice(captures) if captures and rng.random() < 0.5 else rng.choice(legal))


# --------------------------------------------------------------------------------------------
# the setup (the reference setup of docs/RULES.md, "Tenjiku shogi")
# --------------------------------------------------------------------------------------------

# Black's ranks as Black sees them, rank 1 = its back rank, files a..p from its left (a = file 16).
REFERENCE_SETUP = {
    1: "L  N  FL I  C  S  G  K  DE G  S  C  I  FL N  L",
    2: "RC .  CS CS .  BT Kr Ln FK Ph BT .  CS CS .  RC",
    3: "SS VS B  DH DK WB FD LH FE FD WB DK DH B  VS SS",
    4: "SM VM R  HF SE BG RG GG VG RG BG SE HF R  VM SM",
    5: "P  P  P  P  P  P  P  P  P  P  P  P  P  P  P  P",
    6: ".  .  .  .  D  .  .  .  .  .  .  D  .  .  .  .",
    7: ".  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .",
    8: ".  .  .  .  .  .  .  .  .  .  .  .  .  .  .  .",
}
REFERENCE_LEGEND = {
    "K": ("King", 1),
    "DE": ("Drunk elephant", 1),
    "G": ("Gold general", 2),
    "S": ("Silver general", 2),
    "C": ("Copper general", 2),
    "I": ("Iron general", 2),
    "FL": ("Ferocious leopard", 2),
    "N": ("Knight", 2),
    "L": ("Lance", 2),
    "RC": ("Reverse chariot", 2),
    "CS": ("Chariot soldier", 4),
    "BT": ("Blind tiger", 2),
    "Kr": ("Kirin", 1),
    "Ln": ("Lion", 1),
    "FK": ("Free king", 1),
    "Ph": ("Phoenix", 1),
    "SS": ("Side soldier", 2),
    "VS": ("Vertical soldier", 2),
    "B": ("Bishop", 2),
    "DH": ("Dragon horse", 2),
    "DK": ("Dragon king", 2),
    "WB": ("Water buffalo", 2),
    "FD": ("Fire demon", 2),
    "LH": ("Lion hawk", 1),
    "FE": ("Free eagle", 1),
    "SM": ("Side mover", 2),
    "VM": ("Vertical mover", 2),
    "R": ("Rook", 2),
    "HF": ("Horned falcon", 2),
    "SE": ("Soaring eagle", 2),
    "BG": ("Bishop general", 2),
    "RG": ("Rook general", 2),
    "GG": ("Great general", 1),
    "VG": ("Vice general", 1),
    "P": ("Pawn", 16),
    "D": ("Dog", 2),
}


black_square, rotated = BOARD.black_square, BOARD.rotated
start_game = BOARD.start_game_fixture()


def test_board_and_piece_count(start_game):
    g = start_game
    assert (g.width, g.height) == (16, 16)
    assert g.side_to_move == "black"
    pieces = g.pieces()
    assert len(pieces) == 156
    for color in ("black", "white"):
        mine = [p for _, p in pieces if p.color == color]
        assert len(mine) == 78
        assert len({p.name for p in mine}) == 36
        counts = {}
        for p in mine:
            counts[p.name] = counts.get(p.name, 0) + 1
        assert counts == dict(REFERENCE_LEGEND.values())
        assert not any(p.promoted for p in mine)
    assert (g.piece_at("9p").name, g.piece_at("9p").color) == ("King", "black")
    assert (g.piece_at("8a").name, g.piece_at("8a").color) == ("King", "white")
    assert sum(n for _, n in REFERENCE_LEGEND.values()) == 78


@pytest.mark.parametrize("own_rank", sorted(REFERENCE_SETUP), ids=lambda r: f"rank{r}")
def test_setup_rank_matches_reference(start_game, own_rank):
    codes = REFERENCE_SETUP[own_rank].split()
    assert len(codes) == 16
    for i, code in enumerate(codes):
        black_sq = black_square(i, own_rank)
        white_sq = rotated(black_sq)  # White = Black turned by 180 degrees
        for square, color in ((black_sq, "black"), (white_sq, "white")):
            piece = start_game.piece_at(square)
            if code == ".":
                assert piece is None, f"{square} should be empty, holds {piece}"
            else:
                assert piece is not None, f"{square}: {REFERENCE_LEGEND[code][0]} missing"
                assert (piece.name, piece.color) == (REFERENCE_LEGEND[code][0], color), square


def test_setup_keys_are_the_reference_abbreviations_upper_cased(start_game):
    for square, piece in start_game.pieces():
        own_rank = SIZE + 1 - parse_sq(square)[1] if piece.color == "black" else parse_sq(square)[1]
        f = parse_sq(square)[0]
        index = SIZE - f if piece.color == "black" else f - 1
        code = REFERENCE_SETUP[own_rank].split()[index]
        assert piece.abbrev == code.upper(), square


def test_setup_file_is_point_symmetric_and_mostly_mirror_symmetric(start_game):
    """Left-right symmetric but for the centre pairs (K/DE, LN/FK, LH/FE, GG/VG) and KR/PH."""
    asym = set()
    for square, piece in start_game.pieces():
        f, r = parse_sq(square)
        mirror = start_game.piece_at(sq(SIZE + 1 - f, r))
        if mirror is None or mirror.name != piece.name:
            asym.add(piece.name)
    assert asym == {
        "King",
        "Drunk elephant",
        "Lion",
        "Free king",
        "Lion hawk",
        "Free eagle",
        "Great general",
        "Vice general",
        "Kirin",
        "Phoenix",
    }


# --------------------------------------------------------------------------------------------
# other names (alias lines): the headings' romaji and the English alternatives
# --------------------------------------------------------------------------------------------

ALIASES = [
    ("gyokushō", "King"),
    ("ōshō", "King"),  # L7, L16
    ("Jeweled general", "King"),
    ("King general", "King"),  # L7, L16
    ("taishi", "Crown prince"),  # L7
    ("suizō", "Drunk elephant"),
    ("Drunken elephant", "Drunk elephant"),  # L16, L21
    ("fukushō", "Vice general"),
    ("taishō", "Great general"),  # L22
    ("kakushō", "Bishop general"),
    ("hishō", "Rook general"),  # L30
    ("kakuō", "Horned falcon"),
    ("hijū", "Soaring eagle"),  # L35
    ("ryūme", "Dragon horse"),
    ("ryūō", "Dragon king"),  # L42
    ("kakugyō", "Bishop"),
    ("hisha", "Rook"),  # L49
    ("mōhyō", "Ferocious leopard"),
    ("Leopard", "Ferocious leopard"),  # L55, L56
    ("kinshō", "Gold general"),
    ("fuhyō", "Pawn"),  # L55, L60
    ("kaki", "Fire demon"),
    ("shitennō", "Heavenly tetrarch"),  # L65
    ("Heavenly tetrarchs", "Heavenly tetrarch"),
    ("Four Heavenly Kings", "Heavenly tetrarch"),  # L86
    ("suigyū", "Water buffalo"),
    ("shahei", "Chariot soldier"),  # L88
    ("ōhei", "Side soldier"),
    ("shuhei", "Vertical soldier"),  # L96
    ("keima", "Knight"),
    ("tesshō", "Iron general"),  # L103
    ("honjū", "Free eagle"),
    ("shiō", "Lion hawk"),  # L112
    ("honnō", "Free king"),
    ("shishi", "Lion"),  # L139
    ("hōō", "Phoenix"),
    ("Kylin", "Kirin"),  # L155; Kylin: the common English spelling
    ("honcho", "Free boar"),
    ("higyū", "Flying ox"),  # L163
    ("ōgyō", "Side mover"),
    ("shugyō", "Vertical mover"),  # L166
    ("dōshō", "Copper general"),
    ("ginshō", "Silver general"),  # L171
    ("suishō", "Multi general"),
    ("hiroku", "Flying stag"),  # L174
    ("inu", "Dog"),
    ("mōko", "Blind tiger"),  # L179
    ("hokku", "White horse"),
    ("keigei", "Whale"),  # L182
    ("kyōsha", "Lance"),
    ("hensha", "Reverse chariot"),  # L185
]


def test_alias_list_is_complete():
    text = (VARIANT_DIR / "tenjiku.pieces").read_text(encoding="utf-8")
    in_file = [line.split("|", 1)[1].strip() for line in text.splitlines() if line.startswith("alias ")]
    assert sorted(in_file) == sorted(a for a, _ in ALIASES)
    types = piece_types()
    assert sorted(a for t in types.values() for a in t.aliases) == sorted(a for a, _ in ALIASES)


@pytest.mark.parametrize("alias,name", ALIASES, ids=[a for a, _ in ALIASES])
def test_place_by_alias(alias, name):
    for spelling in (alias, alias.lower(), alias.upper()):
        g = make_game(("8h", spelling, "black"))
        assert g.piece_at("8h").name == name, spelling


def test_no_alias_is_a_code():
    """No alias is all upper case, so none is read as a notation code."""
    assert not any(a.isupper() for a, _ in ALIASES)


# --------------------------------------------------------------------------------------------
# rule options (docs/RULES.md, "Tenjiku shogi")
# --------------------------------------------------------------------------------------------

OPTIONS = {  # option -> the pieces it changes
    "range-jump-always": {"Vice general", "Great general", "Bishop general", "Rook general"},
    "fire-demon-sideways": {"Fire demon"},
    "heavenly-tetrarch-western": {"Heavenly tetrarch"},
    "free-eagle-english": {"Free eagle"},
    "free-eagle-edo-no-jump": {"Free eagle"},
    "lion-hawk-tsa": {"Lion hawk"},
}
OPTION_DIAGRAMS = {  # options that change the moves on an empty board
    "fire-demon-sideways": (
        "Fire demon",
        "L68: diagonally and to the sides",
        """
╲ ○ ○ ○ ○ ○ ╱
○ ╲ ○ ○ ○ ╱ ○
○ ○ ╲ ○ ╱ ○ ○
─ ─ ─ ? ─ ─ ─
○ ○ ╱ ○ ╲ ○ ○
○ ╱ ○ ○ ○ ╲ ○
╱ ○ ○ ○ ○ ○ ╲
""",
    ),
    "heavenly-tetrarch-western": (
        "Heavenly tetrarch",
        "L84 (ttfbttshK)",
        """
╲ . . . . . ╱
. ╲ . . . ╱ .
. . ! ! ! . .
○ ○ ! ? ! ○ ○
. . ! ! ! . .
. ╱ . . . ╲ .
╱ . . . . . ╲
""",
    ),
    "free-eagle-english": (
        "Free eagle",
        "L130-L132 (QD)",
        """
╲ │ ╱
─ ? ─
╱ │ ╲
""",
    ),
}
OPTION_PASSERS = {"fire-demon-sideways", "free-eagle-edo-no-jump", "lion-hawk-tsa", "range-jump-always"}
PROBE = [*pawns("black", "8g", "7g", "9i"), *pawns("white", "8e", "6f", "7h", "10f"), ("8c", "Pawn", "white")]


RULES_OPTIONS = {  # options of tenjiku.rules -> the rules keys they set (docs/RULES.md)
    "promotion-touch": {"promotion-trigger"},
    "promotion-dead-piece": {"promotion-forced"},
    "adams-repetition": {"repetition", "repetition-mode"},
}


def test_option_list_is_complete():
    types = {t.abbrev: t.name for t in taikyoku.piece_types(VARIANT)}
    listed = taikyoku.rule_options(VARIANT)
    offered, rules_offered = {}, {}
    for option, key in listed:
        if key in types:
            offered.setdefault(option, set()).add(types[key])
        else:
            rules_offered.setdefault(option, set()).add(key)
    assert offered == OPTIONS
    assert rules_offered == RULES_OPTIONS
    assert len(listed) == 9 + 4


def test_promotion_touch_option_lets_a_declined_piece_promote_on_a_quiet_move():
    # Black's zone is ranks a-e. A black gold on 8e (inside) steps to 8d without capturing:
    # enter-or-capture offers nothing (it neither enters nor captures), touch offers the choice.
    pieces = [("8e", "Gold general", "black"), ("1p", "King", "black"), ("16a", "King", "white")]
    plain = make_game(*pieces)
    touch = make_game(*pieces, options=["promotion-touch"])
    assert {m.promotes for m in plain.moves_from("8e") if m.to_square == "8d"} == {False}
    assert {m.promotes for m in touch.moves_from("8e") if m.to_square == "8d"} == {False, True}


def test_promotion_dead_piece_option_lets_a_pawn_stay_on_the_last_rank():
    # A pawn that declined in the zone steps to the last rank: forced to promote by default;
    # with the option it may not promote there (a quiet move inside the zone offers nothing)
    # and stays, a dead piece. Entering the zone it still has the choice.
    pieces = [("8b", "Pawn", "black"), ("8f", "Pawn", "black"), ("1p", "King", "black"), ("16p", "King", "white")]
    forced = make_game(*pieces)
    dead = make_game(*pieces, options=["promotion-dead-piece"])
    assert [m.promotes for m in forced.moves_from("8b")] == [True]
    assert [m.promotes for m in dead.moves_from("8b")] == [False]
    assert sorted(m.promotes for m in dead.moves_from("8f")) == [False, True]
    dead.play(dead.moves_from("8b")[0])
    assert list(dead.moves_from("8a")) == []


def test_adams_repetition_option_forbids_a_repeated_position():
    pieces = [("8h", "Gold general", "black"), ("1p", "King", "black"), ("16a", "King", "white")]
    for options, legal in (([], True), (["adams-repetition"], False)):
        g = make_game(*pieces, options=options)
        for square, to in (("8h", "8g"), ("16a", "15a"), ("8g", "8h")):
            g.play(next(m for m in g.moves_from(square) if m.to_square == to))
        # White moving back would recreate the first position (Black to move).
        back = [m for m in g.moves_from("15a") if m.to_square == "16a"]
        assert bool(back) == legal, options


@pytest.mark.parametrize("color", ["black", "white"])
@pytest.mark.parametrize("option", sorted(OPTION_DIAGRAMS))
def test_option_moves_on_an_empty_board(option, color):
    name, lines, diagram = OPTION_DIAGRAMS[option]
    g = make_game((START, name, color), to_move=color, options=[option])
    moves = list(g.moves_from(START))
    passes = [m for m in moves if m.to_square == START]
    assert len(passes) == (1 if option in OPTION_PASSERS else 0)
    got = {m.to_square for m in moves} - {START}
    expected = diagram_destinations(diagram, START, color, igui_only=name in IGUI_ONLY)
    assert got == expected, (
        f"{option} ({color}), {lines}: missing {sorted(expected - got)}, extra {sorted(got - expected)}"
    )


def test_variant_checks_with_every_option():
    """The three files as they are in the tree (also before the package is rebuilt)."""
    texts = [(VARIANT_DIR / f"tenjiku.{ext}").read_text(encoding="utf-8") for ext in ("rules", "pieces", "setup")]
    summary = taikyoku._core.check_variant(VARIANT, *texts)
    assert summary == ("tenjiku: 16x16 board, 44 piece types (8 promoted-only), 78 pieces a side, 13 rule options")


@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_option_loads(option):
    g = taikyoku.Game(variant=VARIANT, options=[option])
    assert list(g.options) == [option]
    assert len(g.pieces()) == 156
    assert g.legal_move_count() > 0


def test_all_options_together():
    g = taikyoku.Game(variant=VARIANT, options=sorted(OPTIONS))
    assert g.legal_move_count() > 0


@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_option_changes_its_pieces_moves(option):
    for name in sorted(OPTIONS[option]):
        changed = False
        for extra in ([], PROBE):
            main = make_game(("8h", name, "black"), *extra)
            alt = make_game(("8h", name, "black"), *extra, options=[option])
            changed |= move_keys(main, "8h") != move_keys(alt, "8h")
        assert changed, f"{option} does not change the moves of the {name}"


# --------------------------------------------------------------------------------------------
# end of game, whole games, the Gymnasium env
# --------------------------------------------------------------------------------------------


def test_capturing_the_king_wins():
    g = make_game(("8h", "Rook", "black"), ("8c", "King", "white"), ("1p", "King", "black"))
    play(g, "8h", "8c", promotes=False)
    assert g.is_over and g.result == "black" and g.termination == "royal_capture"


def test_moving_into_check_is_legal():
    """L10: the king may move into check."""
    g = make_game(("8h", "King", "black"), ("6g", "Rook", "white"), ("16a", "King", "white"))
    assert "7g" in destinations(g, "8h")
    play(g, "8h", "7g")
    assert g.in_check("black") and not g.is_over


def test_no_moves_loses():
    """tenjiku.rules `no-moves loses` (not in the sources; the shogi convention)."""
    g = make_game(
        ("1a", "King", "black"),
        ("2a", "Pawn", "black"),
        ("1b", "Pawn", "black"),
        ("2b", "Pawn", "black"),
        ("16p", "King", "white"),
    )
    # the pawns on 2a cannot move, 1b and 2b are blocked by the king and the pawn on 2a
    assert g.legal_moves() == []
    assert g.is_over and g.result == "white" and g.termination == "no_moves"


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_random_games_play_to_the_end(seed):
    g = taikyoku.random_game(seed, max_plies=500, variant=VARIANT)
    assert g.is_over
    assert g.ply <= 500
    if g.termination == "max_plies":
        assert g.ply == 500 and g.result is None
    else:
        assert g.result in ("black", "white", "draw")


@pytest.mark.parametrize("seed", [0, 1])
def test_random_playout_round_trips(seed):
    """Each move played: its notation and its action lead back to it, the position text reads
    back (promoted pieces as `+` and their original key); undo restores the text."""
    rng = random.Random(seed)
    g = taikyoku.Game(variant=VARIANT, max_plies=300)
    texts = []
    while not g.is_over:
        moves = g.legal_moves()
        m = rng.choice(moves)
        assert g.clone().play(m.notation) == m
        action = g.action_of(m)
        assert (action >= taikyoku.PROMOTION_BLOCK) == m.promotes
        assert g.move_of(action) == m
        texts.append(g.to_text())
        assert taikyoku.Game.from_text(texts[-1], variant=VARIANT).to_text() == texts[-1]
        g.play(m)
    for text in reversed(texts):
        g.undo()
        assert g.to_text() == text


def test_gymnasium_env_resets_and_steps():
    gym = pytest.importorskip("gymnasium")
    env = gym.make("taikyoku/Tenjiku-v0", max_plies=40)
    obs, info = env.reset(seed=5)
    assert env.observation_space.contains(obs)
    assert env.action_space.n == taikyoku.NUM_ACTIONS
    rng = random.Random(5)
    steps = 0
    while True:
        action = int(rng.choice(list(info["legal_actions"])))
        obs, reward, terminated, truncated, info = env.step(action)
        steps += 1
        if terminated or truncated:
            break
    assert steps <= 40
