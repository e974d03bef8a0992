"""The types of one agent call, shared by agents, providers, the engine and QA.

``Usage``, ``Attempt`` and ``Reply`` say what a call cost and how it went.
``CancelToken`` and ``Deadline`` let a caller end a call that is under way:
every wait made on a call's behalf (the concurrency limit, a retry backoff, a
reply still streaming) wakes as soon as the token is cancelled, and none runs
past the deadline. ``call_agent`` hands both to an agent whose ``act`` takes
them. This module imports neither ``agents`` nor ``providers``; both import it.
"""

from __future__ import annotations

import inspect
import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workstation.game.games import Game

OnText = Callable[[str], None]

CANCELLED = "cancelled"  # how a cancelled call's Reply.error begins


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

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens, self.cache_read_tokens + other.cache_read_tokens,
                     self.cache_write_tokens + other.cache_write_tokens, self.output_tokens + other.output_tokens,
                     self.reasoning_tokens + other.reasoning_tokens)

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Attempt:
    """One try at a call: how it ended and how long we waited before the next."""

    ok: bool
    # "rate_limit" | "transient" | "fatal" | "empty" | "blocked" | "truncated" | "cancelled" | "deadline"
    error_class: str | None = None
    error: str | None = None  # one line, never containing a key
    status: int | None = None
    wait_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class ToolSpec:
    """A tool offered to a model: its name, what it does, and its arguments as a JSON schema object."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})


@dataclass
class ToolCall:
    """One call a model asked for, the same whatever the wire format.

    ``arguments`` is the parsed JSON object (``{}`` when the model sent none);
    ``error`` says why its arguments could not be read (the call is still
    answered, with that error). ``meta`` keeps what a provider needs to see again
    in the next request (Gemini's thought signature).
    """

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "name": self.name, "arguments": self.arguments}
        if self.error:
            d["error"] = self.error
        return d


@dataclass
class ToolResult:
    """What a tool gave back for one call: text, PNG images, and whether it failed."""

    call_id: str
    name: str
    text: str
    images: list[bytes] = field(default_factory=list)
    is_error: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"call_id": self.call_id, "name": self.name, "text": self.text, "images": len(self.images),
                "is_error": self.is_error}


def parse_arguments(raw: str | dict[str, Any] | None) -> tuple[dict[str, Any], str | None]:
    """A tool call's arguments as a dict, and the problem when they are not a JSON object."""
    import json

    if raw is None or raw == "":
        return {}, None
    if isinstance(raw, dict):
        return dict(raw), None
    try:
        value = json.loads(raw)
        if isinstance(value, str) and value.lstrip().startswith("{"):
            value = json.loads(value)  # some servers encode the object twice: a JSON string holding it
    except json.JSONDecodeError as e:
        return {}, f"the arguments are not valid JSON ({e.msg} at character {e.pos})"
    if not isinstance(value, dict):
        return {}, f"the arguments must be a JSON object, not {type(value).__name__}"
    return value, None


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
    cancelled: bool = False  # the caller cancelled the call; ``error`` says "cancelled: <why>"
    tool_calls: list[ToolCall] = field(default_factory=list)  # calls asked for, when tools were offered

    @classmethod
    def cancelled_reply(cls, reason: str | None, **fields: Any) -> Reply:
        """The reply of a call its caller cancelled (usage and attempts so far in ``fields``)."""
        return cls(text="", error=f"{CANCELLED}: {reason or 'stopped'}", cancelled=True, **fields)


class FatalAgentError(RuntimeError):
    """The agent cannot go on (bad key, exhausted quota, unknown model, no server): stop the run.

    The message is one line a user can act on and never contains a key.
    ``reply`` is the account of the failed call (attempts, usage), when the agent kept one.
    """

    def __init__(self, message: str, reply: Reply | None = None) -> None:
        super().__init__(message)
        self.reply = reply


@dataclass
class TurnContext:
    game: Game
    turn: int
    max_actions: int
    frame: int  # budget frames used so far


# -- stopping a call -------------------------------------------------------

class CallStopped(Exception):
    """A wait made for a call ended early: the caller cancelled, or the deadline passed."""


class CallCancelled(CallStopped):
    def __init__(self, reason: str | None) -> None:
        super().__init__(f"{CANCELLED}: {reason or 'stopped'}")
        self.reason = reason


class DeadlinePassed(CallStopped):
    def __init__(self) -> None:
        super().__init__("the call's deadline passed")


class CancelToken:
    """Cancelled once, from any thread (a stop key, quit, a cost cap); waits on it wake at once."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self.reason: str | None = None
        self._callbacks: dict[int, Callable[[], None]] = {}
        self._next = 0

    def cancel(self, reason: str = "stopped by the user") -> None:
        """Cancel with ``reason`` (the first reason given is kept)."""
        with self._lock:
            if self._event.is_set():
                return
            self.reason = reason
            self._event.set()
            callbacks, self._callbacks = list(self._callbacks.values()), {}
        for f in callbacks:
            f()

    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` once when cancelled (now, if it is already); returns the unsubscribe function.
        A waiter then sleeps until its work or the cancel arrives, instead of waking to look."""
        with self._lock:
            if not self._event.is_set():
                key, self._next = self._next, self._next + 1
                self._callbacks[key] = callback
                return lambda: self._unsubscribe(key)
        callback()
        return lambda: None

    def _unsubscribe(self, key: int) -> None:
        with self._lock:
            self._callbacks.pop(key, None)

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; True (early) as soon as the token is cancelled."""
        return self._event.wait(max(0.0, seconds))

    def check(self) -> None:
        """Raise ``CallCancelled`` if cancelled."""
        if self._event.is_set():
            raise CallCancelled(self.reason)


@dataclass(frozen=True)
class Deadline:
    """A point in time on ``clock`` (monotonic seconds) a call must not wait past; ``at=None``: never."""

    at: float | None = None
    clock: Callable[[], float] = time.monotonic

    @classmethod
    def after(cls, seconds: float, clock: Callable[[], float] = time.monotonic) -> Deadline:
        return cls(clock() + seconds, clock)

    def remaining(self) -> float:
        """Seconds left (never negative; infinite for no deadline)."""
        return math.inf if self.at is None else max(0.0, self.at - self.clock())

    @property
    def expired(self) -> bool:
        return self.at is not None and self.clock() >= self.at

    def check(self) -> None:
        """Raise ``DeadlinePassed`` if the deadline has passed."""
        if self.expired:
            raise DeadlinePassed()


NO_DEADLINE = Deadline()


def pause(seconds: float, cancel: CancelToken | None = None, deadline: Deadline | None = None) -> None:
    """Sleep ``seconds``, ending early with ``CallCancelled`` or, at the deadline, ``DeadlinePassed``."""
    deadline = deadline or NO_DEADLINE
    if cancel is not None:
        cancel.check()
    deadline.check()
    left = min(seconds, deadline.remaining())
    if cancel is not None and cancel.wait(left):
        raise CallCancelled(cancel.reason)
    if cancel is None:
        time.sleep(max(0.0, left))
    if left < seconds:
        raise DeadlinePassed()


# -- calling an agent ------------------------------------------------------

_TAKES_CANCEL: dict[type, bool] = {}


def takes_cancel(agent: Any) -> bool:
    """Whether ``agent.act`` accepts ``cancel=`` and ``deadline=`` (agents written before them do not)."""
    kind = type(agent)
    if kind not in _TAKES_CANCEL:
        try:
            params: Mapping[str, inspect.Parameter] = inspect.signature(agent.act).parameters
        except (TypeError, ValueError):
            params = {}
        _TAKES_CANCEL[kind] = (any(p.kind is p.VAR_KEYWORD for p in params.values())
                               or {"cancel", "deadline"} <= set(params))
    return _TAKES_CANCEL[kind]


def call_agent(agent: Any, prompt: Any, ctx: TurnContext, on_text: OnText | None = None, *,
               cancel: CancelToken | None = None, deadline: Deadline | None = None) -> Reply:
    """``agent.act`` under a cancel token and deadline.

    A token already cancelled gives a cancelled Reply without calling the agent.
    Agents whose ``act`` takes no ``cancel``/``deadline`` (they answer at once)
    are called without them.
    """
    if cancel is not None and cancel.cancelled:
        return Reply.cancelled_reply(cancel.reason)
    reply: Reply
    if takes_cancel(agent):
        reply = agent.act(prompt, ctx, on_text, cancel=cancel, deadline=deadline)
    else:
        reply = agent.act(prompt, ctx, on_text)
    return reply


__all__ = [
    "CANCELLED", "Attempt", "CallCancelled", "CallStopped", "CancelToken", "Deadline", "DeadlinePassed",
    "FatalAgentError", "NO_DEADLINE", "OnText", "Reply", "ToolCall", "ToolResult", "ToolSpec", "TurnContext",
    "Usage", "call_agent", "parse_arguments", "pause", "takes_cancel",
]
