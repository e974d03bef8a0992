"""Curation of a question set, headless: every change is one appended line.

A curator (the TUI screen, or a script) accepts, rejects or edits a question, or
writes a new one by hand from any recording's frames. Nothing is rewritten: the
set's reader lets the last line of an id win, so a crash loses at most the change
being made.
"""

from __future__ import annotations

import json
from pathlib import Path

from workstation.errors import UserError
from workstation.qa.qset import QUESTIONS, SetWriter, check_question, read_set

EDITABLE = ("question", "choices", "answer", "category")


def _find(root: Path, qid: str) -> dict:
    for q in read_set(root):
        if q["id"] == qid:
            return q
    raise UserError(f"no question {qid!r} in {root}")


def _append(root: Path, q: dict) -> dict:
    check_question(q, f"question {q['id']!r}", Path(root))
    with open(Path(root) / QUESTIONS, "a", encoding="utf-8") as f:
        f.write(json.dumps(q, ensure_ascii=False, separators=(",", ":")) + "\n")
        f.flush()
    return q


def set_status(root: Path, qid: str, status: str) -> dict:
    """Accept (``accepted``), reject (``rejected``) or reopen (``proposed``) a question."""
    return _append(root, dict(_find(root, qid), status=status))


def edit(root: Path, qid: str, **changes) -> dict:
    """Change the text, choices, answer or category; the question becomes ``edited`` (its RAM
    truth is kept, with the original answer beside it when the answer changed)."""
    unknown = set(changes) - set(EDITABLE)
    if unknown:
        raise UserError(f"cannot edit {sorted(unknown)}: editable fields are {', '.join(EDITABLE)}")
    q = _find(root, qid)
    new = dict(q, **changes, status="edited")
    if "answer" in changes and changes["answer"] != q["answer"] and isinstance(q["truth"], dict):
        new["truth"] = dict(q["truth"], answer_from_ram=q["truth"].get("answer_from_ram", q["answer"]))
    return _append(root, new)


def add_by_hand(root: Path, recording: Path, frames: list[int], category: str, question: str,
                choices: list[str], answer: str, qid: str | None = None) -> dict:
    """A new question written by a person from a recording's frames (``truth: "human"``)."""
    from workstation.store.recording import Recording, RecordingError
    from workstation.turn.promptpack import display_title

    try:
        rec = Recording(Path(recording))
    except RecordingError as e:
        raise UserError(str(e)) from None
    game = rec.manifest.get("game")
    run_id = str(rec.manifest.get("run_id") or rec.path.name)
    n = len(rec.frames)
    bad = [i for i in frames if not 0 <= i < n]
    if not frames or bad:
        raise UserError(f"frames {bad or frames} are not in {recording} (it holds frames 0..{n - 1})")
    title = display_title(game)
    text = question if question.startswith(title) else f"{title}. {question}"
    existing = {q["id"] for q in read_set(root)}
    if qid is None:
        k = 1
        while f"{game}-h{k:03d}" in existing:
            k += 1
        qid = f"{game}-h{k:03d}"
    elif qid in existing:
        raise UserError(f"{root} already has a question {qid!r}; edit it instead")
    with SetWriter(root) as w:
        entries = [w.frame(run_id, i, rec.frames.png(i)) for i in frames]
        q = {"id": qid, "game": game, "category": category, "question": text, "choices": list(choices),
             "answer": answer, "frames": entries,
             "source": {"run_id": run_id, "recording": str(rec.path), "frames": list(frames)},
             "truth": "human", "status": "accepted"}
        w.add(q)
    return q
