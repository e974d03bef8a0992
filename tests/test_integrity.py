"""The fast integrity check: digests in the summary, `verify --quick`, and info/open/replay: flagging damage."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import pytest

from tests.tui_helpers import run_async
from workstation.game.protocol import Protocol
from workstation.run.drive import drive
from workstation.run.start import RunSpec, start_run
from workstation.store.recording import Recording, RecordingError

ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "workstation", *args], capture_output=True, text=True,
                          timeout=120, env=ENV)


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("good")
    engine = start_run(RunSpec("breakout", protocol=Protocol(frames=240), out=str(out)), rewindable=False)
    try:
        drive(engine)
    finally:
        engine.close()
    return engine.writer.path


def _flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset % len(data)] ^= 0x5A
    path.write_bytes(bytes(data))


def _edit_summary(path: Path, **changes) -> None:
    s = json.loads((path / "summary.json").read_text())
    (path / "summary.json").write_text(json.dumps({**s, **changes}, indent=1))


DAMAGE = {
    "frames.idx flipped": (lambda p: _flip(p / "frames.idx", 100), "frames.idx"),
    "frames.bin flipped": (lambda p: _flip(p / "frames.bin", 999), "frames.bin"),
    "frames.ram flipped": (lambda p: _flip(p / "frames.ram", 1000), "frames.ram"),
    "frames.pal flipped": (lambda p: _flip(p / "frames.pal", 5), "frames.pal"),
    "manifest edited": (lambda p: (p / "manifest.json").write_text(
        (p / "manifest.json").read_text().replace('"seed": 0', '"seed": 1')), "manifest.json"),
    "turns truncated": (lambda p: (p / "turns.jsonl").write_bytes((p / "turns.jsonl").read_bytes()[:-150]),
                        "turns.jsonl"),
    "turns emptied": (lambda p: (p / "turns.jsonl").write_bytes(b""), "turns.jsonl"),
    "a file removed": (lambda p: (p / "frames.ram").unlink(), "frames.ram is missing"),
    "total_reward forged": (lambda p: _edit_summary(p, total_reward=9999), "total_reward 9999"),
    "turn count forged": (lambda p: _edit_summary(p, turns=3), "says 3 turns"),
    # each field of the summary holds to what it must agree with: the manifest, the turns, the budget
    "agent forged": (lambda p: _edit_summary(p, agent="openai:gpt-5"), "agent 'openai:gpt-5' is not the manifest's"),
    "cost forged": (lambda p: _edit_summary(p, cost_usd=1e6), "cost_usd 1e+06 contradicts"),
    "calls forged": (lambda p: _edit_summary(p, calls=7), "calls 7 contradict the turns' 0"),
    "usage forged": (lambda p: _edit_summary(p, usage={"input_tokens": 5}), "usage input_tokens 5"),
    "cost unpriced": (lambda p: _edit_summary(p, cost_usd=None), "cost_usd is null"),
    "wall_s absurd": (lambda p: _edit_summary(p, wall_s=1e308), "wall_s is 1e+308, outside"),
    "wall_s negative": (lambda p: _edit_summary(p, wall_s=-3), "wall_s is -3, outside"),
    "total_reward NaN": (lambda p: _edit_summary(p, total_reward=float("nan")), "total_reward is nan"),
    "complete false": (lambda p: _edit_summary(p, complete=False), "says complete false, but the run played"),
    "complete while stopped": (lambda p: _edit_summary(p, stopped="stopped by the user"),
                               "says complete, but the run did not play its budget"),
    "unknown key": (lambda p: _edit_summary(p, score=99), "summary.json holds 'score'"),
    "invalid_turns forged": (lambda p: _edit_summary(p, invalid_turns=4), "invalid_turns is 4; the turns count 0"),
}


def _damaged(good: Path, tmp_path: Path, how: str) -> Path:
    path = tmp_path / "damaged"
    shutil.copytree(good, path)
    DAMAGE[how][0](path)
    return path


def test_the_summary_holds_every_files_digest(good):
    rec = Recording(good)
    files = rec.summary_record.files
    assert set(files) == {p.name for p in good.iterdir() if p.name != "summary.json"}
    assert all(len(f["sha256"]) == 64 and f["bytes"] == (good / n).stat().st_size for n, f in files.items())
    assert rec.problems() == [] and rec.damage() is None
    r = cli("verify", "--quick", str(good))
    assert r.returncode == 0 and r.stdout.startswith("OK (quick): 6 files match their digests"), r.stdout


@pytest.mark.parametrize("how", sorted(DAMAGE))
def test_every_kind_of_damage_is_found_without_re_execution(good, tmp_path, how):
    path = _damaged(good, tmp_path, how)
    said = DAMAGE[how][1]
    damage = Recording(path).damage()
    assert damage is not None and said in damage, damage
    r = cli("verify", "--quick", str(path))
    assert r.returncode == 1 and r.stdout.startswith("DAMAGED: ") and said in r.stdout, r.stdout
    assert len(r.stdout.strip().splitlines()) == 1
    r = cli("info", str(path))
    assert "Traceback" not in r.stderr
    if r.returncode != 2:  # a file the reader cannot parse at all is already a one-line error (exit 2)
        assert r.returncode == 1 and "DAMAGED" in r.stdout and "complete" not in r.stdout.split("DAMAGED")[0]
        assert "damaged recording" in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("how", ["turns truncated", "total_reward forged", "frames.bin flipped"])
def test_replay_refuses_a_damaged_recording(good, tmp_path, how):
    path = _damaged(good, tmp_path, how)
    r = cli("run", "--game", "breakout", "--agent", f"replay:{path}", "--frames", "30", "--out", str(tmp_path / "o"))
    assert r.returncode == 1 and "cannot replay it: damaged recording" in r.stderr, r.stderr  # damaged: exit 1
    assert len(r.stderr.strip().splitlines()) == 1
    assert not list((tmp_path / "o").glob("*/manifest.json"))  # nothing was recorded


def test_a_sound_recording_replays(good, tmp_path):
    r = cli("run", "--game", "breakout", "--agent", f"replay:{good}", "--frames", "240", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert Recording(Path(r.stdout.splitlines()[0])).turn_records[5].actions == Recording(good).turn_records[5].actions


def test_a_recording_before_digests_gets_the_agreement_checks(good, tmp_path):
    path = tmp_path / "old"
    shutil.copytree(good, path)
    s = json.loads((path / "summary.json").read_text())
    del s["files"]
    (path / "summary.json").write_text(json.dumps(s))
    r = cli("verify", "--quick", str(path))
    assert r.returncode == 0 and "written before digests" in r.stdout
    _edit_summary(path, frames=17)
    r = cli("verify", "--quick", str(path))
    assert r.returncode == 1 and "the summary says 17 frames" in r.stdout


def test_an_interrupted_run_still_passes_and_an_old_summary_lacking_fields_too(tmp_path):
    """A run stopped early (complete false, fewer turns, stopped said) agrees with itself; so does a summary
    written before the account fields (calls, usage, cost): what it lacks is filled in from the turns."""
    engine = start_run(RunSpec("breakout", protocol=Protocol(frames=240), out=str(tmp_path)), rewindable=False)
    try:
        for _ in range(3):
            engine.run_turn()
        engine.stop()
    finally:
        engine.close()
    path = engine.writer.path
    s = Recording(path).summary_record
    assert s is not None and not s.complete and s.turns == 3 and s.stopped == "stopped by the user"
    r = cli("verify", "--quick", str(path))
    assert r.returncode == 0 and r.stdout.startswith("OK (quick)"), r.stdout
    raw = json.loads((path / "summary.json").read_text())
    for key in ("calls", "usage", "cost_usd", "failed_turns", "games_ended", "files"):
        del raw[key]
    (path / "summary.json").write_text(json.dumps(raw))
    assert Recording(path).problems() == []
    _edit_summary(path, stopped=None)  # fewer frames than the budget: still not complete, and not a contradiction
    assert Recording(path).problems() == []


@pytest.mark.parametrize("cmd", [("verify",), ("verify", "--quick"), ("info",), ("info", "--json")])
def test_a_summary_that_is_not_json_is_damage_exit_1(good, tmp_path, cmd):
    path = tmp_path / "bad"
    shutil.copytree(good, path)
    (path / "summary.json").write_text('{"complete": ')
    r = cli(*cmd, str(path))
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert r.stderr.startswith("workstation: error: damaged recording: ") and "summary.json" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_nothing_to_check_is_not_ok(tmp_path):
    engine = start_run(RunSpec("breakout", protocol=Protocol(frames=30), out=str(tmp_path)), rewindable=False)
    engine.close()
    path = engine.writer.path
    for name in ("frames.bin", "frames.idx", "frames.ram", "frames.pal", "turns.jsonl"):
        (path / name).unlink(missing_ok=True)
    r = cli("verify", "--quick", str(path))
    assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr


def test_verify_of_a_file_says_it_is_a_file(good):
    for cmd in (("verify",), ("verify", "--quick"), ("info",)):
        r = cli(*cmd, str(good / "summary.json"))
        assert r.returncode == 2 and "is a file, not a recording" in r.stderr, r.stderr
    with pytest.raises(RecordingError, match="is a file"):
        Recording(good / "manifest.json")


@run_async
async def test_open_flags_a_damaged_recording_in_its_title_and_status(good, tmp_path):
    from textual.widgets import Static

    from screens.app import make_app

    path = _damaged(good, tmp_path, "turns truncated")
    app = make_app("open", Namespace(recording=str(path)))
    async with app.run_test(size=(160, 40)):
        screen = app.screen
        title = str(screen.query_one("#title", Static).render())
        status = str(screen.query_one("#status", Static).render())
        assert "DAMAGED" in title and "complete" not in title
        assert "DAMAGED" in status and "turns.jsonl" in status


@run_async
async def test_open_of_a_recording_with_no_turns_says_so(good, tmp_path):
    from textual.widgets import Static

    from screens.app import make_app

    path = _damaged(good, tmp_path, "turns emptied")
    app = make_app("open", Namespace(recording=str(path)))
    async with app.run_test(size=(160, 40)):
        status = str(app.screen.query_one("#status", Static).render())
        assert "no turns recorded" in status and "turn -1" not in status and "DAMAGED" in status


@pytest.mark.parametrize("how", ["agent forged", "complete false", "unknown key", "wall_s absurd"])
def test_ls_lists_a_summary_that_contradicts_its_manifest_as_damaged(good, tmp_path, how):
    """`ls` holds the summary to its manifest as the fast check does: the run is listed as damaged, never complete,
    and `--complete` leaves it out."""
    path = _damaged(good, tmp_path, how)
    r = subprocess.run([sys.executable, "-m", "workstation", "ls", str(path.parent)], capture_output=True, text=True,
                       timeout=120, env={**ENV, "WORKSTATION_INDEX_CACHE": "off"})
    assert r.returncode == 0, r.stderr
    row = next(line for line in r.stdout.splitlines() if str(path) in line)
    assert "damaged" in row.split() and "complete" not in row, row
    r = subprocess.run([sys.executable, "-m", "workstation", "ls", str(path.parent), "--complete"], capture_output=True,
                       text=True, timeout=120, env={**ENV, "WORKSTATION_INDEX_CACHE": "off"})
    assert r.returncode == 0 and str(path) not in r.stdout, r.stdout


def test_a_match_summary_is_held_to_its_seats_and_each_sides_account(tmp_path):
    from workstation.run.match_start import MatchSpec, start_match

    engine = start_match(MatchSpec("pong", "random", "random", 1, Protocol(frames=30), str(tmp_path / "m")))
    try:
        engine.run()
    finally:
        engine.close()
    path = engine.writer.path
    assert Recording(path).problems() == []
    s = json.loads((path / "summary.json").read_text())
    forged = {
        "agent": ({**s, "agent": "random vs openai:gpt-5"}, "agent 'random vs openai:gpt-5' is not the manifest's"),
        "side calls": ({**s, "players": [{**s["players"][0], "calls": 9}, s["players"][1]]},
                       "side 1's calls 9 contradict"),
        "side cost": ({**s, "players": [s["players"][0], {**s["players"][1], "cost_usd": 3.0}]},
                      "side 2's cost_usd 3 contradicts"),
    }
    for name, (summary, says) in forged.items():
        d = tmp_path / name.replace(" ", "_")
        shutil.copytree(path, d)
        (d / "summary.json").write_text(json.dumps(summary))
        damage = Recording(d).damage()
        assert damage is not None and says in damage, (name, damage)
