"""Random-agent scores on every game, seeds 0..9: the figures to hold against the paper's table.

Each run is a full recorded `workstation run --agent random` (written to a temporary
directory). Prints mean and standard error per game and the wall time per run.
With ``--published FILE`` (JSON: {"games": {game: {"mean": m, "se": s}}}, e.g. the public
harness's random-agent figures) it also prints them and z = (ours - published) / sqrt(SE1^2 + SE2^2).
Usage: python bench/random_baseline.py [--seeds 10] [--published FILE] [GAME ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time

from workstation.game.games import GAMES
from workstation.run.drive import drive
from workstation.run.start import RunSpec, start_run


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("games", nargs="*", default=list(GAMES))
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--published", default=None, help="JSON of published means and SEs to compare with")
    a = ap.parse_args()
    published = json.load(open(a.published))["games"] if a.published else {}
    extra = f"{'pub':>9}{'SE':>8}{'z':>7}" if published else ""
    print(f"{'game':<16}{'mean':>9}{'SE':>8}{'min':>8}{'max':>8}{'turns':>7}{'s/run':>7}{extra}")
    with tempfile.TemporaryDirectory() as out:
        for g in a.games:
            scores, turns = [], []
            t0 = time.perf_counter()
            for seed in range(a.seeds):
                e = start_run(RunSpec(game=g, agent="random", seed=seed, out=out), rewindable=False)
                s = drive(e)
                e.close()
                scores.append(s["total_reward"])
                turns.append(s["turns"])
            dt = (time.perf_counter() - t0) / a.seeds
            se = statistics.stdev(scores) / len(scores) ** 0.5 if len(scores) > 1 else 0.0
            mean = statistics.mean(scores)
            cmp = ""
            if g in published:
                pm, ps = published[g]["mean"], published[g]["se"]
                z = (mean - pm) / (se ** 2 + ps ** 2) ** 0.5 if se or ps else 0.0
                cmp = f"{pm:>9.1f}{ps:>8.1f}{z:>+7.2f}"
            print(f"{g:<16}{mean:>9.1f}{se:>8.1f}{min(scores):>8g}{max(scores):>8g}"
                  f"{statistics.mean(turns):>7.0f}{dt:>7.2f}{cmp}", flush=True)


if __name__ == "__main__":
    main()
