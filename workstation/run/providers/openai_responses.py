"""OpenAI Responses API adapter (``openai:MODEL``).

Instructions go in ``instructions``; user turns are ``input_text`` and
``input_image`` parts (PNG data URLs) in prompt order; earlier replies are
assistant messages. ``--effort`` becomes ``reasoning.effort``. Caching is
automatic on OpenAI's side. Usage counts cached and cache-written tokens inside
``input_tokens``: we subtract them so ``input_tokens`` means uncached input.

Tools go as ``tools`` of type ``function``; the model's calls are the
``function_call`` items of the finished response, sent back as they were, each
followed by its ``function_call_output`` (text, or text and images as input items).
"""

from __future__ import annotations

import json
import re
from typing import Any

from workstation.engine.calls import OnText, ToolCall, Usage, parse_arguments
from workstation.engine.prompt import Prompt
from workstation.run.providers import adapter
from workstation.run.providers.json_stream import get, json_stream
from workstation.run.providers.retry import ProviderError, stream_failure
from workstation.run.providers.spec import ProviderConfigError, ProviderOptions

DEFAULT_BASE_URL = "https://api.openai.com/v1"

_NOT_REASONING = re.compile(r"^(gpt-4|gpt-3\.5|chatgpt-)|chat-latest$")
_EFFORTS = (  # known per-family limits; models not listed get any effort and the server decides
    (re.compile(r"^gpt-5(-mini|-nano)?(-\d{4}-\d{2}-\d{2})?$"), ("minimal", "low", "medium", "high")),
    (re.compile(r"^gpt-5\.1(-mini)?(-\d{4}-\d{2}-\d{2})?$"), ("none", "low", "medium", "high")),
    (re.compile(r"^o\d"), ("low", "medium", "high")),
)


def output_text(output: list[Any]) -> str:
    """The text of a finished response's ``message`` items (what the SDK's ``output_text`` joins)."""
    return "".join(part.get("text") or "" for item in output if get(item, "type") == "message"
                   for part in (get(item, "content") or []) if get(part, "type") == "output_text")


def check_effort(model: str, effort: str | None) -> None:
    """Raise ``ProviderConfigError`` for an effort this OpenAI model is known not to take."""
    if effort is None:
        return
    if _NOT_REASONING.search(model):
        raise ProviderConfigError(f"openai:{model} is not a reasoning model and takes no effort; drop --effort", "effort")
    for pattern, allowed in _EFFORTS:
        if pattern.search(model) and effort not in allowed:
            raise ProviderConfigError(
                f"openai:{model} does not take effort {effort!r}; use one of {', '.join(allowed)}", "effort")


def openai_usage(total_in: int, cached: int, cache_write: int, output: int, reasoning: int) -> Usage:
    """OpenAI counts cached and cache-written tokens inside the prompt total."""
    return Usage(input_tokens=max(0, total_in - cached - cache_write), cache_read_tokens=cached,
                 cache_write_tokens=cache_write, output_tokens=output, reasoning_tokens=reasoning)


class OpenAIResponses:
    provider = "openai"

    def __init__(self, model: str, options: ProviderOptions) -> None:
        check_effort(model, options.effort)
        self.model, self.options = model, options
        self.client: Any = None  # the SDK client, made by open()

    def request(self, prompt: Prompt, image: adapter.ImageEncoder | None = None) -> dict[str, Any]:
        image = image or adapter.png_data_url
        body: dict[str, Any] = {"model": self.model}
        instructions = adapter.system_text(prompt)
        if instructions:
            body["instructions"] = instructions
        items: list[dict[str, Any]] = []
        for m in adapter.conversation(prompt):
            if m.role == "assistant":
                if m.text() or not m.tool_calls:
                    items.append({"role": "assistant", "content": m.text()})
                items.extend({"type": "function_call", "call_id": c.id, "name": c.name,
                              "arguments": json.dumps(c.arguments)} for c in m.tool_calls)
                continue
            content: list[dict[str, Any]] = [{"type": "input_text", "text": v} if kind == "text"
                       else {"type": "input_image", "image_url": image(v), "detail": "auto"}
                       for kind, v in adapter.parts(prompt, m)]
            if adapter.is_tool_result(m) and m.answers is not None:
                only_text = all(c["type"] == "input_text" for c in content)
                output: str | list[dict[str, Any]] = "".join(c["text"] for c in content) if only_text else content
                items.append({"type": "function_call_output", "call_id": m.answers.id, "output": output})
                continue
            items.append({"role": "user", "content": content})
        body["input"] = items
        if prompt.tools:
            body["tools"] = [{"type": "function", "name": t.name, "description": t.description,
                              "parameters": t.parameters, "strict": False} for t in prompt.tools]
        if self.options.effort is not None:
            body["reasoning"] = {"effort": self.options.effort}
        if self.options.max_output_tokens is not None:
            body["max_output_tokens"] = self.options.max_output_tokens
        if self.options.temperature is not None:
            body["temperature"] = self.options.temperature
        body["store"] = False
        body["stream"] = True
        return body

    def endpoint(self) -> tuple[str, dict[str, str]]:
        base = (self.options.base_url or DEFAULT_BASE_URL).rstrip("/")
        return f"{base}/responses", {"Authorization": "Bearer $OPENAI_API_KEY", "Content-Type": "application/json"}

    def open(self, key: str) -> None:
        import openai

        self.client = openai.OpenAI(api_key=key, base_url=self.options.base_url, max_retries=0,
                                    timeout=self.options.timeout)

    def complete(self, body: dict[str, Any], on_text: OnText | None) -> adapter.Completion:
        # posted as built, events read as JSON (``json_stream``): ``responses.create`` re-walked the
        # body (every history image's base64 text) against its typed parameters, and typed every event
        stream = self.client.post("/responses", body=body, cast_to=object, stream=True, stream_cls=json_stream())
        text: list[str] = []
        final, refused = None, False
        with stream:
            for event in stream:
                kind = get(event, "type") or ""
                if kind == "response.output_text.delta":
                    delta = get(event, "delta")
                    if isinstance(delta, str) and delta:
                        text.append(delta)
                        if on_text:
                            on_text(delta)
                elif kind == "response.refusal.delta":
                    refused = True
                elif kind in ("response.completed", "response.incomplete"):
                    final = get(event, "response")
                elif kind == "response.failed":
                    err = get(get(event, "response"), "error")
                    raise stream_failure(get(err, "code"), get(err, "message"))
                elif kind == "error":
                    raise stream_failure(get(event, "code"), get(event, "message"))
        if not isinstance(final, dict):
            raise ProviderError("transient", "the reply stream ended before the response was complete")
        found = final.get("output")
        output: list[Any] = found if isinstance(found, list) else []
        full = "".join(text) or output_text(output)
        reason = get(final.get("incomplete_details"), "reason")
        u = final.get("usage")
        usage = None
        if isinstance(u, dict):
            details, out = get(u, "input_tokens_details"), get(u, "output_tokens_details")
            usage = openai_usage(u.get("input_tokens") or 0, get(details, "cached_tokens") or 0,
                                 get(details, "cache_write_tokens") or 0, u.get("output_tokens") or 0,
                                 get(out, "reasoning_tokens") or 0)
        blocked = refused or reason == "content_filter"
        calls: list[ToolCall] = []
        for item in output:
            if get(item, "type") == "function_call":
                args, error = parse_arguments(get(item, "arguments") or "")
                calls.append(ToolCall(get(item, "call_id") or get(item, "id") or f"call_{len(calls)}",
                                      get(item, "name") or "", args, error))
        return adapter.Completion(full, usage, reason or final.get("status"), final.get("id"), final.get("model"),
                                  adapter.judge(full, blocked, reason == "max_output_tokens", bool(calls)), calls)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
