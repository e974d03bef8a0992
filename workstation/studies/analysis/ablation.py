"""Ablation pairs and their paired bootstrap 95% CIs.

Two settings form a pair when they have the same base label (the part before the first ``|``)
and differ in exactly one protocol field. A setting's protocol fields come from its
protocol-field columns that hold one value over all its runs, and from ``key=value`` parts of
its label (``gpt-5.4-mini|feedback=false``) where no column names that key. A field known for
only one of the two settings makes them no pair. The difference is variant minus reference,
the reference being the side with the paper's default value when one side has it, otherwise
the setting whose label sorts first.
Per game, runs are paired by seed; the CI is the percentile interval of the mean difference
over 10,000 resamples of those pairs (scipy.stats.bootstrap), seeded, so it repeats exactly.
When a pair has runs in two or more games, one more CI pools every (game, seed) pair, on raw
scores (so games with large scores weigh most).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from workstation.studies.analysis.table import Results

RESAMPLES = 10_000
ALL_GAMES = "(all games)"  # the CI over every (game, seed) pair of a settings pair


def _norm(value: str) -> str:
    t = str(value).strip().lower()
    try:
        return f"{float(t):g}"
    except ValueError:
        return t


def _defaults() -> dict[str, str]:
    from workstation.game.protocol import Protocol

    return {k: _norm(v) for k, v in Protocol().to_json().items()}


def descriptors(results: Results) -> dict[str, tuple[str, dict[str, str]]]:
    """Per setting: its base label and the protocol fields known for it."""
    values: dict[str, dict[str, set[str]]] = {}
    for r in results.rows:
        mine = values.setdefault(r.setting, {})
        for k, v in r.protocol.items():
            mine.setdefault(k, set()).add(_norm(v))
    out: dict[str, tuple[str, dict[str, str]]] = {}
    for setting, cols in values.items():
        base, *parts = setting.split("|")
        known = {k: next(iter(v)) for k, v in cols.items() if len(v) == 1 and next(iter(v)) != ""}
        for part in parts:
            if "=" in part:
                k, v = part.split("=", 1)
                if k.strip() not in cols:
                    known[k.strip()] = _norm(v)
        out[setting] = (base.strip(), known)
    return out


@dataclass
class Pair:
    variant: str
    reference: str
    field: str
    variant_value: str
    reference_value: str


def pairs(results: Results) -> list[Pair]:
    desc = descriptors(results)
    defaults = _defaults()
    found = []
    names = sorted(desc)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            (base_a, fa), (base_b, fb) = desc[a], desc[b]
            if base_a != base_b or set(fa) != set(fb):
                continue
            diff = [k for k in fa if fa[k] != fb[k]]
            if len(diff) != 1:
                continue
            k = diff[0]
            variant, reference = (a, b) if fb[k] == defaults.get(k) else (b, a)
            found.append(Pair(variant, reference, k, desc[variant][1][k], desc[reference][1][k]))
    return found


@dataclass
class PairCI:
    pair: Pair
    game: str
    n: int  # seeds in both settings
    mean_diff: float
    lo: float
    hi: float

    @property
    def verdict(self) -> str:
        if math.isnan(self.lo):
            return "too few seeds"
        return "variant higher" if self.lo > 0 else "variant lower" if self.hi < 0 else "no clear difference"


def paired_ci(diffs: np.ndarray, seed: int, resamples: int = RESAMPLES) -> tuple[float, float, float]:
    """Mean paired difference and its percentile bootstrap 95% CI (NaN CI under two pairs)."""
    mean = float(np.mean(diffs)) if len(diffs) else math.nan
    if len(diffs) < 2:
        return mean, math.nan, math.nan
    res = stats.bootstrap((np.asarray(diffs, dtype=float),), np.mean, n_resamples=resamples,
                          method="percentile", confidence_level=0.95, rng=np.random.default_rng(seed))
    return mean, float(res.confidence_interval.low), float(res.confidence_interval.high)


def ablations(results: Results, seed: int = 0) -> list[PairCI]:
    by = {(r.setting, r.game, r.seed): r.score for r in results.rows}
    seeds_of: dict[tuple[str, str], set[str]] = {}
    for st, g, s in by:
        seeds_of.setdefault((st, g), set()).add(s)
    out = []
    for p in pairs(results):
        pooled: list[np.ndarray] = []
        for game in results.games:
            seeds = sorted(seeds_of.get((p.variant, game), set()) & seeds_of.get((p.reference, game), set()))
            if not seeds:
                continue
            diffs = np.array([by[(p.variant, game, s)] - by[(p.reference, game, s)] for s in seeds])
            out.append(PairCI(p, game, len(seeds), *paired_ci(diffs, seed)))
            pooled.append(diffs)
        if len(pooled) > 1:  # every (game, seed) pair at once: raw scores, so high-scoring games weigh most
            diffs = np.concatenate(pooled)
            out.append(PairCI(p, ALL_GAMES, len(diffs), *paired_ci(diffs, seed)))
    return out
