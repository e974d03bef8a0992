"""Protocol settings of a run: the paper's defaults and the options beyond them."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields
from typing import Literal


class ProtocolError(ValueError):
    """A protocol option with a bad value; the message says what is allowed."""


@dataclass(frozen=True)
class StartOption:
    """How a run's start state is chosen.

    ``fixed`` is the paper: sticky actions off, so every seed starts from the
    same state and seeds only label repeats. ``noops:N`` runs a seeded 0..N
    NOOP frames after each reset (outside the budget), the classic Mnih et al.
    protocol, so seeds really differ. ``sticky:P`` repeats the previous action
    with probability P (Machado et al.), seeded by the run seed.
    """

    kind: Literal["fixed", "noops", "sticky"] = "fixed"
    value: float = 0

    @classmethod
    def parse(cls, text: str) -> "StartOption":
        t = text.strip().lower()
        if t == "fixed":
            return cls()
        m = re.fullmatch(r"noops:(\d+)", t)
        if m:
            return cls("noops", int(m.group(1)))
        m = re.fullmatch(r"sticky:([0-9]*\.?[0-9]+)", t)
        if m and 0 <= float(m.group(1)) < 1:
            return cls("sticky", float(m.group(1)))
        raise ProtocolError(f"bad --start {text!r}: use fixed, noops:N (e.g. noops:30) or sticky:P with 0<=P<1 (e.g. sticky:0.25)")

    def __str__(self) -> str:
        if self.kind == "fixed":
            return "fixed"
        if self.kind == "noops":
            return f"noops:{int(self.value)}"
        return f"sticky:{self.value:g}"

    @property
    def repeat_action_probability(self) -> float:
        return float(self.value) if self.kind == "sticky" else 0.0


@dataclass(frozen=True)
class Protocol:
    """Everything about a run that the paper's protocol fixes (defaults = the paper)."""

    frames: int = 900  # emulator frames of budget ("30 seconds" on the paper's 30 fps clock)
    repeat: int = 3  # emulator frames per action ("10 Hz control")
    max_actions: int = 10
    memory: Literal["structured", "append"] = "structured"
    history: int = 3  # K recent clips
    reward_history: int = 3  # R reward / life-loss clips
    feedback: bool = True
    clock: Literal["paused", "latency"] = "paused"
    start: StartOption = field(default_factory=StartOption)
    guide: Literal["full", "short"] = "full"

    def __post_init__(self) -> None:
        if self.frames < 1:
            raise ProtocolError(f"--frames must be at least 1 (got {self.frames})")
        if self.repeat < 1:
            raise ProtocolError(f"repeat must be at least 1 (got {self.repeat})")
        if not 1 <= self.max_actions <= 10:
            raise ProtocolError(f"--max-actions must be 1..10 (got {self.max_actions}); the paper uses 10")
        if self.memory not in ("structured", "append"):
            raise ProtocolError(f"--memory must be structured or append (got {self.memory!r})")
        if self.history < 0 or self.reward_history < 0:
            raise ProtocolError("--history and --reward-history must be 0 or more")
        if self.clock not in ("paused", "latency"):
            raise ProtocolError(f"--clock must be paused or latency (got {self.clock!r})")
        if self.guide not in ("full", "short"):
            raise ProtocolError(f"--guide must be full or short (got {self.guide!r})")

    def to_json(self) -> dict:
        d = asdict(self)
        d["start"] = str(self.start)
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Protocol":
        known = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in known}
        if "start" in kw:
            kw["start"] = StartOption.parse(kw["start"])
        return cls(**kw)

    def changed(self) -> dict:
        """Settings that differ from the paper's defaults (for display)."""
        base = Protocol().to_json()
        return {k: v for k, v in self.to_json().items() if base[k] != v}
