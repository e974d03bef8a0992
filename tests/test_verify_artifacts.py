"""`workstation verify DIR` on artifacts that are not one recording: a QA set and a QA eval (sealed and not), a
batch with its runs; the seal, the records and (full) every recording inside are checked; damage is exit 1."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / "qa-sample"


def ws(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "workstation", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    w = tmp_path_factory.mktemp("verify_artifacts")
    shutil.copytree(SAMPLE, w / "qs")
    assert ws("qa", "eval", "qs", "--agent", "random", "--repeats", "1", "--out", "ev", cwd=w).returncode == 0
    grid = w / "grid.toml"
    grid.write_text('name = "v"\ngames = ["breakout"]\nseeds = [0]\n[[settings]]\nlabel = "random"\nspec = "random"\n'
                    '[protocol]\nframes = 60\n')
    r = ws("batch", str(grid), "--out", "b", cwd=w)
    assert r.returncode == 0, r.stderr
    return w


def test_a_sealed_eval_holds_and_an_edited_one_is_damage(world: Path, tmp_path: Path) -> None:
    r = ws("verify", "--quick", str(world / "ev"), cwd=world)
    assert r.returncode == 0 and r.stdout.startswith("OK: qa-eval") and "seal and records hold" in r.stdout
    ev = tmp_path / "ev"
    shutil.copytree(world / "ev", ev)
    with open(ev / "summary.json", "a") as f:
        f.write(" ")
    r = ws("verify", str(ev), cwd=tmp_path)
    assert r.returncode == 1 and "DAMAGED: qa-eval" in r.stdout and "summary.json" in r.stdout, r.stdout


def test_an_unsealed_set_has_its_records_checked(world: Path, tmp_path: Path) -> None:
    r = ws("verify", str(world / "qs"), cwd=world)
    assert r.returncode == 0 and "written before seals" in r.stdout, r.stdout + r.stderr
    qs = tmp_path / "qs"
    shutil.copytree(world / "qs", qs)
    with open(qs / "questions.jsonl", "a") as f:
        f.write("[1, 2]\n")
    r = ws("verify", "--quick", str(qs), cwd=tmp_path)
    assert r.returncode == 1 and "holds a list, not a JSON object" in r.stdout, r.stdout


def test_a_batch_is_checked_with_every_run_inside(world: Path, tmp_path: Path) -> None:
    r = ws("verify", str(world / "b"), cwd=world)
    assert r.returncode == 0 and r.stdout.startswith("OK: batch") and "1 recording inside hold" in r.stdout, \
        r.stdout + r.stderr
    b = tmp_path / "b"
    shutil.copytree(world / "b", b)
    (run,) = [p for p in (b / "runs").iterdir() if p.is_dir()]
    turns = run / "turns.jsonl"
    turns.write_text(turns.read_text().replace('"reward":0', '"reward":5', 1))
    for quick in (["--quick"], []):  # the batch's rows are read as report reads them: each run checked first
        r = ws("verify", *quick, str(b), cwd=tmp_path)
        assert r.returncode == 1 and "DAMAGED: batch" in r.stdout and "1 damaged run" in r.stdout, r.stdout
