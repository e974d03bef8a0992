"""Question sets on disk: ``set.json``, ``questions.jsonl`` and the PNG frames they show.

A set is a directory::

    set.json          {"format": "atari-workstation-qa/1", ...how it was made}
    questions.jsonl   one JSON object per line (below)
    frames/           <run id>-<budget index>.png

Each question line has ``id``, ``game`` (a key of ``workstation games``), ``category``
(one of ``QA_CATEGORIES``), ``question`` (begins by naming the game), ``choices`` (two
or more distinct strings), ``answer`` (one of the choices), ``frames`` (a list of
``{"file", "index", "t"}``: the PNG path inside the set, the budget frame index and
its paper-clock time ``index/30`` written like ``"3.40s"``), ``source``
(``{"run_id", "recording", "frames"}``), ``truth`` (``{"ram": ...}`` with the RAM
values the answer was derived from, the ``rule`` and, from ``qa gen``, ``ask``: what
is asked in machine form, e.g. ``{"kind": "relation", "axis": "x", "a": {"name",
"index"}, "b": ...}``; or the string ``"human"``) and ``status``
(``proposed``, ``accepted``, ``edited`` or ``rejected``).

Lines are only ever appended: a later line with the same ``id`` replaces the
earlier one (that is how curation records an edit without rewriting the file).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workstation.base.errors import UserError
from workstation.store.atomic import write_atomic

FORMAT = "atari-workstation-qa/1"
SET_FILE = "set.json"
QUESTIONS = "questions.jsonl"
FRAMES_DIR = "frames"

QA_CATEGORIES = ("perception-detection", "perception-spatial", "motion-target", "motion-controlled",
              "decision-short", "decision-long")
GROUPS = {"perception": QA_CATEGORIES[:2], "motion": QA_CATEGORIES[2:4], "decision": QA_CATEGORIES[4:]}
STATUSES = ("proposed", "accepted", "edited", "rejected")
FIELDS = ("id", "game", "category", "question", "choices", "answer", "frames", "source", "truth", "status")


def paper_time(index: int) -> str:
    """The paper clock: budget frame / 30, e.g. frame 102 -> ``"3.40s"``."""
    return f"{index / 30:.2f}s"


def group_of(category: str) -> str:
    return next(g for g, cats in GROUPS.items() if category in cats)


def check_question(q: object, where: str, root: Path | None = None) -> dict[str, Any]:
    """The question if well formed, else UserError naming ``where`` and the field."""
    from workstation.game.games import GAMES

    def bad(field: str, what: str) -> UserError:
        return UserError(f"{where}: {field} {what}; fix the line or regenerate the set with `workstation qa gen`")

    if not isinstance(q, dict):
        raise bad("the line", "is not a JSON object")
    missing = [f for f in FIELDS if f not in q]
    if missing:
        raise bad(f"field {missing[0]!r}", "is missing")
    if not isinstance(q["id"], str) or not q["id"]:
        raise bad("id", "must be a non-empty string")
    if q["game"] not in GAMES:
        raise bad("game", f"{q['game']!r} is not a game key")
    if q["category"] not in QA_CATEGORIES:
        raise bad("category", f"{q['category']!r} is not one of {', '.join(QA_CATEGORIES)}")
    if not isinstance(q["question"], str) or not q["question"].strip():
        raise bad("question", "must be a non-empty string")
    ch = q["choices"]
    if not (isinstance(ch, list) and len(ch) >= 2 and all(isinstance(c, str) and c for c in ch) and len(set(ch)) == len(ch)):
        raise bad("choices", "must be two or more distinct strings")
    if q["answer"] not in ch:
        raise bad("answer", f"{q['answer']!r} is not one of the choices")
    fr = q["frames"]
    if not isinstance(fr, list) or not fr:
        raise bad("frames", "must be a non-empty list")
    for f in fr:
        if not (isinstance(f, dict) and isinstance(f.get("file"), str) and isinstance(f.get("index"), int)
                and f.get("t") == paper_time(f["index"])):
            raise bad("frames", f"entry {f!r} needs file, index and t = index/30 like \"3.40s\"")
        if root is not None and not (root / f["file"]).is_file():
            raise bad("frames", f"file {f['file']} is not in the set")
    if not isinstance(q["source"], dict) or "run_id" not in q["source"]:
        raise bad("source", "must be an object with run_id and frames")
    t = q["truth"]
    if not (t == "human" or (isinstance(t, dict) and "ram" in t)):
        raise bad("truth", "must be \"human\" or an object with \"ram\"")
    if q["status"] not in STATUSES:
        raise bad("status", f"{q['status']!r} is not one of {', '.join(STATUSES)}")
    return q


def read_set(root: Path, check_files: bool = True) -> list[dict[str, Any]]:
    """Every question of a set, the last line of each id winning, in first-seen order."""
    root = Path(root)
    meta_path = root / SET_FILE
    if not meta_path.is_file():
        raise UserError(f"not a question set: {root} (no {SET_FILE}); make one with `workstation qa gen`")
    from workstation.store.records import read_json, read_jsonl

    check_set(root)  # a set edited by hand after it was written is damaged (exit 1), never asked
    meta = read_json(meta_path)  # one line naming the file when it is not a readable JSON object
    got = meta["format"] if "format" in meta else None
    if got != FORMAT:
        raise UserError(f"{meta_path}: format {got!r} is not {FORMAT!r}; this workstation reads {FORMAT} sets")
    path = root / QUESTIONS
    if not path.exists():
        raise UserError(f"not a question set: {root} (no {QUESTIONS})")
    out: dict[str, dict[str, Any]] = {}
    for number, q in read_jsonl(path):
        q = check_question(q, f"{path} line {number}", root if check_files else None)
        out[q["id"]] = q
    return list(out.values())


SET_KIND = "qa-set"
SEAL_SKIP = ("evals",)  # where earlier `qa eval`s wrote by default (inside the set), sealed on its own


def readable(directory: Path) -> None:
    """UserError (exit 2) when a directory or its seal cannot be read at all (permissions): that is not damage."""
    from workstation.store.seal import SEAL

    try:
        with open(Path(directory) / SEAL, "rb"):
            pass
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as e:
        raise UserError(f"{directory} cannot be read ({e.strerror or e}); check its permissions",
                        file=directory) from None


def check_set(root: Path) -> None:
    """A set's seal holds (a set written before seals, with none, passes; its lines are still checked)."""
    from workstation.store.seal import check_seal

    readable(root)
    check_seal(root, SET_KIND, what="question set", missing_ok=True)


def seal_set(root: Path) -> None:
    """Seal a set: its lines may grow (curation appends), nothing else may change."""
    from workstation.store.seal import seal

    seal(root, SET_KIND, skip=SEAL_SKIP, appendable=[QUESTIONS])


class SetWriter:
    """Appends questions to a set (making it when new); writes frames once each."""

    def __init__(self, root: Path, meta: dict[str, Any] | None = None) -> None:
        self.root = Path(root)
        (self.root / FRAMES_DIR).mkdir(parents=True, exist_ok=True)
        meta_path = self.root / SET_FILE
        if not meta_path.exists():
            write_atomic(meta_path, json.dumps({"format": FORMAT, **(meta or {})}, indent=1) + "\n")
        else:
            read_set(self.root, check_files=False)  # refuse to append to a malformed or foreign set
        self._out = open(self.root / QUESTIONS, "a", encoding="utf-8")

    def frame(self, run_id: str, index: int, png: bytes) -> dict[str, Any]:
        """Store a frame PNG (once) and return its ``frames`` entry."""
        rel = f"{FRAMES_DIR}/{run_id}-{index:06d}.png"
        path = self.root / rel
        if not path.exists():
            write_atomic(path, png)
        return {"file": rel, "index": index, "t": paper_time(index)}

    def add(self, q: dict[str, Any]) -> None:
        check_question(q, f"question {q.get('id')!r}", self.root)
        self._out.write(json.dumps(q, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._out.flush()

    def close(self) -> None:
        if not self._out.closed:
            self._out.close()
            seal_set(self.root)

    def __enter__(self) -> SetWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def check_frames(root: Path, questions: list[dict[str, Any]]) -> None:
    """Every frame the questions show decodes as an image (Pillow reads it whole); else one line naming it.

    ``qa curate`` and ``qa eval`` call it before a screen opens or a question is asked."""
    from PIL import Image, UnidentifiedImageError

    seen: set[str] = set()
    for q in questions:
        for f in (q["frames"] if "frames" in q else None) or []:
            name = f["file"] if isinstance(f, dict) and "file" in f else None
            if not isinstance(name, str) or name in seen:
                continue
            seen.add(name)
            path = Path(root) / name
            try:
                with Image.open(path) as im:
                    im.load()
            except (OSError, UnidentifiedImageError, ValueError, SyntaxError) as e:
                raise UserError(f"{path}: a damaged PNG ({str(e).splitlines()[0] if str(e) else type(e).__name__}), "
                                f"shown by question {q.get('id')}; regenerate the set with `workstation qa gen`") from None
