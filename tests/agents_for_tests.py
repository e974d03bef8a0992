"""A scripted agent for engine tests: replies from a list, as a model would (no emulator faked)."""

from __future__ import annotations

from workstation.engine.calls import FatalAgentError, Reply, TurnContext, Usage


class ScriptedAgent:
    spec = "scripted"

    def __init__(self, replies: list, latency_s: float = 0.0, cost: float | None = None):
        self.replies = list(replies)
        self.latency_s = latency_s
        self.cost = cost
        self.prompts = []

    def act(self, prompt, ctx: TurnContext, on_text=None) -> Reply:
        self.prompts.append(prompt)
        item = self.replies[min(ctx.turn, len(self.replies) - 1)] if self.replies else "move: [noop]"
        if isinstance(item, Exception):
            raise item
        if on_text:
            for word in item.split(" "):
                on_text(word + " ")
        usage = Usage(input_tokens=100, output_tokens=10) if self.cost is not None else None
        return Reply(text=item, usage=usage, latency_s=self.latency_s, cost_usd=self.cost)

    def close(self) -> None:
        pass

    def describe(self) -> dict:
        return {"kind": "scripted", "spec": self.spec}


__all__ = ["ScriptedAgent", "FatalAgentError"]
