"""The prompt exactly as sent: its text (editable in step mode) and its images, each previewable."""

from __future__ import annotations

from typing import Any

import numpy as np
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import OptionList, Static, TextArea
from textual.widgets.option_list import Option

from screens.widgets.alive import unless_leaving
from screens.widgets.frame_view import FrameView
from workstation.base.words import plural
from workstation.engine.prompt import ImagePart


class PromptEditor(TextArea):
    """The prompt's text area: ctrl+end and ctrl+home go to the end and the start of the whole prompt."""

    BINDINGS = [
        Binding("ctrl+end", "document_end", "End of prompt", show=False),
        Binding("ctrl+home", "document_start", "Start of prompt", show=False),
    ]

    def action_document_end(self) -> None:
        self.move_cursor(self.document.end)

    def action_document_start(self) -> None:
        self.move_cursor((0, 0))


def end_of_last_user_part(text: str) -> tuple[int, int]:
    """(row, column) of the end of the last ``=== user ===`` part's text (the end of the text if none)."""
    lines = text.split("\n")
    users = [i for i, line in enumerate(lines) if line.strip() == "=== user ==="]
    if not users:
        return len(lines) - 1, len(lines[-1])
    end = next((i for i in range(users[-1] + 1, len(lines)) if line_is_role(lines[i])), len(lines)) - 1
    while end > users[-1] and not lines[end].strip():  # trailing blank lines belong to no one
        end -= 1
    return end, len(lines[end])


def line_is_role(line: str) -> bool:
    s = line.strip()
    return s in ("=== system ===", "=== user ===", "=== assistant ===")


class PromptView(Vertical):
    """Header (turn, variant, image count), the text, and a list of images with a preview."""

    DEFAULT_CSS = """
    PromptView #prompt-head { height: 1; }
    PromptView #prompt-text { height: 1fr; }
    PromptView #prompt-images { height: 12; }
    PromptView #image-list { width: 3fr; min-width: 22; height: 1fr; }
    PromptView #image-preview { width: 2fr; height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.turn = -1
        self.variant = ""
        self.text = ""
        self.images: list[tuple[ImagePart, np.ndarray | None]] = []

    def compose(self) -> ComposeResult:
        yield Static(Text("no prompt yet", style="dim"), id="prompt-head")
        yield PromptEditor("", read_only=True, soft_wrap=True, id="prompt-text")
        with Horizontal(id="prompt-images"):
            yield OptionList(id="image-list")
            yield FrameView(id="image-preview")

    @property
    def editor(self) -> TextArea:
        return self.query_one("#prompt-text", TextArea)

    def show_prompt(self, turn: int, text: str, variant: str,
                    images: list[tuple[ImagePart, np.ndarray | None]], note: str = "") -> None:
        """Show one turn's prompt; the current-frame image is previewed."""
        self.turn, self.variant, self.text, self.images = turn, variant, text, list(images)
        head = Text()
        head.append(f"turn {turn}", style="bold")
        head.append(f"  {variant}", style="bold yellow" if variant != "standard" else "dim")
        head.append(f"  {plural(len(images), 'image')}  {len(text):,} chars", style="dim")
        if note:
            head.append(f"  {note}", style="italic")
        self.query_one("#prompt-head", Static).update(head)
        editor = self.editor
        if editor.text != text:
            editor.load_text(text)
            editor.move_cursor(end_of_last_user_part(text))  # where an edit usually goes
            self.call_after_refresh(self._scroll_to_user)
        options = self.query_one("#image-list", OptionList)
        options.clear_options()
        options.add_options([
            Option(Text.assemble((f"{p.frame:>4}", "bold"), f" @{p.time} ", (p.label, "dim")))
            for p, _ in images
        ])
        if images:
            options.highlighted = len(images) - 1
            self._preview(len(images) - 1)
        else:
            self.query_one("#image-preview", FrameView).refresh()

    def show_reference(self, turn: int, ref: dict[str, Any], reason: str) -> None:
        """No prompt to show, only the recorded reference (digest, variant, image frames)."""
        frames = ", ".join(str(f) for f in ref.get("images", []))
        text = (f"The prompt of turn {turn} cannot be shown: {reason}\n\n"
                f"digest  {ref.get('digest')}\nvariant {ref.get('variant')}\nimages  frames {frames}\n")
        self.show_prompt(turn, text, ref.get("variant", "?"), [], note="reference only")

    @unless_leaving
    def _scroll_to_user(self) -> None:
        """Put the last user message at the top: the instructions above it rarely change."""
        editor = self.editor
        lines = editor.text.split("\n")
        rows = [i for i, line in enumerate(lines) if line.strip() == "=== user ==="]
        if rows:
            y = editor.wrapped_document.location_to_offset((rows[-1], 0)).y
            editor.scroll_to(y=y, animate=False)

    def set_editable(self, editable: bool) -> None:
        if editable and self.editor.read_only:  # the editor opens at the end of the last user part
            self.editor.move_cursor(end_of_last_user_part(self.editor.text))
        self.editor.read_only = not editable
        self.set_class(editable, "-editing")

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self._preview(event.option_index)

    def _preview(self, index: int) -> None:
        if 0 <= index < len(self.images):
            rgb = self.images[index][1]
            if rgb is not None:
                self.query_one("#image-preview", FrameView).show(rgb, self.images[index][0].frame)
