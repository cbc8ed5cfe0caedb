"""Pictures of a position: a terminal board (``ansi``), a standalone SVG (``svg``) and an RGB
image (``rgb_array``: the SVG rasterised by resvg-py and decoded by pillow, both optional).

Both read only the public ``Game`` API (``width``/``height``, ``pieces()``, ``history()``,
``clone()``/``undo()``), so they work for any board size the engine supports, and they never
change the game they are given.

>>> import taikyoku
>>> from taikyoku import render
>>> g = taikyoku.Game()
>>> print(render.ansi(g, color=False).splitlines()[-1])
Black to move, move 1
>>> render.svg(g).startswith("<svg")
True
"""

from __future__ import annotations

import importlib.util
import io
import sys
from typing import TYPE_CHECKING, Dict, List, Optional, TextIO, Tuple
from xml.sax.saxutils import escape, quoteattr

from taikyoku import _validate

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from taikyoku._core import Game, Move

__all__ = ["ansi", "print_board", "rgb_array", "rgb_available", "svg"]

# ---------------------------------------------------------------------------------------------
# Squares.  Names are "<file><rank>": files count from the right (36 .. 1 seen by Black), ranks
# are letters from the top (a .. z, then aa .. jj), exactly as the engine's geometry names them.


def _last_move(game: Game) -> Optional[Move]:
    """The last move played, found on a clone so the caller's game is left untouched."""
    if not game.history():
        return None
    try:
        return game.clone().undo()
    except ValueError:  # TaikyokuError derives from ValueError; e.g. a game set up from text
        return None


def _move_marks(game: Game) -> Dict[Tuple[int, int], str]:
    """Squares touched by the last move, mapped to their role ("from", "mid", "to", "capture").

    A pass (a lion's "!" move) and igui (capture without moving) start and end on one square,
    which is marked "from"; the igui victim is the "mid" square.
    """
    move = _last_move(game)
    if move is None:
        return {}
    marks: Dict[Tuple[int, int], str] = {}
    # Later roles win: a lion that captures on its mid square and returns keeps "from".
    for square in move.captures:
        marks[game.square_xy(square)] = "capture"
    if move.mid_square:
        marks[game.square_xy(move.mid_square)] = "mid"
    marks[game.square_xy(move.to_square)] = "to"
    marks[game.square_xy(move.from_square)] = "from"
    return marks


_GAME_API = ("width", "height", "pieces", "history", "side_to_move", "is_over")


def _check_game(caller: str, game: object) -> None:
    """A clear TypeError for a non-game (anything with the public Game API used here will do)."""
    if not all(hasattr(game, name) for name in _GAME_API):
        raise TypeError(f"{caller}() draws a taikyoku.Game, not {type(game).__name__}")


#: The largest picture svg() draws, in pixels (a larger one is surely a mistake).
MAX_SVG_SIZE = 100_000


def _status(game: Game) -> str:
    """One line: whose move it is, or how the game ended."""
    if game.is_over:
        result, why = game.result, game.termination
        if result in ("black", "white"):
            text = f"{result.capitalize()} wins"
        elif result == "draw":
            text = "Draw"
        else:
            text = "Game stopped without a result"
        return f"Game over: {text} ({why}), after move {game.move_number}"
    return f"{game.side_to_move.capitalize()} to move, move {game.move_number}"


# ---------------------------------------------------------------------------------------------
# Terminal board.

_RESET = "\x1b[0m"
_SGR = {"black": "\x1b[1m", "white": "\x1b[1;31m", "empty": "\x1b[2m", "mark": "\x1b[7m"}


def ansi(game: Game, *, last_move: bool = True, color: bool = True) -> str:
    """The board as text for ``render_mode="ansi"`` and terminals.

    Black's pieces are upper case, White's lower case (as in ``str(game)``), so the board still
    reads without colour; ``color=True`` adds ANSI bold for Black and red for White.  The squares
    of the last move (from, to and an igui/lion middle square) are put in brackets, and in inverse
    video with colour, because on a 36x36 board a move is otherwise hard to find.  Every escape
    sequence wraps a cell's text only, so columns line up with or without colour.
    """
    _check_game("ansi", game)
    last_move = _validate.boolean("last_move", last_move)
    color = _validate.boolean("color", color)
    width, height = game.width, game.height
    ranks = game.rank_names
    grid: Dict[Tuple[int, int], Tuple[str, str]] = {}
    for square, piece in game.pieces():
        label = piece.abbrev if piece.color == "black" else piece.abbrev.lower()
        grid[game.square_xy(square)] = (label, piece.color)
    cell = max([3] + [len(label) for label, _ in grid.values()])
    rank_w = len(game.rank_names[-1]) + 1
    marks = _move_marks(game) if last_move else {}
    marks = {xy: role for xy, role in marks.items() if role != "capture"}

    lines = [" " * rank_w + "".join(" " + str(width - x).rjust(cell) for x in range(width))]
    for y in range(height):
        parts = [ranks[y].rjust(rank_w)]
        for x in range(width):
            marked, left_marked = (x, y) in marks, (x - 1, y) in marks
            parts.append("|" if marked and left_marked else "[" if marked else "]" if left_marked else " ")
            label, who = grid.get((x, y), ("·", "empty"))
            text = label.rjust(cell)
            if color:
                text = _SGR[who] + (_SGR["mark"] if marked else "") + text + _RESET
            parts.append(text)
        parts.append("]" if (width - 1, y) in marks else " ")
        parts.append(ranks[y])
        lines.append("".join(parts))
    footer = _status(game)
    history = game.history() if last_move else []
    if history:
        footer += f"; last move {history[-1]}"
    lines.append(footer)
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# SVG board.  All geometry is in user units of a fixed cell size; ``size`` only sets the pixel
# size of the picture, so every board shares the same <defs> shape and the output is
# deterministic (numbers go through ``_num``).

_CELL = 30
_MARGIN = 22  # room for coordinates
_PAD = 6  # without coordinates
_BOARD = "#edc982"
_LINE = "#6b4a1c"
_PIECE_FILL = "#fbe9c0"
_INK = "#1b1b1b"
_PROMOTED_INK = "#c3001b"
_HIGHLIGHT = {"from": "#b9db6e", "mid": "#d6e690", "to": "#93c83f", "capture": "#eea58c"}
_LATIN_FONT = "DejaVu Sans, Verdana, Arial, Helvetica, sans-serif"
_KANJI_FONT = (
    "Noto Serif CJK JP, Noto Sans CJK JP, Hiragino Mincho ProN, Yu Mincho, MS Mincho, "
    "IPAMincho, Source Han Serif, serif"
)
# A shogi piece pointing up (toward White), centred on its square, in user units.
_PENTAGON = "M0 -13.5 L10 -8.5 L12.5 13 L-12.5 13 L-10 -8.5 Z"
# Where the label goes inside the pentagon: centre and size of its box.
_LABEL_CY, _LABEL_W, _LABEL_H = 2.5, 19.0, 20.0
# Ideographic description characters: how many parts each combines and along which axis.
# Some piece kanji exist only as such descriptions (e.g. "⿰古寺⿱時鳥"); we draw their parts
# squeezed side by side or stacked, which approximates the missing glyph.
_IDS_ARITY = {chr(c): 2 for c in range(0x2FF0, 0x2FFC)}
_IDS_ARITY["\u2ff2"] = _IDS_ARITY["\u2ff3"] = 3
_IDS_VERTICAL = {"\u2ff1", "\u2ff3"}


def _num(value: float) -> str:
    """A short, stable text form of a coordinate."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _parse_ids(text: str, pos: int = 0):
    """One glyph unit from ``pos``: a character, or (operator, [parts]) for a description."""
    char = text[pos]
    arity = _IDS_ARITY.get(char)
    if arity is None:
        return char, pos + 1
    parts, end = [], pos + 1
    for _ in range(arity):
        if end >= len(text):  # malformed description: show the operator as it is
            return char, pos + 1
        part, end = _parse_ids(text, end)
        parts.append(part)
    return (char, parts), end


def _glyph_units(text: str) -> list:
    units, pos = [], 0
    while pos < len(text):
        unit, pos = _parse_ids(text, pos)
        units.append(unit)
    return units


def _draw_unit(unit, cx: float, cy: float, w: float, h: float, out: List[str]) -> None:
    """Fit one glyph unit into the box of centre (cx, cy) and size w x h."""
    if isinstance(unit, str):
        # A square box gets a plain glyph; a part of a description (the left half of "⿰" is
        # tall and thin) gets a glyph squeezed to its box.
        size = max(w, h)
        scale_x, scale_y = w / size, h / size
        transform = ""
        if abs(scale_x - 1) > 1e-9 or abs(scale_y - 1) > 1e-9:
            transform = (
                f' transform="translate({_num(cx)} {_num(cy)}) scale({_num(scale_x)} {_num(scale_y)})'
                f' translate({_num(-cx)} {_num(-cy)})"'
            )
        out.append(
            f'<text x="{_num(cx)}" y="{_num(cy + 0.37 * size)}" font-size="{_num(size)}"{transform}>'
            f"{escape(unit)}</text>"
        )
        return
    op, parts = unit
    n = len(parts)
    for i, part in enumerate(parts):
        if op in _IDS_VERTICAL:
            _draw_unit(part, cx, cy - h / 2 + h * (i + 0.5) / n, w, h / n, out)
        else:
            _draw_unit(part, cx - w / 2 + w * (i + 0.5) / n, cy, w / n, h, out)


def _abbrev_label(text: str, out: List[str]) -> None:
    """Abbreviation on one line; long ones ("+FL") are squeezed horizontally to fit."""
    size = 12.0 if len(text) <= 2 else 11.0
    estimated = 0.72 * size * len(text)  # bold capitals are about 0.72 em wide
    y = _LABEL_CY + 0.36 * size
    if estimated <= _LABEL_W:
        out.append(f'<text y="{_num(y)}" font-size="{_num(size)}">{escape(text)}</text>')
    else:
        squeeze = _LABEL_W / estimated
        out.append(
            f'<text y="{_num(y)}" font-size="{_num(size)}" transform="scale({_num(squeeze)} 1)">{escape(text)}</text>'
        )


def _kanji_label(text: str, out: List[str]) -> None:
    """Kanji stacked vertically, as on real pieces; 1 to 3 units, smaller as there are more."""
    units = _glyph_units(text) or ["?"]
    n = len(units)
    h = min(_LABEL_H / n, 16.0)
    w = min(_LABEL_W, h * 1.0) if n > 1 else 16.0
    top = _LABEL_CY - h * n / 2
    for i, unit in enumerate(units):
        _draw_unit(unit, 0.0, top + h * (i + 0.5), w, h, out)


def svg(
    game: Game,
    *,
    labels: str = "abbrev",
    size: Optional[float] = None,
    last_move: bool = True,
    coordinates: bool = True,
) -> str:
    """A standalone SVG picture of the board (for notebooks, ``Game._repr_svg_``, documents).

    Pieces are shogi pentagons pointing at the opponent, so White's are turned 180 degrees;
    ``labels`` is ``"abbrev"`` (notation codes, readable by anyone) or ``"kanji"``.  Promoted
    pieces have red labels (and the "+" of their code).  The last move's from, to and middle
    squares (and squares it captured on) are tinted.  ``size`` is the picture's larger side in
    pixels; by default one square is 30 px.  Each piece is a ``<g class="piece ...">`` with a
    ``data-square`` attribute and a tooltip, for scripts and hovering.  The output contains no
    external references and depends only on the position and last move.
    """
    _check_game("svg", game)
    labels = _validate.choice("labels", labels, ("abbrev", "kanji"))
    if size is not None:
        size = _validate.real("size (pixels)", size, 0.0, MAX_SVG_SIZE, low_open=True)
    last_move = _validate.boolean("last_move", last_move)
    coordinates = _validate.boolean("coordinates", coordinates)

    width, height = game.width, game.height
    ranks = game.rank_names
    margin = _MARGIN if coordinates else _PAD
    total_w, total_h = width * _CELL + 2 * margin, height * _CELL + 2 * margin
    if size is None:
        px_w, px_h = float(total_w), float(total_h)
    else:
        scale = float(size) / max(total_w, total_h)
        px_w, px_h = total_w * scale, total_h * scale

    def centre(x: int, y: int) -> Tuple[float, float]:
        return margin + (x + 0.5) * _CELL, margin + (y + 0.5) * _CELL

    out: List[str] = [
        f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{_num(px_w)}" '
        f'height="{_num(px_h)}" viewBox="0 0 {total_w} {total_h}" font-family={quoteattr(_LATIN_FONT)}>',
        f"<title>{escape(f'{game.variant_name.capitalize()} shogi: {_status(game)}')}</title>",
        f'<defs><path id="taikyoku-piece" d="{_PENTAGON}"/></defs>',
        f'<rect class="board" x="0" y="0" width="{total_w}" height="{total_h}" fill="{_BOARD}"/>',
    ]

    marks = _move_marks(game) if last_move else {}
    if marks:
        out.append('<g class="highlights">')
        for (x, y), role in sorted(marks.items(), key=lambda item: (item[0][1], item[0][0])):
            name = f"{width - x}{ranks[y]}"
            out.append(
                f'<rect class="last-move {role}" data-square="{name}" x="{margin + x * _CELL}" '
                f'y="{margin + y * _CELL}" width="{_CELL}" height="{_CELL}" fill="{_HIGHLIGHT[role]}"/>'
            )
        out.append("</g>")

    lines = [f"M{margin + x * _CELL} {margin}V{margin + height * _CELL}" for x in range(1, width)]
    lines += [f"M{margin} {margin + y * _CELL}H{margin + width * _CELL}" for y in range(1, height)]
    out.append(f'<path class="grid" d="{"".join(lines)}" stroke="{_LINE}" stroke-width="0.6" fill="none"/>')
    out.append(
        f'<rect class="frame" x="{margin}" y="{margin}" width="{width * _CELL}" height="{height * _CELL}" '
        f'stroke="{_LINE}" stroke-width="1.6" fill="none"/>'
    )

    if coordinates:
        out.append(f'<g class="coordinates" font-size="10" fill="{_LINE}" text-anchor="middle">')
        for x in range(width):
            cx = _num(centre(x, 0)[0])
            out.append(f'<text x="{cx}" y="{_num(margin - 7)}">{width - x}</text>')
            out.append(f'<text x="{cx}" y="{_num(total_h - margin + 15)}">{width - x}</text>')
        for y in range(height):
            cy = _num(centre(0, y)[1] + 3.5)
            out.append(f'<text x="{_num(margin / 2)}" y="{cy}">{ranks[y]}</text>')
            out.append(f'<text x="{_num(total_w - margin / 2)}" y="{cy}">{ranks[y]}</text>')
        out.append("</g>")

    font = _LATIN_FONT if labels == "abbrev" else _KANJI_FONT
    weight = ' font-weight="bold"' if labels == "abbrev" else ""
    out.append(f'<g class="pieces" font-family={quoteattr(font)}{weight} text-anchor="middle">')
    placed = sorted(
        ((game.square_xy(square), square, piece) for square, piece in game.pieces()),
        key=lambda item: (item[0][1], item[0][0]),
    )
    for (x, y), square, piece in placed:
        cx, cy = centre(x, y)
        turn = " rotate(180)" if piece.color == "white" else ""
        kind = f"piece {piece.color}" + (" promoted" if piece.promoted else "")
        ink = _PROMOTED_INK if piece.promoted else _INK
        tip = f"{piece.color.capitalize()} {piece.name} ({piece.abbrev}, {piece.kanji}) on {square}"
        out.append(
            f'<g class="{kind}" data-square="{square}" transform="translate({_num(cx)} {_num(cy)}){turn}">'
            f"<title>{escape(tip)}</title>"
            f'<use href="#taikyoku-piece" fill="{_PIECE_FILL}" stroke="{_LINE}" stroke-width="0.8"/>'
            f'<g fill="{ink}">'
        )
        if labels == "abbrev":
            _abbrev_label(piece.abbrev, out)
        else:
            _kanji_label(piece.kanji, out)
        out.append("</g></g>")
    out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def print_board(game: Game, file: Optional[TextIO] = None) -> None:
    """Prints ``ansi(game)`` (``render_mode="human"``), in colour when the output is a terminal."""
    out = sys.stdout if file is None else file
    isatty = getattr(out, "isatty", None)
    print(ansi(game, color=bool(isatty and isatty())), file=out, flush=True)


# ---------------------------------------------------------------------------------------------
# RGB image: the SVG rasterised.  resvg-py and pillow are optional (the ``test`` extra has them).

_RGB_NEEDS = ("resvg_py", "PIL")


def rgb_available() -> bool:
    """Whether ``rgb_array`` can work here (resvg-py and pillow are installed)."""
    return all(importlib.util.find_spec(name) is not None for name in _RGB_NEEDS)


def require_rgb() -> None:
    """Raises ImportError, saying what to install, unless ``rgb_array`` can work here."""
    missing = [name for name in _RGB_NEEDS if importlib.util.find_spec(name) is None]
    if missing:
        packages = " and ".join({"resvg_py": "resvg-py", "PIL": "pillow"}[name] for name in missing)
        raise ImportError(
            f"render_mode='rgb_array' rasterises the SVG board with resvg-py and pillow: {packages} "
            f"{'is' if len(missing) == 1 else 'are'} not installed (pip install resvg-py pillow)"
        )


def rgb_array(
    game: Game,
    *,
    size: Optional[float] = None,
    labels: str = "abbrev",
    last_move: bool = True,
    coordinates: bool = True,
) -> npt.NDArray[np.uint8]:
    """The board as an (H, W, 3) uint8 numpy array: ``svg(game, ...)`` rasterised.

    By default one square is 30 px (Taikyoku: 1124 x 1124, Dai dai: 554 x 554); ``size`` sets the
    larger side in pixels. For ``render_mode="rgb_array"`` and ``gymnasium.wrappers.RecordVideo``.
    Needs resvg-py and pillow (ImportError otherwise, naming them).
    """
    require_rgb()
    import numpy as np
    import resvg_py
    from PIL import Image

    picture = svg(game, labels=labels, size=size, last_move=last_move, coordinates=coordinates)
    png = bytes(resvg_py.svg_to_bytes(svg_string=picture))
    with Image.open(io.BytesIO(png)) as image:
        return np.asarray(image.convert("RGB"), dtype=np.uint8).copy()
