"""Two-player stepping against one-player stepping, and a whole match against a whole run.

1. Frames a second of the two-player clock (multi-agent-ale-py, both players' random
   actions each 3 frames) against the one-player clock (ale-py) on the same game, in the
   same process: the ratio says what the second emulator costs.
2. A whole headless `random` vs `random` match (engine, prompts, recording) against a
   whole one-player `random` run of the same game and budget: seconds and the ratio.

    .venv/bin/python bench/twoplayer.py [--game boxing] [--frames 9000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time

from workstation.game.clock import GameClock
from workstation.game.games import get_game
from workstation.game.protocol import Protocol
from workstation.game.twoplayer import TwoPlayerClock, get_two_player_game
from workstation.run.match_start import MatchSpec, start_match
from workstation.run.start import RunSpec, start_run


def one_player(game: str, frames: int) -> float:
    g = get_game(game)
    clock = GameClock(g, Protocol(frames=frames), 0)
    clock.start()
    rng = random.Random(0)
    t = time.perf_counter()
    while not clock.finished:
        if clock.game_over:
            clock.new_game()
            continue
        clock.act(rng.randrange(len(g.allowed)))
    return frames / (time.perf_counter() - t)


def two_player(game: str, frames: int) -> float:
    tp = get_two_player_game(game)
    clock = TwoPlayerClock(tp, Protocol(frames=frames), 0)
    clock.start()
    rng, n = random.Random(0), len(tp.game.allowed)
    t = time.perf_counter()
    while not clock.finished:
        if clock.game_over:
            clock.new_game()
            continue
        clock.act(rng.randrange(n), rng.randrange(n))
    return frames / (time.perf_counter() - t)


def whole(game: str, frames: int, match: bool) -> float:
    with tempfile.TemporaryDirectory() as out:
        t = time.perf_counter()
        if match:
            engine = start_match(MatchSpec(game, "random", "random", 0, Protocol(frames=frames), out))
        else:
            engine = start_run(RunSpec(game, protocol=Protocol(frames=frames), out=out), rewindable=False)
        engine.run()
        engine.close()
        return time.perf_counter() - t


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--game", default="boxing")
    p.add_argument("--frames", type=int, default=9000)
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args()
    one = statistics.median(one_player(a.game, a.frames) for _ in range(a.repeat))
    two = statistics.median(two_player(a.game, a.frames) for _ in range(a.repeat))
    print(f"{a.game}, {a.frames} frames, median of {a.repeat}")
    print(f"  stepping: one-player (ale-py) {one:,.0f} frames/s, two-player (multi-agent ALE) {two:,.0f} frames/s, "
          f"ratio {two / one:.2f}")
    run = statistics.median(whole(a.game, 900, False) for _ in range(a.repeat))
    match = statistics.median(whole(a.game, 900, True) for _ in range(a.repeat))
    print(f"  900 frames recorded: one-player random run {run:.2f} s, random-vs-random match {match:.2f} s, "
          f"ratio {match / run:.2f}")


if __name__ == "__main__":
    main()
