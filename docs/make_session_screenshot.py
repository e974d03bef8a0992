"""Make docs/session.png: a human baseline session's instruction screen (Pac-Man, real time, paper pace).

    .venv/bin/python docs/make_session_screenshot.py

Opens a session in a temporary directory in the real app at 200x60 and saves the first
screen; needs ``rsvg-convert`` (librsvg2-bin). Uses ``save`` from docs/make_screenshots.py.
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

from screens.app import SessionLaunch, make_app
from screens.views.session import SessionScreen
from workstation.studies.session import Session, make_settings


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        session = Session.open(scratch / "P01", make_settings("P01", "pacman,breakout", "0,1,2", practice=1))
        app = make_app(SessionLaunch(session))
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: isinstance(app.screen, SessionScreen) and app.screen.stage == "instructions",
                        "the instructions")
            await pilot.pause(0.3)
            save(app, "session", scratch)


if __name__ == "__main__":
    asyncio.run(main())
