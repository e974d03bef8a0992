"""What every provider adapter does, and the pieces they share.

An adapter turns the neutral ``Prompt`` into its SDK's request body (one
function, ``request``, used by both the real call and the payload dump) and
the SDK's streamed response into a ``Completion``: text, normalised usage,
finish reason, request id and, when no usable text came back, the problem
(``empty``, ``blocked``, ``truncated``). Nothing outside the adapters knows a
provider's wire shapes.
"""

from __future__ import annotations

import base64
import hashlib
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from workstation.engine.calls import OnText, ToolCall, Usage
from workstation.engine.prompt import ImagePart, Message, Prompt, TextPart
from workstation.run.providers.spec import ProviderOptions

ImageEncoder = Callable[[bytes], Any]  # PNG bytes -> what the request carries for it


def redacted_image(png: bytes) -> dict[str, Any]:
    """The stand-in for an image in a payload dump."""
    return {"png_bytes": len(png), "sha256": hashlib.sha256(png).hexdigest()}


@dataclass
class Completion:
    text: str
    usage: Usage | None
    finish_reason: str | None = None
    request_id: str | None = None
    model: str | None = None
    problem: str | None = None  # "blocked" | "truncated" | "empty" when the text is unusable
    tool_calls: list[ToolCall] = field(default_factory=list)  # what the model asked to call
    server_s: float | None = None  # the server's own inference time, where it reports one (llama.cpp timings)


def judge(text: str, blocked: bool, truncated: bool, calls: bool = False) -> str | None:
    """The problem with a finished reply, if any (blocked before truncated before empty).

    A reply that asks for tool calls is usable without text.
    """
    if blocked:
        return "blocked"
    if truncated:
        return "truncated"
    if not text.strip() and not calls:
        return "empty"
    return None


def tool_call_id(n: int) -> str:
    """An id for a call whose provider gave none (Gemini before 3): unique within the reply."""
    return f"call_{n}"


class Adapter(Protocol):
    provider: str
    model: str
    options: ProviderOptions

    def request(self, prompt: Prompt, image: ImageEncoder | None = None) -> dict[str, Any]:
        """The request body for this prompt (images through ``image``, default: the real encoding)."""
        ...

    def endpoint(self) -> tuple[str, dict[str, str]]:
        """URL and headers the request goes to, the key shown as ``$KEY``."""
        ...

    def open(self, key: str) -> None:
        """Create the SDK client (retries off, our timeout)."""
        ...

    def complete(self, body: dict[str, Any], on_text: OnText | None) -> Completion:
        """Send ``body``, stream the reply; SDK errors propagate for ``retry.classify``."""
        ...

    def close(self) -> None: ...


def system_text(prompt: Prompt) -> str:
    """The instructions: text of the system messages (they carry no images)."""
    chunks = []
    for m in prompt.messages:
        if m.role == "system":
            if any(isinstance(p, ImagePart) for p in m.parts):
                raise ValueError("system messages carry text only; put images in a user message")
            chunks.append(m.text())
    return "\n\n".join(c for c in chunks if c)


def conversation(prompt: Prompt) -> list[Message]:
    """The user and assistant messages, in order."""
    return [m for m in prompt.messages if m.role != "system"]


def parts(prompt: Prompt, message: Message) -> Iterator[tuple[str, Any]]:
    """``("text", str)`` and ``("image", png_bytes)`` in prompt order; empty text skipped."""
    for p in message.parts:
        if isinstance(p, TextPart):
            if p.text:
                yield "text", p.text
        else:
            yield "image", prompt.png(p)


def split_kwargs(method: Callable[..., Any], body: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Body fields the SDK method names as parameters, and the rest (sent as ``extra_body``)."""
    names = inspect.signature(method).parameters
    known = {k: v for k, v in body.items() if k in names}
    extra = {k: v for k, v in body.items() if k not in names}
    return known, extra


def is_tool_result(message: Message) -> bool:
    """A ``tool`` message answering a call (``Role`` does not name it: tool messages come from tool loops)."""
    role: str = message.role
    return role == "tool" and message.answers is not None


def png_data_url(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
