"""Cancelling a model call, and deadlines: real SDKs over HTTP to the fake provider.

A cancel from another thread ends the call within about a second wherever it
waits: in a 60 s retry-after backoff, while the reply hangs, or for a slot of
the concurrency limit. Bounds are generous (a few seconds) and far below the
waits they cut short, so a loaded machine does not make them flaky.
"""

from __future__ import annotations

import threading
import time

import pytest

from tests.fake_provider import DEFAULT_TEXT, SPECS, Step, wait_until
from workstation.engine.calls import CallCancelled, CancelToken, Deadline, DeadlinePassed, TurnContext, call_agent
from workstation.engine.prompt import ImagePart, Message, Prompt, TextPart
from workstation.game.games import get_game
from workstation.run.providers.limiter import AdaptiveLimiter

CTX = TurnContext(get_game("breakout"), turn=0, max_actions=10, frame=0)
BOUND_S = 10.0  # "within about a second", with room for a busy machine; the waits cut short are 30-60 s
RATE_LIMITED = Step("status", 429, {"retry-after": "60"},
                    {"type": "error", "error": {"message": "slow down", "type": "rate_limit_error",
                                                "code": "rate_limit_error", "status": "RESOURCE_EXHAUSTED"}})


def prompt(frames) -> Prompt:
    return Prompt([Message("system", [TextPart("You play Breakout.")]),
                   Message("user", [TextPart("Now:"), ImagePart(2), TextPart("Move?")])], frames)


def cancel_when(token: CancelToken, condition, reason: str = "stopped by the user") -> dict:
    """Cancel ``token`` from another thread once ``condition()`` holds; returns when it did."""
    out: dict = {}

    def run() -> None:
        wait_until(condition)
        time.sleep(0.2)  # well inside the wait being cut short
        out["at"] = time.monotonic()
        token.cancel(reason)

    threading.Thread(target=run, daemon=True).start()
    return out


@pytest.mark.parametrize("provider", list(SPECS))
def test_cancel_during_a_60s_retry_backoff_returns_at_once(agents, fake, frames, provider):
    fake.push(RATE_LIMITED)
    token = CancelToken()
    cancelled = cancel_when(token, lambda: len(fake.seen) >= 1)
    started = time.monotonic()
    reply = agents.get(provider, max_wait_s=120.0).act(prompt(frames), CTX, cancel=token)
    done = time.monotonic()
    assert done - cancelled["at"] < BOUND_S and done - started < 30  # the 60 s wait was cut short
    assert reply.cancelled and reply.error == "cancelled: stopped by the user" and reply.text == ""
    (first,) = reply.attempts
    assert (first.error_class, first.status) == ("rate_limit", 429)
    assert 0 < first.wait_s < 30  # the wait as it really was, not the 60 s asked for
    assert len(fake.seen) == 1  # no second request after the cancel


def test_cancel_while_the_reply_hangs(agents, fake, frames):
    fake.push(Step("hang", hang_s=30))
    token = CancelToken()
    cancelled = cancel_when(token, lambda: len(fake.seen) >= 1, "quit")
    reply = agents.get("compat", timeout=60.0).act(prompt(frames), CTX, cancel=token)
    assert time.monotonic() - cancelled["at"] < BOUND_S
    assert reply.cancelled and reply.error == "cancelled: quit"
    assert [a.error_class for a in reply.attempts] == ["cancelled"]  # the request went out: it counts


def test_an_already_cancelled_token_sends_nothing(agents, fake, frames):
    token = CancelToken()
    token.cancel("quit")
    agent = agents.get("openai")
    assert agent.act(prompt(frames), CTX, cancel=token).cancelled
    assert call_agent(agent, prompt(frames), CTX, cancel=token).error == "cancelled: quit"
    assert fake.seen == []


def test_streamed_text_reaches_the_callers_thread(agents, fake, frames):
    threads: set[str] = set()
    pieces: list[str] = []

    def on_text(delta: str) -> None:
        threads.add(threading.current_thread().name)
        pieces.append(delta)

    reply = agents.get("anthropic").act(prompt(frames), CTX, on_text, cancel=CancelToken())
    assert reply.text == DEFAULT_TEXT and "".join(pieces) == DEFAULT_TEXT
    assert threads == {threading.current_thread().name}


def test_a_deadline_ends_a_hanging_call_as_an_error_reply(agents, fake, frames):
    fake.push(Step("hang", hang_s=30))
    started = time.monotonic()
    reply = agents.get("openai", timeout=60.0).act(prompt(frames), CTX, deadline=Deadline.after(0.5))
    assert time.monotonic() - started < 0.5 + BOUND_S
    assert not reply.cancelled and reply.error == "no usable reply after 1 attempt(s): the deadline passed"
    assert [a.error_class for a in reply.attempts] == ["deadline"]


def test_no_backoff_is_begun_that_would_pass_the_deadline(agents, fake, frames):
    fake.push(RATE_LIMITED)
    started = time.monotonic()
    reply = agents.get("gemini", max_wait_s=120.0).act(prompt(frames), CTX, deadline=Deadline.after(30))
    assert time.monotonic() - started < BOUND_S  # did not sleep 60 s into a 30 s deadline
    assert reply.error.startswith("no usable reply after 1 attempt(s): 429")
    assert reply.attempts[0].wait_s == 0.0 and len(fake.seen) == 1


def test_a_full_limiter_gives_way_to_cancel_and_deadline():
    lim = AdaptiveLimiter(initial=1, maximum=1)
    held = lim.acquire()
    token = CancelToken()
    threading.Timer(0.2, token.cancel, ("quit",)).start()
    started = time.monotonic()
    with pytest.raises(CallCancelled, match="cancelled: quit"):
        lim.acquire(token)
    assert time.monotonic() - started < BOUND_S
    now = [100.0]
    with pytest.raises(DeadlinePassed):
        lim.acquire(deadline=Deadline(at=99.0, clock=lambda: now[0]))  # an injected clock: already past
    assert lim.in_flight == 1  # neither waiter took a slot
    lim.release(held, "ok")
    lim.acquire(deadline=Deadline.after(5))  # a free slot is granted before any deadline check
    assert lim.in_flight == 1
