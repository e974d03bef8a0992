"""Two people on one keyboard (`play --vs human`): a paused match through Pilot, the real emulator and recording."""

from __future__ import annotations

import pytest

from screens.views.hotseat import HotseatScreen, side_key
from tests.test_tui_match import MatchApp
from tests.tui_helpers import run_async, wait_until
from workstation.cli import build_parser, main
from workstation.game.protocol import Protocol
from workstation.run.match_start import MatchSpec
from workstation.run.match_verify import verify_match
from workstation.run.match_vs import play_vs
from workstation.store.recording import Recording


def _text(screen, widget: str) -> str:
    return str(screen.query_one(widget).render())


@pytest.mark.parametrize("key,want", [
    ("w", (1, "move", "up")), ("space", (1, "move", "fire")), ("c", (1, "commit", "")),
    ("up", (2, "move", "up")), ("slash", (2, "move", "fire")), ("enter", (2, "commit", "")),
    ("backspace", (2, "remove", "")), ("q", None),
])
def test_each_side_has_its_own_half_of_the_keyboard(key, want):
    assert side_key(key) == want


@run_async
async def test_two_people_queue_and_commit_their_own_plans(tmp_path):
    spec = MatchSpec("boxing", "human", "human", 3, Protocol(frames=30), str(tmp_path))
    screen = HotseatScreen(spec, pace="instant")
    app = MatchApp(screen)
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_until(pilot, lambda: screen.waiting[1] and screen.waiting[2], what="both plan prompts")
        assert "two people on one keyboard" in _text(screen, "#match-title")
        for key in ("d", "d", "space", "e", "s"):  # side 1: right, right, downfire
            await pilot.press(key)
        for key in ("left", "slash"):  # side 2: left, fire
            await pilot.press(key)
        queue = _text(screen, "#match-queue")
        assert "side 1 plan 3/" in queue and "1.right 2.right 3.downfire" in queue and "1.left 2.fire" in queue
        await pilot.press("enter")  # side 2 commits first: the game still waits for side 1
        assert not screen.waiting[2] and screen.waiting[1] and "waiting for side 1" in _text(screen, "#match-banner")
        await pilot.press("c")
        await wait_until(pilot, lambda: screen.waiting[1] and screen.waiting[2] and screen.plans[0],
                         what="turn 1")
        assert screen.plans == [["right", "right", "downfire"], ["left", "fire"]]
        await pilot.press("c")  # an empty plan is not committed
        assert screen.waiting[1] and any("queue at least one action" in n for n in app.notes)
        await pilot.press("x", "c", "full_stop", "full_stop", "enter")
        await wait_until(pilot, lambda: screen.waiting[1] and screen.plans[1] == ["noop", "noop"], what="turn 2")
        await pilot.press("escape")
        await wait_until(pilot, lambda: screen.summary is not None, what="the match to stop")
        path = screen.recording
    rec = Recording(path)
    first, second = rec.match_turns[0].players, rec.match_turns[1].players
    assert first[0].actions == ["right", "right", "downfire"] and first[1].actions == ["left", "fire", "noop"]
    assert first[1].padded == 1 and second[0].actions == ["noop", "noop"]
    assert [p["agent"]["spec"] for p in rec.manifest_record.players] == ["human", "human"]
    assert verify_match(rec).ok


def test_play_vs_human_is_a_two_person_match_and_match_still_refuses_it(tmp_path, capsys):
    args = build_parser().parse_args(["play", "--game", "pong", "--vs", "human", "--mode", "realtime", "--frames", "9",
                                      "--out", str(tmp_path)])
    launch = play_vs(args)
    assert launch["person"] == 0 and launch["spec"].specs == ("human", "human") and launch["mode"] == "paused"
    assert main(["match", "--game", "boxing", "--p1", "human", "--p2", "human", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--vs human" in err and len(err.strip().splitlines()) == 1
