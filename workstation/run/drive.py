"""The one loop that drives a turn engine to its end: the CLI, the TUI's drivers and the
batch runner all call ``drive``.

It steps the engine phase by phase (or frame by frame), lets a ``gate`` hold it between
steps (pause, step mode, a person's input), paces it with ``after_step``, and checks a
cancel token before every step, so a stop, quit, Ctrl-C or cost cap ends the run within
one step; a call in flight ends itself on the same token (``workstation.engine.calls``). If
anything interrupts the run, the recording is closed as stopped, saying why, before the
exception goes on.
"""

from __future__ import annotations

from collections.abc import Callable

from workstation.engine.calls import CancelToken
from workstation.engine.turn_engine import Phase, TurnEngine
from workstation.store.records import Summary

Gate = Callable[[TurnEngine], bool]  # False: do not step now (the loop asks again)
AfterStep = Callable[[TurnEngine, Phase], None]  # (engine, phase before the step)


def _reason(e: BaseException) -> str:
    if isinstance(e, KeyboardInterrupt):
        return "interrupted"
    detail = (str(e).splitlines() or [""])[0]
    return f"{type(e).__name__}: {detail}" if detail else type(e).__name__


def drive(engine: TurnEngine, cancel: CancelToken | None = None, gate: Gate | None = None,
          after_step: AfterStep | None = None, by_frame: bool = False) -> Summary | None:
    """Step ``engine`` until it finishes or ``cancel`` is cancelled; returns the summary.

    ``by_frame`` advances one emulator frame at a time while acting (a real-time
    player or a paced viewer); otherwise one phase, or one whole action, per step.
    """
    engine.start()
    cancel = cancel if cancel is not None else getattr(engine, "cancel", None)
    try:
        while not engine.done:
            if cancel is not None and cancel.cancelled:
                engine.stop(cancel.reason or "cancelled")
                break
            if gate is not None and not gate(engine):
                continue
            before = engine.phase
            engine.step_frame() if by_frame else engine.step()
            if after_step is not None:
                after_step(engine, before)
    except BaseException as e:
        own = getattr(engine, "cancel", None)
        for token in {id(t): t for t in (cancel, own) if t is not None}.values():
            token.cancel(_reason(e))  # wake any wait of a call still in flight (a backoff, a helper thread)
        if not engine.done:
            try:
                engine.stop(_reason(e))
            except Exception:  # the original error is the one to report
                pass
        raise
    return engine.summary
