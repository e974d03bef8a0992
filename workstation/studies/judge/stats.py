"""The re-query and over-reliance tests (scipy): exact McNemar with its odds ratio, Fisher's exact test.

McNemar on paired errors: ``b`` pairs erred with the full history only, ``c`` with the current
frame only. The exact test is the two-sided binomial test of ``c`` out of ``b + c`` at 1/2. The
odds ratio of an error with the current frame only is ``c / b`` (the conditional maximum
likelihood estimate); its 95% interval is the exact (Clopper-Pearson) interval of ``c / (b + c)``
mapped through p / (1 - p). The paper's 10 vs 2 give p = 0.0386 and OR 0.20 [0.02, 0.94].
"""

from __future__ import annotations

import math

from workstation.studies.judge.records import Fisher, McNemar


def mcnemar_exact(b: int, c: int) -> McNemar:
    from scipy.stats import binomtest

    n = b + c
    if n == 0:
        return McNemar(b, c, None, None, (None, None))
    p = float(binomtest(c, n, 0.5).pvalue)
    ci = binomtest(c, n).proportion_ci(confidence_level=0.95, method="exact")

    def odds(q: float) -> float:
        return math.inf if q >= 1 else q / (1 - q)

    ratio = math.inf if b == 0 else c / b
    return McNemar(b, c, p, _finite(ratio), (_finite(odds(float(ci.low))), _finite(odds(float(ci.high)))))


def fisher_exact(k1: int, n1: int, k2: int, n2: int) -> Fisher:
    """Two-sided Fisher's exact test of k1 of n1 against k2 of n2."""
    from scipy.stats import fisher_exact as fisher

    if n1 <= 0 or n2 <= 0:
        return Fisher(None, None)
    ratio, p = fisher([[k1, n1 - k1], [k2, n2 - k2]], alternative="two-sided")
    return Fisher(float(p), _finite(float(ratio)))


def _finite(x: float | None) -> float | None:
    """JSON has no infinity: an unbounded figure is written as null."""
    return None if x is None or not math.isfinite(x) else x
