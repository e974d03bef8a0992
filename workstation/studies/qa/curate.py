"""Curation of a question set, headless: every change is one appended line.

A curator (the TUI screen, or a script) accepts, rejects or edits a question, or
writes a new one by hand from any recording's frames. Nothing is rewritten: the
set's reader lets the last line of an id win, so a crash loses at most the change
being made.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workstation.base.errors import UserError
from workstation.studies.qa.qset import QUESTIONS, SetWriter, check_question, read_set

EDITABLE = ("question", "choices", "answer", "category")


def _find(root: Path, qid: str) -> dict[str, Any]:
    for q in read_set(root):
        if q["id"] == qid:
            return q
    raise UserError(f"no question {qid!r} in {root}")


def _append(root: Path, q: dict[str, Any]) -> dict[str, Any]:
    check_question(q, f"question {q['id']!r}", Path(root))
    with open(Path(root) / QUESTIONS, "a", encoding="utf-8") as f:
        f.write(json.dumps(q, ensure_ascii=False, separators=(",", ":")) + "\n")
        f.flush()
    return q


def set_status(root: Path, qid: str, status: str) -> dict[str, Any]:
    """Accept (``accepted``), reject (``rejected``) or reopen (``proposed``) a question."""
    return _append(root, dict(_find(root, qid), status=status))


def edit(root: Path, qid: str, **changes: Any) -> dict[str, Any]:
    """Change the text, choices, answer or category; the question becomes ``edited`` (its RAM
    truth is kept, with the original answer beside it when the answer changed)."""
    unknown = set(changes) - set(EDITABLE)
    if unknown:
        raise UserError(f"cannot edit {sorted(unknown)}: editable fields are {', '.join(EDITABLE)}")
    q = _find(root, qid)
    new = dict(q, **changes, status="edited")
    if "answer" in changes and changes["answer"] != q["answer"] and isinstance(q["truth"], dict):
        ram = q["truth"].get("answer_from_ram", q["answer"])
        truth = dict(q["truth"], answer_from_ram=ram)
        if changes["answer"] != ram:  # the person contradicts what the RAM says: kept, and marked
            truth["overridden"] = True
        else:
            truth.pop("overridden", None)
        new["truth"] = truth
    return _append(root, new)


def contradiction(q: dict[str, Any]) -> str | None:
    """A warning when a question's answer contradicts its RAM truth (an edit overrode it), else None."""
    t = q["truth"] if "truth" in q else None
    if isinstance(t, dict) and "overridden" in t and t["overridden"]:
        return (f"the answer {q['answer']!r} contradicts the RAM truth ({t.get('answer_from_ram')!r}, "
                f"{t.get('rule', 'ram')}); saved, with the truth marked overridden")
    return None


def _titled(game: str, question: str) -> str:
    """The question as it names the game first ("Breakout ..." or "In Breakout, ...")."""
    from workstation.engine.promptpack import display_title

    title = display_title(game)
    return question if question.startswith((title, f"In {title}")) else f"{title}. {question}"


def _new_id(root: Path, game: str, qid: str | None) -> str:
    existing = {q["id"] for q in read_set(root)}
    if qid is None:
        k = 1
        while f"{game}-h{k:03d}" in existing:
            k += 1
        return f"{game}-h{k:03d}"
    if qid in existing:
        raise UserError(f"{root} already has a question {qid!r}; edit it instead")
    return qid


def add_on_frames(root: Path, base_id: str, category: str, question: str, choices: list[str], answer: str,
                  status: str = "accepted", qid: str | None = None) -> dict[str, Any]:
    """A new question written by a person on the frames another question of the set shows
    (``truth: "human"``; ``accepted`` as a template gave it, ``edited`` when the person changed it)."""
    if status not in ("accepted", "edited"):
        raise UserError(f"a hand-written question is accepted or edited, not {status!r}")
    base = _find(root, base_id)
    q = {"id": _new_id(root, base["game"], qid), "game": base["game"], "category": category,
         "question": _titled(base["game"], question), "choices": list(choices), "answer": answer,
         "frames": [dict(f) for f in base["frames"]], "source": dict(base["source"], from_question=base_id),
         "truth": "human", "status": status}
    return _append(root, q)


def add_by_hand(root: Path, recording: Path, frames: list[int], category: str, question: str,
                choices: list[str], answer: str, qid: str | None = None, status: str = "accepted") -> dict[str, Any]:
    """A new question written by a person from a recording's frames (``truth: "human"``;
    ``status="proposed"`` when its answer is still to be set in the curator)."""
    from workstation.store.recording import Recording
    from workstation.store.records import RecordingError

    try:
        rec = Recording(Path(recording))
    except RecordingError as e:
        raise UserError(str(e)) from None
    game = str(rec.manifest_record.game or "")
    run_id = str(rec.manifest_record.run_id or rec.path.name)
    n = len(rec.frames)
    bad = [i for i in frames if not 0 <= i < n]
    if not frames or bad:
        raise UserError(f"frames {bad or frames} are not in {recording} (it holds frames 0..{n - 1})")
    text = _titled(game, question)
    qid = _new_id(root, game, qid)
    with SetWriter(root) as w:
        entries = [w.frame(run_id, i, rec.frames.png(i)) for i in frames]
        q = {"id": qid, "game": game, "category": category, "question": text, "choices": list(choices),
             "answer": answer, "frames": entries,
             "source": {"run_id": run_id, "recording": str(rec.path), "frames": list(frames)},
             "truth": "human", "status": status}
        w.add(q)
    return q


HAND_SET = "{game}-hand"  # the default set a recording's marked frames go to, under locations.QA
MAX_MARKED = 8  # frames a question shows at most: a longer marked range is sampled evenly


def hand_set(game: str, qa_root: str | Path | None = None) -> Path:
    """``qa/<game>-hand``: where frames marked in an opened recording go by default."""
    from workstation.base.locations import QA

    return Path(qa_root if qa_root is not None else QA) / HAND_SET.format(game=game)


def spread(first: int, last: int, most: int = MAX_MARKED) -> list[int]:
    """The frames first..last, or ``most`` of them evenly spaced with both ends kept."""
    first, last = min(first, last), max(first, last)
    if last - first + 1 <= most:
        return list(range(first, last + 1))
    return sorted({first + round(k * (last - first) / (most - 1)) for k in range(most)})


def propose_from_recording(root: Path, recording: Path, frames: list[int]) -> dict[str, Any]:
    """A new ``proposed`` hand-written question on a recording's frames, from the template of
    its category (one frame: perception-spatial; several: motion-target), made into a set at
    ``root`` when there is none; the curator then sets its text, choices and answer."""
    from workstation.store.recording import Recording
    from workstation.store.records import RecordingError
    from workstation.studies.qa import templates
    from workstation.studies.qa.qset import SET_FILE

    try:
        game = str(Recording(Path(recording)).manifest_record.game or "")
    except RecordingError as e:
        raise UserError(str(e)) from None
    root = Path(root)
    if not (root / SET_FILE).exists():
        SetWriter(root, {"made_by": "workstation open (marked frames)"}).close()
    category = "perception-spatial" if len(frames) == 1 else "motion-target"
    t = templates.fill(game, category, *templates.default_objects(game, category))
    return add_by_hand(root, recording, list(frames), category, t["question"], t["choices"], t["answer"],
                       status="proposed")
