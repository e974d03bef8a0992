"""Make docs/qa_curate.png: the QA curator on a question proposed from a real Breakout run.

    .venv/bin/python docs/make_qa_screenshot.py

Records a 900-frame random-agent Breakout run in a temporary directory, proposes
a set with `workstation qa gen`, opens the curator at 200x60 on a motion question
(objects outlined) and converts the SVG with ``rsvg-convert`` (librsvg2-bin).
Uses ``save`` from docs/make_screenshots.py.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs"))

from make_screenshots import SIZE, save

from screens.app import make_app
from workstation.cli import main as cli
from workstation.run.drive import drive
from workstation.run.launch import QaCurateLaunch
from workstation.run.start import RunSpec, start_run
from workstation.studies.qa.qset import read_set


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        engine = start_run(RunSpec("breakout", seed=0, out=str(scratch / "recs")), rewindable=False)
        try:
            drive(engine)
        finally:
            engine.close()
        cli(["qa", "gen", "--recordings", str(scratch / "recs"), "--out", str(scratch / "set"), "--per-game", "12"])
        app = make_app(QaCurateLaunch(scratch / "set"))
        async with app.run_test(size=SIZE) as pilot:
            curator = app.screen
            curator.index = next(i for i, q in enumerate(read_set(scratch / "set")) if q["category"] == "motion-target")
            curator._load()
            await pilot.press("right")
            await pilot.pause(0.5)
            save(app, "qa_curate", scratch)


if __name__ == "__main__":
    asyncio.run(main())
