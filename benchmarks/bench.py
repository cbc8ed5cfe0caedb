"""Python-side benchmarks of the taikyoku package (figures go to docs/PERFORMANCE.md).

Run: python benchmarks/bench.py
"""

import time

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


if __name__ == "__main__":
    main()
