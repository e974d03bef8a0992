"""Bradley-Terry ratings of match results, with bootstrap intervals, and non-transitive triples.

P(i beats j) = 1 / (1 + exp(s_j - s_i)). The strengths s maximise the likelihood of
the results (a draw counts as half a win each way), found with scipy's bounded truncated Newton (TNC);
they are shifted to mean 0, and bounded to +-10 so a player who won every game
has a large finite strength rather than none. Intervals: the fit repeated on
matches drawn with replacement (a seeded percentile bootstrap).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations, permutations

import numpy as np
from scipy.optimize import minimize

BOUND = 10.0


@dataclass(frozen=True)
class Result:
    """One match: the two players (by index) and the share of it the first won (1, 0.5 or 0)."""

    a: int
    b: int
    score: float


def wins_matrix(results: list[Result], n: int) -> np.ndarray:
    """w[i, j]: the wins of i over j (draws half each)."""
    w = np.zeros((n, n))
    for r in results:
        w[r.a, r.b] += r.score
        w[r.b, r.a] += 1.0 - r.score
    return w


def bradley_terry(w: np.ndarray) -> np.ndarray:
    """Strengths (mean 0) maximising sum w_ij log P(i beats j)."""
    n = w.shape[0]

    def nll(s: np.ndarray) -> tuple[float, np.ndarray]:
        d = s[:, None] - s[None, :]
        log_p = -np.logaddexp(0.0, -d)  # log sigmoid(s_i - s_j)
        value = -float(np.sum(w * log_p))
        p = np.exp(log_p)
        g = w * (1.0 - p)  # d/ds_i of w_ij log p_ij
        grad = -(g.sum(axis=1) - g.sum(axis=0))
        return value, grad

    # TNC: bounds and the gradient, and a tenth of L-BFGS-B's overhead on problems this small
    fit = minimize(nll, np.zeros(n), jac=True, method="TNC", bounds=[(-BOUND, BOUND)] * n,
                   options={"ftol": 1e-12, "xtol": 1e-10, "gtol": 1e-9, "maxfun": 1000})
    s: np.ndarray = fit.x - fit.x.mean()
    return s


def bootstrap(results: list[Result], n: int, resamples: int = 1000, seed: int = 0,
              level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) percentile intervals of each strength over resampled matches."""
    rng = np.random.default_rng(seed)
    draws = np.empty((resamples, n))
    for k in range(resamples):
        pick = rng.integers(0, len(results), len(results))
        draws[k] = bradley_terry(wins_matrix([results[i] for i in pick], n))
    tail = (1.0 - level) / 2 * 100
    return np.percentile(draws, tail, axis=0), np.percentile(draws, 100 - tail, axis=0)


def win_rates(w: np.ndarray) -> np.ndarray:
    """rate[i, j]: the share of their games i won (NaN where they never met)."""
    games = w + w.T
    with np.errstate(invalid="ignore", divide="ignore"):
        rate: np.ndarray = np.where(games > 0, w / np.where(games > 0, games, 1), np.nan)
    return rate


def non_transitive(rate: np.ndarray) -> list[tuple[int, int, int]]:
    """Triples (a, b, c) where a beats b, b beats c and c beats a (each more than half the time), once each."""
    found = []
    for trio in combinations(range(rate.shape[0]), 3):
        for a, b, c in permutations(trio):
            if a == min(trio) and rate[a, b] > 0.5 and rate[b, c] > 0.5 and rate[c, a] > 0.5:
                found.append((a, b, c))
    return found
