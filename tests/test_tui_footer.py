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
