"""Several ``qa eval`` results side by side: the table ``qa table`` and ``workstation report`` print.

An eval result directory is one whose ``summary.json`` holds an ``accuracy`` object
(what ``workstation qa eval --out DIR`` writes). ``load`` reads them (one line if one
is not), ``markdown`` lays them out as a Markdown table, ``write`` saves the JSON and
Markdown files ``workstation report --json/--md`` ask for.
"""

from __future__ import annotations

from typing import Any

import json
import sys
from pathlib import Path

from workstation.errors import UserError
from workstation.qa.evaluate import SUMMARY, table
from workstation.qa.qset import CATEGORIES

GROUPS = ("perception", "motion", "decision", "overall")
SUMMARY_FIELDS = {"agent": ("str", False), "set": ("str", True), "set_digest": ("str", True),
                  "repeats": ("int", True, 1, 10**6), "questions": ("int", True, 0, 10**9),
                  "answers": ("int", True, 0, 10**9), "errors": ("int", True, 0, 10**9), "complete": ("bool", True),
                  "counts": ("dict", True), "agreement": ("num", True, 0, 1), "cost_usd": ("num", True, 0, 1e9),
                  "per_question": ("list", True)}


def is_eval_dir(path: str | Path) -> bool:
    """True when ``path`` is a directory with a ``summary.json`` that has an ``accuracy`` object."""
    p = Path(path) / SUMMARY
    if not p.is_file():
        return False
    try:
        s = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(s, dict) and isinstance(s.get("accuracy"), dict)


def load(dirs: list[str]) -> list[dict[str, Any]]:
    """The summaries of eval result directories, in order; UserError naming the first bad one."""
    from workstation.store.records import check_fields, read_json

    summaries = []
    for d in dirs:
        path = Path(d) / SUMMARY
        if not path.exists():
            raise UserError(f"{path}: no eval summary there; run `workstation qa eval` first")
        from workstation.qa.evaluate import check_eval

        check_eval(Path(d))  # a damaged eval is named (exit 1), never counted
        s = read_json(path)
        if not isinstance(s.get("accuracy"), dict) or "agent" not in s:
            raise UserError(f"{path}: not an eval summary (no accuracy); run `workstation qa eval` first")
        check_fields(s, SUMMARY_FIELDS, str(path))
        acc = s["accuracy"]
        missing = [g for g in GROUPS if g not in acc]
        if missing:
            raise UserError(f"{path}: field 'accuracy.{missing[0]}' is missing; run `workstation qa eval` again")
        check_fields(acc, {g: ("num", True, 0, 1) for g in GROUPS}, f"{path} accuracy")
        if not isinstance(s.get("counts"), dict):
            raise UserError(f"{path}: field 'counts' is missing or not an object; run `workstation qa eval` again")
        for c in CATEGORIES:
            if c in acc:
                if not isinstance(acc[c], dict):
                    raise UserError(f"{path}: field 'accuracy.{c}' is not an object")
                check_fields(acc[c], {"accuracy": ("num", True, 0, 1), "correct": ("int", True, 0, 10**9),
                                      "answers": ("int", True, 0, 10**9)}, f"{path} accuracy.{c}")
        summaries.append({**s, "_dir": str(d)})  # the row's label names the directory (never written back)
    return summaries


def note_mixed_sets(summaries: list[dict[str, Any]]) -> None:
    if len({s.get("set_digest") for s in summaries}) > 1:
        sys.stderr.write("workstation: note: these evals are on different question sets\n")


def as_json(summaries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from workstation.qa.evaluate import row_label, wilson

    def ci(key: str) -> list[float] | None:
        v, n = s["accuracy"].get(key), s["counts"].get(key)
        iv = wilson(round(v * n), n) if isinstance(v, (int, float)) and n else None
        return None if iv is None else list(iv)

    out = []
    for s in summaries:
        out.append({"label": row_label(s), "dir": s.get("_dir"), "agent": s["agent"], "set": s.get("set"),
                    "seed": s.get("seed"), "accuracy": s["accuracy"],
                    "wilson95": {k: ci(k) for k in GROUPS}})
    return out


def markdown(summaries: list[dict[str, Any]]) -> str:
    """The same table as ``evaluate.table``, in Markdown: groups, then the six categories."""
    def pct(v: float | None) -> str:
        return "-" if v is None else f"{100 * v:.1f}%"

    head = ["model", *GROUPS, "agreement"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in summaries:
        cells = [f"{pct(s['accuracy'][g])} ({s.get('counts', {}).get(g, '-')})" for g in GROUPS]
        ag = s.get("agreement")
        lines.append("| " + " | ".join([s["agent"], *cells, "-" if ag is None else f"{100 * ag:.0f}%"]) + " |")
    lines += ["", "| model | " + " | ".join(CATEGORIES) + " |", "|" + "---|" * (len(CATEGORIES) + 1)]
    for s in summaries:
        cells = [f"{pct(s['accuracy'][c]['accuracy'])} ({s['accuracy'][c]['answers']})" for c in CATEGORIES]
        lines.append("| " + " | ".join([s["agent"], *cells]) + " |")
    return "\n".join(lines) + "\n"


def write(summaries: list[dict[str, Any]], json_path: str | None, md_path: str | None) -> list[str]:
    """Write the JSON and/or Markdown forms; the paths written."""
    written = []
    if json_path:
        Path(json_path).write_text(json.dumps(as_json(summaries), indent=1) + "\n", encoding="utf-8")
        written.append(json_path)
    if md_path:
        Path(md_path).write_text("# Diagnostic QA accuracy\n\n" + markdown(summaries), encoding="utf-8")
        written.append(md_path)
    return written


def report(dirs: list[str], json_path: str | None = None, md_path: str | None = None) -> int:
    """``workstation report EVAL_DIR...``: print the side-by-side table, write the files asked for."""
    summaries = load(dirs)
    note_mixed_sets(summaries)
    written = write(summaries, json_path, md_path)
    print(table(summaries))
    for path in written:
        print(f"wrote {path}")
    return 0
