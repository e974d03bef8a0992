"""workstation judge stuck: stretches found from the RAM on real Breakout recordings built to stall."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agents_for_tests import ScriptedAgent
from tests.fake_provider import fake_server  # noqa: F401
from workstation.cli import main
from workstation.game.protocol import Protocol
from workstation.run.drive import drive
from workstation.run.start import RunSpec, start_run
from workstation.store.recording import Recording
from workstation.studies.judge.stuck import report, stalled_turns, stretches


def play(out: Path, replies: list[str], frames: int, seed: int) -> Path:
    agent = ScriptedAgent(replies)  # replies by turn, the last one repeated
    e = start_run(RunSpec(game="breakout", out=str(out), seed=seed, protocol=Protocol(frames=frames)), agent=agent)
    drive(e)
    e.close()
    return Path(e.writer.path)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("stuck")
    never = play(root / "never", ["thought: waiting for the ball\nmove: [noop]"], 90, 0)  # 30 turns, never serves
    aware = play(root / "aware", ["thought: I seem stuck, nothing happens\nmove: [noop]"], 90, 1)
    recover = play(root / "recover", ["thought: wait\nmove: [noop]"] * 12 + ["thought: go\nmove: [fire, left, left, left]"],
                   90, 2)
    moving = play(root / "moving", ["thought: sweep\nmove: [fire, left, left]", "thought: back\nmove: [right, right]"] * 20,
                  90, 3)
    return {"never": never, "aware": aware, "recover": recover, "moving": moving, "root": root}


def test_a_breakout_that_never_serves_is_one_unaware_unrecovered_stretch(runs):
    rec = Recording(runs["never"])
    assert all(m == "position" for m in stalled_turns(rec))
    (s,) = stretches(rec, 8)
    assert (s.first_turn, s.last_turn, s.turns) == (0, 29, 30) and s.frames == 90
    assert not s.aware and not s.recovered and s.rule == "position"


def test_awareness_follows_the_word_rule_and_recovery_the_turn_after(runs):
    (s,) = stretches(Recording(runs["aware"]), 8)
    assert s.aware and s.cue.lower() == "stuck"
    (r,) = stretches(Recording(runs["recover"]), 8)
    assert r.turns == 12 and r.recovered and not r.aware
    assert stretches(Recording(runs["recover"]), 13) == []  # shorter than N is not stuck
    assert stretches(Recording(runs["moving"]), 4) == []  # the paddle moves every turn


def test_the_report_per_setting_and_the_cli(runs, capsys):
    result = report([str(runs["root"])], 8)
    s = result.settings["scripted|frames=90"]
    assert s.runs == 4 and s.stretches == 3 and s.aware == 1 and s.unaware == 2
    assert s.recovery_rate == pytest.approx(1 / 3)
    assert s.stuck_share == pytest.approx((90 + 90 + 36) / (4 * 90))
    assert main(["judge", "stuck", str(runs["root"]), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["settings"]["scripted|frames=90"]["stretches"] == 3
    assert main(["judge", "stuck", str(runs["root"])]) == 0
    assert "stretches/run" in capsys.readouterr().out


def test_the_open_screen_marks_stuck_stretches_on_the_timeline(runs):
    from argparse import Namespace

    from screens.app import make_app
    from screens.widgets.timeline import TimelineBar
    from tests.tui_helpers import run_async

    @run_async
    async def check(path, stuck_frames):
        app = make_app("open", Namespace(recording=str(path)))
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("end")
            timeline = app.screen.query_one(TimelineBar)
            assert int(timeline.stuck.sum()) == stuck_frames
            lives_row = timeline.render().plain.split("\n")[1]
            assert ("≈" in lives_row) == (stuck_frames > 0)

    check(runs["never"], 91)  # frames 0..90: the whole run
    check(runs["moving"], 0)


def test_with_a_judge_the_judge_decides_awareness_and_the_words_decide_when_it_is_unreadable(runs, fake_server, capsys):  # noqa: F811
    from tests.fake_provider import Step
    from workstation.studies.judge.stuck_judge import read_yes_no

    assert (read_yes_no("Yes."), read_yes_no(" no, it did not"), read_yes_no("maybe")) == (True, False, None)
    answers = iter(["Yes.", "perhaps", "no"])
    asked = []

    def respond(seen):
        asked.append(seen.body)
        return Step(text=next(answers))

    fake_server.reset()
    fake_server.responder = respond
    try:
        assert main(["judge", "stuck", str(runs["never"]), str(runs["aware"]), str(runs["recover"]), "--json",
                     "--judge", "compat:j", "--base-url", fake_server.url("compat")]) == 0
    finally:
        fake_server.reset()
    result = json.loads(capsys.readouterr().out)
    by_run = {s["run_id"]: s for s in result["stretches"]}
    never, aware, recover = (by_run[Recording(runs[k]).manifest_record.run_id] for k in ("never", "aware", "recover"))
    assert (never["aware"], never["aware_by"]) == (True, "judge")  # the words say nothing; the judge said yes
    assert (aware["aware"], aware["aware_by"]) == (True, "words")  # "perhaps": unreadable, the words decide
    assert (recover["aware"], recover["aware_by"]) == (False, "judge")
    assert len(asked) == 3 and "waiting for the ball" in json.dumps(asked[0])
    assert result["judge"]["calls"] == 3
