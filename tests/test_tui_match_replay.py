"""Opening a match recording (`workstation open`): both sides' plans and scores at the frame, through Pilot."""

from __future__ import annotations

from argparse import Namespace
from itertools import pairwise
from pathlib import Path

import pytest

from screens.app import make_app
from screens.views.match_replay import MatchReplayScreen, side_scores
from screens.widgets.frame_view import FrameView
from tests.tui_helpers import run_async
from workstation.cli import main
from workstation.store.index import find_recordings
from workstation.store.recording import Recording


@pytest.fixture(scope="module")
def match_rec(tmp_path_factory) -> Recording:
    out = tmp_path_factory.mktemp("match")
    assert main(["match", "--game", "boxing", "--p1", "random", "--p2", "random", "--seed", "3",
                 "--out", str(out)]) == 0
    return Recording(Path(find_recordings(out)[0]))


def _text(screen, widget: str) -> str:
    return str(screen.query_one(widget).render())


def test_side_scores_end_at_the_summary_scores(match_rec):
    events = side_scores(match_rec.match_turns)
    final = [p["score"] for p in match_rec.summary_record.players]
    assert events and list(events[-1][1:]) == final and final[0] == -final[1] != 0
    assert all(a <= b for (a, *_), (b, *_) in pairwise(events))


@run_async
async def test_open_a_match_shows_both_plans_and_scores(match_rec):
    rec = match_rec
    app = make_app("open", Namespace(recording=str(rec.path)))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = app.screen
        assert isinstance(screen, MatchReplayScreen)
        assert "side 1 random  vs  side 2 random" in _text(screen, "#mr-title")
        assert screen.turn == 0 and screen.query_one("#mr-frame", FrameView).frame_index == 0
        first = rec.match_turns[0].players
        assert f"plan: [{', '.join(first[0].planned)}]" in _text(screen, "#mr-side1")
        assert f"plan: [{', '.join(first[1].planned)}]" in _text(screen, "#mr-side2")
        await pilot.press("right", "right")
        t = rec.match_turns[2]
        assert screen.turn == 2 and screen.frame == t.start_frame
        for side in (1, 2):
            p = t.players[side - 1]
            text = _text(screen, f"#mr-side{side}")
            assert "played: " + " ".join(p.actions) in text
            if p.padded:
                assert f"({p.padded} noop padding)" in text
        await pilot.press("end")
        assert screen.frame == len(rec.frames) - 1 and screen.turn == len(rec.match_turns) - 1
        s1, s2 = (p["score"] for p in rec.summary_record.players)
        scores = _text(screen, "#mr-scores")
        assert f"side 1 {s1:g}  ·  side 2 {s2:g}" in scores and rec.summary_record.result in scores
        await pilot.press("home")
        assert "side 1 0  ·  side 2 0" in _text(screen, "#mr-scores")
        await pilot.press("escape")
    assert app.return_code in (0, None)
