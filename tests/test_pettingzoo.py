"""The PettingZoo AEC environment (taikyoku.multiagent): API conformance, each agent's own
perspective, rewards at every kind of game end, illegal actions, determinism, rendering."""

import doctest
import warnings

import numpy as np
import pytest

pytest.importorskip("pettingzoo")
from pettingzoo.test import api_test, seed_test  # noqa: E402

import taikyoku  # noqa: E402
from taikyoku import Game, IllegalMoveError, multiagent  # noqa: E402
from taikyoku._core import NUM_ACTIONS, plane_names  # noqa: E402
from taikyoku.multiagent import TaikyokuAEC, pettingzoo_env  # noqa: E402

NAMES = plane_names("taikyoku")
PLANE = {name: i for i, name in enumerate(NAMES)}
PIECE_PLANES = [i for i, name in enumerate(NAMES) if "/" in name or name.endswith("_promoted")]


def _quiet_api_test(env, num_cycles):
    # api_test warns about things that are choices here (agent names "black"/"white", a Dict
    # observation for an env it does not know by name); only failures matter.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(env, num_cycles=num_cycles, verbose_progress=False)


def _kings_only(side_to_move="black", extra=()):
    """A position text: the two kings on their home squares, plus `extra` pieces."""
    g = Game.empty(side_to_move=side_to_move)
    g.place("18a", "K", "white")
    g.place("18jj", "K", "black")
    for square, piece, color in extra:
        g.place(square, piece, color)
    return g.to_text()


def _drain(env):
    """Steps the finished agents out with None, as an agent_iter loop would."""
    while env.agents:
        _, _, terminated, truncated, _ = env.last()
        assert terminated or truncated
        env.step(None)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(max_plies=8),
        dict(max_plies=8, frame="absolute", compact=True, illegal_action="lose"),
    ],
    ids=["mover-onehot", "absolute-compact"],
)
def test_api_test_passes(kwargs):
    # max_plies < the cycles played, so the truncation path runs inside api_test too.
    _quiet_api_test(pettingzoo_env(**kwargs), num_cycles=10)


def test_api_test_passes_unwrapped():
    env = pettingzoo_env(max_plies=6, wrap=False)
    assert type(env) is TaikyokuAEC
    _quiet_api_test(env, num_cycles=5)


def test_wrapped_env_exposes_the_raw_env():
    env = pettingzoo_env()
    assert isinstance(env.unwrapped, TaikyokuAEC)
    assert env.metadata["name"] == "taikyoku_v0"
    assert env.metadata["is_parallelizable"] is False
    with pytest.raises(Exception):  # noqa: B017 (OrderEnforcingWrapper's class varies by version)
        # OrderEnforcingWrapper: no stepping before reset
        env.step(0)


def test_random_agents_play_to_truncation():
    env = pettingzoo_env(max_plies=24)
    env.reset(seed=7)
    for i, agent in enumerate(env.possible_agents):
        env.action_space(agent).seed(7 + i)
    totals = {agent: 0.0 for agent in env.possible_agents}
    plies = 0
    for agent in env.agent_iter(max_iter=1000):
        obs, reward, terminated, truncated, info = env.last()
        totals[agent] += reward
        if terminated or truncated:
            action = None
        else:
            assert agent == env.unwrapped.game.side_to_move
            action = env.action_space(agent).sample(mask=obs["action_mask"])
            assert action in info["legal_actions"]
            plies += 1
        env.step(action)
    assert env.agents == []
    assert plies == 24
    assert sum(totals.values()) == 0
    assert env.unwrapped.game.termination == "max_plies"


def test_spaces_are_cached_and_contain_observations():
    for compact, dtype in [(False, np.uint8), (True, np.uint16)]:
        env = pettingzoo_env(compact=compact)
        env.reset()
        for agent in env.possible_agents:
            space = env.observation_space(agent)
            assert space is env.observation_space(agent)
            assert env.action_space(agent) is env.action_space(agent)
            assert env.action_space(agent).n == NUM_ACTIONS
            assert space["observation"].dtype == dtype
            planes = len(plane_names("taikyoku", compact=compact))
            assert space["observation"].shape == (36, 36, planes)
            assert space["action_mask"].shape == (NUM_ACTIONS,)
            assert space.contains(env.observe(agent))


def test_action_mask_belongs_to_the_agent_to_move():
    env = pettingzoo_env()
    env.reset()
    legal = env.unwrapped.game.legal_actions()
    black, white = env.observe("black"), env.observe("white")
    assert black["action_mask"].dtype == np.int8
    np.testing.assert_array_equal(np.flatnonzero(black["action_mask"]), legal)
    np.testing.assert_array_equal(env.infos["black"]["legal_actions"], legal)
    assert not white["action_mask"].any()
    assert "legal_actions" not in env.infos["white"]


def test_both_agents_see_the_symmetric_start_alike():
    # The initial setup is point-symmetric, so each side sees the same picture from its own
    # side; white_to_move keeps the engine's meaning ("White is to move"), 0 for both here.
    env = pettingzoo_env()
    env.reset()
    black = env.observe("black")["observation"]
    white = env.observe("white")["observation"]
    np.testing.assert_array_equal(black, white)
    assert not black[..., PLANE["white_to_move"]].any()


def test_each_agent_finds_its_own_king_near_itself():
    # Not relying on symmetry: locate both kings in Black's (absolute) view and check where
    # each agent's observation puts them.
    env = pettingzoo_env()
    env.reset()
    env.step(int(env.unwrapped.game.legal_actions()[0]))  # now White is to move
    absolute = env.unwrapped.game.observation(frame="absolute")  # White to move: mover = White
    ((wr, wc),) = np.argwhere(absolute[..., PLANE["mover/K"]])
    ((br, bc),) = np.argwhere(absolute[..., PLANE["opponent/K"]])
    white = env.observe("white")["observation"]
    black = env.observe("black")["observation"]
    assert white[35 - wr, 35 - wc, PLANE["mover/K"]] == 1  # White's own king, board turned
    assert white[35 - br, 35 - bc, PLANE["opponent/K"]] == 1
    assert black[br, bc, PLANE["mover/K"]] == 1  # Black's own king, board as Black sees it
    assert black[wr, wc, PLANE["opponent/K"]] == 1
    # Each side's own king is on the row nearest to it (the bottom) in its own view.
    assert wr == 0 and br == 35


def test_waiting_agent_sees_what_it_would_see_to_move():
    # Black's view after its own move must equal the engine's mover-frame encoding of the same
    # board with Black to move (made by editing the position text's side-to-move field).
    env = pettingzoo_env()
    env.reset()
    env.step(int(env.unwrapped.game.legal_actions()[5]))
    game = env.unwrapped.game
    text = game.to_text(history=False)  # the position's fields alone, to edit
    board, side, number = text.rsplit(" ", 2)
    assert side == "w"
    as_if_black = Game.from_text(f"{board} b {number}").observation(frame="mover")
    black = env.observe("black")["observation"]
    np.testing.assert_array_equal(black[..., PIECE_PLANES], as_if_black[..., PIECE_PLANES])
    assert (black[..., PLANE["white_to_move"]] == 1).all()  # it is White's turn, not Black's
    # The agent to move gets the engine's encoding unchanged.
    white = env.observe("white")["observation"]
    np.testing.assert_array_equal(white, game.observation(frame="mover"))


def test_absolute_frame_same_board_own_pieces_first():
    env = pettingzoo_env(frame="absolute")
    env.reset()
    env.step(int(env.unwrapped.game.legal_actions(frame="absolute")[3]))
    game = env.unwrapped.game
    white = env.observe("white")["observation"]
    black = env.observe("black")["observation"]
    np.testing.assert_array_equal(white, game.observation(frame="absolute"))
    k = sum(name.startswith("mover/") for name in NAMES)
    np.testing.assert_array_equal(black[..., :k], white[..., k : 2 * k])
    np.testing.assert_array_equal(black[..., k : 2 * k], white[..., :k])
    np.testing.assert_array_equal(black[..., 2 * k + 2 :], white[..., 2 * k + 2 :])


def test_compact_waiting_agent_swaps_piece_ids():
    env = pettingzoo_env(compact=True)
    env.reset()
    env.step(int(env.unwrapped.game.legal_actions()[0]))
    mover = env.observe("white")["observation"]
    waiting = env.observe("black")["observation"]
    assert mover.dtype == waiting.dtype == np.uint16
    turned = waiting[::-1, ::-1]
    np.testing.assert_array_equal(turned[..., 0], mover[..., 1])
    np.testing.assert_array_equal(turned[..., 1], mover[..., 0])


def test_illegal_action_raise_leaves_everything_unchanged():
    env = pettingzoo_env(illegal_action="raise")
    env.reset()
    raw = env.unwrapped

    def snapshot():
        game = raw.game
        rewards = (dict(env.rewards), dict(env._cumulative_rewards))
        return (game.hash, game.ply, env.agent_selection, rewards)

    before = snapshot()
    mask_before = env.observe("black")["action_mask"].copy()
    for bad in [0, -1, NUM_ACTIONS, "7g7f", None, 1.5]:
        with pytest.raises(IllegalMoveError):
            env.step(bad)
        assert snapshot() == before
        assert not any(env.terminations.values()) and not any(env.truncations.values())
    np.testing.assert_array_equal(env.observe("black")["action_mask"], mask_before)
    env.step(np.int32(raw.game.legal_actions()[0]))  # still playable; numpy ints accepted
    assert env.agent_selection == "white"


@pytest.mark.parametrize("bad", [0, None], ids=["illegal-int", "none"])
def test_illegal_action_lose_ends_the_game(bad):
    env = pettingzoo_env(illegal_action="lose")
    env.reset()
    env.step(bad)
    assert env.terminations == {"black": True, "white": True}
    assert env.truncations == {"black": False, "white": False}
    assert env.rewards == {"black": -1, "white": 1}
    assert env.infos["black"]["termination"] == "illegal_move"
    assert env.infos["white"]["result"] == "white"
    assert env.infos["black"]["illegal_action"] == bad
    assert env.agent_selection == "white"
    _, reward, terminated, _, _ = env.last()
    assert (reward, terminated) == (1, True)
    assert not env.observe("white")["action_mask"].any()
    env.step(None)
    assert env.agent_selection == "black"
    _, reward, terminated, _, _ = env.last()
    assert (reward, terminated) == (-1, True)
    env.step(None)
    assert env.agents == []


def test_dead_agent_must_step_none():
    env = pettingzoo_env(illegal_action="lose")
    env.reset()
    env.step(0)
    with pytest.raises(ValueError):
        env.step(0)


def test_seeded_runs_are_identical():
    def run(seed):
        env = pettingzoo_env(max_plies=10)
        env.reset(seed=seed)
        for i, agent in enumerate(env.possible_agents):
            env.action_space(agent).seed(seed + i)
        seen = []
        for agent in env.agent_iter():
            obs, _, terminated, truncated, _ = env.last()
            done = terminated or truncated
            action = None if done else env.action_space(agent).sample(mask=obs["action_mask"])
            seen.append((agent, action, obs["observation"].copy()))
            env.step(action)
        return seen

    first, second = run(11), run(11)
    assert len(first) == len(second) == 12
    for (a1, act1, o1), (a2, act2, o2) in zip(first, second):
        assert (a1, act1) == (a2, act2)
        np.testing.assert_array_equal(o1, o2)
    assert [a for _, a, _ in run(12)] != [a for _, a, _ in first]


def test_pettingzoo_seed_test():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seed_test(lambda: pettingzoo_env(max_plies=6), num_cycles=5)


def test_reset_restarts_the_game():
    env = pettingzoo_env(max_plies=3)
    env.reset(seed=1)
    start = env.observe("black")["observation"].copy()
    env.step(int(env.unwrapped.game.legal_actions()[0]))
    env.reset(seed=1)
    assert env.unwrapped.game.ply == 0
    assert env.agents == ["black", "white"] and env.agent_selection == "black"
    assert env._cumulative_rewards == {"black": 0, "white": 0}
    np.testing.assert_array_equal(env.observe("black")["observation"], start)


def test_truncation_at_max_plies():
    env = pettingzoo_env(max_plies=2)
    env.reset()
    for _ in range(2):
        assert not any(env.truncations.values())
        env.step(int(env.unwrapped.game.legal_actions()[0]))
    assert env.truncations == {"black": True, "white": True}
    assert env.terminations == {"black": False, "white": False}
    assert env.rewards == {"black": 0, "white": 0}
    assert env.infos["black"] == {"result": None, "termination": "max_plies"}
    assert not env.observe("black")["action_mask"].any()
    _drain(env)
    assert env.agents == []


@pytest.mark.parametrize("frame", ["mover", "absolute"])
def test_black_wins_by_royal_capture(frame):
    start = _kings_only("black", extra=[("18b", "G", "black")])
    env = pettingzoo_env(start=start, frame=frame)
    env.reset()
    action = env.unwrapped.game.action_of("Gx18a+", frame=frame)
    assert env.observe("black")["action_mask"][action] == 1
    env.step(action)
    assert env.terminations == {"black": True, "white": True}
    assert env.rewards == {"black": 1, "white": -1}
    assert env.infos["white"] == {"result": "black", "termination": "royal_capture"}
    assert env._cumulative_rewards == {"black": 1, "white": -1}
    _drain(env)


@pytest.mark.parametrize("frame", ["mover", "absolute"])
def test_white_wins_by_royal_capture(frame):
    # White moves first from this text, so the mover-frame action is in White's turned frame.
    start = _kings_only("white", extra=[("18ii", "G", "white")])
    env = pettingzoo_env(frame=frame)
    env.reset(options={"start": start})
    assert env.agent_selection == "white"
    game = env.unwrapped.game
    move = [m for m in game.moves_from("18ii") if m.to_square == "18jj"][0]
    env.step(game.action_of(move, frame=frame))
    assert env.rewards == {"black": -1, "white": 1}
    assert game.termination == "royal_capture"
    _drain(env)


def test_repetition_draw_rewards_nothing():
    env = pettingzoo_env(start=_kings_only())
    env.reset()
    game = env.unwrapped.game
    shuttle = [("18jj", "18ii"), ("18a", "18b"), ("18ii", "18jj"), ("18b", "18a")]
    plies = 0
    while not any(env.terminations.values()):
        src, dst = shuttle[plies % 4]
        move = [m for m in game.moves_from(src) if m.to_square == dst][0]
        env.step(game.action_of(move))
        plies += 1
        assert plies < 40
    assert game.termination == "repetition"
    assert env.rewards == {"black": 0, "white": 0}
    assert env.infos["black"]["result"] == "draw"
    _drain(env)


def test_render_modes():
    env = pettingzoo_env(render_mode="ansi")
    env.reset()
    text = env.render()
    assert isinstance(text, str) and "Black to move" in text
    env = pettingzoo_env(render_mode="svg")
    env.reset()
    assert env.render().startswith("<svg")
    env.close()
    env = pettingzoo_env()
    env.reset()
    with pytest.warns(UserWarning, match="render"):
        assert env.render() is None
    with pytest.raises(ValueError):
        pettingzoo_env(render_mode="teapot")


def test_bad_arguments_fail_early():
    with pytest.raises(ValueError):
        pettingzoo_env(illegal_action="ignore")
    with pytest.raises(ValueError):
        pettingzoo_env(frame="white")
    with pytest.raises(ValueError):
        pettingzoo_env(max_plies=0)
    with pytest.raises(taikyoku.TaikyokuError):
        pettingzoo_env(start="not a position")


def test_module_doctest():
    failures, _ = doctest.testmod(multiagent, verbose=False)
    assert failures == 0
