"""No writer writes inside another sealed artifact: a session, an export (a file or Inspect logs), a report's
--json/--md, a QA eval and an import refuse an output inside a batch, a QA set, a session... in one line (exit 2),
before anything is written, and the artifact is left byte for byte as it was."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bad_input_world import snapshot
from workstation.store.seal import seal

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "recordings" / "sample" / "breakout-random-s0"
QA_SAMPLE = ROOT / "recordings" / "qa-sample"


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "workstation", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(cwd)},
                          stdin=subprocess.DEVNULL)


@pytest.fixture
def sealed(tmp_path: Path) -> Path:
    """A sealed artifact of another kind (a batch's seal over one file)."""
    d = tmp_path / "batchlike"
    d.mkdir()
    (d / "grid.toml").write_text('name = "x"\n')
    seal(d, "batch")
    return d


CASES = {
    "session": lambda s, t: ["session", "--participant", "P03", "--games", "breakout", "--seeds", "0", "--out", str(s)],
    "export file": lambda s, t: ["export", str(SAMPLE), "-o", str(s / "run.html")],
    "export inspect": lambda s, t: ["export", str(SAMPLE), "--inspect", str(s / "logs")],
    "report json": lambda s, t: ["report", str(ROOT / "docs" / "sample_results.csv"), "--json", str(s / "r.json")],
    "qa eval": lambda s, t: ["qa", "eval", str(t / "qa"), "--agent", "random", "--repeats", "1", "--out", str(s / "qe")],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_an_output_inside_another_sealed_artifact_is_refused_in_one_line(case: str, sealed: Path, tmp_path: Path):
    shutil.copytree(QA_SAMPLE, tmp_path / "qa")
    before = snapshot(sealed)
    r = cli(*CASES[case](sealed, tmp_path), cwd=tmp_path)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
    assert "sealed batch" in r.stderr and "never writes inside another artifact" in r.stderr, r.stderr
    assert snapshot(sealed) == before


def test_an_arenas_folder_takes_new_recordings_but_no_other_output(tmp_path: Path):
    """An arena's seal leaves recordings out (its folder is often the shared `recordings`): a run still goes there
    and the arena still holds; a report file or Inspect logs written there would break its seal, so they are refused
    in one line with nothing written."""
    arena = tmp_path / "recordings"
    arena.mkdir()
    (arena / "arena.jsonl").write_text("")
    seal(arena, "arena", skip_recordings=True)
    for args in (["report", str(ROOT / "docs" / "sample_results.csv"), "--json", str(arena / "r.json")],
                 ["export", str(SAMPLE), "--inspect", str(arena / "logs")]):
        before = snapshot(arena)
        r = cli(*args, cwd=tmp_path)
        assert r.returncode == 2 and "sealed arena" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert snapshot(arena) == before
    r = cli("run", "--game", "breakout", "--agent", "random", "--frames", "30", "--quiet", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert cli("verify", "--quick", str(arena), cwd=tmp_path).returncode == 0
