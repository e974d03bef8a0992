"""The layout the live view and the open view share.

Top to bottom: the run's title, the stats bar, the body (frame and timeline |
prompt as sent | reply and plan) and the status line, each panel with its
border title.
"""

from __future__ import annotations

from typing import Any, TypeVar

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Static

from screens.widgets.frame_view import FrameView
from screens.widgets.plan_view import PlanView
from screens.widgets.prompt_view import PromptView
from screens.widgets.reply_view import ReplyView
from screens.widgets.stats_bar import StatsBar
from screens.widgets.timeline import TimelineBar

W = TypeVar("W", bound=Widget)


def protocol_label(changed: dict[str, object]) -> str:
    """``paper protocol``, or the settings that differ from the paper's."""
    if not changed:
        return "paper protocol"
    return "protocol " + ", ".join(f"{k}={v}" for k, v in changed.items())


def turn_label(turn: int, n_turns: int) -> str:
    """``turn 145 (146 of 146)``: turns are numbered from 0 everywhere (recordings, step mode, branches), and the
    count in brackets agrees with the title's ``146 turns``."""
    return f"turn {turn} ({turn + 1} of {n_turns})"


def titled(widget: W, title: str) -> W:
    """``widget`` with ``title`` on its border."""
    widget.border_title = title
    return widget


def blur_or_leave(screen: Screen[Any], can_go_back: bool) -> None:
    """Escape on a run screen: first leave the focused field (prompt text, override box, a list), then the screen.

    A screen that cannot go back (``workstation watch`` / ``open``) ends the app instead.
    """
    if screen.focused is not None:
        screen.set_focus(None)
    else:
        leave(screen, can_go_back)


def leave(screen: Screen[Any], can_go_back: bool, result: Any = None) -> None:
    """Leave ``screen`` for the one below it, handing it ``result``; a screen opened straight from a command
    (``can_go_back`` False) has none below it: the app ends."""
    if can_go_back:
        screen.dismiss(result)
    else:
        screen.app.exit()


def compose_run(title: str, frame_view: FrameView, *below_plan: Widget) -> ComposeResult:
    """The run screen's widgets; ``below_plan`` go under the plan in the right column."""
    yield Static(Text(title, style="bold"), id="title")
    yield StatsBar(id="stats")
    with Horizontal(id="body"):
        with titled(Vertical(id="left"), "frame"):
            yield frame_view
            yield TimelineBar(id="timeline")
        yield titled(PromptView(id="prompt"), "prompt as sent")
        with Vertical(id="right"):
            yield titled(ReplyView(id="reply"), "thought and reply")
            yield titled(PlanView(id="plan"), "plan")
            yield from below_plan
    yield Static(id="status")
    yield Footer()
