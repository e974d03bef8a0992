"""workstation batch: resume after a crash and after kill -9, results rebuilt from the recordings, the cost guard.

Real parts: the real emulator, real recordings, the real CLI in a subprocess (its own
process group, killed with SIGKILL), the real OpenAI SDK over HTTP to the fake provider.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.fake_provider import KEYS
from workstation.base.errors import UserError
from workstation.store.recording import Recording
from workstation.studies.batch.estimate import Estimate
from workstation.studies.batch.grid import load_grid
from workstation.studies.batch.jobs import jobs_of
from workstation.studies.batch.progress import DONE, LEFT, SKIPPED, STOPPED, BatchState, PlainLog, line
from workstation.studies.batch.results import COLUMNS, rebuild
from workstation.studies.batch.runner import Batch

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "workstation"]

RANDOM_GRID = """\
name = "rnd"
games = ["breakout", "seaquest"]
seeds = [0, 1]

[protocol]
frames = {frames}
feedback = [true, false]

[[settings]]
label = "random"
spec = "random"
"""


def grid_file(tmp_path: Path, text: str, name: str = "grid.toml") -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return p


def batch(tmp_path: Path, text: str, **kw) -> Batch:
    out = tmp_path / "out"
    g = load_grid(grid_file(tmp_path, text), out=str(out / "runs"))
    return Batch(g, out, **kw)


def cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def read_rows(out: Path) -> list[dict]:
    with open(out / "results.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def assert_complete_once(out: Path, n: int) -> list[dict]:
    rows = read_rows(out)
    assert len(rows) == n
    assert len({r["run_id"] for r in rows}) == n
    assert all(r["complete"] == "true" for r in rows)
    on_disk = [p for p in (out / "runs").iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert len(on_disk) == n  # one recording per run in runs/, partial ones set aside
    ids = [Recording(p).manifest_record.run_id for p in on_disk]
    assert sorted(ids) == sorted(r["run_id"] for r in rows)
    jsonl = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert [r["run_id"] for r in jsonl] == [r["run_id"] for r in rows]
    return rows


def test_batch_runs_every_cell_and_rows_come_from_recordings(tmp_path):
    b = batch(tmp_path, RANDOM_GRID.format(frames=30), concurrency=2)
    b.prepare()
    assert b.run() == 0
    rows = assert_complete_once(b.dir, 8)
    assert (b.dir / "grid.toml").read_text() == RANDOM_GRID.format(frames=30)  # the directory says what it is
    assert list(read_rows(b.dir)[0])[:len(COLUMNS)] == list(COLUMNS)
    assert {r["setting"] for r in rows} == {"random|feedback=true", "random|feedback=false"}
    assert {r["feedback"] for r in rows} == {"true", "false"}
    for r in rows:  # every figure is the recording's own
        s = Recording(Path(b.dir / "runs").glob(f"*-{r['run_id'][:8]}").__next__()).summary_record
        assert float(r["score"]) == s.total_reward and int(r["turns"]) == s.turns
        assert int(r["frames"]) == s.frames == 30
    # the table is rebuilt, never edited: a damaged table comes back as the recordings say
    (b.dir / "results.csv").write_text("run_id,setting\nbogus,x\n")
    rebuild(b.dir, b.cells)
    assert read_rows(b.dir) == rows


def test_resume_after_a_simulated_crash_reruns_only_incomplete_runs(tmp_path):
    b = batch(tmp_path, RANDOM_GRID.format(frames=30), concurrency=2)
    b.prepare()
    assert b.run() == 0
    runs = b.dir / "runs"
    recs = sorted(p for p in runs.iterdir() if p.is_dir() and not p.name.startswith("."))
    killed, stopped = recs[0], recs[1]
    (killed / "summary.json").unlink()  # killed before the summary was written
    summary = json.loads((stopped / "summary.json").read_text())
    summary.update(complete=False, stopped="the batch stopped (SIGTERM); resume re-runs it")
    (stopped / "summary.json").write_text(json.dumps(summary))
    (runs / f"{recs[2].name}-2").mkdir()  # a folder claimed just before a kill, no manifest yet
    untouched = {p.name: (p / "summary.json").stat().st_mtime_ns for p in recs[2:]}

    again = batch(tmp_path, RANDOM_GRID.format(frames=30), concurrency=2)
    again.prepare()
    assert {Path(a).name for a, _ in again.set_aside} == {killed.name, stopped.name, f"{recs[2].name}-2"}
    assert all("/.incomplete/" in to for _, to in again.set_aside)
    assert sum(r.status == SKIPPED for r in again.state.runs.values()) == 6
    assert again.run() == 0
    assert_complete_once(again.dir, 8)
    for name, mtime in untouched.items():  # complete runs were not run again
        assert (runs / name / "summary.json").stat().st_mtime_ns == mtime
    assert len(list((runs / ".incomplete").iterdir())) == 3  # kept, out of the results


def kill_9_when(grid: Path, out: Path, ready) -> None:
    """Start the batch CLI in its own process group; SIGKILL the whole group once ``ready()`` holds."""
    proc = subprocess.Popen([*CLI, "batch", str(grid), "--out", str(out), "--plain", "--every", "0.5"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while not ready():
            assert proc.poll() is None, "the batch ended before it could be killed"
            assert time.monotonic() < deadline, "the moment to kill never came"
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the whole process group: the batch and its workers
        proc.wait()


def test_kill_9_of_the_whole_batch_then_resume(tmp_path):
    grid = grid_file(tmp_path, RANDOM_GRID.format(frames=600))
    out = tmp_path / "out"
    runs = out / "runs"
    # first while the first runs are under way (folders claimed, nothing finished), then mid-way
    kill_9_when(grid, out, lambda: runs.is_dir() and any(runs.glob("*/manifest.json")))
    assert not list(runs.glob("*/summary.json"))
    # ... then once a run has finished while another is under way (claimed, no summary yet): that one is set aside
    kill_9_when(grid, out, lambda: any(runs.glob("*/summary.json"))
                and any(not (m.parent / "summary.json").exists() for m in runs.glob("*/manifest.json")))
    assert len(list(runs.glob("*/summary.json"))) < 8
    r = cli("batch", str(grid), "--out", str(out), "--plain")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "set aside" in r.stdout
    rows = assert_complete_once(out, 8)
    r2 = cli("batch", str(grid), "--out", str(out), "--plain")  # a third time: nothing to do, nothing changes
    assert r2.returncode == 0 and read_rows(out) == rows
    for p in runs.iterdir():
        if p.is_dir() and not p.name.startswith("."):
            v = cli("verify", str(p))
            assert v.returncode == 0 and v.stdout.startswith("OK"), v.stdout + v.stderr


def test_dry_run_prints_the_plan_and_writes_nothing(tmp_path):
    text = RANDOM_GRID.format(frames=30) + textwrap.dedent("""
        [[settings]]
        label = "mini"
        spec = "openai:gpt-5.4-mini"
        effort = "low"
        """)
    grid = grid_file(tmp_path, text)
    r = cli("batch", str(grid), "--out", str(tmp_path / "out"), "--dry-run", "--max-cost", "5")
    assert r.returncode == 0, r.stderr
    assert "16 runs" in r.stdout and "mini|feedback=false" in r.stdout and "paper figures" in r.stdout
    assert "$" in r.stdout and "--max-cost $5" in r.stdout
    assert not (tmp_path / "out").exists()


def test_bad_command_lines_are_one_line_exit_2(tmp_path):
    grid = grid_file(tmp_path, RANDOM_GRID.format(frames=30).replace("frames = 30", "frames = 0"))
    r = cli("batch", str(grid), "--out", str(tmp_path / "out"))
    assert r.returncode == 2 and "line 6" in r.stderr and "frames" in r.stderr and len(r.stderr.splitlines()) == 1
    ale = grid_file(tmp_path, RANDOM_GRID.format(frames=30) + "mode = 99\n", "ale.toml")
    ale.write_text(ale.read_text().replace("[protocol]\n", "[protocol]\nmode = 99\n").rsplit("mode = 99\n", 1)[0])
    r = cli("batch", str(ale), "--out", str(tmp_path / "out"))  # a game variant the ROM does not have
    assert r.returncode == 2 and "protocol.mode" in r.stderr and "has no mode 99" in r.stderr, r.stderr
    assert "line 6" in r.stderr, r.stderr
    keyless = grid_file(tmp_path, RANDOM_GRID.format(frames=30).replace('spec = "random"', 'spec = "openai:gpt-5.4-mini"'),
                        "keyless.toml")
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    r = subprocess.run([*CLI, "batch", str(keyless), "--out", str(tmp_path / "out")], cwd=ROOT, capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 2 and "line 11: settings[0].spec" in r.stderr and "OPENAI_API_KEY" in r.stderr, r.stderr
    assert not (tmp_path / "out" / "runs").exists()


# -- the cost guard, with a priced model on the fake provider ---------------------------
PRICED = """\
name = "priced"
games = ["breakout"]
seeds = "0..5"

[protocol]
frames = 90
max_actions = 1

[[settings]]
label = "mini"
spec = "openai:gpt-5.4-mini"
base_url = "{url}"
"""


@pytest.fixture
def provider(fake_server, monkeypatch):
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("WORKSTATION_PRICES", raising=False)
    fake_server.reset()
    yield fake_server
    fake_server.reset()


def test_cost_guard_stops_launching_when_spent_plus_in_flight_would_pass(tmp_path, provider):
    b = batch(tmp_path, PRICED.format(url=provider.url("openai")), concurrency=4, max_cost=2.5)
    b.prepare()
    label = b.cells[0].label
    b.estimates = {label: Estimate(calls=30, cost_usd=1.0, source="test")}  # $1 a run, as planned
    assert b.run() == 1
    states = [r.status for r in b.state.runs.values()]
    assert states.count(DONE) == 2 and states.count(LEFT) == 4  # a third would pass $2.5
    assert "would pass --max-cost 2.5" in b.state.stopping
    assert len(read_rows(b.dir)) == 2
    plan = batch(tmp_path, PRICED.format(url=provider.url("openai")))
    plan.prepare(dry_run=True)  # the next plan prices the setting from its two complete runs
    e = plan.estimates[label]
    assert e.source == "2 earlier runs" and e.calls == 30 and e.cost_usd == pytest.approx(30 * _one_call_cost())


def test_cost_guard_ends_running_runs_at_a_turn_boundary(tmp_path, provider):
    b = batch(tmp_path, PRICED.format(url=provider.url("openai")), concurrency=1)
    b.prepare()
    label = b.cells[0].label
    b.estimates = {label: Estimate(calls=30, cost_usd=0.0, source="test")}
    per_call = _one_call_cost()
    b.max_cost = 2.5 * per_call  # the third call passes it
    assert b.run() == 1
    stopped = [r for r in b.state.runs.values() if r.status == STOPPED]
    assert len(stopped) == 1 and sum(r.status == LEFT for r in b.state.runs.values()) == 5
    rec = Recording(Path(stopped[0].path))
    assert not rec.complete and "cost cap" in rec.summary_record.stopped
    assert rec.summary_record.calls == 3 and len(rec.turn_records) == 3  # ended at the turn boundary, nothing half done
    assert b.state.spent == pytest.approx(3 * per_call)
    rows = read_rows(b.dir)
    assert len(rows) == 1 and rows[0]["complete"] == "false" and float(rows[0]["cost_usd"]) > 0


def _one_call_cost() -> float:
    from tests.fake_provider import FakeUsage
    from workstation.engine.calls import Usage
    from workstation.run.providers.pricing import default_prices

    u = FakeUsage()
    price = default_prices().lookup("openai", "gpt-5.4-mini")
    return price.cost(Usage(u.uncached, u.cache_read, u.cache_write, u.output, u.reasoning))


def test_progress_line_and_final_table_on_an_injected_clock(tmp_path):
    b = batch(tmp_path, RANDOM_GRID.format(frames=30))
    now = [100.0]
    state = BatchState.of("rnd", b.cells, max_cost=3.0, clock=lambda: now[0])
    runs = list(state.runs.values())
    runs[0].status, runs[1].status, runs[2].status = DONE, "running", "failed"
    runs[2].last_error = "no usable reply after 4 attempt(s)"
    runs[0].cost_usd, runs[0].calls = 0.5, 30
    now[0] = 110.0
    text = line(state)
    assert "1/8 done" in text and "1 running" in text and "1 failed" in text and "5 left" in text
    assert "$0.5000 of $3.00 cap" in text and "3.0 calls/s" in text and "ETA" in text
    state.finished = True
    assert "ETA" not in line(state)  # nothing left to estimate
    state.finished = False

    class Out:
        def __init__(self):
            self.text = ""

        def write(self, s):
            self.text += s

        def flush(self):
            pass

    out = Out()
    log = PlainLog(out, every_s=5)
    log.tick(state)
    now[0] = 112.0
    log.tick(state)  # too soon: no second line
    now[0] = 115.5
    log.tick(state)
    assert out.text.count("[batch rnd]") == 2
    runs[0].score = 7.0
    log.final(state)
    assert "no usable reply after 4 attempt(s)" in out.text and "setting" in out.text
    head, _rule, first = [x for x in out.text.splitlines() if x.startswith(("setting", "-------", runs[0].cell.label))][:3]
    assert head.split()[-3:] == ["mean", "score", "(n)"] and first.split()[-2:] == ["7.0", "(1)"]


def test_jobs_have_the_specs_run_ids_seeds_outermost(tmp_path):
    g = load_grid(grid_file(tmp_path, RANDOM_GRID.format(frames=30)), out=str(tmp_path / "runs"))
    jobs = jobs_of(g)
    assert [j.seed for j in jobs] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert all(j.run_id == j.spec.identity() for j in jobs)
    assert all(j.provider == "cpu" for j in jobs)


def test_sigterm_stops_cleanly_and_everything_resumes(tmp_path):
    grid = grid_file(tmp_path, RANDOM_GRID.format(frames=900))
    out = tmp_path / "out"
    proc = subprocess.Popen([*CLI, "batch", str(grid), "--out", str(out), "--plain", "--every", "0.5"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:  # runs under way: manifests written
            if (out / "runs").is_dir() and list((out / "runs").glob("*/manifest.json")):
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 1, stdout + stderr
    assert "stopping: SIGTERM" in stdout or "SIGTERM" in stdout
    recs = [Recording(p) for p in (out / "runs").iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert recs and len(recs) < 8
    stopped = [r for r in recs if not r.complete]
    assert stopped and all("SIGTERM" in r.summary_record.stopped for r in stopped)  # closed at a turn, saying why
    rows = read_rows(out)
    assert len(rows) == len(recs)
    r = cli("batch", str(grid), "--out", str(out), "--plain")
    assert r.returncode == 0, r.stdout + r.stderr
    assert_complete_once(out, 8)


def test_settings_that_give_the_same_runs_are_refused_naming_the_line(tmp_path):
    text = RANDOM_GRID.format(frames=30).replace('spec = "random"', 'spec = "compat:m"\nbase_url = "http://a/v1"')
    text += '\n[[settings]]\nlabel = "again"\nspec = "compat:m"\nbase_url = "http://b/v1"\n'
    g = load_grid(grid_file(tmp_path, text), out=str(tmp_path / "runs"))
    with pytest.raises(UserError) as e:
        jobs_of(g)
    assert "line 14" in str(e.value) and "settings[1]" in str(e.value) and "same runs" in str(e.value)
