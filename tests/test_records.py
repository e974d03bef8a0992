"""Typed records: the JSON keys kept exactly, the format checked, bad fields named, stopped summaries complete."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.agents_for_tests import ScriptedAgent
from workstation.game.protocol import Protocol
from workstation.run.drive import drive
from workstation.run.start import RunSpec, start_run
from workstation.store.recording import Recording, RecordingError
from workstation.store.records import Manifest, Summary, TurnRecord

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = Path(__file__).resolve().parent / "data" / "rule1-breakout-random-s0"  # made before game-over rule 2
ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}
GAME_OVER_KEYS = {"game_over", "cut_frames", "dropped", "reset_frame"}


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workstation", *args], capture_output=True, text=True,
                          timeout=120, env=ENV)


def test_the_sample_reads_back_typed_with_its_keys_unchanged():
    rec = Recording(SAMPLE)
    assert rec.manifest_record.to_json() == rec.raw_manifest()
    assert rec.summary_record.to_json() == rec.raw_summary()
    for raw, typed in zip(rec.raw_turns(), rec.turn_records):
        out = typed.to_json()
        assert {k: out[k] for k in raw} == raw  # every key kept, with its value
        assert set(out) - set(raw) <= GAME_OVER_KEYS  # written before game-over handling: defaults added
    m = rec.manifest_record
    assert m.rule_version == 1 and m.game == "breakout" and m.budget == 900
    assert not any(t.game_over for t in rec.turn_records)


def test_a_new_run_writes_what_the_records_read(tmp_path):
    engine = start_run(RunSpec("breakout", protocol=Protocol(frames=60), out=str(tmp_path)), rewindable=False)
    try:
        drive(engine)
    finally:
        engine.close()
    rec = Recording(engine.writer.path)
    assert rec.manifest_record.to_json() == rec.raw_manifest()
    assert rec.summary_record.to_json() == rec.raw_summary()
    assert [t.to_json() for t in rec.turn_records] == rec.raw_turns()
    assert rec.manifest_record.rule_version == 2


def _copy(tmp_path: Path) -> Path:
    dst = tmp_path / "copy"
    shutil.copytree(SAMPLE, dst)
    return dst


@pytest.mark.parametrize("fmt, said", [
    ("atari-workstation/2", "newer than this workstation reads"),
    ("something-else/1", "unknown format"),
    (7, "unknown format"),
])
def test_a_recording_of_another_format_is_one_line(tmp_path, fmt, said):
    path = _copy(tmp_path)
    m = json.loads((path / "manifest.json").read_text())
    (path / "manifest.json").write_text(json.dumps({**m, "format": fmt}))
    with pytest.raises(RecordingError, match=said):
        Recording(path)
    for cmd in ("info", "verify"):
        r = cli(cmd, str(path))
        assert r.returncode == 2 and said in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert "Traceback" not in r.stderr


def test_a_field_of_the_wrong_type_is_named(tmp_path):
    path = _copy(tmp_path)
    lines = (path / "turns.jsonl").read_text().splitlines()
    bad = json.loads(lines[3])
    bad["actions"] = 5
    lines[3] = json.dumps(bad)
    (path / "turns.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(RecordingError, match=r"turn record 4: field 'actions' is an integer, not a list"):
        _ = Recording(path).turn_records
    with pytest.raises(RecordingError, match="field 'total_reward' is text"):
        s = json.loads((path / "summary.json").read_text())
        (path / "summary.json").write_text(json.dumps({**s, "total_reward": "lots"}))
        Recording(path)
    r = cli("request", str(path), "--turn", "5")
    # summary.json is the workstation's own: a field of the wrong type is a damaged recording (exit 1), named
    assert r.returncode == 1 and "Traceback" not in r.stderr and "damaged recording" in r.stderr


def test_unknown_keys_survive_a_round_trip():
    t = TurnRecord.from_json({"turn": 3, "actions": ["fire"], "action_frames": [3], "action_rewards": [0.0],
                              "action_life_lost": [False], "from_the_future": {"x": 1}})
    assert t.to_json()["from_the_future"] == {"x": 1} and t.action_reset == [False]


def test_a_stopped_run_summary_carries_usage_cost_and_calls(tmp_path):
    agent = ScriptedAgent(["move: [fire, left]"], cost=0.01)
    engine = start_run(RunSpec("breakout", protocol=Protocol(frames=300), out=str(tmp_path)), agent=agent,
                       rewindable=False)
    try:
        for _ in range(3):
            engine.run_turn()
        engine.stop("stopped by the test")
    finally:
        engine.close()
    rec = Recording(engine.writer.path)
    s = rec.outcome()
    assert not s.complete and s.stopped == "stopped by the test" and s.state == "stopped"
    assert s.turns == 3 and s.calls == 3 and s.cost_usd == pytest.approx(0.03)
    assert s.usage["input_tokens"] == 300 and s.usage["output_tokens"] == 30
    # a summary an abort wrote with only the reason gets the rest from the turns
    (rec.path / "summary.json").write_text(json.dumps({"complete": False, "stopped": "aborted by hand"}))
    s = Recording(rec.path).outcome()
    assert s.stopped == "aborted by hand" and s.calls == 3 and s.cost_usd == pytest.approx(0.03)
    assert s.usage["output_tokens"] == 30 and s.turns == 3 and s.invalid_turns == 0 and s.failed_turns == 0


def test_a_killed_run_rebuilds_every_field_a_finished_one_has(tmp_path):
    p = subprocess.Popen([sys.executable, "-m", "workstation", "run", "--game", "seaquest", "--frames", "100000",
                          "--out", str(tmp_path), "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
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
    s = rec.outcome()
    assert s.state == "unfinished" and not s.complete and s.stopped.startswith("unfinished")
    finished = Summary.from_json(json.loads((SAMPLE / "summary.json").read_text()))
    for key in Summary.CORE:  # the same fields as a finished run's
        assert key in s.to_json(), key
    assert s.usage.keys() == finished.usage.keys() and s.calls == 0 and s.cost_usd == 0.0
    assert s.games_ended is not None  # rule 2: the games that ended are counted
    assert rec.problems() == []  # a killed run is incomplete, not damaged


def test_the_manifest_experience_is_typed_checked_and_written_back_unchanged():
    from workstation.store.records import RecordError

    exp = {"dir": "/x", "model": "m", "every": 5, "start_digest": "abc", "rules": ["r1"], "slot": "", "bounds": {}}
    m = Manifest.from_json({"run_id": "r", "experience": exp})
    assert m.experience is not None and (m.experience.rules, m.experience.every) == (["r1"], 5)
    assert m.to_json()["experience"] == exp  # kept as stored
    assert Manifest.from_json({"run_id": "r"}).experience is None
    assert Manifest.from_json({"experience": {"every": 5}}).experience.rules == []  # a key missing reads empty
    for bad, field in (({"every": "5"}, "experience.every"), ({"rules": ["a", 1]}, "experience.rules[1]"),
                       ("lib", "experience")):
        with pytest.raises(RecordError, match=field.replace("[", r"\[")):
            Manifest.from_json({"experience": bad})
