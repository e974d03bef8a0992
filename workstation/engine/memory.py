"""What the agent remembers: turn clips and the structured-history selection.

A clip is one past turn as the agent saw it: its start frame, the actions it
executed, and for each action the frame after it plus what happened (reward,
life lost, reset). ``structured_history`` shows the last R clips that gained or
lost points or a life ("reward history") first, then the last K clips ("recent
history"); a turn may appear in both. ``append_only`` keeps the whole chat.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any


@dataclass
class Step:
    action: str  # executed action name
    frame: int  # frame index after the action
    reward: float = 0.0
    life_lost: bool = False
    reset: bool = False


@dataclass
class Clip:
    turn: int
    start_frame: int
    steps: list[Step] = field(default_factory=list)
    raw: str = ""  # the reply text (append-only mode replays it as the assistant message)
    noop_frames: int = 0  # latency mode: frames the game ran while the agent thought

    @cached_property
    def reward(self) -> float:
        return sum(s.reward for s in self.steps)

    @cached_property
    def eventful(self) -> bool:
        """Did this turn score (either sign) or lose a life?"""
        return any(s.reward != 0 or s.life_lost for s in self.steps)

    @property
    def actions(self) -> list[str]:
        return [s.action for s in self.steps]


def select_structured(clips: list[Clip], history: int, reward_history: int) -> tuple[list[Clip], list[Clip]]:
    """(reward history, recent history) for the next prompt, each oldest first.

    Clips are complete when selected (their steps never change afterwards), so
    ``eventful`` is computed once per clip.
    """
    recent = clips[-history:] if history > 0 else []
    if reward_history > 0:
        rewarded = []
        for c in reversed(clips):  # newest first, stop once R are found
            if c.eventful:
                rewarded.append(c)
                if len(rewarded) == reward_history:
                    break
        rewarded.reverse()
    else:
        rewarded = []
    return rewarded, recent


def clips_from_turns(turns: list[Any]) -> list[Clip]:
    """Rebuild clips from a recording's turn records (typed ``TurnRecord``s, or their JSON) for replaying prompts."""
    from workstation.store.records import TurnRecord

    clips = []
    for t in turns:
        if not isinstance(t, TurnRecord):
            t = TurnRecord.from_json(t)
        steps = [Step(a, f, r, bool(lost), bool(reset)) for a, f, r, lost, reset in
                 zip(t.actions, t.action_frames, t.action_rewards, t.action_life_lost, t.action_reset)]
        clips.append(Clip(t.turn, t.start_frame, steps, t.raw, t.noop_frames))
    return clips
