"""The plan: the turn's actions in order, the executing one highlighted, invalid turns marked."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static


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

    def show_plan(self, plan: list[str], *, overridden: bool = False, valid: bool = True,
                  errors: list[str] | None = None, done: int = 0, executed: list[str] | None = None) -> None:
        self.plan, self.overridden, self.valid = list(plan), overridden, valid
        self.errors, self.done = list(errors or []), done
        self.executed = list(executed or [])
        self.update(self._text())

    def clear_plan(self, note: str = "no plan yet") -> None:
        self.plan, self.done, self.errors, self.executed = [], 0, [], []
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
        for i, name in enumerate(self.plan):
            if i < self.done:
                text.append(f" {i + 1}.{name} ", style="dim")
            elif i == self.done:
                text.append(f" ▶{i + 1}.{name} ", style="bold reverse")
            else:
                text.append(f" {i + 1}.{name} ")
        if self.plan and self.done >= len(self.plan):
            text.append("  ✓ done", style="green")
        return text
