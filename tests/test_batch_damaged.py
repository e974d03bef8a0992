"""A batch resumed over a recording edited since it was written: never counted, named, set aside whole, played again.

Real parts: the real CLI in a subprocess, the real emulator (30-frame random runs), real recordings edited on disk
as a person would (a score in summary.json, a cut turns.jsonl, a flipped byte in frames.bin). Also: ``verify
--quick`` of a batch holds each recording inside to the cheap check, and a batch's own grid.toml resumes it.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.bad_input_world import snapshot
from workstation.store.recording import Recording

ROOT = Path(__file__).resolve().parent.parent
GRID = """\
name = "dmg"
games = ["breakout"]
seeds = [0, 1]

[protocol]
frames = 30

[[settings]]
label = "random"
spec = "random"
"""


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "workstation", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def rows(out: Path) -> list[dict[str, str]]:
    with open(out / "results.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def runs_of(out: Path) -> list[Path]:
    return sorted(p for p in (out / "runs").iterdir() if p.is_dir() and not p.name.startswith("."))


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One finished, sealed batch of two runs (copied by each test)."""
    base = tmp_path_factory.mktemp("made")
    (base / "grid.toml").write_text(GRID, encoding="utf-8")
    r = cli(base, "batch", "grid.toml", "--out", "b", "--plain")
    assert r.returncode == 0, r.stdout + r.stderr
    return base / "b"


@pytest.fixture()
def out(made: Path, tmp_path: Path) -> Path:
    shutil.copytree(made, tmp_path / "b")
    return tmp_path / "b"


def _score(rec: Path) -> None:
    s = json.loads((rec / "summary.json").read_text())
    (rec / "summary.json").write_text(json.dumps({**s, "total_reward": 500.0}, indent=1))


def _cut_turns(rec: Path) -> None:
    lines = (rec / "turns.jsonl").read_text().splitlines(keepends=True)
    (rec / "turns.jsonl").write_text("".join(lines[:-1]))


def _flip_frame(rec: Path) -> None:
    data = bytearray((rec / "frames.bin").read_bytes())
    data[len(data) // 2] ^= 0xFF
    (rec / "frames.bin").write_bytes(bytes(data))


DAMAGE: dict[str, tuple[Callable[[Path], None], str]] = {
    "score edited": (_score, "total_reward 500 contradicts"),
    "turns cut": (_cut_turns, "turns.jsonl is"),
    "a frame byte flipped": (_flip_frame, "frames.bin differs from the digest"),
}


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_a_resume_sets_a_damaged_recording_aside_and_plays_its_run_again(out: Path, kind: str) -> None:
    damage, says = DAMAGE[kind]
    victim, good = runs_of(out)
    truth = {r["run_id"]: r["score"] for r in rows(out)}
    damage(victim)
    forged, before, kept_mtime = snapshot(victim), snapshot(out), (good / "summary.json").stat().st_mtime_ns
    base = out.parent

    dry = cli(base, "batch", "b/grid.toml", "--out", "b", "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert f"damaged: b/runs/{victim.name}: " in dry.stdout and says in dry.stdout, dry.stdout
    (plan,) = [x.split() for x in dry.stdout.splitlines() if x.startswith("random ")]
    assert plan[2:5] == ["2", "1", "1"]  # runs, done, to run: the damaged one is not done
    assert snapshot(out) == before  # a dry run moves nothing

    r = cli(base, "batch", "b/grid.toml", "--out", "b", "--plain")
    assert r.returncode == 0, r.stdout + r.stderr
    (line,) = [x for x in r.stdout.splitlines() if "damaged" in x]
    assert line.startswith(f"set aside a damaged recording b/runs/{victim.name}: ") and says in line, line
    assert "2/2 done (1 before)" in r.stdout
    assert snapshot(out / "runs" / ".damaged" / victim.name) == forged  # kept whole, never written into
    assert (good / "summary.json").stat().st_mtime_ns == kept_mtime  # the sound run was not played again
    again = Recording(out / "runs" / victim.name)  # played again into a folder of its own
    assert again.complete and again.problems() == []
    assert {r["run_id"]: r["score"] for r in rows(out)} == truth  # the table holds the scores played, not 500

    for command in (("verify", "--quick", "b"), ("verify", "b")):  # re-sealed: the batch and every run hold
        v = cli(base, *command)
        assert v.returncode == 0 and v.stdout.startswith("OK"), v.stdout + v.stderr
    third = cli(base, "batch", "b/grid.toml", "--out", "b", "--plain")
    assert third.returncode == 0 and "damaged" not in third.stdout and "2/2 done (2 before)" in third.stdout


@pytest.mark.parametrize("kind", ["score edited", "turns cut"])
def test_verify_quick_of_a_batch_names_an_edited_recording(out: Path, kind: str) -> None:
    damage, says = DAMAGE[kind]
    victim = runs_of(out)[0]
    damage(victim)
    before = snapshot(out)
    v = cli(out.parent, "verify", "--quick", "b")
    assert v.returncode == 1, v.stdout + v.stderr
    assert v.stdout.startswith("DAMAGED: batch b: ") and says in v.stdout and victim.name in v.stdout
    assert len(v.stdout.splitlines()) == 1 and "Traceback" not in v.stderr
    assert snapshot(out) == before


def test_verify_quick_of_a_batch_leaves_the_frames_to_verify(out: Path) -> None:
    """The quick check does not hash frames (``verify`` does, and says which recording)."""
    victim = runs_of(out)[0]
    _flip_frame(victim)
    quick = cli(out.parent, "verify", "--quick", "b")
    assert quick.returncode == 0 and "checks their frames too" in quick.stdout, quick.stdout
    full = cli(out.parent, "verify", "b")
    assert full.returncode == 1 and victim.name in full.stdout and "frames.bin" in full.stdout, full.stdout


def test_a_batch_s_own_grid_resumes_it(out: Path) -> None:
    base = out.parent
    victim = runs_of(out)[0]
    shutil.rmtree(victim)
    r = cli(base, "batch", "b/grid.toml", "--plain")  # no --out: its own grid.toml resumes the batch it belongs to
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("b/grid.toml is the grid of the batch in b: resuming it there")
    assert "2/2 done (1 before)" in r.stdout
    assert not (base / "batches").exists()
    assert len(rows(out)) == 2 and (out / "runs" / victim.name / "summary.json").is_file()


def test_another_grid_into_a_batch_names_the_command_that_resumes_it(out: Path) -> None:
    base = out.parent
    (base / "more.toml").write_text(GRID.replace("seeds = [0, 1]", "seeds = [0, 1, 2]"), encoding="utf-8")
    before = snapshot(out)
    r = cli(base, "batch", "more.toml", "--out", "b", "--plain")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "resume it with `workstation batch b/grid.toml`" in r.stderr
    assert snapshot(out) == before
    hint = r.stderr.split("`")[1].split()  # the command the hint names does resume it
    again = cli(base, *hint[1:], "--plain")
    assert again.returncode == 0 and "2/2 done (2 before)" in again.stdout, again.stdout + again.stderr
