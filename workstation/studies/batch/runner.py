"""The unattended batch: resume by run id, launch under the concurrency and cost limits, stop cleanly.

``Batch(grid, DIR)``:

- ``prepare()`` takes DIR's lock (one batch per directory; the lock dies with the
  process, also on kill -9), sets every partial recording in DIR/runs/ aside under
  DIR/runs/.incomplete/ (a run killed or stopped earlier is re-run from the start, and
  the partial one is kept, out of the results), holds every complete one to the check
  ``verify --quick`` and ``report`` make (its files against their digests, its summary
  against its turns and frames: ``store.integrity``) and sets a damaged one aside under
  DIR/runs/.damaged/ (moved whole, never written into; its run is played again, and
  ``damaged`` names each with why), and marks the runs whose sound complete recording
  is there as done before (skipped);
- ``run(view)`` launches the rest, at most ``concurrency`` at once, at most the
  grid's ``[limits]`` per provider, CPU-bound runs one per core; with ``max_cost``
  it launches a run only while spent + the in-flight estimate + its estimate stays
  under the cap, and ends the running ones at their next turn boundary once the
  spend (with one more call per running run) reaches it. ``request_stop`` (SIGINT,
  SIGTERM) stops launching and ends running runs at their next turn; a second one
  ends model calls under way;
- a run counts as done only when its complete recording is in DIR/runs/ and passes
  ``verify --quick`` (a run on a Ray node ships it home first); at the end every done
  run is looked for again, the results table is rebuilt from what is there, and a run
  whose recording is missing is failed, saying so. Exit 0 only when every run of the
  grid has a complete, sound recording in DIR/runs/.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from pathlib import Path
from typing import Any

from workstation.base.errors import UserError
from workstation.run.hand_check import counts_as_plain
from workstation.store.atomic import move_into, write_atomic
from workstation.store.integrity import quick_verdict
from workstation.store.recording import MANIFEST, Recording
from workstation.store.records import RecordingError
from workstation.store.seal import SEAL, check_seal, seal
from workstation.studies.batch import placement, results
from workstation.studies.batch.estimate import Estimate, estimates
from workstation.studies.batch.executors import Executor, cores, limiter_key, make_executor
from workstation.studies.batch.grid import Grid
from workstation.studies.batch.jobs import CPU, Job, jobs_of
from workstation.studies.batch.progress import DONE, FAILED, LEFT, RUNNING, SKIPPED, STOPPED, BatchState, RunState

INCOMPLETE = ".incomplete"
DUPLICATE = ".duplicate"
DAMAGED = ".damaged"  # complete recordings edited since they were written: kept whole, out of the results
LOCK = ".batch.lock"
SEAL_KIND = "batch"
TICK_S = 0.25


class Batch:
    def __init__(self, grid: Grid, out_dir: str | Path, concurrency: int = 8, max_cost: float | None = None,
                 executor: str = "local", ray_address: str | None = None,
                 clock: Callable[[], float] = time.monotonic, sealed: bool = True) -> None:
        if concurrency < 1:
            raise UserError(f"--concurrency must be at least 1 (got {concurrency})")
        if max_cost is not None and not max_cost > 0:
            raise UserError(f"--max-cost must be more than 0 dollars (got {max_cost:g})")
        self.grid, self.dir = grid, Path(out_dir)
        self.cells = jobs_of(grid)
        self.concurrency, self.max_cost = concurrency, max_cost
        self.executor_kind, self.ray_address = executor, ray_address
        self.clock = clock
        self.state = BatchState.of(grid.name, self.cells, max_cost, clock)
        self.executor: Executor | None = None
        self.set_aside: list[tuple[str, str]] = []  # (from, to) moved by prepare()
        self.damaged: list[tuple[str, str]] = []  # (recording, what its check found) set aside by prepare(): played again
        self._lock_fd: int | None = None
        self._stop_requests = 0
        self.estimates: dict[str, Estimate] = {}
        self._settled_cost = 0.0  # dollars of the runs that ended in this batch
        self.on_settled: Callable[[RunState], None] | None = None  # told of each run as it ends (remote_out uploads)
        # sealed when it ends (DIR/seal.json over grid.toml, results.csv, results.jsonl, placement.jsonl; the
        # recordings under runs/ carry their own digests) and checked when it is resumed; a batch whose --out is
        # a URI is not (its local stage is rewritten from the URI each time)
        self.sealed = sealed

    # -- caps ------------------------------------------------------------------------
    def cap(self, provider: str) -> int:
        if provider == CPU:
            return min(cores(), self.concurrency)
        return min(self.grid.limits.get(provider, self.concurrency), self.concurrency)

    # -- before anything runs -------------------------------------------------------
    def survey(self) -> dict[str, str]:
        """Per run id of the grid: ``complete`` or ``incomplete`` (a recording in DIR/runs/), absent if none."""
        found = results.recordings_by_id(self.dir)
        out = {}
        for c in self.cells:
            entries = found.get(c.run_id)
            if entries:
                out[c.run_id] = "complete" if entries[0].complete else "incomplete"
        return out

    def lock(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.dir / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise UserError(f"another batch is running in {self.dir} (it holds {self.dir / LOCK}); wait for it or "
                            "choose another --out") from None
        self._lock_fd = fd

    def unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def prepare(self, dry_run: bool = False) -> None:
        """Lock DIR, set partial recordings aside, mark complete runs as done before.

        ``dry_run``: no lock and nothing moved (``set_aside`` lists what would move).
        """
        root = results.runs_dir(self.dir)
        if self.sealed and self.dir.is_dir():  # a batch edited by hand since it ended: named, exit 1, nothing written
            check_seal(self.dir, SEAL_KIND, what="the batch", missing_ok=True)
        if not dry_run:
            self.lock()
            if self.sealed:  # open again: sealed when this run of it ends (a kill leaves it unsealed, resumable)
                (self.dir / SEAL).unlink(missing_ok=True)
            root.mkdir(parents=True, exist_ok=True)
            self._keep_grid()
        keep: dict[str, Path] = {}
        self.changed_by_hand: list[str] = []
        listing = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")) if root.is_dir() else []
        for path in listing:
            run_id = None
            complete = False
            damage: str | None = None
            if (path / MANIFEST).is_file():
                try:
                    rec = Recording(path)
                    run_id, complete = rec.run_id, rec.complete  # a run changed by hand has an id of its own
                    if not counts_as_plain(rec):  # changed by hand, or edited to hide it
                        self.changed_by_hand.append(str(path))
                        continue  # never a cell's run: left where it is, never counted
                    if complete:  # the check verify --quick and report make: a forged score is never done before
                        ok, line = quick_verdict(rec)
                        damage = None if ok else line.removeprefix("DAMAGED: ").removesuffix(f" ({rec.path})")
                    rec.close()
                except RecordingError as e:
                    damage = str(e) if complete else None
            if damage is not None:
                self.damaged.append((str(path), damage))
                if not dry_run:
                    move_into(path, root / DAMAGED)
                continue
            if complete and run_id is not None and run_id not in keep:
                keep[run_id] = path
                continue
            if dry_run:
                self.set_aside.append((str(path), ""))
            else:
                self._move(path, root / (DUPLICATE if complete else INCOMPLETE))
        done = set(keep)
        for c in self.cells:
            if c.run_id in done:
                r = self.state.runs[c.run_id]
                r.status, r.path = SKIPPED, str(keep[c.run_id])
        collected = results.collect(self.dir, self.cells)
        for row in collected:  # runs done before show their score
            done_before = self.state.runs.get(str(row["run_id"]))
            if done_before is not None and done_before.status == SKIPPED and row["complete"]:  # every column
                done_before.score, done_before.turns = row["score"], row["turns"]
        self.estimates = estimates(self.cells, collected)
        self.state.est_cost = {k: e.cost_usd for k, e in self.estimates.items()}

    def _keep_grid(self) -> None:
        """A copy of the grid in DIR/grid.toml: the directory says what it is, and resumes from it."""
        try:
            text = Path(self.grid.source).read_text(encoding="utf-8")
        except OSError:
            return
        target = self.dir / "grid.toml"
        if Path(self.grid.source).resolve() == target.resolve():
            return
        write_atomic(target, text)

    def _move(self, path: Path, into: Path) -> None:
        target = move_into(path, into)
        self.set_aside.append((str(path), str(target)))

    # -- the cost guard -----------------------------------------------------------------
    def _estimate(self, cell: Job) -> float:
        e = self.estimates.get(cell.label)
        return (e.cost_usd or 0.0) if e is not None else 0.0

    def _per_call(self, cell: Job) -> float:
        e = self.estimates.get(cell.label)
        return (e.cost_per_call or 0.0) if e is not None else 0.0

    def in_flight(self) -> float:
        """The estimated cost still to come from the running runs."""
        return sum(max(0.0, self._estimate(r.cell) - (r.cost_usd or 0.0))
                   for r in self.state.runs.values() if r.status == RUNNING)

    def _fits(self, cell: Job) -> bool:
        if self.max_cost is None:
            return True
        return self.state.spent + self.in_flight() + self._estimate(cell) <= self.max_cost

    def _over(self) -> bool:
        if self.max_cost is None:
            return False
        margin = sum(self._per_call(r.cell) for r in self.state.runs.values() if r.status == RUNNING)
        return self.state.spent + margin >= self.max_cost

    def guard(self) -> str | None:
        """Asked by every model run at each turn boundary: a reason once the spend (plus one more call per
        running run) reaches --max-cost, from the live totals of the running runs."""
        if self.max_cost is None or self.executor is None:
            return None
        live = self.executor.progress()
        spent = self._settled_cost + sum(p.cost_usd or 0.0 for p in live.values())
        margin = sum(self._per_call(self.state.runs[i].cell) for i in live if i in self.state.runs)
        if spent + margin >= self.max_cost:
            return (f"the batch's cost cap was reached (${spent:.4f} of --max-cost ${self.max_cost:g}); "
                    "resume re-runs it")
        return None

    # -- stopping ------------------------------------------------------------------------
    def request_stop(self, reason: str = "interrupted") -> None:
        """First call: no new runs, running ones end at their next turn. Second: model calls end now."""
        self._stop_requests += 1
        if self.state.stopping is None:
            self.state.stopping = reason
        if self.executor is not None:
            self.executor.stop(f"the batch stopped ({reason}); resume re-runs it")
            if self._stop_requests > 1 and hasattr(self.executor, "cancel"):
                self.executor.cancel.cancel(f"the batch stopped ({reason}, twice); resume re-runs it")

    # -- running ------------------------------------------------------------------------
    def _caps(self) -> dict[tuple[Any, ...], int]:
        caps: dict[tuple[Any, ...], int] = {}
        for c in self.cells:
            if c.is_model:
                caps[limiter_key(c)] = self.cap(c.provider)
        return caps

    def run(self, tick: Callable[[BatchState], None] | None = None) -> int:
        """Launch every run left; returns 0 when every run of the grid is complete, else 1."""
        todo = [c for c in self.cells if self.state.runs[c.run_id].status == LEFT]
        queues: dict[str, deque[Job]] = {}
        for c in todo:
            queues.setdefault(c.provider, deque()).append(c)
        model_threads = min(self.concurrency, sum(len(q) for p, q in queues.items() if p != CPU) or 1)
        per_call = {k: e.cost_per_call or 0.0 for k, e in self.estimates.items()}
        self.executor = make_executor(self.executor_kind, model_threads, self.cap(CPU), self._caps(),
                                      self.ray_address, self.max_cost, per_call)
        self.executor.guard = self.guard
        if self.state.stopping:  # a signal came before the executor existed
            self.executor.stop(f"the batch stopped ({self.state.stopping}); resume re-runs it")
        running: dict[Future[Any], Job] = {}
        per: dict[str, int] = {}
        self.state.started = self.clock()
        try:
            while True:
                if self.state.stopping is None:
                    self._launch(queues, running, per)
                    self.executor.launched()
                if not running:
                    break
                finished, _ = wait(list(running), timeout=TICK_S, return_when=FIRST_COMPLETED)
                for fut in finished:
                    cell = running.pop(fut)
                    per[cell.provider] -= 1
                    self._settle(cell, fut)
                    if self.on_settled is not None:
                        self.on_settled(self.state.runs[cell.run_id])
                self._live()
                if self.state.stopping is None and self._over():
                    self.state.stopping = f"cost cap reached: spent {self.state.spent:.4f} of --max-cost {self.max_cost:g}"
                    self.executor.stop(f"the batch's cost cap was reached (${self.state.spent:.4f} of "
                                       f"--max-cost ${self.max_cost:g}); resume re-runs it")
                if tick is not None:
                    tick(self.state)
        finally:
            self.executor.shutdown()
            self.state.finished = True
            self._reconcile()
            results.rebuild(self.dir, self.cells)
            if self.sealed:
                seal(self.dir, SEAL_KIND, skip=(results.RUNS,), appendable=(placement.LEDGER,))
            self.unlock()
        return 0 if all(r.status in (DONE, SKIPPED) for r in self.state.runs.values()) else 1

    def _launch(self, queues: dict[str, deque[Job]], running: dict[Future[Any], Job], per: dict[str, int]) -> None:
        progress = True
        while progress and len(running) < self.concurrency:
            progress = False
            for provider, q in queues.items():
                if not q or per.get(provider, 0) >= self.cap(provider) or len(running) >= self.concurrency:
                    continue
                cell = q[0]
                if not self._fits(cell):
                    self.state.stopping = (f"cost cap: spent {self.state.spent:.4f} + in flight "
                                           f"{self.in_flight():.4f} + next run {self._estimate(cell):.4f} would "
                                           f"pass --max-cost {self.max_cost:g}; no new runs")
                    return
                q.popleft()
                r = self.state.runs[cell.run_id]
                r.status, r.started = RUNNING, self.clock()
                running[self._executor().submit(cell)] = cell
                per[provider] = per.get(provider, 0) + 1
                progress = True

    def _executor(self) -> Executor:
        if self.executor is None:  # run() makes it before it launches anything
            raise RuntimeError("the batch has no executor before run()")
        return self.executor

    def _live(self) -> None:
        for run_id, p in self._executor().progress().items():
            r = self.state.runs.get(run_id)
            if r is not None and r.status == RUNNING:
                r.calls, r.cost_usd, r.rate_limit_waits = p.calls, p.cost_usd, p.rate_limit_waits
                r.turns = getattr(p, "turns", r.turns)
                r.last_error = p.last_error or r.last_error

    def _not_home(self, path: str | None, verdict: tuple[Any, ...] | None = None) -> str | None:
        """Why a run reported complete does not count (its recording is not in DIR/runs/, or not sound); None if it counts."""
        root = results.runs_dir(self.dir).resolve()
        if not path:
            return "its recording never reached the batch directory"
        p = Path(path)
        if p.parent.resolve() != root or not (p / MANIFEST).is_file():
            return f"its recording is not in {root} (it was written to {path})"
        if verdict is not None:  # checked in place by the process that wrote it, in this directory
            ok, line = verdict
            return None if ok else f"its recording fails verify --quick: {line}"
        try:
            rec = Recording(p)
            if not rec.complete:
                return f"its recording in {p} is not complete"
            ok, line = quick_verdict(rec)
        except RecordingError as e:
            return f"its recording cannot be read: {e}"
        return None if ok else f"its recording fails verify --quick: {line}"

    def _reconcile(self) -> None:
        """Every run counted done has its complete recording in DIR/runs/ now; any that does not is failed."""
        found = results.recordings_by_id(self.dir)
        for r in self.state.runs.values():
            if r.status not in (DONE, SKIPPED):
                continue
            entries = found.get(r.cell.run_id)
            if not entries or not entries[0].complete:
                r.status, r.last_error = FAILED, f"no complete recording in {results.runs_dir(self.dir)}"

    def _settle(self, cell: Job, fut: Future[Any]) -> None:
        r = self.state.runs[cell.run_id]
        self._executor().forget(cell.run_id)
        try:
            res = fut.result()
        except BaseException as e:  # a worker that died (BrokenProcessPool...)
            r.status, r.last_error = FAILED, f"{type(e).__name__}: {e}"
            return
        r.calls, r.cost_usd = res.calls, res.cost_usd
        self._settled_cost += r.cost_usd
        r.rate_limit_waits = res.rate_limit_waits or r.rate_limit_waits
        r.path = res.path
        r.score = res.score
        if res.driven:
            r.turns = res.turns
        if r.path:
            placement.note(self.dir, cell.run_id, r.path, self._executor().name, res.where or placement.here())
        missing = self._not_home(r.path, res.verdict) if res.complete else None
        if missing:
            r.status, r.last_error = FAILED, missing
        elif res.complete:
            r.status, r.last_error = DONE, None
        elif res.not_started:
            r.status = LEFT
        elif not res.error and "the batch" in (res.stopped or ""):
            r.status, r.last_error = STOPPED, res.stopped
        else:
            r.status, r.last_error = FAILED, res.last_error or res.stopped or "incomplete"


__all__ = ["Batch", "DAMAGED", "DUPLICATE", "INCOMPLETE"]
