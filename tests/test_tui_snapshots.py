"""How the screens look, at fixed terminal sizes (pytest-textual-snapshot).

Runs are tiny (15-30 frames) and played at instant speed; each test waits for
the state it draws, never for wall-clock time. Recording paths hold a timestamp,
so the live views show a fixed stand-in path. Snapshots live in
tests/snapshots/<this file>/; regenerate with ``pytest --snapshot-update`` on
Python 3.11 with the pinned Textual, then look at them.
"""

from __future__ import annotations

from argparse import Namespace
from pathlib import Path

import pytest
from pytest_textual_snapshot import SVGImageExtension

from screens.app import make_app
from tests.tui_helpers import record, wait_until, watch_args

STAND_IN = Path("recordings/breakout-random-s0")


class _SnapshotsHere(SVGImageExtension):
    """Keep the SVGs in tests/snapshots/ rather than syrupy's __snapshots__."""

    @classmethod
    def dirname(cls, *, test_location) -> str:
        test_file = Path(test_location.filepath)
        return str(test_file.parent / "snapshots" / test_file.stem)


@pytest.fixture
def snapshot(snapshot):
    use_extension = snapshot.use_extension
    snapshot.use_extension = lambda extension_class=None: use_extension(_SnapshotsHere)
    return snapshot


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # relative "recordings/" paths: the same text on every machine


def watch_app(*extra: str):
    return make_app("watch", watch_args("recordings", *extra))


def _steady(pilot) -> None:
    """Hide what changes from run to run: the timestamped recording path and toasts."""
    screen = pilot.app.screen
    screen.recording_path = STAND_IN
    screen._status()
    pilot.app.clear_notifications()


def test_home(snap_compare):
    app = make_app("home", Namespace(out="recordings"))

    async def run_before(pilot):
        home = pilot.app.screen
        await wait_until(pilot, lambda: home.preview_game == "breakout", what="the preview")

    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_live_finished(snap_compare):
    async def run_before(pilot):
        screen = pilot.app.screen
        await wait_until(pilot, lambda: screen.summary is not None, what="the run to finish")
        _steady(pilot)

    assert snap_compare(watch_app("--frames", "30"), terminal_size=(200, 60), run_before=run_before)


def test_step_mode_holding_before_the_prompt(snap_compare):
    async def run_before(pilot):
        screen = pilot.app.screen
        await wait_until(pilot, lambda: screen.phase == "prompt", what="the step-mode hold")
        _steady(pilot)

    assert snap_compare(watch_app("--frames", "15", "--step"), terminal_size=(120, 40), run_before=run_before)


def test_open_recording(snap_compare):
    fixed = Path("recordings/breakout-demo")
    record("recordings", frames=30).path.rename(fixed)
    app = make_app("open", Namespace(recording=str(fixed)))
    assert snap_compare(app, press=["right", "right", "full_stop"], terminal_size=(200, 60))


def test_help(snap_compare):
    assert snap_compare(make_app("home", Namespace(out="recordings")), press=["f1"], terminal_size=(120, 40))
