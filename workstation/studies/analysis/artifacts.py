"""`workstation verify DIR` for every artifact kind that is not one recording: its seal, its records, and
(without ``--quick``) every recording it holds.

A recording is checked by ``workstation.run.verify``; a directory that carries a seal (``store/seal.py``) names
its kind there, and each kind is checked here the way its own readers check it: the seal first, then its typed
records through the one checked reader of that kind (a judge study, a stuck report, IDC rounds, a QA set or
eval, a batch, a human session, an experience library). The full check also takes every recording inside the
artifact through the fast integrity check and the changed-by-hand verdict, so a match, an episode or a batch run
edited after the study was sealed is named too; ``--quick`` takes each through the cheap check a listing makes
(``store.integrity.cheap_problems``: its manifest and turns against their digests, its summary against its turns),
so an edited score is named there too, without reading the frames.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from workstation.base.errors import UserError
from workstation.store.seal import SEAL, Derived, seal_problems


def _kind(directory: Path) -> str | None:
    try:
        data = json.loads((directory / SEAL).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    kind = data.get("kind") if isinstance(data, dict) else None
    return kind if isinstance(kind, str) else None


def _judge_study(d: Path) -> None:
    from workstation.studies.judge.records import check_study
    from workstation.studies.judge.run import read_meta, verdict_ledger

    check_study(d)
    read_meta(d)
    verdict_ledger(d)


def _stuck(d: Path) -> None:
    from workstation.studies.judge.stuck import read_report

    read_report(d)


def _idc(d: Path) -> None:
    from workstation.studies.idc.curve import load_checked

    load_checked(d)  # the curve and its ledger's every line, as `report` reads them


def _qa_set(d: Path) -> None:
    from workstation.studies.qa.qset import check_set, read_set

    check_set(d)
    read_set(d)


def _qa_eval(d: Path) -> None:
    from workstation.studies.qa.evaluate import answer_ledger, check_eval

    check_eval(d)
    answer_ledger(d)


def _batch(d: Path) -> None:
    from workstation.studies.analysis.table import load_results

    if (d / "results.csv").is_file():
        load_results(d, include_changed=True)


def _arena(d: Path) -> None:
    from workstation.base.errors import DamagedArtifact
    from workstation.studies.arena.report import scan_matches

    _, damaged = scan_matches(d)  # its ledger, then each match it recorded as it was pinned
    if damaged:
        more = f" (and {len(damaged) - 1} more)" if len(damaged) > 1 else ""
        raise DamagedArtifact(f"a match is damaged: {damaged[0].path}: {damaged[0].why}{more}", file=damaged[0].path)


CHECKS: dict[str, Callable[[Path], None]] = {
    "judge-study": _judge_study, "stuck-report": _stuck, "idc": _idc, "qa-set": _qa_set, "qa-eval": _qa_eval,
    "batch": _batch, "arena": _arena,
}


def _idc_adopting(d: Path) -> Derived:
    from workstation.studies.idc.curve import adopting

    return adopting(d)


def _arena_adding(d: Path) -> Derived:
    from workstation.studies.arena.played import adding

    return adding(d)


# the files a kind's seal may not name yet (an IDC's ledger, started whole from its curve and not yet sealed; an
# arena's identity, pinned to what its matches share and not yet sealed)
ADDING: dict[str, Callable[[Path], Derived]] = {"idc": _idc_adopting, "arena": _arena_adding}


# an artifact written before seals existed is known by the file its kind always writes
MARKERS = {"judge.json": "judge-study", "stuck.json": "stuck-report", "curve.json": "idc", "set.json": "qa-set",
           "eval.json": "qa-eval", "arena.jsonl": "arena"}


def _marked(directory: Path) -> str | None:
    return next((kind for name, kind in MARKERS.items() if (directory / name).is_file()), None)


def is_artifact(path: str | Path) -> bool:
    """A directory the workstation sealed (or wrote before seals: a study, rounds, a set, an eval) that is not
    itself a recording."""
    p = Path(path)
    return p.is_dir() and not (p / "manifest.json").exists() and ((p / SEAL).is_file() or _marked(p) is not None)


def verify_artifact(path: str | Path, quick: bool) -> tuple[bool, str]:
    """(holds, one line) for a sealed artifact directory."""
    d = Path(path)
    sealed = (d / SEAL).is_file()
    kind = _kind(d) if sealed else _marked(d)
    if kind is None:
        return False, f"DAMAGED: {d}'s {SEAL} cannot be read as a seal"
    problems = seal_problems(d, kind, missing_ok=not sealed, added_ok=ADDING[kind](d) if kind in ADDING else None)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return False, f"DAMAGED: {kind} {d}: {problems[0]}{more}"
    check = CHECKS.get(kind)
    try:
        if check is not None:
            check(d)
    except UserError as e:
        return False, f"DAMAGED: {kind} {d}: {e}"
    held = 0
    from workstation.run.hand_check import replan_problems
    from workstation.store.index import find_recordings
    from workstation.store.integrity import cheap_problems, quick_verdict
    from workstation.store.recording import Recording

    for rec_path in sorted(find_recordings(d)):
        try:
            rec = Recording(rec_path)
            if quick:  # the cheap check: manifest and turns against their digests, the summary against the turns
                found = cheap_problems(rec)
                ok, line = not found, f"{found[0] if found else ''} ({rec_path})"
            else:
                ok, line = quick_verdict(rec)
                line = line.removeprefix("DAMAGED: ")
                if ok and (replanned := replan_problems(rec)):
                    ok, line = False, f"{replanned[0]} ({rec_path})"
            rec.close()
        except UserError as e:
            ok, line = False, str(e)
        if not ok:
            return False, f"DAMAGED: {kind} {d}: a recording inside it fails its check: {line}"
        held += 1
    inside = f"; {held} recording{'s' if held != 1 else ''} inside hold"
    if quick and held:
        inside += " (manifest, turns and summary; `workstation verify` without --quick checks their frames too)"
    what = "its seal and records hold" if sealed else "its records hold (written before seals: no digests to check)"
    return True, f"OK: {kind} {d}: {what}{inside}"


__all__ = ["is_artifact", "verify_artifact"]
