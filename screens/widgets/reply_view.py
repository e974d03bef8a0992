"""The reply: the thought as it streams in, then the raw reply and what the parser made of it."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from workstation.engine.parser import ParseResult

WAITING = "waiting for the reply…"
NOT_SENT = "not sent yet: g sends the prompt (tab into it to edit it first; o overrides with your own plan)"
BY_HAND = "no reply: the plan was set by hand before the prompt was sent; the agent was not asked"


class ReplyView(VerticalScroll):
    """Streamed text while the model answers; thought, raw reply and parse once it has."""

    DEFAULT_CSS = """
    ReplyView > Static { width: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.streamed = ""
        self.thought = ""
        self.raw = ""
        self.parse: ParseResult | None = None
        self.note = ""
        self.idle = WAITING  # what the panel says while it has nothing else
        self._body = Static(Text("waiting for the first turn", style="dim"))

    def compose(self) -> ComposeResult:
        yield self._body

    def begin(self, note: str = "", idle: str = "") -> None:
        """A new turn: clear everything. ``idle`` says what the empty panel waits for (default: the reply)."""
        self.streamed, self.thought, self.raw, self.parse, self.note = "", "", "", None, note
        self.idle = idle or WAITING
        self._refresh()

    def append(self, text: str) -> None:
        self.streamed += text
        self._refresh()
        self.scroll_end(animate=False)

    def show_reply(self, raw: str, error: str | None = None) -> None:
        self.raw = raw
        self.note = (error if error.startswith("no usable reply") else f"no usable reply: {error}") if error else ""
        self._refresh()

    def show_parse(self, parse: ParseResult | None, thought: str | None = None) -> None:
        self.parse = parse
        self.thought = thought if thought is not None else (parse.thought if parse else "")
        self._refresh()

    def set_note(self, note: str) -> None:
        self.note = note
        self._refresh()

    def _refresh(self) -> None:
        text = Text()
        if self.note:
            text.append(self.note + "\n\n", style="italic yellow")
        if self.thought:
            text.append("thought ", style="bold cyan")
            text.append(self.thought + "\n\n")
        elif self.streamed and not self.raw:
            text.append("streaming…\n", style="bold cyan")
            text.append(self.streamed + "\n\n")
        if self.raw:
            text.append("raw reply\n", style="bold")
            text.append(self.raw.rstrip() + "\n\n", style="grey70")
        p = self.parse
        if p is not None:
            text.append("parse ", style="bold")
            if p.valid:
                text.append("valid", style="green")
                text.append(f"  [{', '.join(p.names)}]\n")
            else:
                text.append(f"invalid ({p.rule})", style="bold red")
                text.append("\n")
                for e in p.errors:
                    text.append(f"  {e}\n", style="red")
        if not text:
            text.append(self.idle, style="dim")
        self._body.update(text)
