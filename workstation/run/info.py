"""Lines of `workstation info` beyond the header: changes made by hand, and a model's calls."""

from __future__ import annotations

import statistics

from workstation.store.changes import describe
from workstation.store.recording import Recording
from workstation.store.records import Summary


def hand_line(rec: Recording) -> str:
    """``by hand    plain (...)`` or ``by hand    CHANGED BY HAND: 1 plan overridden; plain run id ...``."""
    n = rec.interventions
    if not n:
        return f"by hand    {describe(n)}"
    return f"by hand    {describe(n).replace('changed by hand', 'CHANGED BY HAND', 1)}; plain run id {rec.plain_run_id}"


def _latencies(rec: Recording) -> list[float]:
    try:
        turns = rec.turn_records
    except Exception:  # damaged turns are reported by the integrity line
        return []
    return [float(t.latency_s) for t in turns if t.calls and isinstance(t.latency_s, (int, float))]


def calls_line(rec: Recording, s: Summary) -> str | None:
    """``calls      12 calls, 34,567 in / 1,234 out tokens (800 reasoning), $0.0123, latency mean 1.20 s ...``.

    None for a run that made no calls (a built-in agent).
    """
    calls = s.calls
    if calls <= 0:
        return None
    n_in, n_out = s.tokens
    reasoning = int(s.usage.get("reasoning_tokens") or 0)
    cost = s.cost_usd
    parts = [f"{calls} call{'s' if calls != 1 else ''}",
             f"{n_in:,} in / {n_out:,} out tokens" + (f" ({reasoning:,} reasoning)" if reasoning else ""),
             f"${cost:.4f}" if isinstance(cost, (int, float)) else "cost unknown (no price for this model)"]
    lat = _latencies(rec)
    if lat:
        parts.append(f"latency mean {statistics.fmean(lat):.2f} s, median {statistics.median(lat):.2f} s, "
                     f"max {max(lat):.2f} s")
    return "calls      " + ", ".join(parts)


__all__ = ["calls_line", "hand_line"]
