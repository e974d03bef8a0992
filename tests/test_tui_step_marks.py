"""Step mode as a person uses it (Pilot, the real emulator): an overridden plan marks the run and gives it
its own run id; an edit that lost its roles is refused; the editor's cursor; the branch button asks first."""

from __future__ import annotations

from textual.widgets import Button, Input

from screens.app import make_app
from screens.widgets.confirm import ConfirmScreen
from screens.widgets.prompt_view import PromptView, end_of_last_user_part
from tests.tui_helpers import record, run_async, wait_until, watch_args
from workstation.store.recording import Recording


@run_async
async def test_send_override_one_plan_finish_marks_the_run_changed_by_hand(tmp_path):
    plain = record(tmp_path / "plain", frames=60)  # the same spec, untouched (seed 0, random)
    app = make_app("watch", watch_args(tmp_path / "hand", "--frames", "60", "--step"))
    async with app.run_test(size=(200, 60)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.phase == "prompt", what="the hold before the first prompt")
        started_in = screen.recording_path
        await pilot.press("g")
        await wait_until(pilot, lambda: screen.phase == "plan", what="the reply")
        await pilot.press("o")  # an empty box: focus it, as a person would, then type and Enter
        screen.query_one("#override-input", Input).value = "left, left"
        await pilot.press("enter")
        await pilot.press("escape")
        await wait_until(pilot, lambda: "changed by hand" in str(screen.query_one("#status").render())
                         or screen.driver.engine.pending.overridden, what="the override")
        await pilot.press("s")  # leave step mode: run to the end
        await wait_until(pilot, lambda: screen.summary is not None, what="the run to finish")
        await pilot.pause()
        assert screen.summary["interventions"] == {"override": 1}
        path = screen.recording_path
        status = str(screen.query_one("#status").render())
        assert "changed by hand (O1)" in status and str(path) in status
        hint = str(screen.query_one("#step-hint").render())
        assert "finished after" in hint and "turn 0" not in hint  # not left at the first hold
    rec = Recording(path)
    assert rec.summary_record.interventions == {"override": 1}
    assert rec.plain_run_id == plain.run_id and rec.run_id != plain.run_id
    assert path != started_in and path.name.endswith(rec.run_id[:8]) and not started_in.exists()
    assert rec.turn_records[0].overridden and rec.turn_records[0].actions == ["left", "left"]


@run_async
async def test_an_edit_that_lost_its_roles_is_refused_and_the_cursor_starts_at_the_user_part(tmp_path):
    app = make_app("watch", watch_args(tmp_path, "--frames", "30", "--step"))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.phase == "prompt", what="the hold before the first prompt")
        view = screen.query_one(PromptView)
        editor = view.editor
        original = editor.text
        row, col = editor.cursor_location
        lines = original.split("\n")
        assert (row, col) == end_of_last_user_part(original)
        user = max(i for i, line in enumerate(lines) if line == "=== user ===")
        assert row > user and col == len(lines[row]) and lines[row].strip()
        editor.focus()
        await pilot.press("ctrl+end")
        assert editor.cursor_location == (len(lines) - 1, len(lines[-1]))
        await pilot.press("ctrl+home")
        assert editor.cursor_location == (0, 0)
        editor.text = "Play well.\n" + original  # text before the first role line
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert screen.notice and "before its first '=== role ===' line" in screen.notice
        screen.set_focus(None)
        await pilot.press("g")  # send is refused too: the edit is not applied, nothing is sent
        await pilot.pause()  # the binding ran with the key press: nothing to wait for but the screen's queue
        assert screen.phase == "prompt" and screen.driver.engine.pending.prompt_variant == "standard"
        editor.text = original.replace("=== system ===\n", "", 1)  # the pack's system part lost
        await pilot.press("g")
        await wait_until(pilot, lambda: "lost its" in (screen.notice or ""), what="the refusal")
        assert "lost its '=== system ===' part" in screen.notice and screen.phase == "prompt"
        editor.text = original + "\nServe first."  # a sound edit goes through
        await pilot.press("g")
        await wait_until(pilot, lambda: screen.phase == "plan", what="the reply to the edited prompt")
        assert view.variant == "edited"


@run_async
async def test_enter_on_the_branch_button_asks_first(tmp_path):
    app = make_app("watch", watch_args(tmp_path, "--frames", "60"))
    async with app.run_test(size=(200, 60)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.summary is not None, what="the run to finish")
        parent = screen.recording_path
        await pilot.press("s")
        await pilot.pause()
        button = screen.query_one("#branch", Button)
        button.focus()
        await pilot.press("enter")  # a stray Enter
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question")
        await pilot.press("enter")  # the second Enter lands on "No"
        await wait_until(pilot, lambda: app.screen is screen, what="the question to close")
        await pilot.pause(0.3)
        assert screen.recording_path == parent and screen.summary is not None  # no branch
        button.focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the question again")
        await pilot.press("y")
        await wait_until(pilot, lambda: screen.recording_path != parent, what="the branch")
    branch = Recording(screen.recording_path)
    assert branch.interventions == {"branch": 1}
    assert branch.path.name == f"breakout-random-s0-{branch.run_id[:8]}"


@run_async
async def test_a_plan_typed_before_the_prompt_is_sent_is_a_human_plan(tmp_path):
    from screens.widgets.plan_view import PlanView

    app = make_app("watch", watch_args(tmp_path, "--frames", "30", "--step"))
    async with app.run_test(size=(200, 60)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.phase == "prompt", what="the hold before the first prompt")
        assert not screen.query_one("#override", Button).disabled
        screen.query_one("#override-input", Input).value = "fire, right"
        await pilot.press("o")
        plan = screen.query_one(PlanView)
        await wait_until(pilot, lambda: plan.overridden and screen.phase == "plan", what="the typed plan")
        screen.set_focus(None)
        await pilot.press("s")
        await wait_until(pilot, lambda: screen.summary is not None, what="the run to finish")
        assert screen.summary["interventions"] == {"human_plan": 1} and screen.summary["overridden_turns"] == 1
        path = screen.recording_path
    first = Recording(path).turn_records[0]
    assert first.human_plan is True and first.raw == "" and first.actions == ["fire", "right"]
    assert first.valid is True and Recording(path).summary_record.invalid_turns == 0


@run_async
async def test_the_prompt_previews_are_the_pngs_the_model_was_sent(tmp_path):
    import io

    import numpy as np
    from PIL import Image

    app = make_app("watch", watch_args(tmp_path, "--frames", "30", "--step"))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.phase == "prompt", what="the hold before the first prompt")
        view = screen.query_one(PromptView)
        frames = screen.driver.engine.writer.frames
        assert view.images
        for part, pixels in view.images:
            with Image.open(io.BytesIO(frames.png(part.frame))) as im:
                assert np.array_equal(pixels, np.asarray(im.convert("RGB")))
