"""``Launch``: what the TUI opens on, as plain data.

The CLI and the command modules (batch, compare, session, qa curate) build one and hand it
to the door they were given (``args.open_tui``, set by ``workstation.cli``); the TUI reads
it in ``screens.app.make_app``, the only way in. Nothing here imports the TUI.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workstation.errors import UserError
from workstation.locations import RECORDINGS

if TYPE_CHECKING:
    from workstation.options import RunSpec

# home | watch | play | open | compare | session | batch (a running batch) | qa_curate (a question set)
# | match (a person against a model) | idc (improvement rounds)
SCREENS = ("home", "watch", "play", "open", "compare", "session", "batch", "qa_curate", "match", "idc")


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
    match: Any = None  # match: {"spec": MatchSpec, "person": side, "mode": ..., "pace": ...}
    idc_dir: str | Path | None = None  # idc: an improvement-rounds directory

    def __post_init__(self) -> None:
        if self.screen not in SCREENS:
            raise ValueError(f"unknown screen {self.screen!r}: use {', '.join(SCREENS)}")
        if self.spec is not None and self.out == RECORDINGS:
            object.__setattr__(self, "out", self.spec.out)
        if self.batch is not None and self.out == RECORDINGS:
            object.__setattr__(self, "out", str(Path(self.batch.dir) / "runs"))


def require_terminal(what: str) -> None:
    """Refuse (one line, exit 2) to open a screen when stdin or stdout is not a terminal: a piped or
    redirected TUI would play on with nobody at the keys (a human baseline of NOOPs) or print escapes."""

    def tty(stream: Any) -> bool:
        try:
            return bool(stream is not None and stream.isatty())
        except (ValueError, OSError):  # closed or detached
            return False

    missing = [name for name, stream in (("stdin", sys.stdin), ("stdout", sys.stdout)) if not tty(stream)]
    if missing:
        shown = f"workstation {what}".rstrip()  # "": plain `workstation`, the home screen
        headless = "" if what else " (the commands of `workstation --help` need none)"
        raise UserError(f"`{shown}` opens the TUI and needs a terminal, but {' and '.join(missing)} "
                        f"{'is' if len(missing) == 1 else 'are'} not one; run it in a terminal, not piped or "
                        f"redirected{headless}")


__all__ = ["SCREENS", "Launch", "require_terminal"]
