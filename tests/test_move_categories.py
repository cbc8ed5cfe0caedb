"""Behaviour of each movement category of the Taikyoku seed, on small hand-made positions.

Seed: the English Wikipedia article "Taikyoku shogi" as plain text (seed 000, docs/RULES.md §1),
"Categories of movement" (lines 700-729), the piece sections from line 731, "Promotion" (line 5516)
and "Game end" (line 5762).

Orientation, as the seed's Black sees the board: files 1..36 from the right, ranks a..z, aa..jj from
the top. Black moves up (towards rank a), White down. From Black's square 18r:
    forward 18q, backward 18s, left 19r, right 17r, forward-left 19q, forward-right 17q.
"""

import functools

import boards
import pytest
from boards import destinations, moves_to

import taikyoku

# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------

make_game = functools.partial(boards.make_game, "taikyoku")
play = functools.partial(boards.play, unique=False)  # the first of the moves that fit


def on_line(start, step_file, step_rank, n):
    """The n squares from `start` (exclusive) in steps of (file, rank): on_line('18r', 0, -1, 2) == ['18q', '18p']."""
    file, rank = int(start[:-1]), "abcdefghijklmnopqrstuvwxyz".index(start[-1]) + 1
    out = []
    for i in range(1, n + 1):
        f, k = file + i * step_file, rank + i * step_rank
        out.append(f"{f}{'abcdefghijklmnopqrstuvwxyz'[k - 1]}")
    return out


def snapshot(g):
    board = sorted((sq, p.name, p.abbrev, p.color, p.promoted) for sq, p in g.pieces())
    return board, g.side_to_move, g.is_over, g.result, g.termination


FORWARD_FROM_18R = on_line("18r", 0, -1, 17)  # 18q, 18p, ... 18a
FORWARD_LEFT_FROM_18R = on_line("18r", 1, -1, 17)  # 19q, 20p, 21o, 22n, 23m, ... 35a


# --------------------------------------------------------------------------------------------
# step movers: one square; blocked by a friend, captures a foe
# --------------------------------------------------------------------------------------------


def test_step_blocked_by_friend_captures_foe():
    # Gold general: one square orthogonally or diagonally forward (seed line 788).
    g = make_game(("18r", "G", "black"), ("18q", "P", "black"), ("17q", "P", "white"))
    assert destinations(g, "18r") == {"19q", "17q", "19r", "17r", "18s"}
    (capture,) = moves_to(g, "18r", "17q")
    assert list(capture.captures) == ["17q"]
    assert all(list(m.captures) == [] for m in g.moves_from("18r") if m.to_square != "17q")


def test_play_by_notation_and_illegal_moves():
    g = make_game(("18r", "P", "black"), ("18p", "G", "black"), ("30e", "P", "white"))
    g.play("P-18q")
    assert g.piece_at("18r") is None
    assert g.piece_at("18q").abbrev == "P" and g.piece_at("18q").color == "black"
    assert g.side_to_move == "white"
    with pytest.raises(taikyoku.IllegalMoveError):
        g.play("P-18r")  # it is White's move, and a pawn cannot move backward anyway
    g.play("P-30f")
    with pytest.raises(taikyoku.IllegalMoveError):
        g.play("P-18p")  # its own gold general stands there
    with pytest.raises(ValueError):  # IllegalMoveError is a ValueError
        g.play("P-18o")  # two squares


# --------------------------------------------------------------------------------------------
# limited range: up to n free squares; stops at a piece
# --------------------------------------------------------------------------------------------


def test_limited_range_stops_at_pieces():
    # Donkey: one or two squares in the four orthogonal directions (seed line 4080).
    g = make_game(
        ("18r", "DO", "black"),
        ("18p", "P", "black"),  # two ahead: a friend, so only 18q
        ("20r", "P", "white"),  # two to the left: a foe, 19r and a capture on 20r
        ("18s", "P", "white"),  # right behind: capture 18s, nothing beyond
    )
    assert destinations(g, "18r") == {"18q", "19r", "20r", "18s", "17r", "16r"}
    assert list(moves_to(g, "18r", "20r")[0].captures) == ["20r"]


# --------------------------------------------------------------------------------------------
# ranging: any number of free squares; capture stops it; a friend blocks it
# --------------------------------------------------------------------------------------------


def test_ranging_blocked_and_capturing():
    g = make_game(("18r", "R", "black"), ("18n", "P", "black"), ("22r", "P", "white"))
    got = destinations(g, "18r")
    assert {s for s in got if s in FORWARD_FROM_18R} == {"18q", "18p", "18o"}
    leftward = set(on_line("18r", 1, 0, 18))  # 19r ... 36r
    assert {s for s in got if s in leftward} == {"19r", "20r", "21r", "22r"}
    assert list(moves_to(g, "18r", "22r")[0].captures) == ["22r"]
    assert len(got) == 3 + 4 + 17 + 18  # forward, left, right (17r..1r), backward (18s..18jj)


# --------------------------------------------------------------------------------------------
# jumps: pass over any piece, friend or foe, untouched
# --------------------------------------------------------------------------------------------


def test_knight_jumps_over_pieces():
    # Knight: one square forward plus one diagonally forward (seed line 2987).
    g = make_game(
        ("18r", "N", "black"),
        ("18q", "P", "black"),
        ("17q", "P", "white"),
        ("19q", "P", "black"),
        ("18p", "P", "white"),
        ("17p", "P", "white"),  # foe on a destination: captured
        ("19p", "P", "black"),  # friend on a destination: no move there
    )
    assert destinations(g, "18r") == {"17p"}
    assert list(moves_to(g, "18r", "17p")[0].captures) == ["17p"]


def test_jump_to_second_square_over_a_piece():
    # Phoenix: jumps to the second square diagonally (seed line 3921).
    g = make_game(("18r", "PH", "black"), ("17q", "P", "black"), ("19q", "P", "white"))
    got = destinations(g, "18r")
    assert {"16p", "20p"} <= got  # over its own pawn and over the foe's pawn
    assert list(moves_to(g, "18r", "20p")[0].captures) == []  # the pawn jumped over stays
    assert "17q" not in got and "19q" not in got  # it cannot step diagonally


# --------------------------------------------------------------------------------------------
# jump then range: jump over a piece, then go on; stop before a friend
# --------------------------------------------------------------------------------------------


def test_wooden_dove_jumps_third_square_then_one_or_two_more():
    # Wooden dove (seed line 940): ranges diagonally, or jumps to the third square diagonally and
    # then moves one or two more squares the same way.
    g = make_game(
        ("18r", "WO", "black"),
        ("19q", "P", "white"),  # first square forward-left: capture it, or jump over it
        ("23m", "P", "black"),  # fifth square: a friend
    )
    got = destinations(g, "18r")
    # 19q capture; 20p is behind the foe and not the jump square; 21o jump; 22n one more; 23m friend
    assert {s for s in got if s in FORWARD_LEFT_FROM_18R} == {"19q", "21o", "22n"}
    assert list(moves_to(g, "18r", "22n")[0].captures) == []


def test_center_master_jumps_second_square_then_ranges():
    # Center master (seed line 4113): jumps to the second square, then ranges forward.
    g = make_game(("18r", "MT", "black"), ("18q", "P", "white"), ("18m", "P", "black"))
    got = destinations(g, "18r")
    assert {s for s in got if s in FORWARD_FROM_18R} == {"18q", "18p", "18o", "18n"}
    assert list(moves_to(g, "18r", "18n")[0].captures) == []  # the jumped pawn on 18q stays


# --------------------------------------------------------------------------------------------
# hop (limited range jump): pass over up to three pieces, then range on
# --------------------------------------------------------------------------------------------


def test_golden_bird_passes_three_pieces_not_four():
    # Golden bird (seed line 3751): "jump up to three pieces diagonally forward, and then
    # optionally continue any number of free squares in that direction".
    three = [("19q", "P", "black"), ("20p", "P", "white"), ("21o", "P", "black")]
    g = make_game(("18r", "GO", "black"), *three)
    got = destinations(g, "18r")
    assert {"22n", "23m", "35a"} <= got  # beyond the three pieces, up to the edge
    assert "19q" not in got and "21o" not in got  # its own pieces
    assert list(moves_to(g, "18r", "23m")[0].captures) == []  # the pieces passed over stay

    g = make_game(("18r", "GO", "black"), *three, ("22n", "P", "black"))  # a fourth piece
    got = destinations(g, "18r")
    assert not {"22n", "23m", "24l", "35a"} & got


def test_teaching_king_passes_three_pieces_not_four():
    # Teaching king (seed line 5649): the same in all eight directions; here forward.
    three = [("18q", "P", "black"), ("18p", "P", "white"), ("18o", "P", "black")]
    g = make_game(("18r", "Teaching king", "black"), *three)
    assert {"18n", "18m", "18a"} <= destinations(g, "18r")

    g = make_game(("18r", "Teaching king", "black"), *three, ("18n", "P", "black"))
    assert not {"18n", "18m", "18a"} & destinations(g, "18r")


# --------------------------------------------------------------------------------------------
# hook move: range, optionally turn 90° once, range again
# --------------------------------------------------------------------------------------------


def test_hook_mover_turns_a_corner():
    # Its own pawns on 18o (ahead) and 17r (right). 14p: two forward, then four to the right.
    g = make_game(("18r", "HM", "black"), ("18o", "P", "black"), ("17r", "P", "black"))
    got = destinations(g, "18r")
    assert {"18q", "18p", "14p", "14q", "36p", "1p"} <= got
    assert "18n" not in got  # behind its own pawn
    assert "14n" not in got  # forward path blocked at 18o, rightward path blocked at 17r


def test_hook_mover_stops_when_it_captures():
    g = make_game(("18r", "HM", "black"), ("18p", "P", "white"), ("17r", "P", "black"))
    got = destinations(g, "18r")
    assert list(moves_to(g, "18r", "18p")[0].captures) == ["18p"]
    assert "16q" in got  # turning before the capture square is fine
    assert "18o" not in got  # no going on after a capture
    assert "16p" not in got  # no turning after a capture (and the way right is blocked)


def test_hook_mover_cannot_turn_twice():
    # Its own pawns right ahead (18q) and right beside it (17r). 16p would need two turns
    # (left to 19r, forward to 19p, right to 16p).
    g = make_game(("18r", "HM", "black"), ("18q", "P", "black"), ("17r", "P", "black"))
    got = destinations(g, "18r")
    assert "19p" in got  # one turn: left to 19r, then forward
    assert "16p" not in got
    assert "16s" in got  # one turn: back to 18s, then right


# --------------------------------------------------------------------------------------------
# lion: two king steps per turn, double capture, igui, pass, jump
# --------------------------------------------------------------------------------------------


def test_lion_double_capture():
    g = make_game(("18r", "LN", "black"), ("18q", "P", "white"), ("18p", "P", "white"))
    double = moves_to(g, "18r", "18p", captures=["18q", "18p"])
    assert len(double) == 1
    g.play(double[0])
    assert g.piece_at("18q") is None
    assert g.piece_at("18p").color == "black"
    assert g.piece_at("18r") is None


def test_lion_captures_then_moves_on():
    # capture on the first step, then step on to an empty square
    g = make_game(("18r", "LN", "black"), ("18q", "P", "white"))
    assert moves_to(g, "18r", "17p", captures=["18q"])


def test_lion_igui_captures_without_moving():
    g = make_game(("18r", "LN", "black"), ("18q", "P", "white"))
    (igui,) = [m for m in g.moves_from("18r") if m.to_square == "18r" and m.captures]
    assert igui.from_square == "18r" and list(igui.captures) == ["18q"]
    g.play(igui)
    assert g.piece_at("18q") is None
    assert g.piece_at("18r").color == "black"


def test_lion_pass_needs_an_empty_adjacent_square():
    g = make_game(("18r", "LN", "black"))
    passes = [m for m in g.moves_from("18r") if m.to_square == "18r"]
    assert len(passes) >= 1 and all(list(m.captures) == [] for m in passes)

    around = ["17q", "18q", "19q", "17r", "19r", "17s", "18s", "19s"]
    g = make_game(("18r", "LN", "black"), *[(s, "P", "black") for s in around])
    assert not [m for m in g.moves_from("18r") if m.to_square == "18r"]


def test_lion_jumps_over_pieces_within_two_squares():
    around = ["17q", "18q", "19q", "17r", "19r", "17s", "18s", "19s"]
    g = make_game(("18r", "LN", "black"), *[(s, "P", "black") for s in around])
    two_away = {f"{f}{r}" for f in range(16, 21) for r in "pqrst" if abs(f - 18) == 2 or r in "pt"}
    assert len(two_away) == 16
    assert destinations(g, "18r") == two_away


# --------------------------------------------------------------------------------------------
# range capture: fly over lower-ranked pieces of both colours, removing them all
# ranks (seed line 725): king, crown prince > great general > vice general >
#                        rook general, bishop general, violent dragon, flying crocodile
# --------------------------------------------------------------------------------------------


def test_great_general_flies_over_and_removes_pieces_of_both_colours():
    g = make_game(
        ("18r", "GG", "black"),
        ("18p", "P", "white"),
        ("18n", "P", "black"),  # its own pawn: flown over and removed too
        ("18l", "G", "white"),
    )
    assert moves_to(g, "18r", "18o", captures=["18p"])
    assert moves_to(g, "18r", "18m", captures=["18p", "18n"])
    assert not moves_to(g, "18r", "18n")  # cannot land on its own piece
    (far,) = moves_to(g, "18r", "18l")
    assert set(far.captures) == {"18p", "18n", "18l"}
    g.play(far)
    assert [sq for sq, _ in g.pieces()] == ["18l"]
    assert g.piece_at("18l").abbrev == "GG"


def test_great_general_cannot_fly_over_a_king_or_crown_prince():
    g = make_game(("18r", "GG", "black"), ("18p", "K", "white"), ("17q", "CP", "black"))
    got = destinations(g, "18r")
    assert "18p" in got  # it may capture the king
    assert not {"18o", "18n", "18a"} & got  # but not fly over it
    assert not {"17q", "16p", "1a"} & got  # nor over its own crown prince


def test_great_general_flies_over_a_vice_general_but_not_the_reverse():
    g = make_game(("18r", "GG", "black"), ("18p", "VG", "white"))
    assert moves_to(g, "18r", "18o", captures=["18p"])  # great general outranks vice general

    g = make_game(("18r", "VG", "black"), ("17q", "GG", "white"), ("19q", "VG", "white"))
    got = destinations(g, "18r")  # the vice general range-captures diagonally
    assert {"17q", "19q"} <= got  # it may capture either
    assert not {"16p", "15o", "20p", "21o"} & got  # but fly over neither (higher, equal rank)


@pytest.mark.parametrize("blocker", ["BG", "RO", "VD", "Flying crocodile"])
def test_rook_general_cannot_fly_over_an_equal_rank(blocker):
    g = make_game(("18r", "RO", "black"), ("18p", blocker, "white"), ("16r", "P", "white"))
    got = destinations(g, "18r")
    assert "18p" in got and "18o" not in got
    assert moves_to(g, "18r", "15r", captures=["16r"])  # a plain pawn can be flown over


# --------------------------------------------------------------------------------------------
# range jump: the ancient dragon jumps over pieces only to capture
# --------------------------------------------------------------------------------------------


def test_ancient_dragon_jumps_only_to_capture():
    # Ancient dragon (seed line 5530): ranging jump orthogonally forward or backward.
    g = make_game(("18r", "Ancient dragon", "black"), ("18p", "P", "black"), ("18n", "P", "white"))
    got = destinations(g, "18r")
    assert {s for s in got if s in FORWARD_FROM_18R} == {"18q", "18n"}
    (capture,) = moves_to(g, "18r", "18n")
    assert list(capture.captures) == ["18n"]  # its own pawn jumped over stays


# --------------------------------------------------------------------------------------------
# promotion by capture (seed line 5516)
# --------------------------------------------------------------------------------------------


def test_capturing_piece_promotes():
    g = make_game(("18r", "P", "black"), ("18q", "P", "white"))
    (m,) = moves_to(g, "18r", "18q")
    assert m.promotes and list(m.captures) == ["18q"]
    assert m.notation == "Px18q+"
    g.play(m)
    assert g.piece_at("18q").promoted is True
    # a promoted pawn is a gold general: orthogonal and diagonally forward steps
    assert destinations(g, "18q") == {"17p", "18p", "19p", "17q", "19q", "18r"}


def test_ferocious_leopard_becomes_bishop_and_stays_bishop():
    g = make_game(("18r", "FL", "black"), ("17q", "P", "white"), ("14n", "P", "white"), ("30e", "G", "white"))
    first = play(g, "18r", "17q")
    assert first.promotes
    assert g.piece_at("17q").promoted is True
    got = destinations(g, "17q")
    assert {"16p", "15o", "14n", "18p", "18r", "16r"} <= got  # a bishop's diagonals
    assert "13m" not in got  # behind the pawn on 14n
    assert "17p" not in got  # a bishop has no orthogonal step
    play(g, "30e", "30f")  # White's move
    second = play(g, "17q", "14n")
    assert not second.promotes  # it does not promote a second time
    assert g.piece_at("14n").promoted is True
    got = destinations(g, "14n")
    assert "13m" in got and "14m" not in got  # still a bishop, not a dragon horse


def test_placing_a_promoted_piece():
    g = make_game(("18r", "B", "black", True))  # a promoted bishop moves as a dragon horse
    assert g.piece_at("18r").promoted is True
    assert {"18q", "17r", "1a", "35a"} <= destinations(g, "18r")


def test_king_does_not_promote():
    g = make_game(("18r", "K", "black"), ("18q", "P", "white"))
    m = play(g, "18r", "18q")
    assert not m.promotes
    assert g.piece_at("18q").promoted is False
    assert "18o" in destinations(g, "18q")  # still the king's two squares


def test_lion_double_capture_promotes_once():
    g = make_game(("18r", "LN", "black"), ("18q", "P", "white"), ("18p", "P", "white"))
    m = play(g, "18r", "18p", captures=["18q", "18p"])
    assert m.promotes
    assert g.piece_at("18p").promoted is True
    # a furious fiend: lion moves plus three squares in any direction
    assert {"18m", "15m", "21s"} <= destinations(g, "18p")


# --------------------------------------------------------------------------------------------
# trapped pieces on the furthest rank (seed line 5520)
# --------------------------------------------------------------------------------------------


def test_running_wolf_on_furthest_rank_may_only_capture():
    g = make_game(("18b", "RW", "black"))
    assert {"18a", "17b", "19b", "17a", "19a"} <= destinations(g, "18b")  # one rank short: free

    g = make_game(("18a", "RW", "black"))
    assert list(g.moves_from("18a")) == []  # no non-capturing moves

    g = make_game(("18a", "RW", "black"), ("14a", "P", "white"))
    assert destinations(g, "18a") == {"14a"}  # but it can capture sideways
    assert list(moves_to(g, "18a", "14a")[0].captures) == ["14a"]

    g = make_game(("18jj", "RW", "white"), ("22jj", "P", "black"))  # White's furthest rank is jj
    assert destinations(g, "18jj") == {"22jj"}


def test_pawn_and_lance_stop_on_furthest_rank():
    g = make_game(("18b", "P", "black"), ("20a", "L", "black"))
    assert list(g.moves_from("20a")) == []
    g.play("P-18a")
    assert g.piece_at("18a").abbrev == "P"
    assert list(g.moves_from("18a")) == []


# --------------------------------------------------------------------------------------------
# the end of the game: capturing the last royal (seed line 5763)
# --------------------------------------------------------------------------------------------


def test_capturing_the_only_king_ends_the_game():
    g = make_game(("18r", "K", "black"), ("18p", "K", "white"))
    assert not g.is_over and g.result is None and g.termination is None
    play(g, "18r", "18p")
    assert g.is_over
    assert g.result == "black"
    assert isinstance(g.termination, str) and g.termination


def test_white_wins_by_capturing_the_black_king():
    g = make_game(("18r", "K", "black"), ("18q", "R", "white"), to_move="white")
    play(g, "18q", "18r")
    assert g.is_over and g.result == "white"


def test_king_and_crown_prince_survive_losing_one():
    g = make_game(
        ("18r", "R", "black"),
        ("30gg", "K", "black"),
        ("18m", "CP", "white"),
        ("10m", "K", "white"),
        ("30e", "P", "white"),
    )
    play(g, "18r", "18m")  # the crown prince falls; White still has its king
    assert not g.is_over and g.result is None
    play(g, "30e", "30f")
    play(g, "18m", "10m")  # now the king: White has no royal left
    assert g.is_over and g.result == "black"


def test_no_royals_no_game_end():
    # Game.empty has no kings: captures alone never end it (White keeps a piece that can move)
    g = make_game(("18r", "R", "black"), ("18m", "P", "white"), ("30e", "G", "white"))
    play(g, "18r", "18m")
    assert not g.is_over and g.result is None


# --------------------------------------------------------------------------------------------
# undo
# --------------------------------------------------------------------------------------------


def test_undo_restores_everything():
    g = make_game(
        ("18r", "LN", "black"),
        ("18q", "P", "white"),
        ("18p", "P", "white"),
        ("10j", "GG", "white"),
        ("10g", "P", "black"),
        ("10d", "K", "black"),
        ("30e", "K", "white"),
    )
    history = [snapshot(g)]
    play(g, "18r", "18p", captures=["18q", "18p"])  # lion double capture, promotes
    history.append(snapshot(g))
    play(g, "10j", "10d")  # great general flies over 10g and takes Black's only king
    assert g.is_over and g.result == "white"
    history.append(snapshot(g))
    assert history[0] != history[1] != history[2]

    g.undo()
    assert snapshot(g) == history[1]
    assert not g.is_over and g.result is None and g.termination is None
    g.undo()
    assert snapshot(g) == history[0]
    assert g.piece_at("18r").promoted is False
    assert g.piece_at("18q").color == "white" and g.piece_at("18p").color == "white"
    assert g.side_to_move == "black"
