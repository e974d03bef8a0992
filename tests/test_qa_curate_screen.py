"""The QA curator through Pilot: accept, reject, edit, outlines, and every change on disk at once."""

from __future__ import annotations

import json

import pytest

from screens.app import make_app
from screens.widgets.frame_view import FrameView
from tests.tui_helpers import run_async
from workstation.cli import main
from workstation.game.protocol import Protocol
from workstation.run.drive import drive
from workstation.run.launch import QaCurateLaunch
from workstation.run.start import RunSpec, start_run
from workstation.studies.qa.qset import QUESTIONS, read_set


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("cur")
    engine = start_run(RunSpec(game="breakout", agent="random", seed=4, protocol=Protocol(frames=300),
                               out=str(root / "recs")), rewindable=False)
    try:
        drive(engine)
    finally:
        engine.close()
    assert main(["qa", "gen", "--recordings", str(root / "recs"), "--out", str(root / "s"), "--per-game", "6"]) == 0
    return root / "s"


def _copy(made, tmp_path):
    import shutil

    shutil.copytree(made, tmp_path / "s")
    return tmp_path / "s"


def _on_disk(root):
    return {q["id"]: q for q in read_set(root)}


def _outlined(cells) -> bool:
    magenta = 0xFF00FF
    return bool(((cells >> 24) == magenta).any() or ((cells & 0xFFFFFF) == magenta).any())


@run_async
async def test_outlines_survive_a_small_terminal(made, tmp_path):
    root = _copy(made, tmp_path)
    app = make_app(QaCurateLaunch(root))
    async with app.run_test(size=(70, 24)) as pilot:  # the frame is scaled well below 160 columns
        await pilot.pause()
        view = app.screen.query_one("#qa-frame", FrameView)
        assert view._renderer._cells.shape[1] < 160 and _outlined(view._renderer._cells)


@run_async
async def test_accept_reject_and_outlines(made, tmp_path):
    root = _copy(made, tmp_path)
    ids = [q["id"] for q in read_set(root)]
    app = make_app(QaCurateLaunch(root))
    async with app.run_test(size=(220, 70)) as pilot:
        cur = app.screen  # the curator: a screen of the one app
        await pilot.pause()
        view = cur.query_one("#qa-frame", FrameView)
        with_boxes = view._renderer._cells.copy()  # outlines are drawn on the frame as scaled to the cells
        assert _outlined(with_boxes)
        await pilot.press("o")
        assert (view._renderer._cells != with_boxes).any() and not _outlined(view._renderer._cells)
        await pilot.press("o")
        assert (view._renderer._cells == with_boxes).all()
        await pilot.press("a")
        assert _on_disk(root)[ids[0]]["status"] == "accepted"  # saved before the app exits
        assert cur.index == 1
        await pilot.press("r")
        assert _on_disk(root)[ids[1]]["status"] == "rejected"
        await pilot.press("p", "p")
        assert cur.index == 0
    lines = (root / QUESTIONS).read_text().splitlines()
    assert len(lines) == len(ids) + 2  # appended, never rewritten


@run_async
async def test_edit_fields_saved_on_enter(made, tmp_path):
    root = _copy(made, tmp_path)
    first = read_set(root)[0]
    other = next(c for c in first["choices"] if c != first["answer"])
    app = make_app(QaCurateLaunch(root))
    async with app.run_test(size=(220, 70)) as pilot:
        cur = app.screen  # the curator: a screen of the one app
        await pilot.pause()
        cur.query_one("#qa-question").focus()
        await pilot.press("end", *" Look closely.", "enter")
        assert _on_disk(root)[first["id"]]["question"] == first["question"] + " Look closely."
        cur.query_one("#qa-answer").value = "sideways"
        cur.query_one("#qa-answer").focus()
        await pilot.press("enter")
        assert "not saved" in str(cur.query_one("#qa-status").render())
        cur.query_one("#qa-answer").value = other
        await pilot.press("enter")
        q = _on_disk(root)[first["id"]]
        assert q["answer"] == other and q["status"] == "edited" and q["truth"]["answer_from_ram"] == first["answer"]
        await pilot.press("escape", "right")  # out of the field, keys drive the screen again
        assert cur.frame_pos == (1 if len(first["frames"]) > 1 else 0)


def test_the_last_line_wins_after_a_crash(made, tmp_path):
    """What a crash leaves: every change made so far is a complete line; a cut-off last line is
    the only loss (the reader refuses it, and a curator removes it)."""
    root = _copy(made, tmp_path)
    q = read_set(root)[0]
    with open(root / QUESTIONS, "a") as f:
        f.write(json.dumps(dict(q, status="accepted")) + "\n")
    assert _on_disk(root)[q["id"]]["status"] == "accepted"
