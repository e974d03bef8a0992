"""The call types on their own: the cancel token, the deadline (an injected clock), pause, and
call_agent with agents written before and after cancel/deadline existed."""

from __future__ import annotations

import threading

import pytest

from workstation.engine.calls import (
    CallCancelled,
    CancelToken,
    Deadline,
    DeadlinePassed,
    Reply,
    TurnContext,
    call_agent,
    pause,
    takes_cancel,
)
from workstation.game.games import get_game

CTX = TurnContext(get_game("breakout"), 0, 10, 0)


def test_the_first_reason_is_kept_and_waits_wake():
    token = CancelToken()
    assert not token.cancelled and token.wait(0) is False
    threading.Timer(0.05, token.cancel, ("quit",)).start()
    assert token.wait(60) is True  # woke early, long before 60 s
    token.cancel("later")
    assert token.reason == "quit"
    with pytest.raises(CallCancelled, match="cancelled: quit"):
        token.check()


def test_deadline_on_an_injected_clock():
    now = [10.0]
    d = Deadline.after(5, clock=lambda: now[0])
    assert d.remaining() == 5 and not d.expired
    now[0] = 15.0
    assert d.expired and d.remaining() == 0
    with pytest.raises(DeadlinePassed):
        d.check()
    assert Deadline().remaining() == float("inf") and not Deadline().expired


def test_pause_ends_at_the_deadline_or_on_cancel():
    now = [0.0]
    with pytest.raises(DeadlinePassed):
        pause(60, deadline=Deadline(at=0.0, clock=lambda: now[0]))  # already due: no sleep at all
    token = CancelToken()
    token.cancel("stop")
    with pytest.raises(CallCancelled):
        pause(60, token)
    pause(0.0, CancelToken())  # nothing to wait for, nothing raised


class Old:
    def act(self, prompt, ctx, on_text=None):
        return Reply("move: [fire]")


class New:
    def __init__(self):
        self.got = None

    def act(self, prompt, ctx, on_text=None, *, deadline=None, cancel=None):
        self.got = (deadline, cancel)
        return Reply("move: [left]")


def test_call_agent_hands_cancel_and_deadline_only_to_agents_that_take_them():
    token, deadline = CancelToken(), Deadline.after(30)
    assert not takes_cancel(Old()) and takes_cancel(New())
    assert call_agent(Old(), None, CTX, cancel=token, deadline=deadline).text == "move: [fire]"
    new = New()
    assert call_agent(new, None, CTX, cancel=token, deadline=deadline).text == "move: [left]"
    assert new.got == (deadline, token)
    token.cancel("quit")
    reply = call_agent(New(), None, CTX, cancel=token)
    assert reply.cancelled and reply.error == "cancelled: quit" and reply.text == ""
