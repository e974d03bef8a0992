"""The agent our turn engine sees when Inspect runs the game: each prompt goes to the sample's task (the event
loop), which calls the Inspect model; the reply comes back as our ``Reply`` (text, usage, latency, cost).

The engine runs in a worker thread; ``Bridge`` carries one request at a time across: the thread puts the
prompt on the loop's queue and waits on a future the loop's side fills in. A model error that Inspect did not
retry away stops the run (``FatalAgentError``): the recording is kept, marked stopped.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import time
from dataclasses import dataclass, field
from typing import Any

from workstation.engine.calls import CancelToken, Deadline, FatalAgentError, OnText, Reply, TurnContext, Usage
from workstation.engine.prompt import ImagePart, Prompt, TextPart

KIND = "inspect"


@dataclass(eq=False)  # kept in a set while it waits: hashed by identity
class Request:
    prompt: Prompt
    done: concurrent.futures.Future[Reply] = field(default_factory=concurrent.futures.Future)


class Bridge:
    """Requests from the engine's thread to the sample's task on the event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: asyncio.Queue[Request] = asyncio.Queue()
        self.closed: str | None = None
        self._waiting: set[Request] = set()

    def ask(self, prompt: Prompt) -> Reply:
        """From the engine's thread: the reply to ``prompt`` (blocks until the loop's side answers)."""
        req = Request(prompt)
        if self.closed is not None:
            raise FatalAgentError(self.closed)
        self._waiting.add(req)
        try:
            self.loop.call_soon_threadsafe(self.queue.put_nowait, req)
            return req.done.result()
        finally:
            self._waiting.discard(req)

    def close(self, why: str) -> None:
        """The sample was cancelled (a limit, an interrupt): a waiting turn and any later one stop the run."""
        self.closed = why
        for req in list(self._waiting):
            if not req.done.done():
                req.done.set_exception(FatalAgentError(why))


def chat_messages(prompt: Prompt) -> list[Any]:
    """Our neutral prompt as Inspect chat messages (images as PNG data URIs)."""
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageUser,
        Content,
        ContentImage,
        ContentText,
    )

    out: list[Any] = []
    for m in prompt.messages:
        parts: list[Content] = []
        for p in m.parts:
            if isinstance(p, TextPart):
                parts.append(ContentText(text=p.text))
            elif isinstance(p, ImagePart):
                uri = "data:image/png;base64," + base64.b64encode(prompt.png(p)).decode("ascii")
                parts.append(ContentImage(image=uri, detail="auto"))
        if m.role == "system":
            out.append(ChatMessageSystem(content=m.text()))
        elif m.role == "assistant":
            out.append(ChatMessageAssistant(content=m.text()))
        else:
            out.append(ChatMessageUser(content=parts))
    return out


def reply_of(output: Any, latency_s: float, model: str) -> Reply:
    """Inspect's ``ModelOutput`` as our ``Reply`` (its usage is already in our convention: input uncached)."""
    u = output.usage
    usage = None if u is None else Usage(
        input_tokens=int(u.input_tokens or 0), cache_read_tokens=int(u.input_tokens_cache_read or 0),
        cache_write_tokens=int(u.input_tokens_cache_write or 0), output_tokens=int(u.output_tokens or 0),
        reasoning_tokens=int(u.reasoning_tokens or 0))
    stop = output.choices[0].stop_reason if output.choices else None
    error = output.error if isinstance(output.error, str) and output.error else None
    text = output.completion or ""
    if not text and error is None:
        error = "the model returned no text"
    cost = u.total_cost if u is not None and u.total_cost is not None else None
    return Reply(text=text, usage=usage, latency_s=round(latency_s, 4), cost_usd=cost, error=error,
                 finish_reason=stop, model=model)


class InspectAgent:
    """An agent that answers through an Inspect model (``spec`` is ``inspect:PROVIDER/MODEL``)."""

    def __init__(self, model_name: str, bridge: Bridge) -> None:
        self.model_name = model_name
        self.spec = f"{KIND}:{model_name}"
        self.bridge = bridge

    def act(self, prompt: Prompt, ctx: TurnContext, on_text: OnText | None = None, *,
            deadline: Deadline | None = None, cancel: CancelToken | None = None) -> Reply:
        """The reply to ``prompt`` (Inspect's own timeouts and retries bound the wait)."""
        return self.bridge.ask(prompt)

    def close(self) -> None:
        pass

    def describe(self) -> dict[str, Any]:
        provider, _, model = self.model_name.partition("/")
        return {"kind": KIND, "spec": self.spec, "provider": provider, "model": model or provider,
                "via": "inspect_ai (the model's own provider, retries and limits)"}


async def answer(bridge: Bridge, model: Any, req: Request) -> None:
    """On the loop: call the model for one request and hand the reply (or a fatal error) back."""
    start = time.monotonic()
    try:
        output = await model.generate(chat_messages(req.prompt))
    except Exception as e:  # any failure Inspect did not retry away stops the run, in one line
        line = str(e).splitlines()[0] if str(e) else type(e).__name__
        req.done.set_exception(FatalAgentError(f"the Inspect model {model} failed: {line}"))
        return
    req.done.set_result(reply_of(output, time.monotonic() - start, str(model)))
