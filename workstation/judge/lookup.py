"""Find the verdicts on a recording's turns, for the open screen.

A judging lives in its own directory (``workstation judge --out DIR``), not in the recording,
so the open screen looks for judge directories: in the directories named by ``WORKSTATION_JUDGED``
(separated by the OS path separator) when it is set, else in the current directory and the three
directories above the recording, each at most two levels down. A judging counts when its
``judge.json`` sampled the recording's run id; where several judged the same turn, the newest
line wins.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

ENV_VAR = "WORKSTATION_JUDGED"


def _roots(rec_path: Path) -> list[Path]:
    named = os.environ.get(ENV_VAR, "")
    if named.strip():
        return [Path(p) for p in named.split(os.pathsep) if p.strip()]
    rec_path = rec_path.resolve()
    return [Path.cwd(), *list(rec_path.parents)[:3]]


def judge_dirs(rec_path: Path) -> list[Path]:
    seen: dict[Path, None] = {}
    for root in _roots(Path(rec_path)):
        for pattern in ("judge.json", "*/judge.json", "*/*/judge.json"):
            for meta in root.glob(pattern):
                seen.setdefault(meta.parent.resolve(), None)
    return list(seen)


def verdicts_for(rec_path: Path, run_id: str | None) -> dict[int, dict]:
    """turn -> the verdict on it (with ``judging``: the directory it came from); {} when none is found."""
    from workstation.judge.run import META, VERDICTS, read_lines

    if not run_id:
        return {}
    found: list[tuple[float, Path]] = []
    for d in judge_dirs(rec_path):
        try:
            meta = json.loads((d / META).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if any(isinstance(s, dict) and s.get("run_id") == run_id for s in meta.get("samples") or []):
            try:
                found.append(((d / VERDICTS).stat().st_mtime, d))
            except OSError:
                continue
    out: dict[int, dict] = {}
    for _, d in sorted(found):
        for v in read_lines(d / VERDICTS):
            if v.get("run_id") == run_id and isinstance(v.get("turn"), int):
                out[v["turn"]] = {**v, "judging": str(d)}
    return out


def describe(v: dict) -> str:
    """One line for the screen: what the judge said and whether the RAM agrees."""
    if not v.get("parsed"):
        return f"judge: unreadable verdict ({v.get('problem') or 'no reason'})"
    truth = v.get("truth_agrees", "unknown")
    ram = {True: "RAM agrees", False: "RAM disagrees"}.get(truth, "RAM cannot check")
    if not v.get("failure"):
        return f"judge: no observable failure · {v.get('evidence') or ''}".rstrip(" ·")
    sub = f" ({v['subtype']})" if v.get("subtype") else ""
    return f"judge: {v.get('group') or v.get('category')}{sub} · {v.get('evidence') or ''} · {ram}"
