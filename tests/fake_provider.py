"""A fake model provider on 127.0.0.1 for the provider tests.

One stdlib ``ThreadingHTTPServer`` speaks four wire formats, plain and streamed
(SSE): OpenAI Responses (``/v1/responses``), Chat Completions
(``/v1/chat/completions``), Anthropic Messages (``/v1/messages``) and Gemini
(``/v1/models/M:generateContent`` and ``:streamGenerateContent``). Each
request takes the next scripted ``Step`` (a normal reply when the script is
empty), so a test can inject faults one request at a time: an error status
with headers, a hang past the client timeout, a dropped connection, malformed
JSON, an empty, truncated or blocked reply. Every request is recorded in
``seen``. The real SDKs talk to it over real HTTP; nothing is mocked.

Tool calling: a ``Step`` with ``tool_calls`` answers with those calls in each
format's own shape (Chat ``tool_calls``, Responses ``function_call`` items,
Anthropic ``tool_use`` blocks, Gemini ``functionCall`` parts). Requests that
offer tools take their steps from ``tool_script`` when it holds any, so a test
can script a tool-using model and a plain player on one server.
"""

from __future__ import annotations

import io
import json
import socket
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest
from PIL import Image

DEFAULT_TEXT = "thought: ball falls left\nmove: [left, left, fire]"


@dataclass
class FakeUsage:
    """The true token counts; each wire format encodes them its own way."""

    uncached: int = 700
    cache_read: int = 200
    cache_write: int = 100
    output: int = 50  # includes reasoning
    reasoning: int = 20


@dataclass
class Step:
    """What the fake does with one request."""

    kind: str = "ok"  # ok | status | hang | drop | malformed | empty | blocked | truncated | plain (JSON when a stream was asked)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error: dict | None = None  # the JSON body of a ``status`` step
    text: str = DEFAULT_TEXT
    usage: FakeUsage = field(default_factory=FakeUsage)
    hang_s: float = 5.0
    tool_calls: list[dict] | None = None  # [{"name", "arguments": {...}, "id"?}]: calls instead of (or with) text


def tool_step(name: str, say: str = "", **arguments: Any) -> Step:
    """A step that answers with one tool call (and the text ``say`` before it, if any)."""
    return Step(text=say, tool_calls=[{"name": name, "arguments": arguments}])


def _calls(step: Step) -> list[dict]:
    """The step's tool calls, each with an id."""
    return [{"id": c.get("id") or f"call_{n}_{c['name']}", "name": c["name"], "arguments": c.get("arguments") or {}}
            for n, c in enumerate(step.tool_calls or [])]


@dataclass
class ServerShape:
    """How the Chat Completions side acts beyond the wire format: like a plain server (the default:
    nothing here), like vLLM or like llama.cpp's server (``vllm_like()``, ``llamacpp_like()``)."""

    models: list[str] | None = None  # GET /v1/models lists these (None: no such route, 404)
    max_model_len: int | None = None  # vLLM: reported in /v1/models and enforced on prompts
    image_limit: int | None = None  # vLLM's --limit-mm-per-prompt: more images are refused with vLLM's text
    image_tokens: int = 0  # >0: prompt_tokens counted from the request (text chars/4 + this per image)
    reasoning_field: str | None = None  # "reasoning_content" (vLLM) / "reasoning": the thinking comes apart
    thinking: str = "the ball is left of the paddle"
    timings: bool = False  # llama.cpp: "timings" (prompt_ms, predicted_ms) in each reply
    prompt_ms: float = 120.5
    predicted_ms: float = 380.25
    stream_usage: bool = True  # False: a streamed reply carries no usage chunk (stream_options ignored)
    vision: bool = True  # False: like llama-server started without --mmproj (an image is refused, HTTP 500)
    n_ctx: int | None = None  # llama.cpp: its context per slot, in GET /props, enforced with its own error text


def vllm_like(**kw: Any) -> ServerShape:
    return ServerShape(**{"models": ["Qwen/Qwen2.5-VL-3B-Instruct"], "max_model_len": 32768, "image_limit": 1,
                          "image_tokens": 120, "reasoning_field": "reasoning_content", **kw})


def llamacpp_like(**kw: Any) -> ServerShape:
    return ServerShape(**{"models": ["local"], "timings": True, "image_tokens": 100, "n_ctx": 16384, **kw})


def _chat_images(body: dict) -> int:
    return sum(1 for m in body.get("messages") or [] if isinstance(m.get("content"), list)
               for c in m["content"] if isinstance(c, dict) and c.get("type") == "image_url")


def _chat_tokens(body: dict, shape: ServerShape) -> int:
    chars = sum(len(c.get("text") or "") if isinstance(c, dict) else 0 for m in body.get("messages") or []
                for c in (m.get("content") if isinstance(m.get("content"), list) else [{"text": m.get("content")}]))
    return chars // 4 + 1 + _chat_images(body) * shape.image_tokens


@dataclass
class Seen:
    """One request as the fake received it."""

    path: str
    headers: dict[str, str]
    body: Any

    @property
    def api(self) -> str:
        return _api_of(self.path)

    @property
    def offers_tools(self) -> bool:
        b = self.body if isinstance(self.body, dict) else {}
        if self.api == "gemini":
            return bool(b.get("tools") or (b.get("config") or {}).get("tools"))
        return bool(b.get("tools"))


def _api_of(path: str) -> str:
    if path.startswith("/v1/responses"):
        return "responses"
    if path.startswith("/v1/chat/completions"):
        return "chat"
    if path.startswith("/v1/messages"):
        return "messages"
    if ":generateContent" in path or ":streamGenerateContent" in path:
        return "gemini"
    return "unknown"


class FakeProvider:
    """The server, its script and its record of requests."""

    def __init__(self) -> None:
        self.script: deque[Step] = deque()
        self.tool_script: deque[Step] = deque()  # steps for requests that offer tools (when any are left)
        self.seen: list[Seen] = []
        # scripted-reply mode: when the script is empty, ``responder(seen)`` gives the Step (None: a normal reply)
        self.responder = None
        self.shape = ServerShape()  # how the Chat Completions side acts (reset to plain by reset())
        self.stop = threading.Event()
        self._lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"fake": self})
        self.server = _QuietServer(("127.0.0.1", 0), handler)
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    def push(self, *steps: Step) -> None:
        with self._lock:
            self.script.extend(steps)

    def url(self, provider: str) -> str:
        """The base URL an SDK of that provider takes."""
        root = f"http://127.0.0.1:{self.port}"
        return f"{root}/v1" if provider in ("openai", "compat") else root

    def push_tools(self, *steps: Step) -> None:
        with self._lock:
            self.tool_script.extend(steps)

    def next_step(self, seen: Seen) -> Step:
        with self._lock:
            self.seen.append(seen)
            if self.tool_script and seen.offers_tools:
                return self.tool_script.popleft()
            if self.script:
                return self.script.popleft()
            responder = self.responder
        step = responder(seen) if responder is not None else None
        return step if step is not None else Step()

    def reset(self) -> None:
        with self._lock:
            self.script.clear()
            self.tool_script.clear()
            self.seen.clear()
            self.responder = None
            self.shape = ServerShape()

    def close(self) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that hang up on purpose (timeouts, drops) are not errors here."""


class _Handler(BaseHTTPRequestHandler):
    fake: FakeProvider
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        shape = self.fake.shape
        if self.path.rstrip("/") == "/v1/models" and shape.models is not None:
            data = [{"id": m, "object": "model", "created": 1, "owned_by": "fake",
                     **({"max_model_len": shape.max_model_len} if shape.max_model_len else {})} for m in shape.models]
            self._send_json(200, {"object": "list", "data": data}, {})
            return
        if self.path.rstrip("/") == "/props" and shape.n_ctx is not None:
            self._send_json(200, {"default_generation_settings": {"n_ctx": shape.n_ctx}, "total_slots": 1}, {})
            return
        self._send_json(404, {"error": {"message": f"no route {self.path}"}}, {})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        seen = Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        api = seen.api
        if api == "unknown":
            self._send_json(404, {"error": {"message": f"no route {self.path}"}}, {})
            return
        step = self.fake.next_step(seen)
        streamed = ":streamGenerateContent" in self.path or (isinstance(body, dict) and body.get("stream") is True)
        try:
            self._serve(step, api, streamed, body if isinstance(body, dict) else {})
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _serve(self, step: Step, api: str, streamed: bool, body: dict) -> None:
        if step.kind == "hang":
            self.fake.stop.wait(step.hang_s)
            self.close_connection = True
            return
        if step.kind == "status":
            self._send_json(step.status, step.error or {"error": {"message": "boom"}}, step.headers)
            return
        model = body.get("model") or self.path.split("/models/")[-1].split(":")[0]
        shape = self.fake.shape
        if api == "chat" and self._refused(shape, body):
            return
        events = list(_EVENTS[api](step, model))
        if api == "chat":
            events = _shaped_events(events, shape, body)
        if not streamed or step.kind == "plain":
            final = _PLAIN[api](step, model)
            if api == "chat":
                _shape_plain(final, shape, body)
            if step.kind == "malformed":
                self._send_raw(200, b'{"id": "x", "output": [', "application/json")
            else:
                self._send_json(200, final, step.headers)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        for k, v in step.headers.items():
            self.send_header(k, v)
        self.end_headers()
        if step.kind == "malformed":
            name = {"messages": "message_start", "responses": "response.created"}.get(api)
            self._chunk((f"event: {name}\n" if name else "").encode() + b'data: {"type": "oops", \n\n')
            self._chunk(b"")
            return
        for i, (name, data) in enumerate(events):
            if step.kind == "drop" and i == 2:
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
            line = (f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n"
            self._chunk(line.encode())
        if api == "chat":
            self._chunk(b"data: [DONE]\n\n")
        self._chunk(b"")

    def _refused(self, shape: ServerShape, body: dict) -> bool:
        """vLLM's refusals, in its own words: too many images, too long a prompt."""
        images = _chat_images(body)
        if images and not shape.vision:
            self._send_json(500, {"error": {"code": 500, "type": "server_error", "message": "image input is not "
                                            "supported - hint: if this is unexpected, you may need to provide the "
                                            "mmproj"}}, {})
            return True
        if shape.image_limit is not None and images > shape.image_limit:
            message = f"At most {shape.image_limit} image(s) may be provided in one request."
        elif shape.max_model_len is not None and _chat_tokens(body, shape) > shape.max_model_len:
            asked = _chat_tokens(body, shape)
            message = (f"This model's maximum context length is {shape.max_model_len} tokens. However, you requested "
                       f"{asked} tokens ({asked} in the messages, 0 in the completion). Please reduce the length of "
                       "the messages or completion.")
        elif shape.n_ctx is not None and _chat_tokens(body, shape) > shape.n_ctx:
            self._send_json(400, {"error": {"code": 400, "type": "exceed_context_size_error", "message": "the request "
                                            "exceeds the available context size, try increasing it",
                                            "n_prompt_tokens": _chat_tokens(body, shape), "n_ctx": shape.n_ctx}}, {})
            return True
        else:
            return False
        self._send_json(400, {"object": "error", "message": message, "type": "BadRequestError", "param": None,
                              "code": 400}, {})
        return True

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _send_json(self, status: int, payload: Any, headers: dict[str, str]) -> None:
        self._send_raw(status, json.dumps(payload).encode(), "application/json", headers)

    def _send_raw(self, status: int, data: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()


def _pieces(step: Step) -> list[str]:
    """The reply text cut into a few deltas ("" for empty and blocked replies)."""
    if step.kind in ("empty", "blocked"):
        return []
    text = step.text
    cut = [0, len(text) // 3, 2 * len(text) // 3, len(text)]
    return [text[a:b] for a, b in zip(cut, cut[1:]) if b > a]


# ---- OpenAI Responses ------------------------------------------------------

def _responses_usage(u: FakeUsage) -> dict:
    return {
        "input_tokens": u.uncached + u.cache_read + u.cache_write,
        "input_tokens_details": {"cached_tokens": u.cache_read, "cache_write_tokens": u.cache_write},
        "output_tokens": u.output,
        "output_tokens_details": {"reasoning_tokens": u.reasoning},
        "total_tokens": u.uncached + u.cache_read + u.cache_write + u.output,
    }


def _responses_final(step: Step, model: str) -> dict:
    text = "".join(_pieces(step))
    status, incomplete = "completed", None
    if step.kind == "truncated":
        status, incomplete = "incomplete", {"reason": "max_output_tokens"}
    elif step.kind == "blocked":
        status, incomplete = "incomplete", {"reason": "content_filter"}
    content = [{"type": "output_text", "text": text, "annotations": []}] if text else []
    output = [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": content}]
    output += [{"type": "function_call", "id": f"fc_{n}", "call_id": c["id"], "name": c["name"],
                "arguments": json.dumps(c["arguments"]), "status": "completed"} for n, c in enumerate(_calls(step))]
    return {
        "id": "resp_fake1", "object": "response", "created_at": 1, "model": model, "status": status,
        "incomplete_details": incomplete, "output": output,
        "usage": _responses_usage(step.usage),
    }


def _responses_events(step: Step, model: str) -> Iterator[tuple[str, dict]]:
    final = _responses_final(step, model)
    yield "response.created", {"type": "response.created", "sequence_number": 0,
                               "response": {**final, "status": "in_progress", "output": [], "usage": None}}
    for n, piece in enumerate(_pieces(step)):
        yield "response.output_text.delta", {"type": "response.output_text.delta", "item_id": "msg_1",
                                             "output_index": 0, "content_index": 0, "delta": piece,
                                             "logprobs": [], "sequence_number": n + 1}
    kind = "response.incomplete" if final["status"] == "incomplete" else "response.completed"
    yield kind, {"type": kind, "sequence_number": 99, "response": final}


# ---- Chat Completions ------------------------------------------------------

def _chat_usage(u: FakeUsage) -> dict:
    return {
        "prompt_tokens": u.uncached + u.cache_read + u.cache_write,
        "prompt_tokens_details": {"cached_tokens": u.cache_read, "cache_write_tokens": u.cache_write},
        "completion_tokens": u.output,
        "completion_tokens_details": {"reasoning_tokens": u.reasoning},
        "total_tokens": u.uncached + u.cache_read + u.cache_write + u.output,
    }


def _chat_finish(step: Step) -> str:
    if step.tool_calls and step.kind == "ok":
        return "tool_calls"
    return {"truncated": "length", "blocked": "content_filter"}.get(step.kind, "stop")


def _chat_plain(step: Step, model: str) -> dict:
    message: dict = {"role": "assistant", "content": "".join(_pieces(step))}
    if step.tool_calls:
        message["tool_calls"] = [{"id": c["id"], "type": "function", "function": {
            "name": c["name"], "arguments": json.dumps(c["arguments"])}} for c in _calls(step)]
    return {
        "id": "chatcmpl-fake1", "object": "chat.completion", "created": 1, "model": model,
        "choices": [{"index": 0, "finish_reason": _chat_finish(step), "message": message}],
        "usage": _chat_usage(step.usage),
    }


def _chat_events(step: Step, model: str) -> Iterator[tuple[str, dict]]:
    head = {"id": "chatcmpl-fake1", "object": "chat.completion.chunk", "created": 1, "model": model}
    yield "", {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                    "finish_reason": None}]}
    for piece in _pieces(step):
        yield "", {**head, "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
    for n, c in enumerate(_calls(step)):
        args = json.dumps(c["arguments"])
        half = len(args) // 2
        yield "", {**head, "choices": [{"index": 0, "finish_reason": None, "delta": {"tool_calls": [
            {"index": n, "id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": args[:half]}}]}}]}
        yield "", {**head, "choices": [{"index": 0, "finish_reason": None, "delta": {"tool_calls": [
            {"index": n, "function": {"arguments": args[half:]}}]}}]}
    yield "", {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": _chat_finish(step)}]}
    yield "", {**head, "choices": [], "usage": _chat_usage(step.usage)}


def _timings(shape: ServerShape) -> dict:
    return {"prompt_n": 10, "prompt_ms": shape.prompt_ms, "predicted_n": 12, "predicted_ms": shape.predicted_ms,
            "predicted_per_second": 31.5}


def _shape_plain(final: dict, shape: ServerShape, body: dict) -> None:
    if shape.reasoning_field:
        final["choices"][0]["message"][shape.reasoning_field] = shape.thinking
    if shape.timings:
        final["timings"] = _timings(shape)
    if shape.image_tokens:
        final["usage"]["prompt_tokens"] = _chat_tokens(body, shape)


def _shaped_events(events: list[tuple[str, dict]], shape: ServerShape, body: dict) -> list[tuple[str, dict]]:
    out: list[tuple[str, dict]] = []
    for name, data in events:
        if shape.reasoning_field and len(out) == 1:  # after the role chunk: the thinking, in two deltas
            half = len(shape.thinking) // 2
            for piece in (shape.thinking[:half], shape.thinking[half:]):
                out.append(("", {**data, "choices": [{"index": 0, "delta": {shape.reasoning_field: piece},
                                                      "finish_reason": None}]}))
        if "usage" in data and not data.get("choices"):
            if not shape.stream_usage:
                continue
            if shape.image_tokens:
                data = {**data, "usage": {**data["usage"], "prompt_tokens": _chat_tokens(body, shape)}}
        if shape.timings and any(c.get("finish_reason") for c in data.get("choices") or []):
            data = {**data, "timings": _timings(shape)}
        out.append((name, data))
    return out


# ---- Anthropic Messages ----------------------------------------------------

def _anthropic_stop(step: Step) -> str:
    if step.tool_calls and step.kind == "ok":
        return "tool_use"
    return {"truncated": "max_tokens", "blocked": "refusal"}.get(step.kind, "end_turn")


def _anthropic_usage(u: FakeUsage) -> dict:
    return {"input_tokens": u.uncached, "cache_read_input_tokens": u.cache_read,
            "cache_creation_input_tokens": u.cache_write, "output_tokens": u.output,
            "output_tokens_details": {"thinking_tokens": u.reasoning}}


def _anthropic_plain(step: Step, model: str) -> dict:
    text = "".join(_pieces(step))
    content = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["arguments"]} for c in _calls(step)]
    return {"id": "msg_fake1", "type": "message", "role": "assistant", "model": model,
            "content": content,
            "stop_reason": _anthropic_stop(step), "stop_sequence": None,
            "usage": _anthropic_usage(step.usage)}


def _anthropic_events(step: Step, model: str) -> Iterator[tuple[str, dict]]:
    start_usage = {**_anthropic_usage(step.usage), "output_tokens": 1}
    start_usage.pop("output_tokens_details")
    yield "message_start", {"type": "message_start", "message": {
        "id": "msg_fake1", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": start_usage}}
    if step.tool_calls:  # a thinking block before the calls, which must come back with them
        yield "content_block_start", {"type": "content_block_start", "index": 99,
                                      "content_block": {"type": "thinking", "thinking": "", "signature": ""}}
        yield "content_block_delta", {"type": "content_block_delta", "index": 99,
                                      "delta": {"type": "thinking_delta", "thinking": "which tool?"}}
        yield "content_block_delta", {"type": "content_block_delta", "index": 99,
                                      "delta": {"type": "signature_delta", "signature": "sig-anthropic"}}
        yield "content_block_stop", {"type": "content_block_stop", "index": 99}
    yield "content_block_start", {"type": "content_block_start", "index": 0,
                                  "content_block": {"type": "text", "text": ""}}
    for piece in _pieces(step):
        yield "content_block_delta", {"type": "content_block_delta", "index": 0,
                                      "delta": {"type": "text_delta", "text": piece}}
    yield "content_block_stop", {"type": "content_block_stop", "index": 0}
    for n, c in enumerate(_calls(step), start=1):
        args = json.dumps(c["arguments"])
        half = len(args) // 2
        yield "content_block_start", {"type": "content_block_start", "index": n, "content_block": {
            "type": "tool_use", "id": c["id"], "name": c["name"], "input": {}}}
        for piece in (args[:half], args[half:]):
            yield "content_block_delta", {"type": "content_block_delta", "index": n,
                                          "delta": {"type": "input_json_delta", "partial_json": piece}}
        yield "content_block_stop", {"type": "content_block_stop", "index": n}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": _anthropic_stop(step), "stop_sequence": None},
                            "usage": {"output_tokens": step.usage.output,
                                      "output_tokens_details": {"thinking_tokens": step.usage.reasoning}}}
    yield "message_stop", {"type": "message_stop"}


# ---- Gemini ----------------------------------------------------------------

def _gemini_usage(u: FakeUsage) -> dict:
    return {"promptTokenCount": u.uncached + u.cache_read, "cachedContentTokenCount": u.cache_read,
            "candidatesTokenCount": u.output - u.reasoning, "thoughtsTokenCount": u.reasoning,
            "totalTokenCount": u.uncached + u.cache_read + u.output}


def _gemini_chunk(parts: list[dict], finish: str | None, usage: dict | None, model: str) -> dict:
    cand: dict = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        cand["finishReason"] = finish
    chunk: dict = {"candidates": [cand], "modelVersion": model, "responseId": "gem_fake1"}
    if usage:
        chunk["usageMetadata"] = usage
    return chunk


def _gemini_finish(step: Step) -> str:
    return {"truncated": "MAX_TOKENS", "blocked": "SAFETY"}.get(step.kind, "STOP")


def _gemini_calls(step: Step) -> list[dict]:
    import base64

    return [{"functionCall": {"name": c["name"], "args": c["arguments"], "id": c["id"]},
             "thoughtSignature": base64.b64encode(f"sig-{c['id']}".encode()).decode()} for c in _calls(step)]


def _gemini_plain(step: Step, model: str) -> dict:
    text = "".join(_pieces(step))
    return _gemini_chunk(([{"text": text}] if text else []) + _gemini_calls(step), _gemini_finish(step),
                         _gemini_usage(step.usage), model)


def _gemini_events(step: Step, model: str) -> Iterator[tuple[str, dict]]:
    pieces = _pieces(step)
    yield "", _gemini_chunk([{"text": "looking at the ball", "thought": True}], None, None, model)
    for piece in pieces:
        yield "", _gemini_chunk([{"text": piece}], None, None, model)
    if step.tool_calls:
        yield "", _gemini_chunk(_gemini_calls(step), None, None, model)
    yield "", _gemini_chunk([], _gemini_finish(step), _gemini_usage(step.usage), model)


_EVENTS = {"responses": _responses_events, "chat": _chat_events, "messages": _anthropic_events,
           "gemini": _gemini_events}
_PLAIN = {"responses": _responses_final, "chat": _chat_plain, "messages": _anthropic_plain,
          "gemini": _gemini_plain}


# ---- fixtures ---------------------------------------------------------------

class AleFrames:
    """A tiny FrameSource over real Breakout frames from the ALE (PNG cached per frame)."""

    def __init__(self, count: int = 12) -> None:
        import ale_py
        import gymnasium as gym

        gym.register_envs(ale_py)
        env = gym.make("ALE/Breakout-v5", frameskip=1, repeat_action_probability=0.0)
        obs, _ = env.reset(seed=0)
        self.frames = [obs]
        for i in range(count - 1):
            obs, *_ = env.step(1 if i < 4 else 3)  # serve, then move left
            self.frames.append(obs)
        env.close()
        self._png: dict[int, bytes] = {}

    def rgb(self, index: int) -> np.ndarray:
        return self.frames[index]

    def png(self, index: int) -> bytes:
        if index not in self._png:
            buf = io.BytesIO()
            Image.fromarray(self.frames[index]).save(buf, format="PNG")
            self._png[index] = buf.getvalue()
        return self._png[index]


@pytest.fixture(scope="session")
def fake_server() -> Iterator[FakeProvider]:
    server = FakeProvider()
    yield server
    server.close()


@pytest.fixture
def fake(fake_server: FakeProvider) -> Iterator[FakeProvider]:
    """The fake provider with an empty script and record for this test."""
    fake_server.reset()
    yield fake_server
    fake_server.reset()


@pytest.fixture(scope="session")
def frames() -> AleFrames:
    return AleFrames()


# ---- reading what an SDK sent ----------------------------------------------

def _png_from_url(url: str) -> bytes:
    import base64

    head, _, data = url.partition(",")
    assert head == "data:image/png;base64", head
    return base64.b64decode(data)


def _b64_any(data: str) -> bytes:
    """Standard or URL-safe base64, padded or not (google-genai sends URL-safe)."""
    import base64

    return base64.urlsafe_b64decode(data.replace("+", "-").replace("/", "_") + "=" * (-len(data) % 4))


def sent_messages(seen: Seen) -> list[tuple[str, list[tuple[str, Any]]]]:
    """The conversation a request carried, as ``(role, [("text", s) | ("image", png)])``.

    System instructions come first with role ``system``; assistant turns are
    ``assistant`` whatever the wire calls them.
    """
    import base64

    b, api = seen.body, seen.api
    out: list[tuple[str, list[tuple[str, Any]]]] = []
    if api == "responses":
        if b.get("instructions"):
            out.append(("system", [("text", b["instructions"])]))
        for item in b["input"]:
            content = item["content"]
            if isinstance(content, str):
                out.append((item["role"], [("text", content)]))
                continue
            out.append((item["role"], [("text", c["text"]) if c["type"] == "input_text"
                                       else ("image", _png_from_url(c["image_url"])) for c in content]))
    elif api == "chat":
        for m in b["messages"]:
            content = m["content"]
            if isinstance(content, str):
                out.append((m["role"], [("text", content)]))
                continue
            out.append((m["role"], [("text", c["text"]) if c["type"] == "text"
                                    else ("image", _png_from_url(c["image_url"]["url"])) for c in content]))
    elif api == "messages":
        if b.get("system"):
            out.append(("system", [("text", blk["text"]) for blk in b["system"]]))
        for m in b["messages"]:
            out.append((m["role"], [("text", c["text"]) if c["type"] == "text"
                                    else ("image", base64.b64decode(c["source"]["data"])) for c in m["content"]]))
    elif api == "gemini":
        sys_inst = b.get("systemInstruction")
        if sys_inst:
            out.append(("system", [("text", p["text"]) for p in sys_inst["parts"]]))
        for c in b["contents"]:
            role = "assistant" if c["role"] == "model" else c["role"]
            out.append((role, [("text", p["text"]) if "text" in p else ("image", _b64_any(p["inlineData"]["data"]))
                               for p in c["parts"]]))
    return out


# ---- shared test setup --------------------------------------------------------

def closed_port() -> int:
    """A port on 127.0.0.1 with nothing listening (bound by the OS, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(condition, limit_s: float = 30.0) -> None:
    """Poll ``condition`` until true; fail after ``limit_s`` (a generous bound, never the thing measured)."""
    import time

    end = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > end:
            raise AssertionError("the condition never came true")
        time.sleep(0.01)


KEYS = {
    "OPENAI_API_KEY": "sk-test-SECRET-openai-0123456789",
    "ANTHROPIC_API_KEY": "sk-ant-test-SECRET-anthropic-0123456789",
    "GEMINI_API_KEY": "AIzaTEST-SECRET-gemini-0123456789abcdef",
}
SPECS = {
    "openai": "openai:gpt-5.2",
    "compat": "compat:qwen2.5-vl-7b",
    "anthropic": "anthropic:claude-sonnet-4-6",
    "gemini": "gemini:gemini-3-flash-preview",
}


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Fake keys in the environment (and no stray Google key or price file)."""
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("WORKSTATION_PRICES", raising=False)
    return KEYS


class AgentCache:
    """Provider agents for the fake, one per (spec, options): SDK clients are slow to build."""

    def __init__(self, fake: FakeProvider) -> None:
        self.fake = fake
        self._agents: dict = {}

    def get(self, provider: str, spec: str | None = None, **opts: Any):
        from workstation.run.providers import ProviderOptions, make_provider_agent

        opts.setdefault("timeout", 5.0)
        opts.setdefault("max_wait_s", 0.01)
        options = ProviderOptions(base_url=self.fake.url(provider), **opts)
        key = (spec or SPECS[provider], options)
        if key not in self._agents:
            self._agents[key] = make_provider_agent(key[0], options)
        return self._agents[key]

    def close(self) -> None:
        for agent in self._agents.values():
            agent.close()


@pytest.fixture(scope="session")
def agent_cache(fake_server: FakeProvider) -> Iterator[AgentCache]:
    cache = AgentCache(fake_server)
    yield cache
    cache.close()


@pytest.fixture
def agents(agent_cache: AgentCache, fake: FakeProvider, keys: dict[str, str]) -> AgentCache:
    """``agents.get(provider, spec=None, **options)``: a cached agent talking to the fake."""
    return agent_cache
