"""Anthropic Messages API adapter (``anthropic:MODEL``).

The instructions are one system block marked for caching. User turns are
``text`` and base64 PNG ``image`` blocks in prompt order. In a multi-turn
(append-only) prompt the last block of the previous user turn and of the
current one are marked too: the first reads what the last call cached, the
second lets the next call read this one (four marks at most are allowed).

``--effort``: ``none`` turns thinking off. Models from Claude 4.6 on think
adaptively, steered by ``output_config.effort`` (low .. max; xhigh from 4.7).
Older models take a fixed thinking budget. Thinking tokens count toward
``max_tokens``, which the API requires, so a default is always sent.

Tools go as ``tools`` with an ``input_schema``; the model's calls are
``tool_use`` blocks (their input streamed as JSON pieces), and the results go
back in the next user turn as ``tool_result`` blocks (text and images).
"""

from __future__ import annotations

import base64
import re
from typing import Any

from workstation.engine.calls import OnText, ToolCall, Usage, parse_arguments
from workstation.engine.prompt import Prompt
from workstation.run.providers import adapter
from workstation.run.providers.retry import ProviderError, stream_failure
from workstation.run.providers.spec import ProviderConfigError, ProviderOptions

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_MAX_TOKENS = 8192  # room for a short reply plus adaptive thinking
REPLY_ROOM = 4096  # added on top of a fixed thinking budget
BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
ADAPTIVE_EFFORTS = ("low", "medium", "high", "xhigh", "max")
EMPTY_REPLY = "(no reply)"  # the API rejects empty assistant text
_CACHE = {"type": "ephemeral"}


def _version(model: str) -> tuple[int, int] | None:
    """(major, minor) of a Claude model name, or None for names without one."""
    m = re.match(r"claude-(?:opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?:-\d{8})?$", model)
    if m:
        return int(m.group(1)), int(m.group(2) or 0)
    m = re.match(r"claude-(\d+)-(\d+)-", model)  # claude-3-7-sonnet-...
    return (int(m.group(1)), int(m.group(2))) if m else None


def thinking_fields(model: str, options: ProviderOptions) -> dict[str, Any]:
    """``thinking``, ``output_config`` and ``max_tokens`` for this model and effort."""
    effort, limit = options.effort, options.max_output_tokens
    fields: dict[str, Any] = {}
    if effort == "none":
        fields["thinking"] = {"type": "disabled"}
    elif effort is not None:
        version = _version(model)
        if version is None or version >= (4, 6):
            if effort not in ADAPTIVE_EFFORTS:
                raise ProviderConfigError(f"anthropic:{model} does not take effort {effort!r}; "
                                          f"use none or one of {', '.join(ADAPTIVE_EFFORTS)}", "effort")
            if effort == "xhigh" and version is not None and version < (4, 7):
                raise ProviderConfigError(f"anthropic:{model} does not take effort 'xhigh'; use high or max", "effort")
            fields["thinking"] = {"type": "adaptive"}
            fields["output_config"] = {"effort": effort}
        else:
            if effort not in BUDGETS:
                raise ProviderConfigError(
                    f"anthropic:{model} takes a fixed thinking budget; use effort none or one of {', '.join(BUDGETS)}", "effort")
            budget = BUDGETS[effort]
            if limit is not None and limit <= budget:
                raise ProviderConfigError(
                    f"max output tokens {limit} leaves no room after the {budget}-token thinking budget of "
                    f"effort {effort!r}; raise it above {budget}", "max_output_tokens")
            fields["thinking"] = {"type": "enabled", "budget_tokens": budget}
            limit = limit or budget + REPLY_ROOM
    thinking_on = fields.get("thinking", {}).get("type") in ("enabled", "adaptive")
    if thinking_on and options.temperature not in (None, 1.0):
        raise ProviderConfigError(f"anthropic:{model} allows only temperature 1 while thinking; "
                                  "drop --temperature or use --effort none", "temperature")
    fields["max_tokens"] = limit or DEFAULT_MAX_TOKENS
    return fields


class AnthropicMessages:
    provider = "anthropic"

    def __init__(self, model: str, options: ProviderOptions) -> None:
        self.model, self.options = model, options
        self.fields = thinking_fields(model, options)
        self.client: Any = None  # the SDK client, made by open()

    def request(self, prompt: Prompt, image: adapter.ImageEncoder | None = None) -> dict[str, Any]:
        image = image or _base64
        messages: list[dict[str, Any]] = []
        for m in adapter.conversation(prompt):
            if m.role == "assistant":
                content = [dict(b) for b in (m.tool_calls[0].meta.get("thinking") or [])] if m.tool_calls else []
                if m.text() or not m.tool_calls:  # thinking blocks must come back with the calls they led to
                    content.append({"type": "text", "text": m.text() or EMPTY_REPLY})
                content += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
                            for c in m.tool_calls]
                messages.append({"role": "assistant", "content": content})
                continue
            blocks: list[dict[str, Any]] = [{"type": "text", "text": v} if kind == "text"
                      else {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": image(v)}}
                      for kind, v in adapter.parts(prompt, m)]
            if adapter.is_tool_result(m) and m.answers is not None:
                block: dict[str, Any] = {"type": "tool_result", "tool_use_id": m.answers.id, "content": blocks}
                if m.is_error:
                    block["is_error"] = True
                last = messages[-1] if messages else None
                if last is not None and last["role"] == "user" and last.get("_results"):
                    last["content"].append(block)  # the results of one reply share a user turn
                else:
                    messages.append({"role": "user", "content": [block], "_results": True})
                continue
            messages.append({"role": "user", "content": blocks})
        for msg in messages:
            msg.pop("_results", None)
        users = [msg for msg in messages if msg["role"] == "user" and msg["content"]]
        if len(users) > 1:  # a real multi-turn chat: cache up to the previous and the current turn
            for msg in users[-2:]:
                msg["content"][-1]["cache_control"] = dict(_CACHE)
        body: dict[str, Any] = {"model": self.model, "max_tokens": self.fields["max_tokens"]}
        instructions = adapter.system_text(prompt)
        if instructions:
            body["system"] = [{"type": "text", "text": instructions, "cache_control": dict(_CACHE)}]
        body["messages"] = messages
        if prompt.tools:
            body["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.parameters}
                             for t in prompt.tools]
        for name in ("thinking", "output_config"):
            if name in self.fields:
                body[name] = self.fields[name]
        if self.options.temperature is not None:
            body["temperature"] = self.options.temperature
        body["stream"] = True
        return body

    def endpoint(self) -> tuple[str, dict[str, str]]:
        base = (self.options.base_url or DEFAULT_BASE_URL).rstrip("/")
        return f"{base}/v1/messages", {"Authorization": "Bearer $ANTHROPIC_API_KEY", "anthropic-version": "2023-06-01",
                                       "Content-Type": "application/json"}

    def open(self, key: str) -> None:
        import anthropic

        self.client = anthropic.Anthropic(api_key=key, base_url=self.options.base_url, max_retries=0,
                                          timeout=self.options.timeout)

    def complete(self, body: dict[str, Any], on_text: OnText | None) -> adapter.Completion:
        known, extra = adapter.split_kwargs(self.client.messages.create, body)
        stream = self.client.messages.create(**known, extra_body=extra or None)
        text: list[str] = []
        uses: dict[int, dict[str, Any]] = {}  # block index -> id, name and input pieces of a tool_use block
        thoughts: dict[int, dict[str, Any]] = {}  # block index -> a thinking block (sent back with tool calls)
        start = stop = request_id = model = None
        output = thinking = 0
        done = False
        with stream:
            for event in stream:
                kind = getattr(event, "type", "")
                if kind == "message_start":
                    start, request_id, model = event.message.usage, event.message.id, event.message.model
                elif kind == "content_block_start" and getattr(event.content_block, "type", "") in (
                        "thinking", "redacted_thinking"):
                    block = event.content_block
                    thoughts[event.index] = ({"type": "thinking", "thinking": getattr(block, "thinking", "") or "",
                                              "signature": getattr(block, "signature", "") or ""}
                                             if block.type == "thinking" else
                                             {"type": "redacted_thinking", "data": getattr(block, "data", "")})
                elif kind == "content_block_delta" and event.index in thoughts:
                    delta = event.delta
                    if getattr(delta, "type", "") == "thinking_delta":
                        thoughts[event.index]["thinking"] += delta.thinking or ""
                    elif getattr(delta, "type", "") == "signature_delta":
                        thoughts[event.index]["signature"] += delta.signature or ""
                elif kind == "content_block_start" and getattr(event.content_block, "type", "") == "tool_use":
                    block = event.content_block
                    uses[event.index] = {"id": block.id, "name": block.name, "json": [],
                                         "input": getattr(block, "input", None) or {}}
                elif kind == "content_block_delta" and getattr(event.delta, "type", "") == "input_json_delta":
                    if event.index in uses:
                        uses[event.index]["json"].append(event.delta.partial_json or "")
                elif kind == "content_block_delta" and getattr(event.delta, "type", "") == "text_delta":
                    text.append(event.delta.text)
                    if on_text:
                        on_text(event.delta.text)
                elif kind == "message_delta":
                    stop = event.delta.stop_reason or stop
                    output = event.usage.output_tokens
                    details = getattr(event.usage, "output_tokens_details", None)
                    thinking = getattr(details, "thinking_tokens", 0) or thinking
                elif kind == "message_stop":
                    done = True
                elif kind == "error":
                    err = getattr(event, "error", None)
                    raise stream_failure(getattr(err, "type", None), getattr(err, "message", None))
        if not done:
            raise ProviderError("transient", "the reply stream ended before the message was complete")
        usage = None
        if start is not None:
            usage = Usage(input_tokens=start.input_tokens or 0,
                          cache_read_tokens=start.cache_read_input_tokens or 0,
                          cache_write_tokens=start.cache_creation_input_tokens or 0,
                          output_tokens=output, reasoning_tokens=thinking)
        full = "".join(text)
        calls = []
        for _, use in sorted(uses.items()):
            args, error = parse_arguments("".join(use["json"]) or use["input"])
            calls.append(ToolCall(use["id"], use["name"], args, error))
        if calls and thoughts:
            calls[0].meta["thinking"] = [b for _, b in sorted(thoughts.items())]
        return adapter.Completion(full, usage, stop, request_id, model,
                                  adapter.judge(full, stop == "refusal", stop == "max_tokens", bool(calls)), calls)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()


def _base64(png: bytes) -> str:
    return base64.b64encode(png).decode("ascii")
