"""What the compare screen costs: lining up runs, and drawing the score plot.

    .venv/bin/python bench/compare.py

Records four 900-frame random Pac-Man runs (seeds 0..3) in a temporary
directory, then times, each against a baseline measured in the same run:

- ``Comparison.of`` (load, series, divergence scan, summary rows) for 2 and 4
  runs, against reading every frame of those runs once;
- the score plot (four curves, 193 x 8 braille cells plus the axis, what a
  200-column screen draws), against one frame view update (a changed frame
  into the half-block renderer at 98 x 40 cells, the size each of two runs gets).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from screens.widgets.frame_view import FrameRenderer
from screens.widgets.score_plot import render_plot
from workstation.run.drive import drive
from workstation.run.start import RunSpec, start_run
from workstation.store.recording import Recording
from workstation.studies.analysis.compare import Comparison


def record(out: Path, seed: int) -> Path:
    engine = start_run(RunSpec("pacman", seed=seed, out=str(out)), rewindable=False)
    try:
        drive(engine)
    finally:
        engine.close()
    return engine.writer.path


def best(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def read_all(paths) -> None:
    for p in paths:
        frames = Recording(p).frames
        for i in range(len(frames)):
            frames.indices(i)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        paths = [record(Path(tmp), s) for s in range(4)]
        for n in (2, 4):
            base = best(lambda: read_all(paths[:n]))
            cost = best(lambda: Comparison.of(paths[:n]))
            print(f"Comparison.of, {n} runs: {cost * 1e3:.1f} ms; reading their frames once: {base * 1e3:.1f} ms "
                  f"(ratio {cost / base:.2f})")
        c = Comparison.of(paths)
        curves = [r.series.score for r in c.runs]
        plot = best(lambda: [render_plot(curves, 193, 8, f, c.divergent_frame) for f in range(0, 900, 9)], 3) / 100
        rec = c.runs[0].rec.frames
        rgbs = [rec.rgb(i) for i in range(0, 900, 9)]
        renderer = FrameRenderer(98, 40)

        def frames() -> None:
            for rgb in rgbs:
                renderer.render(rgb)

        frame = best(frames, 3) / len(rgbs)
        print(f"score plot, 4 curves at 193x8 cells: {plot * 1e3:.2f} ms per draw; one frame view update at 98x40: "
              f"{frame * 1e3:.2f} ms (ratio {plot / frame:.2f})")


if __name__ == "__main__":
    main()
