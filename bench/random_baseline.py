"""Random-agent scores on every game, seeds 0..9: the figures to hold against the paper's table.

Each run is a full recorded `workstation run --agent random` (written to a temporary
directory). Prints mean and standard error per game and the wall time per run.
Usage: python bench/random_baseline.py [--seeds 10] [GAME ...]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from workstation.game.games import GAMES
from workstation.runs.start import RunSpec, start_run


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("games", nargs="*", default=list(GAMES))
    ap.add_argument("--seeds", type=int, default=10)
    a = ap.parse_args()
    print(f"{'game':<16}{'mean':>9}{'SE':>8}{'min':>8}{'max':>8}{'turns':>7}{'s/run':>7}")
    with tempfile.TemporaryDirectory() as out:
        for g in a.games:
            scores, turns = [], []
            t0 = time.perf_counter()
            for seed in range(a.seeds):
                e = start_run(RunSpec(game=g, agent="random", seed=seed, out=out), rewindable=False)
                s = e.run()
                e.close()
                scores.append(s["total_reward"])
                turns.append(s["turns"])
            dt = (time.perf_counter() - t0) / a.seeds
            se = statistics.stdev(scores) / len(scores) ** 0.5 if len(scores) > 1 else 0.0
            print(f"{g:<16}{statistics.mean(scores):>9.1f}{se:>8.1f}{min(scores):>8g}{max(scores):>8g}"
                  f"{statistics.mean(turns):>7.0f}{dt:>7.2f}", flush=True)


if __name__ == "__main__":
    main()
