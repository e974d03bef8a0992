"""Step mode you cannot fall into (issue 27): the override box is reached by Tab, letters typed in it are
text (no single-key command fires), Esc abandons the edit and leaves the run plain, Enter commits it."""

from __future__ import annotations

from textual.widgets import Input, TextArea

from screens.app import make_app
from screens.widgets.step_panel import EDIT_KEYS, TYPING_KEYS
from tests.tui_helpers import run_async, wait_until, watch_args

TYPED = "right, right, fire"


def keys_for(text: str) -> list[str]:
    return [{" ": "space", ",": "comma"}.get(c, c) for c in text]


async def tab_to(pilot, screen, widget, limit: int = 20) -> int:
    """Press Tab until ``widget`` has focus; returns how many presses it took."""
    for n in range(1, limit + 1):
        await pilot.press("tab")
        await pilot.pause()
        if screen.focused is widget:
            return n
    raise AssertionError(f"{limit} presses of tab never reached {widget!r}")


def plain(screen) -> bool:
    engine = screen.driver.engine
    return not engine.changes and not (engine.pending is not None and engine.pending.overridden)


@run_async
async def test_the_override_box_by_tab_takes_letters_as_text_esc_abandons_enter_commits(tmp_path):
    app = make_app("watch", watch_args(tmp_path, "--frames", "60", "--step"))
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.phase == "prompt", what="the hold before the first prompt")
        assert EDIT_KEYS in str(screen.query_one("#edit-keys").render())  # the panel says what to press
        await pilot.press("g")
        await wait_until(pilot, lambda: screen.phase == "plan", what="the reply")
        box = screen.query_one("#override-input", Input)
        speed, holds = screen.speed, screen.holds
        await tab_to(pilot, screen, box)  # no `o` first
        assert TYPING_KEYS in str(screen.query_one("#edit-keys").render())  # says the letters are text now
        await pilot.press(*keys_for(TYPED))  # r would re-send, t play the turn, f change speed, space pause
        await pilot.pause()
        assert box.value == TYPED
        assert screen.phase == "plan" and screen.holds == holds and screen.speed == speed and not screen.paused
        assert plain(screen)
        await pilot.press("escape")  # abandoned: the box is emptied, the run stays plain
        await wait_until(pilot, lambda: screen.focused is None, what="the box to lose focus")
        assert box.value == "" and plain(screen) and screen.phase == "plan"
        assert EDIT_KEYS in str(screen.query_one("#edit-keys").render())
        assert "changed by hand" not in str(screen.query_one("#status").render())
        await tab_to(pilot, screen, box)
        await pilot.press(*keys_for(TYPED))
        assert plain(screen)
        await pilot.press("enter")  # committed: now the run is changed by hand
        await wait_until(pilot, lambda: screen.driver.engine.changes or screen.driver.engine.pending.overridden,
                         what="the override")
        assert box.value == ""
        await pilot.press("escape", "t")  # out of the box, then play the (overridden) turn: the mark follows it
        await wait_until(pilot, lambda: "changed by hand" in str(screen.query_one("#status").render()),
                         what="the changed-by-hand mark")


@run_async
async def test_e_goes_into_the_prompt_text_and_letters_there_are_text(tmp_path):
    app = make_app("watch", watch_args(tmp_path, "--frames", "30", "--step"))
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.phase == "prompt", what="the hold before the first prompt")
        editor = screen.query_one("#prompt-text", TextArea)
        await pilot.press("e")
        await wait_until(pilot, lambda: screen.focused is editor, what="the prompt text to take focus")
        before = editor.text
        await pilot.press("g", "t", "x")  # send, turn, stop: all text here
        await pilot.pause()
        assert editor.text != before and screen.phase == "prompt" and screen.summary is None and plain(screen)
        await pilot.press("escape")
        await wait_until(pilot, lambda: screen.focused is None, what="the editor to lose focus")
        assert plain(screen)  # an edit not applied (ctrl+s) nor sent (g) changes nothing
