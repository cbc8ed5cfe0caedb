"""Python-side benchmarks of the taikyoku package (figures go to docs/PERFORMANCE.md).

Run: python benchmarks/bench.py
"""

import time

import gymnasium as gym
import numpy as np

import taikyoku


def timed(label, fn, repeat):
    fn()  # warm up
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    per_call = (time.perf_counter() - start) / repeat
    print(f"{label:<48} {per_call * 1e6:>12.1f} µs/call")
    return per_call


def main():
    opening = taikyoku.Game()
    midgame = taikyoku.random_game(7, max_plies=500)
    midgame.max_plies = None
    timed("Game.legal_move_count() opening", opening.legal_move_count, 2000)
    timed("Game.legal_moves() opening (Move objects)", opening.legal_moves, 200)
    timed("Game.legal_moves() midgame 500 plies", midgame.legal_moves, 200)
    moves = opening.legal_moves()

    def play_undo():
        opening.play(moves[0])
        opening.undo()

    timed("Game.play(Move) + Game.undo()", play_undo, 2000)
    plies = 2000
    per_game = timed(f"taikyoku.random_game(max_plies={plies})", lambda: taikyoku.random_game(1, max_plies=plies), 5)
    print(f"random self-play: {plies / per_game:,.0f} plies/s (one thread)")
    bench_environments()


def rate(label, fn, items, repeat):
    """Calls fn() `repeat` times; each call handles `items` things. Prints things per second."""
    fn()
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    per_second = items * repeat / (time.perf_counter() - start)
    print(f"{label:<48} {per_second:>12,.0f} /s")
    return per_second


def bench_environments():
    midgame = taikyoku.random_game(7, max_plies=300)
    midgame.max_plies = None
    rate("Game.observation() uint8 (obs)", midgame.observation, 1, 2000)
    rate("Game.observation(dtype=float32) (obs)", lambda: midgame.observation(dtype="float32"), 1, 200)
    rate("Game.observation(compact=True) (obs)", lambda: midgame.observation(compact=True), 1, 2000)
    rate("Game.legal_actions() (calls)", midgame.legal_actions, 1, 2000)
    games = [taikyoku.random_game(seed, max_plies=200 + seed) for seed in range(64)]
    for size in (16, 64):
        rate(
            f"encode_observations, batch {size} uint8 (obs)",
            lambda size=size: taikyoku.encode_observations(games[:size]),
            size,
            20,
        )

    env = gym.make("taikyoku/Taikyoku-v0")
    env.reset(seed=0)
    legal = env.unwrapped._current_legal_actions
    rng = np.random.default_rng(0)

    def single_step():
        actions = legal()
        _, _, terminated, truncated, _ = env.step(int(actions[rng.integers(len(actions))]))
        if terminated or truncated:
            env.reset()

    rate("gymnasium env step with observation (steps)", single_step, 1, 3000)
    for num_envs in (64, 1024):
        for copy in (True, False):
            venv = taikyoku.VectorEnv(num_envs, seed=0, copy=copy)
            venv.reset()
            repeat = 20 if num_envs == 64 else 3
            rate(
                f"VectorEnv({num_envs}, copy={copy}).step (env steps)",
                lambda venv=venv: venv.step(venv.random_actions()),
                num_envs,
                repeat,
            )
            del venv


if __name__ == "__main__":
    main()
