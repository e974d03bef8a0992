"""``workstation batch GRID.toml``: run a grid unattended, resumable, under a cost cap."""

from __future__ import annotations

import argparse
import signal
import sys
import tomllib
from pathlib import Path
from typing import Any

from workstation.base.errors import UserError
from workstation.base.locations import BATCHES


def register(sub: Any) -> None:
    b = sub.add_parser("batch", help="run a grid of games x settings x seeds unattended (resumable)",
                       description="Run every cell of a grid (TOML) and record each run under DIR/runs/, named by "
                       "run id; DIR/results.csv and results.jsonl are rebuilt from the recordings. Running the same "
                       "command again skips complete runs and re-runs incomplete ones from the start. Exit 0 only "
                       "when every run completed.")
    b.add_argument("grid", metavar="GRID.toml", help="the grid: name, games, seeds, [[settings]], [protocol], [limits]")
    b.add_argument("--out", metavar="DIR", help=f"the batch directory (default {BATCHES}/<name>/, or, for a "
                   "batch's own DIR/grid.toml, DIR: it resumes that batch), or a URI (s3://bucket/prefix, gs://..., "
                   "through fsspec: the object-store extra) the batch is uploaded to")
    b.add_argument("--concurrency", type=int, default=8, metavar="N",
                   help="runs at once in all (default 8); [limits] caps each provider, CPU-bound runs one per core")
    b.add_argument("--max-cost", type=float, metavar="USD", help="stop launching runs when the spend plus the "
                   "in-flight estimate would pass this; end running ones at their next turn once it is reached")
    b.add_argument("--dry-run", action="store_true", help="print the plan (runs, done, calls, tokens, $) and exit")
    b.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="local: threads for model runs, a process per core for CPU-bound ones; ray: a Ray cluster")
    b.add_argument("--ray-address", metavar="ADDR", help="the Ray cluster (default: start a local one)")
    b.add_argument("--watch", action="store_true", help="watch the batch in the TUI")
    b.add_argument("--plain", action="store_true", help="a progress line every few seconds (what a log gets)")
    b.add_argument("--every", type=float, default=5.0, metavar="S", help="seconds between progress lines (default 5)")
    b.set_defaults(func=run, quick_exit=True)  # see workstation.cli.quick_exit


def grid_name(path: str) -> str | None:
    try:
        name = tomllib.loads(Path(path).read_text(encoding="utf-8")).get("name")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    return name if isinstance(name, str) else None


def check_keys(grid: Any, cells: list[Any]) -> None:
    """Every model setting's key is in the environment (read, never shown), before anything runs."""
    from workstation.run.providers import ProviderConfigError
    from workstation.run.providers.spec import api_key
    from workstation.studies.batch.jobs import line_of

    seen = set()
    for c in cells:
        if c.is_model and c.provider not in seen:
            seen.add(c.provider)
            try:
                api_key(c.provider)
            except ProviderConfigError as e:
                n = [s.label for s in grid.settings].index(c.setting)
                raise UserError(f"{grid.source}{line_of(grid, ('settings', n, 'spec'))}: settings[{n}].spec: {e}") \
                    from None


def batch_inputs(grid_path: str, grid: Any) -> list[str]:
    """What a batch reads: its grid file, and each setting's replayed recording (and prompt pack, if any)."""
    from workstation.studies.batch.jobs import jobs_of

    found = {grid_path}
    for cell in jobs_of(grid):
        if cell.spec.prompts:
            found.add(str(cell.spec.prompts))
        ref = cell.spec.agent_ref
        if ref.kind == "replay" and ref.arg:
            found.add(str(ref.arg))
    return sorted(found)


def make_batch(a: argparse.Namespace) -> Any:
    from workstation.run.options import check_out
    from workstation.studies.batch.grid import load_grid
    from workstation.studies.batch.remote_out import out_dir
    from workstation.studies.batch.results import runs_dir
    from workstation.studies.batch.runner import Batch

    name = grid_name(a.grid) or "batch"
    if a.executor != "ray" and a.ray_address:
        raise UserError("--ray-address needs --executor ray")
    from workstation.store.local_paths import refuse_uri

    refuse_uri(a.grid, "", "batch reads a local grid file (--out may be a URI)")
    if a.ray_address:
        from workstation.studies.batch.ray_address import check_ray_address

        check_ray_address(a.ray_address)  # before anything is written; a head not there does not hang the batch
    grid = load_grid(a.grid)  # bad grids are refused before a URI is reached
    if not a.out:  # a batch's own grid.toml resumes that batch (--out names another directory)
        from workstation.studies.batch.resume import own_batch_dir

        own = own_batch_dir(a.grid)
        if own is not None:
            a.out = str(own)
            print(f"{a.grid} is the grid of the batch in {own}: resuming it there (--out DIR puts the batch "
                  "elsewhere)", flush=True)
    out, a.remote = out_dir(a.out, Path(BATCHES) / name)  # a URI: its local stage, the URI's grid brought down
    grid = load_grid(a.grid, out=str(runs_dir(out)))
    try:
        check_out(out)
    except UserError as e:
        raise UserError(str(e)) from None
    if a.remote is None:  # the batch is never written inside what it reads: its grid, a replayed recording
        from workstation.store.local_paths import refuse_inside_artifacts, refuse_inside_inputs

        refuse_inside_inputs(out, batch_inputs(a.grid, grid), "--out", "the batch")
        from workstation.studies.batch.runner import SEAL_KIND

        refuse_inside_artifacts(out, "--out", "the batch", own=SEAL_KIND)  # its own directory resumes
    from workstation.studies.batch.resume import check_batch_dir

    try:
        check_batch_dir(out, grid)  # another grid's batch, or a file where one should be: refused, nothing written
    except UserError as e:
        if a.remote is None:
            raise
        raise UserError(str(e).replace(str(out), a.remote.uri)) from None  # the URI holds it, not the stage
    if a.executor == "ray" and not getattr(a, "dry_run", False):
        from workstation.studies.batch.ray_executor import connect

        connect(a.ray_address)  # a cluster that is not there is one line, and no batch directory is made
    if a.remote is not None:
        n = a.remote.pull()  # the recordings the URI holds, so resume skips their runs
        if n:
            print(f"brought down {n} recording{'s' if n != 1 else ''} from {a.remote.shown('runs')} to "
                  f"{out}", flush=True)
    return Batch(grid, out, concurrency=a.concurrency, max_cost=a.max_cost, executor=a.executor,
                 ray_address=a.ray_address, sealed=a.remote is None)


def _note_changed(batch: Any) -> None:
    n = len(batch.changed_by_hand)
    if n:
        print(f"{n} recording{'s' if n != 1 else ''} in {batch.dir}/runs/ changed by hand: not counted as any "
              "cell's run (each has a run id of its own)", flush=True)


def run(a: argparse.Namespace) -> int:
    if a.every <= 0:
        raise UserError(f"--every must be more than 0 seconds (got {a.every:g})")
    try:
        return _run(a)
    finally:
        if getattr(a, "remote", None) is not None:
            a.remote.close()


def _run(a: argparse.Namespace) -> int:
    from workstation.studies.batch.plan import plan_text
    from workstation.studies.batch.progress import PlainLog

    a.remote = None
    batch = make_batch(a)
    if a.dry_run:
        batch.prepare(dry_run=True)
        print(plan_text(batch))
        _note_changed(batch)
        return 0
    check_keys(batch.grid, batch.cells)
    if a.executor == "ray":
        from workstation.studies.batch.ray_executor import check_ray

        check_ray()
    batch.prepare()
    for path, why in batch.damaged:  # a recording edited since it was written: kept whole, never counted
        print(f"set aside a damaged recording {path}: {why}; kept under {batch.dir}/runs/.damaged/, its run is "
              "played again", flush=True)
        if a.remote is not None:
            a.remote.forget(Path(path).name)  # the URI's copy is replaced by the run played again
    uploads = None
    if a.remote is not None:
        from workstation.studies.batch.remote_out import Uploads

        uploads = Uploads(a.remote, batch.cells)
        uploads.start(batch)
    _note_changed(batch)
    if batch.set_aside:
        print(f"set aside {len(batch.set_aside)} partial recording(s) under {batch.dir}/runs/.incomplete/ "
              "(re-run from the start)", flush=True)
    watch = a.watch and not a.plain and sys.stdout.isatty()
    if a.watch and not watch:
        sys.stderr.write("workstation: --watch needs a terminal; writing progress lines instead\n")
    log = PlainLog(sys.stdout, every_s=a.every)
    previous = {}

    def on_signal(signum: int, frame: Any) -> None:
        batch.request_stop(signal.Signals(signum).name)

    for sig in (signal.SIGINT, signal.SIGTERM):
        previous[sig] = signal.signal(sig, on_signal)
    try:
        if watch:
            from workstation.run.launch import BatchLaunch
            from workstation.studies.batch.progress import DONE, SKIPPED

            code = a.open_tui(BatchLaunch(batch))  # the screen stops the batch cleanly when it closes
            if code == 0 and any(r.status not in (DONE, SKIPPED) for r in batch.state.runs.values()):
                code = 1  # left another way (ctrl+q) before every run was complete
        else:
            code = batch.run(tick=log.tick)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    while getattr(batch, "successor", None) is not None:  # resumed in the screen: the last pass is the state
        batch = batch.successor
    log.final(batch.state)
    if uploads is not None:
        return _uploaded(a.remote, uploads, code)
    print(f"results: {batch.dir / 'results.csv'} ({batch.dir / 'results.jsonl'})")
    return int(code)


def _uploaded(remote: Any, uploads: Any, code: int) -> int:
    n, why = uploads.finish()
    print(f"uploaded {n} recording{'s' if n != 1 else ''} to {remote.shown('runs')} "
          f"({len(remote.marked)} there in all; local stage {remote.stage})", flush=True)
    if why:
        print(f"not everything reached {remote.uri}: {why}; it is kept in {remote.stage}: run the same command "
              "again to upload it", flush=True)
        return code or 1
    print(f"results: {remote.shown('results.csv')} ({remote.shown('results.jsonl')})")
    return code


__all__ = ["register", "run"]
