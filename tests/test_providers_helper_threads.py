"""The helper threads that make SDK calls: reused, never stranding a job, gone after a fork."""

from __future__ import annotations

import os
import threading

import pytest

from workstation.run.providers.helper_threads import HelperThreads


def test_threads_are_reused_call_after_call():
    helpers = HelperThreads()
    for _ in range(50):
        done = threading.Event()
        helpers.submit(done.set)
        assert done.wait(10)
    assert helpers.started <= 2  # one, or two when a job came before the first had counted itself idle


def test_concurrent_jobs_each_get_a_thread_and_all_finish():
    helpers = HelperThreads()
    gate, finished = threading.Event(), []
    lock = threading.Lock()

    def job():
        gate.wait(10)
        with lock:
            finished.append(1)

    for _ in range(20):
        helpers.submit(job)
    gate.set()
    for _ in range(200):
        with lock:
            if len(finished) == 20:
                break
        threading.Event().wait(0.05)
    assert len(finished) == 20
    assert helpers.started == 20  # every job blocked: none could wait for another


def test_an_idle_thread_ends_and_a_later_job_still_runs():
    helpers = HelperThreads(idle_s=0.01)
    first = threading.Event()
    helpers.submit(first.set)
    assert first.wait(10)
    for _ in range(200):
        if not any(t.name == helpers.name and t.is_alive() for t in threading.enumerate()):
            break
        threading.Event().wait(0.02)
    later = threading.Event()
    helpers.submit(later.set)
    assert later.wait(10)


def test_a_failing_job_leaves_the_thread_working():
    helpers = HelperThreads()
    helpers.submit(lambda: 1 / 0)
    ok = threading.Event()
    helpers.submit(ok.set)
    assert ok.wait(10)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_starts_its_own_threads():
    from workstation.run.providers.helper_threads import HELPERS

    warm = threading.Event()
    HELPERS.submit(warm.set)
    assert warm.wait(10)
    pid = os.fork()
    if pid == 0:  # the child: the parent's idle thread is not here; a job must still run
        done = threading.Event()
        HELPERS.submit(done.set)
        os._exit(0 if done.wait(10) else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
