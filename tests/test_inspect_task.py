"""The Inspect task `atari_workstation/atari` (the `inspect` extra): found through its entry point, run under
`mockllm` with preset usage (no tokenizer download, no network), playing through our engine; its recordings
verify, its calls are Inspect's model events, and the protocol's task arguments are honoured."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from workstation.base.errors import UserError
from workstation.store.recording import Recording

pytest.importorskip("inspect_ai")

ROOT = Path(__file__).resolve().parent.parent
REPLY = "thought: serve and go left\nmove: [fire, left, left]"
USAGE = {"input_tokens": 120, "output_tokens": 12}


def outputs() -> Any:
    from inspect_ai.model import ModelOutput, ModelUsage

    while True:
        o = ModelOutput.from_content("mockllm/model", REPLY)
        o.usage = ModelUsage(input_tokens=USAGE["input_tokens"], output_tokens=USAGE["output_tokens"],
                             total_tokens=sum(USAGE.values()))
        yield o


def run_task(tmp_path: Path, **args: Any) -> Any:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    task_args = {k: v for k, v in {"game": "breakout", "out": str(tmp_path / "recs"), **args}.items() if v is not None}
    logs = inspect_eval("atari_workstation/atari", task_args=task_args,
                        model=get_model("mockllm/model", custom_outputs=outputs()), log_dir=str(tmp_path / "logs"),
                        display="none")
    assert len(logs) == 1
    return logs[0]


def test_the_task_is_registered_through_an_inspect_ai_entry_point():
    eps = {ep.name: ep.value for ep in metadata.entry_points(group="inspect_ai")}
    assert eps.get("atari_workstation") == "atari_workstation._registry"


def test_the_task_plays_our_engine_under_mockllm_and_its_recordings_verify(tmp_path):
    log = run_task(tmp_path, seeds="0..1", frames=60)
    assert log.status == "success", log.error
    assert len(log.samples) == 2 and {s.metadata["seed"] for s in log.samples} == {0, 1}
    for s in log.samples:
        rec = Recording(s.metadata["recording"])
        assert rec.complete and rec.manifest_record.agent_spec == "inspect:mockllm/model"
        assert rec.run_id == s.metadata["run_id"] and rec.manifest_record.seed == s.metadata["seed"]
        turns = rec.turn_records
        calls = [e for e in s.events if e.event == "model"]
        assert len(calls) == len(turns) > 0  # every turn one model call, logged by Inspect
        assert all(any(c.type == "image" for m in e.input if isinstance(m.content, list) for c in m.content)
                   for e in calls)
        assert all(t.raw == REPLY and t.valid and t.usage["input_tokens"] == USAGE["input_tokens"] for t in turns)
        assert rec.outcome().usage["output_tokens"] == USAGE["output_tokens"] * len(turns)
        assert s.scores["total_reward"].value == rec.outcome().total_reward
        assert s.scores["lives_lost"].value == rec.outcome().lives_lost
        v = subprocess.run([sys.executable, "-m", "workstation", "verify", str(rec.path)], cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
        assert v.returncode == 0 and v.stdout.startswith("OK"), v.stdout + v.stderr


def test_protocol_task_arguments_reach_the_recording(tmp_path):
    log = run_task(tmp_path, seeds=3, frames=30, max_actions=2, memory="append", feedback=False, start="noops:5",
                   out=None)
    assert log.status == "success", log.error
    rec = Recording(log.samples[0].metadata["recording"])
    assert rec.path.parent == tmp_path / "logs" / "atari-recordings"  # by default beside Inspect's log
    p = rec.manifest_record.protocol
    assert (p["frames"], p["max_actions"], p["memory"], p["feedback"], p["start"]) == (30, 2, "append", False,
                                                                                         "noops:5")
    assert all(len(t.actions) <= 2 for t in rec.turn_records)  # the 3-action plan cut to max_actions
    assert rec.manifest_record.seed == 3


def test_bad_task_arguments_are_one_line():
    from workstation.studies.inspect_task.play import make_protocol, parse_seeds

    assert parse_seeds("0..4") == [0, 1, 2, 3, 4] and parse_seeds("1,3") == [1, 3] and parse_seeds(7) == [7]
    for bad in ("4..1", "a", "1,1", True):
        with pytest.raises(UserError):
            parse_seeds(bad)
    with pytest.raises(UserError, match="unknown task argument bogus"):
        make_protocol({"bogus": 1})
    with pytest.raises(UserError):
        make_protocol({"frames": "many"})
    with pytest.raises(UserError):
        make_protocol({"max_actions": 99})


def test_a_model_that_fails_fails_the_sample_and_the_recording_is_kept_stopped(tmp_path):
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    def broken(*args: Any) -> Any:
        raise ValueError("no tokenizer offline")

    logs = inspect_eval("atari_workstation/atari", task_args={"seeds": 0, "frames": 30, "out": str(tmp_path / "recs")},
                        model=get_model("mockllm/model", custom_outputs=broken), log_dir=str(tmp_path / "logs"),
                        display="none")
    log = logs[0]
    assert log.status == "error" and "the run stopped" in log.error.message
    rec = Recording(next((tmp_path / "recs").iterdir()))
    assert not rec.complete and "no tokenizer offline" in (rec.outcome().stopped or "")


def test_an_exported_inspect_run_round_trips_through_export_inspect(tmp_path):
    log = run_task(tmp_path, seeds=0, frames=30)
    rec = Path(log.samples[0].metadata["recording"])
    r = subprocess.run([sys.executable, "-m", "workstation", "export", str(rec), "--inspect", str(tmp_path / "x"),
                        "--format", "json"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    data = json.loads(next((tmp_path / "x").iterdir()).read_text())
    assert data["eval"]["model"] == "inspect/mockllm/model"
    assert data["samples"][0]["metadata"]["run_id"] == log.samples[0].metadata["run_id"]


def test_a_sample_cut_by_an_inspect_time_limit_stops_our_run_and_keeps_its_recording(tmp_path):
    import anyio
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    async def slow(*args: Any) -> Any:
        await anyio.sleep(0.3)
        o = ModelOutput.from_content("mockllm/model", REPLY)
        o.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return o

    logs = inspect_eval("atari_workstation/atari", task_args={"seeds": 0, "out": str(tmp_path / "recs")},
                        model=get_model("mockllm/model", custom_outputs=slow), log_dir=str(tmp_path / "logs"),
                        display="none", time_limit=2)
    sample = logs[0].samples[0]
    assert sample.limit is not None and sample.limit.type == "time"
    rec = Recording(next((tmp_path / "recs").iterdir()))
    assert not rec.complete and 0 < len(rec.turn_records) < 30  # stopped mid-run, its turns kept
    v = subprocess.run([sys.executable, "-m", "workstation", "verify", str(rec.path)], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert v.returncode == 0, v.stdout + v.stderr
