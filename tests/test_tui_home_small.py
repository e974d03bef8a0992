"""Home in a small terminal (100x30): no sliver of a preview, and the start buttons stay in view and work."""

from __future__ import annotations

from argparse import Namespace

import pytest

from screens.app import make_app
from screens.views.home import HomeScreen
from screens.views.live import LiveScreen
from tests.tui_helpers import run_async, wait_until


def inside(inner, outer) -> bool:
    return (outer.x <= inner.x and inner.right <= outer.right and outer.y <= inner.y and inner.bottom <= outer.bottom
            and inner.width > 0 and inner.height > 0)


def laid_out(home) -> bool:
    """The breakpoint class is set and the start buttons have their place (waits on state, not time)."""
    return ((home.has_class("-narrow") or home.has_class("-wide"))
            and all(home.query_one(b).region.width > 0 for b in ("#watch", "#step", "#play")))


@pytest.mark.parametrize("size", [(100, 30), (80, 24)])
def test_small_home_keeps_the_buttons_in_view_and_no_sliver_of_a_preview(tmp_path, size):
    @run_async
    async def check() -> None:
        app = make_app("home", Namespace(out=str(tmp_path / "recordings")))
        async with app.run_test(size=size) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen) and laid_out(app.screen),
                             what="home laid out")
            home = app.screen
            preview = home.query_one("#preview-col")
            assert not preview.display or preview.region.width >= 24  # shown whole, or not at all
            settings = home.query_one("#settings-col")
            for button in ("#watch", "#step", "#play"):
                region = home.query_one(button).region
                assert inside(region, settings.content_region), f"{button} at {region}, out of {settings.region}"
            games = home.query_one("#games-col").region
            assert games.width + settings.region.width == size[0]  # no empty strip left where the preview was
            await pilot.click("#watch")
            await wait_until(pilot, lambda: isinstance(app.screen, LiveScreen) and app.screen.phase != "ready",
                             what="the live view, mounted and running")

    check()


@run_async
async def test_a_wide_home_still_shows_the_first_frame(tmp_path):
    app = make_app("home", Namespace(out=str(tmp_path / "recordings")))
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen) and laid_out(app.screen),
                         what="home laid out")
        preview = app.screen.query_one("#preview-col")
        assert preview.display and preview.region.width >= 24
