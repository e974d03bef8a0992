"""The state of a running batch, and how it reads unattended: a progress line every few seconds, a final table.

``BatchState`` is what the runner updates and every view reads (the plain log
here, the Textual batch screen): per run its status, and the batch's spend,
calls, rate-limit waits and last errors. Time comes from an injected clock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

from workstation.base.text_table import text_table
from workstation.studies.batch.jobs import Job

LEFT, RUNNING, DONE, FAILED, STOPPED, SKIPPED = "left", "running", "done", "failed", "stopped", "skipped"


@dataclass
class RunState:
    cell: Job
    status: str = LEFT  # left | running | done (complete) | failed | stopped | skipped (complete before)
    calls: int = 0
    cost_usd: float = 0.0
    rate_limit_waits: int = 0
    last_error: str | None = None
    path: str | None = None
    started: float | None = None
    score: float | None = None  # the run's final score, once it ended (or from an earlier pass)
    turns: int | None = None


@dataclass
class BatchState:
    name: str
    runs: dict[str, RunState]
    max_cost: float | None = None
    clock: Callable[[], float] = time.monotonic
    started: float = 0.0
    stopping: str | None = None  # why the batch stopped launching
    finished: bool = False
    est_cost: dict[str, float | None] = field(default_factory=dict)  # per expanded label, per run
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def of(cls, name: str, cells: list[Job], max_cost: float | None = None,
           clock: Callable[[], float] = time.monotonic) -> BatchState:
        return cls(name, {c.run_id: RunState(c) for c in cells}, max_cost, clock, clock())

    def counts(self) -> dict[str, int]:
        out = {LEFT: 0, RUNNING: 0, DONE: 0, FAILED: 0, STOPPED: 0, SKIPPED: 0}
        for r in self.runs.values():
            out[r.status] += 1
        return out

    @property
    def spent(self) -> float:
        return sum(r.cost_usd or 0.0 for r in self.runs.values())

    @property
    def calls(self) -> int:
        return sum(r.calls for r in self.runs.values() if r.status != SKIPPED)

    @property
    def rate_limit_waits(self) -> int:
        return sum(r.rate_limit_waits for r in self.runs.values())

    def calls_per_s(self) -> float:
        elapsed = self.clock() - self.started
        return self.calls / elapsed if elapsed > 0 else 0.0

    def eta_s(self) -> float | None:
        c = self.counts()
        finished_now = c[DONE] + c[FAILED] + c[STOPPED]
        left = c[LEFT] + c[RUNNING]
        elapsed = self.clock() - self.started
        if not finished_now or elapsed <= 0:
            return None
        return elapsed / finished_now * left

    def groups(self) -> list[tuple[str, str, dict[str, int]]]:
        """(setting, game, counts) in grid order."""
        out: dict[tuple[str, str], dict[str, int]] = {}
        for r in self.runs.values():
            key = (r.cell.label, r.cell.game)
            d = out.setdefault(key, {LEFT: 0, RUNNING: 0, DONE: 0, FAILED: 0, STOPPED: 0, SKIPPED: 0})
            d[r.status] += 1
        return [(s, g, d) for (s, g), d in out.items()]

    def means(self) -> dict[tuple[str, str], tuple[float, int]]:
        """(setting, game) -> (mean score, n) over the runs complete so far (this pass's and earlier ones)."""
        sums: dict[tuple[str, str], list[float]] = {}
        for r in self.runs.values():
            if r.status in (DONE, SKIPPED) and r.score is not None:
                sums.setdefault((r.cell.label, r.cell.game), []).append(float(r.score))
        return {k: (sum(v) / len(v), len(v)) for k, v in sums.items()}

    def failing(self) -> list[RunState]:
        return [r for r in self.runs.values() if r.status in (FAILED, STOPPED) and r.last_error]


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s" if m else f"{s}s"


def money(x: float | None) -> str:
    return "?" if x is None else f"${x:.2f}" if x >= 1 else f"${x:.4f}"


def line(state: BatchState) -> str:
    """One progress line: done/running/failed/left, spend vs cap, calls/s, ETA."""
    c = state.counts()
    done = c[DONE] + c[SKIPPED]
    cap = f" of {money(state.max_cost)} cap" if state.max_cost is not None else ""
    waits = f", {state.rate_limit_waits} rate-limit waits" if state.rate_limit_waits else ""
    stop = f" | stopping: {state.stopping}" if state.stopping and not state.finished else ""
    eta = "" if state.finished else f" | ETA {duration(state.eta_s())}"  # nothing left to estimate at the end
    return (f"[batch {state.name}] {done}/{len(state.runs)} done ({c[SKIPPED]} before), {c[RUNNING]} running, "
            f"{c[FAILED] + c[STOPPED]} failed/stopped, {c[LEFT]} left | spent {money(state.spent)}{cap} | "
            f"{state.calls_per_s():.1f} calls/s{waits}{eta}{stop}")


def table(state: BatchState) -> str:
    """The final table: per (setting, game) runs done, failed/stopped, left; then the last errors."""
    rows = [("setting", "game", "done", "failed", "left", "mean score (n)")]
    means = state.means()
    for s, g, d in state.groups():
        mean = means.get((s, g))
        rows.append((s, g, str(d[DONE] + d[SKIPPED]), str(d[FAILED] + d[STOPPED]), str(d[LEFT] + d[RUNNING]),
                     "-" if mean is None else f"{mean[0]:.1f} ({mean[1]})"))
    out = text_table(rows, right=range(2, 6), rules=[0])
    c = state.counts()
    missing = len(state.runs) - c[DONE] - c[SKIPPED]
    if missing and state.finished:
        why = ", ".join(f"{n} {k}" for k, n in ((FAILED, c[FAILED]), (STOPPED, c[STOPPED]),
                                                 ("not started", c[LEFT] + c[RUNNING])) if n)
        out.append(f"{missing} of {len(state.runs)} runs have no complete recording in the batch directory ({why})")
    for r in state.failing()[:20]:
        out.append(f"  {r.cell.label} {r.cell.game} seed {r.cell.seed}: {r.last_error}")
    return "\n".join(out)


class PlainLog:
    """Prints ``line(state)`` every ``every_s`` seconds (on the state's clock) and the final table."""

    def __init__(self, out: TextIO, every_s: float = 5.0) -> None:
        self.out, self.every_s = out, every_s
        self._last: float | None = None

    def tick(self, state: BatchState, force: bool = False) -> None:
        now = state.clock()
        if force or self._last is None or now - self._last >= self.every_s:
            self._last = now
            self.out.write(line(state) + "\n")
            self.out.flush()

    def final(self, state: BatchState) -> None:
        self.tick(state, force=True)
        self.out.write(table(state) + "\n")
        self.out.flush()


__all__ = ["BatchState", "PlainLog", "RunState", "line", "table", "DONE", "FAILED", "LEFT", "RUNNING", "SKIPPED",
           "STOPPED"]
