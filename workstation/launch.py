"""``Launch``: what the TUI opens on, as plain data.

The CLI and the command modules (batch, compare, session, qa curate) build one and hand it
to the door they were given (``args.open_tui``, set by ``workstation.cli``); the TUI reads
it in ``screens.app.make_app``, the only way in. Nothing here imports the TUI.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workstation.locations import RECORDINGS

if TYPE_CHECKING:
    from workstation.options import RunSpec

# home | watch | play | open | compare | session | batch (a running batch) | qa_curate (a question set)
SCREENS = ("home", "watch", "play", "open", "compare", "session", "batch", "qa_curate")


@dataclass(frozen=True)
class Launch:
    """A screen, and what it shows: the run spec (watch, play), the recording (open), ...

    The CLI builds one from its arguments (``workstation.options.spec_from_args``);
    a batch or a test builds one from a ``RunSpec`` directly.
    """

    screen: str = "home"
    spec: RunSpec | None = None
    recording: str | Path | None = None
    step: bool = False  # watch: start in step mode
    window: bool = False  # play: in a pygame window
    speed: str = "paper"  # live view pace: paper | fast | instant (tests)
    out: str = RECORDINGS  # home: where recordings are listed and made
    recordings: tuple[str, ...] = ()  # compare: the recordings side by side
    session: Any = None  # session: a workstation.session.Session to run
    batch: Any = None  # batch: a prepared workstation.batch.runner.Batch, run on the screen
    qa_set: str | Path | None = None  # qa_curate: the question set's directory

    def __post_init__(self) -> None:
        if self.screen not in SCREENS:
            raise ValueError(f"unknown screen {self.screen!r}: use {', '.join(SCREENS)}")
        if self.spec is not None and self.out == RECORDINGS:
            object.__setattr__(self, "out", self.spec.out)
        if self.batch is not None and self.out == RECORDINGS:
            object.__setattr__(self, "out", str(Path(self.batch.dir) / "runs"))


__all__ = ["SCREENS", "Launch"]
