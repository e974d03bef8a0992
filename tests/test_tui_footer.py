"""The live view's footer says what the keys do now: x Stop, and Resume while paused."""

from __future__ import annotations

from textual.widgets import Footer

from screens.app import make_app
from tests.tui_helpers import run_async, wait_until, watch_args


def _footer(screen) -> list[str]:
    return [str(k.description) for k in screen.query_one(Footer).children if hasattr(k, "description")]


@run_async
async def test_footer_shows_stop_and_says_resume_while_paused(tmp_path):
    app = make_app("watch", watch_args(tmp_path, "--frames", "30", "--step"))
    async with app.run_test(size=(120, 40)) as pilot:
        live = app.screen
        await wait_until(pilot, lambda: live.phase == "prompt", what="the step-mode hold")
        await wait_until(pilot, lambda: "Stop" in _footer(live), what="the step-mode footer")
        keys = _footer(live)
        assert "Stop" in keys and "Pause" in keys and "Resume" not in keys
        await pilot.press("space")
        await wait_until(pilot, lambda: "Resume" in _footer(live), what="the footer to say Resume")
        assert live.paused and "Pause" not in _footer(live)
        await pilot.press("space")
        await wait_until(pilot, lambda: "Pause" in _footer(live), what="the footer to say Pause again")
        assert not live.paused
        await wait_until(pilot, lambda: all(k.region.width for k in live.query_one(Footer).children),
                         what="the footer laid out")
        right = max(k.region.right for k in live.query_one(Footer).children)
        assert right <= 120  # the step-mode footer still fits 120 columns


@run_async
async def test_a_run_that_is_over_shows_only_what_is_left_to_do_until_a_branch_makes_it_live(tmp_path):
    from screens.widgets.step_panel import StepPanel

    app = make_app("watch", watch_args(tmp_path, "--frames", "30"))
    async with app.run_test(size=(120, 40)) as pilot:
        live = app.screen
        await wait_until(pilot, lambda: live.summary is not None, what="the run to finish")
        await wait_until(pilot, lambda: "Branch" in _footer(live), what="the footer of a finished run")
        keys = _footer(live)
        assert not {"Pause", "Resume", "Speed", "Step", "Stop", "Send", "Turn"} & set(keys), keys
        assert "Back" in keys and live.query_one(StepPanel).display  # the panel to pick the turn to branch from
        speed = live.speed
        await pilot.press("space", "f", "x")  # refused: nothing to pause, pace or stop
        await pilot.pause()
        assert not live.paused and live.speed == speed
        assert [name for name, *_ in live.palette_commands()] == ["Back", "Quit", "Rewind and branch"]


@run_async
async def test_a_finished_step_run_offers_the_branch_and_the_branch_brings_the_run_keys_back(tmp_path):
    app = make_app("watch", watch_args(tmp_path, "--frames", "15", "--step"))
    async with app.run_test(size=(120, 40)) as pilot:
        live = app.screen
        while live.summary is None:  # each turn: send, then the rest of the turn
            await wait_until(pilot, lambda: live.phase == "prompt" or live.summary is not None, what="a hold")
            if live.summary is not None:
                break
            turn = live.last_turn
            await pilot.press("g")
            await wait_until(pilot, lambda: live.phase == "plan" or live.summary is not None, what="the reply")
            await pilot.press("t")
            await wait_until(pilot, lambda: live.last_turn > turn or live.summary is not None, what="the next turn")
        await wait_until(pilot, lambda: "Branch" in _footer(live), what="the footer of a finished run")
        assert not {"Pause", "Step", "Stop", "Send", "Turn"} & set(_footer(live))
        first = live.recording_path
        await pilot.press("b")  # rewind to the start of the last turn: live again, holding before its prompt
        await wait_until(pilot, lambda: live.recording_path != first and live.summary is None, what="the branch")
        await wait_until(pilot, lambda: "Stop" in _footer(live), what="the live footer after the branch")
        assert {"Pause", "Step", "Send", "Branch"} <= set(_footer(live))
