"""Every variant through the whole Python surface: the game API, pickles, position texts, the
Gymnasium ids, vector and PettingZoo environments, self-play and datasets (the per-piece rules
are in test_piece_movement.py, test_daidai.py and test_tenjiku.py)."""

import pickle

import gymnasium
import numpy as np
import pytest

import taikyoku
import taikyoku.datasets as tds
from taikyoku import PositionTextError

VARIANTS = taikyoku.variants()
SIZES = {"taikyoku": (36, 36, 402), "daidai": (17, 17, 96), "tenjiku": (16, 16, 78), "taishin": (25, 25, 177)}


def test_the_variants_are_listed_with_their_gym_ids():
    assert VARIANTS[0] == "taikyoku" and {"daidai", "tenjiku"} <= set(VARIANTS)
    # Every known variant has one (variants loaded from files by other tests included).
    assert set(taikyoku.GYM_IDS) == set(taikyoku.variants()) >= set(VARIANTS)
    for env_id in taikyoku.GYM_IDS.values():
        assert env_id in gymnasium.registry
    built_in = {name: taikyoku.GYM_IDS[name] for name in ("taikyoku", "daidai", "tenjiku", "taishin")}
    assert built_in == {
        "taikyoku": "taikyoku/Taikyoku-v0",
        "daidai": "taikyoku/DaiDai-v0",
        "tenjiku": "taikyoku/Tenjiku-v0",
        "taishin": "taikyoku/Taishin-v0",
    }
    assert taikyoku.variant_info("daidai")["title"] == "Dai dai shogi"


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_game_of_each_variant(variant):
    width, height, pieces = SIZES[variant]
    game = taikyoku.Game(variant=variant)
    assert (game.width, game.height, game.variant_name) == (width, height, variant)
    assert sum(1 for _, p in game.pieces() if p.color == "black") == pieces
    # The text names no variant: its board size tells which.
    again = taikyoku.Game.from_text(game.to_text())
    assert again.variant_name == variant and again.to_text() == game.to_text()
    played = taikyoku.random_game(seed=5, max_plies=200, variant=variant)
    back = pickle.loads(pickle.dumps(played))
    assert (back.variant_name, back.to_text(), back.history()) == (variant, played.to_text(), played.history())
    for notation in played.history()[:40]:
        assert isinstance(notation, str) and notation


def test_a_text_of_no_variant_is_refused_by_name():
    with pytest.raises(PositionTextError, match="no variant has a board of 5 ranks"):
        taikyoku.Game.from_text("1/1/1/1/1 b 1")
    tenjiku = taikyoku.Game(variant="tenjiku").to_text()
    with pytest.raises(PositionTextError, match="expected 36 ranks"):
        taikyoku.Game.from_text(tenjiku, variant="taikyoku")


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_environments_of_each_variant(variant):
    env = gymnasium.make(taikyoku.GYM_IDS[variant])
    obs, info = env.reset(seed=1)
    assert obs.shape[:2] == (36, 36) and env.unwrapped.variant == variant
    rng = np.random.default_rng(0)
    for _ in range(30):
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(info["legal_actions"])))
        if terminated or truncated:
            break
    envs = taikyoku.VectorEnv(3, variant=variant)
    obs, _ = envs.reset(seed=0)
    assert obs.shape[:3] == (3, 36, 36)
    aec = taikyoku.pettingzoo_env(variant=variant)
    aec.reset(seed=0)
    assert aec.agent_selection == "black"


@pytest.mark.parametrize("variant", VARIANTS)
def test_selfplay_of_each_variant_records_it(variant, tmp_path):
    summary = taikyoku.selfplay(tmp_path / "d", variant=variant, players="random", games=2, max_plies=60, seed=3)
    assert summary["games"] == 2
    ds = tds.open(tmp_path / "d")
    assert set(ds.games.column("variant").to_pylist()) == {variant}
    assert ds.verify()["games"] == 2


def test_tenjiku_promotion_choices_have_their_own_actions():
    seen = 0
    for seed in range(3):
        game, rng = taikyoku.Game(variant="tenjiku"), np.random.default_rng(seed)
        while not game.is_over and game.ply < 250:
            moves = game.legal_moves()
            for move in moves:
                action = game.action_of(move)
                assert (action >= taikyoku.PROMOTION_BLOCK) == (move.promotes and move.notation.endswith("+"))
                assert game.move_of(action) == move
                seen += action >= taikyoku.PROMOTION_BLOCK
            game.play(moves[int(rng.integers(len(moves)))])
    assert seen > 0, "no promotion offered in 3 random Tenjiku games"
