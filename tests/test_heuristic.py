"""The heuristic evaluator exposed to Python (taikyoku.heuristic_value / heuristic_priors): the
numbers MCTS self-play uses, for baselines and reward shaping."""

import numpy as np
import pytest

import taikyoku


@pytest.mark.parametrize("variant", taikyoku.variants())
def test_the_setup_is_even_and_the_priors_cover_the_legal_actions(variant):
    game = taikyoku.Game(variant=variant)
    assert taikyoku.heuristic_value(game) == pytest.approx(0.0, abs=1e-6)
    actions, priors = taikyoku.heuristic_priors(game)
    assert np.array_equal(actions, game.legal_actions())
    assert priors.dtype == np.float32 and np.all(priors > 0) and priors.sum() == pytest.approx(1.0, rel=1e-5)


def test_material_counts_for_the_side_that_has_it_and_captures_get_more_prior():
    game = taikyoku.Game.empty()
    game.place("18r", "K", "black")
    game.place("18a", "K", "white")
    game.place("10k", "R", "black")
    game.place("10e", "G", "white")  # the rook can take it
    black = taikyoku.heuristic_value(game)
    assert black > 0 and taikyoku.heuristic_value(game, "white") == pytest.approx(-black)
    actions, priors = taikyoku.heuristic_priors(game)
    capture = game.action_of("Rx10e+")
    quiet = game.action_of("R-10f")
    assert priors[actions == capture][0] > priors[actions == quiet][0]


def test_a_finished_game_is_worth_its_result():
    game = taikyoku.Game.empty()
    game.place("18r", "K", "black")
    game.place("18a", "K", "white")
    game.place("18b", "G", "black")
    game.play("Gx18a")
    assert game.is_over and game.result == "black"
    assert taikyoku.heuristic_value(game, "black") == 1.0 and taikyoku.heuristic_value(game) == -1.0
    actions, priors = taikyoku.heuristic_priors(game)
    assert actions.size == priors.size == 0


def test_a_bad_colour_is_refused():
    with pytest.raises(ValueError, match="red"):
        taikyoku.heuristic_value(taikyoku.Game(), "red")
