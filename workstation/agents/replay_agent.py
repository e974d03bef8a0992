"""Re-play the plans of an earlier recording, turn by turn."""

from __future__ import annotations

from pathlib import Path

from workstation.calls import OnText, Reply, TurnContext
from workstation.turn.prompt import Prompt
from workstation.store.recording import Recording, RecordingError


class ReplayAgent:
    """Answers turn N with the actions recording turn N executed.

    When the source recording has no more turns, it answers ``noop``. The reply
    carries the source's thought so a replay reads like the original. A source
    that fails the fast integrity check (digests, summary against turns) is
    refused with one line: replaying a damaged recording would record a
    different run without a word.
    """

    reads_prompt = False

    def __init__(self, path: str | Path):
        self.source = Recording(Path(path))
        damage = self.source.damage()
        if damage:
            raise RecordingError(f"cannot replay it: {damage}")
        self.spec = f"replay:{self.source.path}"
        self._turns = {t.turn: t for t in self.source.turn_records}

    def act(self, prompt: Prompt, ctx: TurnContext, on_text: OnText | None = None) -> Reply:
        t = self._turns.get(ctx.turn)
        if t is None:
            return Reply(text="thought: source recording has no more turns\nmove: [noop]")
        names = ", ".join(t.actions) or "noop"
        thought = t.thought.replace("\n", " ")
        return Reply(text=f"thought: {thought}\nmove: [{names}]")

    def close(self) -> None:
        pass

    def describe(self) -> dict:
        m = self.source.manifest_record
        return {"kind": "replay", "spec": self.spec, "source_game": m.game, "source_seed": m.seed,
                "source_agent": m.agent_spec}
