"""The open screen's title, status line and event jumps agree: turns numbered from 0, counted in the same way."""

from __future__ import annotations

from argparse import Namespace
from pathlib import Path

from screens.app import make_app
from screens.views.replay_view import ReplayScreen
from tests.tui_helpers import run_async, wait_until
from workstation.store.recording import Recording

SAMPLE = Path(__file__).resolve().parents[1] / "recordings" / "sample" / "breakout-random-s0"  # rewards at turn ends


def status(screen) -> str:
    return str(screen.query_one("#status").render())


def title(screen) -> str:
    return str(screen.query_one("#title").render())


@run_async
async def test_next_reward_shows_the_turn_that_scored_and_its_reward():
    rec = Recording(SAMPLE)
    scored = [t for t in rec.turn_records if t.reward]
    first = scored[0]
    assert first.end_frame == rec.turn_records[first.turn + 1].start_frame  # the frame ends one turn, starts the next
    app = make_app("open", Namespace(recording=str(SAMPLE)))
    async with app.run_test(size=(160, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        await pilot.press("r")
        await wait_until(pilot, lambda: screen.frame > 0, what="the jump to the first reward")
        assert screen.frame == first.end_frame and screen.turn == first.turn
        assert f"turn reward {first.reward:g}" in status(screen) and "turn reward 0" not in status(screen)
        assert "this frame +1" in status(screen)
        await pilot.press("full_stop", "comma")  # a frame on and back: that frame now starts the next turn
        assert screen.turn == first.turn + 1


@run_async
async def test_the_title_and_the_status_count_turns_the_same_way():
    rec = Recording(SAMPLE)
    n = len(rec.turn_records)
    app = make_app("open", Namespace(recording=str(SAMPLE)))
    async with app.run_test(size=(200, 40)) as pilot:
        screen = app.screen
        assert f"{n} turns" in title(screen)
        assert f"turn 0 (1 of {n})" in status(screen)
        await pilot.press("end")
        await wait_until(pilot, lambda: screen.turn == n - 1, what="the last turn")
        assert f"turn {n - 1} ({n} of {n})" in status(screen)
        assert f"/{n - 1}" not in status(screen).split("recording")[0].split("frame")[-1]  # no "turn 145/145"
