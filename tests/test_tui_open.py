"""Opening a recording: scrub by turn and frame, see each turn's prompt, reply and plan, play it back."""

from __future__ import annotations

from argparse import Namespace

from screens.app import make_app
from screens.views.replay_view import ReplayScreen
from screens.widgets.frame_view import FrameView
from screens.widgets.plan_view import PlanView
from screens.widgets.prompt_view import PromptView
from screens.widgets.reply_view import ReplyView
from tests.tui_helpers import record, run_async, wait_until
from workstation.run.drive import drive


@run_async
async def test_open_scrubs_turns_and_frames(tmp_path):
    rec = record(tmp_path)
    app = make_app("open", Namespace(recording=str(rec.path)))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        frame = screen.query_one("#frame", FrameView)
        prompt = screen.query_one(PromptView)
        assert (screen.turn, screen.frame, frame.frame_index) == (0, 0, 0)
        assert prompt.turn == 0 and "=== user ===" in prompt.editor.text
        assert screen.query_one(ReplyView).thought == "random baseline"
        assert screen.query_one(PlanView).plan == rec.turn_records[0].planned
        await pilot.press("right", "right")
        assert screen.turn == 2 and screen.frame == rec.turn_records[2].start_frame == frame.frame_index
        assert prompt.turn == 2 and prompt.images[-1][0].frame == rec.turn_records[2].start_frame
        assert screen.query_one(ReplyView).raw == rec.turn_records[2].raw
        await pilot.press("full_stop", "full_stop")
        assert screen.frame == rec.turn_records[2].start_frame + 2
        assert screen.query_one(PlanView).done == 0  # the first action is still running
        await pilot.press("comma")
        assert screen.frame == rec.turn_records[2].start_frame + 1
        await pilot.press("left_square_bracket")
        assert screen.turn == 1
        await pilot.press("right_square_bracket", "right_square_bracket", "right_square_bracket")
        assert screen.turn == 4
        await pilot.press("end")
        assert screen.frame == len(rec.frames) - 1 and screen.turn == len(rec.turn_records) - 1
        await pilot.press("home")
        assert screen.frame == 0
        await pilot.press("space")  # playback at paper pace: 3 frames per 0.1 s
        await wait_until(pilot, lambda: screen.frame >= 6, what="playback")
        await pilot.press("space")
        stopped = screen.frame
        await pilot.pause(0.3)
        assert screen.frame == stopped and not screen.playing


@run_async
async def test_open_shows_an_edited_prompt_verbatim(tmp_path):
    rec = record(tmp_path, frames=15, edit="\nA note added by hand.")
    app = make_app("open", Namespace(recording=str(rec.path)))
    async with app.run_test(size=(120, 40)):
        prompt = app.screen.query_one(PromptView)
        assert prompt.variant == "edited" and "A note added by hand." in prompt.editor.text


def test_open_rejects_a_directory_that_is_not_a_recording(tmp_path):
    from workstation.store.recording import RecordingError

    try:
        make_app("open", Namespace(recording=str(tmp_path)))
    except RecordingError as e:
        assert "manifest.json" in str(e)
    else:
        raise AssertionError("opening a non-recording should fail with a one-line RecordingError")


def test_open_refuses_a_damaged_turns_file_before_drawing(tmp_path):
    from workstation.store.recording import RecordingError

    rec = record(tmp_path, frames=15)
    with open(rec.path / "turns.jsonl", "a") as f:
        f.write("{not json\n")
    try:
        make_app("open", Namespace(recording=str(rec.path)))
    except RecordingError as e:
        assert "turns.jsonl" in str(e) and "\n" not in str(e)
    else:
        raise AssertionError("a damaged turns.jsonl should be a one-line RecordingError, not a crash on mount")


@run_async
async def test_open_survives_missing_and_damaged_frames(tmp_path):
    rec = record(tmp_path, frames=15)
    (rec.path / "frames.idx").unlink()  # a store that holds no frames at all
    app = make_app("open", Namespace(recording=str(rec.path)))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("full_stop", "end", "space", "right")  # nothing to show: no crash
        await pilot.pause(0.15)
        assert app.is_running and not app.screen.playing
    rec = record(tmp_path / "damaged", frames=15)
    data = rec.path / "frames.bin"
    data.write_bytes(b"\x00" * data.stat().st_size)  # every frame's bytes gone
    app = make_app("open", Namespace(recording=str(rec.path)))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        await pilot.press("space")  # playback stops at the first damaged frame instead of a notice per tick
        await wait_until(pilot, lambda: not screen.playing and app._notifications, what="playback to stop")
        assert app.is_running and isinstance(app.screen, ReplayScreen) and not screen.playing
        notes = [n.message for n in app._notifications]
        assert notes and all("damaged" in n for n in notes) and len(notes) <= 2
        assert screen.query_one(ReplyView).thought == "random baseline"  # the turn is still shown


@run_async
async def test_escape_leaves_a_focused_field_before_the_screen(tmp_path):
    rec = record(tmp_path, frames=15)
    app = make_app("open", Namespace(recording=str(rec.path)))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        screen.set_focus(screen.query_one("#prompt-text"))
        await pilot.press("escape")
        assert app.is_running and app.screen is screen and screen.focused is None
        await pilot.press("escape")  # nothing focused: `workstation open` ends
        await pilot.pause()
        assert not app.is_running


@run_async
async def test_open_shows_the_game_over_and_the_dropped_plan(tmp_path):
    from screens.widgets.timeline import TimelineBar
    from tests.agents_for_tests import ScriptedAgent
    from tests.test_game_over import OVER_FRAME, OVER_TURN, REPLY
    from workstation.game.protocol import Protocol
    from workstation.run.start import RunSpec, start_run

    e = start_run(RunSpec(game="breakout", out=str(tmp_path), protocol=Protocol(frames=700)),
                  agent=ScriptedAgent([REPLY]), rewindable=False)
    drive(e)
    e.close()
    app = make_app("open", Namespace(recording=str(e.writer.path)))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        for _ in range(OVER_TURN):
            await pilot.press("right")
        assert screen.turn == OVER_TURN
        plan = screen.query_one(PlanView)
        assert plan.dropped == 7 and f"GAME OVER on frame {OVER_FRAME}" in plan.note
        assert f"new game from frame {OVER_FRAME + 1}" in plan.note
        timeline = screen.query_one(TimelineBar)
        assert timeline.resets[OVER_FRAME] and "■" in timeline.render().plain


@run_async
async def test_marked_frames_go_to_a_question_set(tmp_path):
    from workstation.studies.qa.qset import read_set

    rec = record(tmp_path, frames=60)
    qa = tmp_path / "qa-hand"
    app = make_app("open", Namespace(recording=str(rec.path)))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        screen.qa_set = qa
        await pilot.press("full_stop", "full_stop", "m")  # frame 2 ...
        assert screen.marked == (2, 2) and "marked 2" in str(screen.query_one("#status").render())
        await pilot.press(*["full_stop"] * 4, "m")  # ... to frame 6
        assert screen.marked == (2, 6)
        await pilot.press("n")
        (q,) = read_set(qa)
        assert q["category"] == "motion-target" and q["status"] == "proposed" and q["truth"] == "human"
        assert [f["index"] for f in q["frames"]] == [2, 3, 4, 5, 6] and q["source"]["frames"] == [2, 3, 4, 5, 6]
        assert q["question"] == "In Breakout, across these frames, in which direction is the ball moving?"
        assert screen.marked is None
        assert any(f"workstation qa curate {qa}" in n.message for n in app._notifications)
        await pilot.press("n")  # nothing marked: the frame on screen, a one-frame question
        q2 = read_set(qa)[-1]
        assert q2["id"] == "breakout-h002" and [f["index"] for f in q2["frames"]] == [6]
        assert q2["category"] == "perception-spatial"


def test_the_default_hand_set_is_under_the_qa_root():
    from workstation.studies.qa.curate import hand_set, spread

    assert str(hand_set("breakout")) == "qa/breakout-hand"
    assert spread(0, 300) == [0, 43, 86, 129, 171, 214, 257, 300] and spread(9, 7) == [7, 8, 9]


@run_async
async def test_open_jumps_to_the_next_life_loss_and_back(tmp_path):
    from tests.tui_helpers import record
    from workstation.store.series import RunSeries
    from workstation.studies.analysis.compare import event_frames

    rec = record(tmp_path, frames=600)
    series = RunSeries.from_turns(rec.turn_records, rec.manifest_record, len(rec.frames))
    losses = event_frames(series, rec.turn_records, "life_lost")
    assert len(losses) >= 2, "random Breakout loses lives within 600 frames"
    app = make_app("open", Namespace(recording=str(rec.path)))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        await pilot.pause()
        await pilot.press("l")
        assert screen.frame == losses[0]
        await pilot.press("l")
        assert screen.frame == losses[1]
        await pilot.press("L")
        assert screen.frame == losses[0]
