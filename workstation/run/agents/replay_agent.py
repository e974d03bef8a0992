"""Re-play the plans of an earlier recording, turn by turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workstation.engine.calls import CancelToken, Deadline, OnText, Reply, TurnContext
from workstation.engine.prompt import Prompt
from workstation.game.games import Game
from workstation.store.recording import DamagedRecording, Recording


class ReplayAgent:
    """Answers turn N with the actions recording turn N executed.

    When the source recording has no more turns, it answers ``noop``. The reply
    carries the source's thought so a replay reads like the original. Given the
    run's ``game`` (as its pack plays it), each action is said in a word of that
    pack which plays it (``Game.word_for``): the ALE name under the default pack,
    the pack's own word under a harness pack, so the replay plays the same ids. A source
    that fails the fast integrity check (digests, summary against turns) is
    refused with one line: replaying a damaged recording would record a
    different run without a word.
    """

    reads_prompt = False

    def __init__(self, path: str | Path, game: Game | None = None):
        self.source = Recording(Path(path))
        damage = self.source.damage()
        if damage:  # a damaged artifact: one line naming it, exit 1
            raise DamagedRecording(f"cannot replay it: {damage}", file=self.source.path)
        self.spec = f"replay:{self.source.path}"
        self._turns = {t.turn: t for t in self.source.turn_records}
        self._game = game
        self.source_turns = len(self._turns)
        self.idled = 0  # turns asked for past the source's last one (answered noop)

    def _word(self, name: str) -> str:
        """The recorded action (an ALE name) in a word the run's pack plays as that action."""
        g = self._game
        if g is None or name.upper() not in g.minimal_set:
            return name
        return g.word_for(g.minimal_set.index(name.upper()))

    def act(self, prompt: Prompt, ctx: TurnContext, on_text: OnText | None = None, *,
            deadline: Deadline | None = None, cancel: CancelToken | None = None) -> Reply:
        t = self._turns.get(ctx.turn)
        if t is None:
            self.idled += 1
            return Reply(text=f"thought: source recording has no more turns\nmove: [{self._word('noop')}]")
        names = ", ".join(self._word(a) for a in t.actions) or self._word("noop")
        thought = t.thought.replace("\n", " ")
        return Reply(text=f"thought: {thought}\nmove: [{names}]")

    def close(self) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        m = self.source.manifest_record
        return {"kind": "replay", "spec": self.spec, "source_game": m.game, "source_seed": m.seed,
                "source_agent": m.agent_spec}
