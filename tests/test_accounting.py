"""The one account both engines keep (``workstation.engine.accounting``): the calls, tokens and cost a run's
summary prints, the failed turns in a row behind the stop rule, and the cost cap's stop reason.

Each number is worked by hand from the rule; no emulator, no provider.
"""

from __future__ import annotations

from workstation.engine.accounting import Accounting, cost_cap_reason
from workstation.engine.calls import Attempt, Reply, Usage

FAILED_THEN_OK = [Attempt(ok=False, error_class="rate_limit"), Attempt(ok=False, error_class="transient"),
                  Attempt(ok=True)]


def test_every_request_sent_counts_as_a_call():
    a = Accounting()
    a.add_reply(Reply("ok", usage=Usage(10, 0, 0, 2), attempts=FAILED_THEN_OK))  # two failed tries, then one answer
    assert a.calls == 3
    a.add_reply(Reply("ok", usage=Usage(1, 0, 0, 1)))  # a reply with usage and no record of tries: one request
    assert a.calls == 4
    a.add_reply(Reply("ok"))  # a built-in agent's reply: nothing sent
    assert a.calls == 4


def test_tokens_and_cost_add_up_and_round_as_the_summary_prints():
    a = Accounting()
    a.add_reply(Reply("a", usage=Usage(100, 20, 5, 40, 30), cost_usd=0.0012344))
    a.add_reply(Reply("b", usage=Usage(50, 0, 0, 10, 0), cost_usd=0.0000002))
    assert a.usage == Usage(150, 20, 5, 50, 30)
    assert a.cost_usd == 0.0012344 + 0.0000002
    assert a.cost == 0.001235  # to the millionth of a dollar
    assert a.priced


def test_one_reply_without_a_price_makes_the_cost_unknown():
    a = Accounting()
    a.add_reply(Reply("a", usage=Usage(1), cost_usd=0.5))
    a.add_reply(Reply("b", cost_usd=None))  # no usage: nothing to price, still priced
    assert a.priced and a.cost == 0.5
    a.add_reply(Reply("c", usage=Usage(1), cost_usd=None))
    assert not a.priced and a.cost is None
    assert a.cost_usd == 0.5  # what was priced is still counted (the cost cap reads it)


def test_invalid_and_lost_turns_and_the_failed_ones_in_a_row():
    a = Accounting()
    assert (a.calls, a.invalid_turns, a.failed_turns, a.failed_in_a_row, a.cost) == (0, 0, 0, 0, 0.0)
    assert not a.failing(1)  # a fresh account has lost no turn
    a.end_turn(invalid=True, lost=False)
    a.end_turn(invalid=False, lost=True)
    a.end_turn(invalid=True, lost=True)
    assert (a.invalid_turns, a.failed_turns, a.failed_in_a_row) == (2, 2, 2)
    assert a.failing(2) and not a.failing(3)
    assert not a.failing(0)  # 0: never
    a.end_turn(invalid=False, lost=False)  # a turn that went through ends the row
    assert (a.invalid_turns, a.failed_turns, a.failed_in_a_row) == (2, 2, 0)
    assert not a.failing(1)


def test_a_copy_is_its_own_account():
    a = Accounting()
    a.add_reply(Reply("a", usage=Usage(7), cost_usd=0.25))
    b = a.copy()
    assert b == a
    b.add_reply(Reply("b", usage=Usage(3), cost_usd=0.25))
    assert a.usage == Usage(7) and a.cost_usd == 0.25 and a.calls == 1
    assert b.usage == Usage(10) and b.cost_usd == 0.5 and b.calls == 2


def test_the_cost_cap_stops_at_the_cap_not_before():
    assert cost_cap_reason(0.4999, 0.5) is None
    assert cost_cap_reason(0.5, 0.5) == "cost cap reached: $0.5000 >= --max-cost $0.5"
    assert cost_cap_reason(1.23456, 1) == "cost cap reached: $1.2346 >= --max-cost $1"
    assert cost_cap_reason(100.0, None) is None  # no cap
