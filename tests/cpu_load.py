"""A test mode that keeps the CPUs busy: ``TUI_LOAD=N pytest tests/test_tui_*.py -n 0`` starts N busy loops.

Races between a widget and its children show up only when the machine is slow, so the TUI tests can be
run with every core kept busy by ``N`` processes that spin for the whole session (killed at its end).
Without ``TUI_LOAD`` (or with 0) nothing is started.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest


def load_from_env() -> int:
    raw = os.environ.get("TUI_LOAD", "").strip()
    if not raw:
        return 0
    try:
        n = int(raw)
    except ValueError:
        raise pytest.UsageError(f"TUI_LOAD={raw!r} is not a whole number: set it to how many busy loops to run") \
            from None
    if n < 0:
        raise pytest.UsageError(f"TUI_LOAD={n} is negative: set it to how many busy loops to run (0: none)")
    return n


@pytest.fixture(scope="session", autouse=True)
def cpu_load() -> Iterator[int]:
    """Start ``TUI_LOAD`` busy-loop processes for the session; yields how many run."""
    n = load_from_env()
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield n
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()
