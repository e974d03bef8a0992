"""What a run of a setting will cost: calls, tokens and dollars, before it runs.

From earlier complete runs of the same setting in the batch directory when there are
any (their mean calls, tokens and cost per run), else from the paper's footprint
(Gemini 3.1 Pro, 200 runs: 27,938 calls, 140.8M input, 2.85M output and 17.2M
thinking tokens; about 140 calls a 900-frame run, 5.0k input tokens a call) priced
with the price table. Built-in agents make no calls and cost nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workstation.studies.batch.jobs import Job

PAPER_CALLS, PAPER_RUNS, PAPER_FRAMES = 27_938, 200, 900
PAPER_INPUT_PER_CALL = 140.8e6 / PAPER_CALLS  # ~5.0k
PAPER_OUTPUT_PER_CALL = (2.85e6 + 17.2e6) / PAPER_CALLS  # output including thinking, ~718
PAPER_ACTIONS_PER_CALL = PAPER_FRAMES / (3 * PAPER_CALLS / PAPER_RUNS)  # ~2.1 actions a reply at max_actions 10


@dataclass
class Estimate:
    """Per run of one setting."""

    calls: float = 0.0
    input_tokens: float = 0.0
    output_tokens: float = 0.0
    cost_usd: float | None = 0.0  # None: the model has no price
    source: str = "no calls"  # "paper", "N earlier runs", "no calls"

    @property
    def cost_per_call(self) -> float | None:
        if self.cost_usd is None or not self.calls:
            return None if self.cost_usd is None else 0.0
        return self.cost_usd / self.calls


def paper_estimate(cell: Job) -> Estimate:
    if not cell.is_model:
        return Estimate()
    from workstation.engine.calls import Usage
    from workstation.run.providers.pricing import default_prices
    from workstation.run.providers.spec import parse_spec

    p = cell.spec.protocol
    per_reply = min(float(p.max_actions), PAPER_ACTIONS_PER_CALL)
    calls = p.frames / (p.repeat * per_reply)
    provider, model = parse_spec(cell.spec.agent)
    price = default_prices().lookup(provider, model)
    cost = None
    if price is not None:
        cost = calls * price.cost(Usage(input_tokens=round(PAPER_INPUT_PER_CALL), output_tokens=round(PAPER_OUTPUT_PER_CALL)))
    return Estimate(calls, calls * PAPER_INPUT_PER_CALL, calls * PAPER_OUTPUT_PER_CALL, cost, "paper")


def from_rows(rows: list[dict[str, Any]]) -> Estimate | None:
    """The mean of earlier complete runs (results rows of one setting), None without any."""
    done = [r for r in rows if r["complete"]]  # a complete row has every column (batch.results.row)
    if not done:
        return None
    n = len(done)
    costs: list[float | None] = [r["cost_usd"] for r in done]
    cost = None if any(c is None for c in costs) else sum(c or 0.0 for c in costs) / n
    return Estimate(sum(r["calls"] or 0 for r in done) / n, sum(r["input_tokens"] or 0 for r in done) / n,
                    sum(r["output_tokens"] or 0 for r in done) / n, cost, f"{n} earlier run{'s' * (n != 1)}")


def estimates(cells: list[Job], rows: list[dict[str, Any]]) -> dict[str, Estimate]:
    """Per expanded setting label: from its earlier runs in ``rows`` if any, else the paper's figures."""
    by_label: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_label.setdefault(str(r["setting"]), []).append(r)
    out: dict[str, Estimate] = {}
    for c in cells:
        if c.label in out:
            continue
        out[c.label] = (from_rows(by_label.get(c.label, [])) if c.is_model else None) or paper_estimate(c)
    return out


__all__ = ["Estimate", "PAPER_INPUT_PER_CALL", "PAPER_OUTPUT_PER_CALL", "estimates", "from_rows", "paper_estimate"]
