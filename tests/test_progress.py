"""Headless progress on stderr: a plain line every few seconds off a terminal, a bar on one
(an injected clock: the test never depends on the machine's speed)."""

from __future__ import annotations

import io
import subprocess
import sys

from workstation.game.protocol import Protocol
from workstation.run.drive import drive
from workstation.run.progress import RunProgress
from workstation.run.start import RunSpec, start_run


def _run_with(tmp_path, tty: bool, step_s: float):
    now = [0.0]
    engine = start_run(RunSpec(game="breakout", out=str(tmp_path), protocol=Protocol(frames=90)), rewindable=False)
    out = io.StringIO()
    progress = RunProgress(engine, out, tty=tty, clock=lambda: now[0])

    def tick(ev):
        now[0] += step_s

    engine.observers[:0] = [tick]
    engine.observers.append(progress)
    drive(engine)
    engine.close()
    return out.getvalue(), engine


def test_off_a_terminal_one_line_every_five_seconds(tmp_path):
    text, engine = _run_with(tmp_path, tty=False, step_s=0.1)  # the injected clock moves 0.1 s per event
    lines = text.splitlines()
    assert lines and all("frame" in line and "breakout seed 0" in line for line in lines)
    assert "\r" not in text
    assert 1 < len(lines) < engine.turn, "rate-limited, not a line per turn"


def test_on_a_terminal_a_bar_redrawn_in_place(tmp_path):
    text, _ = _run_with(tmp_path, tty=True, step_s=1.0)
    assert text.count("\r\x1b[2K") > 1 and "[" in text and text.endswith("\n")


def test_quiet_prints_no_progress(tmp_path):
    p = subprocess.run([sys.executable, "-m", "workstation", "run", "--game", "breakout", "--frames", "30",
                        "--out", str(tmp_path), "--quiet"], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and p.stderr == "" and len(p.stdout.splitlines()) == 1
