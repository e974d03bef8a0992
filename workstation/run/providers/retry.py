"""One retry policy for every provider: classify a failure, wait, try again.

The SDKs' own retries are off; this module decides. A failure is a
``ProviderError`` with a class: ``rate_limit`` (429), ``transient`` (5xx, 529,
timeouts, dropped connections, malformed JSON), ``fatal`` (bad key, exhausted
quota, unknown model, bad request), or one of the reply problems ``empty``,
``blocked``, ``truncated``. All but ``fatal`` are retried. Waits honour
``retry-after`` / ``retry-after-ms`` (seconds or an HTTP date) and Gemini's
``retryDelay``; otherwise they back off exponentially with jitter. Every wait is
capped at ``max_wait_s`` and the number of tries at ``max_attempts``; a cancel
token ends a wait at once and a deadline stops the tries before a wait that
would pass it. A connection that cannot heal by waiting (refused, unknown host,
TLS failure) is ``fatal``, as is a bad key or an unknown model.

Errors are told apart by duck typing (status codes, class names), so this
module imports none of the SDKs.
"""

from __future__ import annotations

import json
import random
import re
import socket
import ssl
import time
from collections.abc import Callable, Iterable, Mapping
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import tenacity

from workstation.engine.calls import CancelToken, Deadline, pause
from workstation.run.providers.redact import one_line

T = TypeVar("T")

RETRYABLE = frozenset({"rate_limit", "transient", "empty", "blocked", "truncated"})
_QUOTA_WORDS = ("insufficient_quota", "billing_hard_limit", "billing_not_active", "billing_error",
                "credit balance")
_STREAM_RATE_LIMIT = ("rate_limit_error", "rate_limit_exceeded", "resource_exhausted")


class ProviderError(Exception):
    """One failed attempt, classified. ``str()`` is one line without secrets."""

    def __init__(self, error_class: str, message: str, status: int | None = None,
                 retry_after: float | None = None, unreachable: str | None = None) -> None:
        super().__init__(message)
        self.error_class = error_class
        self.message = message
        self.status = status
        self.retry_after = retry_after
        self.unreachable = unreachable  # "connection refused" | "unknown host" | "TLS failure" (fatal)

    @property
    def retryable(self) -> bool:
        return self.error_class in RETRYABLE


def classify(exc: BaseException, secrets: Iterable[str] = ()) -> ProviderError | None:
    """What kind of failure ``exc`` is; None for an exception that is not a provider failure."""
    secrets = tuple(secrets)
    if isinstance(exc, ProviderError):
        exc.message = one_line(exc.message, secrets)
        exc.args = (exc.message,)
        return exc
    names = {cls.__name__ for cls in type(exc).__mro__}
    status = _status(exc)
    if status is not None:
        fields = _error_fields(getattr(exc, "body", None) if hasattr(exc, "body") else getattr(exc, "details", None))
        detail = fields.get("message") or getattr(exc, "message", None) or str(exc)
        named = (fields.get("code"), fields.get("type"), fields.get("status"))
        kind = next((str(n) for n in named if n and not str(n).isdigit()), "")
        text = one_line(f"{status} {kind + ': ' if kind else ''}{detail}", secrets)
        wait = retry_after_s(_headers(exc), fields)
        return ProviderError(_status_class(status, kind, text), text, status, wait)
    if any("Timeout" in n for n in names):
        return ProviderError("transient", "timed out waiting for the provider")
    if names & {"APIConnectionError", "TransportError", "ConnectionError"}:
        unreachable = _unreachable(exc)
        if unreachable is not None:
            kind, detail = unreachable
            return ProviderError("fatal", one_line(f"{kind}: {detail}", secrets), unreachable=kind)
        cause = exc.__cause__ or exc
        return ProviderError("transient", one_line(f"connection failed: {cause}", secrets))
    if names & {"JSONDecodeError", "UnknownApiResponseError", "APIResponseValidationError", "ValidationError"}:
        return ProviderError("transient", one_line(f"malformed response: {exc}", secrets, limit=160))
    if "APIError" in names:  # an SDK error without a status: an error event inside a stream
        return ProviderError("transient", one_line(f"provider error: {exc}", secrets))
    return None


# name-lookup failures that waiting will not cure (EAI_AGAIN, "temporary failure", may heal: not here)
_UNKNOWN_HOST = {getattr(socket, n) for n in ("EAI_NONAME", "EAI_NODATA", "EAI_FAIL", "EAI_ADDRFAMILY")
                 if hasattr(socket, n)}


def _unreachable(exc: BaseException) -> tuple[str, str] | None:
    """``("connection refused" | "unknown host" | "TLS failure", detail)`` when the cause of a
    connection error cannot heal by waiting; None for a drop, reset or timeout (those may)."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused", str(cause)
        if isinstance(cause, socket.gaierror) and cause.errno in _UNKNOWN_HOST:
            return "unknown host", str(cause)
        if isinstance(cause, ssl.SSLError):
            return "TLS failure", str(cause)
        cause = cause.__cause__ or cause.__context__
    return None


def stream_failure(code: str | None, message: str | None) -> ProviderError:
    """A failure the provider reported inside a stream that had started fine."""
    kind = str(code or "")
    text = " ".join(f"{kind + ': ' if kind else ''}{message or 'the provider reported an error'}".split())
    return ProviderError(_status_class(200, kind, text), text)


def _status(exc: BaseException) -> int | None:
    code = getattr(exc, "status_code", None)
    if code is None and type(exc).__module__.startswith("google.genai"):
        code = getattr(exc, "code", None)
    return code if isinstance(code, int) else None


def _status_class(status: int, kind: str, text: str) -> str:
    lowered = f"{kind} {text}".lower()
    if status == 200:  # an error event inside a stream that had started fine
        return "rate_limit" if any(w in lowered for w in _STREAM_RATE_LIMIT) else "transient"
    if status == 429:
        return "fatal" if any(w in lowered for w in _QUOTA_WORDS) else "rate_limit"
    if status in (408, 409, 425) or status >= 500:
        return "transient"
    return "fatal"


def _error_fields(body: Any) -> dict[str, Any]:
    """The provider's error object, whichever way the SDK kept it."""
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:
            return {"message": body}
    if isinstance(body, list) and body:
        body = body[0]
    if not isinstance(body, dict):
        return {}
    inner = body.get("error")
    return inner if isinstance(inner, dict) else body


def _headers(exc: BaseException) -> Mapping[str, str]:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    return headers if headers is not None else {}


def retry_after_s(headers: Mapping[str, str], fields: Mapping[str, Any] | None = None,
                  now: float | None = None) -> float | None:
    """Seconds the provider asked us to wait, if it said so."""
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value:
        try:
            return max(0.0, float(value))
        except ValueError:
            try:
                when = parsedate_to_datetime(value).timestamp()
                return max(0.0, when - (time.time() if now is None else now))
            except (TypeError, ValueError):
                pass
    for detail in (fields or {}).get("details") or []:  # Gemini: google.rpc.RetryInfo
        delay = detail.get("retryDelay") if isinstance(detail, dict) else None
        match = re.fullmatch(r"\s*([0-9.]+)s\s*", str(delay or ""))
        if match:
            return float(match.group(1))
    return None


class BackoffWait(tenacity.wait.wait_base):
    """The provider's hint when it gave one, else exponential backoff with jitter; capped."""

    def __init__(self, max_wait_s: float, base_s: float = 1.0) -> None:
        self.max_wait_s = max_wait_s
        self.base_s = base_s

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        exc = retry_state.outcome.exception() if retry_state.outcome else None
        hint = getattr(exc, "retry_after", None)
        if hint is not None:
            return min(self.max_wait_s, float(hint))
        ceiling = min(self.max_wait_s, self.base_s * 2 ** (retry_state.attempt_number - 1))
        return random.uniform(ceiling / 2, ceiling)


class _StopAtDeadline(tenacity.stop.stop_base):
    """Stop when the caller cancelled, or when the next wait would end past the deadline."""

    def __init__(self, cancel: CancelToken | None, deadline: Deadline | None) -> None:
        self.cancel, self.deadline = cancel, deadline

    def __call__(self, retry_state: tenacity.RetryCallState) -> bool:
        if self.cancel is not None and self.cancel.cancelled:
            return False  # the sleep raises CallCancelled at once
        return self.deadline is not None and self.deadline.remaining() <= retry_state.upcoming_sleep


def with_retries(attempt: Callable[[], T], max_attempts: int, max_wait_s: float,
                 on_wait: Callable[[float], None] | None = None,
                 sleep: Callable[[float], None] | None = None,
                 cancel: CancelToken | None = None, deadline: Deadline | None = None) -> T:
    """Run ``attempt`` until it returns, raises something not retryable, or tries run out.

    ``attempt`` raises ``ProviderError`` for classified failures; the last one is
    re-raised when the tries are spent. ``on_wait`` hears each wait before it starts.
    Waits end at once with ``CallCancelled`` when ``cancel`` is cancelled; no wait
    is begun that would end past ``deadline`` (the last failure is raised instead).
    ``sleep`` replaces the cancellable wait (tests).
    """
    retrying = tenacity.Retrying(
        stop=tenacity.stop_after_attempt(max_attempts) | _StopAtDeadline(cancel, deadline),
        retry=tenacity.retry_if_exception(lambda e: isinstance(e, ProviderError) and e.retryable),
        wait=BackoffWait(max_wait_s),
        before_sleep=(lambda rs: on_wait(rs.upcoming_sleep)) if on_wait else None,
        sleep=sleep or (lambda seconds: pause(seconds, cancel)),
        reraise=True,
    )
    return retrying(attempt)
