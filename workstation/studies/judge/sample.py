"""Which runs and turns the judge sees (the paper's appendix D.2 sampling).

Per setting x game: among the complete runs nobody changed by hand, the run whose score is
closest to the cell's median score (ties: the lowest seed, then the run id). In that run:
``turns`` turns, each at least ``gap`` turns from the others, drawn uniformly among all such
spacings with a generator seeded by ``seed`` and the run id (never by reward), from the turns
the model answered. A run is changed by hand when any turn was overridden or asked with a prompt
other than the standard one, its manifest names a parent (a branch), or its summary counts
interventions.

SOURCE is a batch directory (its results.jsonl), a results CSV (its batch's recordings), or
recording directories (or directories holding recordings); a bare recording's setting is its
agent spec plus the protocol settings that differ from the paper's.
"""

from __future__ import annotations

import csv
import json
import random
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workstation.base.errors import DamagedArtifact, UserError
from workstation.store.framestore import FrameStoreError
from workstation.store.recording import DamagedRecording, Recording
from workstation.store.records import RecordingError


@dataclass(frozen=True)
class RunRef:
    run_id: str
    setting: str
    game: str
    seed: int
    score: float
    complete: bool
    path: Path
    agent: str = ""  # the agent spec that played


@dataclass
class Sample:
    run: RunRef
    median: float
    turns: list[int]
    cell_runs: int  # the complete, unchanged runs of its cell
    note: str = ""
    excluded: list[str] = field(default_factory=list)  # run ids left out as changed by hand

    def to_json(self) -> dict[str, Any]:
        r = self.run
        return {"run_id": r.run_id, "setting": r.setting, "game": r.game, "seed": r.seed, "score": r.score,
                "median": self.median, "cell_runs": self.cell_runs, "turns": self.turns, "path": str(r.path),
                "note": self.note, "changed_by_hand": self.excluded}


# -- reading sources --------------------------------------------------------------
def _setting_of(rec: Recording) -> str:
    from workstation.game.protocol import Protocol

    m = rec.manifest_record
    try:
        changed = Protocol.from_json(m.protocol if isinstance(m.protocol, dict) else {}).changed()
    except (ValueError, TypeError):
        changed = {}
    extra = "".join(f"|{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in sorted(changed.items()))
    return f"{m.agent_spec or 'unknown'}{extra}"


def _read(path: Path, setting: str | None = None) -> tuple[RunRef | None, str | None, bool]:
    """The run a recording holds, or None, why it cannot be read and whether that is damage (a recording that
    reads but fails its check: exit 1) rather than bad input (exit 2)."""
    if is_match(path):
        raise UserError(f"{path} is a two-player match; judge works on one-player runs (recordings and batches of "
                        "`run` and `batch`)", file=path)
    try:
        rec = Recording(path)
        m, s = rec.manifest_record, rec.outcome()
    except (RecordingError, OSError, ValueError) as e:
        return None, str(e) or type(e).__name__, isinstance(e, (DamagedRecording, FrameStoreError))
    if m.run_id is None or m.game is None:
        return None, "its manifest names no run id or game", False
    if m.seed is None:
        return None, "its manifest names no seed", False
    if s.complete:  # a run that may be sampled: its files must agree with its summary (digests, turns, frames)
        damage = rec.damage()
        if damage:
            return None, damage, True
    return RunRef(m.run_id, setting or _setting_of(rec), m.game, m.seed, float(s.total_reward),
                  bool(s.complete), path, m.agent_spec or ""), None, False


def is_match(path: Path) -> bool:
    """Whether a recording directory holds a two-player match (its manifest's kind)."""
    try:
        data = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(data, dict) and "kind" in data and data["kind"] == "match"


def _damaged(where: str, path: Path, why: str, damaged: bool, out_of: str | None) -> UserError:
    """One line for a source recording that cannot be judged: a damaged one (``damaged``) is a DamagedArtifact
    (exit 1), one that cannot be read bad input (exit 2); named once, with what to do."""
    what = why.replace(f"{path}: ", "", 1) if why.startswith(f"{path}: ") else why
    if str(path) not in what:
        what = f"the recording {path} {'is damaged' if damaged else 'cannot be judged'} ({what})"
    at = "" if where == str(path) else f"{where}: "
    leave = f", or move it out of {out_of} and judge again" if out_of else ""
    line = f"{at}{what}; check it with `workstation verify --quick {path}`{leave}"
    return DamagedArtifact(line, file=path) if damaged else UserError(line, file=path)


def _row(r: dict[str, Any]) -> dict[str, str]:
    """The three fields of a results row the judge reads, as text ("" where one is missing or null)."""
    return {k: "" if k not in r or r[k] is None else str(r[k]) for k in ("path", "run_id", "setting")}


def _from_rows(rows: list[dict[str, Any]], base: Path, where: str) -> list[RunRef]:
    """The rows' recordings, looked up in the batch's own runs/ first (a batch copied or moved elsewhere
    keeps the old absolute paths in its rows), then at the row's path. A recording that is there but
    cannot be read stops the judging: sampling without it would silently pick another run."""
    from workstation.studies.batch.results import recordings_by_id, runs_dir

    found = None
    out = []
    for r in rows:
        row = _row(r)
        stored = row["path"]
        path = runs_dir(base) / Path(stored).name if stored else None
        if path is None or not path.is_dir():
            if found is None:
                found = recordings_by_id(base)  # nothing is written into a source
            entries = found[row["run_id"]] if row["run_id"] in found else None
            path = runs_dir(base) / entries[0].path if entries else (Path(stored) if stored else None)
        if path is None or not path.is_dir():
            continue
        ref, why, damaged = _read(path, setting=row["setting"])
        if ref is None:
            raise _damaged(where, path, why or "unreadable", damaged, "the batch")
        out.append(ref)
    if not out and rows:
        raise UserError(f"{where}: none of its {len(rows)} runs has a readable recording; "
                        "point at the batch directory that holds runs/")
    return out


def read_sources(sources: list[str]) -> list[RunRef]:
    """Every run the sources name (duplicates by run id once); UserError for a source that is none of the kinds."""
    runs: dict[str, RunRef] = {}
    for text in sources:
        p = Path(text)
        if p.is_file() and p.suffix.lower() == ".csv":
            try:
                with open(p, newline="", encoding="utf-8") as f:
                    rows = list(csv.DictReader(f))
            except (OSError, UnicodeDecodeError, csv.Error) as e:
                raise UserError(f"{p}: not a readable results CSV ({e})") from None
            if rows and "run_id" not in rows[0]:
                raise UserError(f"{p}: not a results CSV (no run_id column); pass `workstation batch`'s results.csv")
            got = _from_rows(rows, p.parent, str(p))
        elif p.is_dir() and (p / "results.jsonl").is_file():
            rows = []
            try:
                text = (p / "results.jsonl").read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as e:
                raise UserError(f"{p / 'results.jsonl'}: not readable as UTF-8 text ({type(e).__name__}); rebuild it "
                                "with `workstation batch` on the same grid", file=p) from None
            for n, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    try:
                        row = json.loads(line)
                    except json.JSONDecodeError:
                        raise UserError(f"{p / 'results.jsonl'} line {n}: not JSON; rebuild it with "
                                        "`workstation batch` on the same grid") from None
                    if not isinstance(row, dict):
                        raise UserError(f"{p / 'results.jsonl'} line {n}: not a results row (a JSON object); "
                                        "rebuild it with `workstation batch` on the same grid", file=p)
                    rows.append(row)
            got = _from_rows(rows, p, str(p))
        elif p.is_dir():
            from workstation.store.index import find_recordings

            paths = [p] if (p / "manifest.json").is_file() else find_recordings(p)
            got = []
            for q in paths:
                ref, why, damaged = _read(q)
                if ref is None:
                    raise _damaged(str(p), q, why or "unreadable", damaged, None if q == p else str(p))
                got.append(ref)
            if not got:
                raise UserError(f"{p}: holds no readable recording; pass a batch directory, a results CSV "
                                "or recording directories")
        else:
            raise UserError(f"{text}: no such batch directory, results CSV or recording")
        for r in got:
            runs.setdefault(r.run_id, r)
    return list(runs.values())


# -- changed by hand ----------------------------------------------------------------
def changed_by_hand(rec: Recording) -> str | None:
    """Why a run counts as changed by hand, or None."""
    m = rec.manifest_record
    if m.parent is not None or m.branch is not None:
        return "a branch of another run"
    s = rec.summary_record
    counted: list[tuple[str, Any]] = [] if s is None else [  # the typed count, and any other a newer writer added
        ("interventions", s.interventions), *((k, v) for k, v in s.extra.items() if "intervention" in k)]
    for key, value in counted:
        if value:
            if isinstance(value, dict) and not any(value.values()):
                continue
            return f"its summary counts {key}"
    for t in rec.turn_records:
        if t.overridden:
            return f"turn {t.turn} was overridden"
        if t.variant != "standard":
            return f"turn {t.turn} was asked a {t.variant} prompt"
    return None


# -- choosing -------------------------------------------------------------------------
def spaced_turns(candidates: list[int], k: int, gap: int, rng: random.Random) -> list[int]:
    """``k`` of ``candidates`` pairwise at least ``gap`` apart (fewer when they do not fit), sorted.

    Uniform over the spacings of the whole turn range (stars and bars), redrawn until every
    chosen turn is a candidate; a greedy pass over a shuffled list when that keeps failing.
    """
    if not candidates or k <= 0:
        return []
    cand = sorted(set(candidates))
    lo, hi = cand[0], cand[-1]
    span = hi - lo + 1
    gap = max(gap, 1)
    fit = min(k, 1 + (span - 1) // gap)
    ok = set(cand)
    for want in range(fit, 0, -1):
        room = span - (want - 1) * (gap - 1)
        for _ in range(200):
            picks = sorted(rng.sample(range(room), want))
            turns = [lo + c + i * (gap - 1) for i, c in enumerate(picks)]
            if all(t in ok for t in turns):
                return turns
        order = cand[:]
        rng.shuffle(order)
        chosen: list[int] = []
        for t in order:
            if all(abs(t - c) >= gap for c in chosen):
                chosen.append(t)
                if len(chosen) == want:
                    return sorted(chosen)
    return []


def judgeable_turns(rec: Recording) -> list[int]:
    """Turns the model answered (a reply to judge): no provider error, not overridden."""
    return [t.turn for t in rec.turn_records if t.error is None and not t.overridden and t.raw.strip()]


def choose(runs: list[RunRef], turns: int = 5, gap: int = 5, seed: int = 0) -> list[Sample]:
    """One Sample per setting x game that has a complete run nobody changed by hand."""
    cells: dict[tuple[str, str], list[RunRef]] = {}
    for r in runs:
        cells.setdefault((r.setting, r.game), []).append(r)
    out = []
    for members in cells.values():
        eligible, excluded = [], []
        for r in members:
            if not r.complete:
                continue
            if changed_by_hand(Recording(r.path)):
                excluded.append(r.run_id)
                continue
            eligible.append(r)
        if not eligible:
            continue
        median = statistics.median(r.score for r in eligible)
        run = min(eligible, key=lambda r: (abs(r.score - median), r.seed, r.run_id))
        rec = Recording(run.path)
        rng = random.Random(f"{seed}:{run.run_id}")
        picked = spaced_turns(judgeable_turns(rec), turns, gap, rng)
        note = "" if len(picked) == turns else f"only {len(picked)} turns fit {gap} apart"
        out.append(Sample(run, median, picked, len(eligible), note, excluded))
    out.sort(key=lambda s: (s.run.setting, s.run.game))
    return out
