"""Several ``qa eval`` results side by side: the table ``qa table`` and ``workstation report`` print.

An eval result directory is one whose ``summary.json`` holds an ``accuracy`` object
(what ``workstation qa eval --out DIR`` writes). ``load`` reads them (one line if one
is not), ``markdown`` lays them out as a Markdown table, ``write`` saves the JSON and
Markdown files ``workstation report --json/--md`` ask for.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from workstation.base.errors import UserError
from workstation.studies.qa.evaluate import GROUP_KEYS, SUMMARY, EvalSummary, table
from workstation.studies.qa.qset import QA_CATEGORIES


def is_eval_dir(path: str | Path) -> bool:
    """True when ``path`` is a directory with a ``summary.json`` that has an ``accuracy`` object."""
    p = Path(path) / SUMMARY
    if not p.is_file():
        return False
    try:
        s = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    return isinstance(s, dict) and "accuracy" in s and isinstance(s["accuracy"], dict)


def load(dirs: list[str]) -> list[EvalSummary]:
    """The summaries of eval result directories, in order, checked (seal, then every field); one line naming the
    first bad one (exit 1 for a sealed eval edited by hand)."""
    from workstation.base.errors import DamagedArtifact
    from workstation.store.records import read_json
    from workstation.studies.qa.evaluate import check_eval, summary_problem

    summaries = []
    for d in dirs:
        path = Path(d) / SUMMARY
        if not path.exists():
            raise UserError(f"{path}: no eval summary there; run `workstation qa eval` first")
        check_eval(Path(d))  # a damaged eval is named (exit 1), never counted
        s = read_json(path)
        if "accuracy" not in s or not isinstance(s["accuracy"], dict) or "agent" not in s:
            raise UserError(f"{path}: not an eval summary (no accuracy); run `workstation qa eval` first")
        summary = EvalSummary.from_json(s, str(path), str(d))  # the row's label names the directory
        why = summary_problem(summary, Path(d))
        if why:
            raise DamagedArtifact(f"QA eval {d} is damaged: {path} contradicts its answers ({why}); it is left as "
                                  "it is and not counted", file=path)
        summaries.append(summary)
    return summaries


def note_mixed_sets(summaries: list[EvalSummary]) -> None:
    if len({s.set_digest for s in summaries}) > 1:
        sys.stderr.write("workstation: note: these evals are on different question sets\n")


def as_json(summaries: list[EvalSummary]) -> list[dict[str, Any]]:
    from workstation.studies.qa.evaluate import row_label, wilson

    def ci(s: EvalSummary, key: str) -> list[float] | None:
        v, n = s.accuracy.group(key), s.counts[key] if key in s.counts else None
        iv = wilson(round(v * n), n) if v is not None and n else None
        return None if iv is None else list(iv)

    return [{"label": row_label(s), "dir": s.dir, "agent": s.agent, "set": s.meta_text("set"),
             "seed": s.meta["seed"] if "seed" in s.meta else None, "accuracy": s.accuracy.to_json(),
             "wilson95": {k: ci(s, k) for k in GROUP_KEYS}} for s in summaries]


def markdown(summaries: list[EvalSummary]) -> str:
    """The same table as ``evaluate.table``, in Markdown: groups, then the six categories."""
    def pct(v: float | None) -> str:
        return "-" if v is None else f"{100 * v:.1f}%"

    head = ["model", *GROUP_KEYS, "agreement"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for s in summaries:
        cells = [f"{pct(s.accuracy.group(g))} ({s.counts[g] if g in s.counts else '-'})" for g in GROUP_KEYS]
        ag = s.agreement
        lines.append("| " + " | ".join([s.agent, *cells, "-" if ag is None else f"{100 * ag:.0f}%"]) + " |")
    lines += ["", "| model | " + " | ".join(QA_CATEGORIES) + " |", "|" + "---|" * (len(QA_CATEGORIES) + 1)]
    for s in summaries:
        cats = s.accuracy.categories
        missing = [c for c in QA_CATEGORIES if c not in cats]
        if missing:
            raise UserError(f"{s.dir}: its summary has no accuracy for {missing[0]}; run `workstation qa eval` again")
        cells = [f"{pct(cats[c].accuracy)} ({cats[c].answers})" for c in QA_CATEGORIES]
        lines.append("| " + " | ".join([s.agent, *cells]) + " |")
    return "\n".join(lines) + "\n"


def write(summaries: list[EvalSummary], json_path: str | None, md_path: str | None) -> list[str]:
    """Write the JSON and/or Markdown forms (each whole or not at all); the paths written."""
    from workstation.store.atomic import write_atomic

    written = []
    if json_path:
        write_atomic(json_path, json.dumps(as_json(summaries), indent=1) + "\n")
        written.append(json_path)
    if md_path:
        write_atomic(md_path, "# Diagnostic QA accuracy\n\n" + markdown(summaries))
        written.append(md_path)
    return written
def check_outputs(dirs: list[str], paths: list[tuple[str, str | None]]) -> None:
    """A report file is never written inside an eval it reads nor inside that eval's question set (the set it
    names in eval.json), at any depth: one line, before anything is read or printed."""
    inputs: list[tuple[str, Path]] = []
    for d in dirs:
        inputs.append((f"the eval {d}", Path(d)))
        try:
            meta = json.loads((Path(d) / "eval.json").read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            continue  # load() names what is wrong with it
        if isinstance(meta, dict) and isinstance(meta.get("set"), str) and meta["set"]:
            inputs.append((f"the question set {meta['set']} of the eval {d}", Path(meta["set"])))
    for flag, path in paths:
        if not path:
            continue
        target = Path(path).expanduser().resolve()
        for what, root in inputs:
            r = root.expanduser().resolve()
            if r.is_dir() and (target == r or r in target.parents):
                raise UserError(f"{flag} {path} is inside {what}, an input; write the report elsewhere", file=path)


def report(dirs: list[str], json_path: str | None = None, md_path: str | None = None) -> int:
    """``workstation report EVAL_DIR...``: print the side-by-side table, write the files asked for."""
    check_outputs(dirs, [("--json", json_path), ("--md", md_path)])
    summaries = load(dirs)
    note_mixed_sets(summaries)
    written = write(summaries, json_path, md_path)
    print(table(summaries))
    for path in written:
        print(f"wrote {path}")
    return 0
