"""The pre-flight of an OpenAI-compatible model server: can a ``compat:`` run go there?

Each check is one line: ``ok``, ``warn`` or ``FAIL``, what was found, and for a failure what to
change (the server's flag, or a protocol setting). The checks talk to the server through the
``openai`` SDK client with its retries off, as a run does:

- reachable: ``GET /models`` answers (a refused connection or an unknown host ends the pre-flight
  at once, as one line);
- model: the model is listed there (vLLM's entries carry ``max_model_len``, the context window);
- image: one request with one frame-sized image is accepted;
- images per request: the longest prompt of the chosen settings, built by the real prompt
  builder with that many images, is accepted (vLLM refuses more than ``--limit-mm-per-prompt``);
- context window: that prompt's tokens (as the server counted them, else estimated) fit the
  window with room for the reply;
- streaming, usage (streamed, with ``stream_options``), reasoning output format (think tags,
  ``reasoning_content``) and server-reported timings (llama.cpp's ``timings``).

What the protocol needs per turn comes from the settings: structured memory carries
``(K + R) x (1 + max actions) + 1`` images at most, append memory every frame shown so far.
"""

from __future__ import annotations

import base64
import json
import re
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from workstation.base.errors import UserError
from workstation.engine.memory import Clip, Step
from workstation.engine.prompt import Prompt
from workstation.engine.prompt_builder import PromptBuilder
from workstation.engine.promptpack import PromptPack
from workstation.game.games import Game
from workstation.game.protocol import Protocol
from workstation.run.providers.json_stream import get as _get
from workstation.run.providers.openai_chat import OpenAIChat, chat_usage, post_stream, reasoning_of, server_seconds
from workstation.run.providers.reasoning import rule_for
from workstation.run.providers.redact import one_line
from workstation.run.providers.retry import classify
from workstation.run.providers.spec import ProviderOptions, api_key, base_url_problem

CHARS_PER_TOKEN = 4  # the text estimate when the server counts no tokens
IMAGE_TOKENS_GUESS = 576  # per frame when unmeasured: LLaVA-1.5's fixed cost (Qwen2.5-VL: ~50 for 160x210, Gemma 3: 256)
REPLY_ROOM = 1_024  # tokens a reply needs at least (thinking models need more)
PROBE_TEXT = "Reply with exactly: move: [noop]"
VLLM_IMAGE_LIMIT = re.compile(r"at most (\d+) image", re.I)
CONTEXT_ERROR = re.compile(r"context length|context size|context window|max_model_len|too long|exceeds? the "
                           r"available context|maximum context", re.I)
IMAGE_ERROR = re.compile(r"image|multimodal|vision|mmproj", re.I)


class Unreachable(UserError):
    """Nothing answers at the base URL: the pre-flight ends with this one line."""


@dataclass
class Check:
    name: str
    status: str  # "ok" | "warn" | "FAIL"
    detail: str
    fix: str = ""

    def line(self) -> str:
        tail = f"; {self.fix}" if self.fix else ""
        return f"{self.status:<4}  " + one_line(f"{self.name}: {self.detail}{tail}", limit=600)


@dataclass
class Needs:
    """What the longest prompt of the chosen settings carries."""

    images: int
    text_chars: int
    prompt: Prompt
    how: str  # the settings, in words
    height: int = 210  # the frames' height (160 wide)

    @property
    def text_tokens(self) -> int:
        return self.text_chars // CHARS_PER_TOKEN + 1


@dataclass
class Seen:
    """What the replies showed, for the checks that read them all."""

    usage_whole: bool = False
    usage_stream: bool | None = None  # None: no streamed reply read
    streamed: bool | None = None
    think_tags: bool = False
    lone_close: bool = False
    reasoning_field: bool = False
    server_s: list[float] = field(default_factory=list)
    per_image: int | None = None  # tokens one frame costs, measured


# -- the protocol's longest prompt --------------------------------------------------

def png_frame(height: int, width: int = 160) -> bytes:
    """A plain dark frame of the game's size as a PNG (what an image costs depends on its size)."""
    raw = b"".join(b"\x00" + bytes([16, 16, 32]) * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    head = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


class _OneFrame:
    """A frame source whose every frame is the same plain frame."""

    def __init__(self, game: Game) -> None:
        self.height = game.height
        self._png = png_frame(game.height)

    def rgb(self, index: int) -> np.ndarray:
        return np.zeros((self.height, 160, 3), dtype=np.uint8)

    def png(self, index: int) -> bytes:
        return self._png


def protocol_needs(game: Game, protocol: Protocol, pack: PromptPack) -> Needs:
    """The longest prompt a run of these settings sends, built by the run's own prompt builder.

    A whole run of full plans: in structured memory the older clips score (so the R reward clips
    and the K recent ones are all different clips), in append memory every turn stays in the chat.
    """
    per_turn = protocol.repeat * protocol.max_actions
    turns = max(1, -(-protocol.frames // per_turn))
    action = game.action_names[1] if len(game.action_names) > 1 else game.action_names[0]
    clips: list[Clip] = []
    for t in range(turns - 1):
        start = t * per_turn
        eventful = t < turns - 1 - protocol.history
        steps = [Step(action, start + (i + 1) * protocol.repeat, reward=1.0 if eventful else 0.0)
                 for i in range(protocol.max_actions)]
        clips.append(Clip(t, start, steps, raw=f"thought: keep going\nmove: [{', '.join([action] * len(steps))}]"))
    frame = (turns - 1) * per_turn
    builder = PromptBuilder(game, protocol, pack, _OneFrame(game))
    prompt = builder.build(clips, frame)
    images = len(prompt.image_frames)
    chars = sum(len(m.text()) for m in prompt.messages)
    if protocol.memory == "append":
        how = f"append memory over {protocol.frames} frames, {protocol.max_actions} actions a turn"
    else:
        how = (f"structured memory, K={protocol.history} recent + R={protocol.reward_history} reward clips, "
               f"{protocol.max_actions} actions a turn")
    return Needs(images, chars, prompt, how, game.height)


# -- talking to the server ----------------------------------------------------------

class Server:
    """The server behind ``base_url``, through the SDK client (no retries)."""

    def __init__(self, base_url: str, timeout: float) -> None:
        import openai

        self.base_url = base_url.rstrip("/")
        self.key = api_key("compat")
        # no retries, and a host that never answers is given up on in 10 s (a refused connection: at once)
        self.client = openai.OpenAI(api_key=self.key, base_url=self.base_url, max_retries=0,
                                    timeout=openai.Timeout(timeout, connect=min(timeout, 10.0)))

    def close(self) -> None:
        self.client.close()

    def failure(self, exc: BaseException) -> tuple[int | None, str, str | None]:
        """``(status, one-line message, unreachable kind)`` of a failed request."""
        got = classify(exc, (self.key,))
        if got is None:
            return None, one_line(f"{type(exc).__name__}: {exc}", (self.key,)), None
        return got.status, got.message, got.unreachable

    def models(self) -> Any:
        return self.client.get("/models", cast_to=object)

    def llamacpp_context(self) -> int | None:
        """llama.cpp's context size per slot, from ``GET /props`` at the server's root (None elsewhere)."""
        root = self.base_url[:-3] if self.base_url.endswith("/v1") else self.base_url
        try:
            props = self.client.get(root + "/props", cast_to=object)
        except Exception:  # not llama.cpp, or an older one
            return None
        for where in (_get(props, "default_generation_settings"), props):
            n_ctx = _get(where, "n_ctx")
            if isinstance(n_ctx, int) and not isinstance(n_ctx, bool) and n_ctx > 0:
                return n_ctx
        return None

    def whole(self, body: dict[str, Any]) -> Any:
        return self.client.post("/chat/completions", body={**body, "stream": False}, cast_to=object)

    def stream(self, body: dict[str, Any]) -> Iterator[Any]:
        stream = post_stream(self.client, {**body, "stream": True, "stream_options": {"include_usage": True}})
        with stream:
            if stream.response.headers.get("content-type", "").startswith("application/json"):
                yield {"whole": json.loads(stream.response.read() or b"null")}
                return
            yield from stream


def _served(listing: Any) -> list[dict[str, Any]]:
    data = _get(listing, "data")
    return [d for d in data if isinstance(d, dict) and isinstance(d.get("id"), str)] if isinstance(data, list) else []


def _window(entry: dict[str, Any] | None) -> int | None:
    """The context window a /models entry reports (vLLM: ``max_model_len``)."""
    for key in ("max_model_len", "context_length", "max_context_length"):
        value = _get(entry, key)
        if isinstance(value, int) and value > 0:
            return value
    return None


def _prompt_tokens(reply: Any) -> int | None:
    """The prompt tokens the server counted for a whole reply (``usage.prompt_tokens``: cached ones included,
    so two requests' counts compare), or None when it counts none."""
    usage = _get(reply, "usage")
    if chat_usage(usage) is None:
        return None
    n = _get(usage, "prompt_tokens")
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None


def _images(n: int | str) -> str:
    """``1 image``, ``67 images``."""
    return f"{n} image" if str(n) == "1" else f"{n} images"


def _fewer_images(protocol: Protocol) -> str:
    """How to make the longest prompt smaller under these settings (never the setting already in use)."""
    if protocol.memory == "append":
        return "use --memory structured, or lower --frames / --max-actions"
    return "lower --history / --reward-history / --max-actions"


def _text(reply: Any) -> tuple[str, str]:
    """(content, reasoning sent apart) of a whole reply."""
    choices = _get(reply, "choices")
    message = _get(choices[0], "message") if isinstance(choices, list) and choices else None
    content = _get(message, "content")
    return (content if isinstance(content, str) else ""), reasoning_of(message)


def _note_reply(seen: Seen, content: str, reasoning: str, timings: Any) -> None:
    low = content.lower()
    seen.think_tags |= "<think>" in low
    seen.lone_close |= "</think>" in low and "<think>" not in low
    seen.reasoning_field |= bool(reasoning)
    server_s = server_seconds(timings)
    if server_s is not None:
        seen.server_s.append(server_s)


# -- the checks ---------------------------------------------------------------------

Emit = Callable[[Check], None]


def run_checks(base_url: str, model: str | None, game: Game, protocol: Protocol, pack: PromptPack,
               max_output_tokens: int | None, timeout: float, emit: Emit) -> tuple[bool, str]:
    """Run every check, ``emit`` each line as it is known; (True when a run can go, the model checked).

    Raises ``Unreachable`` (one line) when nothing answers at ``base_url``, and ``UserError`` for a
    bad URL, before any request."""
    why = base_url_problem(base_url)
    if why:
        raise UserError(why, "base_url")
    needs = protocol_needs(game, protocol, pack)  # a bad setting is refused before any request
    server = Server(base_url, timeout)
    try:
        return _run(server, model, needs, protocol, max_output_tokens, emit)
    finally:
        server.close()


def _run(server: Server, model: str | None, needs: Needs, protocol: Protocol, max_output_tokens: int | None,
         emit: Emit) -> tuple[bool, str]:
    failed = False

    def put(check: Check) -> None:
        nonlocal failed
        failed |= check.status == "FAIL"
        emit(check)

    url = server.base_url
    listing: Any = None
    try:
        listing = server.models()
    except Exception as exc:  # every failure becomes a line
        status, message, unreachable = server.failure(exc)
        if unreachable is not None or status is None:
            what = {"connection refused": "nothing answers at", "unknown host": "unknown host in",
                    "TLS failure": "TLS failed with"}.get(unreachable or "", "no answer from")
            fix = ("check http:// versus https:// in --base-url" if unreachable == "TLS failure"
                   else "start the model server there, or fix --base-url")
            raise Unreachable(one_line(f"{what} {url}: {fix} ({message})", limit=400), "base_url") from None
        if status in (401, 403):
            put(Check("reachable", "FAIL", f"{url} refused the key (HTTP {status})",
                      "set OPENAI_API_KEY to the key the server expects (--api-key on vLLM and llama.cpp)"))
            return False, model or ""
        put(Check("reachable", "ok", f"{url} answers (GET /models: HTTP {status})"))
    else:
        put(Check("reachable", "ok", f"{url} answers"))
    served = _served(listing)
    ids = [d["id"] for d in served]
    entry: dict[str, Any] | None = None
    if not ids:
        name = model or "default"
        put(Check("model", "warn", f"the server lists no models at {url}/models; asking for {name!r}",
                  "" if model else "pass --model with the name the server serves"))
    elif model is None:
        name, entry = ids[0], served[0]
        put(Check("model", "ok" if len(ids) == 1 else "warn", f"serves {', '.join(ids[:8])}{' ...' if len(ids) > 8 else ''}; checking {name!r}",
                  "" if len(ids) == 1 else "pass --model to check another"))
    elif model in ids:
        name, entry = model, served[ids.index(model)]
        put(Check("model", "ok", f"{model!r} is served"))
    else:
        put(Check("model", "FAIL", f"{model!r} is not served here; it serves {', '.join(ids[:8])}",
                  "pass one of them as --model (and as compat:MODEL to the run)"))
        return False, model
    window, window_from = _window(entry), "max_model_len"
    if window is None:
        window, window_from = server.llamacpp_context(), "n_ctx in /props"
    rule, family = rule_for(name)

    adapter = OpenAIChat(name, ProviderOptions(base_url=url, max_output_tokens=max_output_tokens))
    data_url = "data:image/png;base64," + base64.b64encode(png_frame(needs.height)).decode("ascii")
    seen = Seen()

    def user(*images: int) -> dict[str, Any]:
        content: list[dict[str, Any]] = [{"type": "text", "text": PROBE_TEXT}]
        content += [{"type": "image_url", "image_url": {"url": data_url}} for _ in images]
        return {"model": name, "messages": [{"role": "user", "content": content}], "max_tokens": 64}

    # one image
    try:
        one = server.whole(user(1))
    except Exception as exc:
        status, message, unreachable = server.failure(exc)
        fix = ("serve a vision model: llama.cpp needs --mmproj with the GGUF, vLLM a VL model, Ollama a vision tag"
               if IMAGE_ERROR.search(message) else "check the server's log")
        if status == 404:
            fix = "check --model and that --base-url ends in /v1"
        put(Check("image", "FAIL", f"a request with one frame failed: {message}", fix))
        return False, name
    content, thought = _text(one)
    _note_reply(seen, content, thought, _get(one, "timings"))
    seen.usage_whole = chat_usage(_get(one, "usage")) is not None
    with_image = _prompt_tokens(one)
    if with_image is not None:  # what one frame costs: the prompt tokens of one frame minus those of none
        try:
            bare = _prompt_tokens(server.whole({**user(), "max_tokens": 1}))
        except Exception:  # only a measurement
            bare = None
        if bare is not None and with_image > bare:
            seen.per_image = with_image - bare
    counted = "" if with_image is None else (
        f" ({with_image:,} prompt tokens" + (f", {seen.per_image:,} for the frame" if seen.per_image else "") + ")")
    put(Check("image", "ok", "one frame-sized image (160 px wide PNG) is accepted" + counted))

    # the longest prompt: images per request and the context window
    body = adapter.request(needs.prompt, image=lambda png: data_url)
    body = {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
    body["max_tokens"] = 1
    per_image = seen.per_image or IMAGE_TOKENS_GUESS
    estimate = needs.text_tokens + needs.images * per_image
    how_estimated = (f"estimated: {needs.images} frame{'s' * (needs.images != 1)} x {per_image:,} tokens "
                     + ("as measured" if seen.per_image else "(a guess: the server counts no tokens)")
                     + f" + {needs.text_tokens:,} of text")
    measured: int | None = None
    fewer = _fewer_images(protocol)
    limit_fix = (f"restart vLLM with --limit-mm-per-prompt '{{\"image\": {needs.images}}}' (or image={needs.images}), "
                 f"or {fewer}")
    try:
        longest = server.whole(body)
    except Exception as exc:
        status, message, _ = server.failure(exc)
        limit = VLLM_IMAGE_LIMIT.search(message)
        if limit:
            put(Check("images per request", "FAIL", f"the server takes at most {_images(limit[1])} in one request; "
                      f"a turn needs up to {needs.images} ({needs.how})", limit_fix))
            room = max_output_tokens or REPLY_ROOM
            if window is not None and estimate + room > window:
                put(Check("context window", "FAIL", f"{window:,} tokens ({window_from}) but the longest prompt takes "
                          f"about {estimate:,} ({how_estimated}) and a reply needs {room:,} more",
                          f"raise --max-model-len (vLLM), or {fewer}"))
            else:
                put(Check("context window", "warn", f"not measured (the longest prompt was refused for its images); "
                          f"about {estimate:,} tokens ({how_estimated})"
                          + (f" of {window:,} ({window_from})" if window else "")))
        elif CONTEXT_ERROR.search(message):
            put(Check("images per request", "warn", f"not known: the longest prompt ({_images(needs.images)}) was "
                      "refused for its length"))
            put(Check("context window", "FAIL", f"the longest prompt (about {estimate:,} tokens: "
                      f"{_images(needs.images)}, {needs.how}) does not fit: {message}",
                      f"raise --max-model-len (vLLM) / --ctx-size (llama.cpp) / num_ctx (Ollama), or {fewer}"))
        else:
            put(Check("images per request", "FAIL", f"the longest prompt ({_images(needs.images)}, {needs.how}) was "
                      f"refused: {message}", "check the server's log; " + limit_fix))
    else:
        put(Check("images per request", "ok", f"a request may carry {_images(needs.images)}, the most a turn needs "
                  f"({needs.how})"))
        measured = _prompt_tokens(longest)
        tokens = measured or estimate
        room = max_output_tokens or REPLY_ROOM
        said = f"{tokens:,} tokens" + ("" if measured else " (estimated)")
        if window is not None and tokens + room > window:
            put(Check("context window", "FAIL", f"{window:,} tokens ({window_from}) but the longest prompt takes "
                      f"{said} and a reply needs {room:,} more",
                      f"raise --max-model-len (vLLM) / --ctx-size (llama.cpp), or {fewer}"))
        elif window is not None:
            put(Check("context window", "ok", f"{window:,} tokens ({window_from}); the longest prompt takes {said}, "
                      f"leaving {window - tokens:,} for the reply"))
        else:
            put(Check("context window", "ok", f"the longest prompt ({said}) was accepted; the server reports no "
                      "window size, so room for the reply is not known",
                      "keep --max-output-tokens within the server's context (llama.cpp: --ctx-size)"))

    # streaming, usage, reasoning, timings
    try:
        chunks = list(server.stream(user(1)))
    except Exception as exc:
        _, message, _ = server.failure(exc)
        put(Check("streaming", "FAIL", f"a streamed request failed: {message}", "check the server's log"))
        chunks = []
    else:
        if chunks and isinstance(chunks[0], dict) and "whole" in chunks[0]:
            seen.streamed = False
            whole = chunks[0]["whole"]
            content, thought = _text(whole)
            _note_reply(seen, content, thought, _get(whole, "timings"))
            put(Check("streaming", "warn", "the server ignores \"stream\": true and answers whole; runs work, "
                      "but no text shows while the model writes"))
        else:
            seen.streamed = True
            text, thinking, timings, streamed_usage = [], [], None, False
            for chunk in chunks:
                streamed_usage |= chat_usage(_get(chunk, "usage")) is not None
                timings = _get(chunk, "timings") or timings
                choices = _get(chunk, "choices")
                if isinstance(choices, list) and choices:
                    delta = _get(choices[0], "delta")
                    piece = _get(delta, "content")
                    text.append(piece if isinstance(piece, str) else "")
                    thinking.append(reasoning_of(delta))
            seen.usage_stream = streamed_usage
            _note_reply(seen, "".join(text), "".join(thinking), timings)
            put(Check("streaming", "ok", f"replies stream ({len(chunks)} chunks)"))
    if seen.usage_stream or (seen.usage_whole and seen.usage_stream is None and seen.streamed is False):
        put(Check("usage", "ok", "token counts are reported" + (" in streamed replies (stream_options)"
                                                                 if seen.usage_stream else "")))
    elif seen.usage_whole:
        put(Check("usage", "warn", "token counts come only with whole replies, not streamed ones (stream_options "
                  "include_usage is ignored): runs record no tokens", "upgrade the server (vLLM >= 0.4.3 and "
                  "llama.cpp report usage when streaming)"))
    else:
        put(Check("usage", "warn", "the server reports no token counts: runs record no tokens (their cost shows "
                  "as untracked)"))
    rule_words = (f"rule for {name!r}: think tags ({family})" if rule == "think_tags"
                  else f"rule for {name!r}: a leading think block only")
    if seen.reasoning_field:
        put(Check("reasoning", "ok", f"reasoning comes apart (reasoning_content / reasoning) and is kept as the "
                  f"thought; {rule_words}"))
    elif seen.lone_close and rule != "think_tags":
        put(Check("reasoning", "warn", f"replies close a think block they never open (</think>); {rule_words}, so "
                  "the text before </think> is read for moves too",
                  "serve with a reasoning parser (vLLM: --reasoning-parser; llama.cpp: --reasoning-format "
                  "deepseek) so it comes apart"))
    elif seen.think_tags or seen.lone_close:
        put(Check("reasoning", "ok", f"replies carry <think> tags, kept as the thought; {rule_words}"))
    else:
        put(Check("reasoning", "ok", f"no reasoning text in the replies; {rule_words}"))
    if seen.server_s:
        put(Check("timings", "ok", f"the server reports its inference time (timings: {seen.server_s[-1]:.3f} s for "
                  "the last reply): --clock latency:server can charge it"))
    else:
        wants = protocol.clock == "latency" and protocol.clock_source == "server"
        put(Check("timings", "warn" if wants else "ok", "the server reports no inference time (llama.cpp's "
                  "server does; vLLM and Ollama's OpenAI API do not)"
                  + (": --clock latency:server charges wall time here" if wants else
                     " (needed only for --clock latency:server)")))
    return not failed, name
