"""Cost footprint, laid out as the paper reports its own (Gemini 3.1 Pro, 200 runs: 27,938
calls, 140.8M input, 2.85M output, 17.2M thinking tokens, about 5.0k input tokens per call,
about $522): per setting and for the whole batch, in total and per run."""

from __future__ import annotations

from dataclasses import dataclass, field

from workstation.studies.analysis.table import Results, Row

COLUMNS = ("calls", "input_tokens", "output_tokens", "reasoning_tokens", "cost_usd")


@dataclass
class Footprint:
    label: str  # a setting, or "all" for the batch
    runs: int
    totals: dict[str, float] = field(default_factory=dict)  # only columns every run has

    def per_run(self, column: str) -> float | None:
        return self.totals[column] / self.runs if column in self.totals and self.runs else None

    @property
    def input_per_call(self) -> float | None:
        calls, inp = self.totals.get("calls"), self.totals.get("input_tokens")
        return inp / calls if calls and inp is not None else None


def _sum(label: str, rows: list[Row]) -> Footprint:
    f = Footprint(label, len(rows))
    for c in COLUMNS:
        vals = [r.values[c] for r in rows if c in r.values]
        if vals and len(vals) == len(rows):
            f.totals[c] = float(sum(vals))
    return f


def footprint(results: Results) -> tuple[dict[str, Footprint], Footprint] | None:
    """Per setting and for all runs; None when the CSV has none of the cost columns."""
    if not any(results.has(c) for c in COLUMNS):
        return None
    per = {s: _sum(s, [r for r in results.rows if r.setting == s]) for s in results.settings}
    return per, _sum("all", results.rows)


def tokens(n: float) -> str:
    """The paper's style: 27,938 calls; 140.8M; 2.85M; 5.0k."""
    if n >= 1e9:
        return f"{n / 1e9:.3g}B"
    if n >= 1e6:
        return f"{n / 1e6:.1f}M" if n >= 1e8 else f"{n / 1e6:.3g}M"
    if n >= 1e3:
        return f"{n / 1e3:.1f}k"
    return f"{n:.0f}" if n == int(n) else f"{n:.1f}"


def sentence(f: Footprint) -> str:
    """One line in the paper's words, from the columns present."""
    t, parts = f.totals, []
    if "calls" in t:
        parts.append(f"{t['calls']:,.0f} calls")
    for c, name in (("input_tokens", "input"), ("output_tokens", "output"), ("reasoning_tokens", "reasoning tokens")):
        if c in t:
            parts.append(f"{tokens(t[c])} {name}")
    if f.input_per_call is not None:
        parts.append(f"about {tokens(f.input_per_call)} input tokens per call")
    if "cost_usd" in t:
        parts.append(f"about ${t['cost_usd']:,.0f}" if t["cost_usd"] >= 100 else f"${t['cost_usd']:,.2f}")
    return f"{f.label} ({f.runs} runs): " + (", ".join(parts) if parts else "no cost columns")
