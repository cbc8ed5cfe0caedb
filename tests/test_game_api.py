"""The Python Game API: names, errors, notation, text format, pickling, undo, game end."""

import copy
import pickle

import pytest

import taikyoku
from taikyoku import Game


def test_opening_position():
    g = Game()
    assert g.side_to_move == "black"
    assert len(g.pieces()) == 804
    assert g.royal_count("black") == 2 and g.royal_count("white") == 2
    # Seed setup: the back rank of Black, read from Black's left: L TS RR W DM ME ...
    assert g.piece_at("36jj").abbrev == "L"
    assert g.piece_at("35jj").abbrev == "TS"
    assert g.piece_at("19jj").name == "King"
    assert g.piece_at("18jj").name == "Crown prince"
    assert g.piece_at("1jj").abbrev == "L"
    # White's setup is Black's rotated by 180 degrees.
    assert g.piece_at("1a").abbrev == "L" and g.piece_at("1a").color == "white"
    assert g.piece_at("18a").name == "King" and g.piece_at("18a").color == "white"
    # Left and right howling dogs share a code but not a promotion.
    left, right = g.piece_at("34ee"), g.piece_at("3ee")
    assert (left.abbrev, right.abbrev) == ("HD", "HD")
    assert (left.kind, right.kind) == ("LHD", "RHD")
    assert g.piece_at((12, 26)).abbrev == "P"  # (file, rank) pairs work too
    assert not g.is_over and g.result is None and g.termination is None


def test_legal_moves_are_unique_and_named():
    g = Game()
    moves = g.legal_moves()
    assert len(moves) == len(set(moves)) == g.legal_move_count()
    assert len({m.notation for m in moves}) == len(moves)
    pawn = next(m for m in moves if m.notation == "P-12y")
    assert (pawn.from_square, pawn.to_square, pawn.captures, pawn.promotes) == ("12z", "12y", [], False)


@pytest.mark.parametrize("variant", taikyoku.variants())
def test_played_and_undone_moves_are_written_as_listed(variant):
    # play() and undo() describe their move on their own (a game of random_game keeps its moves
    # up to date and reads the rivals from them; a new Game generates them): the notation is the
    # one legal_moves() gives, start square included where another piece of its sign could make
    # the same move.
    for tracked, g in ((True, taikyoku.random_game(3, max_plies=60, variant=variant)), (False, Game(variant))):
        g.max_plies = None
        for ply in range(60):
            if g.is_over:
                break
            moves = g.legal_moves()
            for m in moves[:: max(1, len(moves) // 25)]:
                assert g.play(m).notation == m.notation == g.undo().notation, (variant, tracked, ply)
            g.play(moves[(ply * 7) % len(moves)])


@pytest.mark.parametrize("variant", taikyoku.variants())
def test_legal_move_count_is_the_length_of_legal_moves(variant):
    # A game of random_game counts its moves from its incremental state, a new Game lists them:
    # both say len(legal_moves()) at every ply, and 0 once the game is over.
    for g in (taikyoku.random_game(9, max_plies=30, variant=variant), Game(variant)):
        g.max_plies = 60
        while True:
            moves = g.legal_moves()
            assert g.legal_move_count() == len(moves)
            if g.is_over:
                assert moves == [] and g.legal_move_count() == 0
                break
            g.play(moves[(g.ply * 13) % len(moves)])


def test_play_by_notation_and_undo():
    g = Game()
    start = g.to_text()
    h = g.hash
    played = g.play("P-12y")
    assert played.notation == "P-12y"
    assert g.piece_at("12y").abbrev == "P" and g.piece_at("12z") is None
    assert g.side_to_move == "white" and g.ply == 1
    g.play("P-25l")  # White's pawn on 25k steps towards Black
    assert g.history() == ["P-12y", "P-25l"]
    assert g.undo().notation == "P-25l"
    assert g.undo().notation == "P-12y"
    assert g.to_text() == start and g.hash == h
    with pytest.raises(taikyoku.IllegalMoveError):
        g.undo()


def test_play_a_move_object():
    g = Game()
    move = g.legal_moves()[0]
    assert g.play(move) == move
    assert g.ply == 1


@pytest.mark.parametrize(
    "bad, error",
    [
        ("hello", taikyoku.NotationError),
        ("P-12", taikyoku.NotationError),
        ("P12y", taikyoku.NotationError),
        ("XQ-12y", taikyoku.UnknownPieceError),
        ("P-40y", taikyoku.UnknownSquareError),
        ("P-12a", taikyoku.IllegalMoveError),
        ("K-19a", taikyoku.IllegalMoveError),
        (42, taikyoku.IllegalMoveError),
    ],
)
def test_bad_moves_raise_and_change_nothing(bad, error):
    g = Game()
    g.play("P-12y")
    before = (g.to_text(), g.history(), g.hash)
    with pytest.raises(error) as info:
        g.play(bad)
    assert isinstance(info.value, ValueError)
    assert (g.to_text(), g.history(), g.hash) == before


def test_a_move_from_another_position_is_illegal():
    g = Game()
    stale = next(m for m in g.legal_moves() if m.notation == "P-12y")
    g.play(stale)
    with pytest.raises(taikyoku.IllegalMoveError):
        g.play(stale)  # now White is to move


@pytest.mark.parametrize("square", ["37a", "1kk", "a1", "", "0a", (0, 1), (37, 1), (1, 37), "12"])
def test_unknown_squares(square):
    g = Game()
    with pytest.raises(taikyoku.UnknownSquareError):
        g.piece_at(square)
    with pytest.raises(ValueError):
        g.place(square, "LN", "black")


def test_place_and_remove():
    g = Game.empty()
    assert g.pieces() == []
    g.place("18r", "Lion", "black")
    g.place("17r", "ln", "white")
    assert g.piece_at("18r").abbrev == "LN" and g.piece_at("17r").color == "white"
    g.place("10j", "FL", "black", promoted=True)
    bishop = g.piece_at("10j")
    assert (bishop.abbrev, bishop.name, bishop.promoted, bishop.origin) == ("+FL", "Bishop", True, "FL")
    g.place("9j", "Free bird", "white")
    assert g.piece_at("9j").promoted and g.piece_at("9j").name == "Free bird"
    assert g.remove("18r").name == "Lion"
    assert g.remove("18r") is None
    with pytest.raises(taikyoku.UnknownPieceError):
        g.place("1a", "Dragon of doom", "black")
    with pytest.raises(ValueError):
        g.place("1a", "K", "black", promoted=True)  # the king does not promote
    with pytest.raises(ValueError):
        g.place("1a", "K", "green")
    with pytest.raises(ValueError):
        Game.empty(side_to_move="red")
    with pytest.raises(ValueError):
        Game(variant="chess")


def test_text_round_trip():
    g = taikyoku.random_game(5, max_plies=300)
    text = g.to_text()
    back = Game.from_text(text)
    assert back.to_text() == text
    assert back.hash == g.hash
    assert back.side_to_move == g.side_to_move
    assert back.move_number == g.move_number == 301
    g.max_plies = None  # the random game stopped at its ply limit; lift it to compare moves
    assert sorted(m.notation for m in back.legal_moves()) == sorted(m.notation for m in g.legal_moves())
    # Promoted flags survive.
    assert [p.promoted for _, p in back.pieces()] == [p.promoted for _, p in g.pieces()]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "garbage",
        "36/36 b 1",
        Game().to_text().replace(" b 1", " x 1"),
        Game().to_text().replace(" b 1", " b 0"),
        Game().to_text().replace("l,wt", "l,zz", 1),
        Game().to_text().replace("l,wt", "l,3", 1),
    ],
)
def test_bad_position_text(text):
    with pytest.raises(taikyoku.PositionTextError):
        Game.from_text(text)


def test_clone_copy_and_pickle():
    g = taikyoku.random_game(11, max_plies=120)
    for other in (g.clone(), copy.copy(g), copy.deepcopy(g), pickle.loads(pickle.dumps(g))):
        assert other.to_text() == g.to_text()
        assert other.history() == g.history()
        assert other.hash == g.hash
        other.undo()
        assert other.ply == g.ply - 1
    assert g.ply == 120


def test_disambiguation_by_start_square():
    g = Game.empty()
    g.place("10j", "R", "black")
    g.place("10r", "R", "black")
    notations = {m.notation for m in g.legal_moves()}
    assert "R10j-10n" in notations and "R10r-10n" in notations
    assert "R-10c" in notations  # only the upper rook reaches 10c
    with pytest.raises(taikyoku.AmbiguousMoveError):
        g.play("R-10n")
    assert g.play("R10r-10n").notation == "R10r-10n"
    assert g.piece_at("10n").abbrev == "R"
    assert g.history() == ["R10r-10n"]
    assert g.undo().notation == "R10r-10n"


def test_capture_promotion_and_notation():
    g = Game.empty()
    g.place("10j", "FL", "black")  # ferocious leopard promotes to bishop
    g.place("9i", "P", "white")
    g.place("5d", "P", "white")
    m = g.play("FLx9i")
    assert m.notation == "FLx9i+" and m.promotes and m.captures == ["9i"]
    assert g.piece_at("9i").abbrev == "+FL" and g.piece_at("9i").name == "Bishop"
    g.play("P-5e")  # White
    m = g.play("+FLx5e")  # a bishop capture, no second promotion
    assert not m.promotes and g.piece_at("5e").name == "Bishop"
    assert g.history() == ["FLx9i+", "P-5e", "+FLx5e"]


def test_lion_notation_igui_double_and_pass():
    g = Game.empty()
    g.place("18r", "LN", "black")
    g.place("18q", "P", "white")
    g.place("17q", "P", "white")
    notations = {m.notation for m in g.moves_from("18r")}
    assert "LNx!18q+" in notations  # igui
    assert "LNx18qx17q+" in notations  # double capture
    assert "LNx18q-18p+" in notations  # capture, then step on
    assert "LN-!18r" in notations  # pass
    m = g.play("LNx!18q")
    assert m.is_igui and m.captures == ["18q"] and g.piece_at("18r").promoted


def test_royal_capture_ends_the_game():
    g = Game.empty()
    g.place("19jj", "K", "black")
    g.place("19a", "K", "white")
    g.place("18a", "CP", "white")
    g.place("19c", "R", "black")
    g.place("18c", "R", "black")
    g.play("R19c-19b")  # no capture yet
    g.play("K-20a")
    g.play("Rx18a+")  # takes the crown prince: White still has its king
    assert not g.is_over and g.royal_count("white") == 1
    g.play("K-20b")
    g.play("Rx20b+")
    assert g.is_over and g.result == "black" and g.termination == "royal_capture"
    assert g.legal_moves() == []
    with pytest.raises(taikyoku.IllegalMoveError):
        g.play(g.moves_from("1a")[0] if g.moves_from("1a") else "K-19ii")
    g.undo()
    assert not g.is_over


def test_fourfold_repetition_is_no_contest():
    g = Game.empty()
    g.place("19jj", "K", "black")
    g.place("19a", "K", "white")
    g.place("36jj", "R", "black")
    g.place("1a", "R", "white")
    cycle = ["R-36ii", "R-1b", "R-36jj", "R-1a"]
    for _i in range(3):
        for notation in cycle:
            assert not g.is_over
            g.play(notation)
    assert g.repetitions == 4
    assert g.is_over and g.result == "draw" and g.termination == "repetition"


def test_perpetual_check_loses():
    g = Game.empty()
    g.place("36jj", "K", "black")
    g.place("1a", "CP", "white")  # White's sole royal
    g.place("5b", "R", "black")
    cycle = ["R-5a", "CP-1b", "R-5b", "CP-1a"]
    for _ in range(3):
        for notation in cycle:
            g.play(notation)
    assert g.in_check("white") is False  # Black to move again, the rook on 5b does not see 1a
    assert g.is_over and g.termination == "perpetual_check" and g.result == "white"


def test_check_detection():
    g = Game.empty()
    g.place("1a", "CP", "white")
    g.place("5a", "R", "black")
    assert g.in_check("white")
    g.place("3a", "P", "white")
    assert not g.in_check("white")


def test_ply_limit_truncates():
    g = Game(max_plies=4)
    for _ in range(4):
        g.play(g.legal_moves()[0])
    assert g.is_over and g.result is None and g.termination == "max_plies"


def test_random_games_are_deterministic():
    a = taikyoku.random_game(123, max_plies=200)
    b = taikyoku.random_game(123, max_plies=200)
    c = taikyoku.random_game(124, max_plies=200)
    assert a.history() == b.history()
    assert a.history() != c.history()


def test_piece_types_cover_the_table():
    types = taikyoku.piece_types()
    assert len(types) == 301  # 207 legend codes (+2 for left/right) and 92 promoted-only pieces
    by_name = {t.name: t for t in types}
    assert by_name["Bishop"].promotes_to == "Dragon horse"
    assert by_name["King"].royal and by_name["King"].promotes_to is None
    assert sum(t.promoted_only for t in types) == 92
    assert by_name["Great general"].range_rank == 1 and by_name["Vice general"].range_rank == 2
    assert ("wooden-dove-range-3", "WO") in taikyoku.rule_options()


def test_rule_options_change_moves():
    plain = Game.empty()
    plain.place("18r", "WO", "black")
    option = Game.empty(options=["wooden-dove-range-3"])
    option.place("18r", "WO", "black")
    assert option.options == ["wooden-dove-range-3"]
    assert "WO-18o" in {m.notation for m in option.moves_from("18r")}
    assert "WO-18o" not in {m.notation for m in plain.moves_from("18r")}
    with pytest.raises(ValueError):
        Game(options=["no-such-option"])


@pytest.mark.parametrize("kwargs", [{"max_plies": -1}, {"max_plies": 2**40}, {"options": ["x"]}, {"variant": "nope"}])
def test_bad_arguments_are_value_errors(kwargs):
    with pytest.raises(ValueError):
        Game(**kwargs)


def test_bad_random_game_arguments():
    with pytest.raises(ValueError):
        taikyoku.random_game(-1)
    with pytest.raises(ValueError):
        taikyoku.random_game(1, max_plies=-5)
    with pytest.raises(ValueError):
        Game().max_plies = -3


def test_listed_moves_describe_the_position_they_were_listed_in():
    """legal_moves() and moves_from() describe their moves lazily, from one copy of the position
    per list: the descriptions are those of that position, however the game goes on."""
    game = taikyoku.random_game(3, max_plies=120, variant="tenjiku")
    listed = game.legal_moves()
    described = [(m.notation, m.from_square, m.to_square, m.captures, m.promotes, m.mid_square) for m in listed]
    # Each one, played and returned by play(), is described the same way.
    for i in range(0, len(listed), max(1, len(listed) // 12)):
        played = game.play(listed[i])
        assert (played.notation, played.captures, played.promotes) == (
            described[i][0],
            described[i][3],
            described[i][4],
        )
        assert [(m.notation, m.captures) for m in listed] == [(d[0], d[3]) for d in described]
        game.undo()
    # moves_from gives the same notations as the whole list.
    by_move = {m: m.notation for m in listed}
    for square in {m.from_square for m in listed}:
        for m in game.moves_from(square):
            assert m.notation == by_move[m] and str(m) == m.notation and repr(m) == f"Move({m.notation!r})"
    # And each notation reads back as its move.
    fresh = taikyoku.Game.from_text(game.to_text())
    assert all(fresh.action_of(m.notation) == game.action_of(m) for m in listed[:20])
