"""Where a batch's runs execute: ``local`` (threads and processes here) or ``ray`` (a Ray cluster).

Both take one run at a time (``submit(cell) -> Future`` of ``execute``'s result dict),
share one limiter per (provider, base URL, model) among the model runs, stop every
run at its next turn boundary on ``stop(reason)``, and report live progress of
model runs (calls, dollars) through ``progress()``.

``local``: model runs wait on the network, so they share this process (a thread
each, up to the batch's concurrency); CPU-bound runs (random, replay) run one
process per core (a ``ProcessPoolExecutor``), each process ignoring Ctrl-C and
watching a shared stop event instead, so a stop ends them at a turn boundary too.
"""

from __future__ import annotations

import multiprocessing as mp
import signal
import threading
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any

from workstation.batch.envpool import EnvPool
from workstation.batch.executor_base import CPU_STOP_REASON, Executor, cores, limiter_key
from workstation.batch.execute import Hooks, SharedClients, execute
from workstation.batch.jobs import Job as Cell
from workstation.calls import CancelToken
from workstation.errors import UserError

# -- local ---------------------------------------------------------------------------
_STOP: Any = None  # the stop event of a worker process
_WHY: Any = None  # and why (shared bytes)


def _worker_init(stop_event, why) -> None:
    global _STOP, _WHY
    _STOP, _WHY = stop_event, why
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the batch process decides; the stop event says
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _stop_reason() -> str | None:
    if not _STOP.is_set():
        return None
    return _WHY.value.decode("utf-8", "replace") or CPU_STOP_REASON


def _worker_run(spec_json: dict, run_id: str) -> dict:
    return execute(spec_json, run_id, Hooks(should_stop=_stop_reason))


def fewer_malloc_arenas(n: int = 2) -> None:
    """glibc gives each thread of a busy process its own malloc arena (up to 8 a core), which
    holds on to freed memory; sixty-four run threads then cost ~100 MB more resident memory
    than they use. Cap the arenas (Linux glibc only; elsewhere nothing happens)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").mallopt(-8, n)  # M_ARENA_MAX
    except (OSError, AttributeError):
        pass


class LocalExecutor(Executor):
    name = "local"

    def __init__(self, model_threads: int, cpu_processes: int, caps: dict[tuple, int]) -> None:
        super().__init__()
        if model_threads > 4:
            fewer_malloc_arenas()
        from workstation.providers.limiter import AdaptiveLimiter

        self._threads = ThreadPoolExecutor(max_workers=max(1, model_threads), thread_name_prefix="batch-run")
        self._cpu_n = max(1, cpu_processes)
        self._procs: ProcessPoolExecutor | None = None
        self._ctx = mp.get_context("spawn")
        self._stop_event = self._ctx.Event()
        self._why = self._ctx.Array("c", 400)
        self.cancel = CancelToken()  # a second signal: end model runs now, even mid-call
        self.limiters = {key: AdaptiveLimiter(initial=n, minimum=1, maximum=n) for key, n in caps.items()}
        self.clients = SharedClients()
        self.envs = EnvPool()
        self._warmed: set = set()

    def stop(self, reason: str) -> None:
        super().stop(reason)
        if not self._stop_event.is_set():
            self._why.value = self._stop_reason.encode("utf-8")[:399]
            self._stop_event.set()

    def submit(self, cell: Cell) -> Future:
        spec = cell.spec.to_json()
        if not cell.is_model:
            if self._procs is None:
                self._procs = ProcessPoolExecutor(max_workers=self._cpu_n, mp_context=self._ctx,
                                                  initializer=_worker_init, initargs=(self._stop_event, self._why))
            return self._procs.submit(_worker_run, spec, cell.run_id)
        self._warm(cell)
        hooks = Hooks(should_stop=self.should_stop, on_progress=self._on_progress,
                      limiter=self.limiters.get(limiter_key(cell)), cancel=self.cancel, clients=self.clients,
                      envs=self.envs)
        return self._threads.submit(execute, spec, cell.run_id, hooks)

    def _warm(self, cell: Cell) -> None:
        """Before the first model run of a provider starts, do here what its thread would do lazily:
        import the engine, the emulator, PIL's image plugins and the SDK (an SDK's first call imports
        hundreds of modules). Done by the first of sixty-four threads, each import waits its turn for
        the GIL among the others, and every run waits for that import (its module lock): the first
        calls went out ~8 s after the start. Errors are left for the run to report."""
        kind = limiter_key(cell)
        if kind in self._warmed:
            return
        self._warmed.add(kind)
        try:
            from PIL import Image

            import workstation.runs.drive  # noqa: F401 - the engine, recorder, prompt builder
            import workstation.runs.start  # noqa: F401
            from workstation.batch.execute import make_agent_with
            from workstation.game.games import get_game
            from workstation.options import RunSpec

            Image.init()
            spec = RunSpec.from_json(cell.spec.to_json())
            self.envs.prefill(get_game(spec.game), spec.protocol)
            agent = make_agent_with(spec, self.limiters.get(kind), self.clients)
            client = getattr(agent.adapter, "client", None)  # the shared one, made by make_agent_with
            for path in ("chat.completions", "responses", "messages", "models"):  # the SDKs' lazy resources
                obj = client
                for name in path.split("."):
                    obj = getattr(obj, name, None)
        except Exception:  # noqa: BLE001 - only a head start; the run itself reports what is wrong
            pass

    def shutdown(self) -> None:
        self._threads.shutdown(wait=True)
        self.clients.close()
        self.envs.close()
        if self._procs is not None:
            self._procs.shutdown(wait=True)


def make_executor(kind: str, model_threads: int, cpu_processes: int, caps: dict[tuple, int],
                  ray_address: str | None = None, max_cost: float | None = None,
                  per_call: dict[str, float] | None = None) -> Executor:
    if kind == "local":
        if ray_address:
            raise UserError("--ray-address needs --executor ray")
        return LocalExecutor(model_threads, cpu_processes, caps)
    if kind == "ray":
        from workstation.batch.ray_executor import RayExecutor

        return RayExecutor(caps, address=ray_address, max_cost=max_cost, per_call=per_call)
    raise UserError(f"--executor must be local or ray (got {kind!r})")


__all__ = ["Executor", "LocalExecutor", "cores", "limiter_key", "make_executor"]
