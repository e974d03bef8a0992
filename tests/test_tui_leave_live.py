"""Leaving a live run: ``q`` and ``escape`` ask first while a run one would lose is live; a finished run leaves at once."""

from __future__ import annotations

from textual.widgets import Button, Static

from screens.app import make_app
from screens.views.live import LiveScreen
from screens.widgets.confirm import ConfirmScreen
from tests.tui_helpers import run_async, wait_until, watch_args
from workstation.store.recording import Recording


def question(app) -> str:
    return str(app.screen.query_one("#confirm-question", Static).render())


@run_async
async def test_step_mode_q_and_escape_ask_first_and_leave_only_on_yes(tmp_path):
    app = make_app("watch", watch_args(tmp_path, "--frames", "60", "--step"))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.phase == "prompt", what="the hold before the first prompt")
        await pilot.press("q")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        assert "still going" in question(app) and "INCOMPLETE" in question(app)
        assert app.screen.focused is app.screen.query_one("#confirm-no", Button)  # a stray Enter says no
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.screen is screen, what="back on the run")
        assert app.is_running and screen.summary is None
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question again")
        await pilot.press("n")
        await wait_until(pilot, lambda: app.screen is screen, what="back on the run")
        assert app.is_running and screen.summary is None and screen.phase == "prompt"
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question a third time")
        await pilot.press("y")
        await wait_until(pilot, lambda: not app.is_running, what="the app to end")
        path = screen.recording_path
    assert not Recording(path).complete  # left on purpose: kept, marked incomplete


@run_async
async def test_a_finished_step_run_leaves_at_once(tmp_path):
    app = make_app("watch", watch_args(tmp_path, "--frames", "30", "--step"))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.phase == "prompt", what="the first hold")
        await pilot.press("s")  # out of step mode: the run goes to its end
        await wait_until(pilot, lambda: screen.summary is not None, what="the run to finish")
        await pilot.press("q")
        await wait_until(pilot, lambda: not app.is_running, what="the app to end")


@run_async
async def test_a_random_watch_run_leaves_at_once(tmp_path):
    app = make_app("watch", watch_args(tmp_path, "--frames", "900"))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.turn_records, what="a turn")
        assert screen.summary is None  # live, but free to make again: no question
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.is_running, what="the app to end")


@run_async
async def test_a_model_run_in_progress_asks_before_q_quits(tmp_path, monkeypatch):
    from tests.fake_provider import FakeProvider, Step

    fake = FakeProvider()  # a real OpenAI SDK over real HTTP to 127.0.0.1
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    fake.push(Step("hang", hang_s=60))  # the first call stays in flight
    try:
        args = watch_args(tmp_path, "--frames", "60", "--agent", "openai:gpt-5.1", "--base-url", fake.url("openai"))
        app = make_app("watch", args)
        async with app.run_test(size=(160, 50)) as pilot:
            screen = app.screen
            assert isinstance(screen, LiveScreen)
            await wait_until(pilot, lambda: screen.phase == "asking", what="the first call")
            await pilot.press("q")
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
            await pilot.press("escape")  # no
            await wait_until(pilot, lambda: app.screen is screen, what="back on the run")
            assert app.is_running and screen.summary is None
            await pilot.press("q")
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question again")
            await pilot.press("y")
            await wait_until(pilot, lambda: not app.is_running, what="the app to end")
    finally:
        fake.close()
