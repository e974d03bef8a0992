"""An adaptive concurrency limit per (provider, base URL, model), shared by threads.

It starts at ``initial`` calls in flight, halves when the provider answers 429
and grows back by one after ``limit`` clean calls in a row (additive increase,
multiplicative decrease). Only one halving per "epoch": a burst of 429s from
calls that were all started under the same limit counts once. A caller waiting
for a slot gives up when its cancel token is cancelled or its deadline passes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from workstation.engine.calls import CancelToken, Deadline

POLL_S = 0.1  # how often a waiting caller looks at its cancel token and deadline


class AdaptiveLimiter:
    def __init__(self, initial: int = 8, minimum: int = 1, maximum: int = 32) -> None:
        self.minimum, self.maximum = minimum, maximum
        self.limit = max(minimum, min(initial, maximum))
        self.in_flight = 0
        self.epoch = 0
        self._clean = 0
        self._cond = threading.Condition()

    def acquire(self, cancel: CancelToken | None = None, deadline: Deadline | None = None) -> int:
        """Wait for a free slot; returns the epoch the slot was granted in.

        The wait ends within ``POLL_S`` of ``cancel`` being cancelled (``CallCancelled``)
        and at ``deadline`` (``DeadlinePassed``); without either it waits as long as it takes.
        """
        with self._cond:
            while self.in_flight >= self.limit:
                if cancel is not None:
                    cancel.check()
                if deadline is not None:
                    deadline.check()
                    self._cond.wait(min(POLL_S, deadline.remaining()))
                else:
                    self._cond.wait(POLL_S if cancel is not None else None)
            self.in_flight += 1
            return self.epoch

    def release(self, epoch: int, outcome: str) -> None:
        """Give the slot back; ``outcome`` is ``ok``, ``rate_limit`` or anything else (neutral)."""
        with self._cond:
            self.in_flight -= 1
            if outcome == "rate_limit":
                self._clean = 0
                if epoch == self.epoch:
                    self.limit = max(self.minimum, self.limit // 2)
                    self.epoch += 1
            elif outcome == "ok":
                self._clean += 1
                if self._clean >= self.limit and self.limit < self.maximum:
                    self.limit += 1
                    self._clean = 0
            self._cond.notify_all()

    @contextmanager
    def slot(self, cancel: CancelToken | None = None, deadline: Deadline | None = None) -> Iterator[_Slot]:
        """``with limiter.slot() as s: ...; s.outcome = "ok"`` (neutral unless set)."""
        s = _Slot(self.acquire(cancel, deadline))
        try:
            yield s
        finally:
            self.release(s.epoch, s.outcome)


class _Slot:
    def __init__(self, epoch: int) -> None:
        self.epoch = epoch
        self.outcome = "neutral"


_LIMITERS: dict[tuple[str, str, str], AdaptiveLimiter] = {}
_LOCK = threading.Lock()


def limiter_for(provider: str, model: str, base_url: str | None = None) -> AdaptiveLimiter:
    """The process-wide limiter for this provider endpoint and model."""
    key = (provider, base_url or "", model)
    with _LOCK:
        if key not in _LIMITERS:
            _LIMITERS[key] = AdaptiveLimiter()
        return _LIMITERS[key]
