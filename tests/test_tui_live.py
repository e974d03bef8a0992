"""The live view and step mode, driven by Pilot against the real emulator and real recordings."""

from __future__ import annotations

import json
from argparse import Namespace
from pathlib import Path

import pytest
from textual.widgets import Input, Select

from screens.app import make_app
from screens.views.live import LiveScreen
from screens.widgets.frame_view import FrameView
from screens.widgets.plan_view import PlanView
from screens.widgets.prompt_view import PromptView
from screens.widgets.reply_view import ReplyView
from tests.tui_helpers import run_async, wait_until, watch_args
from workstation.store.recording import Recording


def turns_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in (path / "turns.jsonl").read_text().splitlines() if line.strip()]


@run_async
async def test_watch_random_shows_frame_prompt_thought_and_records(tmp_path):
    app = make_app("watch", watch_args(tmp_path, "--frames", "60"))
    async with app.run_test(size=(200, 60)) as pilot:
        screen = app.screen
        assert isinstance(screen, LiveScreen)
        await wait_until(pilot, lambda: screen.summary is not None, what="the run to finish")
        await pilot.pause()
        assert screen.query_one("#frame", FrameView).frame_index == 60  # the last budget frame is on show
        prompt = screen.query_one(PromptView)
        assert "=== user ===" in prompt.editor.text and "[image: frame" in prompt.editor.text
        assert prompt.images and prompt.images[-1][0].label == "current" and prompt.images[-1][1] is not None
        assert screen.query_one(ReplyView).thought == "random baseline"
        assert screen.stats.frame == 60
        path = screen.recording_path
    rec = Recording(path)
    assert rec.complete and rec.summary_record.frames == 60
    assert len(rec.frames) == 61
    assert len(rec.turn_records) == rec.summary_record.turns == len(screen.turn_records)


@run_async
async def test_step_mode_edits_the_prompt_and_overrides_the_plan(tmp_path):
    app = make_app("watch", watch_args(tmp_path, "--frames", "30", "--step"))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.phase == "prompt", what="the hold before the first prompt")
        view = screen.query_one(PromptView)
        editor = view.editor
        assert not editor.read_only  # editable while holding before the prompt is sent
        await pilot.press("c")  # the current-frame-only probe: one image
        await wait_until(pilot, lambda: view.variant == "current_only", what="the current-frame-only prompt")
        assert [p.label for p, _ in view.images] == ["current"]
        editor.text = editor.text + "\nTip from the tester: serve first."
        await pilot.press("g")  # applies the edit, then sends
        await wait_until(pilot, lambda: screen.phase == "plan", what="the reply to be parsed")
        assert view.variant == "edited"
        holds = screen.holds
        await pilot.press("r")  # re-send: the first reply is discarded (and kept in the record)
        await wait_until(pilot, lambda: screen.holds > holds and screen.phase == "plan", what="the second reply")
        screen.query_one("#override-input", Input).value = "fire, right"
        await pilot.press("o")
        plan = screen.query_one(PlanView)
        await wait_until(pilot, lambda: plan.overridden, what="the override")
        assert plan.plan == ["fire", "right"]
        await pilot.press("o")  # an empty override box only focuses it
        screen.query_one("#override-input", Input).value = "jump"
        await pilot.press("enter")  # a bad name is refused with a notice, not a traceback
        await wait_until(pilot, lambda: screen.notice is not None, what="the refusal notice")
        assert "jump" in screen.notice and screen.error is None
        screen.set_focus(None)
        await pilot.press("a")  # one action (3 frames)
        await wait_until(pilot, lambda: screen.stats.frame == 3, what="one action")
        await pilot.press("full_stop")  # one frame
        await wait_until(pilot, lambda: screen.stats.frame == 4, what="one frame")
        await pilot.press("t")  # the rest of the turn; then the next prompt holds
        await wait_until(pilot, lambda: len(screen.turn_records) == 1 and screen.phase == "prompt",
                         what="the end of the turn")
        await pilot.press("s")  # leave step mode: run to the end
        await wait_until(pilot, lambda: screen.summary is not None, what="the run to finish")
        path = screen.recording_path
    first = turns_of(path)[0]
    assert first["prompt"]["variant"] == "edited"
    sent = "".join(p.get("text", "") for m in first["prompt"]["messages"] for p in m["parts"])
    assert "Tip from the tester: serve first." in sent
    assert first["overridden"] is True and first["actions"] == ["fire", "right"]
    assert len(first["discarded_replies"]) == 1
    assert Recording(path).complete


@run_async
async def test_rewind_and_branch_continues_in_a_new_recording(tmp_path):
    app = make_app("watch", watch_args(tmp_path, "--frames", "60"))
    async with app.run_test(size=(200, 60)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.summary is not None, what="the parent run to finish")
        parent = screen.recording_path
        assert screen.query_one("#branch-turn", Select).display  # a run that is over shows the rewind controls
        screen.query_one("#branch-turn", Select).value = 4
        await pilot.press("b")  # the branch holds in step mode
        await wait_until(pilot, lambda: screen.recording_path != parent, what="the branch")
        branch = screen.recording_path
        assert screen.error is None and screen.summary is None  # the view goes on in the branch
        assert str(branch) in str(screen.query_one("#status").render())
        await wait_until(pilot, lambda: screen.phase == "prompt", what="the hold at the branch turn")
        await pilot.press("s")  # run the branch out
        await wait_until(pilot, lambda: screen.summary is not None, what="the branch to finish")
    p, b = Recording(parent), Recording(branch)
    assert b.manifest_record.parent["turn"] == 4 and b.complete
    at = b.manifest_record.parent["frame"]
    assert at == p.turn_records[4].start_frame
    for i in range(at + 1):
        assert (b.frames.indices(i) == p.frames.indices(i)).all(), f"frame {i} differs from the parent"
    assert b.raw_turns()[:4] == p.raw_turns()[:4]  # copied as written


@run_async
async def test_model_run_streams_then_a_fatal_error_is_a_notice(tmp_path, monkeypatch):
    from tests.fake_provider import DEFAULT_TEXT, FakeProvider, Step

    fake = FakeProvider()  # a real OpenAI SDK over real HTTP to 127.0.0.1
    secret = "sk-test-never-shown-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    body = {"error": {"message": f"Incorrect API key provided: {secret}", "type": "invalid_request_error",
                      "code": "invalid_api_key"}}
    fake.push(Step(), Step("status", 401, {}, body))
    try:
        args = watch_args(tmp_path, "--frames", "60", "--agent", "openai:gpt-5.1", "--base-url", fake.url("openai"))
        app = make_app("watch", args)
        async with app.run_test(size=(120, 40)) as pilot:
            screen = app.screen
            await wait_until(pilot, lambda: screen.summary is not None, what="the run to stop")
            assert screen.streamed[0] == DEFAULT_TEXT  # the reply arrived in pieces (TextDelta)
            assert screen.thoughts[0] == DEFAULT_TEXT.splitlines()[0].removeprefix("thought: ")
            assert screen.turn_records[0]["actions"] == ["left", "left", "fire"]
            assert screen.stats.input_tokens > 0 and screen.stats.output_tokens > 0
            assert screen.error and "401" in screen.error and secret not in screen.error
            status = str(screen.query_one("#status").render())
            assert "STOPPED" in status and "401" in status
            await wait_until(pilot, lambda: any("401" in n.message for n in app._notifications), what="the notice")
            assert not any(secret in n.message for n in app._notifications)
            path = screen.recording_path
    finally:
        fake.close()
    rec = Recording(path)
    assert not rec.complete and "401" in rec.summary_record.stopped and len(rec.turn_records) == 1


class _BrokenAgent:
    """An agent with a bug: the worker fails, and the screen must say so without a traceback."""

    spec = "broken"

    def act(self, prompt, ctx, on_text=None):
        raise ZeroDivisionError("a bug in the agent")

    def close(self) -> None:
        pass

    def describe(self) -> dict:
        return {"kind": "broken", "spec": self.spec}


@run_async
async def test_an_engine_crash_is_a_notice_and_the_recording_is_kept(tmp_path):
    from screens.app import WorkstationApp
    from workstation.game.protocol import Protocol
    from workstation.run.start import RunSpec, start_run

    engine = start_run(RunSpec("breakout", protocol=Protocol(frames=30), out=str(tmp_path)), agent=_BrokenAgent())
    app = WorkstationApp(lambda: LiveScreen(engine, speed="instant"))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.error is not None and screen.summary is not None,
                         what="the failure notice and the run's end")
        await pilot.pause()
        assert "ZeroDivisionError: a bug in the agent" in screen.error
        assert "a bug in the agent" in str(screen.query_one("#status").render())
        await wait_until(pilot, lambda: any("a bug" in n.message for n in app._notifications), what="the toast")
        assert sum("a bug" in n.message for n in app._notifications) == 1  # said once, not twice
        assert app.is_running  # the app is still up
    rec = Recording(engine.writer.path)
    assert rec.summary_record is not None and not rec.complete
    assert rec.summary_record.stopped == "ZeroDivisionError: a bug in the agent"


def test_paper_pace_holds_each_action_a_tenth_of_a_second(tmp_path):
    """The driver alone (no app), on an injected clock: actions at paper pace are held 0.1 s.

    The clock only moves when the driver waits for a command, so the figure does not
    depend on how fast the machine steps the emulator.
    """
    import queue

    from screens.drivers.engine_driver import EngineDriver
    from workstation.game.protocol import Protocol
    from workstation.run.start import RunSpec, start_run

    now = [0.0]

    def next_command(timeout: float):
        now[0] += timeout
        raise queue.Empty

    engine = start_run(RunSpec("breakout", protocol=Protocol(frames=15), out=str(tmp_path)))
    posted: list = []
    frames: list[int] = []
    driver = EngineDriver(engine, posted.append, lambda rgb, i: frames.append(i), speed="paper",
                          clock=lambda: now[0], next_command=next_command)
    driver.run(lambda: driver.finished)
    # 5 actions of 3 frames, each held 0.1 s; the test stops the driver as soon as the run
    # has finished, which cuts the hold of the last one
    assert now[0] == pytest.approx(4 * 0.1)
    assert frames == list(range(16))  # every budget frame went to the frame view, in order
    assert Recording(driver.path).complete


@run_async
async def test_step_mode_footer_fits_120_columns(tmp_path):
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    app = make_app("watch", watch_args(tmp_path, "--frames", "15", "--step"))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.phase == "prompt", what="the step-mode hold")
        await pilot.pause()
        keys = list(screen.query_one(Footer).query(FooterKey))
        palette = [k for k in keys if k.has_class("-command-palette")]
        shown = {k.action: k.region for k in keys if k not in palette}
        # q still quits (F1 and the palette list it); the footer's room goes to x Stop
        assert {"back", "stop_run", "help", "branch", "send", "resend", "one_action", "finish_turn"} <= set(shown)
        right_edge = palette[0].region.x if palette else 120
        cut = [action for action, region in shown.items() if region.right > right_edge or not region.width]
        assert not cut, f"footer keys cut off at 120 columns: {cut}"


def _key_text(key: str) -> str:
    """How HELP and the palette write a binding's key."""
    return {"space": "space", "full_stop": ".", "comma": ",", "escape": "esc", "left_square_bracket": "[",
            "right_square_bracket": "]", "left": "←", "right": "→", "question_mark": "?"}.get(key, key)


@run_async
async def test_help_and_palette_name_every_key(tmp_path):
    from screens.app import HELP
    from screens.views.home import HomeScreen
    from screens.views.replay_view import ReplayScreen

    for screen_class in (HomeScreen, LiveScreen, ReplayScreen):
        for binding in screen_class.BINDINGS:
            for key in binding.key.split(","):
                assert f"`{_key_text(key)}`" in HELP, f"HELP misses {key} ({screen_class.__name__})"
    play = HELP.split("## Play yourself", 1)[-1].split("##", 1)[0]
    for key in ("space", "+", "n", "backspace", "enter", "esc"):
        assert f"`{key}`" in play, f"the play section of HELP misses {key}"

    app = make_app("watch", watch_args(tmp_path, "--frames", "15", "--step"))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await wait_until(pilot, lambda: screen.phase == "prompt", what="the step-mode hold")
        helps = " ".join(h for _, h, _ in screen.palette_commands())
        for binding in LiveScreen.BINDINGS:
            if binding.action != "app.quit":
                key = "escape" if binding.key == "escape" else _key_text(binding.key)
                assert f"({key})" in helps, f"the live palette misses {binding.key} ({binding.action})"
        path = screen.recording_path
        await pilot.press("s")
        await wait_until(pilot, lambda: screen.summary is not None, what="the run to finish")
    app = make_app("open", Namespace(recording=str(path)))
    async with app.run_test(size=(120, 40)):
        helps = " ".join(h for _, h, _ in app.screen.palette_commands())
        for binding in ReplayScreen.BINDINGS:
            if binding.action != "app.quit":
                first = binding.key.split(",")[0]
                key = {"escape": "escape", "left": "left", "right": "right"}.get(first) or _key_text(first)
                assert f"({key}" in helps, f"the open palette misses {binding.key} ({binding.action})"


def test_palette_entries_name_live_actions_and_step_mode_adds_its_own():
    from screens.views.live import PALETTE, STEP_ACTIONS

    assert all(callable(getattr(LiveScreen, f"action_{action}", None)) for _, _, action in PALETTE)
    assert {action for _, _, action in PALETTE if action in STEP_ACTIONS} == STEP_ACTIONS
