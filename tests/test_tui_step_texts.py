"""Step mode's panels say what is true at each hold: nothing sent yet; a plan typed by hand (no reply asked for)."""

from __future__ import annotations

from textual.widgets import Input

from screens.app import make_app
from screens.widgets.plan_view import PlanView
from screens.widgets.reply_view import ReplyView
from tests.tui_helpers import run_async, wait_until, watch_args


def reply(screen) -> str:
    return str(screen.query_one(ReplyView)._body.render())


def hint(screen) -> str:
    return str(screen.query_one("#step-hint").render())


@run_async
async def test_before_sending_the_panels_say_nothing_was_sent_and_name_the_keys(tmp_path):
    app = make_app("watch", watch_args(tmp_path, "--frames", "60", "--step"))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.phase == "prompt", what="the hold before the first prompt")
        await pilot.pause()
        assert "waiting for the reply" not in reply(screen)
        assert "not sent yet" in reply(screen) and "g sends" in reply(screen)
        assert "waiting for the reply" not in str(screen.query_one(PlanView).render())
        assert "  1 image  " in str(screen.query_one("#prompt-head").render())  # turn 0 shows the current frame only
        await pilot.press("g")
        await wait_until(pilot, lambda: screen.phase == "plan", what="the reply")
        await pilot.pause()
        assert "parse valid" in reply(screen) and "reply parsed" in hint(screen)  # a reply was asked for


@run_async
async def test_a_plan_typed_before_sending_says_it_was_set_by_hand(tmp_path):
    app = make_app("watch", watch_args(tmp_path, "--frames", "60", "--step"))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.phase == "prompt", what="the hold before the first prompt")
        screen.query_one("#override-input", Input).value = "left, fire"
        await pilot.press("o")  # override before the prompt is sent: the agent is not asked
        await wait_until(pilot, lambda: screen.phase == "plan", what="the plan by hand")
        await pilot.pause()
        assert "reply parsed" not in hint(screen) and "set by hand" in hint(screen)
        assert "set by hand" in reply(screen) and "not asked" in reply(screen)
        assert "parse valid" not in reply(screen)
        await pilot.press("t")  # the turn runs; the next one is asked again
        await wait_until(pilot, lambda: screen.phase == "prompt" and screen.last_turn == 1, what="turn 1's hold")
        await pilot.press("g")
        await wait_until(pilot, lambda: screen.phase == "plan", what="turn 1's reply")
        await pilot.pause()
        assert "reply parsed" in hint(screen) and "set by hand" not in reply(screen)
