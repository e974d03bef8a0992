"""A batch's results table, rebuilt from its recordings: DIR/results.csv and DIR/results.jsonl.

One row per run of the grid that has a recording under ``DIR/runs/`` (its complete
recording if it has one, else its newest incomplete one), in the grid's order. The
rows are made from each recording's summary (or, for a killed run, the summary
rebuilt from its turns), so the table cannot disagree with the recordings; both
files are replaced by atomic rename.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from workstation.game.protocol import SETTINGS
from workstation.store.atomic import write_atomic
from workstation.store.changes import mark
from workstation.store.index import Entry, Index
from workstation.store.recording import Recording
from workstation.store.records import RecordingError, Summary
from workstation.studies.batch import placement
from workstation.studies.batch.jobs import Job

COLUMNS = ("run_id", "setting", "game", "seed", "score", "lives_lost", "turns", "invalid_turns", "failed_turns",
           "frames", "budget", "complete", "by_hand", "calls", "input_tokens", "output_tokens", "reasoning_tokens",
           "cost_usd", "wall_s")
# The expanded protocol fields (the budget is its own column, ``budget``: a complete run plays all of it), then
# the prompt pack (name@digest): `report A B` warns when settings were played under different ones.
PROTOCOL_COLUMNS = tuple(s.name for s in SETTINGS if s.name != "frames")
PACK_COLUMN = "prompt_pack"
# Where the run ran (from DIR/placement.jsonl, empty for a recording the batch did not place).
WHERE_COLUMNS = placement.FIELDS
RUNS = "runs"
DAMAGED = "damaged"  # an index entry's state for a recording edited since it was written


def runs_dir(batch_dir: str | Path) -> Path:
    return Path(batch_dir) / RUNS


def recordings_by_id(batch_dir: str | Path) -> dict[str, list[Entry]]:
    """The recordings under DIR/runs/ by run id, complete ones first, damaged ones (edited since they were written:
    the listing's cheap check) last, then newest first (through the user's index cache, ``store/index.py``: nothing
    is written inside the batch)."""
    root = runs_dir(batch_dir)
    if not root.is_dir():
        return {}
    out: dict[str, list[Entry]] = {}
    index = Index(root)
    for e in index.entries():
        if e.run_id:
            out.setdefault(e.run_id, []).append(e)
    for entries in out.values():  # stable: newest first within each kind; a damaged one last (a resume sets it aside)
        entries.sort(key=lambda e: 0 if e.complete else 2 if e.state == DAMAGED else 1)
    return out


def row(cell: Job, path: Path, where: dict[str, Any] | None = None) -> dict[str, Any]:
    """The results row of one run, from its recording (and where it ran, from the placement ledger)."""
    rec = Recording(path)
    s = rec.outcome()
    usage = s.usage or {}
    n_in, n_out = s.tokens  # input counting cache reads and writes; output
    proto = rec.manifest_record.protocol if isinstance(rec.manifest_record.protocol, dict) else {}
    out = {
        "run_id": rec.run_id, "setting": cell.label, "game": cell.game, "seed": cell.seed,
        "score": s.total_reward, "lives_lost": s.lives_lost, "turns": s.turns, "invalid_turns": s.invalid_turns,
        "failed_turns": _failed(s, rec),
        "frames": s.frames, "budget": proto.get("frames"), "complete": bool(s.complete), "by_hand": mark(rec.interventions),
        "calls": s.calls, "input_tokens": n_in,
        "output_tokens": n_out,
        "reasoning_tokens": int(usage.get("reasoning_tokens") or 0),
        "cost_usd": s.cost_usd, "wall_s": s.wall_s,
    }
    for name in PROTOCOL_COLUMNS:
        out[name] = proto.get(name)
    out[PACK_COLUMN] = pack_label(rec.manifest_record.prompt_pack)
    for name in WHERE_COLUMNS:
        out[name] = (where or {}).get(name)
    out["stopped"] = s.stopped
    out["path"] = str(path)
    return out


def pack_label(pack: dict[str, Any]) -> str:
    """``name@digest8`` of a manifest's prompt pack (what `report` compares across sources)."""
    name, digest = pack.get("name") or "?", str(pack.get("digest") or "")
    return f"{name}@{digest[:8]}" if digest else str(name)


def _failed(s: Summary, rec: Recording) -> int:
    """Turns lost to provider errors: the summary's count, or counted from the turns (older recordings)."""
    n = s.failed_turns
    if n is None:
        n = sum(1 for t in rec.turn_records
                if t.error is not None and not t.overridden and not t.error.startswith("cancelled"))
    return int(n)


def rebuild(batch_dir: str | Path, cells: list[Job]) -> list[dict[str, Any]]:
    """Rewrite DIR/results.csv and DIR/results.jsonl from the recordings; returns the rows."""
    rows = collect(batch_dir, cells)
    write(batch_dir, rows)
    return rows


def collect(batch_dir: str | Path, cells: list[Job]) -> list[dict[str, Any]]:
    """The rows of the grid's runs that have a recording, in grid order (nothing written)."""
    found = recordings_by_id(batch_dir)
    root = runs_dir(batch_dir)
    placed = placement.read(batch_dir)
    rows = []
    for cell in cells:
        entries = found.get(cell.run_id)
        if not entries:
            continue
        if entries[0].state == DAMAGED:  # never its figures: the row says so and counts as incomplete
            rows.append({"run_id": cell.run_id, "setting": cell.label, "game": cell.game, "seed": cell.seed,
                         "complete": False, "stopped": entries[0].error or "damaged recording",
                         "path": str(root / entries[0].path)})
            continue
        try:
            rows.append(row(cell, root / entries[0].path, placed.get(Path(entries[0].path).name)))
        except RecordingError as e:  # unreadable: the row says so and counts as incomplete
            rows.append({"run_id": cell.run_id, "setting": cell.label, "game": cell.game, "seed": cell.seed,
                         "complete": False, "stopped": f"unreadable: {e}", "path": str(root / entries[0].path)})
    return rows


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def write(batch_dir: str | Path, rows: list[dict[str, Any]]) -> None:
    batch_dir = Path(batch_dir)
    batch_dir.mkdir(parents=True, exist_ok=True)
    header = COLUMNS + PROTOCOL_COLUMNS + (PACK_COLUMN,) + WHERE_COLUMNS
    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        w.writerow([_text(r.get(k)) for k in header])
    _replace(batch_dir / "results.csv", buf.getvalue())
    _replace(batch_dir / "results.jsonl", "".join(json.dumps(r, sort_keys=False) + "\n" for r in rows))


def _replace(path: Path, text: str) -> None:
    write_atomic(path, text)


__all__ = ["COLUMNS", "PROTOCOL_COLUMNS", "WHERE_COLUMNS", "collect", "rebuild", "recordings_by_id", "row", "runs_dir", "write"]
