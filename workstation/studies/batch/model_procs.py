"""Model runs in one process per core: each a thread per run, its share of the batch's limit, its own clients and emulators.

A model run spends a second waiting for each call and ~5 ms of CPU around it (prompt, SDK
request, parse, frames, recording: bench/call_profile.py); in one process the GIL caps a
batch near 1 / 5 ms = 200 calls a second whatever the concurrency. With ``ModelProcesses``
the batch process hands each model run to the least loaded of N worker processes (spawned,
ignoring Ctrl-C like the CPU workers), which runs it in a thread with:

- its share of every provider limit: ``n // N`` slots (the remainder to the first ones), so
  the N processes together never hold more than the grid's ``[limits]`` (one limit across
  processes; each share halves on a 429 and grows back, as one ``AdaptiveLimiter`` does);
- one SDK client per endpoint and a few emulators per game for all its runs (``SharedClients``,
  ``EnvPool``), warmed before its first run of each provider starts.

Runs report their calls and spend back (a queue) for the live view and the cost guard; the
batch's stop event ends them at their next turn boundary, a cancel event mid-call. A worker
that dies fails its runs (resume re-runs them).
"""

from __future__ import annotations

import itertools
import queue
import signal
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from workstation.engine.calls import CancelToken
from workstation.studies.batch.envpool import EnvPool
from workstation.studies.batch.execute import Hooks, Progress, SharedClients, execute

STOPPED_DEFAULT = "the batch stopped (interrupted); resume re-runs it"


def fewer_malloc_arenas(n: int = 2) -> None:
    """glibc gives each thread of a busy process its own malloc arena (up to 8 a core), which
    holds on to freed memory; sixty-four run threads then cost ~100 MB more resident memory
    than they use. Cap the arenas (Linux glibc only; elsewhere nothing happens)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").mallopt(-8, n)  # M_ARENA_MAX
    except (OSError, AttributeError):
        pass


def warm(spec_json: dict[str, Any], limiter: Any, clients: SharedClients, envs: EnvPool) -> None:
    """Before the first model run of a provider starts, do here what its thread would do lazily:
    import the engine, the emulator, PIL's image plugins and the SDK (an SDK's first call imports
    hundreds of modules). Done by the first of sixty-four threads, each import waits its turn for
    the GIL among the others, and every run waits for that import (its module lock): the first
    calls went out ~8 s after the start. Errors are left for the run to report."""
    try:
        from PIL import Image

        import workstation.run.drive  # the engine, recorder, prompt builder
        import workstation.run.start  # noqa: F401
        from workstation.game.games import get_game
        from workstation.run.options import RunSpec
        from workstation.studies.batch.execute import make_agent_with

        Image.init()
        spec = RunSpec.from_json(spec_json)
        envs.prefill(get_game(spec.game), spec.protocol)
        agent = make_agent_with(spec, limiter, clients)
        client = getattr(agent.adapter, "client", None)  # the shared one, made by make_agent_with
        for path in ("chat.completions", "responses", "messages", "models"):  # the SDKs' lazy resources
            obj = client
            for name in path.split("."):
                obj = getattr(obj, name, None)
    except Exception:  # only a head start; the run itself reports what is wrong
        pass


def shares(caps: dict[tuple[Any, ...], int], n: int) -> list[dict[tuple[Any, ...], int]]:
    """Each of ``n`` processes' slots of every limit: together exactly the limit, at least one each."""
    return [{k: max(1, cap // n + (1 if i < cap % n else 0)) for k, cap in caps.items()} for i in range(n)]


PROGRESS_EVERY_S = 0.1


class ProgressRelay:
    """A worker's runs' progress, sent to the batch process every ``PROGRESS_EVERY_S`` as one message.

    One message per call and turn of every run (thousands a second at 256 runs) cost ~5 % of the
    batch's CPU in pickling and queue feeding; the batch shows and guards the latest totals only.
    A run's last progress goes just before its result, in order."""

    def __init__(self, outbox: Any, every_s: float = PROGRESS_EVERY_S) -> None:
        self.outbox, self.every_s = outbox, every_s
        self._latest: dict[int, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._closed = threading.Event()
        threading.Thread(target=self._flush_every, name="batch-progress", daemon=True).start()

    def note(self, tag: int, progress: dict[str, Any]) -> None:
        with self._lock:
            self._latest[tag] = progress

    def finish(self, tag: int, result) -> None:  # type: ignore[no-untyped-def]
        with self._lock:
            last = self._latest.pop(tag, None)
            if last is not None:
                self.outbox.put(("progress", tag, last))
            self.outbox.put(("result", tag, result))

    def flush(self) -> None:
        with self._lock:
            latest, self._latest = self._latest, {}
            if latest:
                self.outbox.put(("progress_many", 0, list(latest.items())))

    def _flush_every(self) -> None:
        while not self._closed.wait(self.every_s):
            self.flush()

    def close(self) -> None:
        self._closed.set()
        self.flush()


def _serve(inbox: Any, outbox: Any, stop_event: Any, why: Any, cancel_event: Any, cancel_why: Any,
           caps: dict[tuple[Any, ...], int], threads: int) -> None:
    """A worker process: run each (token, spec, run id, limiter key) it is sent in a thread, until None."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the batch process decides; the events say
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if threads > 4:
        fewer_malloc_arenas()
    from workstation.run.providers.limiter import AdaptiveLimiter

    limiters = {k: AdaptiveLimiter(initial=n, minimum=1, maximum=n) for k, n in caps.items()}
    clients, envs, token = SharedClients(), EnvPool(), CancelToken()
    pool = ThreadPoolExecutor(max_workers=max(1, threads), thread_name_prefix="batch-run")

    def relay_cancel() -> None:
        cancel_event.wait()
        token.cancel(cancel_why.value.decode("utf-8", "replace") or STOPPED_DEFAULT)

    threading.Thread(target=relay_cancel, daemon=True).start()

    def should_stop() -> str | None:
        if not stop_event.is_set():
            return None
        return why.value.decode("utf-8", "replace") or STOPPED_DEFAULT

    relay = ProgressRelay(outbox)
    warmed: set[Any] = set()
    while True:
        msg = inbox.get()
        if msg is None:
            break
        tag, spec, run_id, key = msg
        if key not in warmed:
            warmed.add(key)
            warm(spec, limiters.get(key), clients, envs)
        seen: dict[str, Any] = {}

        def on_progress(p: Progress, seen: dict[str, Any] = seen, tag: int = tag) -> None:
            mark = (p.calls, p.turns, p.last_error)
            if mark != seen.get("mark"):
                seen["mark"] = mark
                relay.note(tag, vars(p).copy())

        def done(f: Future[Any], tag: int = tag) -> None:
            e = f.exception()
            relay.finish(tag, f.result() if e is None else e)

        hooks = Hooks(should_stop=should_stop, on_progress=on_progress, limiter=limiters.get(key), cancel=token,
                      clients=clients, envs=envs)
        pool.submit(execute, spec, run_id, hooks).add_done_callback(done)
    pool.shutdown(wait=True)
    relay.close()
    clients.close()
    envs.close()


class ModelProcesses:
    """The batch process's side: ``submit`` a model run, get a Future of its result."""

    def __init__(self, n: int, threads: int, caps: dict[tuple[Any, ...], int], ctx: Any, stop_event: Any, why: Any,
                 on_progress: Callable[[Progress], None], share_caps: list[dict[tuple[Any, ...], int]] | None = None) -> None:
        self.on_progress = on_progress
        self.cancel_event, self.cancel_why = ctx.Event(), ctx.Array("c", 400)
        self.outbox = ctx.Queue()
        self.inboxes = [ctx.Queue() for _ in range(n)]
        each = self.threads_each = max(1, -(-threads // n))
        self.procs = [ctx.Process(target=_serve, args=(q, self.outbox, stop_event, why, self.cancel_event,
                                                       self.cancel_why, share, each), daemon=True,
                                  name=f"batch-model-{i}")
                      for i, (q, share) in enumerate(zip(self.inboxes, share_caps or shares(caps, n)))]
        for p in self.procs:
            p.start()
        self.load = [0] * n
        self.pending: dict[int, tuple[Future[Any], int]] = {}
        self._tags = itertools.count()
        self._lock = threading.Lock()
        self._closing = False
        self._reader = threading.Thread(target=self._read, name="batch-model-results", daemon=True)
        self._reader.start()

    def submit(self, spec: dict[str, Any], run_id: str, key: Any) -> Future[Any]:
        fut: Future[Any] = Future()
        with self._lock:
            i = min(range(len(self.load)), key=self.load.__getitem__)
            tag = next(self._tags)
            self.load[i] += 1
            self.pending[tag] = (fut, i)
        self.inboxes[i].put((tag, spec, run_id, key))
        return fut

    def cancel(self, reason: str) -> None:
        if not self.cancel_event.is_set():
            self.cancel_why.value = reason.encode("utf-8")[:399]
            self.cancel_event.set()

    def _read(self) -> None:
        while True:
            try:
                msg = self.outbox.get(timeout=0.5)
            except queue.Empty:
                self._check_alive()
                if self._closing and not self.pending:
                    return
                continue
            except (EOFError, OSError):
                return
            kind, tag = msg[0], msg[1]
            if kind == "progress":
                self.on_progress(Progress(**msg[2]))
                continue
            if kind == "progress_many":
                for _, p in msg[2]:
                    self.on_progress(Progress(**p))
                continue
            with self._lock:
                fut, i = self.pending.pop(tag, (None, 0))
                if fut is not None:
                    self.load[i] -= 1
            if fut is None:
                continue
            if isinstance(msg[2], BaseException):
                fut.set_exception(msg[2])
            else:
                fut.set_result(msg[2])

    def _check_alive(self) -> None:
        for i, p in enumerate(self.procs):
            if p.exitcode is not None and (p.exitcode != 0 or not self._closing):
                with self._lock:
                    lost = [(t, f) for t, (f, j) in self.pending.items() if j == i]
                    for t, _ in lost:
                        self.pending.pop(t)
                for _, f in lost:
                    f.set_exception(RuntimeError(f"its worker process died (exit {p.exitcode})"))

    def shutdown(self) -> None:
        self._closing = True
        for q in self.inboxes:
            q.put(None)
        for p in self.procs:
            p.join()
        self._reader.join(timeout=5)


__all__ = ["ModelProcesses", "ProgressRelay", "fewer_malloc_arenas", "shares", "warm"]
