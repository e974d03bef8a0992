"""Protocol settings of a run: the paper's defaults and the options beyond them.

``SETTINGS`` declares every protocol field once (name, type, default, bounds,
choices, help). ``Protocol`` checks itself against it, the CLI's arguments and
the home screen's form are generated from it (see ``workstation.run.options``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

from workstation.base.errors import UserError

MAX_FRAMES = 108_000  # the emulator's own episode cap (30 minutes at 60 Hz); the paper uses 900
MAX_NOOPS = 1_000  # noops:N starts: at most this many NOOP frames (the classic protocol uses 30)
MAX_CLIPS = 50  # history K and reward history R: clips kept in a prompt (the paper uses 3)
MAX_REPEAT = 60  # emulator frames per action (the paper uses 3)
CLOCKS = ("paused", "latency", "latency:server")  # latency:server = clock "latency" + clock_source "server"


class ProtocolError(UserError, ValueError):
    """A protocol option with a bad value; the message says what is allowed.

    ``field`` names the setting at fault (``max_actions``), for forms and batch grids.
    """


@dataclass(frozen=True)
class Setting:
    """One declared option: what it is called, its type, default, bounds and help.

    ``flag`` is the command-line spelling; ``label`` the home form's. A ``bool``
    setting whose default is True is offered as ``--no-NAME`` on the command line.
    """

    name: str
    type: type
    default: Any
    help: str
    label: str = ""
    lo: float | None = None
    hi: float | None = None
    choices: tuple[str, ...] | None = None
    parse: Callable[[str], Any] | None = None  # text -> value, for settings that are not plain numbers
    metavar: str | None = None
    cli: bool = True  # offered on the command line and in the form
    form: bool = True  # offered in the home screen's form too (variants are for the CLI and grids)
    note: str = ""  # appended to a bounds message ("the paper uses 10")

    @property
    def flag(self) -> str:
        stem = self.name.replace("_", "-")
        return f"--no-{stem}" if self.type is bool and self.default is True else f"--{stem}"

    @property
    def title(self) -> str:
        return self.label or self.name.replace("_", " ")

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is not allowed here (one line naming the flag), or None."""
        if value is None and self.default is None:
            return None
        if self.type is int:
            if isinstance(value, bool) or not isinstance(value, int):
                return f"{self.flag} must be a whole number (got {value!r})"
        elif self.type is float:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                return f"{self.flag} must be a number (got {value!r})"
        elif self.type is bool:
            if not isinstance(value, bool):
                return f"{self.flag}: expected true or false (got {value!r})"
        elif self.type is str and not isinstance(value, str):
            return f"{self.flag} must be text (got {value!r})"
        if self.choices is not None and value not in self.choices:
            allowed = " or ".join(self.choices) if len(self.choices) <= 3 else "one of " + ", ".join(self.choices)
            return f"{self.flag} must be {allowed} (got {value!r})"
        if self.type in (int, float):
            lo, hi = self.lo, self.hi
            note = f"; {self.note}" if self.note else ""
            if lo is not None and hi is not None and not lo <= value <= hi:
                return f"{self.flag} must be {_num(lo)}..{_num(hi)} (got {_num(value)}){note}"
            if lo is not None and hi is None and value < lo:
                return f"{self.flag} must be at least {_num(lo)} (got {_num(value)}){note}"
        return None

    def from_text(self, text: str) -> Any:
        """The value typed in a form or a grid cell; ProtocolError naming the field when it does not read."""
        t = text.strip()
        try:
            if self.parse is not None:
                return self.parse(t)
            if self.type is int:
                return int(t)
            if self.type is float:
                return float(t)
            if self.type is bool:
                return {"true": True, "yes": True, "on": True, "1": True,
                        "false": False, "no": False, "off": False, "0": False}[t.lower()]
        except ProtocolError as e:
            raise ProtocolError(str(e), self.name) from None
        except (ValueError, KeyError):
            kind = {int: "a whole number", float: "a number", bool: "true or false"}[self.type]
            raise ProtocolError(f"{self.flag} must be {kind} (got {text!r})", self.name) from None
        return t


def _num(v: float) -> str:
    return str(v) if isinstance(v, int) else f"{v:g}"


@dataclass(frozen=True)
class StartOption:
    """How a run's start state is chosen.

    ``fixed`` is the paper: sticky actions off, so every seed starts from the
    same state and seeds only label repeats. ``noops:N`` runs a seeded 0..N
    NOOP frames after each reset (outside the budget), the classic Mnih et al.
    protocol, so seeds really differ (N up to ``MAX_NOOPS``). ``sticky:P``
    repeats the previous action with probability P (Machado et al.), seeded by
    the run seed.
    """

    kind: Literal["fixed", "noops", "sticky"] = "fixed"
    value: float = 0

    def __post_init__(self) -> None:
        if self.kind == "noops" and not (float(self.value).is_integer() and 0 <= self.value <= MAX_NOOPS):
            raise ProtocolError(f"bad --start noops:{self.value:g}: N must be a whole number 0..{MAX_NOOPS} "
                                "(e.g. noops:30)", "start")
        if self.kind == "sticky" and not 0 <= self.value < 1:
            raise ProtocolError(f"bad --start sticky:{self.value:g}: use 0<=P<1 (e.g. sticky:0.25)", "start")
        if self.kind not in ("fixed", "noops", "sticky"):
            raise ProtocolError(f"bad --start kind {self.kind!r}: use fixed, noops:N or sticky:P", "start")

    @classmethod
    def parse(cls, text: str) -> StartOption:
        t = text.strip().lower()
        if t == "fixed":
            return cls()
        m = re.fullmatch(r"noops:(\d+)", t)
        if m:
            return cls("noops", int(m.group(1)))
        m = re.fullmatch(r"sticky:([0-9]*\.?[0-9]+)", t)
        if m and 0 <= float(m.group(1)) < 1:
            return cls("sticky", float(m.group(1)))
        raise ProtocolError(f"bad --start {text!r}: use fixed, noops:N (N 0..{MAX_NOOPS}, e.g. noops:30) or "
                            "sticky:P with 0<=P<1 (e.g. sticky:0.25)", "start")

    def __str__(self) -> str:
        if self.kind == "fixed":
            return "fixed"
        if self.kind == "noops":
            return f"noops:{int(self.value)}"
        return f"sticky:{self.value:g}"

    @property
    def repeat_action_probability(self) -> float:
        return float(self.value) if self.kind == "sticky" else 0.0


# The protocol's settings, declared once. Order = the order of the CLI's help and the home form.
SETTINGS: tuple[Setting, ...] = (
    Setting("frames", int, 900, f"frame budget, 1..{MAX_FRAMES} (the emulator's episode cap); "
            "default 900 = 30 s on the paper clock", lo=1, hi=MAX_FRAMES, metavar="N"),
    Setting("repeat", int, 3, "emulator frames per action (the paper: 3, '10 Hz control')", lo=1, hi=MAX_REPEAT,
            cli=False),
    Setting("max_actions", int, 10, "actions per reply, 1..10 (default 10)", label="max actions", lo=1, hi=10,
            metavar="N", note="the paper uses 10"),
    Setting("memory", str, "structured", "structured (K recent + R reward clips, the paper) or append (every turn)",
            choices=("structured", "append")),
    Setting("history", int, 3, f"K recent clips in each prompt, 0..{MAX_CLIPS} (default 3)", label="history K",
            lo=0, hi=MAX_CLIPS, metavar="K"),
    Setting("reward_history", int, 3, f"R reward/life-loss clips, 0..{MAX_CLIPS} (default 3)", label="rewarded R",
            lo=0, hi=MAX_CLIPS, metavar="R"),
    Setting("feedback", bool, True, "turn the textual reward/life-loss feedback notices off"),
    Setting("clock", str, "paused", "paused (the game waits for the model, the paper), latency (the game runs "
            "NOOPs for the model's thinking time, as the wall clock measured it) or latency:server (for the "
            "inference time the server reports, llama.cpp's timings; wall time where a reply has none)",
            choices=CLOCKS),
    Setting("start", StartOption, StartOption(), f"fixed (the paper) | noops:N (N 0..{MAX_NOOPS}) | sticky:P (0<=P<1)",
            parse=StartOption.parse, metavar="START"),
    Setting("guide", str, "full", "the game guide: full or short (the pack's guides), or an instruction level: "
            "visual (goal, play, appearance), steps (goal, play) or goal (the goal only)",
            choices=("full", "short", "visual", "steps", "goal")),
    Setting("game_mode", int, None, "the ALE game mode, for a held-out variant of the game as a transfer test "
            "(default: the game's own; `workstation games --variants` lists each game's)", label="game mode",
            lo=0, hi=255, metavar="N", form=False),
    Setting("game_difficulty", int, None, "the ALE difficulty switch, for a held-out variant (default: the "
            "game's own)", label="difficulty", lo=0, hi=255, metavar="N", form=False),
    Setting("clock_source", str, "wall", "what the latency clock charges: wall (the time the call took) or server "
            "(the server's own inference time); set by --clock latency:server", choices=("wall", "server"),
            cli=False, form=False),
)
SETTING = {s.name: s for s in SETTINGS}
VARIANT_KEYS = ("game_mode", "game_difficulty")  # the game variant; a grid may call them mode / difficulty


@dataclass(frozen=True)
class Protocol:
    """Everything about a run that the paper's protocol fixes (defaults = the paper; see ``SETTINGS``)."""

    frames: int = 900  # emulator frames of budget ("30 seconds" on the paper's 30 fps clock)
    repeat: int = 3  # emulator frames per action ("10 Hz control")
    max_actions: int = 10
    memory: Literal["structured", "append"] = "structured"
    history: int = 3  # K recent clips
    reward_history: int = 3  # R reward / life-loss clips
    feedback: bool = True
    clock: Literal["paused", "latency", "latency:server"] = "paused"  # latency:server is kept as the two below
    start: StartOption = field(default_factory=StartOption)
    guide: Literal["full", "short", "visual", "steps", "goal"] = "full"
    game_mode: int | None = None  # the ALE mode / difficulty: None = the game's default (the paper)
    game_difficulty: int | None = None
    clock_source: Literal["wall", "server"] = "wall"  # what the latency clock charges (written only when server)

    def __post_init__(self) -> None:
        if self.clock == "latency:server":  # one value on the command line, two fields here
            object.__setattr__(self, "clock", "latency")
            object.__setattr__(self, "clock_source", "server")
        elif self.clock == "paused" and self.clock_source == "server":  # only the latency clock charges time
            object.__setattr__(self, "clock_source", "wall")
        for s in SETTINGS:
            value = getattr(self, s.name)
            if s.type is StartOption:
                if not isinstance(value, StartOption):
                    raise ProtocolError(f"bad --start {value!r}: pass a StartOption (StartOption.parse('noops:30'))",
                                        s.name)
                continue
            why = s.problem(value)
            if why:
                raise ProtocolError(why, s.name)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["start"] = str(self.start)
        for key in VARIANT_KEYS:  # written only when set, so every run made before them keeps its run id
            if d[key] is None:
                del d[key]
        if d.pop("clock_source") == "server":  # likewise: a wall-clock run keeps its run id
            d["clock"] = "latency:server"
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Protocol:
        if not isinstance(d, dict):
            raise ProtocolError(f"the protocol is {type(d).__name__}, not an object of settings")
        known = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in known}
        if "start" in kw:
            kw["start"] = StartOption.parse(kw["start"])
        return cls(**kw)

    def changed(self) -> dict[str, Any]:
        """Settings that differ from the paper's defaults (for display)."""
        base = Protocol().to_json()
        return {k: v for k, v in self.to_json().items() if base.get(k) != v}


assert [s.name for s in SETTINGS] == [f.name for f in fields(Protocol)], "declare every protocol field once"
