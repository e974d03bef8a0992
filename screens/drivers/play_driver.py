"""Drive a human-play engine from the play screen's worker thread, paced for a person.

Beside ``engine_driver`` (watch, step): the same one loop (``workstation.run.drive``), with a
gate that waits for the person before each ask and each action. In real time it waits for the
next slot and samples the held buttons (``buttons``) for the action; paused, it announces that
the game waits for a plan and paces the plan's actions. On quit a committed plan is finished
without waiting, and the run stops at the next prompt. The screen hears what happened through
the callbacks (on the worker's thread: they post messages). No Textual import.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol as _Interface

from screens.input.keys import action_for
from workstation.base.errors import UserError
from workstation.engine.calls import CancelToken
from workstation.engine.turn_engine import Phase, TurnEngine
from workstation.game.games import PACES, Game
from workstation.run.drive import drive

PLAY_PACES: dict[str, int | None] = {**PACES, "instant": None}  # instant: no waiting (tests)
QUIT_REASON = "play was cancelled"  # the human agent's own words when a wait for a plan is cut short


class PlaySettingsError(UserError, ValueError):
    """A play mode or pace that does not exist (``field`` is ``"mode"`` or ``"pace"``)."""


class Pacer(_Interface):
    """The clock the worker paces turns by."""

    def now(self) -> float: ...

    def wait_until(self, t: float, cancelled: Callable[[], bool]) -> None:
        """Return once ``now() >= t``, or early once ``cancelled()``."""
        ...


class WallPacer:
    """The real clock: monotonic time, sleeping in short naps so a quit is seen within 20 ms."""

    NAP_S = 0.02

    def now(self) -> float:
        return time.monotonic()

    def wait_until(self, t: float, cancelled: Callable[[], bool]) -> None:
        while not cancelled():
            left = t - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, self.NAP_S))


def action_seconds(pace: str, repeat: int) -> float:
    """Wall-clock seconds per action at a pace (0 for ``instant``)."""
    if pace not in PLAY_PACES:
        raise PlaySettingsError(f"unknown pace {pace!r}: use paper (30 fps, as the paper counts) or native (60 fps)",
                                "pace")
    fps = PLAY_PACES[pace]
    return repeat / fps if fps else 0.0


class PlayDriver:
    """Paces one human run: ``count_down`` then ``run`` (both on the worker's thread)."""

    def __init__(self, game: Game, mode: str, period: float, pacer: Pacer, *,
                 buttons: Callable[[float], tuple[str, ...]],
                 on_applied: Callable[[str, tuple[str, ...] | None, int], object],
                 on_awaiting: Callable[[int], object],
                 on_progress: Callable[[TurnEngine], object]) -> None:
        self.game, self.mode, self.period, self.pacer = game, mode, period, pacer
        self.buttons, self.on_applied, self.on_awaiting, self.on_progress = buttons, on_applied, on_awaiting, on_progress
        self.plan: list[str] | None = None  # real time: the action of the current slot, for the human agent

    def take_plan(self) -> list[str] | None:
        """The real-time plan for this turn (once)."""
        plan, self.plan = self.plan, None
        return plan

    def next_slot(self, t: float, cancelled: Callable[[], bool]) -> float:
        """Wait for the slot after ``t``; when late by over half a slot, restart the schedule from now."""
        t += self.period
        self.pacer.wait_until(t, cancelled)
        now = self.pacer.now()
        return now if now - t > self.period / 2 else t

    def count_down(self, seconds: int, cancelled: Callable[[], bool], on_count: Callable[[int], object]) -> None:
        start = self.pacer.now()
        for i in range(seconds):
            on_count(seconds - i)
            self.pacer.wait_until(start + i + 1, cancelled)
            if cancelled():
                return
        on_count(0)

    def run(self, engine: TurnEngine, cancelled: Callable[[], bool]) -> None:
        """Play ``engine`` to its end, or until ``cancelled()`` (then it stops at the next prompt)."""
        token = CancelToken()
        t = self.pacer.now()

        def gate(eng: TurnEngine) -> bool:
            nonlocal t
            if eng.phase is Phase.PROMPT:
                if cancelled():
                    token.cancel(QUIT_REASON)
                    return False
                if self.mode == "realtime":
                    t = self.next_slot(t, cancelled)
                    if cancelled():
                        token.cancel(QUIT_REASON)
                        return False
                    buttons = self.buttons(t)
                    self.plan = [action_for(buttons, self.game)]
                    self.on_applied(self.plan[0], buttons, 0)
                else:
                    self.on_awaiting(eng.turn)
            elif eng.phase in (Phase.PLAN, Phase.ACTING) and self.mode == "paused" and eng.pending is not None:
                index = len(eng.pending.steps)
                if not cancelled():  # on quit, finish the committed plan without waiting
                    t = self.next_slot(t, cancelled)
                self.on_applied(eng.pending.plan_names[index], None, index)
            return True

        def after_step(eng: TurnEngine, before: Phase) -> None:
            nonlocal t
            if before is Phase.REPLY and self.mode == "paused":
                t = self.pacer.now() - self.period  # the first action runs now
            elif before in (Phase.PLAN, Phase.ACTING):
                self.on_progress(eng)

        drive(engine, cancel=token, gate=gate, after_step=after_step)


__all__ = ["PLAY_PACES", "QUIT_REASON", "Pacer", "PlayDriver", "PlaySettingsError", "WallPacer", "action_seconds"]
