"""taikyoku.render: the terminal board (ansi) and the SVG picture, down to a rasterised PNG."""

import io
import os
import re
import sys
import xml.etree.ElementTree as ET
from types import SimpleNamespace

import pytest

import taikyoku
from taikyoku import Game, render

SVG = "{http://www.w3.org/2000/svg}"
ESCAPES = re.compile(r"\x1b\[[0-9;]*m")


def rank_name(y):
    return chr(ord("a") + y % 26) * (y // 26 + 1)


def square(x, y, width=36):
    return f"{width - x}{rank_name(y)}"


def ansi_cell(text, x, y, rank_width=3):
    """Marker before, label and marker after the cell of column x, row y (0-based) in an ansi board."""
    line = text.splitlines()[1 + y]
    start = rank_width + 4 * x  # after the rank column, 4 characters a cell: marker + 3 for the label
    return line[start], line[start + 1 : start + 4].strip(), line[start + 4]


def xy_of(name, width=36):
    digits = len(name) - len(name.lstrip("0123456789"))
    letters = name[digits:]
    return width - int(name[:digits]), ord(letters[0]) - ord("a") + 26 * (len(letters) - 1)


def pieces_of(root):
    return [g for g in root.iter(f"{SVG}g") if "piece" in g.get("class", "").split()]


def highlights(root):
    return {
        r.get("data-square"): r.get("class").split()[1]
        for r in root.iter(f"{SVG}rect")
        if "last-move" in r.get("class", "").split()
    }


def lion_position():
    """A black lion next to a white pawn, so igui, double moves and passes are legal."""
    g = Game.empty()
    g.place("19jj", "K", "black")
    g.place("19a", "K", "white")
    g.place("18r", "LN", "black")
    g.place("18q", "P", "white")
    return g


# --------------------------------------------------------------------------------------- ansi


def test_ansi_shape():
    g = Game()
    text = render.ansi(g, color=False)
    lines = text.splitlines()
    assert len(lines) == 1 + g.height + 1  # file numbers, 36 ranks, status
    assert lines[0].split() == [str(f) for f in range(36, 0, -1)]
    board = lines[1 : 1 + g.height]
    assert len({len(line) - len(rank_name(y)) for y, line in enumerate(board)}) == 1
    assert len(board[0]) <= 36 * 4 + 10
    assert [line.split()[0] for line in board] == [rank_name(y) for y in range(36)]
    assert [line.split()[-1] for line in board] == [rank_name(y) for y in range(36)]
    assert lines[-1] == "Black to move, move 1"
    assert "[" not in text and "\x1b" not in text


def test_ansi_shows_every_square_of_the_start_position():
    g = Game()
    text = render.ansi(g, color=False)
    for y in range(36):
        for x in range(36):
            piece = g.piece_at(square(x, y))
            label = ansi_cell(text, x, y)[1]
            if piece is None:
                assert label == "·"
            else:
                assert label == (piece.abbrev if piece.color == "black" else piece.abbrev.lower())
    # The royals of the seed setup, spelled out.
    assert ansi_cell(text, *xy_of("19jj"))[1] == "K" and g.piece_at("19jj").name == "King"
    assert ansi_cell(text, *xy_of("18jj"))[1] == "CP"
    assert ansi_cell(text, *xy_of("18a"))[1] == "k"


def test_ansi_colour_only_adds_escapes():
    g = Game()
    g.play(g.legal_moves()[0])
    coloured = render.ansi(g)
    assert "\x1b[" in coloured
    assert "\x1b[7m" in coloured  # last move in inverse video
    assert ESCAPES.sub("", coloured) == render.ansi(g, color=False)


def test_ansi_marks_the_last_move_without_touching_the_game():
    g = Game()
    move = g.legal_moves()[0]
    g.play(move)
    before = (g.hash, g.history(), g.ply)
    text = render.ansi(g, color=False)
    assert (g.hash, g.history(), g.ply) == before
    for name in (move.from_square, move.to_square):
        left, _, right = ansi_cell(text, *xy_of(name))
        assert left in "[|" and right in "]|"
    assert ansi_cell(text, *xy_of(move.to_square))[1] == g.piece_at(move.to_square).abbrev
    assert text.count("[") == 2 and text.count("]") == 2
    assert text.splitlines()[-1].endswith(f"last move {move.notation}")
    plain = render.ansi(g, color=False, last_move=False)
    assert "[" not in plain and "last move" not in plain


def test_ansi_igui_marks_the_lion_and_its_victim():
    g = lion_position()
    igui = next(m for m in g.legal_moves() if m.is_igui)
    g.play(igui)
    text = render.ansi(g, color=False)
    for name in ("18r", "18q"):
        left, _, right = ansi_cell(text, *xy_of(name))
        assert (left, right) == ("[", "]")


def test_ansi_status_of_a_finished_game():
    g = taikyoku.random_game(3, max_plies=6)
    assert g.is_over
    footer = render.ansi(g, color=False).splitlines()[-1]
    assert footer.startswith("Game over") and g.termination in footer


# ---------------------------------------------------------------------------------------- svg


def test_svg_is_standalone_deterministic_xml():
    g = Game()
    text = render.svg(g)
    assert text == render.svg(g.clone())
    root = ET.fromstring(text)
    assert root.tag == f"{SVG}svg"
    assert "<image" not in text and "<script" not in text and "url(" not in text
    assert all(h.startswith("#") for h in re.findall(r'href="([^"]*)"', text))
    min_x, min_y, w, h = map(float, root.get("viewBox").split())
    assert (min_x, min_y) == (0, 0) and w == h
    assert float(root.get("width")) == w  # natural size: one user unit per pixel


def test_svg_has_every_piece_oriented_and_labelled():
    g = Game()
    root = ET.fromstring(render.svg(g))
    groups = pieces_of(root)
    assert len(groups) == 804
    seen = set()
    for group in groups:
        name = group.get("data-square")
        piece = g.piece_at(name)
        classes = group.get("class").split()
        assert piece.color in classes
        # White's pieces point at Black: turned half a turn.
        assert ("rotate(180)" in group.get("transform")) == (piece.color == "white")
        label = "".join(t.text for t in group.iter(f"{SVG}text"))
        assert label == piece.abbrev
        seen.add(name)
    assert seen == {name for name, _ in g.pieces()}
    assert sum("white" in grp.get("class").split() for grp in groups) == 402


def test_svg_highlights_the_last_move():
    g = Game()
    assert highlights(ET.fromstring(render.svg(g))) == {}
    move = g.legal_moves()[0]
    g.play(move)
    marked = highlights(ET.fromstring(render.svg(g)))
    assert marked == {move.from_square: "from", move.to_square: "to"}
    assert highlights(ET.fromstring(render.svg(g, last_move=False))) == {}


def test_svg_highlights_a_lion_double_move_and_igui():
    g = lion_position()
    double = next(m for m in g.legal_moves() if m.mid_square and not m.is_igui)
    g.play(double)
    assert highlights(ET.fromstring(render.svg(g))) == {
        double.from_square: "from",
        double.mid_square: "mid",
        double.to_square: "to",
    }
    g = lion_position()
    g.play(next(m for m in g.legal_moves() if m.is_igui))
    assert highlights(ET.fromstring(render.svg(g))) == {"18r": "from", "18q": "mid"}


def test_svg_promoted_piece_is_distinct():
    g = Game.empty()
    g.place("18r", "FL", "black", promoted=True)
    g.place("17r", "FL", "black")
    root = ET.fromstring(render.svg(g))
    by_square = {grp.get("data-square"): grp for grp in pieces_of(root)}
    promoted, plain = by_square["18r"], by_square["17r"]
    assert "promoted" in promoted.get("class").split()
    assert "promoted" not in plain.get("class").split()

    def ink(group):
        return next(inner.get("fill") for inner in group.iter(f"{SVG}g") if inner.get("fill"))

    assert ink(promoted) != ink(plain)
    assert "".join(t.text for t in promoted.iter(f"{SVG}text")) == "+FL"


def test_svg_kanji_labels():
    g = Game()
    root = ET.fromstring(render.svg(g, labels="kanji"))
    by_square = {grp.get("data-square"): grp for grp in pieces_of(root)}
    king = "".join(t.text for t in by_square["19jj"].iter(f"{SVG}text"))
    assert king == g.piece_at("19jj").kanji == "玉将"
    # Two kanji stacked vertically: the second one lower down.
    first, second = list(by_square["19jj"].iter(f"{SVG}text"))
    assert float(second.get("y")) > float(first.get("y"))
    # A kanji that exists only as an ideographic description is drawn from its parts.
    g = Game.empty()
    g.place("18r", "OR", "black", promoted=True)
    description = g.piece_at("18r").kanji
    assert any(0x2FF0 <= ord(c) <= 0x2FFF for c in description)
    group = pieces_of(ET.fromstring(render.svg(g, labels="kanji")))[0]
    drawn = "".join(t.text for t in group.iter(f"{SVG}text"))
    assert drawn == "".join(c for c in description if not 0x2FF0 <= ord(c) <= 0x2FFF)


def test_svg_size_and_coordinates():
    g = Game()
    root = ET.fromstring(render.svg(g, size=600))
    assert float(root.get("width")) == 600 and float(root.get("height")) == 600
    with_coords = ET.fromstring(render.svg(g))
    labels = {t.text for grp in with_coords.iter(f"{SVG}g") if grp.get("class") == "coordinates" for t in grp}
    assert {"36", "1", "a", "jj"} <= labels
    bare = ET.fromstring(render.svg(g, coordinates=False))
    assert not [grp for grp in bare.iter(f"{SVG}g") if grp.get("class") == "coordinates"]
    assert float(bare.get("width")) < float(with_coords.get("width"))


@pytest.mark.parametrize("labels", ["romaji", "ABBREV", "", None])
def test_svg_rejects_unknown_labels(labels):
    with pytest.raises(ValueError, match="labels"):
        render.svg(Game(), labels=labels)
    if labels:
        with pytest.raises(ValueError, match=repr(labels)):
            render.svg(Game(), labels=labels)


@pytest.mark.parametrize("size", [0, -10, float("nan"), float("inf"), "600", True])
def test_svg_rejects_bad_sizes(size):
    with pytest.raises(ValueError, match="size"):
        render.svg(Game(), size=size)


# --------------------------------------------------------------------------- smaller boards


class SmallGame:
    """Enough of the Game API for the renderers, on a 9x5 board (no smaller variant exists yet)."""

    width, height, variant_name = 9, 5, "toy"
    side_to_move, move_number, is_over, result, termination = "white", 2, False, None, None
    rank_names = ["a", "b", "c", "d", "e"]

    def square_xy(self, name):
        return self.width - int(name[:-1]), self.rank_names.index(name[-1])

    def __init__(self, moved=True):
        self.moved = moved

    def pieces(self):
        king = SimpleNamespace(abbrev="K", kanji="玉将", color="black", promoted=False, name="King")
        pawn = SimpleNamespace(abbrev="+P", kanji="と", color="white", promoted=True, name="Tokin")
        return [("5e", king), ("1a", pawn)]

    def history(self):
        return ["K-5e"] if self.moved else []

    def clone(self):
        return SmallGame(self.moved)

    def undo(self):
        return SimpleNamespace(
            from_square="5d", to_square="5e", mid_square=None, captures=[], is_pass=False, notation="K-5e"
        )


def test_renderers_follow_the_board_size():
    g = SmallGame()
    text = render.ansi(g, color=False)
    lines = text.splitlines()
    assert len(lines) == 5 + 2
    assert lines[0].split() == [str(f) for f in range(9, 0, -1)]
    assert ansi_cell(text, 4, 4, rank_width=2)[1] == "K"
    assert ansi_cell(text, 8, 0, rank_width=2)[1] == "+p"
    assert ansi_cell(text, 4, 3, rank_width=2)[0] == "["
    root = ET.fromstring(render.svg(g))
    _, _, w, h = map(float, root.get("viewBox").split())
    assert w > h
    assert len(pieces_of(root)) == 2
    assert highlights(root) == {"5d": "from", "5e": "to"}


@pytest.mark.parametrize("variant", taikyoku.variants())
def test_every_variant_renders(variant):
    g = Game(variant)
    assert len(render.ansi(g).splitlines()) == g.height + 2
    assert len(pieces_of(ET.fromstring(render.svg(g)))) == len(g.pieces())


# ------------------------------------------------------------------------------------- PNG


def _need(module):
    """Import a PNG test dependency; in CI (which installs the ``test`` extra) it must be there."""
    if os.environ.get("CI") and sys.version_info >= (3, 10):
        return __import__(module)
    return pytest.importorskip(module)


def test_svg_rasterises_to_a_real_picture():
    resvg_py = _need("resvg_py")
    _need("PIL")
    from PIL import Image

    g = Game()
    move = next(m for m in g.legal_moves() if m.to_square == "12y")
    g.play(move)
    text = render.svg(g)
    png = bytes(resvg_py.svg_to_bytes(svg_string=text))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    picture = Image.open(io.BytesIO(png)).convert("RGB")
    root = ET.fromstring(text)
    assert picture.size == (round(float(root.get("width"))), round(float(root.get("height"))))

    colours = picture.getcolors(maxcolors=1 << 20)
    assert len(colours) > 50  # wood, lines, pieces, ink, anti-aliasing
    total = picture.size[0] * picture.size[1]
    assert max(count for count, _ in colours) < 0.8 * total  # not one flat colour

    def rgb(hex_colour):
        return tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))

    board, piece_fill = rgb(render._BOARD), rgb(render._PIECE_FILL)
    counts = {c: n for n, c in colours}
    assert counts.get(board, 0) > 0.2 * total
    assert counts.get(piece_fill, 0) > 0.1 * total
    dark = sum(n for n, c in colours if sum(c) < 200)
    assert dark > 0.005 * total  # grid, outlines and letters were drawn
    assert counts.get(rgb(render._HIGHLIGHT["from"]), 0) > 100  # the last move shows

    def centre(name):
        group = next(grp for grp in pieces_of(root) if grp.get("data-square") == name)
        x, y = re.match(r"translate\(([-\d.]+) ([-\d.]+)\)", group.get("transform")).groups()
        return float(x), float(y)

    def close(a, b):
        return all(abs(p - q) <= 6 for p, q in zip(a, b))

    # Pentagons point at the opponent: Black's tip is up, White's is down.  Near the tip the
    # column is piece-coloured; beside the tip (outside the shoulders) it is board.
    for name, tip in (("30jj", -1), ("30a", 1)):
        x, y = centre(name)
        assert close(picture.getpixel((round(x), round(y + tip * 10))), piece_fill)
        assert close(picture.getpixel((round(x - 11), round(y + tip * 12))), board)
        assert close(picture.getpixel((round(x - 10), round(y - tip * 10))), piece_fill)
