"""A person against a model in the TUI (`play --vs`): driven through Pilot, the real emulator and recording."""

from __future__ import annotations

import pytest
from textual.app import App

from screens.views.match import MatchScreen
from tests.test_tui_play import ManualPacer
from tests.tui_helpers import run_async, wait_until
from workstation.cli import main
from workstation.game.protocol import Protocol
from workstation.run.match_start import MatchSpec
from workstation.run.match_verify import verify_match
from workstation.store.recording import Recording


class MatchApp(App):
    def __init__(self, screen: MatchScreen) -> None:
        super().__init__()
        self.match = screen
        self.notes: list[str] = []
        self.left_with = "not yet"

    def on_mount(self) -> None:
        self.push_screen(self.match, callback=self._left)

    def _left(self, result) -> None:
        self.left_with = result

    def notify(self, message, **kwargs) -> None:
        self.notes.append(str(message))
        super().notify(message, **kwargs)


def _text(screen, widget: str) -> str:
    return str(screen.query_one(widget).render())


@run_async
async def test_a_person_plays_side_1_against_a_model_paused(tmp_path):
    spec = MatchSpec("boxing", "human", "random", 3, Protocol(frames=30), str(tmp_path))
    screen = MatchScreen(spec, person=1, mode="paused", pace="instant")
    app = MatchApp(screen)
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_until(pilot, lambda: screen.awaiting_plan, what="the first plan prompt")
        assert "you are side 1 against random" in _text(screen, "#match-title")
        for key in ("right", "right", "space", "plus", "down"):
            await pilot.press(key)
        assert "1.right 2.right 3.downfire" in _text(screen, "#match-queue")
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.awaiting_plan and screen.plans[0], what="turn 1")
        plans = _text(screen, "#match-plans")
        assert "side 1 plan: [right, right, downfire]" in plans and "side 2 plan: [" in plans
        model_plan = list(screen.plans[1])
        assert model_plan and "side 2 random" in _text(screen, "#match-scores")
        await pilot.press("n")
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.awaiting_plan and screen.plans[0] == ["noop"], what="turn 2")
        await pilot.press("escape")  # stop: the recording stays, marked incomplete
        await wait_until(pilot, lambda: screen.summary is not None, what="the match to stop")
        assert "incomplete" in _text(screen, "#match-banner")
        path = screen.recording
        await pilot.press("escape")
        assert app.left_with == {"summary": screen.summary, "path": path}
    rec = Recording(path)
    first = rec.match_turns[0].players
    n = max(3, len(model_plan))
    assert first[0].actions == ["right", "right", "downfire"] + ["noop"] * (n - 3)
    assert first[1].planned == model_plan and rec.match_turns[0].lockstep_frames[-1] == 3 * n
    assert [p["agent"]["spec"] for p in rec.manifest_record.players] == ["human", "random"]
    assert rec.summary_record.complete is False and verify_match(rec).ok


@run_async
async def test_real_time_the_person_steers_while_the_model_plan_plays(tmp_path):
    pacer = ManualPacer()
    spec = MatchSpec("pong", "random", "human", 1, Protocol(frames=18), str(tmp_path))
    screen = MatchScreen(spec, person=2, mode="realtime", pace="paper", pacer=pacer)
    app = MatchApp(screen)
    async with app.run_test(size=(200, 60)) as pilot:
        assert await pacer._worker_idle(screen)
        await pilot.press("up")  # held for the next slots: pong's up is "right"
        await pacer.advance_to(0.25, screen)
        await pacer.advance_to(5.0, screen)
        await wait_until(pilot, lambda: screen.summary is not None, what="the match to finish")
        path = screen.recording
    rec = Recording(path)
    played = [a for t in rec.match_turns for a in t.players[1].actions]
    model = [len(t.players[0].planned) for t in rec.match_turns]
    assert played[:2] == ["right", "right"] and played[-1] == "noop"  # held, then let go
    assert [len(t.players[1].actions) for t in rec.match_turns] == model  # one live action per model action
    assert rec.complete and rec.summary_record.frames == 18 and verify_match(rec).ok


@pytest.mark.parametrize("argv,needle", [
    (["--game", "breakout", "--vs", "random"], "the two-player games are"),
    (["--game", "boxing", "--vs", "human", "--window"], "--window with --vs: the match plays in the terminal"),
    (["--game", "boxing", "--vs", "random", "--side", "3"], "--side 3: there are sides 1 and 2"),
    (["--game", "boxing", "--vs", "bogus"], "--vs: unknown agent"),
], ids=["one-player-game", "two-people-in-a-window", "unknown-side", "unknown-agent"])
def test_bad_play_vs_is_one_line_exit_2(argv, needle, tmp_path, capsys):
    try:
        code = main(["play", *argv, "--out", str(tmp_path / "out")])
    except SystemExit as e:
        code = e.code
    err = capsys.readouterr().err
    assert code == 2 and needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err


@run_async
async def test_play_vs_command_line_opens_the_match_app(tmp_path):
    from screens.app import match_app
    from workstation.cli import build_parser
    from workstation.run.match_vs import play_vs

    args = build_parser().parse_args(["play", "--game", "pong", "--vs", "random", "--side", "2", "--mode", "paused",
                                      "--frames", "9", "--out", str(tmp_path)])
    launch = play_vs(args)
    assert launch["person"] == 2 and launch["spec"].specs == ("random", "human") and launch["mode"] == "paused"
    assert not any(tmp_path.iterdir())  # checked, nothing written yet
    app = match_app(launch["spec"], launch["person"], launch["mode"], "instant")
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_until(pilot, lambda: getattr(app.screen, "awaiting_plan", False), what="the plan prompt")
        screen = app.screen
        while screen.summary is None:
            await pilot.press("left")
            await pilot.press("enter")
            await wait_until(pilot, lambda: screen.awaiting_plan or screen.summary is not None, what="a turn")
        await wait_until(pilot, lambda: screen.summary is not None, what="the end")
        assert "result: complete" in str(screen.query_one("#match-banner").render())
        await pilot.press("escape")
    rec = Recording(screen.recording)
    assert rec.complete and rec.match_turns[0].players[1].planned == ["left"]


@run_async
async def test_a_stopped_match_is_no_result_not_a_draw(tmp_path):
    from screens.app import match_app
    from workstation.cli import build_parser
    from workstation.run.match_vs import play_vs

    args = build_parser().parse_args(["play", "--game", "boxing", "--vs", "random", "--mode", "paused",
                                      "--frames", "60", "--out", str(tmp_path)])
    launch = play_vs(args)
    app = match_app(launch["spec"], launch["person"], launch["mode"], "instant")
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_until(pilot, lambda: getattr(app.screen, "awaiting_plan", False), what="the plan prompt")
        screen = app.screen
        await pilot.press("escape")  # stop before the end
        await wait_until(pilot, lambda: screen.summary is not None, what="the match to stop")
        banner = str(screen.query_one("#match-banner").render())
        assert "no result, stopped at 0 to 0" in banner and "draw" not in banner, banner
