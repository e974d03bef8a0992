"""Chat Completions adapter for OpenAI-compatible servers (``compat:MODEL``).

For vLLM, Ollama, llama.cpp's server, Together and the like, reached with
``--base-url``. The system message is plain text (the widest support); user
turns are ``text`` and ``image_url`` parts (PNG data URLs) in prompt order.
``--effort`` is passed as ``reasoning_effort`` and left to the server.
Streaming asks for a final usage chunk; a server that sends none gives no usage.

Reasoning the server sends apart (``reasoning_content``, ``reasoning``) and think tags in the
text become one text with a leading ``<think>`` block, by the model id's rule
(``workstation.run.providers.reasoning``): the parser keeps it as the thought. llama.cpp's server
reports its own inference time per reply (``timings``: ``prompt_ms`` + ``predicted_ms``), kept as
``Completion.server_s``; vLLM, Ollama's OpenAI API and hosted services report none.

Tools go as ``tools`` of type ``function``; the model's calls come back as
``tool_calls`` deltas (arguments streamed in pieces, joined by index), and each
result goes back as a ``role: "tool"`` message naming its ``tool_call_id``. A
tool message carries text only, so a result's images follow in a user message.
"""

from __future__ import annotations

import json
from typing import Any

from workstation.engine.calls import OnText, ToolCall, Usage, parse_arguments
from workstation.engine.prompt import Prompt
from workstation.run.providers import adapter
from workstation.run.providers.json_stream import get as _get
from workstation.run.providers.json_stream import json_stream
from workstation.run.providers.openai_responses import openai_usage
from workstation.run.providers.reasoning import REASONING_FIELDS, fold, rule_for
from workstation.run.providers.retry import ProviderError
from workstation.run.providers.spec import ProviderConfigError, ProviderOptions


def post_stream(client: Any, body: dict[str, Any]) -> Any:
    """The streamed Chat Completion for a JSON-ready ``body``, through the SDK client's own request path
    (auth, headers, timeout, status errors, SSE decoding), as ``chat.completions.create`` sends it but
    without re-walking the body against the SDK's typed parameters: ``request()`` builds plain dicts,
    and that walk (every history image's base64 text) was the largest CPU cost of a call (bench/call_profile.py).
    Its chunks are dicts, as the server sent them (``json_stream``)."""
    return client.post("/chat/completions", body=body, cast_to=object, stream=True, stream_cls=json_stream())


def server_seconds(timings: Any) -> float | None:
    """llama.cpp's ``timings`` (``prompt_ms`` + ``predicted_ms``) in seconds; None without them."""
    if not isinstance(timings, dict):
        return None
    parts = [timings.get(k) for k in ("prompt_ms", "predicted_ms")]
    nums = [float(p) for p in parts if isinstance(p, (int, float)) and not isinstance(p, bool) and p >= 0]
    return round(sum(nums) / 1000, 4) if nums else None


def reasoning_of(d: Any) -> str:
    """The reasoning text a message or delta carries apart from its content ("" without any)."""
    for name in REASONING_FIELDS:
        value = _get(d, name)
        if isinstance(value, str) and value:
            return value
    return ""


def chat_usage(u: Any) -> Usage | None:
    """A Chat Completion's ``usage`` object (streamed or whole) as our ``Usage``; None without one."""
    if not isinstance(u, dict):
        return None
    pd, cd = _get(u, "prompt_tokens_details"), _get(u, "completion_tokens_details")
    return openai_usage(u.get("prompt_tokens") or 0, _get(pd, "cached_tokens") or 0,
                        _get(pd, "cache_write_tokens") or 0, u.get("completion_tokens") or 0,
                        _get(cd, "reasoning_tokens") or 0)


class OpenAIChat:
    provider = "compat"

    def __init__(self, model: str, options: ProviderOptions) -> None:
        if not options.base_url:
            raise ProviderConfigError(
                f"compat:{model} needs --base-url, e.g. http://localhost:8000/v1 (vLLM) "
                "or http://localhost:11434/v1 (Ollama)", "base_url")
        self.model, self.options = model, options
        self.reasoning_rule = rule_for(model)[0]
        self.client: Any = None  # the SDK client, made by open()

    def request(self, prompt: Prompt, image: adapter.ImageEncoder | None = None) -> dict[str, Any]:
        image = image or adapter.png_data_url
        messages: list[dict[str, Any]] = []
        instructions = adapter.system_text(prompt)
        if instructions:
            messages.append({"role": "system", "content": instructions})
        for m in adapter.conversation(prompt):
            if m.role == "assistant":
                msg: dict[str, Any] = {"role": "assistant", "content": m.text()}
                if m.tool_calls:
                    msg["content"] = m.text() or None
                    msg["tool_calls"] = [{"id": c.id, "type": "function", "function": {
                        "name": c.name, "arguments": json.dumps(c.arguments)}} for c in m.tool_calls]
                messages.append(msg)
                continue
            content: list[dict[str, Any]] = [{"type": "text", "text": v} if kind == "text"
                       else {"type": "image_url", "image_url": {"url": image(v)}}
                       for kind, v in adapter.parts(prompt, m)]
            if adapter.is_tool_result(m) and m.answers is not None:
                text = "".join(c["text"] for c in content if c["type"] == "text")
                messages.append({"role": "tool", "tool_call_id": m.answers.id, "content": text})
                images = [c for c in content if c["type"] != "text"]
                if images:
                    messages.append({"role": "user", "content": [
                        {"type": "text", "text": f"The images {m.answers.name} returned:"}, *images]})
                continue
            messages.append({"role": "user", "content": content})
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if prompt.tools:
            body["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                               "parameters": t.parameters}} for t in prompt.tools]
        if self.options.effort is not None:
            body["reasoning_effort"] = self.options.effort
        if self.options.max_output_tokens is not None:
            body["max_tokens"] = self.options.max_output_tokens
        if self.options.temperature is not None:
            body["temperature"] = self.options.temperature
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
        return body

    def endpoint(self) -> tuple[str, dict[str, str]]:
        base = (self.options.base_url or "").rstrip("/")
        return f"{base}/chat/completions", {"Authorization": "Bearer $OPENAI_API_KEY",
                                            "Content-Type": "application/json"}

    def open(self, key: str) -> None:
        import openai

        self.client = openai.OpenAI(api_key=key, base_url=self.options.base_url, max_retries=0,
                                    timeout=self.options.timeout)

    def complete(self, body: dict[str, Any], on_text: OnText | None) -> adapter.Completion:
        stream = post_stream(self.client, body)
        if stream.response.headers.get("content-type", "").startswith("application/json"):
            with stream:  # a server that ignores "stream": true and answers with the whole completion
                return self._whole(json.loads(stream.response.read() or b"null"), on_text)
        text: list[str] = []
        thinking: list[str] = []  # reasoning sent apart from the content
        calls: dict[int, dict[str, Any]] = {}  # index -> id, name and the argument pieces so far
        finish = usage = request_id = model = None
        server_s: float | None = None
        with stream:
            for chunk in stream:
                request_id, model = _get(chunk, "id") or request_id, _get(chunk, "model") or model
                server_s = server_seconds(_get(chunk, "timings")) or server_s
                choices = _get(chunk, "choices")
                if choices and isinstance(choices, list):
                    choice = choices[0]
                    delta = _get(choice, "delta")
                    thought = reasoning_of(delta)
                    if thought and not text:  # shown live as the leading think block the text will have
                        if on_text:
                            on_text(thought if thinking else "<think>" + thought)
                        thinking.append(thought)
                    piece = _get(delta, "content")
                    if piece and isinstance(piece, str):
                        if on_text and thinking and not text:
                            on_text("</think>\n")
                        text.append(piece)
                        if on_text:
                            on_text(piece)
                    for tc in _get(delta, "tool_calls") or []:
                        index = _get(tc, "index")
                        slot = calls.setdefault(index if index is not None else len(calls),
                                                {"id": None, "name": "", "args": []})
                        slot["id"] = _get(tc, "id") or slot["id"]
                        function = _get(tc, "function")
                        if function is not None:
                            slot["name"] += _get(function, "name") or ""
                            slot["args"].append(_get(function, "arguments") or "")
                    finish = _get(choice, "finish_reason") or finish
                usage = chat_usage(_get(chunk, "usage")) or usage
        if finish is None:
            raise ProviderError("transient", "the reply stream ended before a finish reason")
        content = "".join(text)
        full = fold(content, "".join(thinking), self.reasoning_rule)
        tool_calls = []
        for n, slot in sorted(calls.items()):
            args, error = parse_arguments("".join(slot["args"]))
            tool_calls.append(ToolCall(slot["id"] or f"call_{n}", slot["name"], args, error))
        # judged on the content, as before reasoning folds
        verdict = adapter.judge(content, finish == "content_filter", finish == "length", bool(tool_calls))
        return adapter.Completion(full, usage, finish, request_id, model, verdict, tool_calls, server_s)

    def _whole(self, data: Any, on_text: OnText | None) -> adapter.Completion:
        """A whole (unstreamed) Chat Completion, read as the stream's chunks are."""
        choices = _get(data, "choices")
        choice = choices[0] if isinstance(choices, list) and choices else None
        message = _get(choice, "message")
        content = _get(message, "content")
        content = content if isinstance(content, str) else ""
        full = fold(content, reasoning_of(message), self.reasoning_rule)
        if full and on_text:
            on_text(full)
        finish = _get(choice, "finish_reason")
        if choice is None or finish is None:
            raise ProviderError("transient", "the reply had no choice with a finish reason")
        tool_calls = []
        for n, tc in enumerate(_get(message, "tool_calls") or []):
            function = _get(tc, "function")
            args, error = parse_arguments(_get(function, "arguments") or "")
            tool_calls.append(ToolCall(_get(tc, "id") or f"call_{n}", _get(function, "name") or "", args, error))
        verdict = adapter.judge(content, finish == "content_filter", finish == "length", bool(tool_calls))
        return adapter.Completion(full, chat_usage(_get(data, "usage")), finish, _get(data, "id"), _get(data, "model"),
                                  verdict, tool_calls, server_seconds(_get(data, "timings")))

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
