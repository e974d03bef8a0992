"""Find the verdicts on a recording's turns, for the open screen.

A judging lives in its own directory (``workstation judge --out DIR``), not in the recording,
so the open screen looks for judge directories: in the directories named by ``WORKSTATION_JUDGED``
(separated by the OS path separator) when it is set, else in the current directory and the three
directories above the recording, each at most two levels down. A judging counts when its
``judge.json`` sampled the recording's run id; where several judged the same turn, the newest
line wins.
"""

from __future__ import annotations

import os
from pathlib import Path

from workstation.studies.judge.records import VerdictLine

ENV_VAR = "WORKSTATION_JUDGED"


def _roots(rec_path: Path) -> list[Path]:
    named = os.environ.get(ENV_VAR, "")
    if named.strip():
        return [Path(p) for p in named.split(os.pathsep) if p.strip()]
    rec_path = rec_path.resolve()
    return [Path.cwd(), *list(rec_path.parents)[:3]]


VERDICTS = "verdicts.jsonl"


def judge_dirs(rec_path: Path) -> list[Path]:
    seen: dict[Path, None] = {}
    for root in _roots(Path(rec_path)):
        for pattern in ("judge.json", "*/judge.json", "*/*/judge.json"):
            for meta in root.glob(pattern):
                seen.setdefault(meta.parent.resolve(), None)
    return list(seen)


def _sampling(rec_path: Path, run_id: str | None) -> list[Path]:
    """The judge directories near the recording whose judge.json (read by the one checked reader) sampled
    ``run_id``; one that does not read or fails its seal is left out."""
    from workstation.base.errors import UserError
    from workstation.studies.judge.records import check_study
    from workstation.studies.judge.run import read_meta

    if not run_id:
        return []
    out: list[Path] = []
    for d in judge_dirs(rec_path):
        try:
            check_study(d)
            if any(s.run_id == run_id for s in read_meta(d).samples):
                out.append(d)
        except (UserError, OSError):
            continue
    return out


def judgings_of(rec_path: Path, run_id: str | None) -> int:
    """How many judge directories near the recording sampled this run (0: it was not judged at all)."""
    return len(_sampling(rec_path, run_id))


def verdicts_for(rec_path: Path, run_id: str | None) -> dict[int, VerdictLine]:
    """turn -> the verdict line on it, as the one checked reader gives it; {} when none is found. A judge
    directory that does not read or fails its seal is left out (the screen shows what holds)."""
    from workstation.base.errors import UserError
    from workstation.studies.judge.run import verdict_ledger

    found: list[tuple[float, Path, list[VerdictLine]]] = []
    for d in _sampling(rec_path, run_id):
        try:
            lines = list(verdict_ledger(d).done.values())
            found.append(((d / VERDICTS).stat().st_mtime if (d / VERDICTS).exists() else 0.0, d, lines))
        except (UserError, OSError):
            continue
    out: dict[int, VerdictLine] = {}
    for _, _d, lines in sorted(found, key=lambda x: (x[0], str(x[1]))):
        for v in lines:
            if v.run_id == run_id:
                out[v.turn] = v
    return out


def describe(v: VerdictLine) -> str:
    """One line for the screen: what the judge said and whether the RAM agrees."""
    a = v.answer
    if not a.parsed:
        return f"judge: unreadable verdict ({a.problem or 'no reason'})"
    ram = {"true": "RAM agrees", "false": "RAM disagrees"}.get(v.truth, "RAM cannot check")
    if not a.failure:
        return f"judge: no observable failure · {a.evidence or ''}".rstrip(" ·")
    sub = f" ({a.subtype})" if a.subtype else ""
    return f"judge: {a.group or a.category}{sub} · {a.evidence or ''} · {ram}"
