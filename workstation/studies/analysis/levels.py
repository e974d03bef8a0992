"""`report`'s instruction-level drops and experience-library ablation (issue 30).

**Drops.** A batch that plays one setting at ``--guide visual``, ``steps`` and ``goal`` (a grid axis
``guide = ["visual", "steps", "goal"]``, so labels ``model|guide=visual``...) gets, per model (the
label without its ``guide=`` part) and game, two drops, each paired by seed:

- grounding = visual - steps: what telling the model what things look like is worth;
- planning = steps - goal: what telling it how to play is worth;

and the same two pooled over every (game, seed) pair of the model ("overall"). Each comes with a
percentile bootstrap 95 % interval (10,000 resamples of the pairs, seeded: it repeats exactly).
A positive drop means the fuller instructions scored higher; PokeGym saw negative ones too.

**Library ablation.** Runs with an experience library (their recording's manifest has ``experience``)
against runs of the same model (agent spec) and game without one: the difference of mean scores
with a bootstrap interval (each group resampled on its own), and, per model and game, the library's
length (rules) at the end of each run, in the order the runs were made.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from workstation.base.errors import DamagedArtifact
from workstation.store.recording import Recording
from workstation.store.records import Manifest, RecordingError, Summary
from workstation.studies.analysis import stats
from workstation.studies.analysis.ablation import RESAMPLES, paired_ci
from workstation.studies.analysis.table import Results

if TYPE_CHECKING:
    from workstation.engine.experience import RecordedUpdate

LEVELS = ("visual", "steps", "goal")
DROPS = (("grounding", "visual", "steps"), ("planning", "steps", "goal"))
OVERALL = "(overall)"


@dataclass(frozen=True)
class Drop:
    model: str
    game: str  # or OVERALL
    kind: str  # grounding | planning
    n: int  # seed pairs
    mean: float
    lo: float
    hi: float


def level_of(setting: str, protocol: dict[str, str]) -> tuple[str, str | None]:
    """(the setting without its guide part, its level or None)."""
    parts = setting.split("|")
    level = protocol.get("guide", "").strip().lower() or None
    rest = []
    for p in parts:
        if p.strip().startswith("guide="):
            level = level or p.split("=", 1)[1].strip().lower()
        else:
            rest.append(p)
    return "|".join(rest).strip(), level if level in LEVELS else None


def _ci(diffs: list[float], seed: int) -> tuple[float, float]:
    """The ablations' own paired bootstrap (``ablation.paired_ci``: scipy, percentile, seeded)."""
    _, lo, hi = paired_ci(np.asarray(diffs, dtype=float), seed, RESAMPLES)
    return lo, hi


def drops(results: Results, seed: int = 0) -> list[Drop]:
    """Both drops per model and game, and pooled per model; empty unless a model has two adjacent levels."""
    score: dict[tuple[str, str, str, str], float] = {}  # (model, game, level, seed) -> score
    for r in results.rows:
        model, level = level_of(r.setting, r.protocol)
        if level is not None:
            score[(model, r.game, level, r.seed)] = r.score
    out: list[Drop] = []
    models = sorted({k[0] for k in score})
    for model in models:
        games = sorted({k[1] for k in score if k[0] == model})
        for kind, hi_level, lo_level in DROPS:
            pooled: list[float] = []
            for game in games:
                seeds = sorted({k[3] for k in score if k[0] == model and k[1] == game})
                diffs = [score[(model, game, hi_level, s)] - score[(model, game, lo_level, s)] for s in seeds
                         if (model, game, hi_level, s) in score and (model, game, lo_level, s) in score]
                if diffs:
                    out.append(Drop(model, game, kind, len(diffs), float(np.mean(diffs)), *_ci(diffs, seed)))
                    pooled += diffs
            if pooled and len(games) > 1:
                out.append(Drop(model, OVERALL, kind, len(pooled), float(np.mean(pooled)), *_ci(pooled, seed)))
    return out


def level_separability(results: Results) -> dict[str, dict[str, str]]:
    """Per model holding all three levels: the paper's separability test (4.2) per game over its three level
    settings, ``goal`` as the baseline: {model: {game: strong | weak | none}}."""
    by: dict[str, dict[tuple[str, str], list[tuple[str, float]]]] = {}
    for r in results.rows:
        model, level = level_of(r.setting, r.protocol)
        if level is not None:
            by.setdefault(model, {}).setdefault((level, r.game), []).append((r.seed, r.score))
    out: dict[str, dict[str, str]] = {}
    for model, groups in sorted(by.items()):
        table = {k: stats.Cell(k[0], k[1], np.array([sc for _, sc in sorted(v)], dtype=float))
                 for k, v in groups.items()
                 if all((lv, k[1]) in groups for lv in LEVELS)}
        if table:
            out[model] = {g: sep.label for g, sep in stats.separability(table, "goal").items()}
    return out


# -- the library ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Finished:
    """A finished recording of the batch, typed: its manifest, summary and experience updates."""

    manifest: Manifest
    summary: Summary
    updates: list[RecordedUpdate]


def _recordings(batch_dir: Path | None) -> list[_Finished]:
    """Every finished recording under ``batch_dir/runs`` not changed by hand (read as files: a run with a library
    may carry another run id than its batch cell planned, so rows are not matched by id); one that cannot be read,
    or whose experience updates are damaged, is left out."""
    from workstation.engine.experience import read_updates

    found: list[_Finished] = []
    runs = batch_dir / "runs" if batch_dir is not None else None
    if runs is None or not runs.is_dir():
        return found
    for m in sorted(runs.glob("*/manifest.json")):
        try:
            rec = Recording(m.parent)
            summary = rec.summary_record
            if summary is None or not summary.complete or summary.changed_by_hand:
                continue
            updates = read_updates(rec.path)
        except (RecordingError, DamagedArtifact, OSError, UnicodeDecodeError):
            continue
        found.append(_Finished(rec.manifest_record, summary, updates))
    return found


def library(results: Results, seed: int = 0) -> dict[str, Any]:
    """{"ablation": [...], "lengths": {...}} from the batch's complete recordings not changed by hand: empty
    lists when no run had a library."""
    groups: dict[tuple[str, str, bool], list[float]] = {}
    series: dict[tuple[str, str], list[tuple[str, int, int]]] = {}
    for rec in _recordings(results.batch_dir):
        m = rec.manifest
        model, game = str(m.agent.get("spec") or "?"), m.game or "?"
        score = float(rec.summary.total_reward)
        exp = m.experience
        groups.setdefault((model, game, exp is not None), []).append(score)
        if exp is not None:
            start = len(exp.rules)
            end = len(rec.updates[-1].after or []) if rec.updates else start
            series.setdefault((model, game), []).append((m.created or "", start, end))
    ablation = []
    for (model, game, has), with_lib in sorted(groups.items()):
        if not has or (model, game, False) not in groups:
            continue
        without = groups[(model, game, False)]
        diff = float(np.mean(with_lib) - np.mean(without))
        rng = np.random.default_rng(seed)
        a, b = np.asarray(with_lib), np.asarray(without)
        boots = (a[rng.integers(0, len(a), (RESAMPLES, len(a)))].mean(axis=1)
                 - b[rng.integers(0, len(b), (RESAMPLES, len(b)))].mean(axis=1))
        lo, hi = ((float(np.percentile(boots, 2.5)), float(np.percentile(boots, 97.5)))
                  if len(a) > 1 and len(b) > 1 else (float("nan"), float("nan")))
        ablation.append({"model": model, "game": game, "with": len(a), "without": len(b), "diff": diff,
                         "lo": lo, "hi": hi})
    lengths = {f"{model} {game}": [end for _, _, end in sorted(s)] for (model, game), s in sorted(series.items())}
    return {"ablation": ablation, "lengths": lengths}


def to_json(results: Results, seed: int = 0) -> dict[str, Any]:
    """The report's JSON keys: ``levels`` and ``experience``, each only when the batch holds them."""
    def fin(x: float | None) -> float | None:  # JSON has no NaN
        return None if x is None or x != x else x
    out: dict[str, Any] = {}
    found = drops(results, seed)
    if found:
        out["levels"] = {"drops": [{"model": d.model, "game": d.game, "kind": d.kind, "n": d.n, "mean": d.mean,
                                    "ci95": [fin(d.lo), fin(d.hi)]} for d in found],
                         "separability": level_separability(results)}
    lib = library(results, seed)
    if lib["ablation"] or lib["lengths"]:
        out["experience"] = {"ablation": [{**a, "lo": fin(a["lo"]), "hi": fin(a["hi"])} for a in lib["ablation"]],
                             "lengths": lib["lengths"]}
    return out


def _num(x: float) -> str:
    return "-" if x != x else f"{x:+.3g}"


def section(results: Results, seed: int = 0, md: bool = False) -> list[str]:
    """The report's lines for both (nothing when the batch holds neither levels nor libraries)."""
    out: list[str] = []
    found = drops(results, seed)
    if found:
        out += ["", "## Instruction levels: drops (paired by seed, bootstrap 95% CI)" if md
                else "Instruction levels: drops (paired by seed, bootstrap 95% CI)", ""]
        out += ["grounding = visual - steps (what the appearance is worth); planning = steps - goal (what the "
                "how-to-play is worth); positive: the fuller text scored higher", ""]
        for d in found:
            out.append(f"{'- ' if md else '  '}{d.model} {d.game} {d.kind}: {_num(d.mean)} "
                       f"[{_num(d.lo)}, {_num(d.hi)}] (n {d.n})")
        for model, labels in level_separability(results).items():
            out.append(f"{'- ' if md else '  '}{model}: separability of the three levels (paper 4.2, goal as the "
                       "baseline): " + ", ".join(f"{g} {lab}" for g, lab in labels.items()))
    lib = library(results, seed)
    if lib["ablation"] or lib["lengths"]:
        out += ["", "## Experience library: with vs without (bootstrap 95% CI)" if md
                else "Experience library: with vs without (bootstrap 95% CI)", ""]
        for a in lib["ablation"]:
            out.append(f"{'- ' if md else '  '}{a['model']} {a['game']}: with - without {_num(a['diff'])} "
                       f"[{_num(a['lo'])}, {_num(a['hi'])}] ({a['with']} with, {a['without']} without)")
        if not lib["ablation"]:
            out.append("(no runs of the same model and game without a library to compare with)")
        for key, ends in lib["lengths"].items():
            out.append(f"{'- ' if md else '  '}library length over runs, {key}: " + " -> ".join(map(str, ends)))
    return out


__all__ = ["DROPS", "Drop", "LEVELS", "drops", "level_of", "level_separability", "library", "section", "to_json"]
