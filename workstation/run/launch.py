"""``Launch``: what the TUI opens on, as plain data: one small frozen dataclass per screen.

The CLI and the command modules (batch, compare, session, qa curate, idc, play --vs) build one and
hand it to the door they were given (``args.open_tui``, set by ``workstation.cli``); the TUI reads
it in ``screens.app.make_app``, the only way in, which picks the screen by the launch's type.
Nothing here imports the TUI.

The session, the batch and the match spec are studies' objects, a layer above this one: the
fields that carry them are typed by the small protocols below (what this module reads of them),
and ``screens.app`` checks the real class before it builds the screen.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from workstation.base.errors import UserError
from workstation.base.locations import RECORDINGS

if TYPE_CHECKING:
    from workstation.run.options import RunSpec


class SessionLike(Protocol):
    """A ``workstation.studies.session.Session``: one participant's session in one directory."""

    @property
    def path(self) -> Path: ...


class BatchLike(Protocol):
    """A prepared ``workstation.studies.batch.runner.Batch``; its runs land under ``dir / "runs"``."""

    @property
    def dir(self) -> Path: ...


class MatchSpecLike(Protocol):
    """A checked ``workstation.run.match_start.MatchSpec``: the game, both sides and where the recording goes."""

    @property
    def game(self) -> str: ...

    @property
    def out(self) -> str: ...


class Clock(Protocol):
    """The clock a match screen paces turns by (``screens.drivers.play_driver.Pacer``)."""

    def now(self) -> float: ...

    def wait_until(self, t: float, cancelled: Callable[[], bool]) -> None: ...


@dataclass(frozen=True, kw_only=True)
class _Screen:
    """What every screen has: where recordings are listed and made, and the live view's pace."""

    screen: ClassVar[str]  # the screen's name, named in the class line (``workstation.tui`` names the command by it)
    out: str = RECORDINGS  # where recordings are listed and made
    speed: str = "paper"  # live view pace: paper | fast | instant (tests)

    def __init_subclass__(cls, screen: str = "", **kwargs: Any) -> None:
        """``class HomeLaunch(_Screen, screen="home")``: the launch opens that screen (a base leaves it out)."""
        super().__init_subclass__(**kwargs)
        if screen:
            cls.screen = screen

    def _out_from(self, out: str) -> None:
        """An ``out`` left at its default takes the one the launch's spec or batch names."""
        if self.out == RECORDINGS:
            object.__setattr__(self, "out", out)


@dataclass(frozen=True)
class HomeLaunch(_Screen, screen="home"):
    """The home screen: the run form and the recordings under ``out``."""


@dataclass(frozen=True)
class _RunLaunch(_Screen):
    """A screen that makes one run from a spec: its ``out`` left at the default is the spec's."""

    spec: RunSpec

    def __post_init__(self) -> None:
        self._out_from(self.spec.out)


@dataclass(frozen=True)
class WatchLaunch(_RunLaunch, screen="watch"):
    """A model's run, watched live (``step``: start in step mode)."""

    step: bool = False


@dataclass(frozen=True)
class PlayLaunch(_RunLaunch, screen="play"):
    """A person plays (``window``: in a pygame window)."""

    window: bool = False


@dataclass(frozen=True)
class OpenLaunch(_Screen, screen="open"):
    """A recording, replayed."""

    recording: str | Path


@dataclass(frozen=True)
class CompareLaunch(_Screen, screen="compare"):
    """Recordings side by side."""

    recordings: tuple[str, ...]


@dataclass(frozen=True)
class SessionLaunch(_Screen, screen="session"):
    """A human session to run."""

    session: SessionLike


@dataclass(frozen=True)
class BatchLaunch(_Screen, screen="batch"):
    """A prepared batch, run on the screen; its runs are listed under ``batch.dir / "runs"``."""

    batch: BatchLike

    def __post_init__(self) -> None:
        self._out_from(str(Path(self.batch.dir) / "runs"))


@dataclass(frozen=True)
class QaCurateLaunch(_Screen, screen="qa_curate"):
    """A question set's directory, curated."""

    qa_set: str | Path


@dataclass(frozen=True)
class MatchLaunch(_Screen, screen="match"):
    """A person against a model, or two people on one keyboard (``person`` 0); ``pacer``: the clock (tests)."""

    spec: MatchSpecLike
    person: int
    mode: str
    pace: str
    pacer: Clock | None = None


@dataclass(frozen=True)
class IdcLaunch(_Screen, screen="idc"):
    """An improvement-rounds directory."""

    idc_dir: str | Path


Launch = (HomeLaunch | WatchLaunch | PlayLaunch | OpenLaunch | CompareLaunch | SessionLaunch | BatchLaunch
          | QaCurateLaunch | MatchLaunch | IdcLaunch)
LAUNCHES: tuple[type[Launch], ...] = (HomeLaunch, WatchLaunch, PlayLaunch, OpenLaunch, CompareLaunch, SessionLaunch,
                                      BatchLaunch, QaCurateLaunch, MatchLaunch, IdcLaunch)
SCREENS = tuple(kind.screen for kind in LAUNCHES)


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


__all__ = ["LAUNCHES", "SCREENS", "BatchLaunch", "BatchLike", "Clock", "CompareLaunch", "HomeLaunch", "IdcLaunch",
           "Launch", "MatchLaunch", "MatchSpecLike", "OpenLaunch", "PlayLaunch", "QaCurateLaunch", "SessionLaunch",
           "SessionLike", "WatchLaunch", "require_terminal"]
