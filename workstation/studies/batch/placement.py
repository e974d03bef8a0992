"""Where each run of a batch ran: DIR/placement.jsonl, one line per run that ended, written by the driver.

A line names the recording folder (under DIR/runs/), the run id, the executor (``local``
or ``ray``) and the node (Ray's node id and the host name), so the results table can say
which node played each run and a slow or failing node can be found. The recordings stay
as they are (their digests cover their own files only); the table joins this ledger by
folder name, the newest line winning.
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path
from typing import Any

LEDGER = "placement.jsonl"
FIELDS = ("executor", "node_id", "node_host")


def here() -> dict[str, Any]:
    """The node this process runs on: its Ray node id when inside a Ray worker, and the host name."""
    node_id = ""
    ray = sys.modules.get("ray")  # a Ray worker has it imported; importing it here would cost ~1 s
    try:
        if ray is not None and ray.is_initialized():
            node_id = ray.get_runtime_context().get_node_id() or ""
    except Exception:  # not in a worker: no node id
        node_id = ""
    return {"node_id": node_id, "node_host": socket.gethostname()}


def note(batch_dir: str | Path, run_id: str, recording: str | Path, executor: str, where: dict[str, Any]) -> None:
    """Append where the run that recorded ``recording`` ran."""
    line = {"run_id": run_id, "recording": Path(recording).name, "executor": executor,
            "node_id": where.get("node_id") or "", "node_host": where.get("node_host") or ""}
    with open(Path(batch_dir) / LEDGER, "a", encoding="utf-8") as f:
        f.write(json.dumps(line) + "\n")  # advisory (it names nodes): flushed, not synced, per run


def read(batch_dir: str | Path) -> dict[str, dict[str, Any]]:
    """Recording folder name -> its line (the newest one); damaged lines are skipped."""
    path = Path(batch_dir) / LEDGER
    out: dict[str, dict[str, Any]] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return out
    for raw in text.splitlines():
        try:
            d = json.loads(raw)
        except ValueError:
            continue
        if isinstance(d, dict) and isinstance(d.get("recording"), str):
            out[d["recording"]] = d
    return out


__all__ = ["FIELDS", "LEDGER", "here", "note", "read"]
