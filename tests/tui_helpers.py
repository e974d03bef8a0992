"""What the TUI tests share: running an async test, polling the app, and making real runs to look at."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from screens.app import WatchLaunch
from workstation.cli import build_parser
from workstation.game.protocol import Protocol
from workstation.run.drive import drive
from workstation.run.options import spec_from_args
from workstation.run.start import RunSpec, start_run
from workstation.store.recording import Recording


def run_async(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Let pytest call an ``async def`` test: it runs to the end in a fresh event loop (fixtures still apply)."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return run


async def wait_until(pilot, predicate: Callable[[], object], timeout: float = 30.0, what: str = "condition") -> None:
    """Poll the app (letting it process messages) until ``predicate()`` holds."""
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await pilot.pause(0.02)


def watch_args(out: str | Path, *extra: str):
    """``workstation watch --game breakout --out OUT ...`` as the app gets it: a ``Launch`` at instant speed.

    The command line is read by the CLI's own parser (as a user types it); the app is made from the run spec.
    """
    args = build_parser().parse_args(["watch", "--game", "breakout", "--out", str(out), *extra])
    # tests never depend on wall-clock pacing
    return WatchLaunch(spec_from_args(args), step=args.step, speed="instant")


def record(out: str | Path, frames: int = 60, edit: str | None = None) -> Recording:
    """A real recorded random run of Breakout; with ``edit``, turn 0's prompt is edited as step mode would."""
    engine = start_run(RunSpec("breakout", protocol=Protocol(frames=frames), out=str(out)))
    try:
        if edit:
            engine.step()  # READY -> PROMPT
            engine.set_prompt(engine.pending.prompt.with_text(engine.pending.prompt.render_text() + edit))
        drive(engine)
    finally:
        engine.close()
    return Recording(engine.writer.path)
