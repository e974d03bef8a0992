"""`report`'s instruction-level drops and experience-library ablation (workstation.studies.analysis.levels), from real
files: a results CSV and a batch directory with recordings' manifests and experience.jsonl."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
from pathlib import Path

from workstation.studies.analysis import levels
from workstation.studies.analysis.table import load_results

ROOT = Path(__file__).resolve().parents[1]


def _csv(path: Path, rows: list[tuple[str, str, int, float, str]]) -> Path:
    path.write_text("setting,game,seed,score,run_id\n" + "".join(f"{s},{g},{sd},{sc},{rid}\n"
                                                                  for s, g, sd, sc, rid in rows))
    return path


def test_drops_per_model_game_and_overall(tmp_path):
    rows = []
    for game, (v, st, go) in {"breakout": (10, 6, 5), "pong": (3, 4, 1)}.items():
        for seed in range(5):
            noise = seed * 7  # the same per seed at every level: paired by seed, it cancels
            rows += [(f"m|guide={lv}", game, seed, sc + noise, f"{game}{lv}{seed}")
                     for lv, sc in (("visual", v), ("steps", st), ("goal", go))]
    rows += [("random", "breakout", s, 1, f"r{s}") for s in range(5)]
    res = load_results(_csv(tmp_path / "results.csv", rows))
    found = {(d.model, d.game, d.kind): d for d in levels.drops(res, seed=0)}
    assert found[("m", "breakout", "grounding")].mean == 4 and found[("m", "breakout", "planning")].mean == 1
    assert found[("m", "pong", "grounding")].mean == -1  # more text is not always better
    overall = found[("m", levels.OVERALL, "grounding")]
    assert overall.n == 10 and overall.mean == 1.5 and overall.lo <= 1.5 <= overall.hi
    b = found[("m", "breakout", "grounding")]
    assert (b.lo, b.hi) == (4, 4)  # a constant difference has a zero-width interval
    assert not [d for d in levels.drops(res) if d.model == "random"]
    seps = levels.level_separability(res)
    assert set(seps) == {"m"} and set(seps["m"]) == {"breakout", "pong"}
    assert all(v in ("strong", "weak", "none") for v in seps["m"].values())
    text = "\n".join(levels.section(res))
    assert "m: separability of the three levels (paper 4.2, goal as the baseline): breakout" in text
    assert "grounding = visual - steps" in text and "m breakout grounding: +4 [+4, +4] (n 5)" in text


def test_no_levels_no_library_no_section(tmp_path):
    res = load_results(_csv(tmp_path / "results.csv", [("a", "breakout", 0, 1, "x"), ("b", "breakout", 0, 2, "y")]))
    assert levels.section(res) == []


def _recording(batch: Path, run_id: str, created: str, experience: dict | None, afters: list[list[str]],
               score: float) -> None:
    d = batch / "runs" / run_id
    d.mkdir(parents=True)
    m = {"run_id": run_id, "created": created, "agent": {"spec": "openai:gpt-5.2"}, "game": "breakout"}
    if experience is not None:
        m["experience"] = experience
    (d / "manifest.json").write_text(json.dumps(m))
    (d / "summary.json").write_text(json.dumps({"complete": True, "total_reward": score}))
    if afters:
        (d / "experience.jsonl").write_text("".join(json.dumps({"turns": 5 * (i + 1), "after": a}) + "\n"
                                                    for i, a in enumerate(afters)))


def test_library_ablation_and_length_over_runs_in_the_report(tmp_path):
    batch = tmp_path / "batch"
    rows = []
    for i in range(3):
        _recording(batch, f"lib{i}", f"2026-01-0{i + 1}", {"rules": ["r"] * i, "every": 5},
                   [["r"] * (i + 1)] if i < 2 else [["r"] * 2, ["r"] * 4], 10 + i)
        _recording(batch, f"plain{i}", f"2026-01-0{i + 1}", None, [], 4 + i)
        rows += [("lib", "breakout", i, 10 + i, f"lib{i}"), ("plain", "breakout", i, 4 + i, f"plain{i}")]
    _recording(batch, "torn", "2026-01-09", {"rules": [], "every": 5}, [], 99)  # not complete: left out
    (batch / "runs" / "torn" / "summary.json").write_text(json.dumps({"complete": False, "total_reward": 99}))
    _csv(batch / "results.csv", rows)
    # these hand-made recordings hold no frames, so `report` (load_results of the batch) would leave them out as
    # damaged (checked at the end); the rules of the library section are stated on them through the CSV alone
    res = dataclasses.replace(load_results(_csv(tmp_path / "results.csv", rows)), batch_dir=batch)
    lib = levels.library(res)
    (a,) = lib["ablation"]
    assert (a["model"], a["with"], a["without"], a["diff"]) == ("openai:gpt-5.2", 3, 3, 6)
    assert a["lo"] <= 6 <= a["hi"] and not math.isnan(a["lo"])
    assert lib["lengths"] == {"openai:gpt-5.2 breakout": [1, 2, 4]}
    text = "\n".join(levels.section(res))
    assert "Experience library: with vs without" in text
    assert "library length over runs, openai:gpt-5.2 breakout: 1 -> 2 -> 4" in text
    data = levels.to_json(res)
    assert data["experience"]["lengths"] == {"openai:gpt-5.2 breakout": [1, 2, 4]} and "levels" not in data
    # end to end, `report` re-checks every recording first: these hand-made ones hold no frames, so it leaves
    # them out, says so, and has nothing left to report
    r = subprocess.run([sys.executable, "-m", "workstation", "report", str(batch), "--baseline", "plain"],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert r.returncode == 2 and "damaged runs left out" in r.stderr, r.stderr
