"""The IDC screen in the real Textual app: the curve, a round's skill diff, diagnosis and notebook, an episode opened."""

from __future__ import annotations

import os

from textual.widgets import DataTable, Static

from screens.app import HomeLaunch, WorkstationApp
from screens.views.idc import IdcScreen, bars, skill_diff
from screens.views.replay_view import ReplayScreen
from tests.tui_helpers import run_async, wait_until
from workstation.run.drive import drive
from workstation.studies.idc import curve as C


def make_dir(tmp_path):
    from workstation.game.protocol import Protocol
    from workstation.run.options import RunSpec
    from workstation.run.start import start_run

    out = tmp_path / "idc"
    engine = start_run(RunSpec("freeway", protocol=Protocol(frames=30), out=str(out / "round_2" / "runs")),
                       rewindable=False)
    drive(engine)
    engine.close()
    rec = os.path.relpath(engine.writer.path, out)
    curve = {"game": "freeway", "player": "compat:p", "reflector": "compat:r", "random_mean": 0.0, "rounds_planned": 2,
             "best_round": 1, "transfer": [], "rounds": [
                 {"round": 0, "skill": None, "score_mean": 1.0, "score_se": 0.1, "normalised": 1.0, "rolled_back": False,
                  "episodes": [], "diagnosis": "slow at lane 3", "notebook": "lane 3 is fast",
                  "reflection": {"status": "submitted", "why": "the reflector submitted a skill", "tool_calls": 4}},
                 {"round": 1, "skill": "hold up\nwait for gaps", "skill_round": 1, "score_mean": 3.0, "score_se": 0.2,
                  "normalised": 3.0, "rolled_back": False, "episodes": [], "diagnosis": "hit by cars",
                  "reflection": {"status": "no_skill", "why": "no skill within the budget", "tool_calls": 30}},
                 {"round": 2, "skill": "hold up\nwatch lane 5", "skill_round": 2, "score_mean": 1.0, "score_se": 0.0,
                  "normalised": 1.0, "rolled_back": True, "episodes": [
                      {"run_id": "abcdef0123456789", "seed": 3, "score": 1.0, "recording": rec}]}]}
    C.save(out, curve)
    return out


@run_async
async def test_the_screen_shows_the_curve_a_rounds_diff_and_opens_an_episode(tmp_path):
    out = make_dir(tmp_path)
    screen = IdcScreen.of_dir(out)
    app = WorkstationApp(lambda: screen, HomeLaunch(out=str(out)))
    async with app.run_test(size=(150, 44)) as pilot:
        await wait_until(pilot, lambda: screen.is_attached and screen.query_one("#rounds", DataTable).row_count == 3)
        head = str(screen.query_one("#idc-head", Static).render())
        assert "best round 1" in head and "gap 2.00" in head and "3 of 3 rounds" in head
        rounds = screen.query_one("#rounds", DataTable)
        assert "best" in str(rounds.get_row_at(1)[-1]) and "rolled back" in str(rounds.get_row_at(2)[-1])
        # round 1's reflection gave no skill: the note is on round 2's row, the round that kept the skill
        assert "kept skill (no_skill after round 1)" in str(rounds.get_row_at(2)[-1])
        assert "kept skill" not in str(rounds.get_row_at(1)[-1])
        detail = lambda: str(screen.query_one("#detail", Static).render())
        assert "lane 3 is fast" in detail() and "slow at lane 3" in detail()
        await pilot.press("down", "down")
        await wait_until(pilot, lambda: "Round 2" in detail())
        assert "-wait for gaps" in detail() and "+watch lane 5" in detail()
        await pilot.press("enter")  # on a round: to its episodes
        await wait_until(pilot, lambda: app.focused is screen.query_one("#episodes", DataTable))
        await pilot.press("enter")  # on an episode: its recording
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen), what="the replay screen")


def test_bars_and_diffs():
    assert bars([{"normalised": 2.0}, {"normalised": -1.0}, {"normalised": None}]) == ["█" * 24, "-" + "█" * 12, ""]
    assert skill_diff("a", "a") == "" and "+b" in skill_diff(None, "b")
