"""One run of a batch, the same under every executor: start it, drive it, report, stop at a turn boundary.

``execute`` makes the run with ``start_run`` (recording under the spec's ``out``,
named by its run id) and drives it with the one drive loop
(``workstation.run.drive.drive``). After each step it reports the run's totals and,
at every turn boundary, asks ``should_stop``: a reason ends the run there (its
recording closed as stopped, saying why), so a batch that stops (a signal, the cost
cap) leaves no turn half done. A model run uses the limiter it is given, shared by
every run of the batch against that provider and model.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workstation.engine.calls import CancelToken

if TYPE_CHECKING:
    pass


@dataclass
class Progress:
    """What a running run has done so far (sent to the batch after every step)."""

    run_id: str
    calls: int = 0
    cost_usd: float = 0.0
    rate_limit_waits: int = 0
    turns: int = 0
    frames: int = 0
    last_error: str | None = None


@dataclass
class Hooks:
    should_stop: Callable[[], str | None] = lambda: None  # checked at every turn boundary
    on_progress: Callable[[Progress], None] | None = None
    limiter: Any = None  # an AdaptiveLimiter-like object (slot/acquire/release) for model runs
    cancel: CancelToken | None = None  # cancelled: end the run now, even mid-call
    clients: SharedClients | None = None  # SDK clients shared by the runs of this process
    envs: Any = None  # an EnvPool (workstation.studies.batch.envpool): emulators shared by the model runs of this process


RUNS_PER_CLIENT = 16  # runs that share one SDK client (one connection pool) in a process
MAX_CLIENTS = 16  # clients per endpoint and process at most (runs beyond share them round-robin)


class SharedClients:
    """SDK clients per (adapter, key, base URL, timeout) for the runs of a batch in this process: one per
    ``RUNS_PER_CLIENT`` runs, in the order they start, at most ``MAX_CLIENTS``.

    An SDK client (its connection pool and TLS context) is about 1 MB, so sixty-four runs need not
    make sixty-four. But one pool for all of them costs at a hundred-odd calls in flight: httpx's pool
    looks at every connection it holds for each request (~8 % of a C = 256 batch's CPU went there,
    and to the pool's lock), and the SDK keeps at most 100 connections alive, so past 100 runs a
    client would close and reopen connections. Sixteen runs a pool keep both small. Thread-safe;
    ``close()`` at the end.
    """

    def __init__(self) -> None:
        self._clients: dict[tuple[Any, ...], Any] = {}
        self._attached: dict[tuple[Any, ...], int] = {}
        self._lock = threading.Lock()

    def attach(self, adapter: Any, key: str) -> None:
        """Give ``adapter`` its shared client (made on first use); its own open/close become no-ops."""
        opts = adapter.options
        ident = (type(adapter).__name__, key, opts.base_url, opts.timeout)
        with self._lock:
            n = self._attached.get(ident, 0)
            self._attached[ident] = n + 1
            slot = (*ident, (n // RUNS_PER_CLIENT) % MAX_CLIENTS)
            client = self._clients.get(slot)
            if client is None:
                adapter.open(key)
                client = self._clients[slot] = adapter.client
        adapter.client = client
        adapter.open = lambda _key: None  # the agent calls open(); the client is already there
        adapter.close = lambda: None  # shared: closed once, by close()

    def close(self) -> None:
        with self._lock:
            clients, self._clients = list(self._clients.values()), {}
        for c in clients:
            try:
                c.close()
            except Exception:  # closing is best effort
                pass


def make_agent_with(spec: Any, limiter: Any, clients: SharedClients | None = None) -> Any:
    """The provider agent of a model spec, under ``limiter`` (the batch's, not the process default)."""
    from workstation.run.providers.agent import ProviderAgent, make_adapter
    from workstation.run.providers.spec import api_key

    adapter = make_adapter(spec.agent, spec.provider_options)
    key = api_key(adapter.provider)
    if clients is not None:
        clients.attach(adapter, key)
    return ProviderAgent(spec.agent, adapter, key, limiter=limiter)


BATCH_FRAME_CACHE = 4  # decoded frames kept per run (the writer keeps 64 for the TUI's scrubbing)
BATCH_PNG_CACHE = 32  # encoded prompt images kept per run (the writer keeps 512)


def lean(engine: Any) -> None:
    """Smaller read-back caches for a headless batch run: a batch holds dozens of runs at once, and
    the writer's defaults (64 frames, 512 PNGs: 2-4 MB a run) suit one run watched in the TUI.
    Prompts need only the last few frames; anything older decodes from disk."""
    frames = getattr(engine.writer, "frames", None)
    if frames is not None:
        frames.limit_caches(BATCH_FRAME_CACHE, BATCH_PNG_CACHE)


def verdict(path: str) -> tuple[bool, str]:
    """``verify --quick`` of a finished recording, where the run ran (a worker process checks its own runs
    in parallel, instead of the batch's one thread checking them all)."""
    from workstation.store.integrity import quick_verdict
    from workstation.store.recording import Recording
    from workstation.store.records import RecordingError

    try:
        return quick_verdict(Recording(path))
    except RecordingError as e:
        return False, f"DAMAGED: {e}"


@dataclass
class RunResult:
    """What one run of a batch came to, under every executor (picklable: it crosses processes and Ray)."""

    run_id: str
    path: str | None = None  # its recording (on the driver: where it landed)
    complete: bool = False
    stopped: str | None = None  # why it stopped, if it did
    calls: int = 0
    cost_usd: float = 0.0
    score: float | None = None  # the summary's total reward; None without a summary
    turns: int | None = None  # None without a summary
    driven: bool = False  # driven to its end (a summary or none); otherwise the batch keeps what progress said
    error: str | None = None  # the exception that ended it, in one line
    last_error: str | None = None  # what to show: the error, a provider's last error, or why it stopped
    wall_s: float = 0.0
    rate_limit_waits: int = 0
    not_started: bool = False  # the batch was stopping before it began
    verdict: tuple[bool, str] | None = None  # verify --quick where it ran: (ok, line)
    where: dict[str, str] | None = None  # the node and process that played it (Ray)
    bundle: bytes | None = None  # its recording packed, on the way home from a Ray node


def execute(spec_json: dict[str, Any], run_id: str, hooks: Hooks | None = None) -> RunResult:
    """Run one cell; returns its ``RunResult``."""
    from workstation.engine.turn_engine import Phase
    from workstation.game.clock import ENV_SOURCE
    from workstation.run.drive import drive
    from workstation.run.options import RunSpec
    from workstation.run.start import start_run
    from workstation.studies.batch.envpool import Lender

    hooks = hooks or Hooks()
    t0 = time.monotonic()
    result = RunResult(run_id)
    reason = hooks.should_stop()
    if reason:
        result.stopped, result.not_started = reason, True
        return result
    engine = None
    progress = Progress(run_id)
    lender = Lender(hooks.envs) if hooks.envs is not None else None
    token = ENV_SOURCE.set(lender) if lender is not None else None
    try:
        spec = RunSpec.from_json(spec_json)
        agent = make_agent_with(spec, hooks.limiter, hooks.clients) if hooks.limiter is not None and spec.agent_ref.is_model else None
        engine = start_run(spec, rewindable=False, agent=agent)
        if lender is not None:
            lender.bind(engine.clock)
        if hooks.cancel is not None:
            engine.cancel = hooks.cancel
        lean(engine)
        result.path = str(engine.recording_path)

        def after_step(e: Any, before: Any) -> None:
            if lender is not None:  # the emulator only for the frames of a turn; lent out while the model thinks
                if e.phase in (Phase.PLAN, Phase.ACTING):
                    lender.acquire()
                else:
                    lender.release()
            if before is Phase.PROMPT and e.pending is not None and e.pending.reply is not None:
                reply = e.pending.reply
                progress.rate_limit_waits += sum(1 for a in reply.attempts if a.error_class == "rate_limit")
                if reply.error and not reply.cancelled:
                    progress.last_error = reply.error
            progress.calls, progress.cost_usd = e.totals.calls, e.totals.cost_usd
            progress.turns, progress.frames = e.turn, e.clock.frame
            if hooks.on_progress is not None:
                hooks.on_progress(progress)
            if e.phase is Phase.READY and not e.done:
                why = hooks.should_stop()
                if why:
                    e.cancel.cancel(why)

        summary = drive(engine, cancel=engine.cancel, after_step=after_step)
        result.driven = True
        if summary is not None:
            result.complete, result.stopped = summary.complete, summary.stopped
            result.calls, result.cost_usd = summary.calls, float(summary.cost_usd or 0.0)
            result.score, result.turns = summary.total_reward, summary.turns
    except Exception as e:  # one failed run must not end the batch; the error is its account
        result.error = (str(e).splitlines() or [type(e).__name__])[0] or type(e).__name__
        if engine is not None and engine.summary is not None:
            result.stopped = engine.summary.stopped
    finally:
        if lender is not None:
            lender.end()
            if token is not None:
                ENV_SOURCE.reset(token)
        if engine is not None:
            try:
                engine.close()
            except Exception:
                pass
    if result.complete and result.path:
        result.verdict = verdict(result.path)
    result.rate_limit_waits = progress.rate_limit_waits
    result.last_error = result.error or progress.last_error or (
        result.stopped if result.stopped and not result.complete else None)
    result.wall_s = round(time.monotonic() - t0, 3)
    return result


__all__ = ["Hooks", "Progress", "RunResult", "SharedClients", "execute", "make_agent_with"]
