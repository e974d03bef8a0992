"""`workstation import atari-bench`: harness-format runs made by our own engine, imported back.

No public-harness data is committed: a random Breakout run of ours is written out
in the harness's field layout (summary.json, turns.jsonl, a few frames/*.png),
then imported through the CLI. Identical in, "identical" out, and the imported
recording verifies; a changed reward is the one-line mismatch and exit 1; a
directory that is not a harness run is exit 2.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from workstation.base.errors import UserError
from workstation.cli import main
from workstation.game.games import get_game
from workstation.run.drive import drive
from workstation.run.start import RunSpec, start_run
from workstation.run.verify import verify
from workstation.store.recording import Recording

# the harness's own names for Breakout's minimal action set
HARNESS_NAMES = {"breakout": ["noop", "start", "right", "left"]}
PNG_FRAMES = (0, 3, 100)


def write_harness_run(rec: Recording, dest: Path, png_frames=PNG_FRAMES) -> Path:
    """Write ``rec`` as a public-harness run directory (``runs/<game>/<model>/<run>`` layout)."""
    game = get_game(rec.manifest_record.game)
    names = HARNESS_NAMES[game.key]
    ids = {game.action_name(a): a for a in game.allowed}
    run_dir = dest / "runs" / game.key / "random" / "0101_000000_cfg_001_run_001"
    (run_dir / "frames").mkdir(parents=True)
    lives = 5
    with open(run_dir / "turns.jsonl", "w", encoding="utf-8") as f:
        for t in rec.turn_records:
            start = t.start_frame
            records = []
            for k, name in enumerate(t.actions):
                end = t.action_frames[k]
                lost = bool(t.action_life_lost[k])
                lives = lives - 1 if lost else lives
                records.append({"action_name": names[ids[name]], "action_id": ids[name], "start_frame_index": start,
                                "end_frame_index": end, "reward_delta": float(t.action_rewards[k]),
                                "lost_life": lost, "end_info": {"lives": lives, "frame_number": end}})
                start = end
            if t.game_over:
                lives = 5
            planned_ids = [ids[n] for n in t.planned]
            f.write(json.dumps({
                "turn_index": t.turn + 1, "raw_response": t.raw, "parsed_thought": t.thought,
                "planned_action_strings": [names[a] for a in planned_ids], "planned_action_ids": planned_ids,
                "parse_errors": [], "input_tokens": 1000 + t.turn, "output_tokens": 50, "total_tokens": 1050 + t.turn,
                "thinking_tokens": None, "cached_input_tokens": None, "start_frame_index": t.start_frame,
                "executed_frame_end": t.end_frame, "reward_delta": float(t.reward),
                "action_records": records, "new_game_started": bool(t.game_over)}) + "\n")
    s = rec.outcome()
    summary = {"model_name": "random", "frame_count": len(rec.frames), "frames_per_action": 3, "history_clips": 3,
               "non_zero_reward_clips": 3, "prompt_mode": "structured_history", "stop_reason": "frame_budget",
               "run_dir": str(run_dir), "total_reward": s.total_reward, "total_lost_lives": s.lives_lost,
               "turn_count": s.turns}
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2))
    for i in png_frames:
        (run_dir / "frames" / f"frame_{i:06d}.png").write_bytes(rec.frames.png(i))
    return run_dir


@pytest.fixture(scope="module")
def harness_run(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("harness")
    engine = start_run(RunSpec(game="breakout", agent="random", seed=3, out=str(base / "ours")), rewindable=False)
    try:
        drive(engine)
    finally:
        engine.close()
    return write_harness_run(Recording(engine.writer.path), base / "src")


def _import(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["import", "atari-bench", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_identical_run_imports_identical_and_verifies(harness_run: Path, tmp_path: Path, capsys) -> None:
    code, out, _ = _import(capsys, str(harness_run), "--out", str(tmp_path))
    assert code == 0, out
    assert out.count("\n") == 1 and ": identical (" in out
    rec = Recording(Path(out.strip().rsplit(" -> ", 1)[1]))
    assert rec.complete
    assert verify(rec).ok
    src = [json.loads(x) for x in (harness_run / "turns.jsonl").read_text().splitlines()]
    assert len(rec.turn_records) == len(src)
    first = rec.turn_records[0]
    assert first.raw == src[0]["raw_response"]  # the original reply is kept
    assert first.extra["source"]["turn_index"] == 1 and first.usage["input_tokens"] == 1000
    assert rec.manifest_record.source["path"] == str(harness_run.resolve())
    assert rec.manifest_record.source["stored_pngs"] == len(PNG_FRAMES)
    assert json.loads((rec.path / "summary.json").read_text())["import"]["result"] == "identical"
    # named as every run is, GAME-AGENT-sSEED-RUNID8; replaying the harness's actions is no change by hand
    assert rec.path.name == f"breakout-{rec.manifest_record.agent['spec'].replace(':', '-')}-s{rec.manifest_record.seed}-" \
                            f"{rec.run_id[:8]}"
    assert rec.interventions == {} and rec.run_id == rec.manifest_record.run_id


def _copy(src: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "runs" / "breakout" / "random" / src.name
    shutil.copytree(src, dest)
    return dest


def test_a_changed_reward_is_the_first_mismatch(harness_run: Path, tmp_path: Path, capsys) -> None:
    run = _copy(harness_run, tmp_path)
    lines = (run / "turns.jsonl").read_text().splitlines()
    t = json.loads(lines[4])
    t["action_records"][0]["reward_delta"] += 1.0
    lines[4] = json.dumps(t)
    (run / "turns.jsonl").write_text("\n".join(lines) + "\n")
    code, out, _ = _import(capsys, str(run), "--out", str(tmp_path / "out"))
    assert code == 1
    assert out.count("\n") == 1
    name = t["action_records"][0]["action_name"]
    assert "MISMATCH turn_index 5 action 1" in out and "harness" in out, out
    assert name in out or "reward" in out


def test_a_changed_png_is_a_mismatch(harness_run: Path, tmp_path: Path, capsys) -> None:
    run = _copy(harness_run, tmp_path)
    (run / "frames" / "frame_000003.png").write_bytes((run / "frames" / "frame_000100.png").read_bytes())
    code, out, _ = _import(capsys, str(run), "--out", str(tmp_path / "out"))
    assert code == 1 and "MISMATCH frame 3: differs from the stored PNG" in out, out


@pytest.mark.parametrize("damage", ["missing_dir", "no_turns", "bad_json", "no_field", "not_a_game"])
def test_bad_run_dirs_exit_2_with_one_line(damage: str, harness_run: Path, tmp_path: Path, capsys) -> None:
    run = _copy(harness_run, tmp_path)
    if damage == "missing_dir":
        run = tmp_path / "nothing-here"
    elif damage == "no_turns":
        (run / "turns.jsonl").unlink()
    elif damage == "bad_json":
        with open(run / "turns.jsonl", "a") as f:
            f.write("{not json\n")
    elif damage == "no_field":
        lines = (run / "turns.jsonl").read_text().splitlines()
        t = json.loads(lines[0])
        del t["action_records"]
        (run / "turns.jsonl").write_text("\n".join([json.dumps(t), *lines[1:]]) + "\n")
    elif damage == "not_a_game":
        moved = tmp_path / "elsewhere" / "x"
        shutil.copytree(run, moved)
        summary = json.loads((moved / "summary.json").read_text())
        summary["run_dir"] = "/somewhere/else"
        (moved / "summary.json").write_text(json.dumps(summary))
        run = moved
    code, out, err = _import(capsys, str(run), "--out", str(tmp_path / "out"))
    assert code == 2, (out, err)
    assert out == "" and err.count("\n") == 1 and err.startswith("workstation: error: "), err


def test_the_harness_summary_is_read_once_typed(tmp_path: Path) -> None:
    from workstation.run.importers.harness_run import HarnessSummary

    path = tmp_path / "summary.json"
    path.write_text(json.dumps({"seed": 3.0, "frame_count": 901, "total_reward": 5, "model_name": "m",
                                "stop_reason": {"why": "budget"}, "run_dir": "/runs/pong/m/x"}))
    s = HarnessSummary.read(path)
    assert (s.seed, s.frame_count, s.model_name, s.run_dir, s.game) == (3, 901, "m", "/runs/pong/m/x", None)
    assert s.source() == {"total_reward": 5, "total_lost_lives": None, "turn_count": None, "frame_count": 901,
                          "stop_reason": {"why": "budget"}, "prompt_mode": None, "thinking_mode": None}
    path.write_text(json.dumps({"frames_per_action": "3"}))
    with pytest.raises(UserError, match=f"{path}: field 'frames_per_action'"):
        HarnessSummary.read(path)
