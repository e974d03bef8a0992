"""Series of a real run: per-frame score, lives, events, the turn and action at any frame, figures, text."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tests.agents_for_tests import ScriptedAgent
from workstation.game.protocol import Protocol
from workstation.run.drive import drive
from workstation.run.start import RunSpec, start_run
from workstation.store.recording import Recording
from workstation.store.series import FrameSeries, RunSeries, buckets, summary_line

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / "sample" / "breakout-random-s0"


@pytest.fixture(scope="module")
def long_run(tmp_path_factory) -> Recording:
    """Random Breakout for 3000 frames: several lives lost and three game overs (rule 2)."""
    out = tmp_path_factory.mktemp("long")
    engine = start_run(RunSpec("breakout", protocol=Protocol(frames=3000), out=str(out)), rewindable=False)
    try:
        drive(engine)
    finally:
        engine.close()
    return Recording(engine.writer.path)


def test_the_series_agrees_with_the_summary_and_the_turns(long_run):
    rec, s = long_run, long_run.summary_record
    series = RunSeries.from_recording(rec)
    assert series.budget == 3000 and series.known == 3000
    assert series.score[-1] == s.total_reward and int(series.losses.sum()) == s.lives_lost
    for t in rec.turn_records:  # the score after each turn is the one the turn recorded
        assert series.score[t.end_frame] == pytest.approx(t.score)
        assert series.lives[t.last_frame] == t.lives
    stats = series.run_stats()
    assert (stats.turns, stats.score, stats.lives_lost, stats.invalid_turns) == (s.turns, s.total_reward,
                                                                                  s.lives_lost, s.invalid_turns)
    assert stats.game_overs == s.games_ended > 0 and stats.resets == s.games_ended
    end = series.stats_at(3000)
    assert (end.score, end.turn, end.lives_lost, end.calls) == (s.total_reward, s.turns, s.lives_lost, s.calls)


def test_game_overs_resets_and_lives_frame_by_frame(long_run):
    series = RunSeries.from_recording(long_run)
    over = [t for t in long_run.turn_records if t.game_over]
    for t in over:
        assert series.resets[t.end_frame] and series.lives[t.end_frame] == 0
        assert series.action_at(t.reset_frame) == "reset" and series.lives[t.reset_frame] == t.lives == 5
    events = series.frames.events()
    assert [f for f, kind, _ in events if kind == "reset"] == [t.end_frame for t in over]
    assert sum(v for _, kind, v in events if kind == "reward") == long_run.summary_record.total_reward


def test_the_turn_and_action_at_any_frame():
    rec = Recording(SAMPLE)
    series = RunSeries.from_recording(rec)
    turns = rec.turn_records
    assert series.turn_at(0) == 0 and series.action_at(0) is None
    t = turns[3]  # fire, fire, right over frames 19..27
    assert [series.action_at(f) for f in range(t.start_frame + 1, t.end_frame + 1)] == \
        ["fire"] * 3 + ["fire"] * 3 + ["right"] * 3
    assert series.turn_at(t.start_frame) == 3 and series.turn_at(t.end_frame - 1) == 3
    assert series.actions_done(3, t.start_frame + 3) == 1
    assert series.stats_at(t.end_frame).turn == 4


def test_tokens_and_cost_per_turn(tmp_path):
    agent = ScriptedAgent(["move: [fire]", "move: [left, right]"], cost=0.002)
    engine = start_run(RunSpec("breakout", protocol=Protocol(frames=60), out=str(tmp_path)), agent=agent,
                       rewindable=False)
    try:
        drive(engine)
    finally:
        engine.close()
    rec = Recording(engine.writer.path)
    series = RunSeries.from_recording(rec)
    n_in, n_out = series.turn_tokens()
    assert (n_in == 100).all() and (n_out == 10).all() and len(n_in) == rec.summary_record.turns
    assert np.allclose(series.turn_costs(), 0.002)
    stats = series.run_stats()
    assert stats.cost_usd == pytest.approx(rec.summary_record.cost_usd) and stats.calls == rec.summary_record.calls
    mid = series.stats_at(30)
    assert mid.input_tokens == 100 * (series.turn_at(30) + 1) and mid.cost_usd == pytest.approx(
        0.002 * (series.turn_at(30) + 1))


def test_a_live_series_fills_and_rewinds():
    fs = FrameSeries(90)
    fs.add(3, 2.0)
    fs.add(10, life_lost=True)
    fs.add(500, 1.0)  # outside the budget: ignored
    assert fs.score[-1] == 2.0 and fs.events() == [(3, "reward", 2.0), (10, "life_lost", 1.0)]
    fs.truncate(5)
    assert not fs.losses.any()
    sums, lost = fs.cells(9)
    assert sums[0] == 2.0 and not lost.any() and len(sums) == 9
    assert list(buckets(np.arange(6), 3)) == [1, 5, 9]
    shared = np.zeros(11)
    view = FrameSeries.over(shared, np.zeros(11, dtype=bool))
    shared[4] = 3.0
    assert view.score[-1] == 3.0 and view.budget == 10


def test_the_summary_line():
    rec = Recording(SAMPLE)
    s = rec.summary_record
    assert summary_line(s) == summary_line(rec.raw_summary()) == (
        "breakout seed=0 agent=random score=3 frames=900 turns=146 lives_lost=4 invalid=0 complete")
    assert summary_line(replace(s, complete=False, stopped="cost cap reached")).endswith(
        "INCOMPLETE (cost cap reached)")
    assert summary_line(s, damage="frames.bin differs").endswith("DAMAGED (frames.bin differs)")


def test_forward_reads_the_field_it_names_and_cannot_be_set():
    from workstation.store.forward import Forward

    series = RunSeries.from_turns([])
    assert series.budget == series.frames.budget and series.rewards is series.frames.rewards
    assert isinstance(RunSeries.budget, Forward)
    with pytest.raises(AttributeError):
        series.budget = 3
    assert isinstance(series.frames, FrameSeries)
