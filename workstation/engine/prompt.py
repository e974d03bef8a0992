"""The provider-neutral prompt: ordered messages of text and image parts.

Image parts reference frames of the run by index; pixels and PNG bytes come from
a ``FrameSource`` (the recording's frame store), so a PNG is encoded once per
frame and cached there. ``render_text`` gives the display/log form with image
markers such as ``[image: frame 42 @ 1.40s]``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal, Protocol, cast

import numpy as np

from workstation.engine.calls import ToolCall, ToolSpec
from workstation.game.games import FPS_PAPER


class FrameSource(Protocol):
    """Where image parts get their pixels: any object with these two methods."""

    def rgb(self, index: int) -> np.ndarray: ...  # HxWx3 uint8

    def png(self, index: int) -> bytes: ...  # cached PNG encoding of that frame


@lru_cache(maxsize=4096)
def timestamp(frame: int) -> str:
    """The paper's clock: frame / 30, formatted as seconds ("3.40s")."""
    return f"{frame / FPS_PAPER:.2f}s"


@dataclass(frozen=True)
class TextPart:
    text: str
    kind: Literal["text"] = "text"


@dataclass(frozen=True)
class ImagePart:
    frame: int  # index into the run's frames (0 = first frame of the budget)
    label: str = ""  # e.g. "after left" / "current"
    kind: Literal["image"] = "image"

    @property
    def time(self) -> str:
        return timestamp(self.frame)


Part = TextPart | ImagePart
Role = Literal["system", "user", "assistant"]


@dataclass
class Message:
    """One message. With tools: an assistant message lists the ``tool_calls`` it made, and a
    ``tool`` message answers one of them (``answers``), its parts the result's text and images."""

    role: Role
    parts: list[Part] = field(default_factory=list)
    tool_calls: list[ToolCall] = field(default_factory=list)
    answers: ToolCall | None = None  # role "tool": the call this result is for
    is_error: bool = False  # role "tool": the tool failed

    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))


@dataclass
class Prompt:
    """What an agent is asked on one turn.

    ``messages`` hold the instructions (role ``system``) then the conversation.
    In ``structured_history`` mode there is one system and one user message; in
    ``append_only`` mode user and assistant messages alternate. ``frames`` gives
    pixels and PNGs for the image parts (None for a prompt with no images).
    """

    messages: list[Message]
    frames: FrameSource | None = None
    edited: bool = False  # True when a person changed the text in step mode
    tools: list[ToolSpec] = field(default_factory=list)  # tools the model may call (none for a player)

    @property
    def images(self) -> list[ImagePart]:
        return [p for m in self.messages for p in m.parts if isinstance(p, ImagePart)]

    @property
    def image_frames(self) -> list[int]:
        return [p.frame for p in self.images]

    def png(self, part: ImagePart) -> bytes:
        if self.frames is None:
            raise ValueError("this prompt has no frame source; its images cannot be encoded")
        return self.frames.png(part.frame)

    def render_text(self) -> str:
        """Readable text of the whole prompt with image markers, for screens and logs."""
        out = []
        for m in self.messages:
            out.append(f"=== {m.role} ===")
            chunk = []
            for p in m.parts:
                if isinstance(p, TextPart):
                    chunk.append(p.text)
                else:
                    label = f" ({p.label})" if p.label else ""
                    chunk.append(f"[image: frame {p.frame} @ {p.time}{label}]")
            out.append("".join(chunk))
        return "\n".join(out)

    def to_json(self) -> list[dict[str, Any]]:
        """Plain data form (what a recording stores for an edited prompt)."""
        return [
            {"role": m.role, "parts": [
                {"text": p.text} if isinstance(p, TextPart) else {"frame": p.frame, "label": p.label}
                for p in m.parts
            ]}
            for m in self.messages
        ]

    @classmethod
    def from_json(cls, data: list[dict[str, Any]], frames: FrameSource | None = None, edited: bool = False) -> Prompt:
        msgs = []
        for m in data:
            parts: list[Part] = [
                TextPart(p["text"]) if "text" in p else ImagePart(int(p["frame"]), p.get("label", ""))
                for p in m["parts"]
            ]
            msgs.append(Message(m["role"], parts))
        return cls(msgs, frames, edited)

    def digest(self) -> str:
        """Short content hash of roles, text and image references (identifies the prompt)."""
        h = hashlib.sha256()
        for m in self.messages:
            h.update(b"\x00role:" + m.role.encode())
            for p in m.parts:
                h.update(b"\x00t:" + p.text.encode() if isinstance(p, TextPart) else b"\x00i:%d" % p.frame)
        return h.hexdigest()[:16]

    def with_text(self, new_text: str) -> Prompt:
        """The same prompt with the instruction/user text replaced, images kept in order.

        Used by step mode's "edit": the edited text is split at image markers
        ``[image: frame N ...]`` so images stay where the person left them.
        """
        import re

        msgs: list[Message] = []
        role: Role | None = None
        parts: list[Part] = []
        for line in new_text.split("\n"):
            header = re.fullmatch(r"=== (system|user|assistant) ===", line.strip())
            if header:
                if role is not None:
                    msgs.append(Message(role, merge_parts(parts)))
                role, parts = cast(Role, header.group(1)), []
                continue
            if role is None:
                role = "user"
            pos = 0
            for m in re.finditer(r"\[image: frame (\d+) @ [^\]\(]*?(?: \(([^)]*)\))?\]", line):
                if m.start() > pos:
                    parts.append(TextPart(line[pos:m.start()]))
                parts.append(ImagePart(int(m.group(1)), m.group(2) or ""))
                pos = m.end()
            parts.append(TextPart(line[pos:] + "\n"))
        if role is not None:
            msgs.append(Message(role, merge_parts(parts)))
        # drop the newline added after the last line of each message
        for msg in msgs:
            if msg.parts and isinstance(msg.parts[-1], TextPart) and msg.parts[-1].text.endswith("\n"):
                msg.parts[-1] = TextPart(msg.parts[-1].text[:-1])
                if not msg.parts[-1].text:
                    msg.parts.pop()
        return Prompt(msgs, self.frames, edited=True)


ROLE_LINE = r"=== (system|user|assistant) ==="


def edit_problem(new_text: str, original: Prompt) -> str | None:
    """Why an edited prompt text cannot be sent, as one line; None when its roles are intact.

    The text must start with a ``=== role ===`` line (text before it would have no
    role), keep a ``=== system ===`` part where the original has one, and keep a
    ``=== user ===`` part.
    """
    import re

    lines = new_text.split("\n")
    roles = [m.group(1) for line in lines if (m := re.fullmatch(ROLE_LINE, line.strip()))]
    first = next((i for i, line in enumerate(lines) if re.fullmatch(ROLE_LINE, line.strip())), None)
    before = lines if first is None else lines[:first]
    had = {m.role for m in original.messages}
    if "system" in had and "system" not in roles:
        return ("the edited prompt lost its '=== system ===' part, which this prompt pack has; put the "
                "'=== system ===' line back before the instructions (or undo the edit)")
    if any(line.strip() for line in before):
        return ("the edited prompt has text before its first '=== role ===' line, so that text has no role; "
                "start the prompt with '=== system ===' or '=== user ===' (or undo the edit)")
    if "user" not in roles:
        return "the edited prompt has no '=== user ===' part; put the '=== user ===' line back (or undo the edit)"
    return None


def merge_parts(parts: list[Part]) -> list[Part]:
    """Join adjacent text parts and drop empty ones."""
    out: list[Part] = []
    for p in parts:
        if isinstance(p, TextPart):
            if not p.text:
                continue
            if out and isinstance(out[-1], TextPart):
                out[-1] = TextPart(out[-1].text + p.text)
                continue
        out.append(p)
    return out
