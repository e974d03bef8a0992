"""Drive a match in which a person plays one side: the engine in a thread, the person's plans from the screen.

Paused: each turn the model is asked while the person queues a plan and commits
it; both plans are shown together once both are in, then played in lockstep at
the chosen pace. Real time: the model is asked while the game waits; then its
plan plays and the person steers live, the held keys sampled at each action slot
(the person's side is recorded as the actions it played).

The driver talks to the screen only through ``post`` (Textual messages) and the
frame view's thread-safe ``post_frame``; tests drive it with a hand-moved pacer.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

from textual.message import Message

from workstation.engine.match_engine import MatchAction, MatchEngine, MatchPlans, MatchPrompts, MatchTurnEnded
from workstation.engine.turn_engine import Event
from workstation.run.match_start import MatchSpec, start_match

QUIT = "play was cancelled"


class MatchUpdate(Message):
    """What the screen shows: a phase of the match and its data."""

    def __init__(self, kind: str, data: dict[str, Any]) -> None:
        super().__init__()
        self.kind, self.data = kind, data


class MatchDriver:
    def __init__(self, spec: MatchSpec, person: int, mode: str, post: Callable[[Message], Any],
                 show_frame: Callable[[Any, int], Any], pacer: Any, period: float,
                 held: Callable[[float], str] | None = None) -> None:
        self.spec, self.person, self.mode = spec, person, mode
        self.post, self.show_frame, self.pacer, self.period = post, show_frame, pacer, period
        self.held = held  # real time: the action the person holds at a time
        self.side_plans: dict[int, queue.Queue[list[str]]] = {1: queue.Queue(), 2: queue.Queue()}
        self.plans = self.side_plans[person or 1]  # the person's committed plans (person 0: two people, per side)
        self.quit = threading.Event()
        self.engine: MatchEngine | None = None
        self._t = 0.0

    # -- the person's side ---------------------------------------------------
    def plan_source(self, ctx: Any) -> list[str] | None:
        """Paused: wait for the committed plan (None when the person quits: the match stops)."""
        self.post(MatchUpdate("awaiting", {"turn": ctx.turn}))
        while not self.quit.is_set():
            try:
                return self.plans.get(timeout=0.05)
            except queue.Empty:
                pass
        return None

    def source_for(self, side: int) -> Callable[[Any], list[str] | None]:
        """Two people (person 0): side ``side``'s plans, from its own queue."""

        def source(ctx: Any) -> list[str] | None:
            self.post(MatchUpdate("awaiting", {"turn": ctx.turn, "side": side}))
            while not self.quit.is_set():
                try:
                    return self.side_plans[side].get(timeout=0.05)
                except queue.Empty:
                    pass
            return None

        return source

    def live(self, index: int) -> str:
        """Real time: wait for the action's slot, then read the held keys."""
        self._t += self.period
        self.pacer.wait_until(self._t, self.quit.is_set)
        now = self.pacer.now()
        if now - self._t > self.period / 2:  # late: restart the schedule from now
            self._t = now
        return self.held(self._t) if self.held is not None else "noop"

    # -- the match -----------------------------------------------------------
    def _observe(self, ev: Event) -> None:
        eng = self.engine
        if eng is None:
            return
        if isinstance(ev, MatchPrompts):
            self.post(MatchUpdate("asking", {"turn": ev.turn}))
        elif isinstance(ev, MatchPlans):
            self.post(MatchUpdate("plans", {"turn": ev.turn, "plans": ev.plans}))
            self._t = self.pacer.now()  # the first action plays one slot from now
        elif isinstance(ev, MatchAction):
            if self.mode == "paused" and not self.quit.is_set():
                self._t += self.period
                self.pacer.wait_until(self._t, self.quit.is_set)
            self.show_frame(eng.clock.rgb(), ev.frame)
            self.post(MatchUpdate("action", {"index": ev.index, "frame": ev.frame, "actions": ev.actions,
                                             "scores": ev.scores}))
        elif isinstance(ev, MatchTurnEnded):
            rec = ev.record
            self.post(MatchUpdate("turn", {"turn": rec.turn, "played": [p.actions for p in rec.players],
                                           "scores": [p.score for p in rec.players]}))

    def run(self) -> None:
        """Play the match to its end (or the person's quit); the recording is closed either way."""
        engine = None
        try:
            live = {self.person: self.live} if self.mode == "realtime" else None
            source: Any = {1: self.source_for(1), 2: self.source_for(2)} if self.person == 0 else self.plan_source
            engine = self.engine = start_match(self.spec, observers=[self._observe], plan_source=source,
                                               person_ok=True, live=live)
            engine.start()
            self.show_frame(engine.clock.rgb(), 0)
            self.post(MatchUpdate("started", {"frame": 0}))
            while not engine.done:
                if self.quit.is_set():
                    engine.stop(QUIT)
                    break
                engine.play_turn()
        finally:
            if engine is not None:
                if engine.summary is None:
                    engine.stop(QUIT)
                engine.close()
                self.post(MatchUpdate("finished", {"summary": engine.summary or {},
                                                   "path": engine.writer.path if engine.writer else None}))
