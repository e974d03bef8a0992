"""Headless curation: accept, reject, edit and hand-written questions, all appended."""

from __future__ import annotations

import pytest

from workstation.base.errors import UserError
from workstation.cli import main
from workstation.game.protocol import Protocol
from workstation.run.drive import drive
from workstation.run.start import RunSpec, start_run
from workstation.studies.qa.curate import add_by_hand, contradiction, edit, set_status
from workstation.studies.qa.qset import QUESTIONS, read_set


@pytest.fixture
def made(tmp_path):
    engine = start_run(RunSpec(game="breakout", agent="random", seed=3, protocol=Protocol(frames=300),
                               out=str(tmp_path / "recs")), rewindable=False)
    try:
        drive(engine)
    finally:
        engine.close()
    assert main(["qa", "gen", "--recordings", str(tmp_path / "recs"), "--out", str(tmp_path / "s"), "--per-game", "4"]) == 0
    return tmp_path / "s", engine.writer.path


def test_accept_reject_edit_append_only(made):
    root, _ = made
    before = (root / QUESTIONS).read_text()
    a, b, c = (q["id"] for q in read_set(root)[:3])
    set_status(root, a, "accepted")
    set_status(root, b, "rejected")
    q = read_set(root)[2]
    other = next(ch for ch in q["choices"] if ch != q["answer"])
    edit(root, c, question=q["question"] + " (edited)", answer=other)
    after = (root / QUESTIONS).read_text()
    assert after.startswith(before) and len(after.splitlines()) == len(before.splitlines()) + 3
    qs = {q["id"]: q for q in read_set(root)}
    assert qs[a]["status"] == "accepted" and qs[b]["status"] == "rejected"
    assert qs[c]["status"] == "edited" and qs[c]["answer"] == other
    assert qs[c]["truth"]["answer_from_ram"] == q["answer"]
    assert qs[c]["truth"]["overridden"] is True and "contradicts the RAM truth" in contradiction(qs[c])
    edit(root, c, answer=q["answer"])  # back to what the RAM says: no longer overridden
    back = {x["id"]: x for x in read_set(root)}[c]
    assert "overridden" not in back["truth"] and contradiction(back) is None
    with pytest.raises(UserError):
        edit(root, c, answer="sideways")
    with pytest.raises(UserError):
        edit(root, c, game="pong")
    with pytest.raises(UserError):
        set_status(root, "nope", "accepted")


def test_a_question_by_hand(made):
    root, rec = made
    q = add_by_hand(root, rec, [30, 33], "motion-target", "Is the ball moving?", ["yes", "no"], "yes")
    assert q["question"] == "Breakout. Is the ball moving?" and q["truth"] == "human"
    assert [f["t"] for f in q["frames"]] == ["1.00s", "1.10s"]
    assert read_set(root)[-1]["id"] == q["id"] == "breakout-h001"
    with pytest.raises(UserError):
        add_by_hand(root, rec, [5000], "motion-target", "?", ["yes", "no"], "yes")
