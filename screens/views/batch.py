"""The batch screen (``workstation batch GRID --watch``): a running batch at a glance.

Per setting and game the runs done / running / failed / left; the spend against the
cap, calls a second, rate-limit waits and the ETA; every run with its status, calls,
dollars and last error. ``enter`` (or ``o``) on a run that has ended opens its
recording; ``x`` stops the batch cleanly (no new runs, running ones end at their next
turn, everything resumable); ``q`` stops it the same way and leaves when it has.
The batch runs in a Textual thread worker of the screen (cancelled on unmount, which also
asks the batch to stop: ``App.run`` returns once its thread has ended); the screen reads its
``BatchState`` twice a second. Nothing here drives a run: ``workstation.studies.batch.runner.Batch`` does.

From the home screen's command palette (``batch_commands``): every batch directory
under ``batches/`` that keeps its grid opens here as it stands on disk, and ``r`` runs
(resumes) it.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Footer, Static
from textual.worker import Worker

from screens.messages import OpenRecording, PaletteCommand
from screens.widgets.alive import unless_leaving
from workstation.studies.batch.progress import DONE, FAILED, LEFT, RUNNING, SKIPPED, STOPPED, duration, money

ORDER = {RUNNING: 0, FAILED: 1, STOPPED: 2, LEFT: 3, DONE: 4, SKIPPED: 5}
LABELS = {SKIPPED: "done before"}  # complete in an earlier pass: not run again, not "skipped" over


def start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker (the batch's worker processes need it) from inside the app.

    The tracker is spawned with ``sys.stderr``'s descriptor passed on; inside a Textual app ``sys.stderr`` is
    Textual's print capture, whose ``fileno()`` is -1, and spawning with it fails (``ValueError: bad value(s)
    in fds_to_keep``). The real stderr is put back for the moment of the spawn. Only running a batch needs
    the tracker: viewing one as it stands on disk does not start it.
    """
    from multiprocessing import resource_tracker

    shown = sys.stderr
    if sys.__stderr__ is not None:
        sys.stderr = sys.__stderr__
    try:
        resource_tracker.ensure_running()
    finally:
        sys.stderr = shown


def _score(value: float | None) -> str:
    return "-" if value is None else f"{float(value):g}"


class BatchScreen(Screen[None]):
    BINDINGS = [
        Binding("enter,o", "open_run", "Open run"),
        Binding("r", "resume", "Run / resume"),
        Binding("x", "stop", "Stop batch"),
        Binding("q,escape", "leave", "Back"),
    ]
    DEFAULT_CSS = """
    BatchScreen #batch-head { height: 4; padding: 0 1; }
    BatchScreen #groups { height: 1fr; }
    BatchScreen #runs { height: 2fr; }
    """

    def __init__(self, batch: Any, start: bool = True, can_go_back: bool = True) -> None:
        super().__init__()
        self.job: Any = batch  # the batch on screen (``batch`` is Textual's own name on a widget)
        self.can_go_back = can_go_back  # False: leaving ends the app (``batch --watch``)
        self.code: int | None = None
        self.error: str | None = None
        self._start = start
        self._leaving = False
        self._gone = False  # left: nothing more to draw
        self._was_running = False
        self._idle = threading.Event()  # set while no batch runs on this screen
        self._idle.set()

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("", id="batch-head")
            groups: DataTable[str] = DataTable(id="groups", cursor_type="none", zebra_stripes=True)
            groups.add_columns("setting", "game", "done", "running", "failed", "left", "mean score (n)")
            yield groups
            runs: DataTable[str] = DataTable(id="runs", cursor_type="row", zebra_stripes=True)
            runs.add_columns("status", "setting", "game", "seed", "score", "turns", "calls", "$", "last error")
            yield runs
        yield Footer()

    def on_mount(self) -> None:
        if self._start:
            self._run_batch()
        self.refresh_state()
        self._timer = self.set_interval(0.5, self.refresh_state)
        self.query_one("#runs", DataTable).focus()

    def on_unmount(self) -> None:
        """Left however (``q``, ctrl+q, the app closing): the batch stops cleanly; its worker is cancelled."""
        if self.running and not self.job.state.stopping:
            self.job.request_stop("the batch screen closed")
        if self._worker is not None:
            self._worker.cancel()

    def _run_batch(self) -> None:
        start_resource_tracker()  # here, on the app's thread: the batch's worker processes need it
        self._idle.clear()
        self._worker = self.run_worker(self._run, name="batch", thread=True, exit_on_error=False)

    def _run(self) -> None:
        try:
            self.code = self.job.run()
        except Exception as e:  # shown, not raised into the event loop
            self.error, self.code = f"{type(e).__name__}: {e}", 1
        finally:
            self._idle.set()

    _worker: Worker[None] | None = None
    _timer: Timer | None = None

    @property
    def running(self) -> bool:
        return not self._idle.is_set()

    # -- drawing -------------------------------------------------------------------
    def head_text(self) -> str:
        s = self.job.state
        c = s.counts()
        cap = f" of {money(s.max_cost)}" if s.max_cost is not None else " (no cap)"
        if s.finished:
            state = f"finished; stopped early: {s.stopping}" if s.stopping else "finished"
        elif s.stopping:
            state = f"stopping: {s.stopping}"
        elif not self.running:  # opened as it stands on disk, not run yet
            state = "not running: r runs what is left" if c[LEFT] + c[FAILED] + c[STOPPED] else "nothing left to run"
        else:
            state = "running"
        if self.error:
            state = f"failed: {self.error}"
        eta = "" if s.finished or not self.running else f" · ETA {duration(s.eta_s())}"
        return (f"batch {self.job.grid.name}\n{c[DONE] + c[SKIPPED]}/{len(s.runs)} done ({c[SKIPPED]} before) · {c[RUNNING]} running · "
                f"{c[FAILED] + c[STOPPED]} failed/stopped · {c[LEFT]} left\n"
                f"spent {money(s.spent)}{cap} · {s.calls_per_s():.1f} calls/s · {s.rate_limit_waits} rate-limit "
                f"waits{eta}\n{state} · results in {self.job.dir}")

    @unless_leaving
    def refresh_state(self) -> None:
        if not self.is_attached or self._gone:
            return
        self.query_one("#batch-head", Static).update(self.head_text())
        groups = self.query_one("#groups", DataTable)
        groups.clear()
        means = self.job.state.means()
        for setting, game, d in self.job.state.groups():
            mean = means.get((setting, game))
            groups.add_row(setting, game, str(d[DONE] + d[SKIPPED]), str(d[RUNNING]), str(d[FAILED] + d[STOPPED]),
                           str(d[LEFT]), "-" if mean is None else f"{mean[0]:.1f} ({mean[1]})")
        runs = self.query_one("#runs", DataTable)
        keep = runs.cursor_row
        chosen = self.highlighted_run_id()
        runs.clear()
        ordered = sorted(self.job.state.runs.items(), key=lambda kv: ORDER[kv[1].status])
        for run_id, r in ordered:
            runs.add_row(LABELS.get(r.status, r.status), r.cell.label, r.cell.game, str(r.cell.seed), _score(r.score),
                         "-" if r.turns is None else str(r.turns), str(r.calls), money(r.cost_usd),
                         (r.last_error or "")[:120], key=run_id)
        if ordered:
            ids = [k for k, _ in ordered]
            runs.move_cursor(row=ids.index(chosen) if chosen in ids else min(keep, len(ids) - 1))
        if self.running != self._was_running:  # "x Stop" only while the batch runs
            self._was_running = self.running
            self.refresh_bindings()
        if self._leaving and not self.running:
            self._leaving = False
            self._gone = True
            if self._timer is not None:
                self._timer.stop()
            if not self.can_go_back:
                self.app.exit(self.code if self.code is not None else 1)
            else:
                self.app.pop_screen()

    def highlighted_run_id(self) -> str | None:
        runs = self.query_one("#runs", DataTable)
        if not runs.row_count:
            return None
        try:
            return runs.coordinate_to_cell_key(runs.cursor_coordinate).row_key.value
        except Exception:  # no row under the cursor
            return None

    # -- actions ------------------------------------------------------------------
    def action_open_run(self) -> None:
        run_id = self.highlighted_run_id()
        r = self.job.state.runs.get(run_id) if run_id else None
        if r is None:
            return
        if r.status == RUNNING:
            self.notify("this run is still going; open it when it has ended", severity="warning")
            return
        if not r.path or not (Path(r.path) / "manifest.json").is_file():
            self.notify("this run has no recording yet", severity="warning")
            return
        self.post_message(OpenRecording(Path(r.path)))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id == "runs":
            self.action_open_run()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop":
            return self.running
        return True

    def action_stop(self) -> None:
        if self.running and not self.job.state.stopping:
            self.job.request_stop("stopped from the batch screen")
            self.notify("stopping: no new runs; running ones end at their next turn")

    def action_resume(self) -> None:
        """Run what is left of the batch (a batch opened from home, or one that has stopped)."""
        if self.running:
            return
        from workstation.base.errors import UserError
        from workstation.studies.batch.runner import Batch

        old = self.job
        fresh = Batch(old.grid, old.dir, concurrency=old.concurrency, max_cost=old.max_cost,
                      executor=old.executor_kind, ray_address=old.ray_address)
        try:
            fresh.prepare()
        except UserError as e:  # another batch holds the directory
            self.notify(str(e), severity="error")
            return
        if fresh.damaged:  # edited since it was written: set aside whole, its run played again
            path, why = fresh.damaged[0]
            more = f" (and {len(fresh.damaged) - 1} more)" if len(fresh.damaged) > 1 else ""
            self.notify(f"set aside a damaged recording {path}: {why}{more}; kept under runs/.damaged/, played "
                        "again", severity="warning")
        old.successor = fresh  # what `batch --watch` prints on exit is the last pass's final state
        self.job, self.code, self.error = fresh, None, None
        self._run_batch()
        self.refresh_state()

    @classmethod
    def of_dir(cls, directory: str | Path) -> BatchScreen:
        """The batch in ``directory`` (its grid.toml) as it stands on disk; ``r`` runs it."""
        from workstation.studies.batch.grid import load_grid
        from workstation.studies.batch.results import runs_dir
        from workstation.studies.batch.runner import Batch

        directory = Path(directory)
        batch = Batch(load_grid(directory / "grid.toml", out=str(runs_dir(directory))), directory)
        batch.prepare(dry_run=True)
        return cls(batch, start=False)

    def action_leave(self) -> None:
        self.action_stop()
        self._leaving = True
        self.refresh_state()


def batch_commands(app: App[Any], root: str | Path | None = None) -> list[PaletteCommand]:
    """Palette commands: one per batch directory under ``root`` (default ``batches/``) that keeps its grid."""
    from workstation.base.locations import BATCHES

    out: list[PaletteCommand] = []
    for grid in sorted(Path(root or BATCHES).glob("*/grid.toml")):
        directory = grid.parent

        def open_it(directory: Path = directory) -> None:
            from workstation.base.errors import UserError

            try:
                screen = BatchScreen.of_dir(directory)
            except UserError as e:
                app.notify(str(e), title="cannot open the batch", severity="error")
                return
            except Exception as e:  # a TUI never closes on a batch it cannot read
                app.notify(f"{type(e).__name__}: {e}", title=f"cannot open the batch in {directory}",
                           severity="error")
                return
            app.push_screen(screen)

        out.append((f"Batch {directory.name}", f"watch or resume the batch in {directory} (r runs it)", open_it))
    return out


__all__ = ["BatchScreen", "batch_commands"]
