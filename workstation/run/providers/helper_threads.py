"""Daemon threads that make the SDK calls a waiting run thread can walk away from, reused call after call.

A model call with a cancel token or a deadline runs in a helper thread while the run's own
thread waits for its reply, a cancel or the deadline. Starting a thread per call cost ~4 % of
a batch's CPU at 256 calls in flight (a thread start, its locks and conditions, 5,000 times a
batch); these threads wait for the next call instead, and one idle for a minute ends. Daemon
threads, as before: a call nobody waits for any more (cancelled, past its deadline) never
holds up the process's exit.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable

IDLE_S = 60.0


class HelperThreads:
    def __init__(self, name: str = "model call", idle_s: float = IDLE_S) -> None:
        self.name, self.idle_s = name, idle_s
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0  # waiting threads not yet promised to a job
        self.started = 0  # threads ever started (for tests and benchmarks)

    def submit(self, job: Callable[[], None]) -> None:
        """Run ``job`` in a waiting thread, or a new one when none waits. ``job`` handles its own errors."""
        with self._lock:
            spawn = self._idle == 0
            if spawn:
                self.started += 1
            else:
                self._idle -= 1
        if spawn:
            threading.Thread(target=self._work, name=self.name, daemon=True).start()
        self._jobs.put(job)

    def _work(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=self.idle_s)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0:  # more waiting threads than promised jobs: this one may go
                        self._idle -= 1
                        return
                continue  # a job was promised to a waiting thread: stay for it
            try:
                job()
            except BaseException:  # a job reports its own errors; the thread lives on
                pass
            job = None  # type: ignore[assignment]  # nothing of the call outlives it while this thread waits
            with self._lock:
                self._idle += 1


    def forget(self) -> None:
        """In a forked child: the parent's threads are not there, so nothing waits."""
        self._jobs, self._lock, self._idle = queue.SimpleQueue(), threading.Lock(), 0


HELPERS = HelperThreads()
os.register_at_fork(after_in_child=HELPERS.forget)
