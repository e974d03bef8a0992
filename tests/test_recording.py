"""Recordings of real emulator runs: finished, aborted, cut short, killed, branched."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from workstation.store.framestore import DATA_FILE
from workstation.store.index import find_recordings
from workstation.store.recording import UNFINISHED, Recording, RecordingError, RecordingWriter

ROOT = Path(__file__).resolve().parents[1]

# The run used throughout, as a script so a subprocess can play it too: Breakout,
# a fixed action sequence, one turn record per 3 frames.
RUN = textwrap.dedent("""
    import random
    import ale_py, gymnasium

    def play(frames, seed=0):
        gymnasium.register_envs(ale_py)
        env = gymnasium.make("ALE/Breakout-v5", frameskip=1, repeat_action_probability=0.0,
                             full_action_space=False)
        ale = env.unwrapped.ale
        rng = random.Random(seed)
        obs, _ = env.reset(seed=seed)
        yield ale.getScreen(), obs, ale.getRAM(), None
        lives = ale.lives()
        turn = {"reward": 0.0, "lives_lost": 0}
        for frame in range(1, frames + 1):
            if frame % 3 == 1:
                action = rng.randrange(4)
            obs, reward, terminated, truncated, info = env.step(action)
            if terminated or truncated:
                obs, _ = env.reset()
            turn["reward"] += reward
            turn["lives_lost"] += max(0, lives - info["lives"])
            lives = info["lives"]
            record = None
            if frame % 3 == 0:
                record = {**turn, "turn": frame // 3, "end_frame": frame, "action": action,
                          "valid": frame % 30 != 0, "reply": "move → left"}
                turn = {"reward": 0.0, "lives_lost": 0}
            yield ale.getScreen(), obs, ale.getRAM(), record
""")
namespace: dict = {}
exec(RUN, namespace)
play = namespace["play"]

MANIFEST = {"game": "breakout", "seed": 0, "agent": {"kind": "random", "spec": "random"}, "protocol": {}}  # an object, as every writer writes it (a string is refused as damage)


def record(directory: Path, frames: int = 300) -> tuple[RecordingWriter, list]:
    """Write a run into ``directory`` without finishing it; returns the writer and what it saw."""
    writer = RecordingWriter(directory, MANIFEST, 210)
    seen = []
    for screen, rgb, ram, turn in play(frames):
        writer.add_frame(screen, rgb, ram)
        if turn:
            writer.add_turn(turn)
        seen.append((screen, rgb, ram, turn))
    return writer, seen


def assert_frames(recording: Recording, seen: list) -> None:
    frames = recording.frames
    for i in range(len(frames)):
        screen, rgb, ram, _ = seen[i]
        assert np.array_equal(frames.indices(i), screen), f"frame {i}"
        assert np.array_equal(frames.ram(i), ram), f"frame {i}"
    for i in (0, len(frames) // 2, len(frames) - 1):
        assert np.array_equal(frames.rgb(i), seen[i][1])


def test_finished_run_reads_back(tmp_path):
    writer, seen = record(tmp_path / "run", frames=900)
    writer.finish({"game": "breakout", "total_reward": 3.0})
    rec = Recording(tmp_path / "run")
    summary = dict(rec.raw_summary())  # the JSON as written
    files = summary.pop("files")  # every file's size and digest, for the fast integrity check
    assert rec.complete and summary == {"complete": True, "game": "breakout", "total_reward": 3.0}
    assert set(files) == set(rec.summary_record.files) == {"manifest.json", "turns.jsonl", "frames.bin", "frames.idx",
                                                          "frames.pal", "frames.ram"}
    assert rec.raw_manifest() == MANIFEST
    assert rec.raw_turns() == [t for *_, t in seen if t]
    assert rec.turn_records[0].extra["reply"] == "move → left"
    assert len(rec.frames) == 901
    assert_frames(rec, seen)
    assert rec.size_bytes() == sum(p.stat().st_size for p in (tmp_path / "run").iterdir())
    assert rec.size_bytes() < 1_000_000  # the budget for a random 900-frame Breakout run
    line = (tmp_path / "run" / "turns.jsonl").read_text(encoding="utf-8").splitlines()[0]
    assert ", " not in line and ": " not in line  # compact JSON
    assert not list((tmp_path / "run").glob(".*tmp"))


def test_finish_keeps_an_explicit_incomplete_and_abort_says_why(tmp_path):
    writer, _ = record(tmp_path / "a", frames=30)
    writer.finish({"complete": False, "stopped": "budget"})
    assert not Recording(tmp_path / "a").complete
    writer, _ = record(tmp_path / "b", frames=30)
    writer.abort({"stopped": "user quit", "complete": True})
    summary = dict(Recording(tmp_path / "b").raw_summary())
    summary.pop("files")
    assert summary == {"stopped": "user quit", "complete": False}
    with pytest.raises(RecordingError, match="already finished"):
        writer.add_turn({"turn": 99})
    with pytest.raises(RecordingError, match="already finished"):
        writer.finish({})


def test_exception_inside_with_block_aborts(tmp_path):
    with pytest.raises(KeyError):
        with RecordingWriter(tmp_path, MANIFEST, 210):
            raise KeyError("boom")
    summary = dict(Recording(tmp_path).raw_summary())
    summary.pop("files")
    assert summary == {"stopped": "error: KeyError", "complete": False}


def test_cut_short_recording_reads_as_partial(tmp_path):
    writer, seen = record(tmp_path, frames=300)
    writer.frames.close()
    turns = (tmp_path / "turns.jsonl").read_bytes()
    (tmp_path / "turns.jsonl").write_bytes(turns + b'{"turn":101,"reward":5,"end_fr')  # half a line
    data = (tmp_path / DATA_FILE).read_bytes()
    (tmp_path / DATA_FILE).write_bytes(data[: len(data) * 2 // 3 + 3])  # mid-block
    rec = Recording(tmp_path)
    assert not rec.complete and rec.summary_record is None and rec.raw_summary() is None
    assert len(rec.turn_records) == 100
    assert 0 < len(rec.frames) < 301
    assert_frames(rec, seen)
    partial = rec.summary_or_partial()
    turns = [t for *_, t in seen if t]
    assert partial == {
        "game": "breakout",
        "seed": 0,
        "agent": "random",  # the spec, as a finished run's summary has it
        "total_reward": sum(t["reward"] for t in turns),
        "frames": 300,
        "turns": 100,
        "lives_lost": sum(t["lives_lost"] for t in turns),
        "invalid_turns": 10,
        "complete": False,
        # a rebuilt summary has every field a finished run's has
        "failed_turns": 0, "episodes_ended": 0, "calls": 0, "cost_usd": 0.0, "wall_s": None,
        "usage": {"input_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0, "output_tokens": 0,
                  "reasoning_tokens": 0},
        "stopped": UNFINISHED, "rebuilt": True,
    }


def test_damaged_turn_in_the_middle_is_an_error(tmp_path):
    writer, _ = record(tmp_path, frames=30)
    writer.finish({})
    lines = (tmp_path / "turns.jsonl").read_text().splitlines()
    lines[3] = lines[3][:10]
    (tmp_path / "turns.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(RecordingError, match="line 4 is not valid JSON"):
        _ = Recording(tmp_path).turn_records


def test_killed_writer_process_leaves_a_readable_recording(tmp_path):
    script = RUN + textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from workstation.store.recording import RecordingWriter
        writer = RecordingWriter(Path({str(tmp_path / "run")!r}), {{"game": "breakout"}}, 210)
        for screen, rgb, ram, turn in play(10**9):
            writer.add_frame(screen, rgb, ram)
            if turn:
                writer.add_turn(turn)
                print(turn["turn"], flush=True)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        for line in proc.stdout:
            if int(line) >= 150:
                break
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    rec = Recording(tmp_path / "run")
    assert not rec.complete
    assert len(rec.turn_records) >= 150
    last = rec.turn_records[-1].end_frame
    assert len(rec.frames) >= last + 1  # a turn's frames reach the disk before the turn does
    seen = list(play(len(rec.frames) - 1))
    assert rec.raw_turns() == [t for *_, t in seen if t][: len(rec.turn_records)]
    assert_frames(rec, seen)
    assert rec.summary_or_partial()["frames"] == last


def test_branch_copies_the_prefix(tmp_path):
    writer, seen = record(tmp_path / "parent", frames=300)
    writer.finish({})
    parent = Recording(tmp_path / "parent")
    child = RecordingWriter.branch_from(tmp_path / "child", {"game": "breakout"}, parent, 151, 50)
    other = list(play(60, seed=9))
    for screen, rgb, ram, _ in other[1:]:
        child.add_frame(screen, rgb, ram)
    child.add_turn({"turn": 51, "end_frame": 210})
    child.finish({})
    rec = Recording(tmp_path / "child")
    assert rec.manifest_record.branch == {"parent": str(tmp_path / "parent"), "frames": 151, "turns": 50}
    assert rec.raw_turns() == parent.raw_turns()[:50] + [{"turn": 51, "end_frame": 210}]  # copied as written
    assert len(rec.frames) == 151 + 60
    assert_frames(rec, seen[:151] + other[1:])
    with pytest.raises(RecordingError, match="holds 301 frames"):
        RecordingWriter.branch_from(tmp_path / "bad", {}, parent, 400, 0)
    with pytest.raises(RecordingError, match="holds 100 turns"):
        RecordingWriter.branch_from(tmp_path / "bad", {}, parent, 10, 101)


def test_errors_are_one_clear_line(tmp_path):
    cases = []
    with pytest.raises(RecordingError) as e:
        Recording(tmp_path / "missing")
    cases.append((e.value, "does not exist"))
    with pytest.raises(RecordingError) as e:
        Recording(tmp_path)
    cases.append((e.value, f"not a recording: {tmp_path} (no manifest.json); pass a directory written by"))
    (tmp_path / "manifest.json").write_text('{"game": "breakout",')
    with pytest.raises(RecordingError) as e:
        Recording(tmp_path)
    cases.append((e.value, "manifest.json cannot be read"))
    (tmp_path / "manifest.json").write_text("[1, 2]")
    with pytest.raises(RecordingError) as e:
        Recording(tmp_path)
    cases.append((e.value, "holds list, not a JSON object"))
    with pytest.raises(RecordingError) as e:
        RecordingWriter(tmp_path, MANIFEST, 210)
    cases.append((e.value, "already holds a recording"))
    for error, text in cases:
        assert text in str(error) and "\n" not in str(error)
    assert json.loads((tmp_path / "manifest.json").read_text()) == [1, 2]  # not overwritten


def test_find_recordings_newest_first(tmp_path):
    assert find_recordings(tmp_path / "none") == []
    for age, name in enumerate(["c", "a", "b/nested"]):
        RecordingWriter(tmp_path / name, {"n": name}, 210).finish({})
        stamp = 1_700_000_000 - 100 * age
        os.utime(tmp_path / name / "manifest.json", (stamp, stamp))
    (tmp_path / "not_a_run").mkdir()
    assert find_recordings(tmp_path) == [tmp_path / "c", tmp_path / "a", tmp_path / "b/nested"]


def test_the_dict_attributes_are_aliases_of_the_json_as_written(tmp_path):
    """``manifest``, ``summary`` and ``turns`` stay for outside code: the very objects the raw accessors return."""
    writer, _ = record(tmp_path / "run", frames=30)
    writer.finish({"game": "breakout"})
    rec = Recording(tmp_path / "run")
    assert rec.manifest is rec.raw_manifest() and rec.summary is rec.raw_summary() and rec.turns is rec.raw_turns()
    assert rec.manifest == MANIFEST and rec.summary["complete"] is True and len(rec.turns) == len(rec.turn_records)


RAW_OUTPUT = {  # the only places in workstation/ and screens/ that take the JSON as written: output and copying
    ("workstation/commands/recording.py", "raw_manifest"),  # info --json
    ("workstation/run/start.py", "raw_manifest"),  # a branch's manifest, copied from its parent's
    # the recording itself: a branch's first turns copied line for line, summary_or_partial (info --json and the
    # HTML page), and the aliases kept for outside code
    ("workstation/store/recording.py", "raw_manifest"),
    ("workstation/store/recording.py", "raw_summary"),
    ("workstation/store/recording.py", "raw_turns"),
}


def test_only_output_and_copying_take_the_json_as_written():
    """Code reads the typed records; the raw accessors serve output and copying alone (the dict aliases are
    hidden from mypy, which checks workstation/ and screens/)."""
    import ast

    found = set()
    for path in sorted([*(ROOT / "workstation").rglob("*.py"), *(ROOT / "screens").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("raw_manifest", "raw_summary", "raw_turns"):
                found.add((path.relative_to(ROOT).as_posix(), node.attr))
    assert found == RAW_OUTPUT
