"""The headless comparison: alignment, divergence, events, the summary table; and `workstation compare` bad input."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from workstation.base.errors import UserError
from workstation.game.protocol import Protocol, StartOption
from workstation.run.drive import drive
from workstation.run.start import RunSpec, start_run
from workstation.store.records import TurnRecord
from workstation.studies.analysis.compare import (
    Comparison,
    first_divergent_frame,
    first_plan_divergence,
    inputs_per_second,
    load_run,
    load_runs,
    next_event,
    run_at,
    start_text,
    summary_row,
)


def make_run(out, game="breakout", seed=0, frames=300, agent="random", start="fixed"):
    protocol = Protocol(frames=frames, start=StartOption.parse(start))
    engine = start_run(RunSpec(game, agent=agent, seed=seed, protocol=protocol, out=str(out)), rewindable=False)
    try:
        drive(engine)
    finally:
        engine.close()
    return engine.writer.path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("cmp")
    a = make_run(out, seed=0, frames=600)
    return {"a": a, "b": make_run(out, seed=1, frames=600), "replay": make_run(out, seed=0, frames=600,
                                                                              agent=f"replay:{a}"),
            "noops": make_run(out, seed=0, start="noops:30"), "other": make_run(out, game="freeway", frames=30)}


def test_a_replay_of_a_run_never_diverges(runs):
    c = Comparison.of([runs["a"], runs["replay"]])
    assert c.divergent_frame is None and c.divergent_turn is None
    assert c.start.startswith("same start")
    assert c.rows[0].score == c.rows[1].score
    assert "no frame differs" in c.divergence_text()


def test_the_divergence_frame_is_the_first_whose_pixels_differ(runs):
    rs = load_runs([runs["a"], runs["b"]])
    f = first_divergent_frame(rs)
    assert f is not None and f > 0
    a, b = (r.rec.frames for r in rs)
    assert all(np.array_equal(a.rgb(i), b.rgb(i)) for i in range(f))
    assert not np.array_equal(a.rgb(f), b.rgb(f))
    t = first_plan_divergence(rs)
    assert t is not None
    ta, tb = rs[0].turns, rs[1].turns
    assert all(ta[i].shown_plan == tb[i].shown_plan and ta[i].start_frame == tb[i].start_frame for i in range(t))
    assert (ta[t].start_frame, ta[t].shown_plan) != (tb[t].start_frame, tb[t].shown_plan)


def test_the_summary_table_agrees_with_the_series(runs):
    for run in load_runs([runs["a"], runs["noops"]]):
        row = summary_row(run)
        s = run.series
        assert row.score == float(s.score[-1]) == run.rec.summary_record.total_reward
        assert row.lives_lost == int(s.losses.sum()) == run.rec.summary_record.lives_lost
        assert row.turns == len(run.turns) == run.rec.summary_record.turns
        assert row.games_ended == (run.rec.summary_record.games_ended or 0)
        actions = [a for t in run.turns for a in t.actions]
        assert row.mean_actions == pytest.approx(len(actions) / len(run.turns))
        assert row.noop_share == pytest.approx(actions.count("noop") / len(actions))
        assert sum(row.action_mix.values()) == pytest.approx(1.0)
        assert row.latency_s is not None and row.inputs_per_s is None  # a model-like agent: latency
        assert row.invalid_turns == 0 and row.failed_turns == 0


def test_event_jumps_find_the_next_event_in_any_run(runs):
    rs = load_runs([runs["a"], runs["b"]])
    losses = sorted((int(f), i) for i, r in enumerate(rs) for f in np.flatnonzero(r.series.losses))
    assert len(losses) >= 2, "600-frame random Breakout runs lose lives"
    assert next_event(rs, -1, "life_lost") == losses[0]
    assert next_event(rs, losses[0][0], "life_lost") == next(x for x in losses if x[0] > losses[0][0])
    assert next_event(rs, losses[0][0] + 1, "life_lost", -1)[0] == losses[0][0]
    assert next_event(rs, 10_000, "reward") is None


def test_a_run_at_a_frame_is_the_series_at_that_frame(runs):
    rs = load_runs([runs["a"], runs["b"]])
    for frame in (0, 50, 299, 600, 700):
        for r in rs:
            at = run_at(r, frame)
            f = min(frame, r.last_frame)
            assert at.frame == f and at.ended == (frame > r.last_frame)
            assert at.score == r.series.score[f] and at.lives == r.series.lives[f]
            assert at.action == r.series.action_at(f)
            turn = r.series.turn_at(f)
            assert at.turn == turn and at.plan == r.turns[turn].shown_plan


def test_different_starts_are_said_plainly(runs):
    rs = load_runs([runs["a"], runs["b"], runs["noops"]])
    text = start_text(rs)
    assert text.startswith("NOT the same start") and "seeds differ (0, 1, 0)" in text
    assert "start options differ (fixed, fixed, noops:30)" in text


def test_seeds_under_the_fixed_start_share_the_start(runs):
    text = start_text(load_runs([runs["a"], runs["b"]]))  # seeds 0 and 1, both the fixed start
    assert text.startswith("same start (the fixed start gives every seed the same first frame")
    assert "NOT" not in text and "seeds differ (0, 1)" in text


def test_a_run_changed_by_hand_is_named_in_the_start_line(runs, tmp_path):
    from tests.tui_helpers import record

    edited = record(tmp_path, frames=60, edit="\nServe first.")
    text = start_text(load_runs([runs["a"], edited.path]))
    assert "run 2 CHANGED BY HAND (E1)" in text
    assert load_run(edited.path).label == "random s0 by hand E1"


def test_bad_sets_are_refused(runs):
    with pytest.raises(UserError, match="different games"):
        load_runs([runs["a"], runs["other"]])
    with pytest.raises(UserError, match="2 to 4"):
        load_runs([runs["a"]])
    with pytest.raises(UserError, match="2 to 4"):
        load_runs([runs["a"]] * 5)


def test_inputs_per_second_counts_new_non_noop_inputs():
    turns = [TurnRecord(actions=[a]) for a in ["noop", "left", "left", "noop", "fire", "fire", "right"]]
    assert inputs_per_second(turns, 30) == 3.0  # left, fire, right over one paper second


def test_cli_compare_text_and_bad_input(runs, tmp_path):
    ok = subprocess.run([sys.executable, "-m", "workstation", "compare", str(runs["a"]), str(runs["b"]), "--text"],
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert "runs diverge at frame" in ok.stdout and "random s1" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "workstation", "compare", str(runs["a"]), str(runs["other"])],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "different games" in bad.stderr
    missing = subprocess.run([sys.executable, "-m", "workstation", "compare", str(runs["a"]), str(tmp_path / "no")],
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode == 2 and len(missing.stderr.strip().splitlines()) == 1


def test_with_three_runs_each_is_measured_against_the_first(runs):
    c = Comparison.of([runs["a"], runs["replay"], runs["b"]])
    ab = first_divergent_frame(load_runs([runs["a"], runs["b"]]))
    assert c.pairs == [None, ab] and c.divergent_frame == ab
    assert f"2 vs 1: never, 3 vs 1: frame {ab}" in c.divergence_text()


def test_killed_and_damaged_runs_are_named(runs, tmp_path):
    import shutil

    killed = tmp_path / "killed"
    shutil.copytree(runs["b"], killed)
    (killed / "summary.json").unlink()
    damaged = tmp_path / "damaged"
    shutil.copytree(runs["b"], damaged)
    turns = damaged / "turns.jsonl"
    turns.write_text(turns.read_text().replace("random baseline", "random baseliNe", 1))
    c = Comparison.of([runs["a"], killed, damaged])
    assert c.runs[1].state != "complete" and c.runs[1].damage is None
    assert f"run 2 {c.runs[1].state.upper()} at frame {c.runs[1].last_frame}" in c.start
    assert "run 3 DAMAGED" in c.start and "turns.jsonl" in c.start
    assert "run 1" not in c.start
