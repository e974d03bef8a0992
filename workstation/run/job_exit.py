"""The exit status of a job that asks a model many times (`qa eval`, `judge`) from its summary.

1, with one line on stderr, when it stopped at the cost cap (``stopped``) or left some of its work
undone (``complete`` false; the same command again does the rest); else 0.
"""

from __future__ import annotations

import sys


def job_exit(stopped: str | None, complete: bool, cost_usd: float, incomplete: str) -> int:
    """The exit status from what a job's typed summary (``EvalSummary``, ``JudgeSummary``) says: why it stopped,
    whether it is complete, and what it cost. ``incomplete`` says what was left undone and what to do (one line,
    without ``workstation: ``)."""
    if stopped:
        sys.stderr.write(f"workstation: stopped at the cost cap (${cost_usd:.4f}); "
                         "run again with a higher --max-cost to finish\n")
        return 1
    if not complete:
        sys.stderr.write(f"workstation: {incomplete}\n")
        return 1
    return 0
