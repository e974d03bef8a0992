"""The two players of a match: their specs checked, their agents made (each seeded from the seed and side)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workstation.base.errors import UserError
from workstation.engine.agent import Agent
from workstation.engine.calls import OnText, Reply, TurnContext
from workstation.engine.prompt import Prompt
from workstation.game.twoplayer import SIDES, TwoPlayerGame
from workstation.run.agents import AgentSpecError, make_agent, parse_agent
from workstation.store.recording import DamagedRecording, Recording
from workstation.store.records import RecordingError


class MatchSpecError(UserError):
    """A match that cannot be played as asked (one line)."""


def side_seed(seed: int, side: int) -> int:
    """Each side's agent seed (2S+1, 2S+2): no two sides of any two seeds share one."""
    return seed * 2 + side


def check_players(specs: tuple[str, str], window: bool = False, person_ok: bool = False) -> None:
    """Both specs parse; a person plays only where there is a screen for them."""
    for side, spec in zip(SIDES, specs):
        try:
            parse_agent(spec)
        except AgentSpecError as e:
            raise MatchSpecError(f"--p{side}: {e}") from None
    humans = [s for s, spec in zip(SIDES, specs) if parse_agent(spec).kind == "human"]
    if len(humans) == 2 and not window:
        raise MatchSpecError("--p1 human and --p2 human: two people on one keyboard play with `workstation play "
                             "--game G --vs human` (see docs/two-player.md); or make one side an agent, e.g. "
                             "--p2 random")
    if humans and not person_ok:
        raise MatchSpecError(f"--p{humans[0]} human: a person plays in the TUI; use `workstation play --game G "
                             "--vs SPEC`, or make both sides agents")


@dataclass
class MatchReplayAgent:
    """Re-plays one side of an earlier match (the actions it planned, turn by turn)."""

    path: str
    side: int
    reads_prompt = False

    def __post_init__(self) -> None:
        rec = Recording(Path(self.path))
        if rec.manifest_record.kind != "match":
            raise RecordingError(f"{self.path} is not a match recording")
        damage = rec.damage()  # a damaged match would play other plans than it shows, without a word
        if damage:
            raise DamagedRecording(f"--p{self.side}: cannot replay side {self.side} of {self.path}: {damage}",
                                   file=self.path)
        self.spec = f"replay:{rec.path}"
        self._turns = {t.turn: t.players[self.side - 1] for t in rec.match_turns}
        self.source_game = rec.manifest_record.game

    def act(self, prompt: Prompt, ctx: TurnContext, on_text: OnText | None = None) -> Reply:
        t = self._turns.get(ctx.turn)
        names = t.planned if t else []
        return Reply(text=f"thought: replay\nmove: [{', '.join(names) or 'noop'}]")

    def close(self) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        return {"kind": "replay", "spec": self.spec, "side": self.side}


def make_side_agent(spec: str, tp: TwoPlayerGame, seed: int, side: int, provider_options: Any = None,
                    plan_source: Any = None) -> Agent:
    ref = parse_agent(spec)
    if ref.kind == "replay":
        try:
            is_match = Recording(Path(ref.arg)).manifest_record.kind == "match"
        except DamagedRecording as e:  # the source reads but is damaged: exit 1, named
            raise DamagedRecording(f"--p{side}: {e}", file=ref.arg) from None
        except RecordingError as e:
            raise MatchSpecError(f"--p{side}: {e}") from None
        if is_match:
            agent = MatchReplayAgent(ref.arg, side)
            if agent.source_game != tp.key:
                raise MatchSpecError(f"--p{side}: the replayed match is {agent.source_game}, not {tp.key}")
            return agent  # type: ignore[return-value]
    return make_agent(spec, tp.game, side_seed(seed, side), provider_options, plan_source)
