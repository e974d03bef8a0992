"""The exit status of a job that asks a model many times (`qa eval`, `judge`) from its summary.

1, with one line on stderr, when it stopped at the cost cap (``stopped``) or left some of its work
undone (``complete`` false; the same command again does the rest); else 0.
"""

from __future__ import annotations

import sys
from typing import Protocol


class JobSummary(Protocol):
    """What the exit status reads of a job's typed summary (``EvalSummary``, ``JudgeSummary``)."""

    @property
    def stopped(self) -> str | None: ...

    @property
    def complete(self) -> bool: ...

    @property
    def cost_usd(self) -> float: ...


def job_exit(summary: JobSummary, incomplete: str) -> int:
    """``incomplete`` says what was left undone and what to do (one line, without ``workstation: ``)."""
    if summary.stopped:
        sys.stderr.write(f"workstation: stopped at the cost cap (${summary.cost_usd:.4f}); "
                         "run again with a higher --max-cost to finish\n")
        return 1
    if not summary.complete:
        sys.stderr.write(f"workstation: {incomplete}\n")
        return 1
    return 0
