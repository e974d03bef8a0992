"""Build one turn's Prompt from a document pack (``layout = "document"``, see ``document_pack``).

The whole prompt is one user message (plus a system message only when the pack
has one), made by filling the pack's documents; every ``{image}`` becomes an
image part of the frame it stands for, in the place it stands. The history rules
are the public harness's: the recent history is the last K clips, the reward
history the last R clips whose rewards summed to something other than zero or
that lost a life, each oldest first.
"""

from __future__ import annotations

import re
from typing import Any

from workstation.engine.memory import Clip
from workstation.engine.prompt import FrameSource, ImagePart, Message, Prompt, TextPart, timestamp
from workstation.game.games import FPS_PAPER, Game
from workstation.game.protocol import Protocol

_MARK = re.compile(r"\x00(\d+)\x00")


def _image(frame: int) -> str:
    return f"\x00{frame}\x00"  # a marker no pack text contains; split into an image part at the end


def _parts(text: str) -> list[Any]:
    parts: list[Any] = []
    pos = 0
    for m in _MARK.finditer(text):
        if m.start() > pos:
            parts.append(TextPart(text[pos:m.start()]))
        parts.append(ImagePart(int(m.group(1))))
        pos = m.end()
    if pos < len(text):
        parts.append(TextPart(text[pos:]))
    return parts


def _eventful(clip: Clip) -> bool:
    return sum(s.reward for s in clip.steps) != 0 or any(s.life_lost for s in clip.steps)


def _ended(clip: Clip) -> bool:
    return any(s.reset for s in clip.steps)


class DocumentBuilder:
    def __init__(self, game: Game, protocol: Protocol, pack: Any, frames: FrameSource | None = None,
                 skill: str | None = None):
        self.game = game
        self.protocol = protocol
        self.pack = pack
        self.frames = frames
        s = pack.strings
        self.s = s
        skill_text = ""
        if skill:  # the pack's [skill] slot places it; the harness's prompts have no skill, so it is empty there
            slot = pack.render_skill(game, skill) if hasattr(pack, "render_skill") else skill.strip()
            skill_text = "\n" + slot + "\n"
        budget = s["budget_rule"].format(budget_seconds=f"{protocol.frames / FPS_PAPER:g}")
        guide = pack.guide(game.key, protocol.guide)
        self.head = dict(guide=guide, skill=skill_text, budget_rule=budget)

    # -- pieces ----------------------------------------------------------
    def words(self, clip: Clip) -> list[str]:
        """The planned words of a past turn as the reply gave them (``["noop"]`` for a refused reply)."""
        from workstation.engine.parser import parse_reply

        parsed = parse_reply(clip.raw or "", self.game, self.protocol.max_actions)
        if not parsed.valid:
            return ["noop"]
        return list(parsed.raw_moves) if self.game.matching == "harness" else list(parsed.names)

    def clip_text(self, clip: Clip) -> str:
        cache = clip.__dict__.setdefault("_parts", {})  # a finished clip never changes: built once per builder
        text = cache.get((id(self), "document"))
        if text is None:
            s = self.s
            steps = []
            for step in clip.steps:
                piece = s["clip_step"].format(time=timestamp(step.frame), image=_image(step.frame))
                if self.protocol.feedback:
                    if step.reward > 0:
                        piece += s["feedback_positive"].format()
                    if step.reward < 0:
                        piece += s["feedback_negative"].format()
                    if step.life_lost:
                        piece += s["feedback_life_lost"].format()
                steps.append(piece)
            end = clip.steps[-1].frame if clip.steps else clip.start_frame
            text = s["clip"].format(
                start_time=timestamp(clip.start_frame), end_time=timestamp(end), actions=str(self.words(clip)),
                steps="".join(steps), image=_image(clip.start_frame),
            )
            if _ended(clip):
                text += s["clip_reset_note"].format()
            cache[(id(self), "document")] = text
        return str(text)

    def _messages(self, user: list[Message]) -> Prompt:
        system = self.s.get("system")
        head = [Message("system", [TextPart(system.format())])] if system else []
        return Prompt(head + user, self.frames)

    # -- whole prompts ---------------------------------------------------
    def build(self, clips: list[Clip], frame: int) -> Prompt:
        if self.protocol.memory == "append":
            return self._append(clips, frame)
        k, r = self.protocol.history, self.protocol.reward_history
        recent = clips[-k:] if k > 0 else []
        rewarded = [c for c in clips if _eventful(c)][-r:] if r > 0 else []
        s = self.s
        reward_text = ""
        if rewarded:
            reward_text = s["reward_history"].format(clips="".join(self.clip_text(c) for c in rewarded))
        text = s["structured"].format(
            **self.head, reward_history=reward_text, recent_clips="".join(self.clip_text(c) for c in recent),
            time=timestamp(frame), image=_image(frame),
        )
        if recent and _ended(recent[-1]):
            text += s["reset_note"].format()
        return self._messages([Message("user", _parts(text))])

    def current_only(self, frame: int) -> Prompt:
        """Instructions and the current frame only (the temporal-misgrounding probe)."""
        text = self.s["structured"].format(**self.head, reward_history="", recent_clips="",
                                           time=timestamp(frame), image=_image(frame))
        return self._messages([Message("user", _parts(text))])

    def _append(self, clips: list[Clip], frame: int) -> Prompt:
        s = self.s
        first = clips[0].start_frame if clips else frame
        opening = s["append_header"].format(**self.head) + s["append_first"].format(
            time=timestamp(first), image=_image(first))
        msgs = [Message("user", _parts(opening))]
        for c in clips:
            msgs.append(Message("assistant", [TextPart(c.raw)]))
            msgs.append(Message("user", _parts(s["append_update"].format(clip=self.clip_text(c)))))
        return self._messages(msgs)
