"""Step-mode controls: edit and send the prompt, override the plan, advance, rewind and branch.

The panel only holds widgets; the live screen turns their presses into engine
commands. ``set_phase`` enables what makes sense where the worker holds.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.events import DescendantBlur, DescendantFocus
from textual.widgets import Button, Input, Select, Static

from screens.widgets.alive import SafeSelect

HOLD_HINTS = {
    "prompt": "holding before the prompt is sent: read or edit it, then send (or type a plan: override)",
    "plan": "reply parsed: override the plan or execute it",
    "acting": "executing the plan: one action or one frame at a time",
    "asking": "waiting for the agent's reply…",
}
BY_HAND_HINT = "plan set by hand (the agent was not asked): execute it or override it again"
# What to press to edit, always on show under the override box: a letter typed in a box is text, never a command.
EDIT_KEYS = "o or tab: override · enter commits · esc abandons"
TYPING_KEYS = "typing a plan: letters are text · enter commits · esc abandons"  # while the box has focus

_PROMPT_ONLY = ("apply-edit", "send", "current-only")
_AFTER_REPLY = ("resend",)  # override works before the prompt is sent too: the agent is then not asked
_ACTING = ("one-action", "one-frame", "finish-turn")


class StepPanel(Vertical):
    DEFAULT_CSS = """
    StepPanel { height: auto; }
    StepPanel Horizontal { height: auto; }
    StepPanel Button { margin: 0 1 0 0; min-width: 0; }
    StepPanel #override-input { width: 1fr; }
    StepPanel #branch-turn { width: 14; }
    """

    _newest = 0

    def compose(self) -> ComposeResult:
        yield Static(Text("step mode", style="bold"), id="step-hint")
        with Horizontal(classes="live-only"):
            yield Button("Send g", id="send", compact=True, variant="primary")
            yield Button("Apply ^s", id="apply-edit", compact=True)
            yield Button("Re-send r", id="resend", compact=True)
        with Horizontal(classes="live-only"):
            yield Button("Current frame only c", id="current-only", compact=True)
        with Horizontal(classes="live-only"):
            yield Input(placeholder="left, left, fire", id="override-input", compact=True)
            yield Button("Override o", id="override", compact=True)
        yield Static(Text(EDIT_KEYS, style="dim"), id="edit-keys", classes="live-only")
        with Horizontal(classes="live-only"):
            yield Button("Action a", id="one-action", compact=True)
            yield Button("Frame .", id="one-frame", compact=True)
            yield Button("Turn t", id="finish-turn", compact=True)
        with Horizontal():
            yield SafeSelect([("turn 0", 0)], value=0, allow_blank=False, id="branch-turn", compact=True)
            yield Button("Rewind+branch b", id="branch", compact=True, variant="warning")

    def on_descendant_focus(self, event: DescendantFocus) -> None:
        if event.widget.id == "override-input":
            self._edit_keys(typing=True)

    def on_descendant_blur(self, event: DescendantBlur) -> None:
        if event.widget.id == "override-input":
            self._edit_keys(typing=False)

    def _edit_keys(self, typing: bool) -> None:
        """Say where the letters go: into the override box (text), or to the screen (commands)."""
        self.query_one("#edit-keys", Static).update(
            Text(TYPING_KEYS, style="bold") if typing else Text(EDIT_KEYS, style="dim"))

    def set_phase(self, phase: str, turn: int, by_hand: bool = False) -> None:
        """Show where the worker holds and enable the matching controls (``by_hand``: the plan is a person's)."""
        hint = BY_HAND_HINT if by_hand and phase == "plan" else HOLD_HINTS.get(phase, f"phase: {phase}")
        self.query_one("#step-hint", Static).update(Text.assemble(("turn ", "dim"), (str(turn), "bold"), "  ", hint))
        for name in _PROMPT_ONLY:
            self.query_one(f"#{name}", Button).disabled = phase != "prompt"
        for name in _AFTER_REPLY:
            self.query_one(f"#{name}", Button).disabled = phase != "plan"
        for name in _ACTING:
            self.query_one(f"#{name}", Button).disabled = phase not in ("plan", "acting")
        self.query_one("#override", Button).disabled = phase not in ("prompt", "plan")
        self.set_live(True)

    def set_live(self, live: bool) -> None:
        """A run that is over keeps only its hint and the branch row: the rest has nothing left to act on."""
        for row in self.query(".live-only"):
            row.display = live

    def set_finished(self, turns: int, stopped: bool) -> None:
        """The run ended after ``turns`` turns: only rewind and branch are left to do."""
        how = "stopped" if stopped else "finished"
        self.query_one("#step-hint", Static).update(Text.assemble(
            (f"run {how}", "bold"), f" after {turns} turn{'s' if turns != 1 else ''}: ",
            "pick a turn and rewind to branch from it"))
        for name in (*_PROMPT_ONLY, *_AFTER_REPLY, *_ACTING, "override"):
            self.query_one(f"#{name}", Button).disabled = True
        self.set_live(False)

    def set_turns(self, turns: list[int]) -> None:
        """The turns one can rewind to (their start); the choice follows the newest unless one was picked."""
        select = self.query_one("#branch-turn", Select)
        current, newest = select.value, self._newest
        self._newest = turns[-1] if turns else 0
        select.set_options([(f"turn {t}", t) for t in turns] or [("turn 0", 0)])
        if current in turns and current != newest:
            select.value = current
        else:
            select.value = self._newest

    @property
    def branch_turn(self) -> int:
        value = self.query_one("#branch-turn", Select).value
        return int(value) if isinstance(value, int) else 0
