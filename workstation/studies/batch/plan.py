"""The plan of a batch (``--dry-run``): runs per setting and game, done before, and what the rest will cost."""

from __future__ import annotations

from typing import Any

from workstation.base.text_table import text_table
from workstation.base.words import plural
from workstation.studies.batch.estimate import PAPER_INPUT_PER_CALL, PAPER_OUTPUT_PER_CALL
from workstation.studies.batch.progress import SKIPPED, money
from workstation.studies.batch.runner import Batch


def _k(x: float) -> str:
    return f"{x / 1e6:.2f}M" if x >= 1e6 else f"{x / 1e3:.1f}k" if x >= 1e3 else f"{x:.0f}"


def plan_text(batch: Batch) -> str:
    g = batch.grid
    groups: dict[tuple[str, str], list[Any]] = {}
    for c in batch.cells:
        groups.setdefault((c.label, c.game), []).append(c)
    head = ("setting", "game", "runs", "done", "to run", "calls", "input", "output", "$ est")
    rows = [head]
    tot = {"runs": 0, "done": 0, "left": 0, "calls": 0.0, "in": 0.0, "out": 0.0, "cost": 0.0}
    unpriced: set[str] = set()
    for (label, game), cells in groups.items():
        done = sum(1 for c in cells if batch.state.runs[c.run_id].status == SKIPPED)
        left = len(cells) - done
        e = batch.estimates[label]
        cost = None if e.cost_usd is None else e.cost_usd * left
        if e.cost_usd is None:
            unpriced.add(label)
        rows.append((label, game, str(len(cells)), str(done), str(left), _k(e.calls * left), _k(e.input_tokens * left),
                     _k(e.output_tokens * left), money(cost) if cells[0].is_model else "-"))
        tot["runs"] += len(cells)
        tot["done"] += done
        tot["left"] += left
        tot["calls"] += e.calls * left
        tot["in"] += e.input_tokens * left
        tot["out"] += e.output_tokens * left
        tot["cost"] += cost or 0.0
    rows.append(("total", "", str(tot["runs"]), str(tot["done"]), str(tot["left"]), _k(tot["calls"]), _k(tot["in"]),
                 _k(tot["out"]), money(tot["cost"]) + ("+?" if unpriced else "")))
    variants = len({c.label for c in batch.cells}) // max(1, len(g.settings))
    lines = [f"batch {g.name}: {plural(len(batch.cells), 'run')} ({plural(len(g.settings), 'setting')} x "
             f"{plural(variants, 'protocol variant')} x {plural(len(g.games), 'game')} x {plural(len(g.seeds), 'seed')})"
             f" -> {batch.dir}/runs"]
    lines += text_table(rows, right=range(2, len(head)), rules=[0, len(rows) - 2])
    sources = sorted({f"{label}: {batch.estimates[label].source}" for label, _ in groups
                      if batch.cells and batch.estimates[label].source != "no calls"})
    if sources:
        lines.append(f"estimates per run ({'; '.join(sources)}); paper figures: 140 calls a 900-frame run, "
                     f"{PAPER_INPUT_PER_CALL / 1e3:.1f}k input and {PAPER_OUTPUT_PER_CALL:.0f} output tokens "
                     "(thinking included) a call, at the price table's list prices")
    if unpriced:
        lines.append(f"no price for {', '.join(sorted(unpriced))}: not counted against --max-cost "
                     "(add it to a file named by WORKSTATION_PRICES)")
    caps = ", ".join(f"{p} {batch.cap(p)}" for p in sorted({c.provider for c in batch.cells}))
    cap = f"; --max-cost ${batch.max_cost:g}" if batch.max_cost is not None else ""
    lines.append(f"at once: {batch.concurrency} runs ({caps}){cap}")
    if batch.set_aside:
        lines.append(f"{len(batch.set_aside)} partial recording(s) would be set aside under runs/.incomplete/")
    for path, why in batch.damaged:
        lines.append(f"damaged: {path}: {why}; it would be set aside under runs/.damaged/ and its run played again")
    return "\n".join(lines)


__all__ = ["plan_text"]
