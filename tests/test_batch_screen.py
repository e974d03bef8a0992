"""The batch screen through Pilot: a real random batch runs in it; counts, spend line, opening a run, stopping."""

from __future__ import annotations

import gc
import textwrap
from multiprocessing import resource_tracker
from pathlib import Path

import pytest
from textual.widgets import DataTable, Footer, Static

from screens.app import make_app
from screens.views.batch import BatchScreen
from screens.views.replay_view import ReplayScreen
from tests.tui_helpers import run_async, wait_until
from workstation.run.launch import BatchLaunch, HomeLaunch
from workstation.store.recording import Recording
from workstation.studies.batch.grid import load_grid
from workstation.studies.batch.runner import Batch

GRID = """\
name = "screen"
games = ["breakout", "seaquest"]
seeds = [0, 1]
[protocol]
frames = {frames}
[[settings]]
label = "random"
spec = "random"
"""


@pytest.fixture
def fresh_tracker(monkeypatch):
    """A resource tracker not started yet, as in a fresh ``workstation`` process (the real one may run already).

    Textual swaps ``sys.stderr`` for a capture whose ``fileno()`` is -1; a tracker first started inside the app
    used to take that descriptor and fail (``ValueError: bad value(s) in fds_to_keep``), closing the app.
    Call it once the test's setup (which may run a batch, starting the tracker) is done.
    """
    made = []

    def fresh() -> resource_tracker.ResourceTracker:
        gc.collect()  # what the setup's batch made is unregistered from the tracker it was registered with
        tracker = resource_tracker.ResourceTracker()
        for name in ("ensure_running", "register", "unregister", "getfd"):
            monkeypatch.setattr(resource_tracker, name, getattr(tracker, name))
        made.append(tracker)
        return tracker

    yield fresh
    gc.collect()  # the semaphores the test made are unlinked by their owners before their tracker ends
    for tracker in made:
        if tracker._fd is not None:
            tracker._stop()


def make(tmp_path: Path, frames: int = 30) -> Batch:
    grid = tmp_path / "grid.toml"
    grid.write_text(textwrap.dedent(GRID.format(frames=frames)))
    out = tmp_path / "out"
    b = Batch(load_grid(grid, out=str(out / "runs")), out, concurrency=2)
    b.prepare()
    return b


def head(app) -> str:
    return str(app.screen.query_one("#batch-head", Static).render())


async def batch_screen(app, pilot) -> BatchScreen:
    await wait_until(pilot, lambda: isinstance(app.screen, BatchScreen), what="the batch screen")
    return app.screen


@run_async
async def test_the_screen_shows_a_batch_to_its_end_and_opens_a_run(tmp_path):
    batch = make(tmp_path)
    app = make_app(BatchLaunch(batch))  # the front door, as `workstation batch GRID --watch` opens it
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await batch_screen(app, pilot)
        await wait_until(pilot, lambda: batch.state.finished and not screen.running, timeout=180, what="the batch")
        await wait_until(pilot, lambda: "finished" in head(app), what="the last refresh")  # not a timed pause
        assert "4/4 done" in head(app) and "spent" in head(app) and "calls/s" in head(app)
        assert "ETA" not in head(app)  # nothing is left to estimate
        assert "Stop" not in str(app.screen.query_one(Footer).render()) and not app.screen.check_action("stop", ())
        groups = app.screen.query_one("#groups", DataTable)
        assert groups.row_count == 2
        scores = {(r.cell.game, r.cell.seed): r.score for r in batch.state.runs.values()}
        assert all(v is not None for v in scores.values())
        mean = (scores[("breakout", 0)] + scores[("breakout", 1)]) / 2
        assert [str(c) for c in groups.get_row_at(0)] == ["random", "breakout", "2", "0", "0", "0", f"{mean:.1f} (2)"]
        runs = app.screen.query_one("#runs", DataTable)
        assert runs.row_count == 4
        for i in range(4):  # each run: its score and turns, as its recording says
            status, _setting, game, seed, score, turns, *_ = [str(c) for c in runs.get_row_at(i)]
            r = next(r for r in batch.state.runs.values() if r.cell.game == game and str(r.cell.seed) == seed)
            s = Recording(Path(r.path)).summary_record
            assert status == "done" and float(score) == s.total_reward and int(turns) == s.turns
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ReplayScreen), what="the replay screen")
    assert screen.code == 0


@run_async
async def test_x_stops_the_batch_cleanly_and_it_resumes(tmp_path):
    batch = make(tmp_path, frames=900)
    app = make_app(BatchLaunch(batch))  # the front door, as `workstation batch GRID --watch` opens it
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await batch_screen(app, pilot)
        runs = batch.dir / "runs"
        await wait_until(pilot, lambda: any(runs.glob("*/manifest.json")), timeout=120, what="a run under way")
        await pilot.press("x")
        await wait_until(pilot, lambda: not screen.running, timeout=120, what="the batch to stop")
        await wait_until(pilot, lambda: "stopped early" in head(app), what="the refresh after the stop")
        assert "stopped early: stopped from the batch screen" in head(app)
        stopped = [r for r in batch.state.runs.values() if r.status == "stopped"]
        assert stopped and all("stopped from the batch screen" in r.last_error for r in stopped)
        assert screen.code == 1
        await pilot.press("r")  # resume in the screen: a new pass
        await wait_until(pilot, lambda: screen.code == 0 and not screen.running, timeout=240, what="the resumed pass")
        # what `batch --watch` prints on exit follows the passes to the last one: its final state
        assert batch.successor is screen.job
        assert all(r.status in ("done", "skipped") for r in screen.job.state.runs.values())


@run_async
async def test_runs_done_in_an_earlier_pass_say_so_with_their_scores(tmp_path):
    first = make(tmp_path)
    assert first.run() == 0
    batch = make(tmp_path)  # the same grid again: everything is done before
    app = make_app(BatchLaunch(batch))
    async with app.run_test(size=(140, 40)) as pilot:
        screen = await batch_screen(app, pilot)
        await wait_until(pilot, lambda: batch.state.finished and not screen.running, timeout=60, what="the batch")
        runs = app.screen.query_one("#runs", DataTable)

        def table() -> list[list[str]]:
            return [[str(c) for c in runs.get_row_at(i)] for i in range(runs.row_count)]

        groups = app.screen.query_one("#groups", DataTable)

        def shown() -> bool:  # what a refresh shows (waited for, not a timed pause)
            rows = table()
            return (len(rows) == 4 and {r[0] for r in rows} == {"done before"}
                    and all(r[4] != "-" and r[5] != "-" for r in rows)
                    and groups.row_count > 0 and str(groups.get_row_at(0)[-1]).endswith("(2)"))

        await wait_until(pilot, shown, what="every run done before, with its score, and the group's mean")


def finished_batch(tmp_path: Path, name: str = "tiny") -> Path:
    """``workstation batch GRID --out batches/NAME`` run to its end in ``tmp_path`` (the working directory)."""
    grid = tmp_path / "grid.toml"
    grid.write_text(textwrap.dedent(GRID.format(frames=30)).replace('"seaquest"', ""))
    b = Batch(load_grid(grid, out=f"batches/{name}/runs"), Path(f"batches/{name}"), concurrency=2)
    b.prepare()
    assert b.run() == 0
    return Path(f"batches/{name}")


@run_async
async def test_home_palette_opens_a_finished_batch_and_shows_its_runs(tmp_path, monkeypatch, fresh_tracker):
    monkeypatch.chdir(tmp_path)
    finished_batch(tmp_path)
    tracker = fresh_tracker()
    app = make_app(HomeLaunch(out=str(tmp_path / "recordings")))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: app.screen.query("#recent"), what="the home screen")
        commands = {name: cb for name, _, cb in app.screen.palette_commands()}
        commands["Batch tiny"]()  # what ctrl+p, "Batch tiny", enter runs
        await wait_until(pilot, lambda: isinstance(app.screen, BatchScreen) and app.screen.query("#runs"),
                         what="the batch screen")
        screen = app.screen
        runs = screen.query_one("#runs", DataTable)
        await wait_until(pilot, lambda: runs.row_count == 2, what="the batch's runs")
        assert {str(runs.get_row_at(i)[0]) for i in range(2)} == {"done before"}  # as the batch screen says
        assert {str(runs.get_row_at(i)[3]) for i in range(2)} == {"0", "1"}  # the seeds
        assert "2/2 done" in head(app) and "nothing left to run" in head(app) and not screen.running
        assert tracker._fd is None  # viewing a finished batch starts no process machinery
    assert app.return_code in (None, 0)


@run_async
async def test_a_batch_that_cannot_be_read_is_a_notification_not_a_crash(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "batches" / "broken" / "grid.toml").mkdir(parents=True)  # a folder where the grid should be
    app = make_app(HomeLaunch(out=str(tmp_path / "recordings")))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: app.screen.query("#recent"), what="the home screen")
        commands = {name: cb for name, _, cb in app.screen.palette_commands()}
        commands["Batch broken"]()
        await wait_until(pilot, lambda: any("cannot open the batch" in (n.title or "") for n in app._notifications),
                         what="the notification")
        assert not isinstance(app.screen, BatchScreen) and app.is_running
        notes = [n for n in app._notifications if "cannot open the batch" in (n.title or "")]
        assert notes and "broken" in notes[0].message and "\n" not in notes[0].message


@run_async
async def test_home_palette_opens_a_batch_on_disk_and_r_resumes_it(tmp_path, monkeypatch, fresh_tracker):
    monkeypatch.chdir(tmp_path)
    grid = tmp_path / "grid.toml"
    grid.write_text(textwrap.dedent(GRID.format(frames=30)))
    first = Batch(load_grid(grid, out="batches/screen/runs"), Path("batches/screen"), concurrency=2)
    first.prepare()
    first.request_stop("test")  # nothing launches: every run is left
    assert first.run() == 1
    fresh_tracker()
    app = make_app(HomeLaunch(out=str(tmp_path / "recordings")))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: app.screen.query("#recent"), what="the home screen")
        commands = {name: cb for name, _, cb in app.screen.palette_commands()}
        assert "Batch screen" in commands
        commands["Batch screen"]()
        await wait_until(pilot, lambda: isinstance(app.screen, BatchScreen) and app.screen.query("#batch-head"),
                         what="the batch screen")
        screen = app.screen
        await wait_until(pilot, lambda: "0/4 done" in head(app), what="the batch head")
        assert "0/4 done" in head(app) and "not running: r runs what is left" in head(app) and not screen.running
        await pilot.press("r")  # random runs: worker processes, the resource tracker started inside the app
        await wait_until(pilot, lambda: screen.code is not None, timeout=180, what="the batch to run")
        assert screen.code == 0, screen.error
        await wait_until(pilot, lambda: "4/4 done" in str(screen.query_one("#batch-head", Static).render()),
                         what="the refresh after the batch")
        await pilot.press("q")
        await wait_until(pilot, lambda: not isinstance(app.screen, BatchScreen), what="back to home")
