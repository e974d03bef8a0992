"""Per-cell scores, ranks, and the paper's separability per game (AtariBench section 4.2).

Decisions the paper leaves open, made here and stated in the report:

- Cohen's d uses the pooled SD sqrt(((n1-1)s1^2 + (n2-1)s2^2) / (n1+n2-2)) with sample SDs.
  When the pooled SD is 0, d is +inf for a positive gap (the groups are perfectly apart, so
  the criterion passes), -inf for a negative one, and undefined (NaN, fails) for no gap.
- A group comparison needs more runs than groups (at least one group with two runs); a game
  short of that, or without the baseline, is listed as lacking data for that criterion. A
  single-run cell is used as it is (its SD counts as 0 in the pooled SD).
- Criteria (1) and (3) both name the baseline; a game without baseline runs lacks data for both.
- An ANOVA whose every score is equal has no p value; it is left out of the BH family and its
  criterion fails. BH (scipy.stats.false_discovery_control, method "bh") runs across the games
  that have a p value, separately for criteria (1) and (3).
- Ties: the best setting and the quarter ranking order by mean, then by label.
- Sample size: a game labelled strong or weak whose smallest cell has fewer than MIN_RUNS runs is said
  to rest on that many runs (with two runs a cell and zero variance, d is infinite and passes).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from workstation.studies.analysis.table import Results

D_MIN = 0.8
MIN_RUNS = 5  # runs a cell below which a strong or weak label is called provisional (the report says so)
Q_MAX = 0.05
ETA2_MIN = 0.14


@dataclass
class Cell:
    setting: str
    game: str
    scores: np.ndarray  # in seed order

    @property
    def n(self) -> int:
        return len(self.scores)

    @property
    def mean(self) -> float:
        return float(np.mean(self.scores))

    @property
    def sd(self) -> float:
        return float(np.std(self.scores, ddof=1)) if self.n > 1 else math.nan

    @property
    def se(self) -> float:
        return self.sd / math.sqrt(self.n)  # NaN with one run, as its SD is


def _seed_key(seed: str) -> tuple[int, float, str]:
    try:
        return (0, float(seed), seed)
    except ValueError:
        return (1, 0.0, seed)


def cells(results: Results) -> dict[tuple[str, str], Cell]:
    by: dict[tuple[str, str], list[tuple[tuple[int, float, str], float]]] = {}
    for r in results.rows:
        by.setdefault((r.setting, r.game), []).append((_seed_key(r.seed), r.score))
    return {k: Cell(k[0], k[1], np.array([s for _, s in sorted(v)], dtype=float)) for k, v in sorted(by.items())}


def ranks(table: dict[tuple[str, str], Cell]) -> tuple[dict[str, dict[str, float]], dict[str, tuple[float, int]]]:
    """Rank of each setting per game (1 = highest mean, ties share the average rank), and each
    setting's average rank over the games it has runs in (with that number of games)."""
    per_game: dict[str, dict[str, float]] = {}
    for game in sorted({g for _, g in table}):
        here = [c for c in table.values() if c.game == game]
        rk = stats.rankdata([-c.mean for c in here], method="average")
        per_game[game] = {c.setting: float(r) for c, r in zip(here, rk)}
    average: dict[str, tuple[float, int]] = {}
    for setting in sorted({s for s, _ in table}):
        mine = [g[setting] for g in per_game.values() if setting in g]
        average[setting] = (float(np.mean(mine)), len(mine))
    return per_game, average


def cohen_d(a: np.ndarray, b: np.ndarray) -> float:
    """(mean a - mean b) / pooled SD; see the module notes for the zero-SD cases."""
    n1, n2 = len(a), len(b)
    if n1 + n2 - 2 <= 0:
        return math.nan
    ss = ((a - a.mean()) ** 2).sum() + ((b - b.mean()) ** 2).sum()
    gap = float(a.mean() - b.mean())
    sp = math.sqrt(ss / (n1 + n2 - 2))
    if sp == 0:
        return math.copysign(math.inf, gap) if gap != 0 else math.nan
    return gap / sp


def anova_p(groups: list[np.ndarray]) -> float:
    """p of scipy's one-way ANOVA; NaN when undefined (every score equal, or too few runs)."""
    if len(groups) < 2 or sum(len(g) for g in groups) <= len(groups):
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on constant input; NaN/0 says it all
        return float(stats.f_oneway(*groups).pvalue)


def eta_squared(groups: list[np.ndarray]) -> float:
    allv = np.concatenate(groups)
    total = float(((allv - allv.mean()) ** 2).sum())
    if total == 0:
        return math.nan
    between = float(sum(len(g) * (g.mean() - allv.mean()) ** 2 for g in groups))
    return between / total


def bh(ps: dict[str, float]) -> dict[str, float]:
    """Benjamini-Hochberg q values over the finite p values; NaN stays NaN."""
    keys = [k for k, p in ps.items() if not math.isnan(p)]
    q = {k: math.nan for k in ps}
    if keys:
        for k, v in zip(keys, stats.false_discovery_control([ps[k] for k in keys], method="bh")):
            q[k] = float(v)
    return q


@dataclass
class Separability:
    game: str
    best: str | None = None
    gap_best: float = math.nan
    d_best: float = math.nan
    p_best: float = math.nan
    q_best: float = math.nan
    top: list[str] = field(default_factory=list)
    bottom: list[str] = field(default_factory=list)
    gap_quartile: float = math.nan
    d_quartile: float = math.nan
    p_anova: float = math.nan
    q_anova: float = math.nan
    eta2: float = math.nan
    lacking: dict[int, str] = field(default_factory=dict)  # criterion (1..3) -> why it has no data
    criteria: list[bool] = field(default_factory=lambda: [False, False, False])
    min_n: int = 0  # the fewest runs in any cell (setting) of the game

    @property
    def label(self) -> str:
        n = sum(self.criteria)
        return "strong" if n >= 2 else "weak" if n == 1 else "none"

    @property
    def small_sample(self) -> bool:
        """A strong or weak label that rests on fewer than MIN_RUNS runs in some cell."""
        return self.label != "none" and self.min_n < MIN_RUNS


def _enough(groups: list[np.ndarray]) -> bool:
    return sum(len(g) for g in groups) > len(groups)


def separability(table: dict[tuple[str, str], Cell], baseline: str) -> dict[str, Separability]:
    out: dict[str, Separability] = {}
    for game in sorted({g for _, g in table}):
        s = Separability(game)
        here = {c.setting: c for c in table.values() if c.game == game}
        s.min_n = min(c.n for c in here.values())
        base = here.get(baseline)
        others = sorted((c for k, c in here.items() if k != baseline), key=lambda c: (-c.mean, c.setting))
        # (1) best non-baseline setting vs the baseline
        if base is None:
            s.lacking[1] = f"no runs of the baseline {baseline!r}"
        elif not others:
            s.lacking[1] = "no setting besides the baseline"
        else:
            best = others[0]
            s.best, s.gap_best = best.setting, best.mean - base.mean
            if not _enough([best.scores, base.scores]):
                s.lacking[1] = "one run each in the best setting and the baseline"
            else:
                s.d_best = cohen_d(best.scores, base.scores)
                s.p_best = anova_p([best.scores, base.scores])
        # (2) top quarter vs bottom quarter of the non-baseline settings, runs pooled
        if len(others) < 2:
            s.lacking[2] = "fewer than two settings besides the baseline"
        else:
            k = math.ceil(len(others) / 4)
            top, bottom = others[:k], others[-k:]
            s.top, s.bottom = [c.setting for c in top], [c.setting for c in bottom]
            a = np.concatenate([c.scores for c in top])
            b = np.concatenate([c.scores for c in bottom])
            s.gap_quartile = float(a.mean() - b.mean())
            if not _enough([a, b]):
                s.lacking[2] = "one run each in the top and bottom quarters"
            else:
                s.d_quartile = cohen_d(a, b)
        # (3) one-way ANOVA over every setting, baseline included
        groups = [c.scores for c in here.values()]
        if base is None:
            s.lacking[3] = f"no runs of the baseline {baseline!r}"
        elif len(groups) < 2:
            s.lacking[3] = "only one setting"
        elif not _enough(groups):
            s.lacking[3] = "one run per setting"
        else:
            s.p_anova = anova_p(groups)
            s.eta2 = eta_squared(groups)
        out[game] = s
    q1 = bh({g: s.p_best for g, s in out.items()})
    q3 = bh({g: s.p_anova for g, s in out.items()})
    for g, s in out.items():
        s.q_best, s.q_anova = q1[g], q3[g]
        s.criteria = [
            1 not in s.lacking and s.gap_best > 0 and s.d_best >= D_MIN and s.q_best < Q_MAX,
            2 not in s.lacking and s.gap_quartile > 0 and s.d_quartile >= D_MIN,
            3 not in s.lacking and s.q_anova < Q_MAX and s.eta2 >= ETA2_MIN,
        ]
    return out
