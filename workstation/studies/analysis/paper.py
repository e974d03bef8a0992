"""``workstation report PATH... --paper``: the AtariBench paper's tables and figures, from what the paths hold.

Each PATH is one of: a batch directory or results CSV (scores: Fig. 3's rank heatmap, Fig. 4's
separability and criteria, the ablation tables), a ``qa eval`` directory (Table 2), a judge
directory from ``workstation judge`` (failure categories per model, appendix D.2; the re-query
study, Fig. 14, once ``judge requery`` ran; text over-reliance, Table 9, when --groups was given),
or a stuck report written by ``workstation judge stuck SOURCE --json > FILE`` (without one, the
batch's own recordings are read for it). A table whose data
is missing is listed under "Not drawn" with what it needs, never drawn empty. Markdown always;
PNGs (the rank heatmap, failure-category bars) with ``--plots DIR`` where matplotlib is installed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workstation.base.errors import UserError
from workstation.studies.analysis.report import Report, _f, _g, _table
from workstation.studies.analysis.stats import Separability
from workstation.studies.judge.verdict import CATEGORIES  # the judge's five

if TYPE_CHECKING:
    from workstation.studies.judge.records import JudgeSummary
    from workstation.studies.judge.stuck import StuckReport
    from workstation.studies.qa.evaluate import EvalSummary

ABLATIONS = (("feedback", "Feedback on vs off"), ("max_actions", "Actions per reply"), ("memory", "Memory mode"),
             ("horizon", "Fixed horizon vs game over"))


@dataclass
class Inputs:
    batch: Report | None = None
    evals: list[EvalSummary] = field(default_factory=list)
    judges: list[tuple[Path, JudgeSummary]] = field(default_factory=list)
    stuck: list[StuckReport] = field(default_factory=list)
    batch_path: str | None = None


def _json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def gather(paths: list[str], baseline: str = "random", bootstrap_seed: int = 0) -> Inputs:
    from workstation.studies.analysis import report
    from workstation.studies.analysis.table import load_results
    from workstation.studies.qa import report as qa_report

    got = Inputs()
    for text in paths:
        p = Path(text)
        if p.is_dir() and (p / "judge.json").is_file():
            from workstation.studies.judge.run import read_study

            if not (p / "summary.json").is_file():
                raise UserError(f"{p}: a judge directory without a readable summary.json; run the judge again")
            got.judges.append((p, read_study(p)[1]))  # checked: a damaged study is named, exit 1
        elif p.is_dir() and qa_report.is_eval_dir(p):
            got.evals += qa_report.load([str(p)])
        elif (p.is_file() and p.suffix == ".json") or (p.is_dir() and (p / "stuck.json").is_file()):
            from workstation.studies.judge.stuck import read_report

            data = _json(p) if p.is_file() else {"min_turns": None, "settings": None}
            if not data or "min_turns" not in data or "settings" not in data:
                raise UserError(f"{p}: not a stuck report (write one with `workstation judge stuck SOURCE --json > FILE`)")
            got.stuck.append(read_report(p))
        else:
            if got.batch is not None:
                raise UserError(f"{p}: a second batch; --paper lays out one batch (plus eval, judge and stuck results)")
            got.batch = report.build(load_results(text), baseline=baseline, bootstrap_seed=bootstrap_seed,
                                     without_baseline=True)
            got.batch_path = text
    if got.batch is not None and got.batch_path is not None and not got.stuck:
        got.stuck.append(_stuck_of(got.batch_path))
    return got


def _stuck_of(path: str) -> StuckReport:
    """The stuck report of a batch's recordings (``workstation judge stuck``), or an empty one without them."""
    from workstation.studies.analysis.table import resolve
    from workstation.studies.judge.stuck import StuckReport, report

    _, batch_dir = resolve(path)
    if batch_dir is None or not (batch_dir / "runs").is_dir():
        return StuckReport(None, {}, [])
    return report([str(batch_dir)])


def _missing(needs: list[tuple[str, str]], title: str, what: str) -> None:
    needs.append((title, what))


def sections(inp: Inputs) -> tuple[list[str], list[tuple[str, str]]]:
    """Markdown lines of every table the data allows, and (table, what it needs) for the rest."""
    out: list[str] = ["# AtariBench tables", ""]
    needs: list[tuple[str, str]] = []
    r = inp.batch
    if r is None:
        for title in ("Fig. 3 rank heatmap", "Fig. 4 separability and criteria",
                      *(f"Ablation: {t}" for _, t in ABLATIONS)):
            _missing(needs, title, "a batch directory or results CSV among the paths")
    else:
        settings, games = r.results.settings, r.results.games
        out += ["## Fig. 3: rank per game (1 = best) and average rank", ""]
        rows = [[g, *[_f(r.ranks[g].get(s), 1) if s in r.ranks[g] else "" for s in settings]] for g in games]
        rows.append(["**average**", *[_f(r.average_rank[s][0]) for s in settings]])
        out += _table(["game", *settings], rows, True) + [""]
        if not r.separability:
            _missing(needs, "Fig. 4 separability and criteria", f"runs of the baseline setting {r.baseline!r} in "
                                                                "the batch (or --baseline LABEL)")
        else:
            out += ["## Fig. 4: separability per game and criteria matrix", ""]
            def mark(s: Separability, i: int) -> str:
                return "n/a" if (i + 1) in s.lacking else ("yes" if s.criteria[i] else "no")

            rows = [[g, _f(s.d_best), _f(s.d_quartile), _f(s.eta2, 3), mark(s, 0), mark(s, 1), mark(s, 2), s.label]
                    for g, s in ((g, r.separability[g]) for g in games)]
            out += _table(["game", "d best vs baseline", "d top vs bottom", "eta^2", "(1)", "(2)", "(3)", "label"],
                          rows, True) + [""]
        for fieldname, title in ABLATIONS:
            mine = [a for a in r.ablations if a.pair.field == fieldname or fieldname in a.pair.field]
            if not mine:
                _missing(needs, f"Ablation: {title}", f"two settings with the same base label that differ only "
                                                      f"in {fieldname}")
                continue
            out += [f"## Ablation: {title}", ""]
            rows = [[f"{a.pair.variant_value} vs {a.pair.reference_value}", a.game, str(a.n), _g(a.mean_diff),
                     f"[{_g(a.lo)}, {_g(a.hi)}]", a.verdict] for a in mine]
            out += _table(["values", "game", "n", "mean diff", "95% CI", "verdict"], rows, True) + [""]
    if inp.evals:
        out += ["## Table 2: QA accuracy per model", ""]
        def cell(s: EvalSummary, k: str) -> str:
            share = s.accuracy.group(k)
            return "-" if share is None else f"{100 * share:.1f}"

        rows = [[s.agent, *(cell(s, k) for k in ("perception", "motion", "decision", "overall"))]
                for s in inp.evals]
        out += _table(["model", "Perception", "Motion", "Decision", "Overall"], rows, True) + [""]
    else:
        _missing(needs, "Table 2: QA accuracy", "one or more `workstation qa eval` result directories")
    _judge_sections(inp, out, needs)
    if any(rep.settings for rep in inp.stuck):
        out += ["## Stuck stretches per setting (RAM, no judge)", ""]
        rows = []
        for rep in inp.stuck:
            for name, st in rep.settings.items():
                rr = "-" if st.recovery_rate is None else f"{100 * st.recovery_rate:.0f}%"
                rho = st.spearman_stuck_vs_score
                rows.append([name, str(st.runs), _f(st.stretches_per_run), f"{100 * st.stuck_share:.1f}%",
                             str(st.aware), str(st.unaware), rr, "-" if rho is None else f"{rho:+.2f}"])
        out += _table(["setting", "runs", "stretches/run", "frames stuck", "aware", "unaware", "recovered",
                       "rho(stuck, score)"], rows, True) + [""]
    else:
        _missing(needs, "Stuck stretches", "a batch directory with its recordings, or a stuck report "
                                           "(`workstation judge stuck SOURCE --json > stuck.json`)")
    if needs:
        out += ["## Not drawn", ""] + [f"- {t}: needs {w}" for t, w in needs] + [""]
    return out, needs


def _judge_sections(inp: Inputs, out: list[str], needs: list[Any]) -> None:
    from workstation.studies.judge.records import Overreliance
    from workstation.studies.judge.requery import read_result

    if not inp.judges:
        for title in ("Failure categories per model (D.2)", "Fig. 14 re-query", "Table 9 text over-reliance"):
            _missing(needs, title, "a judge directory from `workstation judge`")
        return
    out += ["## Failure categories per model (appendix D.2)", ""]
    rows = []
    for _, s in inp.judges:
        for st, per in s.per_setting.items():
            n = per.failures
            cats = s.categories[st]
            rows.append([st, str(per.turns_judged), str(n),
                         *(f"{cats[c]} ({100 * cats[c] / n:.0f}%)" if n else "0" for c in CATEGORIES)])
    out += _table(["setting", "judged", "failures", *CATEGORIES], rows, True) + [""]
    for _, s in inp.judges:
        t = s.truth
        rate = t.agreement_rate
        line = f"Judge {s.judge}: evidence checked against RAM agrees in " + \
               ("-" if rate is None else f"{100 * rate:.0f}%") + f" of {t.checked} checkable verdicts"
        acc = s.calibration_accuracy
        if acc is not None:
            answers = (s.calibration or {})["answers"] if "answers" in (s.calibration or {}) else None
            line += f"; QA calibration {100 * acc:.1f}% on {answers} answers"
        out += [line, ""]
    requeries = [(d, read_result(d)) for d, _ in inp.judges if (d / "requery.json").is_file()]
    if requeries:
        out += ["## Fig. 14: errors with full history vs current frame only (re-query)", ""]
        rows = []
        for d, q in requeries:
            m = q.mcnemar
            lo, hi = m.ci95
            rows.append([d.name, str(q.pairs), str(q.errors_full), str(q.errors_current), f"{m.b} vs {m.c}",
                         _g(m.p) if m.p is not None else "-",
                         f"{_f(m.odds_ratio)} [{_f(lo)}, {_f(hi) if hi is not None else 'inf'}]"])
        out += _table(["judging", "pairs", "errors (full)", "errors (current only)", "discordant", "McNemar p",
                       "OR [95% CI]"], rows, True) + [""]
    else:
        _missing(needs, "Fig. 14 re-query", "`workstation judge requery DIR` on a judge directory")
    from workstation.studies.judge.records import read_file

    over: list[tuple[Path, Overreliance]] = []
    for d, s in inp.judges:
        o = s.overreliance
        if o is None and (d / "overreliance.json").is_file():
            o = read_file(d / "overreliance.json", Overreliance.read, study=d)
        if o is not None:
            over.append((d, o))
    if over:
        out += ["## Table 9: text-history over-reliance", ""]
        rows = []
        for _d, s in inp.judges:
            for st, per in s.per_setting.items():
                rows.append([st, f"{per.text_cue_followed}/{per.text_cue_asked}"])
        out += _table(["setting", "followed a contradicted text cue"], rows, True) + [""]
        for _, o in over:
            a, b, p = o.group_a, o.group_b, o.fisher.p
            line = (f"{', '.join(a.settings)}: {a.followed}/{a.asked} vs {', '.join(b.settings)}: "
                    f"{b.followed}/{b.asked}; Fisher's exact p = {'-' if p is None else f'{p:.4f}'}")
            out += [line, ""]
    else:
        _missing(needs, "Table 9 text over-reliance", "`workstation judge ... --groups A,B/C,D` (or "
                                                      "`judge overreliance DIR --groups ...`)")


def write_pngs(inp: Inputs, directory: str) -> list[Path]:
    """The rank heatmap (from the batch) and failure-category bars (from judge directories)."""
    from workstation.studies.analysis.plots import _pyplot, write_plots

    written: list[Path] = []
    if inp.batch is not None:
        written += write_plots(inp.batch, directory)[:1]
    if inp.judges:
        plt = _pyplot()
        rows = [(st, s.categories[st]) for _, s in inp.judges for st in s.categories]
        fig, ax = plt.subplots(figsize=(2 + 1.2 * len(rows), 3.5))
        bottom = [0] * len(rows)
        for c in CATEGORIES:
            vals = [counts[c] for _, counts in rows]
            ax.bar([st for st, _ in rows], vals, bottom=bottom, label=c)
            bottom = [b + v for b, v in zip(bottom, vals)]
        ax.set_ylabel("judged failures")
        ax.legend(fontsize=7)
        fig.tight_layout()
        path = Path(directory) / "failure_categories.png"
        fig.savefig(path, dpi=120)
        plt.close(fig)
        written.append(path)
    return written


def paper(paths: list[str], md_path: str | None, plots: str | None, baseline: str, bootstrap_seed: int) -> str:
    inp = gather(paths, baseline, bootstrap_seed)
    lines, _ = sections(inp)
    text = "\n".join(lines) + "\n"
    if md_path:
        try:
            Path(md_path).write_text(text, encoding="utf-8")
        except OSError as e:
            raise UserError(f"cannot write {md_path} ({e.strerror}); pick a writable path") from None
    if plots:
        for p in write_pngs(inp, plots):
            text += f"wrote {p}\n"
    return text
