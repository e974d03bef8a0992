"""Make docs/compare.png: the compare screen on three real Pac-Man runs, at a life loss.

    .venv/bin/python docs/make_compare_screenshot.py

Records three 900-frame random-agent runs in a temporary directory (seeds 0 and 1
with the fixed start, seed 0 with ``--start noops:30``), opens them in the real
app at 200x60, jumps to the first life loss in any run, and converts the SVG with
``rsvg-convert`` (librsvg2-bin). Uses ``save`` from docs/make_screenshots.py.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs"))

from make_screenshots import SIZE, save, until

from screens.app import CompareLaunch, make_app
from screens.views.compare import CompareScreen
from workstation.game.protocol import Protocol, StartOption
from workstation.run.drive import drive
from workstation.run.start import RunSpec, start_run


def record(out: Path, seed: int, start: str = "fixed") -> Path:
    spec = RunSpec("pacman", seed=seed, protocol=Protocol(start=StartOption.parse(start)), out=str(out))
    engine = start_run(spec, rewindable=False)
    try:
        drive(engine)
    finally:
        engine.close()
    return engine.writer.path


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        runs = (record(scratch, 0), record(scratch, 1), record(scratch, 0, "noops:30"))
        app = make_app(CompareLaunch(tuple(map(str, runs))))
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: isinstance(app.screen, CompareScreen), "the compare screen")
            await pilot.press("l")
            await pilot.pause(0.5)
            save(app, "compare", scratch)


if __name__ == "__main__":
    asyncio.run(main())
