"""Write errors end a run with one line and exit 1, and keep what was recorded (real files, a real
file-size limit set on the child process: writes past it fail with EFBIG as a full disk would)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

from workstation.store.recording import Recording

ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}


def _limited(limit: int):
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def test_a_file_size_limit_mid_run_stops_it_with_one_line(tmp_path):
    p = subprocess.run([sys.executable, "-m", "workstation", "run", "--game", "seaquest", "--frames", "20000",
                        "--out", str(tmp_path)], capture_output=True, text=True, env=ENV,
                       preexec_fn=_limited(120_000), timeout=300)
    assert p.returncode == 1, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    assert "cannot write the recording" in lines[0] and "File too large" in lines[0]
    (path,) = [d for d in tmp_path.iterdir() if d.is_dir()]
    assert str(path) in lines[0] or path.name in lines[0]
    rec = Recording(path)
    assert not rec.complete and len(rec.turn_records) > 10, "what was written before the failure is kept"
    summary = rec.summary_or_partial()
    assert summary["complete"] is False


def test_a_removed_output_directory_is_one_line(tmp_path):
    # the run directory disappears after the run starts: the summary cannot be written
    code = (
        "import shutil, sys\n"
        "from workstation.run.start import RunSpec, start_run\n"
        "from workstation.game.protocol import Protocol\n"
        "from workstation.cli import main\n"
        "import workstation.store.recording as r\n"
        "orig = r.RecordingWriter.add_turn\n"
        "def add_turn(self, record):\n"
        "    orig(self, record)\n"
        "    if getattr(record, 'turn', None) == 5: shutil.rmtree(self.path)\n"
        "r.RecordingWriter.add_turn = add_turn\n"
        f"sys.exit(main(['run', '--game', 'breakout', '--frames', '90', '--out', {str(tmp_path)!r}]))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, timeout=120)
    assert p.returncode == 1, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr, p.stderr
    assert "cannot write the recording" in p.stderr
