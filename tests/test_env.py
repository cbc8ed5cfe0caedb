"""Actions, observations, the Gymnasium env and the vector env (docs/ACTIONS.md)."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import taikyoku
from taikyoku import IllegalMoveError, TaikyokuError

GRID = 36


def kings_face_to_face():
    """Black to move can take White's only king with its own king."""
    g = taikyoku.Game.empty()
    g.place("18r", "K", "black")
    g.place("18q", "K", "white")
    g.place("1a", "P", "white")
    g.place("1jj", "P", "black")
    return g


# -- action space -----------------------------------------------------------------------------


def test_action_space_size_is_fixed():
    assert taikyoku.MOVE_BLOCK == 1296 * 1296
    assert taikyoku.TEMPLATE_COUNT == len(taikyoku.action_templates()) == 672
    # Every action once without and once with the promotion bit (promotion in a zone).
    assert taikyoku.PROMOTION_BLOCK == 1296 * 1296 + 1296 * 672 == 2_550_528
    assert taikyoku.NUM_ACTIONS == 2 * taikyoku.PROMOTION_BLOCK == 5_101_056


def test_templates_cover_lion_igui_and_three_step_lines():
    templates = taikyoku.action_templates()
    assert templates.index(([(-1, 0)], (0, 0))) >= 0  # igui on the square in front
    assert ([(-2, 0), (-1, 0)], (-3, 0)) in templates  # lion dog: take two, land on the third
    assert templates[0] == ([(-2, -2)], (-3, -3))


def test_opening_actions_are_simple_moves():
    g = taikyoku.Game()
    actions = g.legal_actions()
    assert actions.dtype == np.int64 and len(actions) == g.legal_move_count() == 265
    assert np.all(np.diff(actions) > 0)
    # The smallest action: the top-most, then left-most piece that can move (rows count from
    # the top of the mover's frame): Black's dog on 31y stepping to 32x.
    move = g.move_of(int(actions[0]))
    assert g.action_of(move) == actions[0]
    frm, to = divmod(int(actions[0]), 1296)
    assert divmod(frm, 36) == (24, 5) and divmod(to, 36) == (23, 4)
    assert (move.from_square, move.to_square) == ("31y", "32x")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_actions_are_a_bijection_over_random_games(seed):
    g = taikyoku.Game()
    rng = np.random.default_rng(seed)
    multi_leg = 0
    for _ in range(300):
        if g.is_over:
            break
        moves = g.legal_moves()
        for frame in ("mover", "absolute"):
            actions = [g.action_of(m, frame=frame) for m in moves]
            assert len(set(actions)) == len(moves)
            assert sorted(actions) == g.legal_actions(frame=frame).tolist()
            for m, a in zip(moves[::25], actions[::25]):
                assert g.move_of(a, frame=frame) == m
            multi_leg += sum(a >= taikyoku.MOVE_BLOCK for a in actions)
        g.play(moves[rng.integers(len(moves))])
    assert g.ply > 100


def test_lion_igui_and_double_capture_have_template_actions():
    g = taikyoku.Game.empty()
    g.place("18r", "LN", "black")
    g.place("18q", "P", "white")
    g.place("17p", "P", "white")
    g.place("1a", "K", "white")
    g.place("1jj", "K", "black")
    igui = next(m for m in g.legal_moves() if m.is_igui)
    double = next(m for m in g.legal_moves() if m.mid_square == "18q" and m.to_square == "17p")
    for move in (igui, double):
        action = g.action_of(move)
        assert action >= taikyoku.MOVE_BLOCK
        captures, end = taikyoku.action_templates()[(action - taikyoku.MOVE_BLOCK) % taikyoku.TEMPLATE_COUNT]
        assert captures == [(-1, 0)]  # the pawn in front, in the mover's frame
        assert g.move_of(action) == move
    assert end == (-2, 1)  # then one step on, diagonally left as Black sees it


def test_mover_frame_rotates_actions_for_white():
    g = taikyoku.Game()
    black_actions = g.legal_actions()
    white = taikyoku.Game.from_text(taikyoku.Game().to_text().replace(" b ", " w "))
    # The setup is symmetric: White's actions in its own frame are Black's.
    assert np.array_equal(white.legal_actions(), black_actions)
    assert not np.array_equal(white.legal_actions(frame="absolute"), black_actions)


def test_mask_on_request():
    g = taikyoku.Game()
    mask = g.legal_action_mask()
    assert mask.shape == (taikyoku.NUM_ACTIONS,) and mask.dtype == bool
    assert np.array_equal(np.flatnonzero(mask), g.legal_actions())


def test_bad_actions_raise_and_change_nothing():
    g = taikyoku.Game()
    before = g.to_text()
    for bad in (0, -1, taikyoku.NUM_ACTIONS, 10**30):
        with pytest.raises(IllegalMoveError):
            g.play(bad)
        with pytest.raises(IllegalMoveError):
            g.move_of(bad)
    with pytest.raises(IllegalMoveError, match="not a legal move"):
        g.move_of(0)
    with pytest.raises(IllegalMoveError, match="integer"):
        g.move_of("12h")
    with pytest.raises(TaikyokuError, match="frame"):
        g.legal_actions(frame="sideways")
    assert g.to_text() == before and g.ply == 0


def test_play_accepts_actions():
    g = taikyoku.Game()
    action = int(g.legal_actions()[5])
    expected = g.move_of(action)
    assert g.play(action) == expected
    assert g.ply == 1


# -- observations -----------------------------------------------------------------------------


def test_planes_are_named_and_one_hot():
    names = taikyoku.plane_names()
    kinds = len(taikyoku.piece_types())
    assert len(names) == 2 * kinds + 7 == 609
    assert names[0].startswith("mover/") and names[kinds].startswith("opponent/")
    assert names[-7:] == [
        "mover_promoted",
        "opponent_promoted",
        "on_board",
        "repetitions",
        "white_to_move",
        "move_number_high",
        "move_number_low",
    ]
    g = taikyoku.Game()
    obs = g.observation()
    assert obs.shape == (GRID, GRID, 609) and obs.dtype == np.uint8
    assert obs[:, :, : 2 * kinds].sum() == 804
    assert obs[:, :, : 2 * kinds].max() == 1
    assert obs[:, :, names.index("on_board")].all()
    assert obs[:, :, names.index("move_number_low")].min() == 1
    # Black's king on 19jj: bottom row, column 36 - 19 = 17, in the mover's plane "mover/K".
    assert obs[35, 17, names.index("mover/K")] == 1
    assert obs[0, 18, names.index("opponent/K")] == 1


def test_float32_is_the_same_numbers():
    g = taikyoku.random_game(5, 40)
    assert np.array_equal(g.observation(dtype="float32"), g.observation().astype(np.float32))
    assert g.observation(dtype=np.float32).dtype == np.float32


def test_compact_layout():
    names = taikyoku.plane_names(compact=True)
    assert names == [
        "mover_piece",
        "opponent_piece",
        "promoted",
        "on_board",
        "repetitions",
        "white_to_move",
        "move_number_high",
        "move_number_low",
    ]
    g = taikyoku.Game()
    obs = g.observation(compact=True)
    assert obs.shape == (GRID, GRID, 8) and obs.dtype == np.uint16
    kinds = [p.abbrev for p in taikyoku.piece_types()]
    assert kinds[obs[35, 17, 0] - 1] == "K"
    assert (obs[:, :, 0] > 0).sum() == (obs[:, :, 1] > 0).sum() == 402
    with pytest.raises(TaikyokuError, match="uint16"):
        g.observation(compact=True, dtype="uint8")
    with pytest.raises(TaikyokuError, match="dtype"):
        g.observation(dtype="int7")


def test_mover_frame_observation_is_symmetric_in_the_opening():
    black = taikyoku.Game()
    white = taikyoku.Game.from_text(black.to_text().replace(" b ", " w "))
    a, b = black.observation(), white.observation()
    side = taikyoku.plane_names().index("white_to_move")
    assert np.array_equal(np.delete(a, side, axis=2), np.delete(b, side, axis=2))
    assert a[:, :, side].max() == 0 and b[:, :, side].min() == 1


def test_repetition_and_move_number_planes():
    g = taikyoku.Game.empty()
    g.place("18jj", "K", "black")
    g.place("18a", "K", "white")
    names = taikyoku.plane_names()
    # Both kings step out and back three times: the start occurs for the fourth time.
    for _ in range(3):
        for notation in ("K-18ii", "K-18b", "K-18jj", "K-18a"):
            g.play(notation)
    assert g.repetitions == 4 and g.termination == "repetition"
    obs = g.observation()
    assert obs[0, 0, names.index("move_number_low")] == g.move_number == 13
    assert obs[0, 0, names.index("move_number_high")] == 0
    assert obs[0, 0, names.index("repetitions")] == 3


def test_batched_encoding_matches_single():
    games = [taikyoku.random_game(seed, 30 + seed) for seed in range(5)]
    batch = taikyoku.encode_observations(games)
    assert batch.shape == (5, GRID, GRID, 609)
    for game, obs in zip(games, batch):
        assert np.array_equal(obs, game.observation())
    with pytest.raises(TaikyokuError):
        taikyoku.encode_observations([])


# -- Gymnasium --------------------------------------------------------------------------------


def test_registered_and_passes_the_checker():
    env = gym.make("taikyoku/Taikyoku-v0", max_plies=30)
    assert isinstance(env.unwrapped, taikyoku.TaikyokuEnv)
    check_env(env.unwrapped)
    assert env.action_space.n == taikyoku.NUM_ACTIONS
    assert env.observation_space.shape == (GRID, GRID, 609)


def test_checker_passes_against_a_random_opponent_and_compact():
    # The checker samples an action, resets, then plays it: against an opponent the sample comes
    # from a later position, so it may be illegal after the reset. Under the seed's rule
    # (illegal_action="lose") that is a legitimate, deterministic loss.
    check_env(gym.make("taikyoku/Taikyoku-v0", opponent="random", illegal_action="lose", max_plies=30).unwrapped)
    check_env(gym.make("taikyoku/Taikyoku-v0", compact=True, dtype="float32", max_plies=30).unwrapped)


def test_random_agent_loop_until_truncation():
    env = gym.make("taikyoku/Taikyoku-v0", max_plies=40)
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    steps = 0
    while True:
        action = env.action_space.sample()
        assert action in info["legal_actions"]
        obs, reward, terminated, truncated, info = env.step(action)
        steps += 1
        if terminated or truncated:
            break
    assert (steps, truncated, terminated, reward) == (40, True, False, 0.0)
    assert info["termination"] == "max_plies"


def test_seeded_runs_are_identical():
    def run(seed):
        env = gym.make("taikyoku/Taikyoku-v0", opponent="random", max_plies=20)
        obs, _ = env.reset(seed=seed)
        env.action_space.seed(seed)
        trace = [obs.sum()]
        for _ in range(8):
            obs, *_ = env.step(env.action_space.sample())
            trace.append(int(obs.sum()))
        return trace, env.unwrapped.game.history()

    assert run(11) == run(11)
    assert run(11)[1] != run(12)[1]


def test_royal_capture_rewards_the_mover():
    start = kings_face_to_face().to_text()
    env = taikyoku.TaikyokuEnv(start=start)
    obs, info = env.reset()
    action = env.game.action_of("Kx18q")
    obs, reward, terminated, truncated, info = env.step(action)
    assert (reward, terminated, truncated) == (1.0, True, False)
    assert info["result"] == "black" and info["termination"] == "royal_capture"
    assert len(info["legal_actions"]) == 0
    with pytest.raises(IllegalMoveError, match="reset"):
        env.step(action)


def test_opponent_answers_and_rewards_are_the_agents():
    env = taikyoku.TaikyokuEnv(opponent="random", agent_color="white", max_plies=10)
    obs, info = env.reset(seed=0)
    assert env.game.ply == 1 and info["to_play"] == "white"
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    assert env.game.ply == 3
    # An opponent that walks into capture: the agent (White here, to move) takes the king.
    start = kings_face_to_face().to_text().replace(" b ", " w ")
    env = taikyoku.TaikyokuEnv(opponent="random", agent_color="white", start=start)
    obs, info = env.reset(seed=1)
    obs, reward, terminated, truncated, info = env.step(env.game.action_of("Kx18r"))
    assert (reward, terminated) == (1.0, True)


def test_illegal_action_raises_by_default_and_loses_on_request():
    env = taikyoku.TaikyokuEnv()
    env.reset()
    before = env.game.to_text()
    with pytest.raises(IllegalMoveError):
        env.step(0)
    with pytest.raises(IllegalMoveError):
        env.step("P-12h")
    assert env.game.to_text() == before and env.game.ply == 0
    env = taikyoku.TaikyokuEnv(illegal_action="lose")
    env.reset()
    obs, reward, terminated, truncated, info = env.step(0)
    assert (reward, terminated, truncated) == (-1.0, True, False)
    assert info["termination"] == "illegal_move" and info["result"] == "white"


@pytest.mark.parametrize("variant", ["taikyoku", "tenjiku"])
@pytest.mark.parametrize("frame", ["mover", "absolute"])
def test_env_step_call_is_play_then_legal_actions(variant, frame):
    """``Game._env_step``, the Gym step's one call, plays as ``play`` does and returns what
    ``legal_actions`` lists, with or without a list asked for first; an illegal action raises
    and changes nothing."""
    rng = np.random.default_rng(3)
    fused, plain = taikyoku.Game(variant), taikyoku.Game(variant)
    legal = plain.legal_actions(frame)  # the fused game's first step finds no list to read
    for _ in range(80):
        action = int(legal[rng.integers(legal.size)])
        legal = fused._env_step(action, frame)
        plain.play(plain.move_of(action, frame=frame))
        assert fused.to_text() == plain.to_text()
        assert np.array_equal(legal, plain.legal_actions(frame))
    before = fused.to_text()
    illegal = next(a for a in range(10**6) if a not in set(legal.tolist()))
    with pytest.raises(IllegalMoveError):
        fused._env_step(illegal, frame)
    with pytest.raises(IllegalMoveError):
        fused._env_step(-1, frame)
    assert fused.to_text() == before


def test_bad_arguments():
    for kwargs in (
        {"illegal_action": "shrug"},
        {"render_mode": "rgb"},
        {"variant": "chess"},
        {"opponent": "grandmaster"},
        {"frame": "up"},
        {"agent_color": "red"},
        {"max_plies": -1},
    ):
        with pytest.raises(ValueError):
            taikyoku.TaikyokuEnv(**kwargs)


def test_ansi_and_svg_render():
    env = taikyoku.TaikyokuEnv(render_mode="ansi")
    env.reset()
    env.step(env.action_space.sample())
    text = env.render()
    assert isinstance(text, str) and "[" in text
    env = taikyoku.TaikyokuEnv(render_mode="svg")
    env.reset()
    assert env.render().lstrip().startswith("<")
    assert taikyoku.Game()._repr_svg_().lstrip().startswith("<")


def test_absolute_frame_env():
    env = taikyoku.TaikyokuEnv(frame="absolute", max_plies=6)
    obs, info = env.reset()
    for _ in range(6):
        action = env.action_space.sample()
        assert env.game.move_of(action, frame="absolute")
        obs, reward, terminated, truncated, info = env.step(action)
    assert truncated


# -- vector env -------------------------------------------------------------------------------


def test_vector_env_steps_and_resets_in_the_same_step():
    env = taikyoku.VectorEnv(4, seed=0, max_plies=3)
    assert isinstance(env, gym.vector.VectorEnv)
    assert env.observation_space.shape == (4, GRID, GRID, 609)
    obs, infos = env.reset(seed=0)
    assert obs.shape == (4, GRID, GRID, 609) and len(infos["legal_actions"]) == 4
    for _step in range(3):
        obs, rewards, terminated, truncated, infos = env.step(env.random_actions())
    assert truncated.all() and not terminated.any() and rewards.dtype == np.float32
    assert infos["_final_info"].all()
    assert infos["final_info"][0]["termination"] == "max_plies"
    assert infos["final_obs"][0].shape == (GRID, GRID, 609)
    # Already reset: the observation is the opening again.
    assert np.array_equal(obs[0], taikyoku.Game().observation())


def test_vector_env_observations_match_the_games():
    env = taikyoku.VectorEnv(3, seed=4)
    env.reset()
    for _ in range(5):
        obs, *_ = env.step(env.random_actions())
    for i in range(3):
        assert np.array_equal(obs[i], env.game(i).observation())


def test_vector_env_is_deterministic_across_thread_counts():
    def run(threads, copy):
        env = taikyoku.VectorEnv(6, seed=9, threads=threads, max_plies=7, copy=copy)
        env.reset()
        trace = []
        for _ in range(10):
            obs, rewards, terminated, truncated, _ = env.step(env.random_actions())
            trace.append((obs.sum(dtype=np.int64), rewards.tolist(), truncated.tolist()))
        return trace, [env.game(i).history() for i in range(6)]

    assert run(1, True) == run(2, False) == run(None, True)


def test_vector_env_copy_false_reuses_the_buffer():
    env = taikyoku.VectorEnv(2, seed=1, copy=False)
    first, _ = env.reset()
    second, *_ = env.step(env.random_actions())
    assert first is second


def test_vector_env_illegal_actions():
    env = taikyoku.VectorEnv(3, seed=2)
    env.reset()
    actions = env.random_actions()
    actions[2] = 0
    histories = [env.game(i).history() for i in range(3)]
    with pytest.raises(IllegalMoveError, match="env 2"):
        env.step(actions)
    assert [env.game(i).history() for i in range(3)] == histories
    with pytest.raises(TaikyokuError):
        env.step(actions[:2])
    env = taikyoku.VectorEnv(3, seed=2, illegal_action="lose")
    env.reset()
    actions = env.random_actions()
    actions[1] = 0
    obs, rewards, terminated, truncated, infos = env.step(actions)
    assert rewards.tolist() == [0.0, -1.0, 0.0] and terminated.tolist() == [False, True, False]
    assert infos["final_info"][1]["termination"] == "illegal_move"


def test_vector_env_legal_action_views():
    env = taikyoku.VectorEnv(2, seed=0)
    env.reset()
    flat, offsets = env.legal_actions_flat()
    lists = env.legal_actions()
    assert offsets.tolist() == [0, len(lists[0]), len(lists[0]) + len(lists[1])]
    assert np.array_equal(flat, np.concatenate(lists))
    mask = env.legal_action_mask()
    assert mask.shape == (2, taikyoku.NUM_ACTIONS) and mask.sum() == len(flat)


def test_vector_env_bad_arguments():
    for kwargs in (
        {"num_envs": 0},
        {"num_envs": 2, "threads": 0},
        {"num_envs": 2, "seed": -1},
        {"num_envs": 2, "illegal_action": "x"},
        {"num_envs": "2"},
    ):
        with pytest.raises(ValueError):
            taikyoku.VectorEnv(**kwargs)


def test_actions_doc_worked_example():
    import doctest
    from pathlib import Path

    doc = Path(__file__).resolve().parent.parent / "docs" / "ACTIONS.md"
    result = doctest.testfile(str(doc), module_relative=False)
    assert result.attempted >= 8 and result.failed == 0


def test_mcts_opponent_takes_a_free_king_and_passes_the_checker():
    start = kings_face_to_face().to_text()
    env = taikyoku.TaikyokuEnv(opponent="mcts", agent_color="white", mcts_simulations=32, start=start)
    obs, info = env.reset(seed=0)
    assert env.game.is_over and env.game.result == "black" and env.game.termination == "royal_capture"
    assert taikyoku.mcts_action(kings_face_to_face(), 16, seed=1) == kings_face_to_face().action_of("Kx18q")
    check_env(
        gym.make(
            "taikyoku/Taikyoku-v0", opponent="mcts", mcts_simulations=8, illegal_action="lose", max_plies=10
        ).unwrapped
    )
    with pytest.raises(ValueError):
        taikyoku.TaikyokuEnv(opponent="mcts", mcts_simulations=0)
