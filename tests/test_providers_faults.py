"""Faults injected by the fake provider: what is retried, what stops the run, what leaks (nothing)."""

from __future__ import annotations

import json
import time

import pytest

from tests.fake_provider import DEFAULT_TEXT, KEYS, SPECS, FakeUsage, Step
from workstation.engine.calls import FatalAgentError, Reply, TurnContext
from workstation.engine.prompt import ImagePart, Message, Prompt, TextPart
from workstation.game.games import get_game
from workstation.run.providers.agent import PROBLEMS

CTX = TurnContext(get_game("breakout"), turn=0, max_actions=10, frame=0)
PROVIDERS = list(SPECS)
ALL_KEYS = tuple(KEYS.values())


def prompt(frames) -> Prompt:
    return Prompt([Message("system", [TextPart("You play Breakout.")]),
                   Message("user", [TextPart("Now:"), ImagePart(2), TextPart("Move?")])], frames)


def error_body(message: str, kind: str = "api_error", status: str = "INTERNAL") -> dict:
    """An error body the three SDKs all read (OpenAI, Anthropic and Google shapes overlap here)."""
    return {"type": "error", "error": {"message": message, "type": kind, "code": kind, "status": status}}


def leaks(reply: Reply) -> list[str]:
    blob = json.dumps([reply.text, reply.error, [a.to_json() for a in reply.attempts]])
    return [k for k in ALL_KEYS if k in blob]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rate_limit_honours_retry_after(agents, fake, frames, provider):
    fake.push(Step("status", 429, {"retry-after-ms": "150"}, error_body("slow down", "rate_limit_error")))
    started = time.monotonic()
    reply = agents.get(provider, max_wait_s=2.0).act(prompt(frames), CTX)
    assert time.monotonic() - started >= 0.15
    assert reply.text == DEFAULT_TEXT and reply.error is None
    first, second = reply.attempts
    assert (first.ok, first.error_class, first.status, first.wait_s) == (False, "rate_limit", 429, 0.15)
    assert second.ok and second.wait_s == 0.0
    assert len(fake.seen) == 2  # one request per attempt: the SDK did not retry on its own


def test_retry_after_is_capped_by_max_wait(agents, fake, frames):
    fake.push(Step("status", 429, {"retry-after": "30"}, error_body("slow down", "rate_limit_error")))
    started = time.monotonic()
    reply = agents.get("openai", max_wait_s=0.05).act(prompt(frames), CTX)
    assert time.monotonic() - started < 15  # far below the 30 s asked for, with room for a loaded machine
    assert reply.attempts[0].wait_s == 0.05 and reply.text == DEFAULT_TEXT


def test_gemini_retry_delay_in_the_body(agents, fake, frames):
    body = {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "quota per minute",
                      "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.2s"}]}}
    fake.push(Step("status", 429, {}, body))
    reply = agents.get("gemini", max_wait_s=1.0).act(prompt(frames), CTX)
    assert reply.attempts[0].error_class == "rate_limit" and reply.attempts[0].wait_s == 0.2


def test_rate_limit_halves_the_concurrency_limit(agents, fake, frames):
    agent = agents.get("anthropic")
    agent.limiter.limit = before = 8  # the limiter is shared across the suite: start from a known limit
    fake.push(Step("status", 429, {"retry-after": "0"}, error_body("slow down", "rate_limit_error")))
    agent.act(prompt(frames), CTX)
    # halved on the 429 (the clean retry after it may grow it back by one, never more)
    assert before // 2 <= agent.limiter.limit <= before // 2 + 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_server_errors_are_retried(agents, fake, frames, provider):
    fake.push(Step("status", 500, {}, error_body("internal")),
              Step("status", 529, {}, error_body("overloaded", "overloaded_error")))
    reply = agents.get(provider).act(prompt(frames), CTX)
    assert [(a.ok, a.error_class, a.status) for a in reply.attempts] == [
        (False, "transient", 500), (False, "transient", 529), (True, None, 200)]
    assert all(0 < a.wait_s <= 0.01 for a in reply.attempts[:2])
    assert reply.text == DEFAULT_TEXT and len(fake.seen) == 3


@pytest.mark.parametrize("provider", PROVIDERS)
def test_hang_past_the_timeout_is_retried(agents, fake, frames, provider):
    fake.push(Step("hang", hang_s=30))
    started = time.monotonic()
    reply = agents.get(provider, timeout=0.3).act(prompt(frames), CTX)
    assert time.monotonic() - started < 15  # gave up on the 30 s hang, did not wait it out (room for a loaded machine)
    assert reply.attempts[0].error_class == "transient" and "timed out" in reply.attempts[0].error
    assert reply.text == DEFAULT_TEXT and len(fake.seen) == 2


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("kind", ["drop", "malformed"])
def test_broken_streams_are_retried(agents, fake, frames, provider, kind):
    fake.push(Step(kind))
    deltas: list[str] = []
    reply = agents.get(provider).act(prompt(frames), CTX, on_text=deltas.append)
    assert reply.attempts[0].error_class == "transient", reply.attempts[0]
    assert reply.attempts[1].ok and reply.text == DEFAULT_TEXT
    assert "".join(deltas).endswith(DEFAULT_TEXT)  # a dropped try may have streamed a little first
    assert len(fake.seen) == 2


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("kind", ["empty", "blocked", "truncated"])
def test_unusable_replies_are_retried_then_become_an_error_reply(agents, fake, frames, provider, kind):
    fake.push(*[Step(kind) for _ in range(3)])
    reply = agents.get(provider, max_attempts=3).act(prompt(frames), CTX)
    assert reply.text == "" and reply.error.startswith(f"no usable reply after 3 attempt(s): {PROBLEMS[kind]}")
    assert [a.error_class for a in reply.attempts] == [kind] * 3
    assert reply.attempts[-1].wait_s == 0.0 and len(fake.seen) == 3
    billed = reply.usage
    assert billed.output_tokens == 3 * FakeUsage().output  # every try was billed
    if provider != "compat":
        assert reply.cost_usd > 0


def test_error_reply_names_the_problem(agents, fake, frames):
    fake.push(Step("blocked"), Step("blocked"))
    reply = agents.get("gemini", max_attempts=2).act(prompt(frames), CTX)
    assert reply.error == "no usable reply after 2 attempt(s): the provider blocked the reply (finish: SAFETY)"
    assert reply.finish_reason == "SAFETY"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_one_bad_reply_then_a_good_one(agents, fake, frames, provider):
    fake.push(Step("empty"))
    reply = agents.get(provider).act(prompt(frames), CTX)
    assert [a.error_class for a in reply.attempts] == ["empty", None]
    assert reply.text == DEFAULT_TEXT and reply.error is None


@pytest.mark.parametrize("provider", PROVIDERS)
def test_bad_key_is_fatal_and_never_shown(agents, fake, frames, provider):
    key = KEYS[{"gemini": "GEMINI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}.get(provider, "OPENAI_API_KEY")]
    body = error_body(f"Incorrect API key provided: {key}. Header was Authorization: Bearer {key}",
                      "authentication_error", "UNAUTHENTICATED")
    fake.push(Step("status", 401, {}, body))
    with pytest.raises(FatalAgentError) as caught:
        agents.get(provider).act(prompt(frames), CTX)
    text = str(caught.value)
    assert "\n" not in text and "401" in text and "API key" in text
    assert ("OPENAI_API_KEY" if provider == "compat" else provider.upper()) in text  # names the variable
    assert not any(k in text for k in ALL_KEYS)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert len(fake.seen) == 1  # fatal: not retried


@pytest.mark.parametrize("status, body, words", [
    (429, {"error": {"message": "You exceeded your current quota", "type": "insufficient_quota",
                     "code": "insufficient_quota"}}, "quota"),
    (404, {"error": {"message": "The model `gpt-9` does not exist", "type": "invalid_request_error",
                     "code": "model_not_found"}}, "unknown model"),
    (400, {"error": {"message": "Unsupported parameter: 'temperature'", "type": "invalid_request_error"}},
     "rejected the request"),
])
def test_other_fatal_failures(agents, fake, frames, status, body, words):
    fake.push(Step("status", status, {}, body))
    with pytest.raises(FatalAgentError, match=words):
        agents.get("openai").act(prompt(frames), CTX)
    assert len(fake.seen) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_outage_gives_an_error_reply_without_secrets(agents, fake, frames, provider):
    key = ALL_KEYS[PROVIDERS.index(provider) % 3]
    echo = error_body(f"upstream refused x-api-key: {key} at https://h/v1?key={key}")
    fake.push(*[Step("status", 503, {}, echo) for _ in range(3)])
    reply = agents.get(provider, max_attempts=3).act(prompt(frames), CTX)
    assert reply.text == "" and reply.error.startswith("no usable reply after 3 attempt(s): 503")
    assert [a.status for a in reply.attempts] == [503] * 3 and reply.usage is None
    assert leaks(reply) == [] and "[redacted]" in reply.attempts[0].error
    assert len(fake.seen) == 3
