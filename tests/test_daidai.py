"""Dai dai shogi (variant "daidai"), checked against its seed.

Seed: the English Wikipedia article "Dai dai shogi"; "L123" is line 123 of its plain-text copy, seed
002 (docs/RULES.md, "Dai dai shogi"). Setup: the reference setup of docs/RULES.md (copied below). Data under test:
rust/engine/variants/daidai.{rules,pieces,setup}; reading choices: docs/RULES.md, "Dai dai shogi".

Squares are the engine's (and the seed's, L1286): files 1..17 counted from Black's right, ranks
a..q from the top; "1a" is the top right corner, the centre is 9i. Black moves up (towards rank a).
From Black's 9i: forward 9h, backward 9j, left 10i, right 8i, forward-left 10h, forward-right 8h.

Movement diagrams are written in the seed's own glyphs, as its diagrams are (each names the seed
lines of its flattened diagram, one cell per line): the piece is `?` (the seed shows its kanji),
`.` an unreachable cell, and
- `○` step / limited range, `☆` jump (or a lion-type square), `!` igui square: a destination;
- `│ ─ ╲ ╱` ranging: every such cell is a destination, and a line that reaches the edge of the
  diagram goes on to the edge of the board;
- the diagram's top is forward for the piece's owner; for White it is turned 180 degrees.
Lion-type pieces (lion, lion dog, furious fiend, great elephant) may also pass: that move (back to
their own square) is checked apart from the diagram. The two hook movers are checked by an explicit
rule (their seed diagrams show where a turn may be made, not the reach).

The module skips while the engine does not know the variant (the data files use syntax that the
engine gains together with the variant: `lionline`, `alias`, `option ... promotes-to`,
`repetition-mode forbid`).
"""

import random
from pathlib import Path

import pytest
from boards import OTHER_SEVEN_LINES_FROM_9I, STEPS, VariantBoard, destinations, k, move_keys, moves_to, pawns, play

import taikyoku
import taikyoku._core

pytestmark = pytest.mark.skipif(
    "daidai" not in taikyoku.variants(),
    reason="variant 'daidai' is not built into this taikyoku yet (engine support in progress)",
)

VARIANT = "daidai"
VARIANT_DIR = Path(__file__).resolve().parent.parent / "rust" / "engine" / "variants"
SIZE = 17
START = "9i"

# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------

BOARD = VariantBoard(VARIANT, SIZE, START)
sq, parse_sq, make_game = BOARD.sq, BOARD.parse_sq, BOARD.make_game
diagram_destinations, on_board_or_none = BOARD.diagram_destinations, BOARD.on_board_or_none
ALL_SQUARES = BOARD.all_squares


# --------------------------------------------------------------------------------------------
# movement diagrams (seed glyphs), one per piece type
# --------------------------------------------------------------------------------------------

# name -> (seed lines of its diagram or text, diagram). The seed's diagrams lost their empty cells
# when flattened; each is rebuilt here row by row from the cell order and the entry's text.
DIAGRAMS = {
    "King": (
        "L117-L135 (K)",
        """
○ ○ ○
○ ? ○
○ ○ ○
""",
    ),
    "Old kite": (
        "L206-L207, no diagram (R2fF)",
        """
. . ○ . .
. ○ ○ ○ .
○ ○ ? ○ ○
. . ○ . .
. . ○ . .
""",
    ),
    "Poisonous snake": (
        "L209-L216 (rlWfDbA)",
        """
. . ☆ . .
. . . . .
. ○ ? ○ .
. . . . .
☆ . . . ☆
""",
    ),
    "Great elephant": (
        "L220-L251",
        """
. . . . │ . . . .
. . . . ☆ . . . .
. . ○ . ☆ . ○ . .
. . . ○ ! ○ . . .
─ ☆ ☆ ! ? ! ☆ ☆ ─
. . . ! ! ! . . .
. . ☆ . ☆ . ☆ . .
. ☆ . . ☆ . . ☆ .
╱ . . . │ . . . ╲
""",
    ),
    "Furious fiend": (
        "L253-L286 (NADaKafavK)",
        """
☆ . . ☆ . . ☆
. ☆ ☆ ☆ ☆ ☆ .
. ☆ ! ! ! ☆ .
☆ ☆ ! ? ! ☆ ☆
. ☆ ! ! ! ☆ .
. ☆ ☆ ☆ ☆ ☆ .
☆ . . ☆ . . ☆
""",
    ),
    "Lion dog": (
        "L290-L319 (KavKafavK)",
        """
☆ . . ☆ . . ☆
. ☆ . ☆ . ☆ .
. . ! ! ! . .
☆ ☆ ! ? ! ☆ ☆
. . ! ! ! . .
. ☆ . ☆ . ☆ .
☆ . . ☆ . . ☆
""",
    ),
    "Lion": (
        "L321-L349 (NADaK)",
        """
☆ ☆ ☆ ☆ ☆
☆ ! ! ! ☆
☆ ! ? ! ☆
☆ ! ! ! ☆
☆ ☆ ☆ ☆ ☆
""",
    ),
    "Western barbarian": (
        "L353-L363 (rlR2fbWfF)",
        """
. ○ ○ ○ .
○ ○ ? ○ ○
. . ○ . .
""",
    ),
    "Eastern barbarian": (
        "L365-L375 (fbR2rlWfF)",
        """
. ○ .
○ ○ ○
○ ? ○
. ○ .
. ○ .
""",
    ),
    "Fragrant elephant": (
        "L379-L399 (fBR2bB2)",
        """
╲ . . . . . ╱
. ╲ . ○ . ╱ .
. . ╲ ○ ╱ . .
. ○ ○ ? ○ ○ .
. . ○ ○ ○ . .
. ○ . ○ . ○ .
""",
    ),
    "White elephant": (
        "L400-L420 (bBR2fB2)",
        """
. ○ . ○ . ○ .
. . ○ ○ ○ . .
. ○ ○ ? ○ ○ .
. . ╱ ○ ╲ . .
. ╱ . ○ . ╲ .
╱ . . . . . ╲
""",
    ),
    "Northern barbarian": (
        "L423-L433 (fB2rlWF)",
        """
○ . . . ○
. ○ . ○ .
. ○ ? ○ .
. ○ . ○ .
""",
    ),
    "Southern barbarian": (
        "L435-L445 (bB2rlWF)",
        """
. ○ . ○ .
. ○ ? ○ .
. ○ . ○ .
○ . . . ○
""",
    ),
    "Free dream-eater": (
        "L449-L491 (fbRBrlR5; the diagram's vertical lines)",
        """
╲ . . . . │ . . . . ╱
. ╲ . . . │ . . . ╱ .
. . ╲ . . │ . . ╱ . .
. . . ╲ . │ . ╱ . . .
. . . . ╲ │ ╱ . . . .
○ ○ ○ ○ ○ ? ○ ○ ○ ○ ○
. . . . ╱ │ ╲ . . . .
. . . ╱ . │ . ╲ . . .
. . ╱ . . │ . . ╲ . .
. ╱ . . . │ . . . ╲ .
╱ . . . . │ . . . . ╲
""",
    ),
    "Free demon": (
        "L492-L534 (rlRBfbR5)",
        """
╲ . . . . ○ . . . . ╱
. ╲ . . . ○ . . . ╱ .
. . ╲ . . ○ . . ╱ . .
. . . ╲ . ○ . ╱ . . .
. . . . ╲ ○ ╱ . . . .
─ ─ ─ ─ ─ ? ─ ─ ─ ─ ─
. . . . ╱ ○ ╲ . . . .
. . . ╱ . ○ . ╲ . . .
. . ╱ . . ○ . . ╲ . .
. ╱ . . . ○ . . . ╲ .
╱ . . . . ○ . . . . ╲
""",
    ),
    "Water buffalo": (
        "L537-L561 (rlRBfbR2)",
        """
╲ . . . . . ╱
. ╲ . ○ . ╱ .
. . ╲ ○ ╱ . .
─ ─ ─ ? ─ ─ ─
. . ╱ ○ ╲ . .
. ╱ . ○ . ╲ .
╱ . . . . . ╲
""",
    ),
    "Rushing bird": (
        "L563-L585 (BfrlR)",
        """
╲ . . │ . . ╱
. ╲ . │ . ╱ .
. . ╲ │ ╱ . .
─ ─ ─ ? ─ ─ ─
. . ╱ . ╲ . .
. ╱ . . . ╲ .
╱ . . . . . ╲
""",
    ),
    "Queen": (
        "L589-L614 (Q)",
        """
╲ . . │ . . ╱
. ╲ . │ . ╱ .
. . ╲ │ ╱ . .
─ ─ ─ ? ─ ─ ─
. . ╱ │ ╲ . .
. ╱ . │ . ╲ .
╱ . . │ . . ╲
""",
    ),
    "Standard bearer": (
        "L615-L636 (Q2fQ)",
        """
╲ . . │ . . ╱
. ╲ . │ . ╱ .
. . ╲ │ ╱ . .
. ○ ○ ? ○ ○ .
. . ○ ○ ○ . .
. ○ . ○ . ○ .
""",
    ),
    "Flying horse": (
        "L639-L649 (fB2W)",
        """
○ . . . ○
. ○ ○ ○ .
. ○ ? ○ .
. . ○ . .
""",
    ),
    "Neighboring king": (
        "L651-L660 (K)",
        """
○ ○ ○
○ ? ○
○ ○ ○
""",
    ),
    "Mountain witch": (
        "L664-L682 (BbRfW)",
        """
╲ . . . . . ╱
. ╲ . . . ╱ .
. . ╲ ○ ╱ . .
. . . ? . . .
. . ╱ │ ╲ . .
. ╱ . │ . ╲ .
╱ . . │ . . ╲
""",
    ),
    "Wizard stork": (
        "L684-L702 (BfRbW)",
        """
╲ . . │ . . ╱
. ╲ . │ . ╱ .
. . ╲ │ ╱ . .
. . . ? . . .
. . ╱ ○ ╲ . .
. ╱ . . . ╲ .
╱ . . . . . ╲
""",
    ),
    "Blind monkey": (
        "L706-L713 (FrlW)",
        """
○ . ○
○ ? ○
○ . ○
""",
    ),
    "Old rat": (
        "L715-L722 (fB2bR2)",
        """
○ . . . ○
. ○ . ○ .
. . ? . .
. . ○ . .
. . ○ . .
""",
    ),
    "Dove": (
        "L726-L756 (R2B5)",
        """
○ . . . . . . . . . ○
. ○ . . . . . . . ○ .
. . ○ . . . . . ○ . .
. . . ○ . ○ . ○ . . .
. . . . ○ ○ ○ . . . .
. . . ○ ○ ? ○ ○ . . .
. . . . ○ ○ ○ . . . .
. . . ○ . ○ . ○ . . .
. . ○ . . . . . ○ . .
. ○ . . . . . . . ○ .
○ . . . . . . . . . ○
""",
    ),
    "She-devil": (
        "L757-L787 (R5B2)",
        """
. . . . . ○ . . . . .
. . . . . ○ . . . . .
. . . . . ○ . . . . .
. . . ○ . ○ . ○ . . .
. . . . ○ ○ ○ . . . .
○ ○ ○ ○ ○ ? ○ ○ ○ ○ ○
. . . . ○ ○ ○ . . . .
. . . ○ . ○ . ○ . . .
. . . . . ○ . . . . .
. . . . . ○ . . . . .
. . . . . ○ . . . . .
""",
    ),
    "Enchanted badger": (
        "L790-L797 (frlR2)",
        """
. . ○ . .
. . ○ . .
○ ○ ? ○ ○
""",
    ),
    "Enchanted fox": (
        "L799-L806 (fB2bR2)",
        """
○ . . . ○
. ○ . ○ .
. . ? . .
. . ○ . .
. . ○ . .
""",
    ),
    "Dragon horse": (
        "L811-L829 (WB)",
        """
╲ . . . . . ╱
. ╲ . . . ╱ .
. . ╲ ○ ╱ . .
. . ○ ? ○ . .
. . ╱ ○ ╲ . .
. ╱ . . . ╲ .
╱ . . . . . ╲
""",
    ),
    "Dragon king": (
        "L831-L849 (FR)",
        """
. . . │ . . .
. . . │ . . .
. . ○ │ ○ . .
─ ─ ─ ? ─ ─ ─
. . ○ │ ○ . .
. . . │ . . .
. . . │ . . .
""",
    ),
    "Cat sword": (
        "L852-L857 (F)",
        """
○ . ○
. ? .
○ . ○
""",
    ),
    "Flying dragon": (
        "L860-L869 (B2)",
        """
○ . . . ○
. ○ . ○ .
. . ? . .
. ○ . ○ .
○ . . . ○
""",
    ),
    "Racing chariot": (
        "L874-L890 (RbF)",
        """
. . . │ . . .
. . . │ . . .
. . . │ . . .
─ ─ ─ ? ─ ─ ─
. . ○ │ ○ . .
. . . │ . . .
. . . │ . . .
""",
    ),
    "Square mover": (
        "L893-L909 (RfF)",
        """
. . . │ . . .
. . . │ . . .
. . ○ │ ○ . .
─ ─ ─ ? ─ ─ ─
. . . │ . . .
. . . │ . . .
. . . │ . . .
""",
    ),
    "Prancing stag": (
        "L911-L923 (rlR2FfW)",
        """
. ○ ○ ○ .
○ ○ ? ○ ○
. ○ . ○ .
""",
    ),
    "Golden bird": (
        "L927-L952 (fbRB3rlR2)",
        """
○ . . │ . . ○
. ○ . │ . ○ .
. . ○ │ ○ . .
. ○ ○ ? ○ ○ .
. . ○ │ ○ . .
. ○ . │ . ○ .
○ . . │ . . ○
""",
    ),
    "Great dragon": (
        "L953-L978 (rlRB3fbR2)",
        """
○ . . . . . ○
. ○ . ○ . ○ .
. . ○ ○ ○ . .
─ ─ ─ ? ─ ─ ─
. . ○ ○ ○ . .
. ○ . ○ . ○ .
○ . . . . . ○
""",
    ),
    "Phoenix": (
        "L981-L991 (WA)",
        """
☆ . . . ☆
. . ○ . .
. ○ ? ○ .
. . ○ . .
☆ . . . ☆
""",
    ),
    "Kirin": (
        "L993-L1003 (FD)",
        """
. . ☆ . .
. ○ . ○ .
☆ . ? . ☆
. ○ . ○ .
. . ☆ . .
""",
    ),
    "Bishop": (
        "L1009-L1022 (B)",
        """
╲ . . . . . ╱
. ╲ . . . ╱ .
. . ╲ . ╱ . .
. . . ? . . .
. . ╱ . ╲ . .
. ╱ . . . ╲ .
╱ . . . . . ╲
""",
    ),
    "Rook": (
        "L1024-L1037 (R)",
        """
. . . │ . . .
. . . │ . . .
. . . │ . . .
─ ─ ─ ? ─ ─ ─
. . . │ . . .
. . . │ . . .
. . . │ . . .
""",
    ),
    "Left chariot": (
        "L1040-L1052 (fR[fl][br]BbW)",
        """
╲ . . │ . . .
. ╲ . │ . . .
. . ╲ │ . . .
. . . ? . . .
. . . ○ ╲ . .
. . . . . ╲ .
. . . . . . ╲
""",
    ),
    "Right chariot": (
        "L1053-L1065 (fR[fr][bl]BbW)",
        """
. . . │ . . ╱
. . . │ . ╱ .
. . . │ ╱ . .
. . . ? . . .
. . ╱ ○ . . .
. ╱ . . . . .
╱ . . . . . .
""",
    ),
    "White tiger": (
        "L1068-L1085 (fbR[fl]BrlR2fF)",
        """
╲ . . │ . . .
. ╲ . │ . . .
. . ╲ │ ○ . .
. ○ ○ ? ○ ○ .
. . . │ . . .
. . . │ . . .
. . . │ . . .
""",
    ),
    "Blue dragon": (
        "L1086-L1103 (rlR[fr]BfbR2fF)",
        """
. . . . . . ╱
. . . ○ . ╱ .
. . ○ ○ ╱ . .
─ ─ ─ ? ─ ─ ─
. . . ○ . . .
. . . ○ . . .
""",
    ),
    "Side mover": (
        "L1106-L1116 (rlRW)",
        """
. . . ○ . . .
─ ─ ─ ? ─ ─ ─
. . . ○ . . .
""",
    ),
    "Vertical mover": (
        "L1117-L1127 (fbRW)",
        """
. │ .
. │ .
. │ .
○ ? ○
. │ .
. │ .
. │ .
""",
    ),
    "Howling dog": (
        "L1130-L1136 (fRbW)",
        """
│
│
│
?
○
""",
    ),
    "Reverse chariot": (
        "L1137-L1144 (fbR)",
        """
│
│
│
?
│
│
│
""",
    ),
    "Violent ox": (
        "L1147-L1156 (R2)",
        """
. . ○ . .
. . ○ . .
○ ○ ? ○ ○
. . ○ . .
. . ○ . .
""",
    ),
    "Lance": (
        "L1157-L1161 (fR)",
        """
│
│
│
?
""",
    ),
    "Angry boar": (
        "L1165-L1170 (W)",
        """
. ○ .
○ ? ○
. ○ .
""",
    ),
    "Violent bear": (
        "L1171-L1179 (fB2rlW)",
        """
○ . . . ○
. ○ . ○ .
. ○ ? ○ .
""",
    ),
    "Left general": (
        "L1182-L1190 (FfrbW: not directly left)",
        """
○ ○ ○
. ? ○
○ ○ ○
""",
    ),
    "Right general": (
        "L1191-L1199 (FflbW: not directly right)",
        """
○ ○ ○
○ ? .
○ ○ ○
""",
    ),
    "Gold general": (
        "L1202-L1210 (WfF)",
        """
○ ○ ○
○ ? ○
. ○ .
""",
    ),
    "Ferocious leopard": (
        "L1211-L1219 (FfbW)",
        """
○ ○ ○
. ? .
○ ○ ○
""",
    ),
    "Silver general": (
        "L1222-L1228 (FfW)",
        """
○ ○ ○
. ? .
○ . ○
""",
    ),
    "Evil wolf": (
        "L1229-L1235 (frlK)",
        """
○ ○ ○
○ ? ○
""",
    ),
    "Copper general": (
        "L1238-L1243 (fFfbW)",
        """
○ ○ ○
. ? .
. ○ .
""",
    ),
    "Savage tiger": (
        "L1244-L1252 (fbR2fF)",
        """
. . ○ . .
. ○ ○ ○ .
. . ? . .
. . ○ . .
. . ○ . .
""",
    ),
    "Iron general": (
        "L1255-L1259 (fK)",
        """
○ ○ ○
. ? .
""",
    ),
    "Wood general": (
        "L1261-L1266 (fB2)",
        """
○ . . . ○
. ○ . ○ .
. . ? . .
""",
    ),
    "Stone general": (
        "L1270-L1273 (fF)",
        """
○ . ○
. ? .
""",
    ),
    "Pawn": (
        "L1275-L1277 (fW)",
        """
○
?
""",
    ),
}

LION_LIKE = {"Lion", "Lion dog", "Furious fiend", "Great elephant"}  # they may pass


def same_colour(a, b):
    (fa, ra), (fb, rb) = parse_sq(a), parse_sq(b)
    return (fa + ra) % 2 == (fb + rb) % 2


def orthogonal_neighbours(square):
    f, r = parse_sq(square)
    return {sq(f + df, r + dr) for df, dr in ((0, -1), (0, 1), (1, 0), (-1, 0))}


# The hook movers by rule (L165-L167, L205): a range, an optional 90-degree turn, a second range.
# On the empty board the hook mover (orthogonal) reaches every other square; the tengu (diagonal)
# every other square of its own colour, plus its four orthogonal steps (L167).
HOOK_DESTINATIONS = {
    "Hook mover": ("L168-L205 (RmaR)", ALL_SQUARES - {START}),
    "Long-nosed goblin": (
        "L140-L167 (WmBaB)",
        {s for s in ALL_SQUARES if same_colour(s, START)} - {START} | orthogonal_neighbours(START),
    ),
}

PIECE_NAMES = sorted(DIAGRAMS) + sorted(HOOK_DESTINATIONS)


def test_every_piece_type_has_a_diagram():
    """68 moves (L4): 64 set-up types and 4 that only exist by promotion (L113)."""
    types = taikyoku.piece_types(VARIANT)
    assert len(types) == 68
    assert {t.name for t in types} == set(PIECE_NAMES)
    assert sorted(t.name for t in types if t.promoted_only) == [
        "Furious fiend",
        "Great elephant",
        "Mountain witch",
        "Wizard stork",
    ]
    assert [t.name for t in types if t.royal] == ["King"]


@pytest.mark.parametrize("color", ["black", "white"])
@pytest.mark.parametrize("name", PIECE_NAMES)
def test_moves_on_an_empty_board(name, color):
    g = make_game((START, name, color))
    assert g.piece_at(START).name == name
    moves = list(g.moves_from(START))
    for m in moves:
        assert m.from_square == START
        assert list(m.captures) == [], f"{m.notation}: a capture on an empty board"
        assert not m.promotes, f"{m.notation}: a promotion without a capture"
    keys = [(m.to_square, tuple(m.captures)) for m in moves]
    assert len(keys) == len(set(keys)), f"{name}: a move is generated twice"
    passes = [m for m in moves if m.to_square == START]
    if name in LION_LIKE:
        assert len(passes) == 1 and passes[0].is_pass, f"{name}: one pass expected, got {passes}"
    else:
        assert passes == []
    got = {m.to_square for m in moves} - {START}
    if name in HOOK_DESTINATIONS:
        expected = HOOK_DESTINATIONS[name][1]
    else:
        expected = diagram_destinations(DIAGRAMS[name][1], START, color)
    assert got == expected, (
        f"{name} ({color}), seed {(DIAGRAMS.get(name) or HOOK_DESTINATIONS[name])[0]}: "
        f"missing {sorted(expected - got)}, extra {sorted(got - expected)}"
    )


def test_diagram_reader_orientation():
    """The diagram reader itself: Black's forward is rank a, its left is the higher file."""
    assert diagram_destinations("○\n?", "9i", "black") == {"9h"}
    assert diagram_destinations("○\n?", "9i", "white") == {"9j"}
    assert diagram_destinations("○ ?", "9i", "black") == {"10i"}
    assert diagram_destinations("○ ?", "9i", "white") == {"8i"}
    assert diagram_destinations("│\n?", "9c", "black") == {"9b", "9a"}


# --------------------------------------------------------------------------------------------
# blocking and capturing, per movement category (L85-L97)
# --------------------------------------------------------------------------------------------


def test_step_blocked_by_friend_captures_foe():
    """L89: a friendly piece on the square stops a step; an enemy is captured."""
    g = make_game(("9i", "Gold general", "black"), ("9h", "Pawn", "black"), ("8h", "Pawn", "white"))
    assert destinations(g, "9i") == {"10h", "8h", "10i", "8i", "9j"}
    assert [list(m.captures) for m in moves_to(g, "9i", "8h")] == [["8h"]]


def test_limited_range_stops_at_pieces():
    """L90: limited range moves like a ranging piece; the violent ox goes 1-2 squares (L1156)."""
    g = make_game(
        ("9i", "Violent ox", "black"),
        ("9h", "Pawn", "black"),  # forward: blocked at once
        ("10i", "Pawn", "white"),  # left: captured, not passed
    )
    assert destinations(g, "9i") == {"10i", "8i", "7i", "9j", "9k"}
    # the she-devil's five squares (L786) end at the first piece
    g = make_game(("9i", "She-devil", "black"), ("9e", "Pawn", "white"), ("6i", "Pawn", "black"))
    got = destinations(g, "9i")
    assert {"9h", "9g", "9f", "9e"} <= got and "9d" not in got
    assert {"8i", "7i"} <= got and "6i" not in got and "5i" not in got
    assert {"9j", "9k", "9l", "9m", "9n"} <= got and "9o" not in got


def test_ranging_blocked_and_capturing():
    """L92: a ranging piece stops short of a friend, and stops where it captures."""
    g = make_game(("9i", "Rook", "black"), ("9e", "Pawn", "black"), ("5i", "Pawn", "white"))
    expected = (
        {"9h", "9g", "9f"}  # forward, short of the friend on 9e
        | {"8i", "7i", "6i", "5i"}  # right, up to the enemy on 5i
        | {sq(f, 9) for f in range(10, 18)}  # left, to the edge
        | {sq(9, r) for r in range(10, 18)}  # backward, to the edge
    )
    assert destinations(g, "9i") == expected
    assert [list(m.captures) for m in moves_to(g, "9i", "5i")] == [["5i"]]


def test_jumps_pass_over_any_piece():
    """L91: the kirin jumps to the second square orthogonally over friend or foe (L1003)."""
    g = make_game(
        ("9i", "Kirin", "black"),
        ("9h", "Pawn", "black"),  # jumped over
        ("9g", "Pawn", "white"),  # captured by the jump
        ("11i", "Pawn", "black"),  # a friend on the landing square: no jump left
        ("8i", "Pawn", "white"),  # jumped over (and out of reach of the diagonal steps)
        ("8h", "Pawn", "white"),  # a diagonal step captures it
    )
    assert destinations(g, "9i") == {"9g", "9k", "7i", "10h", "8h", "10j", "8j"}
    # the poisonous snake's jump forward and diagonally backward (L215)
    g = make_game(("9i", "Poisonous snake", "black"), ("9h", "Pawn", "white"), ("10j", "Pawn", "black"))
    assert destinations(g, "9i") == {"9g", "10i", "8i", "11k", "7k"}


def test_hook_mover_turns_once_and_stops_on_capture():
    """L95-L97: range, one optional 90-degree turn, range on; stop before a friend, stop on a capture."""
    g = make_game(
        ("9i", "Hook mover", "black"),
        ("10i", "Pawn", "black"),
        ("8i", "Pawn", "black"),
        ("9j", "Pawn", "black"),  # only forward is open
        ("9e", "Pawn", "white"),  # captured, and the move ends there: no turn at 9e, nothing beyond
        ("6g", "Pawn", "black"),  # stops the turn to the right at 9g before 6g
        ("12h", "Pawn", "white"),  # the turn to the left at 9h captures it and stops
    )
    left = lambda rank, last: {sq(f, rank) for f in range(10, last + 1)}  # noqa: E731
    right = lambda rank, last: {sq(f, rank) for f in range(last, 9)}  # noqa: E731
    expected = (
        {"9h", "9g", "9f", "9e"}
        | left(8, 12)
        | right(8, 1)  # turn at 9h
        | left(7, 17)
        | right(7, 7)  # turn at 9g
        | left(6, 17)
        | right(6, 1)  # turn at 9f
    )
    assert destinations(g, "9i") == expected
    assert "9d" not in expected and "10e" not in expected


def test_long_nosed_goblin_turns_on_the_diagonals():
    """L165-L167: the tengu's hook move is diagonal; it also steps orthogonally."""
    g = make_game(
        ("9i", "Long-nosed goblin", "black"),
        ("8h", "Pawn", "black"),
        ("10j", "Pawn", "black"),
        ("8j", "Pawn", "black"),  # only the forward-left diagonal is open
        ("12f", "Pawn", "white"),  # captured on the third square; the move ends there
        ("8d", "Pawn", "black"),  # stops the turn made at 11g
    )
    expected = (
        {"9h", "10i", "8i", "9j"}  # the orthogonal steps
        | {"10h", "11g", "12f"}  # the forward-left diagonal, up to the capture
        | {"9g", "8f", "7e", "6d", "5c", "4b", "3a"}  # turn at 10h, forward-right
        | {"11i", "12j", "13k", "14l", "15m", "16n", "17o"}  # turn at 10h, backward-left
        | {"10f", "9e"}  # turn at 11g, forward-right, short of 8d
        | {"12h", "13i", "14j", "15k", "16l", "17m"}  # turn at 11g, backward-left
    )
    assert destinations(g, "9i") == expected


# ---- the lion (L346-L350) ----


def test_lion_with_one_enemy_beside_it():
    """Every lion move with a white pawn on 9h and nothing else near: 33 moves."""
    g = make_game(("9i", "Lion", "black"), ("9h", "Pawn", "white"))
    five_by_five = {sq(f, r) for f in range(7, 12) for r in range(7, 12)} - {"9i", "9h"}
    expected = (
        {k(s) for s in five_by_five}  # 23 plain steps and jumps to the empty squares
        | {k("9h", "9h")}  # capture by a step
        | {k("9i", "9h")}  # igui: capture 9h and return (L347)
        | {k("9i")}  # pass (L348)
        # capture 9h, then a second step to another neighbour of 9h (L346)
        | {k(s, "9h") for s in ("10g", "9g", "8g", "10h", "8h", "10i", "8i")}
    )
    got = list(g.moves_from("9i"))
    assert move_keys(g, "9i") == expected
    assert len(got) == 33 == len(expected)


def test_lion_double_capture_jump_and_friends():
    g = make_game(
        ("9i", "Lion", "black"),
        ("9h", "Pawn", "white"),
        ("9g", "Pawn", "white"),
        ("8h", "Pawn", "black"),
    )
    got = move_keys(g, "9i")
    assert k("9g", "9h", "9g") in got  # two captures in one move
    assert k("9g", "9g") in got  # a jump over 9h
    assert k("9i", "9h") in got  # igui
    assert k("9i") in got  # pass through an empty neighbour
    assert k("7g") in got  # a jump over the friend on 8h
    assert not any(to == "8h" or "8h" in caps for to, caps in got)  # never on or over a friend by capture


# ---- the lion dog (L315-L320; docs/RULES.md, Dai dai "Movement", "Lion dog") ----


def test_lion_dog_worked_example_three_enemies_in_a_line():
    """docs/RULES.md, Dai dai "Movement", "Lion dog" (its example): white pawns on 9h, 9g, 9f in
    front of a black lion dog on 9i: 30 moves."""
    g = make_game(("9i", "Lion dog", "black"), *pawns("white", "9h", "9g", "9f"))
    forward = {
        k("9h", "9h"),  # step and capture
        k("9g", "9g"),  # jump to the second square
        k("9f", "9f"),  # jump to the third square (L318)
        k("9i", "9h"),  # igui (L317)
        k("9g", "9h", "9g"),  # two steps, two captures
        k("9h", "9h", "9g"),  # out two, back to the first square (L317)
        k("9f", "9g", "9f"),  # jump to the second, on to the third (L318)
        k("9f", "9h", "9g", "9f"),  # three steps, three captures (L316)
    }
    plain = {k(s) for line in OTHER_SEVEN_LINES_FROM_9I.values() for s in line}
    expected = forward | plain | {k("9i")}  # and one pass
    moves = list(g.moves_from("9i"))
    assert move_keys(g, "9i") == expected
    assert len(moves) == 30 == len(expected)
    assert not any(m.to_square == "9e" for m in moves)  # three steps at most


def test_lion_dog_worked_example_for_white():
    """The same position turned by 180 degrees: White's forward is towards rank q."""
    g = make_game(("9i", "Lion dog", "white"), *pawns("black", "9j", "9k", "9l"), to_move="white")
    forward = {
        k("9j", "9j"),
        k("9k", "9k"),
        k("9l", "9l"),
        k("9i", "9j"),
        k("9k", "9j", "9k"),
        k("9j", "9j", "9k"),
        k("9l", "9k", "9l"),
        k("9l", "9j", "9k", "9l"),
    }
    plain = {k(rotated(s)) for line in OTHER_SEVEN_LINES_FROM_9I.values() for s in line}
    assert move_keys(g, "9i") == forward | plain | {k("9i")}


def test_lion_dog_in_the_corner():
    """On 1a (Black's forward-right corner) only three of its lines are on the board."""
    g = make_game(("1a", "Lion dog", "black"), ("2a", "Pawn", "white"))
    assert move_keys(g, "1a") == {
        k("1b"),
        k("1c"),
        k("1d"),  # backward
        k("2b"),
        k("3c"),
        k("4d"),  # backward-left
        # left, a white pawn on 2a: capture, jumps, igui, capture and go on one or two squares
        k("2a", "2a"),
        k("3a"),
        k("4a"),
        k("1a", "2a"),
        k("3a", "2a"),
        k("4a", "2a"),
        k("1a"),  # pass
    }
    assert len(list(g.moves_from("1a"))) == 13


@pytest.mark.parametrize("color", ["black", "white"])
def test_multi_capture_notation_and_actions_round_trip(color):
    """Every lion dog and furious fiend move of the worked example prints a notation and an action
    that both lead back to the same move (the triple capture is written LDx9hx9gx9f+)."""
    enemy = "white" if color == "black" else "black"
    for name in ("Lion dog", "Furious fiend"):
        line = ["9h", "9g", "9f"] if color == "black" else ["9j", "9k", "9l"]
        g = make_game(
            ("9i", name, color), *pawns(enemy, *line), ("1q", "King", "black"), ("17a", "King", "white"), to_move=color
        )
        moves = [m for m in g.legal_moves() if m.from_square == "9i"]
        assert moves
        actions = set(int(a) for a in g.legal_actions())
        for m in moves:
            h = g.clone()
            played = h.play(m.notation)
            same = (played.to_square, sorted(played.captures)) == (m.to_square, sorted(m.captures))
            assert same, m.notation
            action = g.action_of(m)
            assert action in actions
            assert g.move_of(action) == m, m.notation
    if color == "black":
        g = make_game(("9i", "Lion dog", "black"), *pawns("white", "9h", "9g", "9f"))
        (triple,) = moves_to(g, "9i", "9f", captures=["9h", "9g", "9f"])
        assert triple.notation == "LDx9hx9gx9f+"


def test_lion_dog_friend_on_the_first_square():
    """A friend is never landed on or captured (docs/RULES.md, Dai dai "Lion dog"): a black pawn on
    9h, a white one on 9g: no igui and no pass through 9h."""
    g = make_game(("9i", "Lion dog", "black"), ("9h", "Pawn", "black"), ("9g", "Pawn", "white"))
    forward = {k("9g", "9g"), k("9f"), k("9f", "9g")}
    plain = {k(s) for line in OTHER_SEVEN_LINES_FROM_9I.values() for s in line}
    assert move_keys(g, "9i") == forward | plain | {k("9i")}
    assert len(list(g.moves_from("9i"))) == 25


def test_lion_dog_cannot_capture_first_and_jump_a_friend():
    """Enemy 9h, friend 9g, enemy 9f: the seed's list has no 'capture s1, jump to s3' (Taishin's)."""
    g = make_game(("9i", "Lion dog", "black"), *pawns("white", "9h", "9f"), ("9g", "Pawn", "black"))
    got = move_keys(g, "9i")
    assert {k("9h", "9h"), k("9i", "9h"), k("9f", "9f")} <= got
    assert k("9f", "9h", "9f") not in got
    assert not any("9g" in caps or to == "9g" for to, caps in got)  # a friend is never captured


def test_lion_dog_stays_on_one_line():
    """L315, L317: no in-between squares (knight or off-line squares), no turning after a capture."""
    g = make_game(("9i", "Lion dog", "black"), ("9h", "Pawn", "white"))
    got = move_keys(g, "9i")
    assert not any(to in {"8g", "10g", "7h", "11h"} for to, _ in got)
    assert not any(caps == {"9h"} and to not in {"9h", "9i", "9g", "9f"} for to, caps in got)


def test_lion_dog_igui_promotes_to_great_elephant():
    """L320: it promotes as it finishes a capturing move; igui is one."""
    g = make_game(("9i", "Lion dog", "black"), ("9h", "Pawn", "white"))
    m = play(g, "9i", "9i", captures=["9h"])
    assert m.is_igui and m.promotes
    assert g.piece_at("9h") is None
    piece = g.piece_at("9i")
    assert (piece.name, piece.promoted, piece.abbrev) == ("Great elephant", True, "+LD")


def test_lion_dog_triple_capture_promotes_once():
    g = make_game(("9i", "Lion dog", "black"), *pawns("white", "9h", "9g", "9f"))
    m = play(g, "9i", "9f", captures=["9h", "9g", "9f"])
    assert m.promotes
    assert sorted(m.captures) == ["9f", "9g", "9h"]
    assert [s for s, _ in g.pieces()] == ["9f"]
    assert g.piece_at("9f").name == "Great elephant"


# ---- the great elephant (L249-L251) and furious fiend (L286) ----


def test_great_elephant_lion_dog_move_only_on_its_six_lines():
    """Lion-dog move along the orthogonals and backward diagonals; 1-2 squares diagonally forward."""
    g = make_game(
        ("9i", "Great elephant", "black"),
        ("8h", "Pawn", "white"),  # forward-right: limited range, no lion power
        ("7g", "Pawn", "white"),
        ("9h", "Pawn", "white"),  # forward: lion-dog move
        ("9g", "Pawn", "white"),
        ("10j", "Pawn", "white"),  # backward-left: lion-dog move
        ("11k", "Pawn", "white"),
    )
    got = move_keys(g, "9i")
    fr = {(to, caps) for to, caps in got if to in {"8h", "7g", "6f"} or caps & {"8h", "7g"}}
    assert fr == {k("8h", "8h")}  # capture 8h and stop: no jump, no igui, no double capture
    assert {k("9g", "9h", "9g"), k("9i", "9h"), k("9g", "9g"), k("9f", "9g")} <= got
    assert {k("11k", "10j", "11k"), k("9i", "10j"), k("12l")} <= got
    # beyond three squares it ranges: left along rank i to the edge
    assert {k(sq(f, 9)) for f in range(10, 18)} <= got


def test_great_elephant_ranges_beyond_the_lion_dog_squares():
    g = make_game(("9i", "Great elephant", "black"), ("9c", "Pawn", "white"), ("9b", "Pawn", "white"))
    got = move_keys(g, "9i")
    assert {k("9h"), k("9g"), k("9f"), k("9e"), k("9d"), k("9c", "9c")} <= got
    assert not any(to in {"9b", "9a"} for to, _ in got)


def test_furious_fiend_is_lion_plus_lion_dog():
    g = make_game(("9i", "Furious fiend", "black"), *pawns("white", "9h", "9g", "9f"))
    moves = list(g.moves_from("9i"))
    keys = [(m.to_square, frozenset(m.captures)) for m in moves]
    assert len(keys) == len(set(keys)), "a lion move and a lion-dog move generated twice"
    got = set(keys)
    assert k("9f", "9h", "9g", "9f") in got  # lion dog: three captures
    assert k("8g", "9h") in got  # lion: capture 9h, then turn aside
    assert k("8g") in got  # lion: the knight-like jump
    assert k("6f") in got and k("12l") in got  # lion dog: the third square diagonally
    assert k("9i", "9h") in got and k("9i") in got  # igui and pass


# --------------------------------------------------------------------------------------------
# lion-type moves against a reference written from the seed (random positions)
# --------------------------------------------------------------------------------------------


class Board:
    """Pieces around a mover: square -> "own" / "enemy"; off-board squares are None."""

    def __init__(self, pieces):
        self.pieces = pieces

    def ok(self, p):  # may be landed on: on the board and not a friend
        return p is not None and self.pieces.get(p) != "own"

    def caps(self, *squares):
        return frozenset(p for p in squares if self.pieces.get(p) == "enemy")


def ref_lionline(board, s0, color, dirs):
    """The lion dog's move along each line (L315-L319; docs/PIECE_TABLE.md, `lionline(D,n,n)`)."""
    sign = 1 if color == "black" else -1
    out = set()
    for d in dirs:
        dx, dy = (sign * c for c in STEPS[d])
        s1, s2, s3 = (on_board_or_none(s0[0] + i * dx, s0[1] + i * dy) for i in (1, 2, 3))
        ok, caps = board.ok, board.caps
        for s in (s1, s2, s3):  # a step to s1, jumps to s2 and s3
            if ok(s):
                out.add((s, caps(s)))
        if ok(s1):
            out.add((s0, caps(s1)))  # igui, or a pass through an empty s1
        if ok(s1) and ok(s2):
            out.add((s2, caps(s1, s2)))  # two steps
            out.add((s1, caps(s1, s2)))  # out two, back to the first square
        if ok(s2) and ok(s3):
            out.add((s3, caps(s2, s3)))  # jump to s2, step to s3
        if ok(s1) and ok(s2) and ok(s3):
            out.add((s3, caps(s1, s2, s3)))  # three steps
    return out


def ref_lion(board, s0):
    """The lion (L346-L349): any square within two; two king steps, capturing on each."""
    out = set()
    near = [(dx, dy) for dx in (-2, -1, 0, 1, 2) for dy in (-2, -1, 0, 1, 2) if (dx, dy) != (0, 0)]
    for dx, dy in near:
        p = on_board_or_none(s0[0] + dx, s0[1] + dy)
        if board.ok(p):
            out.add((p, board.caps(p)))
        if max(abs(dx), abs(dy)) == 1 and board.ok(p):
            for ex, ey in near:
                if max(abs(ex), abs(ey)) == 1:
                    q = on_board_or_none(p[0] + ex, p[1] + ey)
                    if q == s0 or board.ok(q):
                        out.add((q, board.caps(p, q)))
    return out


def ref_range(board, s0, color, dirs, limit=SIZE):
    sign = 1 if color == "black" else -1
    out = set()
    for d in dirs:
        dx, dy = (sign * c for c in STEPS[d])
        for i in range(1, limit + 1):
            p = on_board_or_none(s0[0] + i * dx, s0[1] + i * dy)
            if not board.ok(p):
                break
            out.add((p, board.caps(p)))
            if board.caps(p):
                break
    return out


LION_REFERENCES = {
    "Lion dog": lambda b, s0, c: ref_lionline(b, s0, c, STEPS),
    "Furious fiend": lambda b, s0, c: ref_lion(b, s0) | ref_lionline(b, s0, c, STEPS),
    "Great elephant": lambda b, s0, c: (
        ref_lionline(b, s0, c, ["f", "b", "l", "r", "bl", "br"])
        | ref_range(b, s0, c, ["f", "b", "l", "r", "bl", "br"])
        | ref_range(b, s0, c, ["fl", "fr"], 2)
    ),
    "Lion": lambda b, s0, c: ref_lion(b, s0),
}


@pytest.mark.parametrize("name", sorted(LION_REFERENCES))
def test_lion_type_moves_match_the_reference(name):
    """200 random positions each: the piece anywhere (edges too), for either side, with up to 14
    pawns of both colours within three squares. Every move once; exactly the reference's moves."""
    rng = random.Random(f"daidai-{name}")
    for _ in range(200):
        color = rng.choice(["black", "white"])
        enemy = "white" if color == "black" else "black"
        s0 = (rng.randint(1, SIZE), rng.randint(1, SIZE))
        g = make_game((sq(*s0), name, color), to_move=color)
        pieces = {}
        for _ in range(rng.randint(0, 14)):
            p = on_board_or_none(s0[0] + rng.randint(-3, 3), s0[1] + rng.randint(-3, 3))
            if p is None or p == s0 or p in pieces:
                continue
            pieces[p] = "own" if rng.random() < 0.4 else "enemy"
            g.place(sq(*p), "Pawn", color if pieces[p] == "own" else enemy)
        expected = {
            (sq(*to), frozenset(sq(*c) for c in caps)) for to, caps in LION_REFERENCES[name](Board(pieces), s0, color)
        }
        moves = [(m.to_square, frozenset(m.captures)) for m in g.moves_from(sq(*s0))]
        where = f"{name} ({color}) on {sq(*s0)}, pieces { {sq(*p): v for p, v in pieces.items()} }"
        assert len(moves) == len(set(moves)), f"{where}: a move generated twice"
        got = set(moves)
        assert got == expected, (
            f"{where}: missing {sorted((t, sorted(c)) for t, c in expected - got)}, "
            f"extra {sorted((t, sorted(c)) for t, c in got - expected)}"
        )


# --------------------------------------------------------------------------------------------
# forward-only pieces on the far rank (L82, L86): no move, no special rule needed
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["Pawn", "Lance", "Stone general", "Wood general", "Iron general"])
def test_forward_only_pieces_cannot_move_on_the_far_rank(name):
    g = make_game(("9a", name, "black"), *pawns("white", "8b", "10b", "9b"))
    assert list(g.moves_from("9a")) == []
    g = make_game(("9q", name, "white"), ("8p", "Pawn", "black"), ("10p", "Pawn", "black"))
    assert list(g.moves_from("9q")) == []
    g = make_game(("9b", name, "black"))
    assert destinations(g, "9b") & {"8a", "9a", "10a"}  # one rank short it still moves


# --------------------------------------------------------------------------------------------
# promotion by capture (L77-L81)
# --------------------------------------------------------------------------------------------

# promoting piece -> (what it promotes to, seed line, an enemy square it can capture from 9i)
PROMOTIONS = {
    "Old kite": ("Long-nosed goblin", "L208", "9h"),
    "Poisonous snake": ("Hook mover", "L217", "9g"),
    "Lion dog": ("Great elephant", "L320", "9h"),
    "Lion": ("Furious fiend", "L350", "9h"),
    "Western barbarian": ("Lion dog", "L364", "9h"),
    "Eastern barbarian": ("Lion", "L376", "9h"),
    "Northern barbarian": ("Fragrant elephant", "L434", "8h"),
    "Southern barbarian": ("White elephant", "L446", "8h"),
    "Water buffalo": ("Free dream-eater", "L562", "7g"),
    "Rushing bird": ("Free demon", "L586", "9d"),
    "Flying horse": ("Queen", "L650", "8h"),
    "Neighboring king": ("Standard bearer", "L661", "9h"),
    "Blind monkey": ("Mountain witch", "L714", "8h"),
    "Old rat": ("Wizard stork", "L723", "9k"),
    "Enchanted badger": ("Dove", "L798", "9g"),
    "Enchanted fox": ("She-devil", "L807", "7g"),
    "Cat sword": ("Dragon horse", "L859", "10j"),
    "Flying dragon": ("Dragon king", "L871", "11k"),
    "Prancing stag": ("Square mover", "L924", "7i"),
    "Phoenix": ("Golden bird", "L992", "9j"),
    "Kirin": ("Great dragon", "L1005", "9g"),
}


def test_promoting_types_match_the_table():
    """21 of the 64 set-up types promote (L78), each to the piece its entry names."""
    table = {t.name: t.promotes_to for t in taikyoku.piece_types(VARIANT) if t.promotes_to}
    assert table == {name: promoted for name, (promoted, _, _) in PROMOTIONS.items()}


@pytest.mark.parametrize("name", sorted(PROMOTIONS))
def test_capture_promotes(name):
    promoted, line, target = PROMOTIONS[name]
    g = make_game(("9i", name, "black"), (target, "Pawn", "white"))
    plain = [m for m in g.moves_from("9i") if not m.captures]
    assert plain and not any(m.promotes for m in plain), "a move without capture promotes"
    m = play(g, "9i", target, captures=[target])
    assert m.promotes, f"{name} x{target} does not promote ({line})"
    assert m.notation.endswith("+")
    piece = g.piece_at(target)
    assert (piece.name, piece.promoted, piece.color) == (promoted, True, "black"), line
    assert piece.abbrev.startswith("+")  # written with its original code (L1286)


def test_non_promoting_piece_does_not_change():
    g = make_game(("9i", "Queen", "black"), ("9c", "Pawn", "white"))
    m = play(g, "9i", "9c")
    assert not m.promotes and not m.notation.endswith("+")
    assert (g.piece_at("9c").name, g.piece_at("9c").promoted) == ("Queen", False)


def test_eastern_barbarian_becomes_a_lion_but_not_a_furious_fiend():
    """L81: a promoted piece does not promote again, though its namesake would."""
    g = make_game(
        ("9i", "Eastern barbarian", "black"),
        ("9h", "Pawn", "white"),
        ("8g", "Pawn", "white"),
        ("1a", "Gold general", "white"),
    )
    first = play(g, "9i", "9h", captures=["9h"])
    assert first.promotes
    lion = g.piece_at("9h")
    assert (lion.name, lion.promoted, lion.kind, lion.origin) == ("Lion", True, "LN", "EBR")
    play(g, "1a", "1b")  # White's move
    second = play(g, "9h", "8g", captures=["8g"])
    assert not second.promotes
    still = g.piece_at("8g")
    assert (still.name, still.promoted, still.origin) == ("Lion", True, "EBR")


def test_set_up_lion_promotes_and_furious_fiend_stays():
    g = make_game(("9i", "Lion", "black"), *pawns("white", "9h", "9g"), ("1a", "Gold general", "white"))
    assert play(g, "9i", "9h", captures=["9h"]).promotes
    assert g.piece_at("9h").name == "Furious fiend"
    play(g, "1a", "1b")
    assert not play(g, "9h", "9g", captures=["9g"]).promotes
    assert g.piece_at("9g").name == "Furious fiend"


@pytest.mark.parametrize("name", ["Furious fiend", "Great elephant", "Mountain witch", "Wizard stork"])
def test_promoted_only_pieces_do_not_promote(name):
    g = make_game(("9i", name, "black"), ("9j", "Pawn", "white"))  # each can capture straight back
    assert g.piece_at("9i").promoted
    (m,) = moves_to(g, "9i", "9j", captures=["9j"])
    assert not m.promotes
    g.play(m)
    assert g.piece_at("9j").name == name


def test_placed_promoted_piece_does_not_promote_again():
    g = make_game(("9i", "EBR", "black", True), ("9h", "Pawn", "white"))
    assert g.piece_at("9i").name == "Lion" and g.piece_at("9i").abbrev == "+EBR"
    assert not play(g, "9i", "9h", captures=["9h"]).promotes
    assert g.piece_at("9h").name == "Lion"


def test_lion_double_capture_promotes_at_the_end():
    """L346: the piece promotes only when its turn ends, so an unpromoted lion captures twice."""
    g = make_game(("9i", "Lion", "black"), ("9h", "Pawn", "white"), ("9g", "Pawn", "white"))
    m = play(g, "9i", "9g", captures=["9h", "9g"])
    assert m.promotes
    assert [s for s, _ in g.pieces()] == ["9g"] and g.piece_at("9g").name == "Furious fiend"


def test_notation_examples_of_the_seed():
    """L1288: "CSx7c+" (a cat sword capturing on 7c and promoting); L1286: "+BM" (mountain witch)."""
    g = make_game(("8d", "Cat sword", "black"), ("7c", "Pawn", "white"))
    (m,) = moves_to(g, "8d", "7c")
    assert m.notation == "CSx7c+"
    g.play("CSx7c+")
    assert g.piece_at("7c").abbrev == "+CS"
    assert make_game(("9i", "Mountain witch", "black")).piece_at("9i").abbrev == "+BM"


# --------------------------------------------------------------------------------------------
# the setup (the reference setup of docs/RULES.md, "Dai dai shogi"; counts L4-L68)
# --------------------------------------------------------------------------------------------

# Black's ranks as Black sees them, rank 1 = its back rank, files a..q from its left (a = file 17).
REFERENCE_SETUP = {
    1: "L   LNG SD  RAC DH  FDM Q   LG  K   RG  FDE DK  SQM R   DV  HM  L",
    2: "RV  OK  LN  OR  PST CS  PH  G   NK  G   KR  RB  FD  BM  LD  PS  RV",
    3: ".   VM  .   EF  .   WB  .   S   GD  S   .   FH  .   EB  .   B   .",
    4: "BD  FE  NBR WBR WG  SG  I   C   GBD C   I   SG  WG  EBR SBR WE  WT",
    5: "LCH SM  VO  AB  EW  VB  FL  ST  STB ST  FL  VB  EW  AB  VO  SM  RCH",
    6: "P   P   P   P   P   P   P   P   P   P   P   P   P   P   P   P   P",
    7: ".   .   .   .   .   HD  .   .   .   .   .   HD  .   .   .   .   .",
    8: ".   .   .   .   .   .   .   .   .   .   .   .   .   .   .   .   .",
}
REFERENCE_LEGEND = {
    "K": "King",
    "Q": "Queen",
    "RB": "Rushing bird",
    "FDM": "Free demon",
    "FDE": "Free dream-eater",
    "WB": "Water buffalo",
    "DK": "Dragon king",
    "DH": "Dragon horse",
    "SQM": "Square mover",
    "RAC": "Racing chariot",
    "R": "Rook",
    "B": "Bishop",
    "GBD": "Golden bird",
    "GD": "Great dragon",
    "STB": "Standard bearer",
    "FE": "Fragrant elephant",
    "WE": "White elephant",
    "LN": "Lion",
    "LD": "Lion dog",
    "DV": "Dove",
    "SD": "She-devil",
    "BD": "Blue dragon",
    "WT": "White tiger",
    "RCH": "Right chariot",
    "LCH": "Left chariot",
    "PH": "Phoenix",
    "KR": "Kirin",
    "PS": "Poisonous snake",
    "OK": "Old kite",
    "VO": "Violent ox",
    "FD": "Flying dragon",
    "EF": "Enchanted fox",
    "OR": "Old rat",
    "EB": "Enchanted badger",
    "FH": "Flying horse",
    "PST": "Prancing stag",
    "ST": "Savage tiger",
    "HM": "Hook mover",
    "LNG": "Long-nosed goblin",
    "NBR": "Northern barbarian",
    "SBR": "Southern barbarian",
    "EBR": "Eastern barbarian",
    "WBR": "Western barbarian",
    "NK": "Neighboring king",
    "BM": "Blind monkey",
    "FL": "Ferocious leopard",
    "EW": "Evil wolf",
    "VB": "Violent bear",
    "RG": "Right general",
    "LG": "Left general",
    "G": "Gold general",
    "S": "Silver general",
    "C": "Copper general",
    "I": "Iron general",
    "WG": "Wood general",
    "SG": "Stone general",
    "AB": "Angry boar",
    "CS": "Cat sword",
    "RV": "Reverse chariot",
    "L": "Lance",
    "SM": "Side mover",
    "VM": "Vertical mover",
    "HD": "Howling dog",
    "P": "Pawn",
}
# The seed's list, L5-L68 (one side).
SEED_COUNTS = {
    "King": 1,
    "Queen": 1,
    "Rushing bird": 1,
    "Free demon": 1,
    "Free dream-eater": 1,
    "Water buffalo": 1,
    "Dragon king": 1,
    "Dragon horse": 1,
    "Square mover": 1,
    "Racing chariot": 1,
    "Rook": 1,
    "Bishop": 1,
    "Golden bird": 1,
    "Great dragon": 1,
    "Standard bearer": 1,
    "Fragrant elephant": 1,
    "White elephant": 1,
    "Lion": 1,
    "Lion dog": 1,
    "Dove": 1,
    "She-devil": 1,
    "Blue dragon": 1,
    "White tiger": 1,
    "Right chariot": 1,
    "Left chariot": 1,
    "Phoenix": 1,
    "Kirin": 1,
    "Poisonous snake": 1,
    "Old kite": 1,
    "Violent ox": 2,
    "Flying dragon": 1,
    "Enchanted fox": 1,
    "Old rat": 1,
    "Enchanted badger": 1,
    "Flying horse": 1,
    "Prancing stag": 1,
    "Savage tiger": 2,
    "Hook mover": 1,
    "Long-nosed goblin": 1,
    "Northern barbarian": 1,
    "Southern barbarian": 1,
    "Eastern barbarian": 1,
    "Western barbarian": 1,
    "Neighboring king": 1,
    "Blind monkey": 1,
    "Ferocious leopard": 2,
    "Evil wolf": 2,
    "Violent bear": 2,
    "Right general": 1,
    "Left general": 1,
    "Gold general": 2,
    "Silver general": 2,
    "Copper general": 2,
    "Iron general": 2,
    "Wood general": 2,
    "Stone general": 2,
    "Angry boar": 2,
    "Cat sword": 1,
    "Reverse chariot": 2,
    "Lance": 2,
    "Side mover": 2,
    "Vertical mover": 1,
    "Howling dog": 2,
    "Pawn": 17,
}


black_square, rotated = BOARD.black_square, BOARD.rotated
start_game = BOARD.start_game_fixture()


def test_board_and_piece_count(start_game):
    g = start_game
    assert (g.width, g.height) == (17, 17)  # L3
    assert g.side_to_move == "black"  # L77
    pieces = g.pieces()
    assert len(pieces) == 192
    for color in ("black", "white"):
        mine = [p for _, p in pieces if p.color == color]
        assert len(mine) == 96  # L4
        assert len({p.name for p in mine}) == 64
        counts = {}
        for p in mine:
            counts[p.name] = counts.get(p.name, 0) + 1
        assert counts == SEED_COUNTS
        assert not any(p.promoted for p in mine)
    assert g.piece_at("9q").name == "King" and g.piece_at("9q").color == "black"
    assert g.piece_at("9a").name == "King" and g.piece_at("9a").color == "white"


@pytest.mark.parametrize("own_rank", sorted(REFERENCE_SETUP), ids=lambda r: f"rank{r}")
def test_setup_rank_matches_reference(start_game, own_rank):
    codes = REFERENCE_SETUP[own_rank].split()
    assert len(codes) == 17
    for i, code in enumerate(codes):
        black_sq = black_square(i, own_rank)
        white_sq = rotated(black_sq)  # White = Black turned by 180 degrees (L76)
        for square, color in ((black_sq, "black"), (white_sq, "white")):
            piece = start_game.piece_at(square)
            if code == ".":
                assert piece is None, f"{square} should be empty, holds {piece}"
            else:
                assert piece is not None, f"{square}: {REFERENCE_LEGEND[code]} missing"
                assert (piece.name, piece.color) == (REFERENCE_LEGEND[code], color), square


def test_middle_rank_is_empty(start_game):
    assert all(start_game.piece_at(sq(f, 9)) is None for f in range(1, 18))


def test_promoting_pieces_stand_on_ranks_two_to_four(start_game):
    """L83: "The promoting pieces appear on the 2nd, 3rd, and 4th ranks" (both sides)."""
    promoting = set(PROMOTIONS)
    for square, piece in start_game.pieces():
        if piece.name in promoting:
            own_rank = SIZE + 1 - parse_sq(square)[1] if piece.color == "black" else parse_sq(square)[1]
            assert own_rank in (2, 3, 4), (square, piece.name)


# --------------------------------------------------------------------------------------------
# repetition (L1278): a move may not recreate a position with the same player to move
# --------------------------------------------------------------------------------------------


def legal(g):
    return {(m.from_square, m.to_square, frozenset(m.captures)) for m in g.legal_moves()}


def play_legal(g, frm, to):
    (m,) = [m for m in g.legal_moves() if (m.from_square, m.to_square) == (frm, to) and not m.captures]
    g.play(m)


def test_repeating_the_start_position_is_not_legal(start_game):
    """From the set-up position: howling dogs out and back; White may not complete the cycle."""
    g = start_game.clone()
    play_legal(g, "12k", "12j")  # Black's left howling dog forward (L1135)
    play_legal(g, "6g", "6h")  # White's
    play_legal(g, "12j", "12k")  # back: a new position (White to move)
    assert ("6h", "6g", frozenset()) not in legal(g)  # would recreate the start, Black to move
    assert ("6h", "6i", frozenset()) in legal(g)
    assert not g.is_over


def test_repetition_of_an_earlier_position_not_only_the_last():
    g = make_game(("9q", "King", "black"), ("9a", "King", "white"))
    play_legal(g, "9q", "9p")
    play_legal(g, "9a", "9b")  # position X: K 9p, k 9b, Black to move
    play_legal(g, "9p", "9o")
    play_legal(g, "9b", "9c")
    play_legal(g, "9o", "9p")
    assert ("9c", "9b", frozenset()) not in legal(g)  # would recreate X
    assert ("9c", "9d", frozenset()) in legal(g)
    play_legal(g, "9c", "9d")
    assert ("9p", "9q", frozenset()) in legal(g)  # K 9q, k 9d: never seen


def test_after_an_edit_the_placed_position_counts():
    g = make_game(("9q", "King", "black"), ("9a", "King", "white"))
    play_legal(g, "9q", "9p")
    play_legal(g, "9a", "9b")
    play_legal(g, "9p", "9q")
    assert ("9b", "9a", frozenset()) not in legal(g)


def test_two_consecutive_passes_are_impossible():
    """L1278: a pass is legal, but the second of two consecutive passes repeats the position."""
    g = make_game(
        ("9q", "King", "black"), ("9i", "Lion", "black"), ("9a", "King", "white"), ("5c", "Lion dog", "white")
    )
    black_passes = [m for m in g.legal_moves() if m.is_pass]
    assert len(black_passes) == 1
    g.play(black_passes[0])
    assert g.side_to_move == "white"
    white = g.legal_moves()
    assert not any(m.is_pass for m in white)
    assert any(m.from_square == "5c" for m in white)  # the lion dog still has its other moves


def test_repetition_does_not_end_the_game():
    g = make_game(("9q", "King", "black"), ("9a", "King", "white"))
    for frm, to in (("9q", "9p"), ("9a", "9b"), ("9p", "9q")):
        play_legal(g, frm, to)
    assert not g.is_over and g.result is None
    assert g.legal_moves()


# --------------------------------------------------------------------------------------------
# other names (alias lines): headings' romaji and the English alternatives
# --------------------------------------------------------------------------------------------

ALIASES = [
    ("gyokushō", "King"),
    ("ōshō", "King"),  # L115-L116
    ("King general", "King"),
    ("Jeweled general", "King"),  # L5
    ("Tengu", "Long-nosed goblin"),  # L138, L92
    ("kōgyō", "Hook mover"),
    ("taizō", "Great elephant"),  # L218
    ("funjin", "Furious fiend"),  # L219
    ("komainu", "Lion dog"),  # L288
    ("shishi", "Lion"),  # L289
    ("seijū", "Western barbarian"),
    ("tōi", "Eastern barbarian"),
    ("kōzō", "Fragrant elephant"),
    ("hakuzō", "White elephant"),
    ("hokuteki", "Northern barbarian"),
    ("namban", "Southern barbarian"),
    ("honbaku", "Free dream-eater"),
    ("honki", "Free demon"),
    ("suigyū", "Water buffalo"),
    ("gyōchō", "Rushing bird"),
    ("honnō", "Queen"),
    ("Free king", "Queen"),
    ("FK", "Queen"),  # L587, L69, L75
    ("zenki", "Standard bearer"),
    ("barin", "Flying horse"),
    ("kinnō", "Neighboring king"),
    ("Neighbor king", "Neighboring king"),  # L638, L660
    ("Neighbouring king", "Neighboring king"),
    ("sambo", "Mountain witch"),
    ("senkaku", "Wizard stork"),
    ("mōen", "Blind monkey"),
    ("rōso", "Old rat"),
    ("kyūhan", "Dove"),
    ("yasha", "She-devil"),
    ("henri", "Enchanted badger"),
    ("henko", "Enchanted fox"),
    ("ryūme", "Dragon horse"),
    ("ryūō", "Dragon king"),
    ("myōjin", "Cat sword"),
    ("hiryū", "Flying dragon"),
    ("sōsha", "Racing chariot"),
    ("Side chariot", "Racing chariot"),  # L872, L892
    ("hōgyō", "Square mover"),
    ("yōroku", "Prancing stag"),
    ("kinshi", "Golden bird"),
    ("dairyū", "Great dragon"),
    ("hōō", "Phoenix"),
    ("Kylin", "Kirin"),
    ("KY", "Kirin"),  # L979, L69, L75
    ("kakugyō", "Bishop"),
    ("hisha", "Rook"),
    ("sasha", "Left chariot"),
    ("usha", "Right chariot"),
    ("byakko", "White tiger"),
    ("seiryū", "Blue dragon"),
    ("ōgyō", "Side mover"),
    ("shugyō", "Vertical mover"),
    ("kiken", "Howling dog"),
    ("hensha", "Reverse chariot"),
    ("mōgyū", "Violent ox"),
    ("kyōsha", "Lance"),
    ("shincho", "Angry boar"),
    ("mōyū", "Violent bear"),
    ("sashō", "Left general"),
    ("ushō", "Right general"),
    ("kinshō", "Gold general"),
    ("mōhyō", "Ferocious leopard"),
    ("ginshō", "Silver general"),
    ("akurō", "Evil wolf"),
    ("dōshō", "Copper general"),
    ("mōko", "Savage tiger"),
    ("tesshō", "Iron general"),
    ("mokushō", "Wood general"),
    ("sekishō", "Stone general"),
    ("fuhyō", "Pawn"),
]


def test_alias_list_is_complete():
    text = (VARIANT_DIR / "daidai.pieces").read_text(encoding="utf-8")
    in_file = [line.split("|", 1)[1].strip() for line in text.splitlines() if line.startswith("alias ")]
    assert sorted(in_file) == sorted(a for a, _ in ALIASES)


@pytest.mark.parametrize("alias,name", ALIASES, ids=[a for a, _ in ALIASES])
def test_place_by_alias(alias, name):
    for spelling in (alias, alias.lower(), alias.upper()):
        g = make_game(("9i", spelling, "black"))
        assert g.piece_at("9i").name == name, spelling


def test_upper_case_aliases_are_notation_codes():
    """L75: the queen may be written FK, the kirin Ky (KY: codes are upper case)."""
    g = make_game(("9i", "Queen", "black"))
    m = g.play("FK-9c")
    assert g.piece_at("9c").name == "Queen" and m.notation.startswith("Q")  # printed as Q
    g = make_game(("9i", "Kirin", "black"))
    g.play("KY-9g")
    assert g.piece_at("9g").name == "Kirin"


# --------------------------------------------------------------------------------------------
# rule options: every alternative reading of the footnotes (docs/RULES.md, "Dai dai shogi")
# --------------------------------------------------------------------------------------------

OPTIONS = {  # option -> the piece it changes (footnote)
    "long-nosed-goblin-no-step": "Long-nosed goblin",  # [1]
    "old-kite-sz": "Old kite",
    "old-kite-srz": "Old kite",
    "old-kite-jawiki": "Old kite",  # [3]
    "poisonous-snake-srz": "Poisonous snake",
    "poisonous-snake-jawiki": "Poisonous snake",  # [4]
    "great-elephant-jawiki": "Great elephant",
    "great-elephant-english": "Great elephant",  # [5]
    "great-elephant-jcsa": "Great elephant",
    "furious-fiend-english": "Furious fiend",  # [6]
    "lion-dog-english": "Lion dog",  # [7]
    "lion-dog-no-promotion": "Lion dog",  # [5], L320
    "western-barbarian-sz": "Western barbarian",
    "western-barbarian-srz": "Western barbarian",  # [8]
    "eastern-barbarian-sz-text": "Eastern barbarian",  # [9]
    "eastern-barbarian-sz-diagram": "Eastern barbarian",
    "fragrant-elephant-srz-two-every-way": "Fragrant elephant",  # [10]
    "fragrant-elephant-srz-one-vertical": "Fragrant elephant",
    "white-elephant-sz-diagram-no-straight-back": "White elephant",  # [11]
    "white-elephant-sz-diagram-no-backward": "White elephant",
    "white-elephant-srz": "White elephant",
    "northern-barbarian-srz": "Northern barbarian",  # [12]
    "southern-barbarian-sz": "Southern barbarian",
    "southern-barbarian-srz": "Southern barbarian",  # [13]
    "free-dream-eater-prose": "Free dream-eater",  # L490 vs L491
    "free-demon-srz": "Free demon",  # [15]
    "water-buffalo-srz": "Water buffalo",  # [16]
    "rushing-bird-srz": "Rushing bird",  # [17]
    "standard-bearer-sz-picture": "Standard bearer",
    "standard-bearer-sz-text": "Standard bearer",  # [18]
    "standard-bearer-srz": "Standard bearer",
    "flying-horse-sz-picture": "Flying horse",
    "flying-horse-srz": "Flying horse",  # [19]
    "neighboring-king-srz": "Neighboring king",  # [20]
    "mountain-witch-srz": "Mountain witch",  # [21]
    "wizard-stork-sz": "Wizard stork",
    "wizard-stork-ssz": "Wizard stork",  # [22]
    "wizard-stork-srz": "Wizard stork",
    "blind-monkey-srz": "Blind monkey",  # [23]
    "old-rat-srz": "Old rat",  # [24]
    "dove-srz": "Dove",  # [25]
    "she-devil-srz": "She-devil",  # [26]
    "enchanted-badger-srz": "Enchanted badger",  # [27]
    "enchanted-fox-srz": "Enchanted fox",  # [28]
    "racing-chariot-srz": "Racing chariot",  # [29]
    "golden-bird-srz-range-forward": "Golden bird",
    "golden-bird-srz-range-backward": "Golden bird",  # [31]
    "great-dragon-jawiki": "Great dragon",
    "great-dragon-sz-picture": "Great dragon",  # [32]
    "great-dragon-srz": "Great dragon",
    "left-chariot-sz": "Left chariot",
    "left-chariot-srz": "Left chariot",  # [33]
    "right-chariot-sz": "Right chariot",
    "right-chariot-srz": "Right chariot",  # [34]
    "white-tiger-sz-picture": "White tiger",
    "white-tiger-srz": "White tiger",  # [35]
    "blue-dragon-sz-picture": "Blue dragon",
    "blue-dragon-srz": "Blue dragon",  # [36]
    "violent-ox-srz": "Violent ox",  # [37]
    "left-general-sz-picture": "Left general",
    "left-general-srz": "Left general",  # [39]
    "right-general-srz": "Right general",  # [40]
    "savage-tiger-srz": "Savage tiger",  # [41]
}
MOVE_OPTIONS = sorted(o for o in OPTIONS if o != "lion-dog-no-promotion")
# pieces around 9i that show options differing only next to other pieces (a jump, a lion power)
PROBE = [("9h", "Pawn", "white"), ("7g", "Pawn", "white"), ("11k", "Pawn", "white"), ("8i", "Pawn", "black")]


# option -> (the footnote's reading, diagram); the long-nosed goblin's option is a rule (below).
OPTION_DIAGRAMS = {
    "old-kite-sz": (
        "[3] SZ: two squares orthogonally or range diagonally forward (fBR2)",
        """
╲ . ○ . ╱
. ╲ ○ ╱ .
○ ○ ? ○ ○
. . ○ . .
. . ○ . .
""",
    ),
    "old-kite-srz": (
        "[3] SRZ: one square orthogonally or two diagonally (WB2)",
        """
○ . . . ○
. ○ ○ ○ .
. ○ ? ○ .
. ○ ○ ○ .
○ . . . ○
""",
    ),
    "old-kite-jawiki": (
        "[3] jawiki: two squares sideways or range diagonally forward (fBsR2)",
        """
╲ . . . ╱
. ╲ . ╱ .
○ ○ ? ○ ○
""",
    ),
    "poisonous-snake-srz": (
        "[4] SRZ: two squares orthogonally or one diagonally forward (R2fF)",
        """
. . ○ . .
. ○ ○ ○ .
○ ○ ? ○ ○
. . ○ . .
. . ○ . .
""",
    ),
    "poisonous-snake-jawiki": (
        "[4] jawiki: two left, right or forward; one back or diagonally forward",
        """
. . ○ . .
. ○ ○ ○ .
○ ○ ? ○ ○
. . ○ . .
""",
    ),
    "great-elephant-jawiki": (
        "[5] jawiki note: its ranges, jumping up to three pieces; no lion move",
        """
. . . │ . . .
. ○ . │ . ○ .
. . ○ │ ○ . .
─ ─ ─ ? ─ ─ ─
. . ╱ │ ╲ . .
. ╱ . │ . ╲ .
╱ . . │ . . ╲
""",
    ),
    "great-elephant-english": (
        "[5] English sources: rlR5bB5fbR3fB3",
        """
. . ○ . . ○ . . ○ . .
. . . ○ . ○ . ○ . . .
. . . . ○ ○ ○ . . . .
○ ○ ○ ○ ○ ? ○ ○ ○ ○ ○
. . . . ○ ○ ○ . . . .
. . . ○ . ○ . ○ . . .
. . ○ . . ○ . . ○ . .
. ○ . . . . . . . ○ .
○ . . . . . . . . . ○
""",
    ),
    "great-elephant-jcsa": (
        "[5] JCSA: the lion dog's move, plus five sideways or diagonally back",
        """
. . ☆ . . ☆ . . ☆ . .
. . . ☆ . ☆ . ☆ . . .
. . . . ! ! ! . . . .
○ ○ ☆ ☆ ! ? ! ☆ ☆ ○ ○
. . . . ! ! ! . . . .
. . . ☆ . ☆ . ☆ . . .
. . ☆ . . ☆ . . ☆ . .
. ○ . . . . . . . ○ .
○ . . . . . . . . . ○
""",
    ),
    "furious-fiend-english": (
        "[6] English sources: lion plus three squares in every direction (Q3NADaK)",
        """
○ . . ○ . . ○
. ☆ ☆ ☆ ☆ ☆ .
. ☆ ! ! ! ☆ .
○ ☆ ! ? ! ☆ ○
. ☆ ! ! ! ☆ .
. ☆ ☆ ☆ ☆ ☆ .
○ . . ○ . . ○
""",
    ),
    "lion-dog-english": (
        "[7] English sources: three squares in any direction (Q3)",
        """
○ . . ○ . . ○
. ○ . ○ . ○ .
. . ○ ○ ○ . .
○ ○ ○ ? ○ ○ ○
. . ○ ○ ○ . .
. ○ . ○ . ○ .
○ . . ○ . . ○
""",
    ),
    "western-barbarian-sz": (
        "[8] SZ: no diagonal move (rlR2fbW)",
        """
. . ○ . .
○ ○ ? ○ ○
. . ○ . .
""",
    ),
    "western-barbarian-srz": (
        "[8] SRZ: two squares vertically, one sideways or diagonally forward",
        """
. ○ .
○ ○ ○
○ ? ○
. ○ .
. ○ .
""",
    ),
    "eastern-barbarian-sz-text": (
        "[9] SZ words: one or two squares vertically or one directly right",
        """
. ○ .
. ○ .
. ? ○
. ○ .
. ○ .
""",
    ),
    "eastern-barbarian-sz-diagram": (
        "[9] SZ diagram: one or two squares vertically or one directly left",
        """
. ○ .
. ○ .
○ ? .
. ○ .
. ○ .
""",
    ),
    "fragrant-elephant-srz-two-every-way": (
        "[10] SRZ: two squares in every direction (Q2)",
        """
○ . ○ . ○
. ○ ○ ○ .
○ ○ ? ○ ○
. ○ ○ ○ .
○ . ○ . ○
""",
    ),
    "fragrant-elephant-srz-one-vertical": (
        "[10] SRZ: two sideways and diagonally, one vertically",
        """
○ . . . ○
. ○ ○ ○ .
○ ○ ? ○ ○
. ○ ○ ○ .
○ . . . ○
""",
    ),
    "white-elephant-sz-diagram-no-straight-back": (
        "[11] SZ diagram: no (straight) backward move",
        """
. ○ . ○ . ○ .
. . ○ ○ ○ . .
. ○ ○ ? ○ ○ .
. . ╱ . ╲ . .
. ╱ . . . ╲ .
╱ . . . . . ╲
""",
    ),
    "white-elephant-sz-diagram-no-backward": (
        "[11] SZ diagram: no backward move at all",
        """
○ . ○ . ○
. ○ ○ ○ .
○ ○ ? ○ ○
""",
    ),
    "white-elephant-srz": (
        "[11] SRZ: two squares in every direction (Q2)",
        """
○ . ○ . ○
. ○ ○ ○ .
○ ○ ? ○ ○
. ○ ○ ○ .
○ . ○ . ○
""",
    ),
    "northern-barbarian-srz": (
        "[12] SRZ: two sideways, one vertically or diagonally forward (rlR2fKbW)",
        """
. ○ ○ ○ .
○ ○ ? ○ ○
. . ○ . .
""",
    ),
    "southern-barbarian-sz": (
        "[13] SZ and SSZ: two squares diagonally backward or one to the left",
        """
. ○ ? . .
. ○ . ○ .
○ . . . ○
""",
    ),
    "southern-barbarian-srz": (
        "[13] SRZ: two sideways, one vertically or diagonally forward",
        """
. ○ ○ ○ .
○ ○ ? ○ ○
. . ○ . .
""",
    ),
    "free-dream-eater-prose": (
        "L490: ranges diagonally, five squares sideways (no vertical range)",
        """
╲ . . . . . . . . . ╱
. ╲ . . . . . . . ╱ .
. . ╲ . . . . . ╱ . .
. . . ╲ . . . ╱ . . .
. . . . ╲ . ╱ . . . .
○ ○ ○ ○ ○ ? ○ ○ ○ ○ ○
. . . . ╱ . ╲ . . . .
. . . ╱ . . . ╲ . . .
. . ╱ . . . . . ╲ . .
. ╱ . . . . . . . ╲ .
╱ . . . . . . . . . ╲
""",
    ),
    "free-demon-srz": (
        "[15] SRZ: up to three squares forward or diagonally, up to five backward",
        """
○ . . ○ . . ○
. ○ . ○ . ○ .
. . ○ ○ ○ . .
. . . ? . . .
. . ○ ○ ○ . .
. ○ . ○ . ○ .
○ . . ○ . . ○
. . . ○ . . .
. . . ○ . . .
""",
    ),
    "water-buffalo-srz": (
        "[16] SRZ: ranges diagonally backward only, two squares diagonally forward",
        """
○ . ○ . ○
. ○ ○ ○ .
─ ─ ? ─ ─
. ╱ ○ ╲ .
╱ . ○ . ╲
""",
    ),
    "rushing-bird-srz": (
        "[17] SRZ: two squares straight forward, one diagonally or sideways",
        """
. ○ .
○ ○ ○
○ ? ○
○ . ○
""",
    ),
    "standard-bearer-sz-picture": (
        "[18] SZ picture: backward moves one step (fQrlR2bK)",
        """
╲ . │ . ╱
. ╲ │ ╱ .
○ ○ ? ○ ○
. ○ ○ ○ .
""",
    ),
    "standard-bearer-sz-text": (
        "[18] SZ text and SSZ: ranges sideways too (Q2frlQ, frlQbQ2)",
        """
╲ . │ . ╱
. ╲ │ ╱ .
─ ─ ? ─ ─
. ○ ○ ○ .
○ . ○ . ○
""",
    ),
    "standard-bearer-srz": (
        "[18] SRZ: five squares in every direction (Q5)",
        """
○ . . . . ○ . . . . ○
. ○ . . . ○ . . . ○ .
. . ○ . . ○ . . ○ . .
. . . ○ . ○ . ○ . . .
. . . . ○ ○ ○ . . . .
○ ○ ○ ○ ○ ? ○ ○ ○ ○ ○
. . . . ○ ○ ○ . . . .
. . . ○ . ○ . ○ . . .
. . ○ . . ○ . . ○ . .
. ○ . . . ○ . . . ○ .
○ . . . . ○ . . . . ○
""",
    ),
    "flying-horse-sz-picture": (
        "[19] SZ picture: two squares forward too (fQ2W)",
        """
○ . ○ . ○
. ○ ○ ○ .
. ○ ? ○ .
. . ○ . .
""",
    ),
    "flying-horse-srz": (
        "[19] SRZ: two forward orthogonally or diagonally, one sideways or backward",
        """
○ . ○ . ○
. ○ ○ ○ .
. ○ ? ○ .
. ○ ○ ○ .
""",
    ),
    "neighboring-king-srz": (
        "[20] SRZ: the drunk elephant's move (not straight back)",
        """
○ ○ ○
○ ? ○
○ . ○
""",
    ),
    "mountain-witch-srz": (
        "[21] SRZ: ranges vertically or diagonally backward",
        """
. . . │ . . .
. . . │ . . .
. . . │ . . .
. . . ? . . .
. . ╱ │ ╲ . .
. ╱ . │ . ╲ .
╱ . . │ . . ╲
""",
    ),
    "wizard-stork-sz": (
        "[22] SZ and jawiki: no forward move (BbW)",
        """
╲ . . . . . ╱
. ╲ . . . ╱ .
. . ╲ . ╱ . .
. . . ? . . .
. . ╱ ○ ╲ . .
. ╱ . . . ╲ .
╱ . . . . . ╲
""",
    ),
    "wizard-stork-ssz": (
        "[22] SSZ: ranges forward orthogonally and diagonally, steps back (fQbW)",
        """
╲ . │ . ╱
. ╲ │ ╱ .
. . ? . .
. . ○ . .
""",
    ),
    "wizard-stork-srz": (
        "[22] SRZ: ranges vertically and diagonally forward (fBfbR)",
        """
╲ . │ . ╱
. ╲ │ ╱ .
. . ? . .
. . │ . .
. . │ . .
""",
    ),
    "blind-monkey-srz": (
        "[23] SRZ: one square orthogonally",
        """
. ○ .
○ ? ○
. ○ .
""",
    ),
    "old-rat-srz": (
        "[24] SRZ: one square diagonally forward or on the left backward diagonal",
        """
○ . ○
. ? .
○ . .
""",
    ),
    "dove-srz": (
        "[25] SRZ: unlimited diagonal range",
        """
╲ . ○ . ╱
. ╲ ○ ╱ .
○ ○ ? ○ ○
. ╱ ○ ╲ .
╱ . ○ . ╲
""",
    ),
    "she-devil-srz": (
        "[26] SRZ's other description: three sideways, one back or diagonally forward",
        """
. . ○ . ○ . .
○ ○ ○ ? ○ ○ ○
. . . ○ . . .
""",
    ),
    "enchanted-badger-srz": (
        "[27] SRZ: two squares in any orthogonal direction (R2)",
        """
. . ○ . .
. . ○ . .
○ ○ ? ○ ○
. . ○ . .
. . ○ . .
""",
    ),
    "enchanted-fox-srz": (
        "[28] SRZ: ranges only to the left and right",
        """
─ ? ─
""",
    ),
    "racing-chariot-srz": (
        "[29] SRZ: no step (a rook)",
        """
. │ .
─ ? ─
. │ .
""",
    ),
    "golden-bird-srz-range-forward": (
        "[31] SRZ (a): diagonally forward jumping up to three pieces; "
        "three sideways and diagonally back; range forward",
        """
╲ . . │ . . ╱
. ╲ . │ . ╱ .
. . ╲ │ ╱ . .
○ ○ ○ ? ○ ○ ○
. . ○ . ○ . .
. ○ . . . ○ .
○ . . . . . ○
""",
    ),
    "golden-bird-srz-range-backward": (
        "[31] SRZ (b): the same with the range straight backward",
        """
╲ . . . . . ╱
. ╲ . . . ╱ .
. . ╲ . ╱ . .
○ ○ ○ ? ○ ○ ○
. . ○ │ ○ . .
. ○ . │ . ○ .
○ . . │ . . ○
""",
    ),
    "great-dragon-jawiki": (
        "[32] jawiki (set-up great dragon): range and 2nd/3rd-square jumps "
        "sideways, two vertically, three diagonally back",
        """
. . . ○ . . .
. . . ○ . . .
─ ─ ─ ? ─ ─ ─
. . ○ ○ ○ . .
. ○ . ○ . ○ .
○ . . . . . ○
""",
    ),
    "great-dragon-sz-picture": (
        "[32] SZ picture: three squares sideways only",
        """
○ . . . . . ○
. ○ . ○ . ○ .
. . ○ ○ ○ . .
○ ○ ○ ? ○ ○ ○
. . ○ ○ ○ . .
. ○ . ○ . ○ .
○ . . . . . ○
""",
    ),
    "great-dragon-srz": (
        "[32] SRZ: ranges diagonally, three squares vertically",
        """
╲ . . ○ . . ╱
. ╲ . ○ . ╱ .
. . ╲ ○ ╱ . .
. . . ? . . .
. . ╱ ○ ╲ . .
. ╱ . ○ . ╲ .
╱ . . ○ . . ╲
""",
    ),
    "left-chariot-sz": (
        "[33] SZ and SSZ: range forward, forward-right, backward-left; one step left",
        """
. . . │ . . ╱
. . . │ . ╱ .
. . . │ ╱ . .
. . ○ ? . . .
. . ╱ . . . .
. ╱ . . . . .
╱ . . . . . .
""",
    ),
    "left-chariot-srz": (
        "[33] SRZ: the same without the forward range",
        """
. . . . . . ╱
. . . . . ╱ .
. . . . ╱ . .
. . ○ ? . . .
. . ╱ . . . .
. ╱ . . . . .
╱ . . . . . .
""",
    ),
    "right-chariot-sz": (
        "[34] SZ and SSZ: range forward, forward-left, backward-right; one step right",
        """
╲ . . │ . . .
. ╲ . │ . . .
. . ╲ │ . . .
. . . ? ○ . .
. . . . ╲ . .
. . . . . ╲ .
. . . . . . ╲
""",
    ),
    "right-chariot-srz": (
        "[34] SRZ: the same without the forward range",
        """
╲ . . . . . .
. ╲ . . . . .
. . ╲ . . . .
. . . ? ○ . .
. . . . ╲ . .
. . . . . ╲ .
. . . . . . ╲
""",
    ),
    "white-tiger-sz-picture": (
        "[35] SZ picture: left and right reversed",
        """
. . . │ . . ╱
. . . │ . ╱ .
. . ○ │ ╱ . .
. ○ ○ ? ○ ○ .
. . . │ . . .
. . . │ . . .
. . . │ . . .
""",
    ),
    "white-tiger-srz": (
        "[35] SRZ: range sideways and forward-left, two vertically and forward-right",
        """
╲ . . . . . .
. ╲ . ○ . ○ .
. . ╲ ○ ○ . .
─ ─ ─ ? ─ ─ ─
. . . ○ . . .
. . . ○ . . .
""",
    ),
    "blue-dragon-sz-picture": (
        "[36] SZ picture: left and right reversed",
        """
╲ . . . . . .
. ╲ . ○ . . .
. . ╲ ○ ○ . .
─ ─ ─ ? ─ ─ ─
. . . ○ . . .
. . . ○ . . .
""",
    ),
    "blue-dragon-srz": (
        "[36] SRZ: range vertically and forward-right, two sideways and forward-left",
        """
. . . │ . . ╱
. ○ . │ . ╱ .
. . ○ │ ╱ . .
. ○ ○ ? ○ ○ .
. . . │ . . .
. . . │ . . .
. . . │ . . .
""",
    ),
    "violent-ox-srz": (
        "[37] SRZ: two squares vertically or range diagonally forward",
        """
╲ . ○ . ╱
. ╲ ○ ╱ .
. . ? . .
. . ○ . .
. . ○ . .
""",
    ),
    "left-general-sz-picture": (
        "[39] SZ picture: not directly backward either",
        """
○ ○ ○
. ? ○
○ . ○
""",
    ),
    "left-general-srz": (
        "[39] SRZ: as a king",
        """
○ ○ ○
○ ? ○
○ ○ ○
""",
    ),
    "right-general-srz": (
        "[40] SRZ: as a king",
        """
○ ○ ○
○ ? ○
○ ○ ○
""",
    ),
    "savage-tiger-srz": (
        "[41] SRZ: ranges straight forward, like the lance",
        """
│
?
""",
    ),
}
OPTION_PASSES = {"great-elephant-jcsa", "furious-fiend-english"}  # they keep a lion power


def test_every_move_option_has_a_diagram():
    assert set(OPTION_DIAGRAMS) | {"long-nosed-goblin-no-step"} == set(MOVE_OPTIONS)


@pytest.mark.parametrize("color", ["black", "white"])
@pytest.mark.parametrize("option", MOVE_OPTIONS)
def test_option_moves_on_an_empty_board(option, color):
    name = OPTIONS[option]
    g = make_game((START, name, color), options=[option])
    moves = list(g.moves_from(START))
    passes = [m for m in moves if m.to_square == START]
    assert len(passes) == (1 if option in OPTION_PASSES else 0)
    got = {m.to_square for m in moves} - {START}
    if option == "long-nosed-goblin-no-step":  # [1]: the diagonal hook move alone
        expected = {s for s in ALL_SQUARES if same_colour(s, START)} - {START}
    else:
        expected = diagram_destinations(OPTION_DIAGRAMS[option][1], START, color)
    assert got == expected, f"{option} ({color}): missing {sorted(expected - got)}, extra {sorted(got - expected)}"


def test_option_list_is_complete():
    types = {t.abbrev: t.name for t in taikyoku.piece_types(VARIANT)}
    listed = taikyoku.rule_options(VARIANT)
    offered = {name: types.get(key) or types.get(key.split()[0]) or key for name, key in listed}
    assert len(listed) == len(OPTIONS)
    assert offered == OPTIONS


def test_variant_checks_with_every_option():
    files = [VARIANT_DIR / f"daidai.{ext}" for ext in ("rules", "pieces", "setup")]
    texts = [f.read_text(encoding="utf-8") for f in files]
    summary = taikyoku._core.check_variant(VARIANT, *texts)
    assert isinstance(summary, str) and summary


@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_option_loads(option):
    g = taikyoku.Game(variant=VARIANT, options=[option])
    assert list(g.options) == [option]
    assert len(g.pieces()) == 192
    assert g.legal_move_count() > 0


@pytest.mark.parametrize("option", MOVE_OPTIONS)
def test_option_changes_its_pieces_moves(option):
    name = OPTIONS[option]
    changed = False
    for extra in ([], PROBE):
        main = make_game(("9i", name, "black"), *extra)
        alt = make_game(("9i", name, "black"), *extra, options=[option])
        changed |= move_keys(main, "9i") != move_keys(alt, "9i")
    assert changed, f"{option} does not change the moves of the {name}"


def test_option_lion_dog_no_promotion():
    """[5], L320: in the SZ and SSZ the lion dog does not promote."""
    g = make_game(("9i", "Lion dog", "black"), ("9h", "Pawn", "white"), options=["lion-dog-no-promotion"])
    m = play(g, "9i", "9h", captures=["9h"])
    assert not m.promotes
    assert (g.piece_at("9h").name, g.piece_at("9h").promoted) == ("Lion dog", False)
    # a western barbarian still becomes a lion dog (L364)
    g = make_game(("9i", "Western barbarian", "black"), ("9h", "Pawn", "white"), options=["lion-dog-no-promotion"])
    assert play(g, "9i", "9h", captures=["9h"]).promotes
    assert g.piece_at("9h").name == "Lion dog"


def test_option_lion_dog_english_has_no_jump():
    """[7]: three squares in any direction, no lion power: it stops at the first piece."""
    g = make_game(("9i", "Lion dog", "black"), ("9h", "Pawn", "black"), options=["lion-dog-english"])
    got = destinations(g, "9i")
    assert not got & {"9h", "9g", "9f", "9i"}
    assert {"8h", "7g", "6f", "9j", "9k", "9l"} <= got


def test_option_great_elephant_jawiki_jumps_up_to_three_pieces():
    """[5]: jawiki's note: it may jump over up to three pieces and slide on."""
    g = make_game(
        ("9i", "Great elephant", "black"),
        ("9h", "Pawn", "black"),
        ("9g", "Pawn", "white"),
        ("9f", "Pawn", "black"),
        ("9d", "Pawn", "white"),
        options=["great-elephant-jawiki"],
    )
    got = destinations(g, "9i")
    assert {"9e", "9d"} <= got and not got & {"9c", "9h", "9f", "9i"}
