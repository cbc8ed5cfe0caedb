"""Every environment's observations are the full encoder's (``Game.observation``), bit for bit, at
every ply of seeded games, in every variant and frame: the Gymnasium env, the PettingZoo env (both
agents' views) and VectorEnv (with its automatic resets, ``copy=True`` and ``copy=False``).

The envs write each observation into a new array whose memory they reuse once an earlier array
is freed; the tests also check that an array the caller keeps never changes afterwards, and that
one the caller scribbled on before freeing it does not leak into a later observation.
"""

import gc

import numpy as np
import pytest

import taikyoku
from taikyoku import Game
from taikyoku._core import plane_names
from taikyoku.env import TaikyokuEnv
from taikyoku.vector import VectorEnv

VARIANTS = ["taikyoku", "tenjiku", "daidai", "taishin"]
FRAMES = ["mover", "absolute"]
#: Plies per game: long enough for captures, promotions and (Taishin) passes, short enough to be
#: quick on Taikyoku's 36×36 board.
PLIES = {"taikyoku": 60, "tenjiku": 150, "daidai": 150, "taishin": 150}


def _expected(game, frame, compact=False, dtype=None):
    return game.observation(dtype=dtype, frame=frame, compact=compact)


def _same(actual, expected):
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    assert np.array_equal(actual, expected)


def _pick(legal, rng):
    legal = np.asarray(legal)
    return int(legal[rng.integers(legal.size)])


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("frame", FRAMES)
def test_gym_env_observations_are_the_full_encoders(variant, frame):
    env = TaikyokuEnv(variant, frame=frame, max_plies=PLIES[variant])
    rng = np.random.default_rng(7)
    kept = []  # (observation, a copy of it): what the caller keeps must never change
    for episode in range(2):
        obs, info = env.reset(seed=episode)
        _same(obs, _expected(env.game, frame))
        done = False
        while not done:
            obs, _, terminated, truncated, info = env.step(_pick(info["legal_actions"], rng))
            _same(obs, _expected(env.game, frame))
            done = terminated or truncated
            if env.game.ply % 17 == 0:
                kept.append((obs, obs.copy()))
            elif env.game.ply % 5 == 0:
                obs[...] = 7  # scribbled on, then freed: its memory is reused, and rewritten whole
            del obs
    for obs, copy in kept:
        assert np.array_equal(obs, copy)


@pytest.mark.parametrize("compact, dtype", [(True, None), (False, "float32"), (True, "float32")])
def test_gym_env_other_layouts_and_dtypes(compact, dtype):
    env = TaikyokuEnv("tenjiku", compact=compact, dtype=dtype, max_plies=80)
    rng = np.random.default_rng(3)
    obs, info = env.reset(seed=0)
    for _ in range(80):
        _same(obs, _expected(env.game, "mover", compact, dtype))
        assert obs.dtype == env.observation_space.dtype and env.observation_space.contains(obs)
        obs, _, terminated, truncated, info = env.step(_pick(info["legal_actions"], rng))
        if terminated or truncated:
            break
    _same(obs, _expected(env.game, "mover", compact, dtype))


def test_gym_env_observes_a_game_set_by_hand():
    env = TaikyokuEnv("daidai")
    env.reset(seed=0)
    env.game = Game("daidai")
    env.game.play(int(env.game.legal_actions()[3]))
    _same(env._observe(), _expected(env.game, "mover"))


def _waiting_view(game, agent, frame, compact):
    """The waiting agent's observation as the PettingZoo env built it in Python before: the side
    to move's, mover and opponent planes swapped, the board turned to the agent (mover frame)."""
    obs = game.observation(frame=frame, compact=compact)
    if agent == game.side_to_move:
        return obs
    names = plane_names(game.variant_name, compact=compact)
    index = {name: i for i, name in enumerate(names)}
    swap = []
    for name in names:
        if name.startswith("mover"):
            name = "opponent" + name[len("mover") :]
        elif name.startswith("opponent"):
            name = "mover" + name[len("opponent") :]
        swap.append(index[name])
    obs = obs[..., swap]
    if frame == "mover":
        h, w = game.height, game.width
        obs[:h, :w] = obs[:h, :w][::-1, ::-1].copy()
    return obs


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("frame", FRAMES)
def test_pettingzoo_observations_are_the_full_encoders(variant, frame):
    pytest.importorskip("pettingzoo")
    from taikyoku.multiagent import TaikyokuAEC

    rng = np.random.default_rng(11)
    for compact in (False, True):
        env = TaikyokuAEC(variant, frame=frame, compact=compact, max_plies=PLIES[variant] // (2 if compact else 1))
        env.reset(seed=0)
        for _agent in env.agent_iter():
            game = env.game
            for who in ("black", "white"):
                _same(env.observe(who)["observation"], _waiting_view(game, who, frame, compact))
            _, _, terminated, truncated, info = env.last()
            env.step(None if terminated or truncated else _pick(info["legal_actions"], rng))


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("frame", FRAMES)
def test_vector_env_observations_are_the_full_encoders(variant, frame):
    n, plies = 3, PLIES[variant] // 3
    envs = {copy: VectorEnv(n, variant, seed=5, frame=frame, max_plies=plies, copy=copy) for copy in (True, False)}
    kept = []
    for copy, env in envs.items():
        obs, infos = env.reset(seed=1)
        resets = 0
        for step in range(2 * plies + 5):
            for i in range(n):
                _same(obs[i], _expected(env.game(i), frame))
            if copy and step % 7 == 0:
                kept.append((obs, obs.copy()))
            elif copy and step % 3 == 0:
                obs[...] = 9  # scribbled on, then freed: its memory is reused, and rewritten whole
            del obs
            obs, _, terminated, truncated, infos = env.step(env.random_actions())
            if "final_obs" in infos:
                for i in np.flatnonzero(infos["_final_obs"]):
                    _same(infos["final_obs"][i], _expected(infos["final_info"][i]["game"], frame))
                    resets += 1
        assert resets >= n  # every game ended and restarted at least once
    gc.collect()
    for obs, copy in kept:
        assert np.array_equal(obs, copy)


@pytest.mark.parametrize(("n", "dtype"), [(12, None), (3, "float32")])
def test_large_vector_env_batches_are_the_full_encoders(n, dtype):
    # Batches of 8 MiB or more (12 Taikyoku boards of uint8, 3 of float32) are cleared with
    # streaming stores before they are written: scribbled ones too.
    env = VectorEnv(n, seed=3, dtype=dtype)
    obs, _ = env.reset(seed=3)
    assert obs.nbytes >= 8 << 20
    kept = []
    for step in range(12):
        for i in range(n):
            _same(obs[i], _expected(env.game(i), "mover", dtype=dtype))
        if step % 4 == 0:
            kept.append((obs, obs.copy()))
        else:
            obs[...] = 7
        del obs
        obs, *_ = env.step(env.random_actions())
    gc.collect()
    for obs, copy in kept:
        assert np.array_equal(obs, copy)


def test_vector_env_dtypes_and_compact():
    for compact, dtype in [(True, None), (False, "float32"), (True, "float32")]:
        env = VectorEnv(2, "taishin", seed=0, compact=compact, dtype=dtype, max_plies=30)
        obs, _ = env.reset(seed=0)
        for _ in range(40):
            assert obs.dtype == env.single_observation_space.dtype
            for i in range(2):
                _same(obs[i], _expected(env.game(i), "mover", compact, dtype))
            obs, *_ = env.step(env.random_actions())


def test_taikyoku_package_exposes_the_writer():
    writer = taikyoku._core.ObservationWriter("tenjiku", frame="absolute", compact=True)
    game = Game("tenjiku")
    _same(writer.observe(game), _expected(game, "absolute", compact=True))
    with pytest.raises(taikyoku.TaikyokuError):
        writer.observe(Game("taishin"))
