"""The plan: the turn's actions in order, the executing one highlighted, invalid turns marked,
and the actions a game over (or the end of the budget) dropped struck through."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static


def end_note(record: dict[str, Any]) -> str:
    """Why a turn's plan ended early, from its record ("" when it ran to the end)."""
    dropped = len(record.get("dropped") or [])
    if record.get("game_over"):
        reset = record.get("reset_frame")
        after = f"new game from frame {reset}" if reset is not None else "the budget is used up"
        cut = record.get("cut_frames")
        cut_txt = f", its last action cut to {cut} frame{'s' if cut != 1 else ''}" if cut else ""
        return f"GAME OVER on frame {record.get('end_frame')}{cut_txt}; {dropped} dropped; {after}"
    if dropped:
        return f"the budget ended the plan: {dropped} dropped"
    return ""


class PlanView(Static):
    """Shows the planned action names; ``mark(done)`` moves the highlight."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("no plan yet", id=id)
        self.plan: list[str] = []
        self.done = 0
        self.overridden = False
        self.valid = True
        self.errors: list[str] = []
        self.executed: list[str] = []
        self.dropped = 0
        self.note = ""

    def show_plan(self, plan: list[str], *, overridden: bool = False, valid: bool = True,
                  errors: list[str] | None = None, done: int = 0, executed: list[str] | None = None,
                  dropped: int = 0, note: str = "") -> None:
        self.plan, self.overridden, self.valid = list(plan), overridden, valid
        self.dropped, self.note = dropped, note
        self.errors, self.done = list(errors or []), done
        self.executed = list(executed or [])
        self.update(self._text())

    def end_early(self, dropped: int, note: str) -> None:
        """The turn ended before its plan did: the last ``dropped`` actions never ran."""
        self.dropped, self.note = dropped, note
        self.update(self._text())

    def clear_plan(self, note: str = "no plan yet") -> None:
        self.plan, self.done, self.errors, self.executed = [], 0, [], []
        self.dropped, self.note = 0, ""
        self.update(Text(note, style="dim"))

    def mark(self, done: int, executed: str | None = None) -> None:
        """``done`` actions have run; the next one is the executing one."""
        self.done = done
        if executed is not None:
            self.executed.append(executed)
        self.update(self._text())

    def _text(self) -> Text:
        text = Text()
        if self.overridden:
            text.append(" OVERRIDDEN ", style="bold black on yellow")
            text.append(" ")
        if not self.valid and not self.overridden:
            text.append(" INVALID ", style="bold white on red")
            text.append(" fallback: one noop\n", style="red")
            for e in self.errors[:3]:
                text.append(f"  {e}\n", style="red")
        elif text:
            text.append("\n")
        first_dropped = len(self.plan) - self.dropped if self.dropped else len(self.plan)
        for i, name in enumerate(self.plan):
            if i >= first_dropped:
                text.append(f" {i + 1}.{name} ", style="dim strike")
            elif i < self.done:
                text.append(f" {i + 1}.{name} ", style="dim")
            elif i == self.done:
                text.append(f" ▶{i + 1}.{name} ", style="bold reverse")
            else:
                text.append(f" {i + 1}.{name} ")
        if self.note:
            text.append(f"\n {self.note}", style="bold magenta")
        elif self.plan and self.done >= len(self.plan):
            text.append("  ✓ done", style="green")
        return text
