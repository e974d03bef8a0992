"""Human baseline sessions: the flow in the real app (instructions, practice, countdown, run, result, next),
resuming after an interruption, session.json and results.csv, report and compare on them, and bad input."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time

import pytest
from textual.app import App

from screens.views.play import PlayScreen
from screens.views.session import SessionScreen
from tests.tui_helpers import run_async, wait_until
from workstation.game.protocol import Protocol
from workstation.run.drive import drive
from workstation.store.recording import Recording
from workstation.studies.analysis.compare import load_runs, summary_row
from workstation.studies.session import Session, Settings, make_settings, plan_steps


class HandClock:
    """The session's clock: moved by the test; a wait returns once it gets there (or on cancel)."""

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t

    def wait_until(self, t: float, cancelled) -> None:
        while self.t < t and not cancelled():
            time.sleep(0.005)


class SessionApp(App):
    def __init__(self, screen: SessionScreen) -> None:
        super().__init__()
        self.session_screen = screen
        self.left_with = "not yet"

    def on_mount(self) -> None:
        self.push_screen(self.session_screen, callback=self._left)

    def _left(self, result) -> None:
        self.left_with = result


def settings(**kw) -> Settings:
    base = dict(participant="P 01", games=("breakout", "freeway"), seeds=(0,), practice=1, mode="paused",
                pace="instant", protocol=Protocol(frames=30))
    base.update(kw)
    return Settings(**base)


def body(screen: SessionScreen) -> str:
    return str(screen.query_one("#sess-text").render())


def record(session: Session) -> dict:
    return json.loads((session.path / "session.json").read_text(encoding="utf-8"))


async def count_down(pilot, screen: SessionScreen, clock: HandClock) -> None:
    """Through the countdown on the hand clock: 2, then 1, then the run."""
    await wait_until(pilot, lambda: screen.stage == "countdown", what="the countdown")
    assert str(screen.query_one("#sess-count").value) == "2"
    clock.t += 1
    await wait_until(pilot, lambda: str(screen.query_one("#sess-count").value) == "1", what="1 second left")
    assert screen.stage == "countdown" and not isinstance(pilot.app.screen, PlayScreen)
    clock.t += 1
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, PlayScreen), what="the run to start")


async def play_through(pilot) -> PlayScreen:
    """Paused play: one plan of ten noops is the whole 30-frame run; then leave the play screen."""
    play = pilot.app.screen
    await wait_until(pilot, lambda: play.awaiting_plan, what="the game to wait for a plan")
    await pilot.press(*["n"] * 10, "enter")
    await wait_until(pilot, lambda: play.summary is not None, what="the run to finish")
    await pilot.press("enter")
    return play


@run_async
async def test_flow_practice_countdown_run_result_next_then_resume(tmp_path):
    out = tmp_path / "sess"
    clock = HandClock()
    session = Session.open(out, settings())
    screen = SessionScreen(session, clock=clock, countdown=2)
    app = SessionApp(screen)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, lambda: screen.stage == "instructions", what="the instructions")
        text = body(screen)
        assert "What the model is told" in text and "Breakout" in text
        assert session.instructions("breakout").splitlines()[0] in text  # the pack's words
        assert "instant pace" in text and "1 practice run" in text and "seeds 0" in text
        assert record(session)["events"][-1]["event"] == "instructions shown"
        # practice run
        await pilot.press("enter")
        await count_down(pilot, screen, clock)
        assert record(session)["steps"][0]["state"] == "running"
        first = await play_through(pilot)
        await wait_until(pilot, lambda: screen.stage == "result", what="the practice result")
        assert "practice" in body(screen) and "not scored" in body(screen)
        rec = record(session)
        assert rec["steps"][0]["state"] == "done" and rec["steps"][0]["practice"] is True
        assert rec["steps"][0]["recording"].startswith("practice/")
        assert Recording(out / rec["steps"][0]["recording"]).complete
        assert first.recording.parent == out / "practice"
        # the scored run of breakout
        await pilot.press("enter")
        await count_down(pilot, screen, clock)
        await play_through(pilot)
        await wait_until(pilot, lambda: screen.stage == "result", what="the scored result")
        assert "next: freeway practice run" in body(screen) and "new game" in body(screen)
        # the next game: its instructions; then interrupt its practice run mid-game
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.stage == "instructions", what="freeway's instructions")
        assert "Freeway" in body(screen)
        await pilot.press("enter")
        await count_down(pilot, screen, clock)
        play = pilot.app.screen
        await wait_until(pilot, lambda: play.awaiting_plan, what="the game to wait")
        app.exit()  # the lab's machine goes down mid-run
    assert play.done.wait(10)
    rec = record(session)
    assert [s["state"] for s in rec["steps"]] == ["done", "done", "running", "pending"]
    rows = list(csv.DictReader((out / "results.csv").open(encoding="utf-8")))
    assert [(r["setting"], r["game"], r["seed"]) for r in rows] == [("human:P 01", "breakout", "0")]

    # resume: the same settings pick up at freeway's practice run; the cut-off run is set aside
    again = Session.open(out, settings())
    assert again.resumed and again.next_index() == 2
    assert again.steps[2].incomplete and (out / again.steps[2].incomplete[0]).is_dir()
    assert not any((out / "practice").glob("freeway-*"))
    screen = SessionScreen(again, clock=clock, countdown=2)
    app = SessionApp(screen)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, lambda: screen.stage == "instructions", what="instructions again")
        assert "Freeway" in body(screen) and "(resumed)" in str(screen.query_one("#sess-title").render())
        for _ in range(2):
            await pilot.press("enter")
            await count_down(pilot, screen, clock)
            await play_through(pilot)
            await wait_until(pilot, lambda: screen.stage == "result", what="a result")
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.stage == "finished", what="the end of the session")
        assert "session complete: 2 of 2 scored runs done" in body(screen)
        await pilot.press("q")
        assert app.left_with is True
    rec = record(again)
    assert rec["participant"] == "P 01" and rec["finished"]
    assert all(s["state"] == "done" and s["started"] and s["ended"] for s in rec["steps"])
    assert [s["practice"] for s in rec["steps"]] == [True, False, True, False]
    assert [e["event"] for e in rec["events"]].count("resumed") == 1
    rows = list(csv.DictReader((out / "results.csv").open(encoding="utf-8")))
    assert [(r["setting"], r["game"], r["seed"], r["complete"]) for r in rows] == [
        ("human:P 01", "breakout", "0", "true"), ("human:P 01", "freeway", "0", "true")]
    # the session's runs: report reads the directory, compare labels them human:ID
    rep = subprocess.run([sys.executable, "-m", "workstation", "report", str(out), "--baseline", "human:P 01"],
                         capture_output=True, text=True, timeout=120)
    assert rep.returncode == 0, rep.stderr
    assert "human:P 01" in rep.stdout
    runs = sorted((out / "runs").glob("breakout-*"))
    practice = sorted((out / "practice").glob("breakout-*"))
    compared = load_runs([runs[0], practice[0]])
    assert compared[0].label == "human:P 01 s0" and compared[0].human
    row = summary_row(compared[0])
    assert row.inputs_per_s == 0.0 and row.latency_s is None and row.noop_share == 1.0  # ten noops: no inputs


def test_resume_with_other_settings_is_refused(tmp_path):
    Session.open(tmp_path / "s", settings())
    from workstation.base.errors import UserError

    with pytest.raises(UserError, match="seeds differ|another session"):
        Session.open(tmp_path / "s", settings(seeds=(0, 1)))


def test_a_complete_run_left_by_a_crash_is_adopted(tmp_path):
    """A crash after the run finished but before session.json said so: the finished run counts."""
    from workstation.run.start import RunSpec, start_run

    s = Session.open(tmp_path / "s", settings(practice=0, games=("breakout",)))
    step = s.next_step()
    s.begin(step)
    engine = start_run(RunSpec("breakout", agent="random", seed=0, protocol=Protocol(frames=30),
                               out=str(s.runs_dir(step))), rewindable=False)
    drive(engine)
    engine.close()
    again = Session.open(tmp_path / "s", settings(practice=0, games=("breakout",)))
    assert again.complete and again.steps[0].recording.startswith("runs/")


def test_shuffled_order_is_seeded_by_the_participant():
    a = [(st.game, st.seed) for st in plan_steps(settings(order="shuffled", games=("breakout", "freeway", "pacman"),
                                                          seeds=(0, 1, 2), practice=0))]
    b = [(st.game, st.seed) for st in plan_steps(settings(order="shuffled", games=("breakout", "freeway", "pacman"),
                                                          seeds=(0, 1, 2), practice=0))]
    assert a == b and sorted(a) == sorted((g, s) for g in ("breakout", "freeway", "pacman") for s in (0, 1, 2))
    fixed = [(st.game, st.seed, st.practice) for st in plan_steps(settings(practice=2))]
    assert fixed == [("breakout", 1000, True), ("breakout", 1001, True), ("breakout", 0, False),
                     ("freeway", 1000, True), ("freeway", 1001, True), ("freeway", 0, False)]


@pytest.mark.parametrize("args, says", [
    (["--participant", " ", "--games", "breakout", "--seeds", "0"], "--participant is empty"),
    (["--participant", "P", "--games", "breakout,nosuchgame", "--seeds", "0"], "unknown game 'nosuchgame'"),
    (["--participant", "P", "--games", "breakout", "--seeds", "0,one"], "seed 'one'"),
    (["--participant", "P", "--games", "breakout", "--seeds", ""], "--seeds is empty"),
    (["--participant", "P", "--games", "breakout", "--seeds", "0,0"], "twice"),
    (["--participant", "P", "--games", "breakout", "--seeds", "0", "--mode", "fast"], "invalid choice"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, says):
    (tmp_path / "recordings").mkdir()  # the default --out of a run: a session's checks never touch it
    before = os.stat(tmp_path / "recordings").st_mtime_ns
    r = subprocess.run([sys.executable, "-m", "workstation", "session", *args, "--out", str(tmp_path / "s")],
                       capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and says in r.stderr, r.stderr
    assert not (tmp_path / "s").exists()
    assert os.stat(tmp_path / "recordings").st_mtime_ns == before, "a probe file was made in ./recordings"


def test_make_settings_checks_what_argparse_does_not():
    from workstation.base.errors import UserError

    with pytest.raises(UserError, match="--order"):
        make_settings("P", "breakout", "0", order="random")
    with pytest.raises(UserError, match="practice"):
        make_settings("P", "breakout", "1000")


@run_async
async def test_real_time_session_counts_down_on_the_play_screen(tmp_path):
    clock = HandClock()
    session = Session.open(tmp_path / "rt", settings(mode="realtime", pace="paper", practice=0,
                                                       games=("breakout",), protocol=Protocol(frames=9)))
    screen = SessionScreen(session, clock=clock, countdown=2)
    app = SessionApp(screen)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_until(pilot, lambda: screen.stage == "instructions", what="the instructions")
        assert "real time: the game never waits" in body(screen)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, PlayScreen), what="the play screen")
        play = app.screen
        assert screen.stage == "run" and play.countdown == 2 and play.pacer is clock
        count = play.query_one("#play-count")
        await wait_until(pilot, lambda: count.display and str(count.value) == "2", what="the countdown at 2")
        for _ in range(5000):  # the clock moves half a slot at a time until the 9 frames are played
            if play.summary is not None:
                break
            clock.t += 0.05
            await pilot.pause(0.01)
        assert play.summary is not None and play.summary["complete"]
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.stage == "result", what="the result")
        assert "scored run, seed 0: done" in body(screen)
    rec = record(session)
    assert rec["steps"][0]["state"] == "done" and rec["steps"][0]["frames"] == 9
    assert Recording(tmp_path / "rt" / rec["steps"][0]["recording"]).manifest_record.agent["mode"] == "realtime"
