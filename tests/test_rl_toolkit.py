"""What a Gymnasium / PettingZoo user expects of the environments (docs/ACTIONS.md §5):
``gymnasium.make_vec`` in every mode, infos that batch and cannot be written, legal random
actions for vector envs, opponents in the vector env, the env checker, start positions,
``rgb_array`` pictures for RecordVideo and ``human`` rendering for PettingZoo, for every variant."""

import copy
import importlib.util
import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

import taikyoku
from taikyoku import Game, IllegalMoveError, render
from taikyoku.env import LegalActions, TaikyokuEnv
from taikyoku.vector import LegalMultiDiscrete, VectorEnv, sample_legal_actions

TIMEOUT = 120
pytestmark = pytest.mark.usefixtures("no_hang")

VARIANTS = taikyoku.variants()
IDS = [taikyoku.GYM_IDS[v] for v in VARIANTS]
HAVE_RGB = render.rgb_available()
needs_rgb = pytest.mark.skipif(not HAVE_RGB, reason="rgb_array needs resvg-py and pillow (the test extra)")


def legal(game_or_env, frame="mover"):
    return set(game_or_env.legal_actions(frame).tolist())


def frozen_everywhere(value):
    """Every ndarray reachable in an info value is read-only (object arrays and dicts included)."""
    if isinstance(value, dict):
        return all(frozen_everywhere(v) for v in value.values())
    if isinstance(value, LegalActions):
        return not value.flags.writeable
    if isinstance(value, np.ndarray):
        if value.flags.writeable:
            return False
        return value.dtype != object or all(frozen_everywhere(v) for v in value.flat)
    return True


def kings_face_to_face(side="b"):
    """Black's king on 18r, White's on 18q: the side to move takes the other king."""
    g = Game.empty()
    g.place("18r", "K", "black")
    g.place("18q", "K", "white")
    g.place("1a", "P", "white")
    g.place("1jj", "P", "black")
    return g.to_text().replace(" b ", f" {side} ")


def capture_if_you_can(game):
    """An opponent: a capturing move if there is one, else the first legal move (mover frame)."""
    moves = game.legal_moves()
    move = next((m for m in moves if m.captures), moves[0])
    return game.action_of(move)


# -- registration and make_vec ------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_id_has_a_native_vector_entry_point(variant):
    env_id = taikyoku.GYM_IDS[variant]
    spec = gym.spec(env_id)
    assert spec.entry_point == "taikyoku.env:TaikyokuEnv"
    assert spec.vector_entry_point == "taikyoku.vector:VectorEnv"
    assert spec.kwargs == {"variant": variant}
    envs = gym.make_vec(env_id, 3, max_plies=4)
    assert isinstance(envs, VectorEnv) and envs.num_envs == 3 and envs.variant == variant
    assert envs.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    obs, infos = envs.reset(seed=0)
    assert obs.shape == (3, *gym.make(env_id).observation_space.shape)
    assert envs.game(0).variant_name == variant
    envs = gym.make_vec(env_id, 2, vectorization_mode="vector_entry_point", opponent="random", agent_color="white")
    assert isinstance(envs, VectorEnv) and envs.agent_color == "white"


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_make_vec_sync_and_async_run_many_steps(mode, variant):
    # Per-env legal action lists of different lengths used to break Gymnasium's info batching.
    envs = gym.make_vec(taikyoku.GYM_IDS[variant], 3, vectorization_mode=mode, max_plies=6)
    try:
        obs, infos = envs.reset(seed=0)
        rng = np.random.default_rng(0)
        truncations = 0
        lengths = set()
        for _ in range(40):
            assert isinstance(infos["legal_actions"], np.ndarray) and infos["legal_actions"].dtype == object
            assert infos["legal_actions"].shape == (3,) and infos["to_play"].shape == (3,)
            for entry, present in zip(infos["legal_actions"], infos["_legal_actions"]):
                assert present and isinstance(entry, LegalActions) and not np.asarray(entry).flags.writeable
                lengths.add(len(entry))
            actions = sample_legal_actions(infos, rng)
            for entry, action in zip(infos["legal_actions"], actions):
                assert len(entry) == 0 or action in entry
            obs, rewards, terminated, truncated, infos = envs.step(actions)
            assert envs.observation_space.contains(obs)
            truncations += int(truncated.sum())
        assert truncations >= 3 * 5  # every env played several games (NEXT_STEP auto-reset)
        assert len(lengths) > 1  # lists of different lengths were batched
    finally:
        envs.close()


@pytest.mark.parametrize("variant", VARIANTS)
def test_sync_same_step_final_info_batches(variant):
    envs = gym.make_vec(
        taikyoku.GYM_IDS[variant],
        2,
        vectorization_mode="sync",
        max_plies=3,
        vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP},
    )
    obs, infos = envs.reset(seed=0)
    for _ in range(3):
        obs, rewards, terminated, truncated, infos = envs.step(sample_legal_actions(infos, 0))
    assert truncated.all() and infos["_final_info"].all()
    assert list(infos["final_info"]["termination"]) == ["max_plies", "max_plies"]
    assert all(len(a) == 0 for a in infos["final_info"]["legal_actions"])  # the finished games'
    assert all(len(a) > 0 for a in infos["legal_actions"])  # the new games'
    envs.close()


@pytest.mark.parametrize("variant", VARIANTS)
def test_native_and_sync_vector_envs_agree(variant):
    env_id = taikyoku.GYM_IDS[variant]
    native = gym.make_vec(env_id, 3)
    sync = gym.make_vec(env_id, 3, vectorization_mode="sync")
    obs_n, info_n = native.reset(seed=1)
    obs_s, info_s = sync.reset(seed=1)
    rng = np.random.default_rng(5)
    for _ in range(8):
        assert np.array_equal(obs_n, obs_s)
        assert list(info_n["to_play"]) == list(info_s["to_play"]) and list(info_n["ply"]) == list(info_s["ply"])
        for a, b in zip(info_n["legal_actions"], info_s["legal_actions"]):
            assert np.array_equal(a, b)
        actions = sample_legal_actions(info_n, rng)
        obs_n, r_n, te_n, tr_n, info_n = native.step(actions)
        obs_s, r_s, te_s, tr_s, info_s = sync.step(actions)
        assert np.array_equal(r_n, r_s) and np.array_equal(te_n, te_s) and np.array_equal(tr_n, tr_s)


def test_make_vec_max_episode_steps_truncates_like_time_limit():
    for mode in ("vector_entry_point", "sync"):
        envs = gym.make_vec("taikyoku/DaiDai-v0", 2, vectorization_mode=mode, max_episode_steps=3)
        _, infos = envs.reset(seed=0)
        dones = []
        for _ in range(3):
            _, _, terminated, truncated, infos = envs.step(sample_legal_actions(infos, 0))
            dones.append(bool(truncated.all()))
        assert dones == [False, False, True], mode
    env = VectorEnv(1, variant="daidai", opponent="random", agent_color="white", max_episode_steps=2)
    assert env.max_plies == 5  # the opponent's opening move, then two moves each


# -- infos of the native vector env -------------------------------------------------------------


def test_native_infos_are_read_only_and_complete():
    env = VectorEnv(3, seed=0, max_plies=2)
    obs, infos = env.reset()
    assert set(infos) == {"legal_actions", "_legal_actions", "to_play", "_to_play", "ply", "_ply"}
    assert frozen_everywhere(infos)
    assert list(infos["to_play"]) == ["black"] * 3 and infos["ply"].tolist() == [0, 0, 0]
    with pytest.raises(ValueError, match="read-only"):
        infos["legal_actions"][0][0] = 0
    with pytest.raises(ValueError, match="read-only"):
        infos["legal_actions"][0] = np.arange(3)
    obs, *_, infos = env.step(env.random_actions())
    assert list(infos["to_play"]) == ["white"] * 3 and infos["ply"].tolist() == [1, 1, 1]
    obs, *_, infos = env.step(env.random_actions())
    assert infos["_final_info"].all() and frozen_everywhere(infos)
    assert infos["ply"].tolist() == [0, 0, 0]
    flat, offsets = env.legal_actions_flat()
    assert not flat.flags.writeable and not offsets.flags.writeable
    assert all(not a.flags.writeable for a in env.legal_actions())
    for i in range(3):
        assert np.array_equal(infos["legal_actions"][i], flat[offsets[i] : offsets[i + 1]])


def test_native_infos_work_with_gymnasium_vector_wrappers():
    env = gym.wrappers.vector.DictInfoToList(
        gym.wrappers.vector.RecordEpisodeStatistics(VectorEnv(2, seed=0, max_plies=3))
    )
    _, infos = env.reset(seed=0)
    assert isinstance(infos, list) and set(infos[0]) == {"legal_actions", "to_play", "ply"}
    assert infos[0]["to_play"] == "black" and len(infos[0]["legal_actions"]) == 265
    for _ in range(3):
        _, _, _, truncated, infos = env.step(env.unwrapped.sample_legal_actions())
    assert truncated.all() and infos[1]["final_info"]["termination"] == "max_plies"
    assert infos[1]["episode"]["l"] == 3


# -- legal random actions for vector envs -------------------------------------------------------


def test_vector_action_space_samples_legal_actions():
    env = VectorEnv(4, variant="daidai", seed=0)
    _, infos = env.reset(seed=3)
    assert isinstance(env.action_space, LegalMultiDiscrete)
    assert env.action_space == gym.spaces.MultiDiscrete([taikyoku.NUM_ACTIONS] * 4)
    for _ in range(10):
        actions = env.action_space.sample()
        assert actions.shape == (4,) and actions.dtype == np.int64 and env.action_space.contains(actions)
        assert all(a in entry for a, entry in zip(actions, infos["legal_actions"]))
        _, _, _, _, infos = env.step(actions)
    env.action_space.seed(7)
    first = env.action_space.sample()
    env.action_space.seed(7)
    assert np.array_equal(first, env.action_space.sample())
    # The standard masked sample, and pickled copies are the plain space.
    mask = tuple(np.zeros(taikyoku.NUM_ACTIONS, np.int8) for _ in range(4))
    for m in mask:
        m[5] = 1
    assert env.action_space.sample(mask=mask).tolist() == [5, 5, 5, 5]
    assert type(pickle.loads(pickle.dumps(env.action_space))) is gym.spaces.MultiDiscrete
    assert type(copy.deepcopy(env.action_space)) is LegalMultiDiscrete


def test_sample_legal_actions_method_and_function():
    env = VectorEnv(3, seed=0)
    _, infos = env.reset(seed=11)
    a = env.sample_legal_actions(rng=4)
    assert np.array_equal(a, env.sample_legal_actions(np.random.default_rng(4)))
    assert np.array_equal(a, sample_legal_actions(infos, 4))
    assert all(x in entry for x, entry in zip(a, infos["legal_actions"]))
    env.reset(seed=11)
    b = env.sample_legal_actions()
    env.reset(seed=11)
    assert np.array_equal(b, env.sample_legal_actions())  # np_random is seeded by reset
    # An env without legal actions (a finished game in a NEXT_STEP vector env) gets 0.
    infos = {
        "legal_actions": np.array([LegalActions([4, 9]), LegalActions([]), None], dtype=object),
        "_legal_actions": np.array([True, True, False]),
    }
    out = sample_legal_actions(infos, 0)
    assert out[0] in (4, 9) and out[1:].tolist() == [0, 0]
    with pytest.raises(ValueError):
        env.sample_legal_actions(rng=-1)


# -- the opponent option of the vector env ------------------------------------------------------


@pytest.mark.parametrize("agent_color", ["black", "white"])
@pytest.mark.parametrize("opponent", ["random", "mcts", "callable"])
def test_vector_env_opponents(opponent, agent_color):
    chosen = capture_if_you_can if opponent == "callable" else opponent
    env = VectorEnv(
        3, variant="daidai", seed=2, opponent=chosen, agent_color=agent_color, max_plies=9, mcts_simulations=8
    )
    obs, infos = env.reset()
    opening = 1 if agent_color == "white" else 0
    assert list(infos["to_play"]) == [agent_color] * 3 and infos["ply"].tolist() == [opening] * 3
    for _ in range(6):
        obs, rewards, terminated, truncated, infos = env.step(env.action_space.sample())
        assert list(infos["to_play"]) == [agent_color] * 3  # always the agent's turn
        for i in range(3):
            assert np.array_equal(obs[i], env.game(i).observation())


def test_vector_opponent_plays_as_the_single_env_opponent():
    # A deterministic opponent: the vector env's games are the single envs' games, move for move.
    vec = VectorEnv(2, variant="daidai", opponent=capture_if_you_can, agent_color="white", max_plies=12)
    singles = [
        TaikyokuEnv(variant="daidai", opponent=capture_if_you_can, agent_color="white", max_plies=12) for _ in range(2)
    ]
    _, infos = vec.reset(seed=0)
    for single in singles:
        single.reset(seed=0)
    rng = np.random.default_rng(1)
    for _ in range(8):
        actions = vec.sample_legal_actions(rng)
        _, rewards, terminated, truncated, infos = vec.step(actions)
        for i, single in enumerate(singles):
            _, reward, term, trunc, _ = single.step(actions[i])
            assert (reward, term, trunc) == (rewards[i], terminated[i], truncated[i])
            if term or trunc:
                single.reset()
            assert vec.game(i).history() == single.game.history()


def test_vector_opponent_rewards_are_the_agents():
    # White (the agent) takes Black's king at once: +1 for the agent.
    env = VectorEnv(2, opponent="random", agent_color="white", start=kings_face_to_face("w"))
    env.reset()
    action = env.game(0).action_of("Kx18r")
    obs, rewards, terminated, truncated, infos = env.step(np.array([action, action]))
    assert rewards.tolist() == [1.0, 1.0] and terminated.all()
    assert infos["final_info"][0]["result"] == "white"
    # The agent (Black) steps next to White's king; the opponent takes it: -1 for the agent.
    g = Game.empty()
    g.place("18r", "K", "black")
    g.place("18p", "K", "white")
    g.place("1a", "P", "white")
    g.place("1jj", "P", "black")
    env = VectorEnv(1, opponent=capture_if_you_can, start=g.to_text())
    env.reset()
    obs, rewards, terminated, truncated, infos = env.step(np.array([env.game(0).action_of("K-18q")]))
    assert rewards.tolist() == [-1.0] and terminated.all() and infos["final_info"][0]["termination"] == "royal_capture"


def test_vector_opponents_are_deterministic_across_thread_counts():
    def run(threads, opponent, seed=9):
        env = VectorEnv(
            4, variant="daidai", seed=seed, threads=threads, opponent=opponent, max_plies=10, mcts_simulations=4
        )
        env.reset()
        for _ in range(6):
            env.step(env.random_actions())
        return [env.game(i).history() for i in range(4)]

    for opponent in ("random", "mcts"):
        assert run(1, opponent) == run(3, opponent)
    assert run(1, "random") != run(1, "random", seed=10)


def test_vector_opponent_errors():
    for kwargs in (
        {"opponent": "grandmaster"},
        {"opponent": 5},
        {"opponent": "mcts", "mcts_simulations": 0},
        {"agent_color": "red"},
        {"start": 5},
        {"max_episode_steps": 0},
    ):
        with pytest.raises(ValueError):
            VectorEnv(2, **kwargs)
    with pytest.raises(taikyoku.PositionTextError):
        VectorEnv(2, start="not a position")
    env = VectorEnv(2, opponent=lambda game: 0)
    env.reset()
    before = [env.game(i).history() for i in range(2)]
    with pytest.raises(IllegalMoveError, match="env 0: the opponent's action 0 is not legal"):
        env.step(env.random_actions())
    # The agent's moves were played, no opponent move was: the games stay consistent.
    assert [len(env.game(i).history()) for i in range(2)] == [len(h) + 1 for h in before]
    env = VectorEnv(1, opponent=lambda game: "P-12h")
    with pytest.raises(IllegalMoveError, match="integer"):
        env.step(env.random_actions())


# -- start positions and reset options ----------------------------------------------------------


def test_vector_env_start_positions_and_reset_options():
    text = taikyoku.random_game(3, 20).to_text()
    other = taikyoku.random_game(4, 30).to_text()
    env = VectorEnv(3, seed=0, start=text, max_plies=2)
    _, infos = env.reset()
    assert all(env.game(i).to_text() == text for i in range(3))
    env.reset(options={"start": other})
    assert all(env.game(i).to_text() == other for i in range(3))
    env.step(env.random_actions())
    env.step(env.random_actions())  # max_plies: restarted from the constructor's start
    assert all(env.game(i).to_text() == text for i in range(3))
    env.step(env.random_actions())
    _, infos = env.reset(options={"reset_mask": np.array([True, False, True])})
    assert infos["ply"].tolist() == [0, 1, 0]
    for bad in ({"reset_mask": [True, False, True]}, {"reset_mask": np.ones(2, bool)}, {"start": 3}):
        with pytest.raises(ValueError):
            env.reset(options=bad)
    with pytest.raises(taikyoku.PositionTextError):
        env.reset(options={"start": "garbage"})


def test_gym_env_honours_the_start_option():
    text = taikyoku.random_game(5, 25).to_text()
    env = gym.make("taikyoku/Taikyoku-v0")
    _, info = env.reset(seed=0, options={"start": text})
    assert env.unwrapped.game.to_text() == text and set(info["legal_actions"]) == legal(Game.from_text(text))
    env.step(env.action_space.sample())
    env.reset(options={"unrelated": 1})  # other keys are ignored
    assert env.unwrapped.game.to_text() == Game().to_text()
    with pytest.raises(ValueError, match="start"):
        env.reset(options={"start": 7})
    with pytest.raises(taikyoku.PositionTextError):
        env.reset(options={"start": "garbage"})
    # A constructor start, overridden for one episode.
    env = TaikyokuEnv(start=text)
    env.reset(options={"start": Game().to_text()})
    assert env.game.ply == 0 and env.game.to_text() == Game().to_text()
    env.reset()
    assert env.game.to_text() == text


# -- single env bugs ----------------------------------------------------------------------------


def test_game_play_takes_numpy_integers():
    g = Game()
    for kind in (np.int64, np.int32, np.uint64, int):
        action = g.legal_actions()[0]
        move = g.play(kind(action))
        assert g.ply >= 1 and move.notation
    assert g.ply == 4
    with pytest.raises(IllegalMoveError):
        g.play(np.float64(g.legal_actions()[0]))


@pytest.mark.parametrize("variant", VARIANTS)
def test_game_play_of_an_action_is_the_move_legal_actions_names(variant):
    # play(action) lists only the moves of the piece on the action's start square: it must take
    # exactly the legal actions, each as the move action_of names, and refuse every other action
    # (the other side's, empty squares, anything), changing nothing.
    g = taikyoku.random_game(5, max_plies=120, variant=variant)
    g.max_plies = None
    moves = g.legal_moves()
    legal = {g.action_of(move): move for move in moves}
    assert sorted(legal) == g.legal_actions().tolist()
    other = g.clone()
    other.play(moves[0])
    candidates = set(legal) | set(other.legal_actions().tolist()) | set(range(7, taikyoku.NUM_ACTIONS, 4999))
    for action in sorted(candidates):
        child = g.clone()
        if action in legal:
            assert child.play(action) == legal[action] and child.ply == g.ply + 1
        else:
            with pytest.raises(IllegalMoveError, match=f"action {action} "):
                child.play(action)
            assert child.to_text() == g.to_text() and child.ply == g.ply


def test_gym_info_legal_actions_cannot_change_the_env():
    env = TaikyokuEnv()
    _, info = env.reset(seed=0)
    legal_now = info["legal_actions"]
    assert isinstance(legal_now, LegalActions) and not legal_now.flags.writeable
    assert legal_now is not env._legal and not np.asarray(legal_now).flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        legal_now[0] = 0
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(legal_now)[0] = 0
    with pytest.raises(ValueError, match="read-only"):
        np.random.default_rng(0).shuffle(legal_now)
    with pytest.raises(AttributeError):
        legal_now._array = np.arange(3)
    mine = np.array(legal_now)  # a writable copy
    mine[:] = 0
    assert env._legal[0] != 0 and legal_now[0] != 0
    env.step(legal_now[0])


def test_legal_actions_behave_like_an_array():
    la = LegalActions(np.array([3, 8, 20]))
    assert len(la) == 3 and la.dtype == np.int64 and la.size == 3 and la.tolist() == [3, 8, 20]
    assert 8 in la and np.int64(20) in la and 4 not in la and 8.0 not in la and True not in la and "8" not in la
    assert la[0] == 3 and isinstance(la[0], np.integer) and la[1:].tolist() == [8, 20] and list(la) == [3, 8, 20]
    assert la.index(20) == 2 and la.count(8) == 1 and list(reversed(la)) == [20, 8, 3]
    assert np.arange(30)[la].tolist() == [3, 8, 20] and np.isin(8, la)
    assert np.asarray(la, dtype=np.int32).dtype == np.int32
    assert la == LegalActions([3, 8, 20]) and la != LegalActions([3, 8])
    assert pickle.loads(pickle.dumps(la)) == la and not pickle.loads(pickle.dumps(la)).flags.writeable
    assert copy.deepcopy(la) is la and "n=3" in repr(la)
    source = np.array([1, 2])
    wrapped = LegalActions(source)
    source[0] = 9  # a writable source is copied
    assert wrapped[0] == 1
    torch = pytest.importorskip("torch")
    assert torch.as_tensor(la).tolist() == [3, 8, 20] and torch.tensor(la).dtype == torch.int64


@pytest.mark.parametrize("variant", VARIANTS)
def test_checker_passes_for_every_variant_and_frame(variant):
    env_id = taikyoku.GYM_IDS[variant]
    check_env(gym.make(env_id, max_plies=30).unwrapped)
    check_env(gym.make(env_id, max_plies=30, compact=True).unwrapped)
    # The checker samples an action, resets, then plays it: in the absolute frame the sample is
    # White's (after its own step), never legal for Black after the reset, so the seed's rule
    # (illegal_action="lose") makes that a deterministic loss instead of an IllegalMoveError.
    check_env(gym.make(env_id, max_plies=30, frame="absolute", illegal_action="lose").unwrapped)
    env = gym.make(env_id, frame="absolute", max_plies=30)
    _, info = env.reset(seed=0)
    for _ in range(6):
        action = env.action_space.sample()
        assert action in info["legal_actions"]
        _, _, _, _, info = env.step(action)


# -- rendering ----------------------------------------------------------------------------------


@needs_rgb
@pytest.mark.parametrize("variant", VARIANTS)
def test_rgb_array_render(variant):
    env = gym.make(taikyoku.GYM_IDS[variant], render_mode="rgb_array")
    assert "rgb_array" in env.metadata["render_modes"]
    env.reset(seed=0)
    env.step(env.action_space.sample())
    frame = env.render()
    game = env.unwrapped.game
    assert isinstance(frame, np.ndarray) and frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    side = game.width * 30 + 44  # 30 px squares and the coordinates' margins
    assert frame.shape[:2] == (game.height * 30 + 44, side)
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 20  # a real picture


@needs_rgb
def test_record_video_accepts_the_env(tmp_path):
    env = gym.make("taikyoku/DaiDai-v0", render_mode="rgb_array", max_plies=3)
    if importlib.util.find_spec("moviepy") is None:
        # Gymnasium checks the render mode first, then needs moviepy to write the video.
        with pytest.raises(gym.error.DependencyNotInstalled, match="(?i)moviepy"):
            gym.wrappers.RecordVideo(env, str(tmp_path))
        with pytest.raises(ValueError, match="rgb_array"):
            gym.wrappers.RecordVideo(gym.make("taikyoku/DaiDai-v0", render_mode="ansi"), str(tmp_path))
        frames = gym.wrappers.RenderCollection(env)
        frames.reset(seed=0)
        frames.step(frames.action_space.sample())
        assert [f.shape for f in frames.render()] == [(554, 554, 3)] * 2
        return
    env = gym.wrappers.RecordVideo(env, str(tmp_path), episode_trigger=lambda episode: True)
    env.reset(seed=0)
    done = False
    while not done:
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        done = terminated or truncated
    env.close()
    assert list(tmp_path.glob("*.mp4"))


def test_rgb_array_without_its_packages_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(render.importlib.util, "find_spec", lambda name: None)
    for make in (
        lambda: TaikyokuEnv(render_mode="rgb_array"),
        lambda: render.rgb_array(Game()),
        lambda: VectorEnv(1, render_mode="rgb_array"),
    ):
        with pytest.raises(ImportError, match="pip install resvg-py pillow"):
            make()
    assert not render.rgb_available()


@needs_rgb
def test_vector_env_rgb_array_render():
    env = VectorEnv(2, variant="daidai", render_mode="rgb_array")
    env.reset()
    frames = env.render()
    assert isinstance(frames, tuple) and [f.shape for f in frames] == [(554, 554, 3)] * 2


@pytest.mark.parametrize("variant", VARIANTS)
def test_pettingzoo_render_test_and_human_mode(variant, capsys):
    pytest.importorskip("pettingzoo")
    from pettingzoo.test import render_test

    render_test(lambda render_mode=None: taikyoku.pettingzoo_env(variant, render_mode=render_mode, max_plies=6))
    capsys.readouterr()
    env = taikyoku.pettingzoo_env(variant, render_mode="human")
    env.reset(seed=0)
    assert "Black to move" in capsys.readouterr().out  # printed at reset
    env.step(int(env.unwrapped._legal[0]))
    assert "White to move" in capsys.readouterr().out  # and after every step
    assert env.render() is None
    printed = capsys.readouterr().out
    assert "White to move" in printed and "\x1b[" not in printed  # no colour when not a terminal
