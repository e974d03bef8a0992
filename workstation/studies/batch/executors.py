"""Where a batch's runs execute: ``local`` (threads and processes here) or ``ray`` (a Ray cluster).

Both take one run at a time (``submit(cell) -> Future`` of ``execute``'s ``RunResult``),
share one limiter per (provider, base URL, model) among the model runs, stop every
run at its next turn boundary on ``stop(reason)``, and report live progress of
model runs (calls, dollars) through ``progress()``.

``local``: model runs wait on the network, so they run a thread each, up to the
batch's concurrency: in this process when there are few (under ``PROCESS_FROM``, 96), else
spread over one worker process per core (``model_procs.ModelProcesses``), each with its
share of the limits, since a call's few milliseconds of CPU under one GIL cap a process
near 200 calls a second. CPU-bound runs (random, replay) run one process per core (a
``ProcessPoolExecutor``). Worker processes ignore Ctrl-C and watch a shared stop event
instead, so a stop ends their runs at a turn boundary too.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any

from workstation.base.errors import UserError
from workstation.engine.calls import CancelToken
from workstation.studies.batch.envpool import EnvPool
from workstation.studies.batch.execute import Hooks, RunResult, SharedClients, execute
from workstation.studies.batch.executor_base import CPU_STOP_REASON, Executor, cores, limiter_key
from workstation.studies.batch.jobs import Job
from workstation.studies.batch.model_procs import ModelProcesses, fewer_malloc_arenas, shares, warm

# -- local ---------------------------------------------------------------------------
_STOP: Any = None  # the stop event of a worker process
_WHY: Any = None  # and why (shared bytes)


def _worker_init(stop_event: Any, why: Any) -> None:
    global _STOP, _WHY
    _STOP, _WHY = stop_event, why
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the batch process decides; the stop event says
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _stop_reason() -> str | None:
    if not _STOP.is_set():
        return None
    return _WHY.value.decode("utf-8", "replace") or CPU_STOP_REASON


def _worker_run(spec_json: dict[str, Any], run_id: str) -> RunResult:
    return execute(spec_json, run_id, Hooks(should_stop=_stop_reason))


PROCESS_FROM = 96  # model runs at once from which they spread over one process per core (below, one process keeps up)
PROCESSES_ENV = "WORKSTATION_MODEL_PROCESSES"  # force that many model processes (0: none)


def model_processes(model_threads: int, n_cores: int) -> int:
    forced = os.environ.get(PROCESSES_ENV)
    if forced is not None and forced.strip().isdigit():
        return int(forced)
    return n_cores if n_cores > 1 and model_threads >= PROCESS_FROM else 0


def model_context() -> Any:
    """How model processes start: forked once the engine and the SDKs are imported here, so each starts
    in milliseconds instead of importing them again (seconds on a loaded machine, before any call goes
    out); spawned when this process already runs other threads (the TUI), which a fork must not copy."""
    if threading.active_count() > 1 or "fork" not in mp.get_all_start_methods():
        return mp.get_context("spawn")
    preimport()
    return mp.get_context("fork")


def preimport() -> None:
    try:
        from PIL import Image

        import workstation.run.drive
        import workstation.run.providers.agent
        import workstation.run.start
        import workstation.store.integrity  # noqa: F401

        Image.init()
        import openai
        import openai.types.chat  # noqa: F401
    except ImportError:
        pass


def _after(gate: threading.Event, run: Callable[..., RunResult], *args: Any) -> RunResult:
    gate.wait()
    return run(*args)


class _Cancel(CancelToken):
    """The executor's cancel token: cancelling it also cancels the model processes' runs."""

    def __init__(self) -> None:
        super().__init__()
        self.also: list[Callable[[str], None]] = []

    def cancel(self, reason: str = "stopped by the user") -> None:
        super().cancel(reason)
        for f in self.also:
            f(reason)


class LocalExecutor(Executor):
    name = "local"

    def __init__(self, model_threads: int, cpu_processes: int, caps: dict[tuple[Any, ...], int]) -> None:
        super().__init__()
        n_procs = model_processes(model_threads, cores())
        if model_threads > 4 and not n_procs:
            fewer_malloc_arenas()
        from workstation.run.providers.limiter import AdaptiveLimiter

        self._threads = ThreadPoolExecutor(max_workers=max(1, model_threads), thread_name_prefix="batch-run")
        self._cpu_n = max(1, cpu_processes)
        self._procs: ProcessPoolExecutor | None = None
        self._ctx = mp.get_context("spawn")
        self._stop_event = self._ctx.Event()
        self._why: Any = self._ctx.Array("c", 400)
        self.cancel = _Cancel()  # a second signal: end model runs now, even mid-call
        self.limiters = {key: AdaptiveLimiter(initial=n, minimum=1, maximum=n) for key, n in caps.items()}
        self.clients = SharedClients()
        self.envs = EnvPool()
        self._warmed: set[Any] = set()
        self.model_procs: ModelProcesses | None = None
        self.local_share = False  # this process plays a share of the model runs beside its workers
        self._local_load = 0
        self._gate = threading.Event()  # the runs of the burst being handed out wait for it
        self._share = 0  # model runs at once this process plays itself
        self._worker_caps: dict[tuple[Any, ...], int] = {}  # each worker's part of every limit (the smallest)
        self.ran_here = 0  # model runs this process played beside its workers
        if n_procs:
            ctx = model_context()
            parts = shares(caps, n_procs)
            # Forked (the CLI), this process plays one core's share itself: one worker process fewer
            # (~100 MB less memory) and no queue between it and those runs. Spawned (inside the TUI,
            # whose threads draw the screen), every share goes to a worker.
            self.local_share = n_procs > 1 and ctx.get_start_method() == "fork"
            if self.local_share:
                self.limiters = {key: AdaptiveLimiter(initial=n, minimum=1, maximum=n) for key, n in parts[0].items()}
                fewer_malloc_arenas()
                mine = self._share = -(-model_threads // n_procs)
                self._worker_caps = {key: min(p[key] for p in parts[1:]) for key in caps}
                self.model_procs = ModelProcesses(n_procs - 1, model_threads - mine, caps, ctx, self._stop_event,
                                                  self._why, self._on_progress, share_caps=parts[1:])
            else:
                self.model_procs = ModelProcesses(n_procs, model_threads, caps, ctx, self._stop_event,
                                                  self._why, self._on_progress)
            self.cancel.also.append(self.model_procs.cancel)

    def stop(self, reason: str) -> None:
        super().stop(reason)
        if not self._stop_event.is_set():
            self._why.value = (self._stop_reason or reason).encode("utf-8")[:399]
            self._stop_event.set()

    def submit(self, cell: Job) -> Future[Any]:
        spec = cell.spec.to_json()
        if not cell.is_model:
            if self._procs is None:
                self._procs = ProcessPoolExecutor(max_workers=self._cpu_n, mp_context=self._ctx,
                                                  initializer=_worker_init, initargs=(self._stop_event, self._why))
            return self._procs.submit(_worker_run, spec, cell.run_id)
        if self.model_procs is not None and not self._here_next(limiter_key(cell)):
            return self.model_procs.submit(spec, cell.run_id, limiter_key(cell))
        self._warm(cell)
        hooks = Hooks(should_stop=self.should_stop, on_progress=self._on_progress,
                      limiter=self.limiters.get(limiter_key(cell)), cancel=self.cancel, clients=self.clients,
                      envs=self.envs)
        with self._lock:
            self._local_load += 1
            self.ran_here += 1
            gate = self._gate
        fut = self._threads.submit(_after, gate, execute, spec, cell.run_id, hooks)
        fut.add_done_callback(self._local_done)
        return fut

    def launched(self) -> None:
        """Open the gate of the runs handed out since the last burst. A run started at once takes this
        process's GIL while the batch is still handing out the rest: 128 runs took ~2.8 s to hand
        out, each submit waiting for the GIL among the runs already started; gated, they start together."""
        with self._lock:
            gate, self._gate = self._gate, threading.Event()
        gate.set()

    def _here_next(self, key: tuple[Any, ...]) -> bool:
        """Whether the next model run plays in this process. The workers' shares fill first: a run
        started here takes this process's GIL at once, which slowed the hand-out of the rest (256
        runs took 2.5 s to hand out when they alternated); then this process's share; then the least
        loaded. A share is as many runs as its threads and its part of the provider's limit allow."""
        if not self.local_share or self.model_procs is None:
            return False
        least = min(self.model_procs.load)
        if least < min(self.model_procs.threads_each, self._worker_caps.get(key, 1)):
            return False
        limiter = self.limiters.get(key)
        if self._local_load < min(self._share, limiter.maximum if limiter is not None else 1):
            return True
        return self._local_load <= least

    def _local_done(self, _fut: Future[Any]) -> None:
        with self._lock:
            self._local_load -= 1

    def _warm(self, cell: Job) -> None:
        kind = limiter_key(cell)
        if kind not in self._warmed:
            self._warmed.add(kind)
            warm(cell.spec.to_json(), self.limiters.get(kind), self.clients, self.envs)

    def shutdown(self) -> None:
        if self.model_procs is not None:
            self.model_procs.shutdown()
        self._threads.shutdown(wait=True)
        self.clients.close()
        self.envs.close()
        if self._procs is not None:
            self._procs.shutdown(wait=True)


def make_executor(kind: str, model_threads: int, cpu_processes: int, caps: dict[tuple[Any, ...], int],
                  ray_address: str | None = None, max_cost: float | None = None,
                  per_call: dict[str, float] | None = None) -> Executor:
    if kind == "local":
        if ray_address:
            raise UserError("--ray-address needs --executor ray")
        return LocalExecutor(model_threads, cpu_processes, caps)
    if kind == "ray":
        from workstation.studies.batch.ray_executor import RayExecutor

        return RayExecutor(caps, address=ray_address, max_cost=max_cost, per_call=per_call)
    raise UserError(f"--executor must be local or ray (got {kind!r})")


__all__ = ["Executor", "LocalExecutor", "cores", "limiter_key", "make_executor"]
