"""Taishin shogi (variant "taishin"), checked against its seed.

Seed: A. M. DeWitt's "Taishin Shogi" page on The Chess Variant Pages (chessvariants.com); "L123" is
line 123 of its plain-text copy, seed 001 (docs/RULES.md, "Taishin shogi"). L18 is the definition of
the seed's interactive diagram: for every piece `name:ID:XBetza:image:squares` (a `+ID` entry is
the promoted form of ID; the squares are the seed's chess-like coordinates, a1 = Black's back-left
corner). That line, the promoted-only pieces'
Betza list (L135-L162) and the promotion list (L707-L783) are copied verbatim below, and the copies
are compared with that plain-text copy when one is present beside the repository (it is not in it);
likewise the setup below with a reference setup file, when present. Semantics of the Taishin powers:
docs/RULES.md, "Taishin shogi" ("Movement", "Promotion", "Game end and repetition"), and the atoms in
docs/PIECE_TABLE.md, "Movement atoms"; each worked example is spelled out in its test. Reading choices:
docs/RULES.md, "Taishin shogi", "Reading choices (no option)" ("T1".."T15"; T7, the prince's name, and
T16, the keys, are under its "Board, setup, names"). Data under test: rust/engine/variants/taishin.*.

The oracle for movement is the seed's XBetza. A small interpreter of the XBetza subset the seed uses
(below) generates every piece type's moves from its L18 string, and the engine must give exactly
those moves (destination and captured squares) on the empty board and on random crowded boards, for
both sides, and for every piece in random games. XBetza as H. G. Muller's interactive diagram (which
the seed uses) reads it:
- one atom per move; `a` splits a move into legs of that atom (`KaKaaK` is K, aK, aaK: up to three
  king steps; `RFaKmabK` is R, F, aK, mabK); a later leg's directions are relative to the leg before
  (f straight on, b back, s the two perpendiculars, v f or b, none: every direction of the atom);
- a leg's modality: m to an empty square, c capturing an enemy there, p hopping over an occupied
  square of either colour (which stays); a non-final leg without one of them only moves (m), a
  final one moves or captures;
- the mover's own square is empty once it has left (so `mcabK` is igui, or a pass);
- `n` lame (the square passed over must be empty), `j` on a slider skips the first square whatever
  stands there, `p` on a one-leg slider is a cannon (over exactly one piece), a leaper with a count
  (W2, K3) slides up to that many squares, `U` reaches every square of the board.
The Betza strings are the main line where the prose differs (docs/RULES.md, "Taishin shogi",
"Reading choices (no option)": T2, the lion's and lion dog's first sentences swapped; T3, the golden
bird's second step; T5, the iron general; T9, the right and left army as written), with these
exceptions, tested apart:
- T6: the pawn promotes to the gold general (L783 "Pawn -> Gold"), not to the diagram's separate
  "tokin" (whose move, WfF, is the gold's: the same moves);
- T10: the emperor's `U` may not capture a protected royal (L564), which no Betza says;
- L697: no fourth pass in a row; L703: the last-rank promotion choice; L789: conferred promotions.
(T4 is no disagreement: read as above, the nets' `RFaKmabK` and `BWaKmabK` are the prose's
2-square area move.)

Squares are the engine's: files 1..25 counted from Black's right, ranks a..y from the top; "1a" is
the top right corner, the centre is 13m. Black moves up (towards rank a). From Black's 13m: forward
13l, backward 13n, left 14m, right 12m. The seed's square `e5` of Black is the engine's 21u.
"""

import random
import re
from pathlib import Path

import pytest
from boards import OTHER_SEVEN_LINES_FROM_9I, VariantBoard, k, play

import taikyoku
import taikyoku._core

pytestmark = pytest.mark.skipif(
    "taishin" not in taikyoku.variants(),
    reason="variant 'taishin' is not built into this taikyoku yet (engine support in progress)",
)

VARIANT = "taishin"
ROOT = Path(__file__).resolve().parent.parent
VARIANT_DIR = ROOT / "rust" / "engine" / "variants"
SEED_FILE = ROOT.parent / "shared" / "seeds" / "001_0f6dd553c1208e8f.txt"
REFERENCE_FILE = ROOT.parent / "shared" / "reference" / "taishin_setup.txt"
SIZE = 25
START = "13m"

BOARD = VariantBoard(VARIANT, SIZE, START)
sq, parse_sq, make_game = BOARD.sq, BOARD.parse_sq, BOARD.make_game
black_square, rotated = BOARD.black_square, BOARD.rotated


def other(color):
    return "white" if color == "black" else "black"


def kings():
    """A royal for each side, in corners away from the action."""
    return [("1y", "King", "black"), ("25a", "King", "white")]


def seed_lines():
    if not SEED_FILE.exists():
        pytest.skip(f"seed file not present: {SEED_FILE}")
    return SEED_FILE.read_text(encoding="utf-8").replace("\xa0", " ").split("\n")


# --------------------------------------------------------------------------------------------
# the seed, copied verbatim (compared with the file below)
# --------------------------------------------------------------------------------------------

# L18 after its board settings ("files=25 ranks=25 ... symmetry=rotate "): one entry per line here,
# separated by single spaces there.
SEED_L18_PIECES = """
pawn:p:fW:p:a7-y7
dog:d:bFfW:d:h8,r8
knight:n:N:n:d2,v2
earth general:e:vW:e:d5,v5
stone general:o:fF:o:e5,u5
tile general:t:fFbW:t:f5,t5
iron general:I:fFfW:i5:g5,s5
copper general:C:fFvW:c:h5,r5
silver general:S:FfW:s:k2,o2
blind tiger:BT:FsbW:bt:j3,p3
ferocious leopard:FL:FvW:fl:c4,w4
gold general:G:WfF:g:k1,o1
cat sword:CT:F:ct:c3,w3
angry boar:AB:W:ab:k6,o6
evil wolf:EW:fFfsW:ew:l6,n6
coiled serpent:CO:bFvW:co:i5,q5
blind dog:BD:fFsbW:bd:f4,t4
old monkey:OM:FbW:om:h4,r4
reclining dragon:RN:WbF:rn:j6,p6
flying horse:FH:F2:fh:d1,v1
flying dragon:FN:W2:fn:d3,v3
roaring dog:RD:K3:rd:f1,t1
reverse chariot:RV:vR:rv:a2,y2
lance:L:fRbW2:l:a1,y1
whale:WL:bBvR:wl:c1,w1
white horse:WH:fBvR:wh:b3,x3
howling dog:HD:fRbW:hd:a6,y6
kirin:KY:FD:ky:n4,l4
phoenix:PH:WA:ph:i3,q3
warrior:WR:WfFA:wr:i4,q4
poisonous snake:PS:FvWD:ps:e2,u2
left chariot:LC:fRbWflbrB:lc:a5
right chariot:RC:fRbWfrblB:rc:y5
soldier:SO:RbB:so:a3,y3
side mover:SM:WsR:sm:f6,t6
vertical mover:VM:WvR:vm:g6,s6
bishop:B:B:b:g2,s2
side soldier:SS:WsRfnD:ss:e3,u3
vertical soldier:VS:WfRsnD:vs:f3,t3
rook:R:R:r:g1,s1
side chariot:SC:sRvW2:sc:b5,x5
vertical chariot:VC:vRsW2:vc:c5,w5
dragon horse:DH:BW:dh:h1,r1
dragon king:DK:RF:dk:i1,q1
fire dragon:F:RfB4bB2:f:i6,q6
water dragon:W:RbB4fB2:w:h6,r6
earth dragon:H:BsR4vR2:h:c6,w6
wind dragon:A:BvR4sR2:a:b6,x6
violent falcon:VF:BN:vf3:k4,o4
fierce eagle:VE:RN:ve3:k3,o3
chariot soldier:CS:BvRWnD:cs:a4,y4
mountain falcon:MF:RfBbB2fD:mf:d6,v6
left mountain eagle:LE:RlbfBrbB2lvA:le:e6
right mountain eagle:RE:RrbfBlbB2rvA:re:u6
horned falcon:HF:BbsRfWfDfcavWfmabW:hf:g4,s4
soaring eagle:SE:RbBfFfAfcavFfmabF:se:c2,w2
lion:LN:KNADcaKmcabK:ln:h3,r3
lion dog:LD:KADGHcafKmcabKcafmpafKmpafcavK:ld:g3,s3
queen:Q:Q:q:j1,p1
free eagle:FE:QADcasFcafFmcabF:fe:m6
lion hawk:LH:BWNADcaKmcabK:lh:m5
bishop general:BG:pafpafcBmcBcpB:bg:d4,v4
rook general:RG:pafpafcRmcRcpR:rg:e4,u4
violent horse:VH:R3pafpafcBmcBcpB:vh:h2,r2
violent dragon:VD:B3pafpafcRmcRcpR:vd:i2,q2
vice master:VA:DpafpafcBmcBcpB:va:b2,x2
great master:GA:ApafpafcRmcRcpR:ga:b1,x1
water buffalo:WB:BsRWnD:wb:b4,x4
peacock:PC:bB2fBfmasB:pc3:j4,p4
capricorn:CA:BmasB:ca:e1,u1
left general:LT:FvrW:lt:l2
right general:RT:FvlW:rt:n2
deva:DV:lfbFW:dv:l1
dark spirit:DS:rfbFW:ds:n1
drunk elephant:DE:FsfW:de:m3
crown prince:CP:K:cp:m2
king:K:K2:k5:m1
free demon:HK:BsRvW5:hk:j2,p2
free dream eater:HB:BvRsW5:hb:f2,t2
furious fiend:FF:KNADGHcaKmcabKcafmpafKmpafcavK:ff:m4
vice general:VG:pafpafcBmcBcpBKaKaaKmabK:vg:n3
great general:GG:pafpafcQmcQcpQ:gg:l3
heavenly tetrarch:HT:jsR3jBjvRcabK:ht:j5,p5
fire demon:FD:BsRKaKaaKcaKmcabK:fd:k5,o5
tengu:TG:WBmasB:tg:l5
hook mover:HM:RmasR:hm:n5
tokin:+P:WfF:p2:
multi general:+D:bBfR:d2:
side soldier:+N:WsRfnD:n2:
reverse chariot:+E:vR:e2:
side chariot:+O:sRvW2:o2:
vertical chariot:+T:vRsW2:t2:
vertical soldier:+I:WfRsnD:i2:
side mover:+C:WsR:c2:
vertical mover:+S:WvR:s2:
flying stag:+BT:KvR:bt2:
bishop:+FL:B:fl2:
rook:+G:R:g2:
free cat:+CT:B:ct2:
running boar:+AB:R:ab2:
free wolf:+EW:KsR:ew2:
free serpent:+CO:bBvR:co2:
wizard stork:+BD:BsfRbW:bd2:
mountain witch:+OM:BsbRfW:om2:
free dragon:+RN:RbB:rn2:
violent falcon:+FH:BN:fh4:
fierce eagle:+FN:RN:fn4:
lion dog:+RD:KADGHcafKmcabKcafmpafKmpafcavK:rd2:
whale:+RV:bBvR:rv2:
white horse:+L:fBvR:l2:
great whale:+WL:bBvRsR2:wl2:
great horse:+WH:fBvRsR2:wh2:
roaring dog:+HD:K3:hd2:
lion:+KY:KNADcaKmcabK:ky2:
queen:+PH:Q:ph2:
tengu:+WR:WBmasB:wr2:
hook mover:+PS:RmasR:ps2:
left army:+LC:KrvBrR:lc2:
right army:+RC:KlvBlR:rc2:
cavalier:+SO:RfB:so2:
free boar:+SM:BsR:sm2:
flying ox:+VM:BvR:vm2:
dragon horse:+B:BW:b2:
water buffalo:+SS:BsRWnD:ss2:
chariot soldier:+VS:BvRWnD:vs2:
dragon king:+R:RF:r2:
free demon:+SC:BsRvW5:sc2:
free dream eater:+VC:BvRsW5:vc2:
horned falcon:+DH:BbsRfWfDfcavWfmabW:dh2:
soaring eagle:+DK:RbBfFfAfcavFfmabF:dk2:
kirin master:+F:BbsRfWfDfHfcafWfmcabWfcafmpafWfmpafcavW:f2:
phoenix master:+W:RbBfFfAfGfcafFfmcabFfcafmpafFfmpafcavF:w2:
earthward net:+H:BWaKmabK:h2:
skyward net:+A:RFaKmabK:a2:
violent horse:+VF:R3pafpafcBmcBcpB:vf2:
violent dragon:+VE:B3pafpafcRmcRcpR:ve2:
heavenly tetrarch:+CS:jsR3jBjvRcabK:cs2:
horned falcon:+MF:BbsRfWfDfcavWfmabW:mf2:
soaring eagle:+LE:RbBfFfAfcavFfmabF:le2:
soaring eagle:+RE:RbBfFfAfcavFfmabF:re2:
bishop general:+HF:pafpafcBmcBcpB:hf2:
rook general:+SE:pafpafcRmcRcpR:se2:
lion hawk:+LN:BWNADcaKmcabK:ln2:
furious fiend:+LD:KNADGHcaKmcabKcafmpafKmpafcavK:ld2:
free eagle:+Q:QADcasFcafFmcabF:q2:
golden bird:+FE:QDcasWcafWmcabW:fe2:
great dragon:+LH:RFNADcaKmcabK:lh2:
vice general:+BG:pafpafcBmcBcpBKaKaaKmabK:bg2:
great general:+RG:pafpafcQmcQcpQ:rg2:
horse master:+VH:pafpafcBmcBcpBKaKmabK:vh2:
dragon master:+VD:pafpafcRmcRcpRKaKmabK:vd2:
vice general:+VA:pafpafcBmcBcpBKaKaaKmabK:va2:
great general:+GA:pafpafcQmcQcpQ:ga2:
fire demon:+WB:BsRKaKaaKcaKmcabK:wb2:
tengu:+PC:WBmasB:pc2:
hook mover:+CA:RmasR:ca2:
shogun:+LT:KaKaaKmabK:lt2:
shogun:+RT:KaKaaKmabK:rt2:
teaching king:+DV:QADGHcafKmcabKcafmpafKmpafcavK:dv2:
divine dragon:+DS:QNADcaKmcabK:ds2:
crown prince:+DE:K:de2:
king:+CP:K2:cp2:
emperor:+K:U:k2:
"""
# L135-L162: the Betza of the pieces that only appear with promotion (bullets).
SEED_L135_L162 = """
Emperor (U)
Divine Dragon (QNADcaKmcabK)
Teaching King (QADGHcafKmcabKcafmpafKmpafcavK)
Shogun (KaKaaKmabK)
Great Dragon (RFNADcaKmcabK)
Golden Bird (QDcasWcafWmcabW)
Phoenix Master (RbBfFfAfGfcafFfmcabFfcafmpafFfmpafcavF)
Kirin Master (BbsRfWfDfHfcafWfmcabWfcafmpafWfmpafcavW)
Dragon Master (pafpafcRmcRcpRKaKmabK)
Horse Master (pafpafcBmcBcpBKaKmabK)
Skyward Net (RFaKmabK)
Earthward Net (BWaKmabK)
Wizard Stork (BsfRbW)
Mountain Witch (BsbRfW)
Cavalier (RfB)
Free Dragon (RbB)
Flying Ox (BvR)
Free Boar (BsR)
Great Horse (fBvRsR2)
Great Whale (bBvRsR2)
Free Serpent (bBvR)
Running Boar (R)
Free Cat (B)
Right Army (KlvBlR)
Left Army (KrvBrR)
Flying Stag (KvR)
Free Wolf (KsR)
Multi General (bBfR)
"""
# L707-L783: "The pieces promote as follows" (bullets).
SEED_L707_L783 = """
King -> Emperor
Prince -> King
Drunk Elephant -> Prince
Dark Spirit -> Divine Dragon
Deva -> Teaching King
Capricorn -> Hook Mover
Peacock -> Tengu
Great Master -> Great General
Vice Master -> Vice General
Violent Dragon -> Dragon Master
Violent Horse -> Horse Master
Rook General -> Great General
Bishop General -> Vice General
Lion Hawk -> Great Dragon
Free Eagle -> Golden Bird
Lion -> Lion Hawk
Lion Dog -> Furious Fiend
Queen -> Free Eagle
Soaring Eagle -> Rook General
Horned Falcon -> Bishop General
Water Buffalo -> Fire Demon
Chariot Soldier -> Heavenly Tetrarch
Soldier -> Cavalier
Right Mountain Eagle -> Soaring Eagle
Left Mountain Eagle -> Soaring Eagle
Mountain Falcon -> Horned Falcon
Fierce Eagle -> Violent Dragon
Violent Falcon -> Violent Horse
Fire Dragon -> Kirin Master
Water Dragon -> Phoenix Master
Earth Dragon -> Earthward Net
Wind Dragon -> Skyward Net
Dragon King -> Soaring Eagle
Dragon Horse -> Horned Falcon
Rook -> Dragon King
Bishop -> Dragon Horse
Vertical Chariot -> Free Dream Eater
Side Chariot -> Free Demon
Vertical Soldier -> Chariot Soldier
Side Soldier -> Water Buffalo
Vertical Mover -> Flying Ox
Side Mover -> Free Boar
Right Chariot -> Right Army
Left Chariot -> Left Army
White Horse -> Great Horse
Whale -> Great Whale
Reverse Chariot -> Whale
Lance -> White Horse
Howling Dog -> Roaring Dog
Poisonous Snake -> Hook Mover
Warrior -> Tengu
Phoenix -> Queen
Kirin -> Lion
Knight -> Side Soldier
Roaring Dog -> Lion Dog
Flying Dragon -> Fierce Eagle
Flying Horse -> Violent Falcon
Right General -> Shogun
Left General -> Shogun
Blind Tiger -> Flying Stag
Ferocious Leopard -> Bishop
Reclining Dragon -> Free Dragon
Old Monkey -> Mountain Witch
Blind Dog -> Wizard Stork
Coiled Serpent -> Free Serpent
Evil Wolf -> Free Wolf
Angry Boar -> Running Boar
Cat Sword -> Freee Cat
Gold General -> Rook
Silver General -> Vertical Mover
Copper General -> Side Mover
Iron General -> Vertical Soldier
Tile General -> Vertical Chariot
Stone General -> Side Chariot
Earth General -> Reverse Chariot
Dog -> Multi General
Pawn -> Gold
"""


# (name, ID, Betza, image, squares) per L18 entry
DIAGRAM = [tuple(line.split(":")) for line in SEED_L18_PIECES.strip().splitlines()]


def test_the_copies_are_the_seed():
    lines = seed_lines()
    settings, _, pieces = lines[17].partition("symmetry=rotate ")
    assert settings.startswith("files=25 ranks=25 ") and "promoZone=0" in settings
    assert pieces == " ".join(SEED_L18_PIECES.strip().splitlines())

    def bullets(first, last):
        return [line.strip().lstrip("• ") for line in lines[first - 1 : last] if line.strip()]

    assert bullets(135, 162) == SEED_L135_L162.strip().splitlines()
    assert bullets(707, 783) == SEED_L707_L783.strip().splitlines()


def table_name(diagram_name):
    """The table's spelling of a diagram name: first letter capitalised; the diagram's "crown
    prince" is the prose's Prince (T7)."""
    return {"crown prince": "Prince"}.get(diagram_name, diagram_name.capitalize())


SET_UP = [(table_name(n), i, b, squares) for n, i, b, _, squares in DIAGRAM if not i.startswith("+")]
SET_UP_NAMES = {n for n, _, _, _ in SET_UP}
ID_OF = {n: i for n, i, _, _ in SET_UP}
PROMOTED_FORM = {i[1:].upper(): (table_name(n), b) for n, i, b, _, _ in DIAGRAM if i.startswith("+")}  # "+P" of "p"
BETZA = {n: b for n, _, b, _ in SET_UP}
for _name, _betza in PROMOTED_FORM.values():
    if _name != "Tokin":  # T6: the promoted pawn is the gold general (same move)
        BETZA.setdefault(_name, _betza)
NAMES = sorted(BETZA)
PROMOTED_ONLY = sorted(set(NAMES) - SET_UP_NAMES)
# T6: the diagram's "+P tokin" is the gold general (L783); every other + entry names the type.
PROMOTES = {
    n: ("Gold general" if PROMOTED_FORM[i.upper()][0] == "Tokin" else PROMOTED_FORM[i.upper()][0])
    for n, i, _, _ in SET_UP
    if i.upper() in PROMOTED_FORM
}
NON_PROMOTING = sorted(SET_UP_NAMES - set(PROMOTES))
ROYALS = {"King", "Prince", "Emperor"}  # L795, L816
CONFERS = {
    "Deva": "Teaching king",
    "Teaching king": "Teaching king",  # L789
    "Dark spirit": "Divine dragon",
    "Divine dragon": "Divine dragon",
}
FARPROMOTE = {"Pawn", "Stone general", "Iron general"}  # L703
# L697: the pieces that may skip a turn
PASSERS = {
    "Fire demon",
    "Vice general",
    "Lion hawk",
    "Free eagle",
    "Furious fiend",
    "Lion",
    "Lion dog",
    "Soaring eagle",
    "Horned falcon",
    "Divine dragon",
    "Teaching king",
    "Great dragon",
    "Golden bird",
    "Shogun",
    "Dragon master",
    "Horse master",
    "Skyward net",
    "Earthward net",
    "Phoenix master",
    "Kirin master",
}


def potentially_royal(name):
    """L789: royals, and the types that promote to one (the drunk elephant)."""
    return name in ROYALS or PROMOTES.get(name) in ROYALS


# --------------------------------------------------------------------------------------------
# an interpreter of the seed's XBetza subset (conventions in the module docstring)
# --------------------------------------------------------------------------------------------

ORTH_V = [(0, 1), (0, -1), (1, 0), (-1, 0)]  # (to the piece's right, forward)
DIAG_V = [(1, 1), (1, -1), (-1, 1), (-1, -1)]
ATOMS = {  # atom -> (vectors, rides)
    "W": (ORTH_V, False),
    "F": (DIAG_V, False),
    "K": (ORTH_V + DIAG_V, False),
    "D": ([(2 * x, 2 * y) for x, y in ORTH_V], False),
    "H": ([(3 * x, 3 * y) for x, y in ORTH_V], False),
    "A": ([(2 * x, 2 * y) for x, y in DIAG_V], False),
    "G": ([(3 * x, 3 * y) for x, y in DIAG_V], False),
    "N": ([(1, 2), (-1, 2), (1, -2), (-1, -2), (2, 1), (-2, 1), (2, -1), (-2, -1)], False),
    "R": (ORTH_V, True),
    "B": (DIAG_V, True),
    "Q": (ORTH_V + DIAG_V, True),
}
VERTICAL, HORIZONTAL = {"f": {1}, "b": {-1}, "v": {1, -1}}, {"l": {-1}, "r": {1}, "s": {1, -1}}


def parse_betza(text):
    """'KNADcaKmcabK' -> [(legs, atom, count)]: legs are the modifier strings between the `a`s."""
    out, pos = [], 0
    while pos < len(text):
        m = re.compile(r"([a-z]*)([A-Z])(\d*)").match(text, pos)
        assert m, f"cannot read {text!r} at {pos}"
        mods, atom, count = m.groups()
        out.append((mods.split("a"), atom, int(count) if count else None))
        pos = m.end()
    return out


def sign(v):
    return (v > 0) - (v < 0)


def absolute_directions(vectors, letters):
    """A first leg's direction letters. On a diagonal atom a vertical letter next to a horizontal
    one is the one diagonal between them (`lf`, `rb`, `lv` = both left diagonals), a lone letter
    every diagonal on its side; on an orthogonal atom each letter adds its direction(s)."""
    if not letters:
        return list(vectors)
    picks, i = [], 0
    while i < len(letters):
        a, b = letters[i], letters[i + 1 : i + 2]
        if (a in VERTICAL and b in HORIZONTAL) or (a in HORIZONTAL and b in VERTICAL):
            ys, xs = (VERTICAL[a], HORIZONTAL[b]) if a in VERTICAL else (VERTICAL[b], HORIZONTAL[a])
            picks.append((xs, ys))
            i += 2
        else:
            picks.append((HORIZONTAL.get(a, set()), VERTICAL.get(a, set()), "one"))
            i += 1
    out = []
    for x, y in vectors:
        sx, sy = sign(x), sign(y)
        for pick in picks:
            xs, ys = pick[0], pick[1]
            if len(pick) == 2 and sx and sy:  # a pair on a diagonal: the one diagonal
                hit = sx in xs and sy in ys
            else:  # a single letter, or any letter on an orthogonal vector: that side
                hit = (sx != 0 and sx in xs) or (sy != 0 and sy in ys)
            if hit:
                out.append((x, y))
                break
    return out


def relative_directions(vectors, letters, prev):
    """A later leg's directions, relative to the previous leg's direction `prev`."""
    if not letters:
        return list(vectors)
    px, py = sign(prev[0]), sign(prev[1])
    out = []
    for x, y in vectors:
        sx, sy = sign(x), sign(y)
        same, back, perpendicular = (sx, sy) == (px, py), (sx, sy) == (-px, -py), sx * px + sy * py == 0
        assert set(letters) <= set("fbsv"), f"relative directions {letters!r} are not in the subset"
        if (
            ("f" in letters and same)
            or ("b" in letters and back)
            or ("s" in letters and perpendicular)
            or ("v" in letters and (same or back))
        ):
            out.append((x, y))
    return out


class Position:
    """A mover of `color` on `s0` (file, rank); `pieces`: (file, rank) -> "own" / "enemy"."""

    def __init__(self, s0, color, pieces):
        self.s0, self.color, self.pieces = s0, color, pieces
        self.sign = 1 if color == "black" else -1

    def at(self, vec, frm):
        """The square `vec` (x to the piece's right, y forward) from `frm`, None off the board."""
        f, r = frm[0] - self.sign * vec[0], frm[1] - self.sign * vec[1]
        return (f, r) if 1 <= f <= SIZE and 1 <= r <= SIZE else None

    def content(self, p, captured):
        return None if p == self.s0 or p in captured else self.pieces.get(p)


def leg_ends(pos, frm, vec, rides, count, modes, captured, skip_first=False):
    """Where one leg along `vec` may end and what it does there ("move", "capture", "hop"):
    a rider goes on over empty squares, and the first occupied square ends it."""
    out, p = [], frm
    for i in range(1, (count or 2 * SIZE) + 1 if rides else 2):
        p = pos.at(vec, p)
        if p is None:
            break
        if skip_first and i == 1:
            continue
        c = pos.content(p, captured)
        if c is None:
            if "m" in modes:
                out.append((p, "move"))
            continue
        if c == "enemy" and "c" in modes:
            out.append((p, "capture"))
        if "p" in modes:
            out.append((p, "hop"))
        break
    return out


def betza_moves(text, pos):
    """Every move of XBetza `text` for `pos`: (end square, captured squares)."""
    out = set()
    for legs, atom, count in parse_betza(text):
        if atom == "U":  # every square but its own, empty or enemy
            for p in ((f, r) for f in range(1, SIZE + 1) for r in range(1, SIZE + 1)):
                if p != pos.s0 and pos.pieces.get(p) != "own":
                    out.add((p, frozenset([p]) if p in pos.pieces else frozenset()))
            continue
        vectors, rides = ATOMS[atom]
        rides = rides or count is not None  # W2, K3: a leaper with a count slides
        if len(legs) == 1:
            mods = legs[0]
            letters = "".join(c for c in mods if c in "fblrsv")
            modes = {c for c in mods if c in "mc"} or {"m", "c"}
            for vec in absolute_directions(vectors, letters):
                if "n" in mods:  # lame: the squares passed over must be empty
                    n = max(map(abs, vec))
                    unit, p, blocked = (vec[0] // n, vec[1] // n), pos.s0, False
                    for _ in range(n - 1):
                        p = pos.at(unit, p)
                        blocked |= p is None or pos.content(p, ()) is not None
                    if blocked:
                        continue
                if "p" in mods:  # cannon: over exactly one piece (the screen)
                    for screen, _ in leg_ends(pos, pos.s0, vec, True, count, {"p"}, ()):
                        for p, what in leg_ends(pos, screen, vec, True, None, modes, ()):
                            out.add((p, frozenset([p]) if what == "capture" else frozenset()))
                    continue
                for p, what in leg_ends(pos, pos.s0, vec, rides, count, modes, (), skip_first="j" in mods):
                    out.add((p, frozenset([p]) if what == "capture" else frozenset()))
            continue

        def walk(i, frm, prev, captured, legs=legs, vectors=vectors, rides=rides, count=count):
            mods = legs[i]
            letters = "".join(c for c in mods if c in "fblrsv")
            final = i == len(legs) - 1
            modes = {c for c in mods if c in "mcp"} or ({"m", "c"} if final else {"m"})
            dirs = absolute_directions(vectors, letters) if i == 0 else relative_directions(vectors, letters, prev)
            for vec in dirs:
                for p, what in leg_ends(pos, frm, vec, rides, count, modes, captured):
                    now = captured | {p} if what == "capture" else captured
                    if not final:
                        walk(i + 1, p, vec, now)
                    elif what != "hop":
                        out.add((p, frozenset(now)))

        walk(0, pos.s0, None, frozenset())
    return out


def test_interpreter_on_known_strings():
    """The interpreter itself, on strings whose moves are well known."""
    centre = Position((13, 13), "black", {})
    assert len(betza_moves("N", centre)) == 8
    assert len(betza_moves("KNADcaKmcabK", centre)) == 24 + 1  # the lion: 5x5, and a pass
    assert {to for to, _ in betza_moves("fW", centre)} == {(13, 12)}
    assert {to for to, _ in betza_moves("lfbF", centre)} == {(14, 12), (14, 14), (12, 14)}  # not fr
    assert {to for to, _ in betza_moves("lvA", centre)} == {(15, 11), (15, 15)}  # both left diagonals
    assert {to for to, _ in betza_moves("fnD", Position((13, 13), "black", {(13, 12): "enemy"}))} == set()
    assert {to for to, _ in betza_moves("jsR3", centre)} == {(15, 13), (16, 13), (11, 13), (10, 13)}
    # the rook general's capture over up to two pieces (docs/RULES.md, "Taishin shogi", "Movement",
    # "Range jump"): forward, a friend on 13k, enemies on 13i, 13h, 13g: 13l, x13i, x13h; not 13j, 13g
    line = {(13, 11): "own", (13, 9): "enemy", (13, 8): "enemy", (13, 7): "enemy"}
    forward = {
        (to, caps)
        for to, caps in betza_moves("pafpafcRmcRcpR", Position((13, 13), "black", line))
        if to[0] == 13 and to[1] < 13
    }
    assert forward == {((13, 12), frozenset()), ((13, 9), frozenset({(13, 9)})), ((13, 8), frozenset({(13, 8)}))}


# --------------------------------------------------------------------------------------------
# the table: 114 types, names, promotions, royals
# --------------------------------------------------------------------------------------------


def piece_types():
    return {t.name: t for t in taikyoku.piece_types(VARIANT)}


def test_114_types_86_set_up_28_promoted_only():
    """L16: 86 present initially + 28 more available through promotion."""
    types = piece_types()
    assert len(types) == 114 and len(SET_UP_NAMES) == 86 and len(PROMOTED_ONLY) == 28
    assert set(types) == set(NAMES)
    assert sorted(n for n, t in types.items() if t.promoted_only) == PROMOTED_ONLY
    assert {n for n, t in types.items() if t.royal} == ROYALS


def test_keys_are_the_diagram_ids_upper_cased():
    """T16: the table keys are L18's IDs upper-cased; promoted-only types are keyed by name."""
    types = piece_types()
    assert len({i.upper() for i in ID_OF.values()}) == 86  # unique case-insensitively
    for name, piece_id in ID_OF.items():
        assert types[name].abbrev == piece_id.upper(), name
    for name in PROMOTED_ONLY:
        assert types[name].abbrev == name


def test_promotions_are_the_diagrams_and_the_lists():
    """L18's + entries and L707-L783 give the same promotions (the pawn's: T6)."""
    types = piece_types()
    assert {n: t.promotes_to for n, t in types.items() if t.promotes_to} == PROMOTES
    assert len(PROMOTES) == 77  # L18 maxPromote=77
    prose = {}
    for line in SEED_L707_L783.strip().splitlines():
        a, b = (s.strip().lower() for s in line.split("->"))
        prose[a] = {"gold": "gold general", "freee cat": "free cat"}.get(b, b)  # L783, L774
    assert prose == {n.lower(): p.lower() for n, p in PROMOTES.items()}


def test_non_promoting_types_are_the_list_of_l787():
    """L787: the hook mover, tengu, fire demon, heavenly tetrarch, great and vice general, furious
    fiend, free dream eater and free demon do not promote; nor do promoted pieces."""
    assert NON_PROMOTING == sorted(
        [
            "Hook mover",
            "Tengu",
            "Fire demon",
            "Heavenly tetrarch",
            "Great general",
            "Vice general",
            "Furious fiend",
            "Free dream eater",
            "Free demon",
        ]
    )
    types = piece_types()
    assert all(types[n].promotes_to is None for n in PROMOTED_ONLY)


def test_promoted_forms_have_the_betza_of_their_type():
    """Every + entry of L18 moves as the type it names (the tokin as the gold general, T6), and
    the promoted-only types' strings are those of L135-L162."""
    for piece_id, (name, betza) in PROMOTED_FORM.items():
        assert BETZA["Gold general" if name == "Tokin" else name] == betza, piece_id
    prose = dict(re.fullmatch(r"(.+) \((\w+)\)", line).groups() for line in SEED_L135_L162.strip().splitlines())
    assert {n.lower(): b for n, b in prose.items()} == {n.lower(): BETZA[n] for n in PROMOTED_ONLY}


# --------------------------------------------------------------------------------------------
# every piece type against its Betza string
# --------------------------------------------------------------------------------------------


def keyed(moves):
    """Interpreter moves ((file, rank), ...) as engine move keys."""
    return {(sq(*to), frozenset(sq(*c) for c in caps)) for to, caps in moves}


def engine_moves(g, square):
    """{(to, captures): sorted promotion flags} of the moves of the piece on `square`."""
    out = {}
    for m in g.moves_from(square):
        assert m.from_square == square
        out.setdefault((m.to_square, frozenset(m.captures)), []).append(m.promotes)
    return {key: sorted(flags) for key, flags in out.items()}


def test_the_passers_are_the_list_of_l697():
    """The pieces whose Betza passes on the empty board (`mabK`, `mcabK`...) are exactly L697's."""
    centre = Position((13, 13), "black", {})
    assert {n for n in NAMES if ((13, 13), frozenset()) in betza_moves(BETZA[n], centre)} == PASSERS


@pytest.mark.parametrize("color", ["black", "white"])
@pytest.mark.parametrize("name", NAMES)
def test_moves_on_an_empty_board(name, color):
    """Each type alone on 13m: exactly its Betza string's moves, none twice, no capture and no
    promotion; a pass (a move back to 13m) only for L697's pieces."""
    g = make_game((START, name, color), to_move=color)
    piece = g.piece_at(START)
    assert (piece.name, piece.color, piece.promoted) == (name, color, name in PROMOTED_ONLY)
    moves = list(g.moves_from(START))
    keys = [(m.to_square, frozenset(m.captures)) for m in moves]
    assert len(keys) == len(set(keys)), f"{name}: a move generated twice"
    assert not any(m.captures or m.promotes for m in moves)
    passes = [m for m in moves if m.to_square == START]
    assert len(passes) == (name in PASSERS) and all(m.is_pass for m in passes)
    expected = keyed(betza_moves(BETZA[name], Position(parse_sq(START), color, {})))
    got = set(keys)
    assert got == expected, (
        f"{name} ({color}), Betza {BETZA[name]}: "
        f"missing {sorted(expected - got)[:8]}, extra {sorted(got - expected)[:8]}"
    )


def test_emperor_reaches_every_square():
    """L564: the emperor (U) jumps to any square of the board."""
    g = make_game(("25y", "Emperor", "black"))
    assert {m.to_square for m in g.moves_from("25y")} == BOARD.all_squares - {"25y"}


# ---- random crowded boards ----

FILLERS = [
    "Pawn",
    "Pawn",
    "Gold general",
    "Silver general",
    "Dog",
    "Rook",
    "Lion",
    "Knight",
    "Bishop",
    "Deva",
    "Dark spirit",
    "Great general",
]
LINES = [(0, 1), (1, 1), (1, 0), (1, -1), (0, -1), (-1, -1), (-1, 0), (-1, 1)]


def after_type(name, promoted, victims):
    """(type, promoted) of a mover after capturing `victims` (in order): L701, L787, L789."""
    conferred = [CONFERS[v] for v in victims if v in CONFERS]
    if conferred and not potentially_royal(name):
        return conferred[-1], True
    if victims and not promoted and name in PROMOTES:
        return PROMOTES[name], True
    return name, promoted


def rank_from_front(square, color):
    rank = parse_sq(square)[1]
    return rank - 1 if color == "black" else SIZE - rank


def protected(target, s0, color, board):
    """T10 (L564): whether the enemy royal on `target` is protected from an emperor of `color`
    moving there from `s0`: after that capture some piece of the royal's side could capture on
    `target` (any of its moves; a defending emperor's own restriction is ignored)."""
    enemy = other(color)
    after = {p: v for p, v in board.items() if p not in (s0, target)}
    after[target] = (color, "Emperor")
    for p, (c, name) in after.items():
        if c != enemy:
            continue
        view = {q: ("own" if cc == enemy else "enemy") for q, (cc, _) in after.items() if q != p}
        if any(target in caps for _, caps in betza_moves(BETZA[name], Position(p, enemy, view))):
            return True
    return False


def reference(board, s0, passes=0):
    """{(to, captures): promotion flags} of the piece on `s0` of `board` ((file, rank) -> (color,
    name, promoted)), from its Betza string, the emperor's restriction, the pass limit (L697:
    `passes` is its side's passes in a row) and the promotion rules (L701, L703, L789)."""
    color, name, promoted = board[s0]
    view = {p: ("own" if c == color else "enemy") for p, (c, _, _) in board.items() if p != s0}
    out = {}
    for to, caps in betza_moves(BETZA[name], Position(s0, color, view)):
        if (
            name == "Emperor"
            and caps
            and board[to][1] in ROYALS
            and protected(to, s0, color, {p: (c, n) for p, (c, n, _) in board.items()})
        ):
            continue
        if to == s0 and not caps and passes >= 3:
            continue
        victims = [board[p][1] for p in caps if p != to] + [board[p][1] for p in caps if p == to]
        if name in FARPROMOTE and not promoted and not caps and rank_from_front(sq(*to), color) == 0:
            flags = [False, True]
        else:
            flags = [after_type(name, promoted, victims) != (name, promoted)]
        out[(sq(*to), frozenset(sq(*c) for c in caps))] = flags
    return out


def random_board(rng, s0, color, fillers=FILLERS, most=24, near=3):
    """Up to `most` pieces around `s0`: most within `near`, some further away on its lines."""
    board = {}
    for _ in range(rng.randint(0, most)):
        if rng.random() < 0.6:
            p = (s0[0] + rng.randint(-near, near), s0[1] + rng.randint(-near, near))
        else:
            dx, dy = rng.choice(LINES)
            i = rng.randint(2, 14)
            p = (s0[0] + i * dx, s0[1] + i * dy)
        if p != s0 and p not in board and 1 <= p[0] <= SIZE and 1 <= p[1] <= SIZE:
            board[p] = (color if rng.random() < 0.4 else other(color), rng.choice(fillers), False)
    return board


def check_random_position(rng, name, fillers=FILLERS):
    color = rng.choice(["black", "white"])
    s0 = (rng.randint(1, SIZE), rng.randint(1, SIZE))
    board = random_board(rng, s0, color, fillers)
    board[s0] = (color, name, name in PROMOTED_ONLY)
    g = make_game(*[(sq(*p), n, c) for p, (c, n, _) in board.items()], to_move=color)
    expected = reference(board, s0)
    got = engine_moves(g, sq(*s0))
    where = f"{name} ({color}) on {sq(*s0)}, pieces { {sq(*p): v[:2] for p, v in board.items() if p != s0} }"
    assert set(got) == set(expected), (
        f"{where}: missing {sorted((t, sorted(c)) for t, c in set(expected) - set(got))[:6]}, "
        f"extra {sorted((t, sorted(c)) for t, c in set(got) - set(expected))[:6]}"
    )
    for key, flags in got.items():
        assert flags == expected[key], f"{where}: {key} promotes {flags}, expected {expected[key]}"


def blocker_dependent(betza):
    """Moves that depend on other pieces: sliding, hopping, lame, multi-leg."""
    return any(
        count is not None or len(legs) > 1 or ATOMS.get(atom, (0, True))[1] or set(legs[0]) & set("npj")
        for legs, atom, count in parse_betza(betza)
    )


CROWDED = [n for n in NAMES if blocker_dependent(BETZA[n]) and n != "Emperor"]


@pytest.mark.parametrize("name", CROWDED)
def test_moves_on_crowded_boards_match_the_betza(name):
    """40 random positions each: the piece anywhere (edges too), for either side, with up to 24
    pieces of both colours near it and on its lines. Exactly its Betza moves, each once, promoting
    as L701/L789 say (the capture rule; a deva's or dark spirit's captor becomes what it confers)."""
    rng = random.Random(f"taishin-{name}")
    for _ in range(40):
        check_random_position(rng, name)


def test_steppers_on_crowded_boards_match_the_betza():
    """The other (leaping and stepping) types: 10 random positions each."""
    rng = random.Random("taishin-steppers")
    for name in NAMES:
        if name not in CROWDED and name != "Emperor":
            for _ in range(10):
                check_random_position(rng, name)


ROYAL_DEFENDERS = [
    "Pawn",
    "Gold general",
    "Rook",
    "Bishop",
    "Lion",
    "Knight",
    "Great general",
    "Lion dog",
    "Fire demon",
    "Hook mover",
    "Emperor",
    "King",
    "Prince",
    "Heavenly tetrarch",
    "Free eagle",
]


def test_emperor_on_crowded_boards():
    """T10 (L564, L800): 60 random positions with enemy royals and their defenders: the emperor
    reaches every empty or enemy square, but not an enemy royal that a piece of its side could
    capture on that square after the capture."""
    rng = random.Random("taishin-emperor")
    refused = 0
    for _ in range(60):
        color = rng.choice(["black", "white"])
        s0 = (rng.randint(1, SIZE), rng.randint(1, SIZE))
        board = {}
        for _ in range(rng.randint(1, 3)):
            p = (rng.randint(1, SIZE), rng.randint(1, SIZE))
            if p != s0:
                board[p] = (other(color), rng.choice(["King", "Prince", "Emperor"]), False)
        royals = list(board)
        for _ in range(rng.randint(0, 12)):
            r = rng.choice(royals)
            p = (r[0] + rng.randint(-3, 3), r[1] + rng.randint(-3, 3))
            if p != s0 and p not in board and 1 <= p[0] <= SIZE and 1 <= p[1] <= SIZE:
                side = other(color) if rng.random() < 0.75 else color
                board[p] = (side, rng.choice(ROYAL_DEFENDERS), False)
        board = {p: (c, n, n == "Emperor") for p, (c, n, _) in board.items()}
        board[s0] = (color, "Emperor", True)
        g = make_game(*[(sq(*p), n, c) for p, (c, n, _) in board.items()], to_move=color)
        expected, got = reference(board, s0), engine_moves(g, sq(*s0))
        refused += sum(1 for p, (c, n, _) in board.items() if c != color and n in ROYALS) - sum(
            1 for (to, caps) in expected if caps and board[parse_sq(to)][1] in ROYALS
        )
        assert set(got) == set(expected), (
            f"emperor ({color}) on {sq(*s0)}, pieces { {sq(*p): v[:2] for p, v in board.items()} }: "
            f"missing {sorted(set(expected) - set(got))[:6]}, extra {sorted(set(got) - set(expected))[:6]}"
        )
    assert refused > 20  # the restriction was exercised


# --------------------------------------------------------------------------------------------
# worked examples of the Taishin atoms and promotions (docs/RULES.md, "Taishin shogi";
# docs/PIECE_TABLE.md, "Movement atoms")
# --------------------------------------------------------------------------------------------

PLAIN_LION_DOG = {k(s) for line in OTHER_SEVEN_LINES_FROM_9I.values() for s in line}


def test_lion_dog_worked_example_three_enemies_in_a_line():
    """docs/PIECE_TABLE.md, `lionline(D,n)`: white pawns on 9h, 9g, 9f before a black lion dog on
    9i. Two legs, at most two captures (L300-L304): 8 forward moves, 21 plain ones, a pass: 30."""
    g = make_game(
        ("9i", "Lion dog", "black"), ("9h", "Pawn", "white"), ("9g", "Pawn", "white"), ("9f", "Pawn", "white")
    )
    forward = {
        k("9h", "9h"),
        k("9g", "9g"),
        k("9f", "9f"),  # step, jumps to the 2nd and 3rd square (L300)
        k("9i", "9h"),  # igui (L301)
        k("9g", "9h", "9g"),  # capture 9h, on to 9g (L302)
        k("9f", "9h", "9f"),  # capture 9h, jump over 9g to 9f (L302): not Dai dai's three captures
        k("9h", "9g", "9h"),  # capture 9g, back to 9h (L303)
        k("9f", "9g", "9f"),  # capture 9g, on to 9f (L303)
    }
    assert engine_moves(g, "9i").keys() == forward | PLAIN_LION_DOG | {k("9i")}
    assert len(g.moves_from("9i")) == 30
    assert not any(len(m.captures) > 2 for m in g.moves_from("9i"))


def test_lion_dog_worked_example_friend_on_the_first_square():
    """docs/PIECE_TABLE.md, `lionline(D,n)`: a black pawn on 9h, a white one on 9g: 9g by a jump,
    9f, 9f after taking 9g; no igui and no pass through 9h, nothing lands on it."""
    g = make_game(("9i", "Lion dog", "black"), ("9h", "Pawn", "black"), ("9g", "Pawn", "white"))
    assert engine_moves(g, "9i").keys() == {k("9g", "9g"), k("9f"), k("9f", "9g")} | PLAIN_LION_DOG | {k("9i")}


def test_lion_dog_captures_the_first_and_jumps_a_friend():
    """L302: capture on the first square, then to the third, over whatever stands on the second
    (`cafmpafK`): here a friend on 9g (Dai dai's lion dog cannot do this)."""
    g = make_game(
        ("9i", "Lion dog", "black"), ("9h", "Pawn", "white"), ("9g", "Pawn", "black"), ("9f", "Pawn", "white")
    )
    got = engine_moves(g, "9i")
    assert {k("9h", "9h"), k("9i", "9h"), k("9f", "9f"), k("9f", "9h", "9f")} <= got.keys()
    assert not any(to == "9g" or "9g" in caps for to, caps in got)


def test_lion_dog_worked_example_for_white():
    """The first example turned by 180 degrees: White's forward is towards rank y."""
    g = make_game(
        ("17q", "Lion dog", "white"),
        ("17r", "Pawn", "black"),
        ("17s", "Pawn", "black"),
        ("17t", "Pawn", "black"),
        to_move="white",
    )
    got = engine_moves(g, "17q")
    forward = {
        k("17r", "17r"),
        k("17s", "17s"),
        k("17t", "17t"),
        k("17q", "17r"),
        k("17s", "17r", "17s"),
        k("17t", "17r", "17t"),
        k("17r", "17s", "17r"),
        k("17t", "17s", "17t"),
    }
    assert forward <= got.keys() and len(got) == 30


def test_fire_demon_worked_example():
    """docs/RULES.md, "Taishin shogi", "Movement" (area moves, double steps): a black fire demon on
    13m behind a wall of its pawns (14l, 13l, 12l), white pawns on 13k and 14n. It cannot reach 13k (four king steps round the wall, no jump: L214);
    its area move reaches 12k, 14k, 11l, 15l; its demon move (L216-L218) takes 14n and goes on to
    any neighbour of 14n, or back (igui); it may pass."""
    pieces = [
        ("13m", "Fire demon", "black"),
        ("14l", "Pawn", "black"),
        ("13l", "Pawn", "black"),
        ("12l", "Pawn", "black"),
        ("13k", "Pawn", "white"),
        ("14n", "Pawn", "white"),
    ]
    g = make_game(*pieces)
    got = engine_moves(g, "13m")
    assert not any(to == "13k" or "13k" in caps for to, caps in got)
    assert {k("12k"), k("14k"), k("11l"), k("15l")} <= got.keys()
    after_14n = {k(s, "14n") for s in ("15m", "14m", "15n", "13n", "15o", "14o", "13o")}
    assert after_14n | {k("14n", "14n"), k("13m", "14n"), k("13m")} <= got.keys()
    assert {key for key in got if "14n" in key[1]} == after_14n | {k("14n", "14n"), k("13m", "14n")}
    assert all(flags == [False] for flags in got.values())  # it does not promote (L787)
    # a lion on 13m jumps over the wall
    g = make_game(*[(s, "Lion", c) if s == "13m" else (s, n, c) for s, n, c in pieces])
    assert k("13k", "13k") in engine_moves(g, "13m")


def test_great_general_worked_example():
    """docs/RULES.md, "Taishin shogi", "Movement", "Range jump" (L228): a black great general on 13m;
    up file 13: 13l empty, a black pawn on 13k, 13j empty, white pawn 13i, silver 13h, gold 13g, 13f
    empty. It moves to 13l, captures 13i (over one piece) or 13h (over two); not 13j, 13g or 13f."""
    g = make_game(
        ("13m", "Great general", "black"),
        ("13k", "Pawn", "black"),
        ("13i", "Pawn", "white"),
        ("13h", "Silver general", "white"),
        ("13g", "Gold general", "white"),
    )
    ahead = {key for key in engine_moves(g, "13m") if key[0][:2] == "13" and parse_sq(key[0])[1] < 13}
    assert ahead == {k("13l"), k("13i", "13i"), k("13h", "13h")}


def test_jumping_generals_jump_and_capture_royals():
    """T8: no rank limit: a great general jumps a king and a prince and captures an emperor."""
    g = make_game(
        ("13m", "Great general", "black"),
        ("13l", "King", "white"),
        ("13k", "Prince", "black"),
        ("13j", "Emperor", "white"),
        ("1y", "King", "black"),
    )
    got = engine_moves(g, "13m")
    assert {k("13l", "13l"), k("13j", "13j")} <= got.keys()


def emperor_example(gold_square):
    return make_game(
        ("25y", "Emperor", "black"),
        ("13b", "King", "white"),
        (gold_square, "Gold general", "white"),
        ("1a", "Pawn", "white"),
    )


def test_emperor_cannot_capture_a_protected_king():
    """docs/RULES.md, "Taishin shogi", "Movement", "The emperor" (L564): a black emperor on 25y; a
    white king on 13b, protected by a white gold on 13a (its forward step reaches 13b); a white pawn
    on 1a. Every empty square, x1a, x13a; not 13b."""
    g = emperor_example("13a")
    got = engine_moves(g, "25y")
    empty = BOARD.all_squares - {"25y", "13b", "13a", "1a"}
    assert got.keys() == {k(s) for s in empty} | {k("1a", "1a"), k("13a", "13a")}
    assert len(got) == 623


def test_emperor_captures_an_unprotected_king_and_wins():
    """The emperor (docs/RULES.md, "Taishin shogi", "Movement"): with the gold on 10a nothing
    protects 13b: the emperor takes the king and wins."""
    g = emperor_example("10a")
    assert k("13b", "13b") in engine_moves(g, "25y")
    play(g, "25y", "13b")
    assert g.is_over and g.result == "black" and g.termination == "royal_capture"


def test_a_defending_emperor_protects_its_royals():
    """A white emperor anywhere protects the white king (it could capture on 13b), its own
    restriction ignored: the black gold on 13c protects the black emperor there."""
    g = make_game(
        ("25y", "Emperor", "black"),
        ("13b", "King", "white"),
        ("1y", "Emperor", "white"),
        ("13c", "Gold general", "black"),
    )
    assert k("13b", "13b") not in engine_moves(g, "25y")
    g.remove("1y")
    assert k("13b", "13b") in engine_moves(g, "25y")


def test_emperor_may_move_into_check():
    """L566: aside from the restriction, the emperor may move into check."""
    g = make_game(("25y", "Emperor", "black"), ("13b", "King", "white"), ("13k", "Rook", "white"))
    play(g, "25y", "13m")
    assert g.in_check("black") and not g.is_over


# ---- confers (L789; docs/RULES.md, "Taishin shogi", "Promotion", "Conferred promotion") ----


def capture_result(captor, victims, captor_promoted=False, path=None):
    """Black `captor` on 13m takes white `victims` (on 13l, then 13k for a double capture) and the
    piece it becomes: (name, promoted)."""
    squares = ["13l", "13k"][: len(victims)]
    g = make_game(
        ("13m", captor, "black", captor_promoted), *[(s, v, "white") for s, v in zip(squares, victims)], *kings()
    )
    to, captures = path or (squares[-1], squares)
    m = play(g, "13m", to, captures=captures)
    piece = g.piece_at(to)
    assert piece.color == "black"
    return piece.name, piece.promoted, m.promotes


def test_capturing_a_deva_makes_a_teaching_king():
    """Conferred promotion (L789): an unpromoted rook that takes a deva becomes a teaching king, not
    a dragon king."""
    assert capture_result("Rook", ["Deva"]) == ("Teaching king", True, True)
    assert capture_result("Rook", ["Pawn"]) == ("Dragon king", True, True)


def test_capturing_a_dark_spirit_with_a_promoted_piece():
    """Conferred promotion (L789): a dragon king that was a rook takes a dark spirit: divine dragon
    (promoted pieces do not promote further, L787, except by this rule)."""
    assert capture_result("Rook", ["Dark spirit"], captor_promoted=True) == ("Divine dragon", True, True)
    assert capture_result("Rook", ["Pawn"], captor_promoted=True) == ("Dragon king", True, False)


def test_capturing_a_teaching_king_or_divine_dragon_confers_it_too():
    assert capture_result("Gold general", ["Teaching king"]) == ("Teaching king", True, True)
    assert capture_result("Gold general", ["Divine dragon"]) == ("Divine dragon", True, True)


def test_the_last_conferring_capture_wins():
    """L789 (docs/RULES.md, "Conferred promotion"): a lion takes a deva, then a dark spirit: divine
    dragon; the other way round: teaching king."""
    assert capture_result("Lion", ["Deva", "Dark spirit"]) == ("Divine dragon", True, True)
    assert capture_result("Lion", ["Dark spirit", "Deva"]) == ("Teaching king", True, True)
    # igui on a deva confers too
    assert capture_result("Lion", ["Deva"], path=("13m", ["13l"])) == ("Teaching king", True, True)


def test_non_promoting_pieces_take_the_conferred_type():
    """Conferred promotion (L789): a hook mover (which never promotes, L787) that takes a deva:
    teaching king."""
    assert capture_result("Hook mover", ["Deva"]) == ("Teaching king", True, True)
    assert capture_result("Hook mover", ["Pawn"]) == ("Hook mover", False, False)


def test_royal_and_potentially_royal_captors_promote_normally():
    """L789: emperors, kings, princes and drunk elephants promote to their normal promoted forms,
    or stay as they are if already promoted."""
    assert capture_result("King", ["Deva"]) == ("Emperor", True, True)
    assert capture_result("Prince", ["Dark spirit"]) == ("King", True, True)
    assert capture_result("Drunk elephant", ["Deva"]) == ("Prince", True, True)
    assert capture_result("Drunk elephant", ["Deva"], captor_promoted=True) == ("Prince", True, False)
    assert capture_result("Emperor", ["Dark spirit"]) == ("Emperor", True, False)


def test_a_conferred_piece_reads_back_from_the_position_text():
    g = make_game(("13m", "Rook", "black"), ("13l", "Deva", "white"), *kings())
    play(g, "13m", "13l")
    again = taikyoku.Game.from_text(g.to_text(), variant=VARIANT)
    assert again.to_text() == g.to_text() and again.piece_at("13l").name == "Teaching king"
    g.undo()
    assert (g.piece_at("13m").name, g.piece_at("13l").name) == ("Rook", "Deva")


# ---- the last-rank promotion (L703; docs/RULES.md, "Taishin shogi", "Promotion", "The last rank") ----


@pytest.mark.parametrize("color", ["black", "white"])
@pytest.mark.parametrize("name", sorted(FARPROMOTE))
def test_last_rank_promotion_is_a_choice(name, color):
    """L703: a pawn, stone or iron general reaching the last rank without capturing may promote or
    not: each such move comes twice (`+` and `=`); a capture there promotes, one move."""
    start = "13b" if color == "black" else "13x"
    g = make_game((start, name, color), *kings(), to_move=color)
    got = engine_moves(g, start)
    last = [key for key in got if rank_from_front(key[0], color) == 0]
    assert last and all(got[key] == [False, True] for key in last)
    for m in g.moves_from(start):
        h = g.clone()
        assert h.play(m.notation) == m
        if rank_from_front(m.to_square, color) == 0:
            assert m.notation.endswith("+" if m.promotes else "=")
    # capturing on the last rank: promotion, one move
    target = [key[0] for key in last][0]
    g.place(target, "Pawn", other(color))
    captures = [m for m in g.moves_from(start) if m.to_square == target]
    assert len(captures) == 1 and captures[0].promotes and captures[0].notation.endswith("+")


def test_pawn_worked_example():
    """The last rank (L703): a black pawn on 13b: P-13a= (stays a pawn, dead) and P-13a+ (gold
    general)."""
    g = make_game(("13b", "Pawn", "black"), *kings())
    assert sorted(m.notation for m in g.moves_from("13b")) == ["P-13a+", "P-13a="]
    h = g.clone()
    h.play("P-13a+")
    promoted = h.piece_at("13a")
    assert (promoted.name, promoted.promoted, promoted.abbrev) == ("Gold general", True, "+P")
    g.play("P-13a=")
    piece = g.piece_at("13a")
    assert (piece.name, piece.promoted) == ("Pawn", False)
    play(g, "25a", "24a")  # White's king moves; Black's turn again
    g.place("12a", "Gold general", "white")
    g.place("14b", "Gold general", "white")
    assert g.moves_from("13a") == []  # a dead piece: no move, even with enemies beside it
    g = make_game(("13b", "Pawn", "black"), ("13a", "Silver general", "white"), *kings())
    assert [m.notation for m in g.moves_from("13b")] == ["Px13a+"]


def test_no_last_rank_choice_elsewhere():
    """Only those three: a lance or a gold reaching the last rank does not promote; a pawn that
    does not reach it does not either."""
    g = make_game(("13c", "Lance", "black"), ("10b", "Gold general", "black"), ("5c", "Pawn", "black"), *kings())
    for square in ("13c", "10b", "5c"):
        assert all(flags == [False] for flags in engine_moves(g, square).values()), square


# --------------------------------------------------------------------------------------------
# skipping a turn (L697, L809; docs/RULES.md, "Taishin shogi", "Movement", "Passing")
# --------------------------------------------------------------------------------------------


def passes_of(g, square):
    return [m for m in g.moves_from(square) if m.is_pass]


def test_three_passes_in_a_row_then_no_more():
    """L697: it is illegal to skip a turn more than three consecutive times; a non-pass move starts
    the count again. White's passes are its own count."""
    g = make_game(("13m", "Lion", "black"), ("13c", "Lion", "white"), ("12l", "Pawn", "white"), *kings())
    pass_action = g.action_of(passes_of(g, "13m")[0])
    for _ in range(3):
        assert len(passes_of(g, "13m")) == 1
        g.play(passes_of(g, "13m")[0])
        g.play(passes_of(g, "13c")[0])
    assert passes_of(g, "13m") == []  # the fourth: not legal
    assert all(not m.is_pass for m in g.legal_moves())
    assert pass_action not in set(int(a) for a in g.legal_actions())
    assert k("13m", "12l") in engine_moves(g, "13m")  # igui is not a pass
    # the count is part of the position: it reads back from the text
    again = taikyoku.Game.from_text(g.to_text(), variant=VARIANT)
    assert passes_of(again, "13m") == [] and "passes=3,3" in g.to_text(history=False)
    play(g, "13m", "13l", captures=[])  # a move: the count starts again
    assert passes_of(g, "13c") == []  # White has passed three times in a row
    play(g, "13c", "13d", captures=[])
    assert len(passes_of(g, "13l")) == 1
    g.play(passes_of(g, "13l")[0])
    assert len(passes_of(g, "13d")) == 1
    g.undo()
    g.undo()
    assert passes_of(g, "13c") == []  # undo restores the count


def test_a_text_with_more_passes_than_allowed_is_refused():
    text = make_game(*kings()).to_text()
    assert taikyoku.Game.from_text(text + " passes=3,1", variant=VARIANT).to_text().endswith("passes=3,1")
    with pytest.raises(taikyoku.PositionTextError):
        taikyoku.Game.from_text(text + " passes=4,0", variant=VARIANT)


def test_every_kind_of_pass_counts():
    """A pass is any move back to the mover's square without a capture (T11): the lion's, the fire
    demon's (area and double), the horned falcon's (lionline) and the vice general's (area) count
    together."""
    g = make_game(
        ("13m", "Lion", "black"),
        ("5m", "Fire demon", "black"),
        ("20m", "Horned falcon", "black"),
        ("9t", "Vice general", "black"),
        ("13c", "Lion", "white"),
        *kings(),
    )
    for square in ("13m", "5m", "20m"):
        g.play(passes_of(g, square)[0])
        g.play(passes_of(g, "13c")[0])
    assert all(passes_of(g, s) == [] for s in ("13m", "5m", "20m", "9t"))


@pytest.mark.parametrize(
    "name,open_squares,closed_squares",
    [
        ("Free eagle", ["14l", "12l", "14n", "12n"], ["13l", "14m", "12m", "13n"]),  # diagonal neighbours only
        ("Golden bird", ["13l", "14m", "12m", "13n"], ["14l", "12l", "14n", "12n"]),  # orthogonal ones only
        ("Horned falcon", ["13l"], ["14l", "12l", "14m", "12m", "14n", "13n", "12n"]),  # the square in front
        ("Kirin master", ["13l"], ["14l", "12l", "14m", "12m", "14n", "13n", "12n"]),
        ("Soaring eagle", ["14l", "12l"], ["13l", "14m", "12m", "14n", "13n", "12n"]),  # forward diagonals
        ("Phoenix master", ["14l", "12l"], ["13l", "14m", "12m", "14n", "13n", "12n"]),
    ],
)
def test_pass_only_through_the_seeds_squares(name, open_squares, closed_squares):
    """L697's parenthesis: each of these may pass only through the squares named; with each of
    them empty (the others held by friends) it may pass, with only the others empty it may not."""
    for empty_one in open_squares:
        friends = [s for s in open_squares + closed_squares if s != empty_one]
        g = make_game(("13m", name, "black"), *[(s, "Pawn", "black") for s in friends])
        assert len(passes_of(g, "13m")) == 1, (name, empty_one)
    g = make_game(("13m", name, "black"), *[(s, "Pawn", "black") for s in open_squares])
    assert passes_of(g, "13m") == [], name


# --------------------------------------------------------------------------------------------
# promotion by capture (L701, L785, L787)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_capture_promotes(name):
    """L701: every capture promotes a promoting type, compulsorily, to its L707-L783 promotion;
    non-promoting types (L787) and promoted pieces stay. Ringed by white pawns, every capture of
    the piece is played."""
    ring = [(sq(f, r), "Pawn", "white") for f in range(10, 17) for r in range(10, 17) if (f, r) != (13, 13)]
    g = make_game((START, name, "black"), *ring, ("1y", "King", "black"), ("25a", "King", "white"))
    moves = [m for m in g.moves_from(START) if m.captures]
    assert moves, name
    for m in moves:
        h = g.clone()
        h.play(m)
        piece = h.piece_at(m.to_square)
        if name in PROMOTES:
            assert m.promotes and (piece.name, piece.promoted) == (PROMOTES[name], True), m.notation
            assert piece.abbrev == "+" + ID_OF[name].upper() and m.notation.endswith("+")
        else:
            assert not m.promotes and (piece.name, piece.promoted) == (name, name in PROMOTED_ONLY), m.notation


def test_moves_without_capture_never_promote():
    """L701: it is illegal to promote a piece without capturing (but L703's)."""
    g = make_game(("13m", "Rook", "black"), ("9i", "Lion", "black"), *kings())
    assert all(not m.promotes for m in g.legal_moves())


def test_a_double_capture_promotes_once_at_the_end():
    """L785: promotion happens at the end of the turn: a lion that takes two pieces becomes a lion
    hawk once, after both captures."""
    g = make_game(("13m", "Lion", "black"), ("13l", "Pawn", "white"), ("13k", "Pawn", "white"), *kings())
    m = play(g, "13m", "13k", captures=["13l", "13k"])
    assert m.promotes and m.notation == "LNx13lx13k+"
    assert g.piece_at("13l") is None and g.piece_at("13k").name == "Lion hawk"


def test_a_promoted_piece_does_not_promote_again():
    g = make_game(("13m", "Pawn", "black", True), ("13l", "Pawn", "white"), *kings())
    m = play(g, "13m", "13l")
    assert not m.promotes and (g.piece_at("13l").name, g.piece_at("13l").promoted) == ("Gold general", True)


# --------------------------------------------------------------------------------------------
# royals and the end of the game (L693, L795-L822)
# --------------------------------------------------------------------------------------------


def test_capturing_the_last_royal_wins():
    """L816: the player who captures the opponent's last remaining royal wins."""
    g = make_game(("13m", "Rook", "black"), ("13c", "King", "white"), ("1y", "King", "black"))
    play(g, "13m", "13c")
    assert g.is_over and g.result == "black" and g.termination == "royal_capture"


@pytest.mark.parametrize("royal", ["King", "Prince", "Emperor"])
def test_each_royal_keeps_its_side_alive(royal):
    """L795, L816: a player with more than one royal may lose one; King, Prince and Emperor all
    count, and losing the last one loses."""
    g = make_game(("13m", "Rook", "black"), ("13c", "King", "white"), ("3c", royal, "white"), ("1y", "King", "black"))
    assert g.royal_count("white") == 2
    play(g, "13m", "13c")
    assert not g.is_over and g.royal_count("white") == 1
    # the last one lost loses
    g = make_game(("13m", "Rook", "black"), ("13c", royal, "white"), ("1y", "King", "black"))
    play(g, "13m", "13c")
    assert g.is_over and g.result == "black" and g.termination == "royal_capture"


def test_the_drunk_elephant_is_only_potentially_royal():
    g = make_game(
        ("13m", "Rook", "black"), ("13c", "King", "white"), ("3c", "Drunk elephant", "white"), ("1y", "King", "black")
    )
    assert g.royal_count("white") == 1
    play(g, "13m", "13c")
    assert g.is_over and g.result == "black"


def test_a_drunk_elephant_that_captures_becomes_a_royal_prince():
    """L709: drunk elephant -> prince (royal)."""
    g = make_game(("13m", "Drunk elephant", "black"), ("13l", "Pawn", "white"), *kings())
    assert g.royal_count("black") == 1
    play(g, "13m", "13l")
    assert g.piece_at("13l").name == "Prince" and g.royal_count("black") == 2


def test_moving_into_check_is_legal():
    """L176, L802: the king may move into check."""
    g = make_game(("13m", "King", "black"), ("11j", "Rook", "white"), ("25a", "King", "white"))
    assert "11k" in {m.to_square for m in g.moves_from("13m")}
    play(g, "13m", "11k")
    assert g.in_check("black") and not g.is_over


def test_no_legal_move_loses():
    """L822: a player with no legal move (stalemate) loses. Black's king on 1a is boxed in by its
    own pawns: 2a is dead on the last rank, 1b and 2b are blocked by the king and 2a."""
    g = make_game(
        ("1a", "King", "black"),
        ("2a", "Pawn", "black"),
        ("1b", "Pawn", "black"),
        ("2b", "Pawn", "black"),
        ("25y", "King", "white"),
    )
    assert g.legal_moves() == []
    assert g.is_over and g.result == "white" and g.termination == "no_moves"


def test_repetition_is_a_draw():
    """L832: the fourth occurrence of a position, same player to move, is a draw."""
    g = make_game(("13m", "Rook", "black"), ("13c", "Rook", "white"), *kings())
    for _ in range(4):
        for frm, to in (("13m", "14m"), ("13c", "14c"), ("14m", "13m"), ("14c", "13c")):
            if g.is_over:
                break
            play(g, frm, to)
    assert g.is_over and g.termination == "repetition" and g.result == "draw"


# --------------------------------------------------------------------------------------------
# names: English names, the seed's other names, the diagram's IDs
# --------------------------------------------------------------------------------------------

ALIASES = [
    ("Gold", "Gold general"),  # L783 "Pawn -> Gold"
    ("Crown prince", "Prince"),
]  # L18, the diagram's name


@pytest.mark.parametrize("name", NAMES)
def test_place_by_name_in_any_case(name):
    """Every type by its English name (any case); a promoted-only type is placed promoted."""
    for spelling in (name, name.lower(), name.upper(), name.title()):
        g = make_game((START, spelling, "black"))
        piece = g.piece_at(START)
        assert (piece.name, piece.promoted) == (name, name in PROMOTED_ONLY), spelling


@pytest.mark.parametrize("name,piece_id", sorted(ID_OF.items()))
def test_place_by_diagram_id_in_any_case(name, piece_id):
    """Every set-up type by its L18 ID, as the diagram writes it, upper- or lower-cased."""
    for spelling in (piece_id, piece_id.lower(), piece_id.upper()):
        g = make_game((START, spelling, "white"))
        assert g.piece_at(START).name == name, spelling


@pytest.mark.parametrize("alias,name", ALIASES)
def test_place_by_the_seeds_other_names(alias, name):
    for spelling in (alias, alias.lower(), alias.upper()):
        g = make_game((START, spelling, "black"))
        assert g.piece_at(START).name == name, spelling


def test_alias_list_is_complete():
    """The seed's other names for the same pieces: "Gold" (L783) and "Crown prince" (L18). Not
    aliases: the diagram's "tokin" (T6), the typo "Freee Cat" (L774)."""
    text = (VARIANT_DIR / "taishin.pieces").read_text(encoding="utf-8")
    in_file = [line.split("|", 1)[1].strip() for line in text.splitlines() if line.startswith("alias ")]
    assert sorted(in_file) == sorted(a for a, _ in ALIASES)
    types = piece_types()
    assert sorted((a, n) for n, t in types.items() for a in t.aliases) == sorted(ALIASES)


def test_place_the_promoted_side_of_a_set_up_type():
    """`promoted=True`: a set-up type's promoted form, written + and the type's ID."""
    g = make_game((START, "p", "black", True), ("1a", "Kirin", "white", True), ("2a", "K", "white", True))
    assert (g.piece_at(START).name, g.piece_at(START).abbrev) == ("Gold general", "+P")
    assert (g.piece_at("1a").name, g.piece_at("1a").abbrev) == ("Lion", "+KY")
    assert (g.piece_at("2a").name, g.piece_at("2a").abbrev, g.piece_at("2a").royal) == ("Emperor", "+K", True)


# --------------------------------------------------------------------------------------------
# the setup (L18, and the reference setup of docs/RULES.md, "Taishin shogi", copied here)
# --------------------------------------------------------------------------------------------

# Black's ranks as Black sees them, rank 1 = its back rank, files a..y from its left (a = file 25).
REFERENCE_SETUP = {
    1: "L  GA WL FH CA RD R  DH DK Q  G  DV K  DS G  Q  DK DH R  RD CA FH WL GA L",
    2: "RV VA SE N  PS HB B  VH VD HK S  LT CP RT S  HK VD VH B  HB PS N  SE VA RV",
    3: "SO WH CT FN SS VS LD LN PH BT VE GG DE VG VE BT PH LN LD VS SS FN CT WH SO",
    4: "CS WB FL BG RG BD HF OM WR PC VF KY FF KY VF PC WR OM HF BD RG BG FL WB CS",
    5: "LC SC VC E  O  T  I  C  CO HT FD TG LH HM FD HT CO C  I  T  O  E  VC SC RC",
    6: "HD A  H  MF LE SM VM W  F  RN AB EW FE EW AB RN F  W  VM SM RE MF H  A  HD",
    7: "P  P  P  P  P  P  P  P  P  P  P  P  P  P  P  P  P  P  P  P  P  P  P  P  P",
    8: ".  .  .  .  .  .  .  D  .  .  .  .  .  .  .  .  .  D  .  .  .  .  .  .  .",
}
for _rank in range(9, 13):
    REFERENCE_SETUP[_rank] = " ".join(["."] * SIZE)
NAME_OF_KEY = {i.upper(): n for n, i in ID_OF.items()}
start_game = BOARD.start_game_fixture()


def test_the_reference_copy_is_the_file():
    if not REFERENCE_FILE.exists():
        pytest.skip(f"reference file not present: {REFERENCE_FILE}")
    ranks = {}
    for line in REFERENCE_FILE.read_text(encoding="utf-8").splitlines():
        m = re.match(r"rank\s+(\d+): (.*)", line)
        if m:
            ranks[int(m.group(1))] = m.group(2).split()
    assert ranks == {r: row.split() for r, row in REFERENCE_SETUP.items()}


def diagram_squares(spec):
    """'a7-y7' or 'h8,r8' -> [(file letter index, rank)]."""
    out = []
    for part in filter(None, spec.split(",")):
        first, _, last = part.partition("-")
        last = last or first
        for letter in range(ord(first[0]), ord(last[0]) + 1):
            out.append((letter - ord("a"), int(first[1:])))
    return out


def test_the_reference_is_the_diagram():
    """The reference is L18's squares (T1: the prose's typos g2 for the lion dog, e3 for the stone
    general, are read as the diagram's g3 and e5)."""
    from_diagram = {}
    for _name, piece_id, _, squares in SET_UP:
        for square in diagram_squares(squares):
            assert square not in from_diagram, square
            from_diagram[square] = piece_id.upper()
    assert len(from_diagram) == 177
    reference = {
        (i, rank): code for rank, row in REFERENCE_SETUP.items() for i, code in enumerate(row.split()) if code != "."
    }
    assert reference == from_diagram


def test_board_and_piece_count(start_game):
    """L12: a 25x25 board, 177 pieces a side of 86 types."""
    g = start_game
    assert (g.width, g.height, g.side_to_move) == (25, 25, "black")
    pieces = g.pieces()
    assert len(pieces) == 354
    counts = {}
    for _rank, row in REFERENCE_SETUP.items():
        for code in row.split():
            if code != ".":
                counts[NAME_OF_KEY[code]] = counts.get(NAME_OF_KEY[code], 0) + 1
    for color in ("black", "white"):
        mine = [p for _, p in pieces if p.color == color]
        assert len(mine) == 177 and len({p.name for p in mine}) == 86
        got = {}
        for p in mine:
            got[p.name] = got.get(p.name, 0) + 1
        assert got == counts
        assert not any(p.promoted for p in mine)
    assert (g.piece_at("13y").name, g.piece_at("13y").color) == ("King", "black")  # m1
    assert (g.piece_at("13a").name, g.piece_at("13a").color) == ("King", "white")
    assert g.royal_count("black") == g.royal_count("white") == 2  # king and prince


@pytest.mark.parametrize("own_rank", sorted(REFERENCE_SETUP), ids=lambda r: f"rank{r}")
def test_setup_rank_matches_reference(start_game, own_rank):
    for i, code in enumerate(REFERENCE_SETUP[own_rank].split()):
        black_sq = black_square(i, own_rank)
        for square, color in ((black_sq, "black"), (rotated(black_sq), "white")):  # White: turned 180 degrees
            piece = start_game.piece_at(square)
            if code == ".":
                assert piece is None, f"{square} should be empty, holds {piece}"
            else:
                assert piece is not None and (piece.name, piece.color, piece.abbrev) == (NAME_OF_KEY[code], color, code)


def test_middle_ranks_are_empty(start_game):
    """Ranks 9-17 (i..q) are empty; 13 is the middle rank."""
    assert all(parse_sq(s)[1] <= 8 or parse_sq(s)[1] >= 18 for s, _ in start_game.pieces())


def test_setup_is_mirror_symmetric_but_for_six_pairs(start_game):
    """The reference setup (L18) is left-right symmetric: file f and 26 - f hold the same type but
    for the middle file, the mirror-image pairs (deva / dark spirit, left / right general, chariot,
    mountain eagle) and two others (great general / vice general, tengu / hook mover)."""
    asym = set()
    for square, piece in start_game.pieces():
        f, r = parse_sq(square)
        mirror = start_game.piece_at(sq(SIZE + 1 - f, r))
        if f != 13 and (mirror is None or mirror.name != piece.name):
            asym.add(piece.name)
    assert asym == {
        "Deva",
        "Dark spirit",
        "Left general",
        "Right general",
        "Left chariot",
        "Right chariot",
        "Left mountain eagle",
        "Right mountain eagle",
        "Great general",
        "Vice general",
        "Tengu",
        "Hook mover",
    }


def test_variant_file_checks():
    """The three files as they are in the tree (also before the package is rebuilt)."""
    texts = [(VARIANT_DIR / f"taishin.{ext}").read_text(encoding="utf-8") for ext in ("rules", "pieces", "setup")]
    summary = taikyoku._core.check_variant(VARIANT, *texts)
    assert summary.startswith("taishin: 25x25 board, 114 piece types (28 promoted-only), 177 pieces a side")


# --------------------------------------------------------------------------------------------
# notation, actions and texts; whole games against the references
# --------------------------------------------------------------------------------------------


def test_notation_round_trip_of_every_opening_move(start_game):
    g = start_game
    moves = g.legal_moves()
    assert len(moves) == 32  # 23 pawns (two are behind the dogs), 2 dogs, 3 free eagle jumps, 4 eagle/falcon jumps
    for m in moves:
        assert g.clone().play(m.notation) == m


def check_every_legal_move(g, passes):
    """Every legal move of the side to move is its reference's (squares, captures, promotion
    flags), `passes` being its passes in a row."""
    color = g.side_to_move
    board = {parse_sq(s): (p.color, p.name, p.promoted) for s, p in g.pieces()}
    got = {}
    for m in g.legal_moves():
        got.setdefault((m.from_square, m.to_square, frozenset(m.captures)), []).append(m.promotes)
    expected = {}
    for s0, (c, _, _) in board.items():
        if c == color:
            for (to, caps), flags in reference(board, s0, passes).items():
                expected[(sq(*s0), to, caps)] = flags
    assert set(got) == set(expected), (
        f"{g.to_text()}: extra {sorted(set(got) - set(expected))[:5]}, missing {sorted(set(expected) - set(got))[:5]}"
    )
    for key, flags in got.items():
        assert sorted(flags) == expected[key], (g.to_text(), key, flags)


@pytest.mark.parametrize("seed", range(3))
def test_random_games_against_the_references(seed):
    """Games from the set-up position (half their moves captures, passes preferred now and then):
    in every position every legal move of the side to move is the Betza references' (with the
    emperor's restriction, the pass limit and the promotion rules); every legal move's notation
    and action lead back to it, the position text reads back, and undo restores it."""
    rng = random.Random(seed)
    g = taikyoku.Game(variant=VARIANT, max_plies=400)
    passes = {"black": 0, "white": 0}
    texts = []
    for _ in range(120):
        if g.is_over:
            break
        color = g.side_to_move
        check_every_legal_move(g, passes[color])
        legal = g.legal_moves()
        captures = [m for m in legal if m.captures]
        pass_moves = [m for m in legal if m.is_pass]
        if pass_moves and rng.random() < 0.5:
            m = rng.choice(pass_moves)
        elif captures and rng.random() < 0.6:
            m = rng.choice(captures)
        else:
            m = rng.choice(legal)
        for each in legal:  # every legal move's notation and action lead back to it
            assert g.clone().play(each.notation) == each
            assert g.move_of(g.action_of(each)) == each
        texts.append(g.to_text())
        assert taikyoku.Game.from_text(texts[-1], variant=VARIANT).to_text() == texts[-1]
        g.play(m)
        passes[color] = passes[color] + 1 if m.is_pass else 0
    for text in reversed(texts):
        g.undo()
        assert g.to_text() == text


def test_random_games_play_to_the_end():
    g = taikyoku.random_game(3, max_plies=600, variant=VARIANT)
    assert g.is_over and g.ply <= 600
