"""The three environments share one configuration (taikyoku._env_config.EnvConfig): the same
settings are checked once, under one name, and the same mistake raises the same error, whichever
environment is built."""

from __future__ import annotations

import pytest

import taikyoku
from taikyoku._env_config import EnvConfig

pytest.importorskip("pettingzoo")


def build(kind: str, **settings):
    if kind == "gym":
        return taikyoku.TaikyokuEnv(variant="tenjiku", **settings)
    if kind == "vector":
        return taikyoku.VectorEnv(2, variant="tenjiku", **settings)
    return taikyoku.pettingzoo_env(variant="tenjiku", wrap=False, **settings)


SHARED = [
    ({"options": "promotion-touch"}, "options must be a list of names"),
    ({"max_plies": 0}, "max_plies"),
    ({"illegal_action": "ignore"}, "unknown illegal_action 'ignore'"),
    ({"render_mode": "opengl"}, "unknown render_mode 'opengl'"),
    ({"frame": "sideways"}, "unknown frame 'sideways'"),
    ({"compact": "yes"}, "compact must be True or False"),
    ({"start": 7}, "start must be a position text"),
]
SINGLE_AGENT = [
    ({"opponent": "alphazero"}, "unknown opponent 'alphazero'"),
    ({"agent_color": "red"}, "unknown agent_color 'red'"),
    ({"mcts_simulations": 0}, "mcts_simulations"),
]


@pytest.mark.parametrize("bad, fragment", SHARED + SINGLE_AGENT, ids=lambda v: str(v))
def test_one_mistake_one_error_in_every_env(bad, fragment):
    kinds = ["gym", "vector"] + (["pettingzoo"] if (bad, fragment) in SHARED else [])
    errors = []
    for kind in kinds:
        with pytest.raises(taikyoku.TaikyokuError, match=fragment) as caught:
            build(kind, **bad)
        # The same error; only the render modes offered differ (each env lists its own).
        errors.append((type(caught.value), str(caught.value).split(" (use one of")[0]))
    assert len(set(errors)) == 1, errors


def test_a_variant_that_is_no_name_is_refused_alike():
    for kind in ("gym", "vector", "pettingzoo"):
        with pytest.raises(taikyoku.TaikyokuError, match=r"variant must be a variant name \(str\), not 3"):
            _with_variant(kind, 3)


def _with_variant(kind: str, variant):
    if kind == "gym":
        return taikyoku.TaikyokuEnv(variant=variant)
    if kind == "vector":
        return taikyoku.VectorEnv(2, variant=variant)
    return taikyoku.pettingzoo_env(variant=variant, wrap=False)


def test_every_env_keeps_its_checked_settings():
    settings = dict(options=["promotion-touch"], max_plies=40, illegal_action="lose", frame="absolute", compact=True)
    configs = [build(kind, **settings).config for kind in ("gym", "vector", "pettingzoo")]
    assert configs[0] == configs[1] == configs[2]
    assert configs[0] == EnvConfig(
        variant="tenjiku",
        options=("promotion-touch",),
        max_plies=40,
        illegal_action="lose",
        frame="absolute",
        compact=True,
    )
    gym_env = build("gym", opponent="random", agent_color="white", mcts_simulations=8)
    assert (gym_env.config.opponent, gym_env.config.agent_color, gym_env.config.mcts_simulations) == (
        "random",
        "white",
        8,
    )
    assert build("vector", **settings).options == build("pettingzoo", **settings).options == ["promotion-touch"]
