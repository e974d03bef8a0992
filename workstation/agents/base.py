"""The one small interface every agent implements: prompt in, reply text out.

An agent never sees the emulator, the RAM or the score: only the Prompt. It
returns a Reply carrying the raw text plus how it was obtained (usage, latency,
cost, every attempt). The engine parses the text; agents never choose action ids.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol

from workstation.game.games import Game
from workstation.turn.prompt import Prompt


@dataclass
class Usage:
    """Token counts normalised as Inspect AI does.

    ``input_tokens`` is uncached input; cache reads and writes are separate;
    ``output_tokens`` includes reasoning; ``reasoning_tokens`` is the subset of
    output spent thinking.
    """

    input_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def total_input(self) -> int:
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(self.input_tokens + other.input_tokens, self.cache_read_tokens + other.cache_read_tokens,
                     self.cache_write_tokens + other.cache_write_tokens, self.output_tokens + other.output_tokens,
                     self.reasoning_tokens + other.reasoning_tokens)

    def to_json(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Attempt:
    """One try at a call: how it ended and how long we waited before the next."""

    ok: bool
    error_class: str | None = None  # "rate_limit" | "transient" | "fatal" | "empty" | "blocked" | "truncated"
    error: str | None = None  # one line, never containing a key
    status: int | None = None
    wait_s: float = 0.0

    def to_json(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Reply:
    text: str
    usage: Usage | None = None
    latency_s: float = 0.0
    cost_usd: float | None = None
    attempts: list[Attempt] = field(default_factory=list)
    error: str | None = None  # set when no usable text came back (the turn becomes one NOOP)
    finish_reason: str | None = None
    model: str | None = None
    request_id: str | None = None


class FatalAgentError(RuntimeError):
    """The agent cannot go on (bad key, exhausted quota, unknown model): stop the run.

    The message is one line a user can act on and never contains a key.
    """


@dataclass
class TurnContext:
    game: Game
    turn: int
    max_actions: int
    frame: int  # budget frames used so far


OnText = Callable[[str], None]


class Agent(Protocol):
    spec: str  # how it was named on the command line: "random", "openai:gpt-5.1"

    def act(self, prompt: Prompt, ctx: TurnContext, on_text: OnText | None = None) -> Reply:
        """Answer one turn. ``on_text`` receives streamed text deltas, if any."""
        ...

    def close(self) -> None: ...

    def describe(self) -> dict:
        """What the manifest records about this agent (no secrets)."""
        ...
