"""The AtariBench random baseline: 1..3 uniform actions per turn from the words the pack offers.

The words are ``Game.offered_words``: the ALE names of the allowed actions under the
default pack, the pack's own words under a pack that teaches others (a pack made
from the public harness lists them as its prompt does), so the reply is one the
pack's parser plays, as the harness's random client's replies are.
"""

from __future__ import annotations

import random
from typing import Any

from workstation.engine.calls import CancelToken, Deadline, OnText, Reply, TurnContext
from workstation.engine.prompt import Prompt
from workstation.game.games import Game


class RandomAgent:
    """Seeded by the run seed, so a run is reproducible and seeds differ."""

    reads_prompt = False

    def __init__(self, game: Game, seed: int, max_per_turn: int = 3):
        self.spec = "random"
        self.game = game
        self.seed = seed
        self.max_per_turn = max_per_turn
        self.rng = random.Random(seed)
        self._names = game.offered_words

    def act(self, prompt: Prompt, ctx: TurnContext, on_text: OnText | None = None, *,
            deadline: Deadline | None = None, cancel: CancelToken | None = None) -> Reply:
        n = self.rng.randint(1, min(self.max_per_turn, ctx.max_actions, len(self._names)))
        names = ", ".join(self.rng.choice(self._names) for _ in range(n))
        return Reply(text=f"thought: random baseline\nmove: [{names}]")

    def snapshot(self) -> object:
        return self.rng.getstate()

    def restore(self, state: object) -> None:
        if not isinstance(state, tuple):
            raise TypeError(f"a random agent restores the tuple snapshot() gave, not {type(state).__name__}")
        self.rng.setstate(state)

    def close(self) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        return {"kind": "random", "spec": self.spec, "seed": self.seed, "actions_per_turn": f"1..{self.max_per_turn}"}
