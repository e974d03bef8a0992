"""What every executor shares: the interface (``submit``, ``stop``, ``progress``), the limiter key, the core count.

Its own module so the executors (``executors.LocalExecutor``, ``ray_executor.RayExecutor``)
import it and never each other; ``executors.make_executor`` picks one.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from workstation.studies.batch.execute import Progress
from workstation.studies.batch.jobs import Job

CPU_STOP_REASON = "the batch stopped (interrupted); resume re-runs it"


class Executor:
    name = "base"

    def __init__(self) -> None:
        self.guard: Callable[[], str | None] = lambda: None  # the batch's cost guard, asked at every turn boundary
        self._stop_reason: str | None = None
        self._lock = threading.Lock()
        self._progress: dict[str, Progress] = {}

    def stop(self, reason: str) -> None:
        """Every run ends at its next turn boundary, marked stopped with ``reason``; no new run starts."""
        with self._lock:
            if self._stop_reason is None:
                self._stop_reason = reason

    def should_stop(self) -> str | None:
        return self._stop_reason or self.guard()

    def progress(self) -> dict[str, Progress]:
        with self._lock:
            return dict(self._progress)

    def _on_progress(self, p: Progress) -> None:
        with self._lock:
            self._progress[p.run_id] = p

    def forget(self, run_id: str) -> None:
        with self._lock:
            self._progress.pop(run_id, None)

    def submit(self, cell: Job) -> Future[Any]:  # pragma: no cover - interface
        raise NotImplementedError

    def launched(self) -> None:
        """The runs submitted since the last call may all start now (the batch has handed out a burst)."""

    def shutdown(self) -> None:
        pass


def limiter_key(cell: Job) -> tuple[str, str, str]:
    from workstation.run.providers.spec import parse_spec

    provider, model = parse_spec(cell.spec.agent)
    return provider, cell.spec.transport.base_url or "", model



def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


__all__ = ["CPU_STOP_REASON", "Executor", "cores", "limiter_key"]
