"""``--executor ray``: each run a Ray task; one small actor holds the limiter and the cost guard for all workers.

``ray.init(address=...)`` joins a cluster (``--ray-address``), or starts a local Ray
when none is given (a Ray already initialised in this process is used as it is). Each
run is a task that calls the same ``execute`` as the local executor, recording into a
scratch folder on its own node (no shared file system needed); when the run ends
(complete, stopped or failed) the task packs the recording (``shipping.pack``),
removes the scratch folder and returns the bytes with its result, through Ray's
object store. The driver unpacks it atomically into DIR/runs/ (``shipping.unpack``),
as the local executor would have written it; the result says which node played it.
A run whose node dies is failed here and re-run on resume. The ``Coordinator`` actor:

- grants call slots per (provider, base URL, model), halving a limit on a 429 and
  growing it back after clean calls, as ``AdaptiveLimiter`` does in one process;
- hears every run's spend at each turn boundary and answers with a reason to stop
  (the batch stopped, or spent + one more call per running run reached --max-cost).

Ray is an optional extra (``pip install -e '.[ray]'``); without it ``--executor ray``
is one line saying so.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any, cast

from workstation.base.errors import UserError
from workstation.engine.calls import CancelToken, Deadline
from workstation.studies.batch import placement, shipping
from workstation.studies.batch.execute import Hooks, Progress, RunResult, execute
from workstation.studies.batch.executor_base import Executor, limiter_key
from workstation.studies.batch.jobs import Job

POLL_S = 0.05


def check_ray() -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        raise UserError("--executor ray needs Ray, an optional extra: pip install -e '.[ray]'") from None


_STARTED = [False]  # this process joined or started Ray through connect() (shutdown() leaves it)


def connect(address: str | None) -> Any:
    """Ray, joined at ``address`` (or started here) once a process; a failure is one ``UserError`` line.
    The batch command calls it before it writes anything, so a cluster that is not there leaves no batch."""
    check_ray()
    import ray

    if not ray.is_initialized():
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as e:  # no cluster at "auto", a version mismatch...
            from workstation.studies.batch.ray_address import ray_init_error

            raise ray_init_error(address, e) from None
        _STARTED[0] = True
    return ray


class Coordinator:
    """The actor's state (a plain class; ``ray.remote`` makes it the actor)."""

    def __init__(self, caps: dict[str, int], max_cost: float | None = None) -> None:
        self.caps = dict(caps)
        self.maximum = dict(caps)
        self.in_flight = {k: 0 for k in caps}
        self.clean = {k: 0 for k in caps}
        self.max_cost = max_cost
        self.stop_reason: str | None = None
        self.live: dict[str, tuple[float, float, dict[str, Any]]] = {}  # run id -> (cost, per-call estimate, progress)
        self.settled = 0.0

    def acquire(self, key: str) -> bool:
        if self.in_flight.get(key, 0) >= self.caps.get(key, 1):
            return False
        self.in_flight[key] = self.in_flight.get(key, 0) + 1
        return True

    def release(self, key: str, outcome: str) -> None:
        self.in_flight[key] = max(0, self.in_flight.get(key, 0) - 1)
        if outcome == "rate_limit":
            self.caps[key] = max(1, self.caps.get(key, 1) // 2)
            self.clean[key] = 0
        elif outcome == "ok":
            self.clean[key] = self.clean.get(key, 0) + 1
            if self.clean[key] >= self.caps.get(key, 1) and self.caps.get(key, 1) < self.maximum.get(key, 1):
                self.caps[key] += 1
                self.clean[key] = 0

    def stop(self, reason: str) -> None:
        if self.stop_reason is None:
            self.stop_reason = reason

    def report(self, run_id: str, cost: float, per_call: float, progress: dict[str, Any]) -> str | None:
        """A run's spend so far (at a turn boundary); returns why it should stop, if it should."""
        self.live[run_id] = (cost or 0.0, per_call, progress)
        if self.stop_reason:
            return self.stop_reason
        if self.max_cost is not None:
            spent = self.settled + sum(c for c, _, _ in self.live.values())
            margin = sum(p for _, p, _ in self.live.values())
            if spent + margin >= self.max_cost:
                return (f"the batch's cost cap was reached (${spent:.4f} of --max-cost ${self.max_cost:g}); "
                        "resume re-runs it")
        return None

    def finish(self, run_id: str, cost: float | None) -> None:
        self.live.pop(run_id, None)
        self.settled += cost or 0.0

    def progress(self) -> dict[str, dict[str, Any]]:
        return {k: p for k, (_, _, p) in self.live.items()}


class _Slot:
    def __init__(self) -> None:
        self.epoch, self.outcome = 0, "neutral"


class ActorLimiter:
    """The limiter a worker's provider agent uses: slots granted by the coordinator actor."""

    def __init__(self, actor: Any, key: str) -> None:
        self.actor, self.key = actor, key

    @contextmanager
    def slot(self, cancel: CancelToken | None = None, deadline: Deadline | None = None) -> Iterator[_Slot]:
        import ray

        while not ray.get(self.actor.acquire.remote(self.key)):
            if cancel is not None:
                cancel.check()
            if deadline is not None:
                deadline.check()
            time.sleep(POLL_S)
        s = _Slot()
        try:
            yield s
        finally:
            self.actor.release.remote(self.key, s.outcome)


def _key_text(key: tuple[Any, ...]) -> str:
    return "|".join(key)


def run_task(spec_json: dict[str, Any], run_id: str, actor: Any, key: str | None, per_call: float) -> RunResult:
    """The body of a run's Ray task: the run records into this node's scratch space and its recording
    comes back packed in the result (``bundle``), with the node that played it (``where``)."""
    import ray

    scratch = shipping.scratch()
    spec_json = {**spec_json, "out": str(scratch)}
    latest: dict[str, Any] = {}
    spent: list[float] = [0.0]  # the cost the last progress reported

    def on_progress(p: Progress) -> None:
        latest.update(vars(p))
        spent[0] = p.cost_usd

    def should_stop() -> str | None:
        return cast("str | None", ray.get(actor.report.remote(run_id, spent[0], per_call, dict(latest))))

    hooks = Hooks(should_stop=should_stop, on_progress=on_progress,
                  limiter=ActorLimiter(actor, key) if key is not None else None)
    result: RunResult | None = None
    try:
        result = execute(spec_json, run_id, hooks)
        result.where = placement.here()
        if result.path:
            result.bundle = shipping.pack(result.path)
            result.path = None  # a path on this node means nothing to the driver
        return result
    finally:
        shipping.remove(scratch)
        ray.get(actor.finish.remote(run_id, result.cost_usd if result is not None else spent[0]))


def home(result: RunResult, runs_dir: str) -> RunResult:
    """On the driver: the shipped recording of a finished task into ``runs_dir`` (its path in the result)."""
    data, result.bundle = result.bundle, None
    result.verdict = None  # checked on its node; the driver checks what arrived
    if data is not None:
        result.path = str(shipping.unpack(data, runs_dir))
    return result


class RayExecutor(Executor):
    name = "ray"

    def __init__(self, caps: dict[tuple[Any, ...], int], address: str | None = None, max_cost: float | None = None,
                 per_call: dict[str, float] | None = None) -> None:
        super().__init__()
        ray = connect(address)
        self._owns = _STARTED[0]
        self._ray = ray
        self.per_call = per_call or {}
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        # the coordinator lives on the driver's node: a worker node that dies must not take the limits with it
        self.actor = ray.remote(Coordinator).options(num_cpus=0, scheduling_strategy=here).remote(
            {_key_text(k): n for k, n in caps.items()}, max_cost)
        self._task = ray.remote(run_task)
        self.cancel = CancelToken()

    def stop(self, reason: str) -> None:
        super().stop(reason)
        self.actor.stop.remote(reason)

    def submit(self, cell: Job) -> Future[Any]:
        spec = cell.spec.to_json()
        runs_dir = os.path.abspath(spec["out"])  # the driver's; the task records on its own node
        key = _key_text(limiter_key(cell)) if cell.is_model else None
        opts = {"num_cpus": 1} if not cell.is_model else {"num_cpus": 0}
        # a random or replay run whose node dies (or was dead but not yet known so) is simply played again
        # elsewhere: it holds no limiter slot; a model run fails and is re-run on resume
        ref = self._task.options(**opts, max_retries=0 if cell.is_model else 2).remote(spec, cell.run_id, self.actor, key,
                                                               self.per_call.get(cell.label, 0.0))
        out: Future[Any] = Future()

        def arrived(inner: Future[Any]) -> None:
            try:
                out.set_result(home(inner.result(), runs_dir))
            except BaseException as e:  # the task failed, its node died, or unpacking did
                out.set_exception(e)

        ref.future().add_done_callback(arrived)
        return out

    def progress(self) -> dict[str, Progress]:
        try:
            live = self._ray.get(self.actor.progress.remote(), timeout=5)
        except Exception:  # progress is best effort
            return {}
        return {k: Progress(**{f: v for f, v in p.items() if f in Progress.__dataclass_fields__})
                for k, p in live.items() if p}

    def shutdown(self) -> None:
        if self._owns:
            self._ray.shutdown()
            _STARTED[0] = False


__all__ = ["ActorLimiter", "Coordinator", "RayExecutor", "check_ray", "connect", "home", "run_task"]
