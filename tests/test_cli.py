"""The CLI contract other tools rely on: paths, one-line errors, exit codes, no Textual."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workstation.run.verify import verify
from workstation.store.recording import Recording

ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workstation", *args], capture_output=True, text=True,
                          timeout=timeout, env=ENV)


def test_run_prints_path_and_summary_and_verify_info_work(tmp_path):
    r = cli("run", "--game", "Breakout", "--agent", "random", "--seed", "0", "--out", str(tmp_path), "--frames", "90")
    assert r.returncode == 0, r.stderr
    path, summary = r.stdout.strip().splitlines()
    assert Path(path).parent == tmp_path and (Path(path) / "summary.json").exists()
    assert "breakout seed=0 agent=random" in summary and "frames=90" in summary and "complete" in summary
    assert r.stderr == ""
    v = cli("verify", path)
    assert v.returncode == 0 and "91 frames identical" in v.stdout
    i = cli("info", path, "--json")
    assert json.loads(i.stdout)["summary"]["frames"] == 90
    q = cli("request", path, "--turn", "2")
    assert q.returncode == 0 and "[image: frame" in q.stdout


@pytest.mark.parametrize("args, needle", [
    (["run", "--game", "pong"], "unknown game 'pong'"),
    (["run", "--game", "breakout", "--start", "random"], "bad --start"),
    (["run", "--game", "breakout", "--max-actions", "12"], "--max-actions must be 1..10"),
    (["run", "--game", "breakout", "--agent", "gpt"], "unknown agent"),
    (["run", "--game", "breakout", "--prompts", "/nonexistent/pack"], "prompt pack"),
    (["run", "--game", "breakout", "--frames", "x"], "invalid int value"),
    (["verify", "/nonexistent/rec"], "/nonexistent/rec"),
    (["info", "/tmp"], "not a recording"),
    (["frobnicate"], "invalid choice"),
    (["run", "--game", "seaquest", "--agent", "replay:recordings/sample/breakout-random-s0"], "--game breakout"),
])
def test_bad_input_is_one_line_and_exit_2(args, needle):
    r = cli(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], r.stderr
    assert "Traceback" not in r.stderr


def test_games_lists_all_21():
    r = cli("games")
    assert r.returncode == 0
    rows = [line for line in r.stdout.splitlines() if line and line.split()[0] in {
        "air_raid", "assault", "beam_rider", "boxing", "breakout", "demon_attack", "fishing_derby", "freeway",
        "gopher", "ice_hockey", "journey_escape", "laser_gates", "name_this_game", "pacman", "phoenix", "qbert",
        "riverraid", "robotank", "seaquest", "tennis", "time_pilot"}]
    assert len(rows) == 21
    assert "not in the paper" in next(r for r in rows if r.startswith("ice_hockey"))


def test_headless_run_never_imports_textual(tmp_path):
    code = ("import sys; from workstation.cli import main; "
            f"main(['run','--game','breakout','--frames','9','--out',{str(tmp_path)!r},'--quiet']); "
            "bad=[m for m in sys.modules if m.split('.')[0] in ('textual','screens')]; "
            "print('IMPORTED', bad)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "IMPORTED []" in r.stdout, r.stdout + r.stderr


def test_a_killed_run_leaves_a_readable_incomplete_recording(tmp_path):
    p = subprocess.Popen([sys.executable, "-m", "workstation", "run", "--game", "seaquest", "--frames", "108000",
                          "--out", str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    deadline = time.monotonic() + 60
    turns = None
    while time.monotonic() < deadline:
        found = list(tmp_path.glob("*/turns.jsonl"))
        if found and found[0].stat().st_size > 20_000:
            turns = found[0]
            break
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait(10)
    assert turns is not None, "the run never wrote turns"
    rec = Recording(turns.parent)
    assert rec.summary_record is None and not rec.complete
    s = rec.outcome()  # rebuilt from the turns
    assert s.complete is False and s.turns == len(rec.turn_records) > 10
    assert len(rec.frames) >= rec.turn_records[-1].end_frame + 1
    rec.frames.rgb(len(rec.frames) - 1)
    assert verify(rec).ok, "the recorded prefix re-executes exactly"
    r = cli("info", str(turns.parent))
    assert r.returncode == 0 and "INCOMPLETE" in r.stdout


def test_request_for_a_recording_without_turns_says_so(tmp_path):
    from workstation.game.protocol import Protocol
    from workstation.run.request import rebuild_prompt
    from workstation.run.start import RunSpec, start_run
    from workstation.store.recording import RecordingError

    e = start_run(RunSpec(game="breakout", out=str(tmp_path), protocol=Protocol(frames=30)))
    e.start()
    e.writer.frames.flush()  # a run killed before its first turn ended
    with pytest.raises(RecordingError, match=r"no turn 0; it has no turns yet$"):
        rebuild_prompt(Recording(e.writer.path), 0)
    e.close()


def test_a_replay_past_its_source_says_how_many_turns_idled(tmp_path, capsys):
    """A replay under a longer budget than its source's plays noop after the source's last turn, and says so."""
    from workstation.cli import main

    assert main(["run", "--game", "breakout", "--frames", "60", "--out", str(tmp_path), "--quiet"]) == 0
    source = capsys.readouterr().out.strip().splitlines()[-1]
    n = len(Recording(Path(source)).turn_records)
    assert main(["run", "--game", "breakout", "--frames", "60", "--agent", f"replay:{source}", "--out",
                 str(tmp_path / "same"), "--quiet"]) == 0
    assert "played noop" not in capsys.readouterr().err  # the same budget: nothing idles
    assert main(["run", "--game", "breakout", "--frames", "120", "--agent", f"replay:{source}", "--out",
                 str(tmp_path / "longer"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert f"the replayed recording had {n} turns" in err and "played noop" in err, err
