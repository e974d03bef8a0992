"""TUI commands without a terminal, as subprocesses (the place a TTY matters): `play`, `watch`, `session`,
`open`, `compare` and `qa curate` refuse in one line, exit 2, before anything is written. Also: a replay under
another start warns and records it; the catch-all for OSError names the path and keeps programming errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "recordings" / "sample" / "breakout-random-s0"
QA = ROOT / "recordings" / "qa-sample"

CASES = {
    "play": ["play", "--game", "breakout", "--out", "{t}/p"],
    "watch": ["watch", "--game", "breakout", "--agent", "random", "--out", "{t}/p"],
    "watch-step": ["watch", "--game", "breakout", "--step", "--out", "{t}/p"],
    "session": ["session", "--participant", "P1", "--games", "breakout", "--seeds", "0", "--out", "{t}/s"],
    "open": ["open", str(SAMPLE)],
    "compare": ["compare", str(SAMPLE), str(SAMPLE)],
    "qa-curate": ["qa", "curate", str(QA)],
}


@pytest.mark.parametrize("stdin_tty", [False, True], ids=["stdin-pipe", "stdin-tty"])
@pytest.mark.parametrize("name", list(CASES))
def test_a_tui_command_without_a_terminal_refuses_in_one_line(name, stdin_tty, tmp_path):
    args = [a.replace("{t}", str(tmp_path)) for a in CASES[name]]
    if stdin_tty:  # a terminal on stdin, stdout piped (`workstation play | tee log`)
        import pty

        master, slave = pty.openpty()
        stdin = slave
    else:
        stdin = subprocess.DEVNULL
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        r = subprocess.run([sys.executable, "-m", "workstation", *args], stdin=stdin, capture_output=True,
                           text=True, timeout=60, cwd=tmp_path, env=env)
    finally:
        if stdin_tty:
            os.close(master)
            os.close(slave)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs a terminal" in lines[0] and "Traceback" not in r.stderr, r.stderr
    assert "stdout" in lines[0]
    assert list(tmp_path.iterdir()) == []  # no recording, no session.json


def test_a_replay_under_another_start_warns_and_records_it(tmp_path, capsys):
    from workstation.cli import main

    code = main(["run", "--game", "breakout", "--agent", f"replay:{SAMPLE}", "--start", "noops:5", "--frames", "30",
                 "--quiet", "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 0
    assert err.count("\n") == 1 and "warning: replayed under another start" in err and "start noops:5" in err
    manifest = json.loads((Path(out.strip()) / "manifest.json").read_text())
    assert "start noops:5" in manifest["replay_note"]
    same = main(["run", "--game", "breakout", "--agent", f"replay:{SAMPLE}", "--frames", "30", "--quiet",
                 "--out", str(tmp_path)])
    out, err = capsys.readouterr()
    assert same == 0 and err == ""
    assert "replay_note" not in json.loads((Path(out.strip()) / "manifest.json").read_text())


def test_an_os_error_about_a_path_is_one_line_and_others_keep_their_traceback(monkeypatch, capsys):
    import workstation.cli as cli
    from workstation.commands import run as run_command

    def boom(a):
        raise NotADirectoryError(20, "Not a directory", "/some/file/inside")

    monkeypatch.setattr(run_command, "_games", lambda a: boom(a))
    assert cli.main(["games"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "/some/file/inside" in err and "Not a directory" in err
    monkeypatch.setattr(run_command, "_games", lambda a: (_ for _ in ()).throw(OSError("no path")))
    with pytest.raises(OSError):
        cli.main(["games"])
    monkeypatch.setattr(run_command, "_games", lambda a: (_ for _ in ()).throw(KeyError("bug")))
    with pytest.raises(KeyError):
        cli.main(["games"])
