"""Model runs spread over worker processes (workstation/studies/batch/model_procs.py): every run completes and
records as in one process, and the processes' shares of a limit add up to it. Real SDK over HTTP to the
fake provider, real emulators, real recordings."""

from __future__ import annotations

import pytest

from tests.fake_provider import KEYS, fake_server  # noqa: F401 - the fixture
from tests.test_batch import assert_complete_once, batch
from workstation.store.integrity import quick_verdict
from workstation.store.recording import Recording
from workstation.studies.batch.executors import PROCESSES_ENV, model_processes
from workstation.studies.batch.model_procs import shares

GRID = """\
name = "procs"
games = ["breakout", "seaquest"]
seeds = "0..2"
[protocol]
frames = 30
max_actions = 1
[limits]
compat = 3
[[settings]]
label = "fake"
spec = "compat:fake"
base_url = "{url}"
"""


@pytest.mark.parametrize("cap,n", [(256, 2), (3, 2), (1, 2), (7, 3)])
def test_the_shares_of_a_limit_add_up_to_it(cap, n):
    got = shares({("compat", "u", "m"): cap}, n)
    assert len(got) == n
    per = [g[("compat", "u", "m")] for g in got]
    assert min(per) >= 1 and (sum(per) == cap if cap >= n else sum(per) == n)


def test_many_model_runs_use_a_process_per_core_few_stay_here(monkeypatch):
    monkeypatch.delenv(PROCESSES_ENV, raising=False)
    assert model_processes(256, 2) == 2 and model_processes(8, 2) == 0 and model_processes(256, 1) == 0
    monkeypatch.setenv(PROCESSES_ENV, "3")
    assert model_processes(4, 1) == 3


def test_model_runs_in_two_worker_processes_all_complete_and_verify(tmp_path, fake_server, monkeypatch):  # noqa: F811
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv(PROCESSES_ENV, "2")
    fake_server.reset()
    b = batch(tmp_path, GRID.format(url=fake_server.url("compat")), concurrency=6)
    b.prepare()
    assert b.run() == 0
    rows = assert_complete_once(b.dir, 6)
    assert sum(int(r["calls"]) for r in rows) == len(fake_server.seen) > 0  # every call counted, none lost
    assert {r["executor"] for r in rows} == {"local"}
    for path in (b.dir / "runs").iterdir():
        if not path.name.startswith("."):
            ok, line = quick_verdict(Recording(path))
            assert ok, line


def test_forked_the_batch_process_plays_a_share_beside_one_worker(tmp_path, fake_server, monkeypatch):  # noqa: F811
    """From the CLI (forked workers) this process plays one core's share itself: two cores, one worker."""
    import multiprocessing as mp

    from workstation.studies.batch import executors

    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv(PROCESSES_ENV, "2")
    monkeypatch.setattr(executors, "model_context", lambda: mp.get_context("fork"))
    fake_server.reset()
    b = batch(tmp_path, GRID.format(url=fake_server.url("compat")), concurrency=6)
    b.prepare()
    assert b.run() == 0
    ex = b.executor
    assert ex.local_share and len(ex.model_procs.procs) == 1
    assert 0 < ex.ran_here < 6  # both played some
    from workstation.studies.batch.model_procs import shares

    caps = b._caps()
    assert {k: v.maximum for k, v in ex.limiters.items()} == shares(caps, 2)[0]  # this process's share only
    rows = assert_complete_once(b.dir, 6)
    assert sum(int(r["calls"]) for r in rows) == len(fake_server.seen) > 0
    for path in (b.dir / "runs").iterdir():
        if not path.name.startswith("."):
            ok, line = quick_verdict(Recording(path))
            assert ok, line
