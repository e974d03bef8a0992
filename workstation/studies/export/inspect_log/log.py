"""One Inspect eval log per setting and game: its header (eval, plan, results, stats), its samples, and the
two ways to write it (a ``.eval`` zip or one ``.json`` file), each built whole in memory and written by
``write_atomic``.

A log is one Inspect task run (one task, one model, one config); a setting of ours is one model with one
configuration, and a game is the task's one sample, each run of it an epoch (seeds are repeats under the
fixed start). So one log per setting and game keeps Inspect's meaning of every field; a batch becomes one
log per cell of its settings x games table.
"""

from __future__ import annotations

import io
import json
import math
import re
import zipfile
from dataclasses import dataclass
from importlib import metadata as importlib_metadata
from typing import Any

from workstation.studies.export.inspect_log.sample import (
    JSON,
    SCORERS,
    SampleOut,
    add_model_usage,
    iso,
    model_usage,
    short_id,
)

TASK = "atari_workstation/atari"
FORMATS = ("eval", "json")


@dataclass
class Log:
    """A log ready to write: the header (everything but the samples), the samples, their summaries."""

    name: str  # the file name, without the extension
    header: JSON
    samples: list[JSON]
    summaries: list[JSON]
    reductions: list[JSON]


def _version() -> str:
    try:
        return importlib_metadata.version("atari-workstation")
    except importlib_metadata.PackageNotFoundError:
        return "unknown"


def _metric(values: list[float]) -> JSON:
    n = len(values)
    mean = sum(values) / n if n else 0.0
    err = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n) if n > 1 else 0.0
    return {"mean": {"name": "mean", "value": mean, "params": {}},
            "stderr": {"name": "stderr", "value": err, "params": {}}}


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-")[:60] or "run"


def make_log(game: str, setting: str, outs: list[SampleOut], extra: JSON | None = None) -> Log:
    """The log of one setting's runs of one game (``outs`` in epoch order)."""
    model = outs[0].model
    created = min(o.started for o in outs)
    done = max(o.completed for o in outs)
    run_ids = [str(o.sample["metadata"]["run_id"]) for o in outs]
    task_id = short_id(TASK, game, setting, *run_ids)
    names = [n for n in SCORERS if all(n in o.sample["scores"] for o in outs)]
    usage: JSON | None = None
    for o in outs:
        usage = add_model_usage(usage, o.usage or model_usage(None))
    first = outs[0].sample["metadata"]
    eval_spec: JSON = {
        "eval_id": short_id(task_id, "eval"), "run_id": short_id(task_id, "run"), "created": iso(created),
        "task": TASK, "task_id": task_id, "task_version": 0, "task_display_name": f"atari {game} ({setting})",
        "task_registry_name": TASK, "task_attribs": {}, "task_args": {"game": game, "setting": setting},
        "task_args_passed": {"game": game},
        "dataset": {"name": game, "samples": 1, "sample_ids": [game], "shuffled": False},
        "model": model, "model_generate_config": {}, "model_args": {},
        "config": {"epochs": len(outs), "epochs_reducer": ["mean"]},
        "packages": {"atari-workstation": _version()},
        "scorers": [{"name": n, "options": {}, "metrics": [{"name": "mean", "options": {}},
                                                           {"name": "stderr", "options": {}}], "metadata": {}}
                    for n in names],
        "metadata": {"exported_by": "workstation export --inspect", "setting": setting, "game": game,
                     "agent": first.get("agent"), "protocol": first.get("protocol"),
                     "prompt_pack": first.get("prompt_pack"), "run_ids": run_ids, **(extra or {})},
    }
    plan: JSON = {"name": "plan", "steps": [{"solver": "atari_workstation/play",
                                             "params": {"protocol": first.get("protocol"),
                                                        "agent": first.get("agent")},
                                             "params_passed": {}}], "config": {}}
    complete = sum(1 for o in outs if "error" not in o.sample)
    results: JSON = {
        "total_samples": len(outs), "completed_samples": complete,
        "scores": [{"name": n, "scorer": n, "reducer": "mean", "scored_samples": len(outs), "unscored_samples": 0,
                    "params": {}, "metrics": _metric([float(o.sample["scores"][n]["value"]) for o in outs])}
                   for n in names],
    }
    stats: JSON = {"started_at": iso(created), "completed_at": iso(done),
                   "model_usage": {model: usage}}
    header: JSON = {"version": 2, "status": "success" if complete == len(outs) else "error", "eval": eval_spec,
                    "plan": plan, "results": results, "stats": stats}
    if complete < len(outs):
        header["error"] = {"message": f"{len(outs) - complete} of {len(outs)} runs did not finish",
                           "traceback": "", "traceback_ansi": ""}
    header.update({"invalidated": False, "tags": [], "metadata": {}})
    reductions = [{"scorer": n, "reducer": "mean", "samples": [
        {"value": sum(float(o.sample["scores"][n]["value"]) for o in outs) / len(outs), "sample_id": game}]}
        for n in names]
    stamp = iso(created).replace(":", "-")
    name = f"{stamp}_atari-{_slug(game)}-{_slug(setting)}_{task_id}"
    return Log(name, header, [o.sample for o in outs], [o.summary for o in outs], reductions)


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def eval_bytes(log: Log) -> bytes:
    """The ``.eval`` zip: header.json, summaries.json, reductions.json, samples/<id>_epoch_<n>.json (deflate)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as z:
        for sample in log.samples:
            z.writestr(f"samples/{sample['id']}_epoch_{sample['epoch']}.json", _dumps(sample))
        z.writestr("summaries.json", _dumps(log.summaries))
        z.writestr("reductions.json", _dumps(log.reductions))
        z.writestr("header.json", _dumps(log.header))
    return buf.getvalue()


def json_bytes(log: Log) -> bytes:
    """The plain ``.json`` log: version, status, eval, plan, results, stats before samples (the viewer reads the
    header as a stream up to ``samples``), reductions last."""
    whole = {**log.header, "samples": log.samples, "reductions": log.reductions}
    return json.dumps(whole, ensure_ascii=False, indent=1).encode("utf-8")
