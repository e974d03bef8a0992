"""The hook a person plays through: the screen supplies each turn's plan.

The engine calls ``act`` from the driver's thread; ``plan_source`` is a callable
the TUI provides that returns the action names for this turn (blocking until the
person commits, in paused mode, or returning the held key at once in real time).
It returns None when play was cancelled.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from workstation.engine.calls import CancelToken, Deadline, FatalAgentError, OnText, Reply, TurnContext
from workstation.engine.prompt import Prompt

PlanSource = Callable[[TurnContext], "list[str] | None"]


class HumanAgent:
    reads_prompt = False

    def __init__(self, plan_source: PlanSource, mode: str = "paused", pace: str | None = None,
                 window: bool = False):
        self.spec = "human"
        self.mode = mode
        self.pace = pace  # "paper" (900 frames over 30 s) or "native" (60 fps): it changes the outcome
        self.window = window
        self.plan_source = plan_source

    def act(self, prompt: Prompt, ctx: TurnContext, on_text: OnText | None = None, *,
            deadline: Deadline | None = None, cancel: CancelToken | None = None) -> Reply:
        t0 = time.perf_counter()
        names = self.plan_source(ctx)
        if names is None:
            raise FatalAgentError("play was cancelled")
        return Reply(text=f"thought: human\nmove: [{', '.join(names) or 'noop'}]",
                     latency_s=time.perf_counter() - t0)

    def close(self) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        return {"kind": "human", "spec": "human", "mode": self.mode, "pace": self.pace,
                "input": "pygame window" if self.window else "terminal (held-key model)"}
