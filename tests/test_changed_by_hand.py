"""Runs changed by hand are marked and get their own run id: every kind of change, on real recordings,
through ls / info / report and a batch resume (the real emulator, the real CLI)."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from workstation.engine.turn_engine import Phase
from workstation.game.protocol import Protocol
from workstation.run.drive import drive
from workstation.run.options import RunSpec
from workstation.run.start import branch_run, start_run
from workstation.store.changes import changed_run_id, counts, mark
from workstation.store.index import Index
from workstation.store.recording import Recording

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "workstation"]
FRAMES = 60


def spec(out: Path, agent: str = "random") -> RunSpec:
    return RunSpec(game="breakout", agent=agent, seed=5, out=str(out), protocol=Protocol(frames=FRAMES))


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def plain_run(out: Path) -> Recording:
    e = start_run(spec(out))
    try:
        drive(e)
    finally:
        e.close()
    return Recording(e.writer.path)


def changed_run(out: Path, change) -> tuple[Recording, dict]:
    """A run of the same spec with ``change(engine)`` applied at turn 1's prompt."""
    e = start_run(spec(out))
    try:
        e.start()
        e.run_turn()
        e.step()  # turn 1: READY -> PROMPT
        assert e.phase is Phase.PROMPT
        change(e)
        summary = drive(e)
    finally:
        e.close()
    return Recording(e.writer.path), summary


def _override(e):
    e.step()  # ask
    e.override_plan(["left", "left", "fire"])


def _edit(e):
    e.set_prompt(e.pending.prompt.with_text(e.pending.prompt.render_text() + "\nHurry."))


def _resend(e):
    e.step()
    e.resend()


def _current_only(e):
    e.use_current_frame_only()


def _human_plan(e):
    e.override_plan(["fire", "right"])  # before the prompt is sent: the agent is not asked


KINDS = {"override": _override, "edited_prompt": _edit, "resend": _resend, "current_only": _current_only,
         "human_plan": _human_plan}


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> Recording:
    return plain_run(tmp_path_factory.mktemp("plain"))


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_kind_of_change_is_counted_and_gives_the_run_its_own_id(tmp_path, plain, kind):
    rec, summary = changed_run(tmp_path, KINDS[kind])
    assert summary.interventions == {kind: 1} and summary.changed_by_hand is True
    assert rec.summary_record.interventions == {kind: 1}
    assert rec.manifest_record.plain_run_id == plain.run_id
    assert rec.run_id == rec.manifest_record.run_id != plain.run_id
    assert rec.run_id == changed_run_id(plain.run_id, rec.manifest_record.changes)
    assert rec.manifest_record.changes[0]["kind"] == kind and rec.manifest_record.changes[0]["turn"] == 1
    assert rec.path.name == f"breakout-random-s5-{rec.run_id[:8]}"  # the folder carries its own id
    assert rec.problems() == []  # the rewritten manifest is the one the digests cover
    from workstation.run.hand_check import problems

    assert problems(rec) == []  # every turn's plan re-derived from the seed: each change accounted for


def test_the_plain_run_keeps_its_id_and_is_not_marked(plain, tmp_path):
    again = plain_run(tmp_path)
    assert again.run_id == plain.run_id and plain.interventions == {} and plain.summary_record.interventions is None
    assert plain.manifest_record.changes == [] and plain.path.name.endswith(plain.run_id[:8])


def test_two_different_changes_give_two_different_ids(tmp_path):
    a, _ = changed_run(tmp_path / "a", _override)
    b, _ = changed_run(tmp_path / "b", lambda e: (e.step(), e.override_plan(["right"])))
    assert a.run_id != b.run_id and a.plain_run_id == b.plain_run_id


def test_a_branch_is_marked_and_keeps_the_changes_of_the_turns_it_copies(tmp_path, plain):
    e = start_run(spec(tmp_path))
    try:
        e.start()
        e.step()
        e.step()
        e.override_plan(["left"])  # turn 0, copied into the branch
        for _ in range(4):
            e.run_turn()
        path = branch_run(e, 2)
        drive(e)
    finally:
        e.close()
    parent = Recording(next(p for p in tmp_path.iterdir() if p != path and p.is_dir()))
    branch = Recording(e.writer.path)
    assert branch.path == path and path.name == f"breakout-random-s5-{branch.run_id[:8]}"
    assert branch.interventions == {"override": 1, "branch": 1}
    assert branch.summary_record.interventions == {"override": 1, "branch": 1}
    assert branch.manifest_record.parent["run_id"] == parent.run_id
    assert len({branch.run_id, parent.run_id, plain.run_id}) == 3
    assert branch.plain_run_id == parent.plain_run_id == plain.run_id
    from workstation.run.hand_check import problems

    assert problems(branch) == [] and problems(parent) == []  # each turn's plan re-derived from the seed


def test_an_import_replaying_recorded_actions_is_not_changed_by_hand(tmp_path):
    e = start_run(spec(tmp_path))
    try:
        e.start()
        e.step()
        e.step()
        e.override_plan(["left"], by_hand=False)
        summary = drive(e)
    finally:
        e.close()
    rec = Recording(e.writer.path)
    assert summary.interventions is None and rec.interventions == {} and rec.changes == []


def test_an_older_changed_recording_in_a_batch_is_not_its_cell(tmp_path, plain):
    from workstation.studies.batch.grid import load_grid
    from workstation.studies.batch.runner import Batch

    rec, _ = changed_run(tmp_path / "hand", _override)
    out = tmp_path / "batch"
    old = out / "runs" / rec.path.name
    shutil.copytree(rec.path, old)
    m = json.loads((old / "manifest.json").read_text())
    for key in ("changes", "plain_run_id"):
        m.pop(key)
    m["run_id"] = plain.run_id  # written before changes were tracked: the plain run's id
    (old / "manifest.json").write_text(json.dumps(m))
    grid = tmp_path / "grid.toml"
    grid.write_text(textwrap.dedent(GRID))
    b = Batch(load_grid(grid, out=str(out / "runs")), out)
    b.prepare(dry_run=True)
    assert [r.status for r in b.state.runs.values()] == ["left"] and b.changed_by_hand == [str(old)]


def test_an_older_recording_gets_its_changes_from_its_turns(tmp_path, plain):
    rec, _ = changed_run(tmp_path, _override)
    old = tmp_path / "old"
    shutil.copytree(rec.path, old)
    m = json.loads((old / "manifest.json").read_text())
    for key in ("changes", "plain_run_id"):
        m.pop(key)
    m["run_id"] = plain.run_id  # what the manifest said before changes were tracked
    (old / "manifest.json").write_text(json.dumps(m))
    legacy = Recording(old)
    assert legacy.interventions == {"override": 1} and legacy.run_id != plain.run_id
    assert Index(tmp_path, cache=False).find(plain.run_id) == []


def test_ls_and_info_say_the_run_was_changed_by_hand(tmp_path, plain):
    rec, _ = changed_run(tmp_path, _override)
    shutil.copytree(plain.path, tmp_path / plain.path.name)
    r = cli("ls", str(tmp_path))
    assert r.returncode == 0, r.stderr
    header, _rule, *rows, _count = r.stdout.splitlines()
    col = header.index("changed")
    by_path = {row.split()[-1]: row for row in rows}
    assert by_path[str(rec.path)][col:].startswith("O1")
    assert by_path[str(tmp_path / plain.path.name)][col:].startswith("-")
    r = cli("ls", str(tmp_path), "--id", plain.run_id)
    assert str(rec.path) not in r.stdout and plain.path.name in r.stdout
    assert str(rec.path) in cli("ls", str(tmp_path), "--changed").stdout
    assert str(rec.path) not in cli("ls", str(tmp_path), "--plain").stdout
    info = cli("info", str(rec.path))
    assert info.returncode == 0, info.stderr
    assert f"run id {rec.run_id}" in info.stdout
    assert "CHANGED BY HAND: 1 plan overridden" in info.stdout and plain.run_id in info.stdout
    assert "changed by hand (O1)" in info.stdout
    assert "plain (not changed by hand)" in cli("info", str(plain.path)).stdout


GRID = f"""\
name = "one"
games = ["breakout"]
seeds = [5]

[protocol]
frames = {FRAMES}

[[settings]]
label = "random"
spec = "random"
"""


def test_a_batch_does_not_take_a_changed_run_for_its_cell_and_runs_it(tmp_path, plain):
    rec, _ = changed_run(tmp_path / "hand", _override)
    out = tmp_path / "batch"
    (out / "runs").mkdir(parents=True)
    shutil.copytree(rec.path, out / "runs" / rec.path.name)
    grid = tmp_path / "grid.toml"
    grid.write_text(textwrap.dedent(GRID))
    dry = cli("batch", str(grid), "--out", str(out), "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert re.search(r"^random\s+breakout\s+1\s+0\s+1\s", dry.stdout, re.MULTILINE), dry.stdout  # runs 1, done 0, to run 1
    assert "1 recording in" in dry.stdout and "changed by hand: not counted" in dry.stdout
    r = cli("batch", str(grid), "--out", str(out), "--plain")
    assert r.returncode == 0, r.stderr
    assert "changed by hand: not counted" in r.stdout
    with open(out / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 1 and rows[0]["run_id"] == plain.run_id and rows[0]["by_hand"] == "-"
    assert float(rows[0]["score"]) == plain.summary_record.total_reward
    assert (out / "runs" / rec.path.name).is_dir()  # the changed run is left where it was
    assert len([p for p in (out / "runs").iterdir() if p.is_dir()]) == 2


def test_report_leaves_changed_runs_out_unless_asked(tmp_path):
    rows = [["random", "breakout", s, 1.0 + s, "-"] for s in range(3)]
    rows += [["random", "breakout", 3, 50.0, "O1"], ["model", "breakout", 0, 2.0, "-"], ["model", "breakout", 1, 3.0, "E1"]]
    path = tmp_path / "results.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["setting", "game", "seed", "score", "by_hand"])
        w.writerows(rows)
    r = cli("report", str(path))
    assert r.returncode == 0, r.stderr
    assert "2 runs changed by hand left out (--include-changed counts them)" in r.stdout
    assert "4 complete runs" in r.stdout
    r = cli("report", str(path), "--include-changed")
    assert r.returncode == 0 and "6 complete runs" in r.stdout and "changed by hand" not in r.stdout


def test_counts_and_marks():
    changes = [{"kind": "branch", "turn": 2}, {"kind": "override", "turn": 0}, {"kind": "override", "turn": 3}]
    assert counts(changes) == {"override": 2, "branch": 1}
    assert mark(counts(changes)) == "O2 B1" and mark({}) == "-"
    assert changed_run_id("abc", []) == "abc"


def test_a_run_changed_twice_keeps_the_untouched_runs_id_as_its_plain_run_id(tmp_path, plain):
    """Two changes through step mode's engine path: the second must not take the first's id for the plain one."""
    e = start_run(spec(tmp_path))
    try:
        e.start()
        for plan in (["left", "fire"], ["right"]):
            e.run_turn()
            e.step()  # the next turn's prompt
            e.step()  # its reply
            e.override_plan(plan)
        summary = drive(e)
    finally:
        e.close()
    rec = Recording(e.writer.path)
    assert [(c["kind"], c["turn"]) for c in rec.manifest_record.changes] == [("override", 1), ("override", 2)]
    assert rec.manifest_record.plain_run_id == rec.plain_run_id == plain.run_id
    assert rec.run_id == changed_run_id(plain.run_id, rec.manifest_record.changes) != plain.run_id
    assert summary.interventions == {"override": 2} and rec.problems() == []
    assert rec.path.name == f"breakout-random-s5-{rec.run_id[:8]}"
