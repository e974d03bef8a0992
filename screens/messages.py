"""App-wide messages: what the engine's worker tells the screens, and what screens ask the app.

Engine messages are posted from the worker thread (``post_message`` is
thread-safe) and carry copies of whatever the UI needs, so the UI never reads
engine state while the worker runs. ``EngineProgress`` replaces a queued one of
its kind: a slow terminal shows the latest figures instead of lagging.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from textual.message import Message
from textual.notifications import SeverityLevel

from workstation.engine.calls import Reply
from workstation.engine.memory import Step
from workstation.engine.parser import ParseResult
from workstation.engine.prompt import ImagePart, Prompt
from workstation.store.series import FrameStats


@dataclass(frozen=True)
class BarStats(FrameStats):
    """The figures of the stats bar at one moment: a run's ``FrameStats`` and the engine's phase."""

    phase: str = "ready"


class EnginePrompt(Message):
    """A prompt was built (or edited, or swapped); ``images`` pairs each image part with its pixels."""

    def __init__(self, turn: int, prompt: Prompt, variant: str, images: list[tuple[ImagePart, np.ndarray | None]]):
        super().__init__()
        self.turn, self.prompt, self.variant, self.images = turn, prompt, variant, images


class EngineText(Message):
    """A piece of streamed reply text."""

    def __init__(self, turn: int, text: str):
        super().__init__()
        self.turn, self.text = turn, text


class EngineReply(Message):
    def __init__(self, turn: int, reply: Reply):
        super().__init__()
        self.turn, self.reply = turn, reply


class EnginePlan(Message):
    """The turn's plan; ``by_hand`` when a person typed it before the prompt was sent (the agent was not asked)."""

    def __init__(self, turn: int, parse: ParseResult, plan: list[str], overridden: bool, by_hand: bool = False):
        super().__init__()
        self.turn, self.parse, self.plan, self.overridden = turn, parse, plan, overridden
        self.by_hand = by_hand


class EngineAction(Message):
    def __init__(self, turn: int, index: int, step: Step):
        super().__init__()
        self.turn, self.index, self.step = turn, index, step


class EngineTurn(Message):
    """A turn ended; ``record`` is the line written to turns.jsonl."""

    def __init__(self, turn: int, record: dict[str, Any]):
        super().__init__()
        self.turn, self.record = turn, record


class EngineFinished(Message):
    """The run ended (budget used, stopped, or a fatal agent error in ``summary["stopped"]``)."""

    def __init__(self, turn: int, summary: dict[str, Any], path: Path | None):
        super().__init__()
        self.turn, self.summary, self.path = turn, summary, path


class RecordingClosed(Message):
    """A run's recording is closed at ``path``, posted to the app: a run changed by hand has just been renamed
    for its own run id, often after its screen was left, so a list of recordings (home's) reads the disk again."""

    def __init__(self, path: Path | None):
        super().__init__()
        self.path = path


class EngineProgress(Message):
    """Latest figures; a newer one replaces it while queued."""

    def __init__(self, stats: BarStats):
        super().__init__()
        self.stats = stats

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, EngineProgress)


class EngineWaiting(Message):
    """Step mode: the worker holds at ``phase`` of ``turn`` until told to go on."""

    def __init__(self, turn: int, phase: str, actions_done: int):
        super().__init__()
        self.turn, self.phase, self.actions_done = turn, phase, actions_done


class EngineBranched(Message):
    """The run was rewound to the start of ``turn`` and goes on in the recording at ``path``."""

    def __init__(self, turn: int, frame: int, path: Path):
        super().__init__()
        self.turn, self.frame, self.path = turn, frame, path


class EngineNotice(Message):
    """A command could not be carried out (bad action name, wrong phase): shown, not raised."""

    def __init__(self, text: str, severity: SeverityLevel = "warning"):
        super().__init__()
        self.text, self.severity = text, severity


class StartRun(Message):
    """Home asks the app to start a run: ``kind`` is watch, step or play."""

    def __init__(self, kind: str, settings: dict[str, Any]):
        super().__init__()
        self.kind, self.settings = kind, settings


class OpenRecording(Message):
    """Home asks the app to open a recording."""

    def __init__(self, path: Path):
        super().__init__()
        self.path = path


# A command palette entry: (name, help text, what it runs). Every screen's ``palette_commands`` returns these.
PaletteCommand = tuple[str, str, Callable[[], object]]
