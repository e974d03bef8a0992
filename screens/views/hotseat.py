"""Two people on one keyboard (`workstation play --game boxing --vs human`): a paused match, both sides human.

Each person queues a plan on their own half of the keyboard and commits it; when
both are in, the two plans play in lockstep (the shorter padded with NOOP), as
in any match. Paused only: a terminal reports no key release and repeats only
the key pressed last, so two people holding keys at once would cut each other
off (real time is refused before the screen opens). Both queues are on screen:
on one keyboard each person can see the other's plan being built.

    side 1   w a s d  move   space  fire   e  join the next key to the last
             x  noop   z  remove the last   c  commit
    side 2   arrows  move    /  fire       +  join the next key to the last
             .  noop   backspace  remove the last   enter  commit
"""

from __future__ import annotations

from typing import Any

from textual.events import Key
from textual.widgets import Static

from screens.drivers.match_driver import MatchUpdate
from screens.input.keys import PlanQueue, stops_or_leaves
from screens.views.match import MatchScreen
from workstation.run.match_start import MatchSpec

MOVES = {
    1: {"w": "up", "a": "left", "s": "down", "d": "right", "space": "fire"},
    2: {"up": "up", "left": "left", "down": "down", "right": "right", "slash": "fire"},
}
# key -> (side, what it does)
CONTROLS = {
    "e": (1, "join"), "x": (1, "noop"), "z": (1, "remove"), "c": (1, "commit"),
    "plus": (2, "join"), "equals_sign": (2, "join"), "full_stop": (2, "noop"), "backspace": (2, "remove"),
    "enter": (2, "commit"),
}


def side_key(key: str) -> tuple[int, str, str] | None:
    """(side, "move" or a control, the button) for a terminal key, or None when neither side uses it."""
    k = key.lower()
    for side, moves in MOVES.items():
        if k in moves:
            return side, "move", moves[k]
    if k in CONTROLS:
        side, what = CONTROLS[k]
        return side, what, ""
    return None


class HotseatScreen(MatchScreen):
    """Both sides are people: two plan queues, one per half of the keyboard."""

    def __init__(self, spec: MatchSpec, pace: str = "paper", pacer: Any = None, can_go_back: bool = True) -> None:
        super().__init__(spec, 1, "paused", pace, pacer=pacer, can_go_back=can_go_back)
        self.person = 0  # the driver asks both sides through their own queues
        self.queues = {s: PlanQueue(self.tp.game, spec.protocol.max_actions) for s in (1, 2)}
        self.waiting = {1: False, 2: False}  # the game waits for this side's plan

    def _who(self, side: int) -> str:
        return f"player {side}"

    def _title(self) -> str:
        return (f"{self.tp.game.ale_name}  seed {self.spec.seed}\ntwo people on one keyboard\n"
                "paused: both plans, then played")

    def _help(self) -> str:
        return ("side 1  wasd move  space fire  e join  x noop\n        z remove  c commit\n"
                "side 2  arrows move  / fire  + join  . noop\n        backspace remove  enter commit\n"
                f"allowed: {', '.join(self.tp.game.action_names)}\nesc  quit (the recording stays)")

    def handle_update(self, m: MatchUpdate) -> None:
        if m.kind == "awaiting":
            self.waiting[m.data["side"]] = True
            self.awaiting_plan = True
            self._banner(f"turn {m.data['turn']}: both players, your moves (the game waits)")
            self._show()
            return
        if m.kind == "finished":
            self.waiting = {1: False, 2: False}
        super().handle_update(m)

    def _result(self) -> str:
        s = self.summary or {}
        if self.tp.team or s.get("winner") is None or not s.get("complete"):
            return super()._result()
        state = "complete" if s.get("complete") else f"incomplete ({s.get('stopped') or 'stopped'})"
        return f"[b]result: {state}, player {s['winner']} wins[/b]\n{self.recording}\nesc  leave"

    def take_key(self, event: Key) -> None:
        finished = self.summary is not None or self.error is not None
        if stops_or_leaves(event.key, finished):
            event.stop()
            self.action_stop_or_leave()
            return
        found = side_key(event.key) or (side_key("plus") if event.character == "+" else None)
        if finished or found is None:
            return
        event.stop()
        side, what, button = found
        q = self.queues[side]
        if what == "commit":
            self._commit_side(side)
        elif not q.edit(what, button):
            self.notify(f"side {side}: the plan holds at most {q.max_actions} actions", severity="warning")
        self._show()

    def _commit_side(self, side: int) -> None:
        q = self.queues[side]
        if not self.waiting[side] or self.driver is None:
            self.notify(f"side {side}: the plans are still playing, or yours is in", severity="warning")
            return
        if not q.items:
            self.notify(f"side {side}: queue at least one action first (a noop is fine)", severity="warning")
            return
        self.waiting[side] = False
        self.awaiting_plan = any(self.waiting.values())
        self.driver.side_plans[side].put(q.take())
        other = 3 - side
        self._banner(f"side {side} is in; waiting for side {other}" if self.waiting[other] else "playing both plans")

    def _show(self) -> None:
        super()._show()
        lines = []
        for side in (1, 2):
            q = self.queues[side] if hasattr(self, "queues") else None
            if q is None:
                continue
            state = "commit when ready" if self.waiting[side] else "in" if self.awaiting_plan else "waiting for the game"
            lines.append(f"{q.listing(f'side {side} plan')}  ({state})")
        if lines:
            self.query_one("#match-queue", Static).update("\n".join(lines))
