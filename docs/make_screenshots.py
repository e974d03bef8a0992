"""Make the README's screenshots: docs/home.png, live.png, step.png, open.png and play.png.

Run it from the repository root once the venv exists (``./launch`` or ``./test`` makes it):

    .venv/bin/python docs/make_screenshots.py

It drives the real app with Textual's Pilot at 200x60 cells on the real emulator
(random agent, Breakout, seed 0), exports each screen as SVG and converts it to
PNG with ``rsvg-convert`` (Debian/Ubuntu: ``apt-get install librsvg2-bin``).
The runs it makes are recorded in a temporary directory that is deleted at the
end; only the five PNGs are written. Takes about 35 s.
"""

from __future__ import annotations

import asyncio
import html
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from argparse import Namespace
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from textual.widgets import Input

from screens.app import make_app
from screens.widgets.frame_view import FrameView
from workstation.cli import build_parser
from workstation.store.recording import Recording

DOCS = ROOT / "docs"
SIZE = (200, 60)
TITLE = "Atari VLM workstation"

# one <text> run of an exported SVG that starts with no-break spaces
_LEADING_NBSP = re.compile(
    r'(<text [^>]*?x=")([\d.]+)("[^>]*?textLength=")([\d.]+)("[^>]*>)((?:&#160;)+)([^<]*)(</text>)')


class ScreenshotError(RuntimeError):
    """Something the screenshots need is missing, or the app never reached the state to capture."""


def fix_leading_spaces(svg: str) -> str:
    """rsvg-convert drops the no-break spaces a text run starts with; start the run further right instead."""

    def shift(m: re.Match[str]) -> str:
        x, length, rest = float(m.group(2)), float(m.group(4)), m.group(7)
        if not rest:
            return m.group(0)
        spaces = m.group(6).count("&#160;")
        cell = length / (spaces + len(html.unescape(rest)))
        return (f"{m.group(1)}{x + spaces * cell:.1f}{m.group(3)}{length - spaces * cell:.1f}"
                f"{m.group(5)}{rest}{m.group(8)}")

    return _LEADING_NBSP.sub(shift, svg)


def save(app, name: str, scratch: Path) -> None:
    """The app's screen as docs/NAME.png."""
    svg = scratch / f"{name}.svg"
    svg.write_text(fix_leading_spaces(app.export_screenshot(title=TITLE)))
    subprocess.run(["rsvg-convert", "-o", str(DOCS / f"{name}.png"), str(svg)], check=True)
    print(f"wrote {DOCS / f'{name}.png'}")


async def until(pilot, done: Callable[[], object], what: str, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not done():
        if time.monotonic() > end:
            raise ScreenshotError(f"gave up after {timeout:g} s waiting for {what}")
        await pilot.pause(0.02)


def watch_args(*extra: str) -> Namespace:
    return build_parser().parse_args(["watch", "--game", "breakout", "--out", "recordings", *extra])


# -- live -----------------------------------------------------------------------------
async def shoot_live(scratch: Path) -> Path:
    """A run paused about two thirds in, one action into a plan of two or more, so reply and plan show."""
    args = watch_args()
    args.speed = "fast"
    app = make_app("watch", args)
    async with app.run_test(size=SIZE) as pilot:
        s = app.screen
        await until(pilot, lambda: s.stats.frame >= 600, "frame 600")
        # a pause lands wherever the worker is (mostly building a prompt); step mode
        # brings the run to a chosen point: the first action of a plan of 2+ actions
        await pilot.press("space")
        await until(pilot, lambda: s.paused, "the pause")
        await pilot.press("s", "space")
        await until(pilot, lambda: s.phase in ("prompt", "plan", "acting"), "step mode to hold")
        while True:
            if s.phase != "prompt":
                await pilot.press("t")
                await until(pilot, lambda: s.phase == "prompt", "the next prompt")
            await pilot.press("g")
            await until(pilot, lambda: s.phase == "plan", "the reply")
            if len(s.driver.engine.pending.plan_names) >= 2:
                break
        await pilot.press("a")
        await until(pilot, lambda: s.phase == "acting", "the first action")
        await pilot.press("space", "s")  # pause, then step mode off: the live view, held mid-plan
        await pilot.pause(0.3)
        app.clear_notifications()
        await pilot.pause(0.2)
        save(app, "live", scratch)
        await pilot.press("f", "space")  # instant speed, resume: open.png replays the finished run
        await until(pilot, lambda: s.summary is not None, "the live run to finish")
        return s.recording_path


# -- step -----------------------------------------------------------------------------
async def shoot_step(scratch: Path) -> None:
    """Step mode on turn 3: an edited prompt sent, the plan overridden, one action applied, a new override typed."""
    args = watch_args("--step")
    args.speed = "instant"
    app = make_app("watch", args)
    async with app.run_test(size=SIZE) as pilot:
        s = app.screen
        for _ in range(3):
            await until(pilot, lambda: s.phase == "prompt", "the prompt")
            await pilot.press("g")
            await until(pilot, lambda: s.phase == "plan", "the reply")
            await pilot.press("t")
            await until(pilot, lambda: s.phase == "prompt" and len(s.turn_records) >= 1, "the next turn")
        editor = s.query_one("#prompt-text")
        editor.text = editor.text + "\nHint: the ball leaves the paddle towards the side it hits."
        await pilot.pause(0.2)
        s.query_one("#prompt")._scroll_to_user()
        await pilot.press("g")
        await until(pilot, lambda: s.phase == "plan", "the reply to the edited prompt")
        override = s.query_one("#override-input", Input)
        override.value = "fire, right, right"
        await pilot.press("o")
        await pilot.pause(0.3)
        await pilot.press("a")
        await pilot.pause(0.3)
        app.clear_notifications()
        override.value = "left, left"
        await pilot.pause(0.3)
        save(app, "step", scratch)


# -- open -----------------------------------------------------------------------------
async def shoot_open(recording: Path, scratch: Path) -> None:
    """The live run replayed, scrubbed a few frames into the scoring turn nearest the middle of the run."""
    rec = Recording(recording)
    middle = rec.manifest["protocol"]["frames"] // 2
    best = max(range(len(rec.turns)),
               key=lambda i: (rec.turns[i].get("reward", 0) > 0, -abs(rec.turns[i]["start_frame"] - middle)))
    app = make_app("open", Namespace(recording=str(recording)))
    async with app.run_test(size=SIZE) as pilot:
        app.screen.goto(rec.turns[best]["start_frame"] + 4)
        await pilot.pause(0.3)
        save(app, "open", scratch)


# -- home -----------------------------------------------------------------------------
async def shoot_home(scratch: Path) -> None:
    """Home with Breakout picked, one setting changed from the paper's, and the two runs above listed."""
    app = make_app("home", Namespace(out="recordings"))
    async with app.run_test(size=SIZE) as pilot:
        home = app.screen
        home.query_one("#p-start", Input).value = "noops:30"
        await until(pilot, lambda: home.preview_game == "breakout" and ("breakout", "noops:30") in home._previews,
                    "the Breakout preview")
        await pilot.pause(0.5)
        save(app, "home", scratch)


# -- play -----------------------------------------------------------------------------
class ScriptClock:
    """The play screen's pacer, moved by this script one action slot at a time (so the shot is repeatable)."""

    def __init__(self) -> None:
        self.t = 0.0
        self.waiting: float | None = None  # the slot the play worker waits for
        self._cond = threading.Condition()

    def now(self) -> float:
        return self.t

    def wait_until(self, t: float, cancelled: Callable[[], bool]) -> None:
        with self._cond:
            self.waiting = t
            while self.t < t and not cancelled():
                self._cond.wait(0.01)
            self.waiting = None

    async def next_slot(self, screen) -> float:
        """Wait until the worker waits for a slot after now, and return that slot's time."""
        end = time.monotonic() + 10
        while time.monotonic() < end:
            if screen.done.is_set():
                raise ScreenshotError(f"the play run ended early: {screen.error or screen.summary}")
            w = self.waiting
            if w is not None and w > self.t:
                return w
            await asyncio.sleep(0.001)
        raise ScreenshotError("the play worker neither waited for a slot nor finished")

    def move_to(self, t: float) -> None:
        with self._cond:
            self.t = t
            self._cond.notify_all()


def keys_for(rgb: np.ndarray | None) -> list[str]:
    """What a player watching this Breakout frame presses: fire with no ball in play, else towards the ball."""
    if rgb is None:
        return ["space"]
    red = (rgb[..., 0] == 200) & (rgb[..., 1] == 72) & (rgb[..., 2] == 72)
    ball = np.argwhere(red[100:188, 8:152])
    paddle = np.flatnonzero(red[189:194, 8:152].any(axis=0))
    if len(ball) == 0 or len(paddle) == 0:
        return ["space"]
    ball_x, paddle_x = ball[:, 1].mean(), paddle.mean()
    if abs(ball_x - paddle_x) < 4:
        return []
    return ["right"] if ball_x > paddle_x else ["left"]


async def shoot_play(scratch: Path) -> None:
    """Real-time Breakout at paper pace, about half way through, with fire and right held together."""
    args = build_parser().parse_args(["play", "--game", "breakout", "--seed", "0", "--mode", "realtime",
                                      "--pace", "paper", "--out", "recordings"])
    app = make_app("play", args)
    screen = app._first()  # the one PlayScreen the app will show: give it this script's clock
    clock = ScriptClock()
    screen.pacer, screen.countdown = clock, 0
    async with app.run_test(size=SIZE) as pilot:
        view = screen.query_one("#play-frame", FrameView)
        while screen.stats.frame < 420:
            slot = await clock.next_slot(screen)
            for key in keys_for(getattr(view, "_rgb", None)):
                await pilot.press(key)  # pressed every slot (0.1 s): held, as auto-repeat keeps a key held
            clock.move_to(slot)
            await until(pilot, lambda: screen.stats.frame >= round(slot * 30), "the slot's frames")
        # a chord for the shot: fire, then right 0.05 s later (Breakout has no rightfire: right is applied)
        slot = await clock.next_slot(screen)
        await pilot.press("space")
        clock.move_to(slot - 0.05)
        await pilot.press("right")
        clock.move_to(slot)
        slot = await clock.next_slot(screen)
        await pilot.press("right")
        await until(pilot, lambda: screen.applied == "right" and "fire+right" in str(
            screen.query_one("#play-keys").render()), "the chord to be applied")
        await pilot.pause(0.3)
        app.clear_notifications()
        save(app, "play", scratch)
        await pilot.press("escape")
        await until(pilot, lambda: screen.summary is not None, "the play run to stop")


async def main() -> None:
    with tempfile.TemporaryDirectory(prefix="screenshots-") as tmp:
        scratch = Path(tmp)
        os.chdir(scratch)  # recordings/ lands here, and the screens show short relative paths
        live = await shoot_live(scratch)
        await shoot_step(scratch)
        await shoot_open(live, scratch)
        await shoot_play(scratch)
        await shoot_home(scratch)


if __name__ == "__main__":
    if shutil.which("rsvg-convert") is None:
        sys.exit("rsvg-convert is missing: install librsvg2-bin (apt-get install librsvg2-bin) and run this again")
    try:
        asyncio.run(main())
    except ScreenshotError as e:
        sys.exit(f"screenshots: {e}")
