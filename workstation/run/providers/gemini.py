"""Google Gemini adapter (``gemini:MODEL``) through google-genai.

The request is the SDK's own form: ``contents`` (user and ``model`` turns of
``text`` and ``inline_data`` PNG parts, in prompt order) and a ``config`` with
the system instruction. Caching is implicit on Google's side. ``--effort`` maps
to ``thinking_level`` on Gemini 3 and later and to ``thinking_budget`` on 2.5.
Usage quirks: the prompt count includes cached tokens (subtracted) and the
candidate count excludes thoughts (added to output).

Tools go as ``config.tools`` function declarations; the model's calls are
``function_call`` parts (with the thought signature Gemini 3 wants to see again),
and each result goes back in a user turn as a ``function_response`` part, its
images as ``inline_data`` parts after it.
"""

from __future__ import annotations

import re
from typing import Any

from workstation.engine.calls import OnText, ToolCall, Usage
from workstation.engine.prompt import Prompt
from workstation.run.providers import adapter
from workstation.run.providers.retry import ProviderError
from workstation.run.providers.spec import ProviderConfigError, ProviderOptions

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
THINKING_LEVELS = {"minimal": "MINIMAL", "low": "LOW", "medium": "MEDIUM", "high": "HIGH", "xhigh": "XHIGH"}
BUDGETS_25 = {"none": 0, "minimal": 512, "low": 2048, "medium": 8192, "high": 24576}
BLOCKED = {"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "RECITATION", "IMAGE_SAFETY",
           "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION"}


def thinking_config(model: str, effort: str | None) -> dict[str, Any] | None:
    """The ``thinking_config`` for this model and effort (None: leave the model's default)."""
    if effort is None:
        return None
    m = re.match(r"(?:models/)?gemini-(\d+)(?:\.(\d+))?", model)
    version = (int(m.group(1)), int(m.group(2) or 0)) if m else None
    if version is None or version >= (3, 0):
        if effort not in THINKING_LEVELS:
            raise ProviderConfigError(
                f"gemini:{model} thinks by level and cannot take effort {effort!r}; use one of {', '.join(THINKING_LEVELS)}", "effort")
        return {"thinking_level": THINKING_LEVELS[effort]}
    if version >= (2, 5):
        if effort not in BUDGETS_25:
            raise ProviderConfigError(
                f"gemini:{model} takes a thinking budget up to 24576 tokens; use one of {', '.join(BUDGETS_25)}", "effort")
        if effort == "none" and "pro" in model:
            raise ProviderConfigError(f"gemini:{model} cannot turn thinking off; use minimal", "effort")
        return {"thinking_budget": BUDGETS_25[effort]}
    raise ProviderConfigError(f"gemini:{model} does not think; drop --effort", "effort")


def gemini_usage(meta: Any) -> Usage:
    prompt = meta.prompt_token_count or 0
    cached = meta.cached_content_token_count or 0
    thoughts = meta.thoughts_token_count or 0
    return Usage(input_tokens=max(0, prompt - cached), cache_read_tokens=cached, cache_write_tokens=0,
                 output_tokens=(meta.candidates_token_count or 0) + thoughts, reasoning_tokens=thoughts)


class Gemini:
    provider = "gemini"

    def __init__(self, model: str, options: ProviderOptions) -> None:
        self.model, self.options = model, options
        self.thinking = thinking_config(model, options.effort)
        self.client: Any = None  # the SDK client, made by open()

    def request(self, prompt: Prompt, image: adapter.ImageEncoder | None = None) -> dict[str, Any]:
        image = image or (lambda png: png)  # the SDK base64-encodes bytes itself
        contents: list[dict[str, Any]] = []
        for m in adapter.conversation(prompt):
            role = "model" if m.role == "assistant" else "user"
            items: list[dict[str, Any]] = [{"text": v} if kind == "text" else {"inline_data": {"mime_type": "image/png", "data": image(v)}}
                     for kind, v in adapter.parts(prompt, m)]
            if m.role == "assistant" and m.tool_calls:
                for c in m.tool_calls:
                    part: dict[str, Any] = {"function_call": {"name": c.name, "args": c.arguments}}
                    if not c.meta.get("made_up_id"):
                        part["function_call"]["id"] = c.id
                    if c.meta.get("thought_signature"):
                        part["thought_signature"] = c.meta["thought_signature"]
                    items.append(part)
            if adapter.is_tool_result(m) and m.answers is not None:
                text = "".join(p["text"] for p in items if "text" in p)
                answer: dict[str, Any] = {"name": m.answers.name,
                                "response": {"error" if m.is_error else "result": text}}
                if not m.answers.meta.get("made_up_id"):
                    answer["id"] = m.answers.id
                items = [{"function_response": answer}, *[p for p in items if "inline_data" in p]]
                last = contents[-1] if contents else None
                if last is not None and last.get("_results"):
                    last["parts"].extend(items)  # the results of one reply share a user turn
                    continue
                contents.append({"role": "user", "parts": items, "_results": True})
                continue
            contents.append({"role": role, "parts": items or [{"text": ""}]})
        for content in contents:
            content.pop("_results", None)
        config: dict[str, Any] = {}
        instructions = adapter.system_text(prompt)
        if instructions:
            config["system_instruction"] = instructions
        if self.options.temperature is not None:
            config["temperature"] = self.options.temperature
        if self.options.max_output_tokens is not None:
            config["max_output_tokens"] = self.options.max_output_tokens
        if self.thinking is not None:
            config["thinking_config"] = self.thinking
        if prompt.tools:
            config["tools"] = [{"function_declarations": [
                {"name": t.name, "description": t.description, "parameters": t.parameters} for t in prompt.tools]}]
            config["automatic_function_calling"] = {"disable": True}
        return {"model": self.model, "contents": contents, "config": config}

    def endpoint(self) -> tuple[str, dict[str, str]]:
        base = (self.options.base_url or DEFAULT_BASE_URL).rstrip("/")
        return (f"{base}/v1/models/{self.model}:streamGenerateContent?alt=sse",
                {"x-goog-api-key": "$GEMINI_API_KEY", "Content-Type": "application/json"})

    def open(self, key: str) -> None:
        from google import genai
        from google.genai import types

        http = types.HttpOptions(base_url=self.options.base_url, timeout=int(self.options.timeout * 1000))
        self.client = genai.Client(api_key=key, vertexai=False, http_options=http)  # no retry_options: no retries

    def complete(self, body: dict[str, Any], on_text: OnText | None) -> adapter.Completion:
        text: list[str] = []
        calls: list[ToolCall] = []
        finish = usage = request_id = model = None
        blocked = False
        for chunk in self.client.models.generate_content_stream(**body):
            request_id, model = chunk.response_id or request_id, chunk.model_version or model
            feedback = chunk.prompt_feedback
            if feedback is not None and feedback.block_reason:
                blocked, finish = True, _name(feedback.block_reason)
            if chunk.usage_metadata is not None:
                usage = gemini_usage(chunk.usage_metadata)
            for cand in (chunk.candidates or [])[:1]:
                for part in (cand.content.parts if cand.content and cand.content.parts else []):
                    if part.function_call is not None:
                        fc = part.function_call
                        meta = {"thought_signature": part.thought_signature} if part.thought_signature else {}
                        if not fc.id:
                            meta["made_up_id"] = True  # Gemini before 3 names no id: none goes back
                        call_id = fc.id or adapter.tool_call_id(len(calls))
                        calls.append(ToolCall(call_id, fc.name or "", dict(fc.args or {}), None, meta))
                    elif part.text and not part.thought:
                        text.append(part.text)
                        if on_text:
                            on_text(part.text)
                if cand.finish_reason:
                    finish = _name(cand.finish_reason)
        if finish is None:
            raise ProviderError("transient", "the reply stream ended before a finish reason")
        full = "".join(text)
        verdict = adapter.judge(full, blocked or finish in BLOCKED, finish == "MAX_TOKENS", bool(calls))
        return adapter.Completion(full, usage, finish, request_id, model, verdict, calls)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()


def _name(value: Any) -> str:
    return str(getattr(value, "name", None) or getattr(value, "value", None) or value)
