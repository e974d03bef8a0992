"""``ProviderAgent``: a hosted or local model behind the Agent protocol.

One turn = one request body (built once), tried up to ``max_attempts`` times
under the shared retry policy and the adaptive concurrency limit. Each try is
recorded in ``Reply.attempts``. A fatal failure (bad key, unknown model, a
server that refuses connections, an unknown host, a TLS failure) raises
``FatalAgentError`` at once, naming the URL; a reply that stays empty, blocked
or truncated, or a provider that stays overloaded, comes back as a Reply with
``error`` set and no text (the engine plays it as one NOOP). A cancel token
ends the call within about a second, in a backoff, waiting for a slot or
while the reply streams (``Reply.cancelled``); a deadline is never waited
past. Usage and cost cover every try the provider answered, since each of
those is billed.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import queue
import re
import time
from collections.abc import Callable
from typing import Any

from workstation.engine.calls import (
    Attempt,
    CallCancelled,
    CallStopped,
    CancelToken,
    Deadline,
    FatalAgentError,
    OnText,
    Reply,
    TurnContext,
    Usage,
)
from workstation.engine.prompt import Prompt
from workstation.run.providers import reasoning
from workstation.run.providers.adapter import Adapter, Completion
from workstation.run.providers.anthropic_messages import AnthropicMessages
from workstation.run.providers.gemini import Gemini
from workstation.run.providers.helper_threads import HELPERS
from workstation.run.providers.limiter import POLL_S, AdaptiveLimiter, limiter_for
from workstation.run.providers.openai_chat import OpenAIChat
from workstation.run.providers.openai_responses import OpenAIResponses
from workstation.run.providers.pricing import PriceTable, default_prices
from workstation.run.providers.redact import one_line, scrub
from workstation.run.providers.retry import ProviderError, classify, with_retries
from workstation.run.providers.spec import PROVIDERS, ProviderOptions, api_key, key_var, parse_spec

ADAPTERS: dict[str, Callable[[str, ProviderOptions], Adapter]] = {"openai": OpenAIResponses, "compat": OpenAIChat, "anthropic": AnthropicMessages, "gemini": Gemini}
SDKS = {"openai": "openai", "compat": "openai", "anthropic": "anthropic", "gemini": "google-genai"}
_IMAGE_LIMIT = re.compile(r"at most (\d+) image", re.I)  # vLLM: "At most 1 image(s) may be provided in one request."
class TimedAttempt(Attempt):
    """A try that got a reply, with the server's own inference time (``server_s``, where it reports one)
    and, under ``--clock latency:server``, the wall time and which of the two was charged (``charged``).
    Only the fields that are set are written, so other recordings keep their shape."""

    def __init__(self, ok: bool, status: int | None = None, server_s: float | None = None,
                 wall_s: float | None = None, charged: str | None = None) -> None:
        super().__init__(ok, status=status)
        self.server_s, self.wall_s, self.charged = server_s, wall_s, charged

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in super().to_json().items()
                if v is not None or k not in ("server_s", "wall_s", "charged")}


PROBLEMS = {
    "empty": "the reply had no text",
    "blocked": "the provider blocked the reply",
    "truncated": "the reply hit the output token limit",
}


def make_adapter(spec: str, options: ProviderOptions) -> Adapter:
    """The adapter for a spec; ``ProviderConfigError`` for a bad spec or option. Needs no key."""
    provider, model = parse_spec(spec)
    return ADAPTERS[provider](model, options)


def make_provider_agent(spec: str, options: ProviderOptions | None = None) -> ProviderAgent:
    """The agent for ``openai:M``, ``compat:M``, ``anthropic:M`` or ``gemini:M``.

    Raises ``ProviderConfigError`` (one line) for a bad spec, an effort the model
    does not take, or a missing key.
    """
    options = options or ProviderOptions()
    adapter = make_adapter(spec, options)
    return ProviderAgent(spec, adapter, api_key(adapter.provider))


class ProviderAgent:
    def __init__(self, spec: str, adapter: Adapter, key: str, limiter: AdaptiveLimiter | None = None,
                 prices: PriceTable | None = None, sleep: Callable[[float], None] | None = None) -> None:
        self.spec = spec
        self.adapter = adapter
        self.options = adapter.options
        self._secrets = (key,)
        self._sleep = sleep
        self.prices = prices
        self.limiter = limiter or limiter_for(adapter.provider, adapter.model, self.options.base_url)
        adapter.open(key)

    def act(self, prompt: Prompt, ctx: TurnContext | None = None, on_text: OnText | None = None, *,
            deadline: Deadline | None = None, cancel: CancelToken | None = None) -> Reply:
        if cancel is not None and cancel.cancelled:
            return Reply.cancelled_reply(cancel.reason, model=self.adapter.model)
        body = self.adapter.request(prompt)
        attempts: list[Attempt] = []
        billed: list[Usage] = []
        last: list[tuple[Completion, float]] = []
        backoff: list[float] = []  # when the wait now under way began (empty while a try runs)

        def attempt() -> Completion:
            backoff.clear()
            with self.limiter.slot(cancel, deadline) as slot:
                started = time.monotonic()
                try:
                    done = self._complete(body, on_text, cancel, deadline)
                except CallStopped as stop:  # the request went out; nobody waits for its answer
                    kind = "cancelled" if isinstance(stop, CallCancelled) else "deadline"
                    attempts.append(Attempt(False, kind, f"{stop} while waiting for the reply"))
                    raise
                except Exception as exc:
                    failure = classify(exc, self._secrets)
                    if failure is None:
                        exc.args = tuple(scrub(str(a), self._secrets) for a in exc.args)
                        raise FatalAgentError(one_line(f"{self.spec}: unexpected {type(exc).__name__}: {exc}",
                                                       self._secrets)) from exc
                    slot.outcome = failure.error_class
                    attempts.append(Attempt(False, failure.error_class, failure.message, failure.status))
                    raise failure from None
                slot.outcome = "ok"
                latency = time.monotonic() - started
            if done.usage is not None:
                billed.append(done.usage)
            last.append((done, latency))
            if done.problem:
                message = f"{PROBLEMS[done.problem]} (finish: {done.finish_reason})"
                attempts.append(Attempt(False, done.problem, message, 200))
                raise ProviderError(done.problem, message, 200)
            server = self.options.clock == "server"
            charged = None if not server else "server" if done.server_s is not None else "wall"
            if server or done.server_s is not None:
                attempts.append(TimedAttempt(True, 200, done.server_s, round(latency, 4) if server else None, charged))
            else:
                attempts.append(Attempt(True, status=200))
            return done

        def on_wait(seconds: float) -> None:
            attempts[-1].wait_s = round(seconds, 3)
            backoff.append(time.monotonic())

        def account(**fields: Any) -> dict[str, Any]:
            usage = _total(billed)
            seen, latency = last[-1] if last else (None, 0.0)
            return dict(usage=usage, latency_s=latency, cost_usd=self._cost(usage, seen), attempts=attempts,
                        finish_reason=seen.finish_reason if seen else None,
                        model=(seen.model if seen else None) or self.adapter.model,
                        request_id=seen.request_id if seen else None, **fields)

        try:
            done = with_retries(attempt, self.options.max_attempts, self.options.max_wait_s, on_wait, self._sleep,
                                cancel, deadline)
        except CallStopped as stop:
            if backoff and attempts:  # stopped during a backoff: record the wait as it really was
                attempts[-1].wait_s = round(time.monotonic() - backoff[0], 3)
            if isinstance(stop, CallCancelled):
                return Reply.cancelled_reply(stop.reason, **account())
            return Reply(text="", **account(
                error=f"no usable reply after {len(attempts)} attempt(s): the deadline passed"))
        except ProviderError as failure:
            if failure.error_class == "fatal":
                line = self._fatal_line(failure)
                raise FatalAgentError(line, Reply(text="", **account(error=line))) from None
            return Reply(text="", **account(
                error=one_line(f"no usable reply after {len(attempts)} attempt(s): {failure.message}",
                               self._secrets)))
        usage = _total(billed)
        return Reply(text=done.text, usage=usage, latency_s=self._charged(done, last[-1][1]),
                     cost_usd=self._cost(usage, done),
                     attempts=attempts, finish_reason=done.finish_reason, model=done.model or self.adapter.model,
                     request_id=done.request_id, tool_calls=list(done.tool_calls))

    def _charged(self, done: Completion, wall_s: float) -> float:
        """The time a reply's turn is charged: the server's own under ``--clock latency:server`` when the
        reply reports it (its attempt says which was charged), else the wall time of the call."""
        if self.options.clock == "server" and done.server_s is not None:
            return done.server_s
        return wall_s

    def _complete(self, body: dict[str, Any], on_text: OnText | None, cancel: CancelToken | None,
                  deadline: Deadline | None) -> Completion:
        """One SDK call. With a cancel token or deadline it runs in a helper thread while this
        thread relays the streamed text and stops waiting within ``POLL_S`` of a cancel or at
        the deadline (the abandoned request ends on its own, or when the client closes)."""
        if cancel is None and deadline is None:
            return self.adapter.complete(body, on_text)
        box: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()

        def work() -> None:
            try:
                box.put(("done", self.adapter.complete(body, (lambda d: box.put(("text", d))) if on_text else None)))
            except BaseException as exc:  # handed to the waiting thread
                box.put(("error", exc))

        HELPERS.submit(work)
        # a cancel wakes the wait (no polling: hundreds of waiting calls each waking to look cost CPU)
        unsubscribe = cancel.subscribe(lambda: box.put(("cancel", None))) if cancel is not None else None
        try:
            while True:
                try:
                    kind, value = box.get(timeout=None if deadline is None else min(POLL_S, deadline.remaining()))
                except queue.Empty:
                    if cancel is not None:
                        cancel.check()
                    if deadline is not None:
                        deadline.check()
                    continue
                if kind == "cancel":
                    if cancel is not None:
                        cancel.check()
                elif kind == "text":
                    if on_text is not None:
                        on_text(value)
                elif kind == "done":
                    done: Completion = value
                    return done
                else:
                    raise value
        finally:
            if unsubscribe is not None:
                unsubscribe()

    def _cost(self, usage: Usage | None, seen: Completion | None) -> float | None:
        if usage is None:
            return None
        table = self.prices or default_prices()
        price = table.lookup(self.adapter.provider, self.adapter.model)
        if price is None and seen is not None and seen.model:
            price = table.lookup(self.adapter.provider, seen.model)
        return None if price is None else price.cost(usage)

    def _fatal_line(self, failure: ProviderError) -> str:
        """One line: what failed, at which URL (never a key), and what to check."""
        status, var = failure.status, key_var(self.adapter.provider)
        url = self._url()
        flag = "--base-url" if self.options.base_url else "the network"
        if failure.unreachable == "connection refused":
            what = f"nothing answers at {url}"
            hint = ("check that the model server is running there and --base-url" if self.options.base_url
                    else "check the network (a proxy or firewall?)")
        elif failure.unreachable == "unknown host":
            what, hint = f"unknown host in {url}", f"check {flag} and DNS"
        elif failure.unreachable == "TLS failure":
            what = f"TLS failed with {url}"
            hint = "check http:// versus https:// in --base-url and the server's certificate"
        elif status in (401, 403):
            what, hint = f"the provider refused the API key at {url}", f"check {var}"
        elif status == 429:
            what, hint = f"the account's quota or credit is used up at {url}", "check its billing"
        elif status == 404:
            where = " and --base-url" if self.options.base_url else ""
            what, hint = f"unknown model or endpoint at {url}", f"check the model name{where}"
        elif status is not None and 400 <= status < 500 and (limit := _IMAGE_LIMIT.search(failure.message)):
            # vLLM's --limit-mm-per-prompt: the doctor measures what the settings need
            what = (f"the server at {url} takes at most {limit[1]} image{'s' * (limit[1] != '1')} in one request, "
                    "fewer than this turn carries")
            hint = ("run `workstation doctor` with this --base-url and the run's settings: it says how many a turn "
                    "needs for vLLM's --limit-mm-per-prompt, and which settings send fewer")
        elif status is not None and 400 <= status < 500:
            what, hint = f"the provider rejected the request at {url}", "check the options for this model"
        else:
            what, hint = f"the provider failed at {url}", "check the provider's status"
        detail = failure.message.split(": ", 1)[-1] if failure.unreachable else failure.message
        return one_line(f"{self.spec}: {what}; {hint} ({detail})", self._secrets, limit=400)

    def _url(self) -> str:
        """The request URL without its query (where Gemini keys could sit), scrubbed."""
        url, _ = self.adapter.endpoint()
        return scrub(url.split("?", 1)[0], self._secrets)

    def close(self) -> None:
        self.adapter.close()

    def describe(self) -> dict[str, Any]:
        """What the manifest records: provider, model, options and endpoint, never a key."""
        provider, model = self.adapter.provider, self.adapter.model
        table = self.prices or default_prices()
        price = table.lookup(provider, model)
        url, _ = self.adapter.endpoint()
        sdk = sdk_version(SDKS[provider])
        return {
            "spec": self.spec,
            "provider": provider,
            "api": PROVIDERS[provider],
            "model": model,
            "base_url": scrub(self.options.base_url, self._secrets) if self.options.base_url else None,
            "endpoint": scrub(url, self._secrets),
            "options": {k: (scrub(v, self._secrets) if isinstance(v, str) else v)
                        for k, v in self.options.to_json().items()},
            "key_from": var_or_none(provider),
            "reasoning": reasoning.describe(model),
            "sdk": sdk,
            "price_per_mtok": None if price is None else vars(price).copy(),
            "price_note": table.note(provider, model),
            "price_table": {"version": table.version, "as_of": table.as_of},
        }


@functools.cache
def sdk_version(package: str) -> str:
    """``"openai 3.57.0"``, read once a process (each lookup parses the package's metadata: ~6 ms,
    and a batch starts hundreds of runs)."""
    try:
        return f"{package} {importlib.metadata.version(package)}"
    except importlib.metadata.PackageNotFoundError:
        return package


def var_or_none(provider: str) -> str | None:
    """The environment variable the key came from (compat may run without one)."""
    var = key_var(provider)
    return var if os.environ.get(var) else None


def _total(usages: list[Usage]) -> Usage | None:
    return sum(usages[1:], usages[0]) if usages else None
