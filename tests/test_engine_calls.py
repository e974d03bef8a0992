"""The engine and the call types: a cancelled call ends the run, its account (attempts, usage,
"cancelled: why") kept in the summary's ``stopped_call``; fatal provider failures stop at once;
turns lost to errors are counted and, N in a row, stop the run. Real SDK over HTTP to the fake
provider where a provider is involved."""

from __future__ import annotations

import threading
import time

from tests.fake_provider import Step, closed_port, wait_until
from workstation.engine.calls import Attempt, CancelToken, FatalAgentError, Reply, Usage
from workstation.game.protocol import Protocol
from workstation.run.drive import drive
from workstation.run.start import RunSpec, start_run
from workstation.run.verify import verify
from workstation.store.recording import Recording

BOUND_S = 10.0


class FailingAgent:
    """Replies with no usable text on the turns listed in ``bad`` (every turn by default)."""

    spec = "failing"

    def __init__(self, bad=None):
        self.bad = bad

    def act(self, prompt, ctx, on_text=None):
        if self.bad is None or ctx.turn in self.bad:
            return Reply("", usage=Usage(10, 0, 0, 0, 0), error="no usable reply after 6 attempt(s): 503 overloaded")
        return Reply("move: [fire]")

    def close(self):
        pass

    def describe(self):
        return {"kind": "failing", "spec": self.spec}


def run(tmp_path, agent, frames=120, **engine):
    e = start_run(RunSpec(game="breakout", out=str(tmp_path), protocol=Protocol(frames=frames)), agent=agent,
                  rewindable=False)
    for k, v in engine.items():
        setattr(e, k, v)
    try:
        return e, drive(e)
    finally:
        e.close()


def test_three_failed_turns_in_a_row_stop_the_run(tmp_path):
    e, s = run(tmp_path, FailingAgent())
    assert not s.complete and s.failed_turns == 3 and s.turns == 3
    assert s.stopped.startswith("3 turns in a row lost to provider errors (--max-failed-turns 3); last: no usable")
    rec = Recording(e.writer.path)
    assert rec.summary_record.failed_turns == 3 and len(rec.turn_records) == 3


def test_a_good_turn_breaks_the_streak(tmp_path):
    e, s = run(tmp_path, FailingAgent(bad={0, 1, 3, 4, 6, 7}), frames=60)
    assert s.complete and s.failed_turns == 6 and s.stopped is None


def test_zero_never_stops_and_counts_every_lost_turn(tmp_path):
    e, s = run(tmp_path, FailingAgent(), frames=40, max_failed_turns=0)
    assert s.complete and s.failed_turns == s.turns > 3


def test_fatal_failure_with_an_account_stops_and_keeps_the_call(tmp_path):
    class Fatal(FailingAgent):
        def act(self, prompt, ctx, on_text=None):
            if ctx.turn == 0:
                return Reply("move: [fire]")
            line = "x:m: nothing answers at http://127.0.0.1:9/v1/chat/completions; check ..."
            raise FatalAgentError(line, Reply("", error=line, attempts=[Attempt(False, "fatal", "refused")]))

    e, s = run(tmp_path, Fatal())
    assert s.stopped.startswith("x:m: nothing answers at http://127.0.0.1:9") and s.turns == 1
    assert s.calls == 1 and s.stopped_call["turn"] == 1 and not s.stopped_call["cancelled"]
    rec = Recording(e.writer.path)
    assert len(rec.turn_records) == 1 and verify(rec).ok


def test_cancel_during_a_60s_backoff_ends_the_run_and_records_the_turn(agents, fake, tmp_path):
    fake.push(Step(), Step("status", 429, {"retry-after": "60"}, {"error": {"message": "slow down",
                                                                         "type": "rate_limit_error"}}))
    agent = agents.get("compat", max_wait_s=120.0)
    token = CancelToken()
    e = start_run(RunSpec(game="breakout", out=str(tmp_path)), agent=agent,
                  rewindable=False)
    e.cancel = token
    out = {}

    def cancel_later():
        wait_until(lambda: len(fake.seen) >= 2)
        time.sleep(0.2)
        out["at"] = time.monotonic()
        token.cancel("quit")

    threading.Thread(target=cancel_later, daemon=True).start()
    s = drive(e)
    assert time.monotonic() - out["at"] < BOUND_S
    assert s.stopped == "quit" and not s.complete and s.turns == 1 and s.failed_turns == 0
    assert s.calls == 2  # one answered, one rate-limited; nothing after the cancel
    rec = Recording(e.writer.path)
    (first,) = rec.turn_records
    cancelled = rec.summary_record.stopped_call
    assert first.valid and cancelled["turn"] == 1 and cancelled["error"] == "cancelled: quit"
    assert cancelled["cancelled"] and [a["error_class"] for a in cancelled["attempts"]] == ["rate_limit"]
    assert 0 < cancelled["attempts"][0]["wait_s"] < 30
    assert verify(rec).ok


def test_connection_refused_stops_after_the_first_turn(agents, keys, tmp_path):
    from workstation.run.providers import ProviderOptions, make_provider_agent

    url = f"http://127.0.0.1:{closed_port()}/v1"
    agent = make_provider_agent("compat:m", ProviderOptions(base_url=url, max_wait_s=120.0))
    started = time.monotonic()
    e, s = run(tmp_path, agent)
    assert time.monotonic() - started < 30  # no retries: seconds, not minutes
    assert s.stopped.startswith(f"compat:m: nothing answers at {url}/chat/completions")
    assert s.turns == 0 and s.calls == 1
    rec = Recording(e.writer.path)
    assert rec.turn_records == [] and rec.summary_record.stopped_call["error"] == s.stopped
    assert [(a["error_class"], a["status"]) for a in rec.summary_record.stopped_call["attempts"]] == [("fatal", None)]
