"""A two-player match from the home screen: the form (v, or the palette entry), its checks, and the match it opens."""

from __future__ import annotations

from argparse import Namespace

from screens.app import make_app
from screens.views.home import HomeScreen
from screens.views.hotseat import HotseatScreen
from screens.views.match import MatchScreen
from screens.views.match_form import MatchForm, field_for
from tests.tui_helpers import run_async, wait_until


def _home(out):
    return make_app("home", Namespace(out=str(out), speed="instant"))


async def _open_form(app, pilot):
    await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen), what="home")
    assert "Start a two-player match" in [name for name, *_ in app.screen.palette_commands()]
    app.screen.set_focus(None)  # the keys are the screen's, not a field's
    await pilot.press("v")
    await wait_until(pilot, lambda: isinstance(app.screen, MatchForm), what="the match form")
    return app.screen


async def _submit(form, pilot):
    """Enter in a field submits the form, as Start does."""
    form.query_one("#mf-frames").focus()
    await pilot.press("enter")
    await pilot.pause()


def test_an_error_marks_the_field_it_names():
    assert field_for("--vs: unknown agent 'bogus'") == "#mf-vs"
    assert field_for("--seed must be 0 or more") == "#mf-seed"
    assert field_for("breakout is a one-player game; the two-player games are ...") == "#mf-game"


@run_async
async def test_a_bad_opponent_is_marked_and_the_form_stays_then_a_good_one_opens_the_match(tmp_path):
    app = _home(tmp_path)
    async with app.run_test(size=(160, 50)) as pilot:
        form = await _open_form(app, pilot)
        form.query_one("#mf-vs").value = "bogus"
        form.query_one("#mf-frames").value = "30"
        await _submit(form, pilot)
        assert isinstance(app.screen, MatchForm) and form.invalid == "#mf-vs"
        assert "unknown agent" in str(form.query_one("#mf-error").render())
        assert form.query_one("#mf-vs").has_class("-invalid")
        form.query_one("#mf-seed").value = "x"
        form.query_one("#mf-vs").value = "random"
        await _submit(form, pilot)
        assert form.invalid == "#mf-seed" and not form.query_one("#mf-vs").has_class("-invalid")
        form.query_one("#mf-seed").value = "3"
        form.query_one("#mf-side").value = "2"
        await _submit(form, pilot)
        await wait_until(pilot, lambda: isinstance(app.screen, MatchScreen), what="the match screen")
        screen = app.screen
        assert screen.person == 2 and screen.spec.specs == ("random", "human") and screen.spec.seed == 3
        assert screen.spec.protocol.frames == 30
        await wait_until(pilot, lambda: screen.awaiting_plan, what="the plan prompt")
        await pilot.press("escape")
        await wait_until(pilot, lambda: screen.summary is not None, what="the match to stop")
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen), what="back home")
    assert screen.recording is not None and screen.recording.parent == tmp_path


@run_async
async def test_side_both_seats_two_people_and_escape_cancels(tmp_path):
    app = _home(tmp_path)
    async with app.run_test(size=(160, 50)) as pilot:
        form = await _open_form(app, pilot)
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen), what="home again")
        form = await _open_form(app, pilot)
        form.query_one("#mf-side").value = "both"
        form.query_one("#mf-game").value = "pong"
        form.query_one("#mf-frames").value = "9"
        await _submit(form, pilot)
        await wait_until(pilot, lambda: isinstance(app.screen, HotseatScreen), what="the two-person screen")
        assert app.screen.spec.specs == ("human", "human") and app.screen.spec.game == "pong"
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen.summary is not None, what="the match to stop")


# -- one URL per player, errors in the form's words, Tab and Cancel (issue 27) --------------------------------------
URL = "http://127.0.0.1:9/v1"  # nothing listens: the form only checks, no call is made


@run_async
async def test_a_compat_opponent_without_a_url_marks_the_opponent_field_in_the_forms_words(tmp_path):
    app = _home(tmp_path)
    async with app.run_test(size=(160, 50)) as pilot:
        form = await _open_form(app, pilot)
        assert form.query_one("#mf-url").value == ""  # home has no base URL set
        form.query_one("#mf-vs").value = "compat:qwen"
        await _submit(form, pilot)
        assert isinstance(app.screen, MatchForm) and form.invalid == "#mf-vs"
        assert form.query_one("#mf-vs").has_class("-invalid") and not form.query_one("#mf-game").has_class("-invalid")
        said = str(form.query_one("#mf-error").render())
        assert "base URL field" in said and "--base-url" not in said, said
        form.query_one("#mf-url").value = "localhost:11434"  # there, but not a URL: the URL field's fault
        await _submit(form, pilot)
        assert form.invalid == "#mf-url" and "--base-url" not in str(form.query_one("#mf-error").render())


@run_async
async def test_the_opponents_url_defaults_to_homes_and_goes_to_the_opponents_side(tmp_path):
    app = _home(tmp_path)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen), what="home")
        app.screen.query_one("#m-base_url").value = URL  # the home screen's base URL setting
        form = await _open_form(app, pilot)
        assert form.query_one("#mf-url").value == URL
        form.query_one("#mf-vs").value = "compat:qwen"
        form.query_one("#mf-side").value = "2"
        launch = form.check()  # what Start hands the match screen
        spec = launch["spec"]
        assert spec.specs == ("compat:qwen", "human") and spec.provider_options[0].base_url == URL
        form.query_one("#mf-vs").value = "random"  # a URL means nothing to random: not passed on, no error
        assert form.check()["spec"].specs == ("random", "human")


@run_async
async def test_tab_goes_down_the_form_base_url_last_then_start_before_cancel_and_cancel_says_so(tmp_path):
    app = _home(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        form = await _open_form(app, pilot)
        assert form.focused is form.query_one("#mf-vs")  # the opponent first: the game is already set
        order = []
        for _ in range(6):
            await pilot.press("tab")
            await wait_until(pilot, lambda: form.focused is not None, what="a field")
            order.append(form.focused.id)
        # top to bottom, as on screen; the base URL (a model on its own server only) last; Start before Cancel
        assert order == ["mf-side", "mf-mode", "mf-seed", "mf-frames", "mf-url", "mf-start"]
        for close in ("cancel", "escape"):  # each way of closing the form says so (a notice of its own)
            if close == "cancel":
                form.query_one("#mf-cancel").focus()
            seen = {n.identity for n in app._notifications}
            await pilot.press("enter" if close == "cancel" else "escape")
            await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen), what="home again")
            await wait_until(pilot, lambda: any("no match started" in n.message and n.identity not in seen
                                                for n in app._notifications), what=f"the notice after {close}")
            if close == "cancel":
                form = await _open_form(app, pilot)


@run_async
async def test_the_form_has_its_own_footer_and_f1_shows_its_keys_and_home_shows_v_match(tmp_path):
    from textual.widgets import Footer

    from screens.app import HelpScreen

    def footer(screen) -> list[str]:
        return [str(k.description) for k in screen.query_one(Footer).children if hasattr(k, "description")]

    app = _home(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HomeScreen), what="home")
        home = app.screen
        await wait_until(pilot, lambda: "Match" in footer(home), what="home's footer")  # as its help lists `v`
        form = await _open_form(app, pilot)
        await wait_until(pilot, lambda: "Cancel" in footer(form), what="the form's footer")
        assert "Help" in footer(form) and "Watch" not in footer(form)  # not home's keys, under the form
        await pilot.press("f1")  # the cursor is in the opponent field: F1 still opens the help
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), what="the form's help")
        text = app.screen.text
        assert text.startswith("# Keys: Two-player match: the form") and "`esc`  Cancel" in text
        assert "## Home" not in text
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is form, what="the form again")
