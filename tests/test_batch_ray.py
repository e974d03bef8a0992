"""--executor ray on a real local Ray instance (ray.init(num_cpus=2)): every run a task, the limiter and the
cost guard held by one actor across the workers. Skipped, saying why, only when Ray cannot be imported."""

from __future__ import annotations

import csv
import os
import textwrap
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (the optional extra: pip install -e '.[ray]')")

from tests.fake_provider import KEYS
from workstation.store.recording import Recording
from workstation.studies.batch.estimate import Estimate
from workstation.studies.batch.grid import load_grid
from workstation.studies.batch.progress import DONE, LEFT, STOPPED
from workstation.studies.batch.ray_executor import Coordinator
from workstation.studies.batch.runner import Batch


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray instance; its workers get the (fake) keys from the environment they start in,
    as the workers of a cluster must have the keys themselves."""
    saved = {k: os.environ.get(k) for k in KEYS}
    os.environ.update(KEYS)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def make(tmp_path: Path, text: str, **kw) -> Batch:
    grid = tmp_path / "grid.toml"
    grid.write_text(textwrap.dedent(text))
    out = tmp_path / "out"
    return Batch(load_grid(grid, out=str(out / "runs")), out, executor="ray", **kw)


def test_random_batch_on_local_ray_then_resume(tmp_path, local_ray):
    text = """\
        name = "ray-rnd"
        games = ["breakout", "seaquest"]
        seeds = [0, 1]
        [protocol]
        frames = 30
        [[settings]]
        label = "random"
        spec = "random"
        """
    b = make(tmp_path, text, concurrency=2)
    b.prepare()
    assert b.run() == 0
    rows = list(csv.DictReader(open(b.dir / "results.csv")))
    assert len(rows) == 4 and all(r["complete"] == "true" for r in rows)
    for r in rows:
        (path,) = (b.dir / "runs").glob(f"*-{r['run_id'][:8]}")
        assert Recording(path).complete
    again = make(tmp_path, text, concurrency=2)
    again.prepare()
    assert all(r.status == "skipped" for r in again.state.runs.values())
    assert again.run() == 0


def test_the_actor_grants_slots_and_halves_on_a_rate_limit():
    c = Coordinator({"k": 2})
    assert c.acquire("k") and c.acquire("k") and not c.acquire("k")
    c.release("k", "rate_limit")
    assert c.caps["k"] == 1 and not c.acquire("k")
    c.release("k", "ok")
    assert c.acquire("k")
    c.release("k", "ok")
    assert c.caps["k"] == 2  # grown back after clean calls


def test_cost_guard_across_ray_workers(tmp_path, local_ray, fake_server, monkeypatch):
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("WORKSTATION_PRICES", raising=False)
    fake_server.reset()
    text = f"""\
        name = "ray-priced"
        games = ["breakout"]
        seeds = "0..3"
        [protocol]
        frames = 90
        max_actions = 1
        [[settings]]
        label = "mini"
        spec = "openai:gpt-5.4-mini"
        base_url = "{fake_server.url('openai')}"
        """
    b = make(tmp_path, text, concurrency=1)
    b.prepare()
    b.estimates = {b.cells[0].label: Estimate(calls=30, cost_usd=0.0, source="test")}
    from tests.test_batch import _one_call_cost

    b.max_cost = 2.5 * _one_call_cost()
    assert b.run() == 1
    stopped = [r for r in b.state.runs.values() if r.status == STOPPED]
    assert len(stopped) == 1, [(r.status, r.last_error) for r in b.state.runs.values()]
    assert sum(r.status == LEFT for r in b.state.runs.values()) == 3
    assert not any(r.status == DONE for r in b.state.runs.values())
    rec = Recording(Path(stopped[0].path))
    assert "cost cap" in rec.summary_record.stopped and rec.summary_record.calls == 3
