"""Action stagnation and parse robustness per setting.

Stagnation (paper: NOOP-only stagnation under long histories) is, per run, the share of
NOOP-only turns (every executed action NOOP) in the second half of its turns (turns n//2..n-1),
averaged over a setting's runs. It comes from a ``stagnation`` column when the CSV has one,
otherwise from the recordings of a batch directory (``DIR/runs/``, matched by run id).
Parse robustness is invalid turns and failed turns (no usable reply) over all turns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from workstation.studies.analysis.table import Results

if TYPE_CHECKING:
    from workstation.store.records import TurnRecord


def noop_share(turns: list[TurnRecord]) -> float:
    second = turns[len(turns) // 2:]
    if not second:
        return math.nan
    noop = sum(1 for t in second if t.actions and all(str(a).lower() == "noop" for a in t.actions))
    return noop / len(second)


def _recordings_by_run_id(batch_dir: Path) -> dict[str, Path]:
    from workstation.base.errors import UserError
    from workstation.store.records import Manifest, read_json

    found = {}
    runs = batch_dir / "runs"
    for m in sorted(runs.glob("*/manifest.json")) if runs.is_dir() else []:
        try:  # the checked reader: a manifest that is not an object is skipped, not a traceback
            rid = Manifest.from_json(read_json(m)).run_id
        except (UserError, OSError, ValueError):
            continue
        if rid:
            found[str(rid)] = m.parent
    return found


def _turns(path: Path) -> list[TurnRecord]:
    from workstation.store.recording import Recording
    from workstation.store.records import RecordingError

    try:
        return Recording(path).turn_records
    except RecordingError:
        return []


def run_stagnation(results: Results) -> dict[tuple[str, str, str], float]:
    """(setting, game, seed) -> NOOP-only share of the second half; empty when there is no source."""
    if results.has("stagnation"):
        return {(r.setting, r.game, r.seed): r.values["stagnation"] for r in results.rows if "stagnation" in r.values}
    if results.batch_dir is None or not results.has("run_id"):
        return {}
    recs = _recordings_by_run_id(results.batch_dir)
    out = {}
    for r in results.rows:
        if r.run_id in recs:
            share = noop_share(_turns(recs[r.run_id]))
            if not math.isnan(share):
                out[(r.setting, r.game, r.seed)] = share
    return out


@dataclass
class Behaviour:
    setting: str
    runs: int
    stagnation: float = math.nan  # mean NOOP-only share over runs with a value
    stagnation_runs: int = 0
    turns: float = math.nan
    invalid: float = math.nan
    failed: float = math.nan

    def share(self, what: float) -> float:
        return what / self.turns if self.turns and not math.isnan(what) else math.nan


def behaviour(results: Results) -> dict[str, Behaviour]:
    stag = run_stagnation(results)
    out = {}
    for setting in results.settings:
        rows = [r for r in results.rows if r.setting == setting]
        b = Behaviour(setting, len(rows))
        shares = [stag[(r.setting, r.game, r.seed)] for r in rows if (r.setting, r.game, r.seed) in stag]
        if shares:
            b.stagnation, b.stagnation_runs = sum(shares) / len(shares), len(shares)
        for col, attr in (("turns", "turns"), ("invalid_turns", "invalid"), ("failed_turns", "failed")):
            vals = [r.values[col] for r in rows if col in r.values]
            if vals and len(vals) == len(rows):
                setattr(b, attr, float(sum(vals)))
        out[setting] = b
    return out
