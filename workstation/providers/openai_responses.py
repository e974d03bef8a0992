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

from workstation.calls import OnText, ToolCall, Usage, parse_arguments
from workstation.turn.prompt import Prompt
from workstation.providers.adapter import (Completion, ImageEncoder, conversation, judge, parts,
                                           png_data_url, split_kwargs, system_text)
from workstation.providers.retry import ProviderError, stream_failure
from workstation.providers.spec import ProviderConfigError, ProviderOptions

DEFAULT_BASE_URL = "https://api.openai.com/v1"

_NOT_REASONING = re.compile(r"^(gpt-4|gpt-3\.5|chatgpt-)|chat-latest$")
_EFFORTS = (  # known per-family limits; models not listed get any effort and the server decides
    (re.compile(r"^gpt-5(-mini|-nano)?(-\d{4}-\d{2}-\d{2})?$"), ("minimal", "low", "medium", "high")),
    (re.compile(r"^gpt-5\.1(-mini)?(-\d{4}-\d{2}-\d{2})?$"), ("none", "low", "medium", "high")),
    (re.compile(r"^o\d"), ("low", "medium", "high")),
)


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
        self.client = None

    def request(self, prompt: Prompt, image: ImageEncoder | None = None) -> dict:
        image = image or png_data_url
        body: dict = {"model": self.model}
        instructions = system_text(prompt)
        if instructions:
            body["instructions"] = instructions
        items = []
        for m in conversation(prompt):
            if m.role == "assistant":
                if m.text() or not m.tool_calls:
                    items.append({"role": "assistant", "content": m.text()})
                items.extend({"type": "function_call", "call_id": c.id, "name": c.name,
                              "arguments": json.dumps(c.arguments)} for c in m.tool_calls)
                continue
            content = [{"type": "input_text", "text": v} if kind == "text"
                       else {"type": "input_image", "image_url": image(v), "detail": "auto"}
                       for kind, v in parts(prompt, m)]
            if m.role == "tool" and m.answers is not None:
                only_text = all(c["type"] == "input_text" for c in content)
                output = "".join(c["text"] for c in content) if only_text else content
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

    def complete(self, body: dict, on_text: OnText | None) -> Completion:
        known, extra = split_kwargs(self.client.responses.create, body)
        stream = self.client.responses.create(**known, extra_body=extra or None)
        text: list[str] = []
        final, refused = None, False
        with stream:
            for event in stream:
                kind = getattr(event, "type", "")
                if kind == "response.output_text.delta":
                    text.append(event.delta)
                    if on_text:
                        on_text(event.delta)
                elif kind == "response.refusal.delta":
                    refused = True
                elif kind in ("response.completed", "response.incomplete"):
                    final = event.response
                elif kind == "response.failed":
                    err = getattr(event.response, "error", None)
                    raise stream_failure(getattr(err, "code", None), getattr(err, "message", None))
                elif kind == "error":
                    raise stream_failure(getattr(event, "code", None), getattr(event, "message", None))
        if final is None:
            raise ProviderError("transient", "the reply stream ended before the response was complete")
        full = "".join(text) or (getattr(final, "output_text", "") or "")
        reason = getattr(final.incomplete_details, "reason", None) if final.incomplete_details else None
        u = final.usage
        usage = None
        if u is not None:
            details, out = u.input_tokens_details, u.output_tokens_details
            usage = openai_usage(u.input_tokens, getattr(details, "cached_tokens", 0) or 0,
                                 getattr(details, "cache_write_tokens", 0) or 0, u.output_tokens,
                                 getattr(out, "reasoning_tokens", 0) or 0)
        blocked = refused or reason == "content_filter"
        calls = []
        for item in getattr(final, "output", None) or []:
            if getattr(item, "type", "") == "function_call":
                args, error = parse_arguments(item.arguments)
                calls.append(ToolCall(item.call_id or item.id or f"call_{len(calls)}", item.name, args, error))
        return Completion(full, usage, reason or final.status, final.id, final.model,
                          judge(full, blocked, reason == "max_output_tokens", bool(calls)), calls)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
