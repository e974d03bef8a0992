"""F1 on every screen lists that screen's own keys, generated from its bindings (issue 27): the match screen,
the match replay and the IDC view no longer show the home help; batch, QA curator and session have theirs."""

from __future__ import annotations

from argparse import Namespace

import pytest
from textual.binding import Binding

from screens.app import HelpScreen, WorkstationApp, make_app, match_app
from screens.help_keys import SCREEN_NOTES, absent, help_markdown, screen_bindings
from screens.views.batch import BatchScreen
from screens.views.compare import CompareScreen
from screens.views.home import HomeScreen
from screens.views.hotseat import HotseatScreen
from screens.views.idc import IdcScreen
from screens.views.live import LiveScreen
from screens.views.match import MatchScreen
from screens.views.match_form import MatchForm
from screens.views.match_replay import MatchReplayScreen
from screens.views.play import PlayScreen
from screens.views.qa_curate import CurateScreen
from screens.views.replay_view import ReplayScreen
from screens.views.session import SessionScreen
from screens.widgets.confirm import ConfirmScreen
from tests.tui_helpers import record, run_async, wait_until, watch_args

# Every screen make_app can open (screens/app.py), by the Launch that opens it.
EVERY_SCREEN = [HomeScreen, LiveScreen, ReplayScreen, MatchReplayScreen, CompareScreen, SessionScreen, BatchScreen,
                CurateScreen, MatchScreen, HotseatScreen, IdcScreen, PlayScreen]
# The modal screens over them: they hide the app's keys, so each binds its own F1.
MODALS = [MatchForm, ConfirmScreen]


def own_rows(screen_class, app, screen=None) -> list[str]:
    """The table rows its bindings give: each key as shown, and what it does (less the keys ``screen`` lacks)."""
    bindings = [b for b in screen_bindings(screen_class) if screen is None or not absent(screen, b)]
    return [f"`{app.get_key_display(b)}`" for b in bindings] + [str(b.description) for b in bindings if b.description]


@pytest.mark.parametrize("screen_class", EVERY_SCREEN + MODALS, ids=lambda c: c.__name__)
def test_each_screens_help_names_its_own_keys_and_not_another_screens(screen_class):
    app = WorkstationApp(lambda: HomeScreen())
    text = help_markdown(screen_class, app)
    title = SCREEN_NOTES[screen_class.__name__][0]  # every screen has its section
    assert text.startswith(f"# Keys: {title}\n")
    assert screen_bindings(screen_class), f"{screen_class.__name__} declares no keys"
    for row in own_rows(screen_class, app):
        assert row in text, f"{screen_class.__name__}'s help misses {row}"
    for b in Binding.make_bindings(WorkstationApp.BINDINGS):
        assert f"`{app.get_key_display(b)}`" in text  # the app's keys too
    if screen_class is not HomeScreen:
        assert "## Home" not in text and "Compare marked" not in text  # not the home help
    if screen_class in MODALS:
        assert "f1" in {b.key for b in screen_bindings(screen_class)}  # the app's F1 does not reach past a modal
    if screen_class is HotseatScreen:
        assert "- `/`  side 2: fire" in text and "- `c`  side 1: commit" in text


def test_a_binding_added_to_a_screen_shows_in_its_help_at_once():
    class Probe(ReplayScreen):
        BINDINGS = [Binding("z", "zoom", "Zoom the frame")]

    app = WorkstationApp(lambda: HomeScreen())
    text = help_markdown(Probe, app)
    assert "- `z`  Zoom the frame" in text and "Next reward" in text  # its own, and its bases'


async def f1_shows(app, pilot, screen_class) -> str:
    await wait_until(pilot, lambda: isinstance(app.screen, screen_class), what=screen_class.__name__)
    screen = app.screen
    await pilot.press("f1")
    await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
    text = app.screen.text
    for row in own_rows(screen_class, app, screen):
        assert row in text, f"f1 on {screen_class.__name__} misses {row}"
    await pilot.press("escape")
    await wait_until(pilot, lambda: app.screen is screen, what="the help to close")
    return text


@run_async
async def test_f1_on_the_match_screen_shows_the_match_keys(tmp_path):
    from workstation.cli import build_parser
    from workstation.run.match_vs import play_vs

    args = build_parser().parse_args(["play", "--game", "boxing", "--vs", "random", "--mode", "paused",
                                      "--frames", "9", "--out", str(tmp_path)])
    launch = play_vs(args)
    app = match_app(launch["spec"], launch["person"], launch["mode"], "instant")
    async with app.run_test(size=(160, 50)) as pilot:
        text = await f1_shows(app, pilot, MatchScreen)
        assert "Two-player match" in text and "Stop / leave" in text and "Compare marked" not in text
        assert "- `enter`  paused: commit the plan" in text and "`space`  fire" in text  # its game keys too


@run_async
async def test_f1_on_home_watch_open_and_compare_shows_each_screens_keys(tmp_path):
    a, b = record(tmp_path / "a", frames=15), record(tmp_path / "b", frames=15)
    app = make_app("home", Namespace(out=str(tmp_path / "a")))
    async with app.run_test(size=(120, 40)) as pilot:
        assert "Compare marked" in await f1_shows(app, pilot, HomeScreen)
    app = make_app("watch", watch_args(tmp_path / "w", "--frames", "15", "--step"))
    async with app.run_test(size=(120, 40)) as pilot:
        assert "## Step mode" in await f1_shows(app, pilot, LiveScreen)
    app = make_app("open", Namespace(recording=str(a.path)))
    async with app.run_test(size=(120, 40)) as pilot:
        assert "Next judged failure" in await f1_shows(app, pilot, ReplayScreen)
    from screens.app import CompareLaunch

    app = make_app(CompareLaunch((str(a.path), str(b.path))))
    async with app.run_test(size=(160, 50)) as pilot:
        assert "Divergence" in await f1_shows(app, pilot, CompareScreen)


@run_async
async def test_f1_on_the_idc_view_is_not_the_home_help(tmp_path):
    from screens.app import IdcLaunch
    from tests.test_idc_screen import make_dir

    out = make_dir(tmp_path)
    app = make_app(IdcLaunch(str(out)))
    async with app.run_test(size=(150, 44)) as pilot:
        text = await f1_shows(app, pilot, IdcScreen)
        assert "Open episode" in text and "## Home" not in text
