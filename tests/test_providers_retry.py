"""The retry policy: classification of real SDK errors, waits, limits, and scrubbed messages."""

from __future__ import annotations

import json

import anthropic
import httpx2
import openai
import pytest
import tenacity
from google.genai import errors as genai_errors

from workstation.run.providers.redact import one_line, redact_headers, scrub
from workstation.run.providers.retry import BackoffWait, ProviderError, classify, retry_after_s, with_retries

KEY = "sk-test-SECRET-0123456789abcdef"
REQUEST = httpx2.Request("POST", "https://api.example.test/v1/x")


def response(status: int, body: dict | None = None, headers: dict | None = None) -> httpx2.Response:
    return httpx2.Response(status, headers=headers or {}, content=json.dumps(body or {}).encode(), request=REQUEST)


def openai_error(status: int, body: dict, headers: dict | None = None) -> Exception:
    return openai.OpenAI(api_key="k", max_retries=0)._make_status_error(
        "err", body=body.get("error"), response=response(status, body, headers))


def anthropic_error(status: int, body: dict, headers: dict | None = None) -> Exception:
    return anthropic.Anthropic(api_key="k", max_retries=0)._make_status_error(
        "err", body=body, response=response(status, body, headers))


def genai_error(status: int, body: dict) -> Exception:
    cls = genai_errors.ClientError if status < 500 else genai_errors.ServerError
    return cls(status, body, response(status, body))


@pytest.mark.parametrize("exc, cls, status", [
    (openai_error(429, {"error": {"message": "slow", "type": "rate_limit_exceeded"}}), "rate_limit", 429),
    (openai_error(429, {"error": {"message": "no money", "code": "insufficient_quota"}}), "fatal", 429),
    (openai_error(401, {"error": {"message": f"bad key {KEY}"}}), "fatal", 401),
    (openai_error(404, {"error": {"message": "no such model"}}), "fatal", 404),
    (openai_error(400, {"error": {"message": "bad request"}}), "fatal", 400),
    (openai_error(502, {"error": {"message": "bad gateway"}}), "transient", 502),
    (anthropic_error(529, {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}),
     "transient", 529),
    (anthropic_error(403, {"type": "error", "error": {"type": "permission_error", "message": "no"}}), "fatal", 403),
    (anthropic_error(200, {"type": "error", "error": {"type": "overloaded_error", "message": "mid-stream"}}),
     "transient", 200),
    (genai_error(429, {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "per minute"}}),
     "rate_limit", 429),
    (genai_error(400, {"error": {"code": 400, "status": "INVALID_ARGUMENT", "message": "API key not valid"}}),
     "fatal", 400),
    (genai_error(503, {"error": {"code": 503, "status": "UNAVAILABLE", "message": "overloaded"}}),
     "transient", 503),
])
def test_status_errors_are_classified(exc, cls, status):
    failure = classify(exc, [KEY])
    assert (failure.error_class, failure.status) == (cls, status)
    assert KEY not in failure.message and "\n" not in failure.message


@pytest.mark.parametrize("exc, cls", [
    (openai.APITimeoutError(request=REQUEST), "transient"),
    (anthropic.APIConnectionError(request=REQUEST), "transient"),
    (httpx2.ReadTimeout("timed out", request=REQUEST), "transient"),
    (httpx2.RemoteProtocolError("peer closed connection"), "transient"),
    (json.JSONDecodeError("Expecting value", "{oops", 1), "transient"),
    (genai_errors.UnknownApiResponseError("Failed to parse response as JSON"), "transient"),
])
def test_transport_and_parse_errors_are_transient(exc, cls):
    assert classify(exc).error_class == cls


def test_unrelated_exceptions_are_not_provider_failures():
    assert classify(KeyError("x")) is None and classify(ZeroDivisionError()) is None


def test_retry_after_forms():
    assert retry_after_s({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after_s({"retry-after": "3"}) == 3.0
    assert retry_after_s({"retry-after": "Wed, 21 Oct 2026 07:28:10 GMT"}, now=1792567680.0) == 10.0
    assert retry_after_s({"retry-after": "soon"}) is None and retry_after_s({}) is None
    details = {"details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}]}
    assert retry_after_s({}, details) == 37.0


def test_failure_line_names_status_and_kind():
    exc = genai_error(429, {"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "message": "per minute"}})
    assert classify(exc).message == "429 RESOURCE_EXHAUSTED: per minute"


def test_retry_after_reaches_the_failure():
    exc = openai_error(429, {"error": {"message": "slow"}}, {"retry-after": "7"})
    assert classify(exc).retry_after == 7.0


def _state(attempt: int, exc: Exception) -> tenacity.RetryCallState:
    state = tenacity.RetryCallState(None, None, (), {})
    state.attempt_number = attempt
    state.set_exception((type(exc), exc, None))
    return state


def test_backoff_is_exponential_jittered_and_capped():
    wait = BackoffWait(max_wait_s=10.0, base_s=1.0)
    plain = ProviderError("transient", "x")
    for attempt, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 10.0), (9, 10.0)]:
        waits = [wait(_state(attempt, plain)) for _ in range(50)]
        assert all(ceiling / 2 <= w <= ceiling for w in waits) and len(set(waits)) > 1
    assert wait(_state(1, ProviderError("rate_limit", "x", 429, retry_after=3.0))) == 3.0
    assert wait(_state(1, ProviderError("rate_limit", "x", 429, retry_after=300.0))) == 10.0


def test_with_retries_stops_at_max_attempts_and_skips_fatal():
    sleeps: list[float] = []
    calls: list[int] = []

    def flaky():
        calls.append(1)
        raise ProviderError("transient", "down")

    with pytest.raises(ProviderError, match="down"):
        with_retries(flaky, max_attempts=4, max_wait_s=0.5, on_wait=sleeps.append, sleep=lambda s: None)
    assert len(calls) == 4 and len(sleeps) == 3 and all(0 < s <= 0.5 for s in sleeps)

    def fatal():
        calls.append(1)
        raise ProviderError("fatal", "bad key")

    calls.clear()
    with pytest.raises(ProviderError, match="bad key"):
        with_retries(fatal, max_attempts=4, max_wait_s=0.5, sleep=lambda s: None)
    assert len(calls) == 1


def test_scrub_removes_keys_and_credential_shapes():
    text = (f"key {KEY} | Authorization: Bearer abc.def-123 | x-api-key: zzz999 | "
            "https://h/v1/models?key=AIzaSyD-0123456789abcdefghijk&alt=sse | sk-ant-api03-XYZ123456789 | "
            "AIzaSyA0123456789abcdefghijklmnop")
    out = scrub(text, [KEY])
    for secret in (KEY, "abc.def-123", "zzz999", "AIzaSyD-0123456789abcdefghijk", "sk-ant-api03-XYZ123456789",
                   "AIzaSyA0123456789abcdefghijklmnop"):
        assert secret not in out
    assert "&alt=sse" in out and out.count("[redacted]") >= 6
    assert one_line("a\n  b\tc" + "x" * 400, limit=20) == "a b cxxxxxxxxxxxx..."


def test_redact_headers():
    out = redact_headers({"Authorization": f"Bearer {KEY}", "x-goog-api-key": KEY, "Content-Type": "json"})
    assert out == {"Authorization": "Bearer [redacted]", "x-goog-api-key": "[redacted]", "Content-Type": "json"}
