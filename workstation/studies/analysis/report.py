"""The report: one structure built from the results, rendered as a terminal table, Markdown
and JSON (non-finite numbers become null in JSON; ``notes`` says why)."""

from __future__ import annotations

import json
import math
import textwrap
from dataclasses import dataclass
from typing import Any

from workstation.base.errors import UserError
from workstation.base.text_table import text_table
from workstation.base.words import plural
from workstation.store.atomic import write_atomic
from workstation.studies.analysis import ablation, behaviour, footprint, levels, stats
from workstation.studies.analysis.table import Results


@dataclass
class Report:
    results: Results
    baseline: str
    cells: dict[tuple[str, str], stats.Cell]
    ranks: dict[str, dict[str, float]]
    average_rank: dict[str, tuple[float, int]]
    separability: dict[str, stats.Separability]
    ablations: list[Any]
    behaviour: dict[str, Any]
    footprint: tuple[Any, Any] | None
    bootstrap_seed: int
    human: dict[str, Any] | None = None  # human-normalised scores, when human runs are present


def build(results: Results, baseline: str = "random", bootstrap_seed: int = 0,
          without_baseline: bool = False) -> Report:
    """The report; ``without_baseline``: a batch with no baseline runs gets no separability (``{}``)
    instead of an error (``report --paper`` then lists Fig. 4 as not drawn)."""
    if baseline not in results.settings:
        folded = [s for s in results.settings if s.casefold() == baseline.casefold()]
        if len(folded) == 1:  # e.g. "Random" in another harness's CSV
            baseline = folded[0]
    if baseline not in results.settings and without_baseline:
        table = stats.cells(results)
        per_game, average = stats.ranks(table)
        return Report(results, baseline, table, per_game, average, {}, ablation.ablations(results, bootstrap_seed),
                      behaviour.behaviour(results), footprint.footprint(results), bootstrap_seed)
    if baseline not in results.settings:
        baseline = varied_baseline(results.settings, baseline) or baseline
    if baseline not in results.settings:
        shown = ", ".join(results.settings[:8]) + (", ..." if len(results.settings) > 8 else "")
        raise UserError(f"baseline setting {baseline!r} has no runs in {results.source} (settings: {shown}); "
                        "name one with --baseline LABEL")
    table = stats.cells(results)
    per_game, average = stats.ranks(table)
    return Report(results, baseline, table, per_game, average, stats.separability(table, baseline),
                  ablation.ablations(results, bootstrap_seed), behaviour.behaviour(results),
                  footprint.footprint(results), bootstrap_seed, human_normalised(results, table, baseline))


def human_normalised(results: Results, table: dict[tuple[str, str], stats.Cell], baseline: str) -> dict[str, Any] | None:
    """(model - random) / (human - random) per setting and game, and its mean over the games, when human runs
    (settings ``human...``) are present; None otherwise. A game whose human mean equals the baseline's is left out."""
    humans = [s for s in results.settings if s.lower().startswith("human")]
    if not humans or baseline in humans:
        return None
    per: dict[str, dict[str, float]] = {}
    for game in results.games:
        scores = [r.score for r in results.rows if r.game == game and r.setting in humans]
        base = table.get((baseline, game))
        if not scores or base is None:
            continue
        human = sum(scores) / len(scores)
        if abs(human - base.mean) < 1e-12:
            continue
        for s in results.settings:
            c = table.get((s, game))
            if s in humans or s == baseline or c is None:
                continue
            per.setdefault(s, {})[game] = (c.mean - base.mean) / (human - base.mean)
    if not per:
        return None
    return {s: {"games": g, "overall": sum(g.values()) / len(g)} for s, g in per.items()}


def varied_baseline(settings: list[str], base: str) -> str | None:
    """The baseline among labels a grid expanded (``random|history=3``): the one variant of ``base``, or of
    several the one at the paper's protocol values, else the first."""
    variants = [s for s in settings if s.split("|", 1)[0].casefold() == base.casefold() and "|" in s]
    if len(variants) <= 1:
        return variants[0] if variants else None
    from workstation.game.protocol import Protocol

    paper = {k: str(v).lower() for k, v in Protocol().to_json().items()}

    def at_paper(label: str) -> bool:
        pairs = [p.split("=", 1) for p in label.split("|")[1:] if "=" in p]
        return all(paper.get(k) == v.lower() for k, v in pairs)

    return next((v for v in variants if at_paper(v)), variants[0])


# -- JSON -------------------------------------------------------------------
def _num(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _sep_json(s: stats.Separability) -> dict[str, Any]:
    notes = []
    for name, v in (("d_best", s.d_best), ("d_quartile", s.d_quartile)):
        if math.isinf(v):
            notes.append(f"{name} is {'+' if v > 0 else '-'}infinite: both groups have zero variance")
        elif name == "d_best" and 1 not in s.lacking and math.isnan(v):
            notes.append("d_best undefined: the best setting and the baseline score the same on every run")
    if 3 not in s.lacking and math.isnan(s.p_anova):
        notes.append("ANOVA undefined: every setting scores the same on every run")
    if s.small_sample:
        notes.append(f"{s.label} on {plural(s.min_n, 'run')} a cell at the fewest: fewer than {stats.MIN_RUNS} is "
                     "too few to trust the label (more seeds settle it)")
    return {
        "d_best": _num(s.d_best), "q_best": _num(s.q_best), "d_quartile": _num(s.d_quartile),
        "q_anova": _num(s.q_anova), "eta2": _num(s.eta2), "criteria": list(s.criteria), "label": s.label,
        "best": s.best, "gap_best": _num(s.gap_best), "p_best": _num(s.p_best),
        "top": s.top, "bottom": s.bottom, "gap_quartile": _num(s.gap_quartile), "p_anova": _num(s.p_anova),
        "lacking": {str(k): v for k, v in sorted(s.lacking.items())}, "notes": notes, "min_n": s.min_n,
    }


def to_json(r: Report) -> dict[str, Any]:
    games = {}
    for game in r.results.games:
        games[game] = {
            "separability": _sep_json(r.separability[game]),
            "settings": {c.setting: {"n": c.n, "mean": _num(c.mean), "se": _num(c.se), "sd": _num(c.sd),
                                     "rank": r.ranks[game][c.setting]}
                         for c in r.cells.values() if c.game == game},
        }
    out = {
        "source": str(r.results.source), "baseline": r.baseline, "runs": len(r.results.rows),
        "incomplete_left_out": r.results.incomplete, "changed_by_hand_left_out": r.results.changed,
        "damaged_left_out": r.results.damaged,
        "settings": r.results.settings, "games": games,
        "human_normalised": r.human,
        "cells": [{"setting": c.setting, "game": c.game, "n": c.n, "mean": _num(c.mean), "se": _num(c.se)}
                  for c in r.cells.values()],
        "average_rank": {s: {"rank": v, "games": n} for s, (v, n) in r.average_rank.items()},
        "separability_counts": {k: sum(1 for s in r.separability.values() if s.label == k) for k in ("strong", "weak", "none")},
        "ablations": [{"variant": a.pair.variant, "reference": a.pair.reference, "field": a.pair.field,
                       "variant_value": a.pair.variant_value, "reference_value": a.pair.reference_value,
                       "game": a.game, "n": a.n, "mean_diff": _num(a.mean_diff), "ci95": [_num(a.lo), _num(a.hi)],
                       "verdict": a.verdict} for a in r.ablations],
        "bootstrap": {"resamples": ablation.RESAMPLES, "seed": r.bootstrap_seed, "method": "percentile"},
        "behaviour": {b.setting: {"runs": b.runs, "stagnation": _num(b.stagnation), "stagnation_runs": b.stagnation_runs,
                                  "turns": _num(b.turns), "invalid_turns": _num(b.invalid), "failed_turns": _num(b.failed),
                                  "invalid_share": _num(b.share(b.invalid)), "failed_share": _num(b.share(b.failed))}
                      for b in r.behaviour.values()},
    }
    out.update(levels.to_json(r.results, r.bootstrap_seed))  # instruction levels, experience library (issue 30)
    if r.footprint is not None:
        per, total = r.footprint
        out["footprint"] = {f.label: {"runs": f.runs, "totals": f.totals,
                                      "per_run": {c: f.per_run(c) for c in f.totals},
                                      "input_tokens_per_call": f.input_per_call}
                            for f in [*per.values(), total]}
    return out


# -- text -------------------------------------------------------------------
def _f(x: float | None, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{digits}f}"


def _g(x: float) -> str:
    """Up to 4 significant digits, never in exponent form (12040 turns, not 1.204e+04)."""
    if x is None or math.isnan(x):
        return "-"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if abs(x) >= 1000:
        return f"{x:.0f}"
    if x != 0 and abs(x) < 1e-3:
        return f"{x:.4f}"
    return f"{x:.4g}"


def _q(x: float | None) -> str:
    """A p- or q-value to four decimals; one below 0.0001 as ``<0.0001`` (never ``0.0000``: it is not zero)."""
    if x is None or math.isnan(x):
        return "-"
    return "<0.0001" if x < 0.0001 else f"{x:.4f}"


def _table(head: list[str], rows: list[list[str]], md: bool, right: set[int] | None = None) -> list[str]:
    right = right if right is not None else set(range(1, len(head)))
    if md:
        sep = ["---:" if i in right else "---" for i in range(len(head))]
        cell = lambda c: str(c).replace("|", "\\|")  # labels such as model|feedback=false
        return ["| " + " | ".join(map(cell, r)) + " |" for r in [head, *rows][:1]] + \
               ["| " + " | ".join(sep) + " |"] + ["| " + " | ".join(map(cell, r)) + " |" for r in rows] + [""]
    return text_table([head, *rows], right=right, rules=[0])


def _heading(text: str, md: bool) -> list[str]:
    return ["", f"## {text}", ""] if md else ["", text, "=" * len(text)]


def _unique_pairs(cis: list[Any]) -> list[Any]:
    seen: list[Any] = []
    for a in cis:
        if a.pair not in seen:
            seen.append(a.pair)
    return seen


def render(r: Report, md: bool = False) -> str:
    res, settings, games = r.results, r.results.settings, r.results.games
    out = [f"# Report: {res.source}" if md else f"Report: {res.source}", ""]
    out.append(f"{plural(len(res.rows), 'complete run')}, {plural(len(settings), 'setting')}, "
               f"{plural(len(games), 'game')}; baseline {r.baseline!r}"
               + (f"; {plural(res.incomplete, 'incomplete run')} left out" if res.incomplete else "")
               + (f"; {res.changed} run{'s' if res.changed != 1 else ''} changed by hand left out "
                  "(--include-changed counts them)" if res.changed else "")
               + (f"; {plural(res.damaged, 'damaged run')} left out (`workstation verify DIR` names each, "
                  "frames included)" if res.damaged else ""))

    out += _heading("Score: mean +- SE (n) per setting and game", md)
    rows = []
    for g in games:
        row = [g]
        for s in settings:
            c = r.cells.get((s, g))
            row.append("" if c is None else f"{_g(c.mean)} +- {_f(c.se, 2)} ({c.n})")
        rows.append(row)
    out += _table(["game", *settings], rows, md)

    if r.human:
        out += _heading("Human-normalised score: (model - baseline) / (human - baseline) per game", md)
        hgames = sorted({g for v in r.human.values() for g in v["games"]})
        rows = [[s, *[_f(v["games"].get(g)) if g in v["games"] else "" for g in hgames], _f(v["overall"])]
                for s, v in sorted(r.human.items())]
        out += _table(["setting", *hgames, "overall"], rows, md)

    out += _heading("Rank per game (1 = highest mean; ties share) and average rank", md)
    rows = [[g, *[_f(r.ranks[g].get(s), 1) if s in r.ranks[g] else "" for s in settings]] for g in games]
    rows.append(["average", *[_f(r.average_rank[s][0]) for s in settings]])
    rows.append(["games", *[str(r.average_rank[s][1]) for s in settings]])
    out += _table(["game", *settings], rows, md)
    order = sorted(settings, key=lambda s: (r.average_rank[s][0], s))
    out += ["", "By average rank: " + ", ".join(f"{s} {_f(r.average_rank[s][0])}" for s in order)]

    out += _heading("Separability per game (paper 4.2)", md)
    def mark(s: stats.Separability, i: int) -> str:
        return "n/a" if (i + 1) in s.lacking else ("yes" if s.criteria[i] else "no")

    rows = []
    for g in games:
        sep = r.separability[g]
        rows.append([g, sep.best or "-", _g(sep.gap_best), _f(sep.d_best), _q(sep.q_best), _f(sep.d_quartile),
                     _q(sep.q_anova), _f(sep.eta2, 3), mark(sep, 0), mark(sep, 1), mark(sep, 2), sep.label])
    out += _table(["game", "best", "gap", "d_best", "q_best", "d_quart", "q_anova", "eta2", "(1)", "(2)", "(3)", "label"],
                  rows, md, right={2, 3, 4, 5, 6, 7})
    counts = {k: [g for g in games if r.separability[g].label == k] for k in ("strong", "weak", "none")}
    out += ["", "; ".join(f"{k}: {len(v)}" for k, v in counts.items()) + f" (of {len(games)} games)"]
    lacking = [(g, i, why) for g in games for i, why in sorted(r.separability[g].lacking.items())]
    undefined = [g for g in games if _sep_json(r.separability[g])["notes"]]
    bullet = "- " if md else ""
    for g in undefined:
        out += [f"{bullet}{g}: " + "; ".join(_sep_json(r.separability[g])["notes"])]
    if lacking:
        out += ["", "Lacking data (counted as not passed):", ""]
        grouped: dict[tuple[int, str], list[str]] = {}
        for g, i, why in lacking:
            grouped.setdefault((i, why), []).append(g)
        out += [f"- criterion ({i}), {why}: {', '.join(gs)}" for (i, why), gs in sorted(grouped.items())]
    else:
        out += ["", "Every game has data for all three criteria."]
    out += [""]
    out += textwrap.wrap(
        "(1) best setting vs baseline: gap > 0, d >= 0.8, BH q < 0.05 (two-group ANOVA); "
        "(2) top vs bottom ceil(N/4) non-baseline settings, runs pooled: gap > 0, d >= 0.8; "
        "(3) ANOVA over all settings: BH q < 0.05, eta^2 >= 0.14. d uses the pooled SD; inf = zero "
        "variance with a positive gap. 2-3 passed = strong, 1 = weak, 0 = none.", 100)

    out += _heading(f"Ablations: paired bootstrap 95% CI (variant - reference, by seed, "
                    f"{ablation.RESAMPLES:,} resamples, seed {r.bootstrap_seed})", md)
    if r.ablations:
        rows = [[f"{a.pair.field}: {a.pair.variant_value} vs {a.pair.reference_value}", a.pair.variant, a.game,
                 str(a.n), _g(a.mean_diff), f"[{_g(a.lo)}, {_g(a.hi)}]", a.verdict] for a in r.ablations]
        out += _table(["field", "variant", "game", "n", "mean diff", "95% CI", "verdict"], rows, md, right={3, 4})
        out += [""]
        for p in _unique_pairs(r.ablations):
            mine = [a for a in r.ablations if a.pair == p and a.game != ablation.ALL_GAMES]
            tally = {v: sum(1 for a in mine if a.verdict == v) for v in
                     ("variant higher", "variant lower", "no clear difference", "too few seeds")}
            out += [f"{bullet}{p.variant} vs {p.reference} ({p.field} {p.variant_value} vs {p.reference_value}): "
                    + ", ".join(f"{v} in {n}" for v, n in tally.items() if n) + f" of {len(mine)} games"]
    else:
        out += ["No ablation pairs: no two settings with the same base label differ in exactly one protocol field."]

    out += levels.section(res, r.bootstrap_seed, md)  # instruction-level drops, experience library (issue 30)
    out += _heading("Action stagnation and parse robustness per setting", md)
    rows = []
    for b in r.behaviour.values():
        stag = "-" if b.stagnation_runs == 0 else f"{100 * b.stagnation:.1f}% ({b.stagnation_runs} runs)"

        def pct(v: float, b: Any = b) -> str:
            return "-" if math.isnan(b.share(v)) else f"{_g(v)} ({100 * b.share(v):.1f}%)"
        rows.append([b.setting, str(b.runs), stag, _g(b.turns), pct(b.invalid), pct(b.failed)])
    out += _table(["setting", "runs", "NOOP-only turns, 2nd half", "turns", "invalid turns", "failed turns"], rows, md)
    if all(b.stagnation_runs == 0 for b in r.behaviour.values()):
        out += ["(No stagnation data: needs a `stagnation` column or a batch directory with its recordings.)"]

    out += _heading("Cost footprint (as the paper reports its own)", md)
    if r.footprint is None:
        out += ["No cost columns (calls, input_tokens, output_tokens, reasoning_tokens, cost_usd) in the results."]
    else:
        per, total = r.footprint
        out += [("- " if md else "") + footprint.sentence(f) for f in [*per.values(), total]]
        cols = [c for c in footprint.COLUMNS if c in total.totals]
        def cell(f: Any, c: str) -> str:
            v = f.per_run(c)
            return "-" if v is None else f"${v:.4f}" if c == "cost_usd" else f"{v:,.1f}" if c == "calls" else footprint.tokens(v)

        rows = [[f.label, str(f.runs), *[cell(f, c) for c in cols]] for f in [*per.values(), total]]
        out += ["", "Per run:", ""] + _table(["setting", "runs", *cols], rows, md)
    return "\n".join(out) + "\n"


def write(r: Report, json_path: str | None, md_path: str | None) -> None:
    for path, kind in ((json_path, "json"), (md_path, "md")):
        if path:
            text = json.dumps(to_json(r), indent=2, allow_nan=False) + "\n" if kind == "json" else render(r, md=True)
            try:
                write_atomic(path, text)
            except OSError as e:
                raise UserError(f"cannot write {path} ({e.strerror}); pick a writable path") from None
