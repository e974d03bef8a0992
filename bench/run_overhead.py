"""Cost of a full recorded random run against bare gymnasium stepping of the same 900 frames.

Measured in this one process, per game (median of --repeats):
- bare: gym.make, reset with the seed, warm-up, then env.step for 900 frames with
  random actions held 3 frames (the protocol's env settings), nothing else;
- recorded: the same as `workstation run --agent random`: every prompt assembled as
  for a model, every reply parsed, every frame and its RAM recorded, turn records
  appended, summary written.
Both are shown whole (start included) and for the 900 stepped frames alone, with
the ratios and the recording's size. Goal: at most 2x bare stepping, at most 1 MB.
Times are this process's CPU seconds (time.process_time), so a busy machine
skews them less than wall-clock time would.
Usage: python bench/run_overhead.py [GAME ...] [--repeats N]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import numpy as np

from workstation.game.clock import make_env
from workstation.game.games import get_game
from workstation.run.drive import drive
from workstation.run.start import RunSpec, start_run
from workstation.store.recording import Recording


def bare(game_key: str, frames: int = 900) -> tuple[float, float]:
    game = get_game(game_key)
    rng = np.random.default_rng(0)
    t0 = time.process_time()
    env = make_env(game)
    env.reset(seed=0)
    for _ in range(game.warmup_frames):
        env.step(0)
    t1 = time.process_time()
    n = 0
    while n < frames:
        a = int(rng.integers(0, len(game.allowed)))
        for _ in range(3):
            _, _, term, trunc, _ = env.step(a)
            n += 1
            if term or trunc:
                env.reset()
    t2 = time.process_time()
    env.close()
    return t2 - t0, t2 - t1


def recorded(game_key: str, out: str) -> tuple[float, float, int, int]:
    t0 = time.process_time()
    engine = start_run(RunSpec(game=game_key, agent="random", seed=0, out=out), rewindable=False)
    engine.start()
    t1 = time.process_time()
    drive(engine)
    t2 = time.process_time()
    engine.close()
    rec = Recording(engine.writer.path)
    return t2 - t0, t2 - t1, rec.size_bytes(), len(rec.turn_records)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("games", nargs="*", default=["breakout", "seaquest", "pacman"])
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    print(f"{'game':<13}{'bare whole':>11}{'rec whole':>10}{'ratio':>7}   {'bare steps':>10}{'rec steps':>10}{'ratio':>7}"
          f"{'size KB':>9}{'turns':>6}")
    with tempfile.TemporaryDirectory() as out:
        recorded(a.games[0], out)  # warm imports and the pack cache
        for g in a.games:
            b = [bare(g) for _ in range(a.repeats)]
            r = [recorded(g, out) for _ in range(a.repeats)]
            bw, bs = statistics.median(x[0] for x in b), statistics.median(x[1] for x in b)
            rw, rs = statistics.median(x[0] for x in r), statistics.median(x[1] for x in r)
            print(f"{g:<13}{bw:>10.3f}s{rw:>9.3f}s{rw / bw:>7.2f}   {bs:>9.3f}s{rs:>9.3f}s{rs / bs:>7.2f}"
                  f"{r[0][2] / 1024:>9.0f}{r[0][3]:>6}")
    print("public harness, for scale: ~18 s and ~21 MB per random Breakout run (CRAFT.md)")


if __name__ == "__main__":
    main()
