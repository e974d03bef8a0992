"""The adaptive concurrency limit: halves on 429 once per epoch, grows back after clean calls."""

from __future__ import annotations

import threading
import time

from workstation.run.providers.limiter import AdaptiveLimiter, limiter_for


def test_halves_once_for_a_burst_of_429s():
    lim = AdaptiveLimiter(initial=8)
    epochs = [lim.acquire() for _ in range(3)]
    for e in epochs:
        lim.release(e, "rate_limit")
    assert lim.limit == 4 and lim.in_flight == 0
    e = lim.acquire()
    lim.release(e, "rate_limit")  # a call started under the new limit counts again
    assert lim.limit == 2


def test_floor_and_slow_growth():
    lim = AdaptiveLimiter(initial=2, minimum=1, maximum=3)
    for _ in range(3):
        lim.release(lim.acquire(), "rate_limit")
    assert lim.limit == 1
    lim.release(lim.acquire(), "ok")
    assert lim.limit == 2  # after `limit` (1) clean calls
    lim.release(lim.acquire(), "ok")
    assert lim.limit == 2
    lim.release(lim.acquire(), "ok")
    assert lim.limit == 3
    for _ in range(10):
        lim.release(lim.acquire(), "ok")
    assert lim.limit == 3  # the ceiling
    lim.release(lim.acquire(), "transient")
    assert lim.limit == 3  # other failures are neutral


def test_threads_never_exceed_the_limit():
    lim = AdaptiveLimiter(initial=3, maximum=3)
    active, peak, lock = [0], [0], threading.Lock()

    def work():
        with lim.slot() as slot:
            with lock:
                active[0] += 1
                peak[0] = max(peak[0], active[0])
            time.sleep(0.01)
            with lock:
                active[0] -= 1
            slot.outcome = "ok"

    threads = [threading.Thread(target=work) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=5)
    assert peak[0] == 3 and lim.in_flight == 0


def test_one_limiter_per_endpoint_and_model():
    a = limiter_for("openai", "gpt-5.2", None)
    assert limiter_for("openai", "gpt-5.2", None) is a
    assert limiter_for("openai", "gpt-5.2", "http://localhost:8000/v1") is not a
    assert limiter_for("anthropic", "gpt-5.2", None) is not a
