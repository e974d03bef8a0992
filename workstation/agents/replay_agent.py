"""Re-play the plans of an earlier recording, turn by turn."""

from __future__ import annotations

from pathlib import Path

from workstation.agents.base import OnText, Reply, TurnContext
from workstation.turn.prompt import Prompt
from workstation.store.recording import Recording


class ReplayAgent:
    """Answers turn N with the actions recording turn N executed.

    When the source recording has no more turns, it answers ``noop``. The reply
    carries the source's thought so a replay reads like the original.
    """

    reads_prompt = False

    def __init__(self, path: str | Path):
        self.source = Recording(Path(path))
        self.spec = f"replay:{self.source.path}"
        self._turns = {t["turn"]: t for t in self.source.turns}

    def act(self, prompt: Prompt, ctx: TurnContext, on_text: OnText | None = None) -> Reply:
        t = self._turns.get(ctx.turn)
        if t is None:
            return Reply(text="thought: source recording has no more turns\nmove: [noop]")
        names = ", ".join(t["actions"]) or "noop"
        thought = (t.get("thought") or "").replace("\n", " ")
        return Reply(text=f"thought: {thought}\nmove: [{names}]")

    def close(self) -> None:
        pass

    def describe(self) -> dict:
        m = self.source.manifest
        return {"kind": "replay", "spec": self.spec, "source_game": m.get("game"), "source_seed": m.get("seed"),
                "source_agent": m.get("agent", {}).get("spec")}
