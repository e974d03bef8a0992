"""Assemble one turn's Prompt from the pack, the protocol and the clips so far.

No pixels are touched here: image parts only name frames, so assembling a
prompt costs microseconds and PNGs are encoded only if an agent asks for them.
"""

from __future__ import annotations

from typing import Any, cast

from workstation.engine.memory import Clip, select_structured
from workstation.engine.prompt import FrameSource, ImagePart, Message, Part, Prompt, TextPart, merge_parts, timestamp
from workstation.engine.promptpack import PromptPack, display_title
from workstation.game.games import FPS_PAPER, Game
from workstation.game.protocol import Protocol


def _fmt_reward(r: float) -> str:
    return f"{r:g}"


class PromptBuilder:
    def __init__(self, game: Game, protocol: Protocol, pack: PromptPack, frames: FrameSource | None = None,
                 skill: str | None = None):
        self._document = None
        self.skill = skill  # a skill from improvement rounds: placed by the pack's skill slot
        if pack.layout == "document":  # whole documents with images in place (workstation.engine.document_prompt)
            from workstation.engine.document_prompt import DocumentBuilder

            self._document = DocumentBuilder(game, protocol, pack, frames, skill)
            self.game, self.protocol, self.pack, self._frames = game, protocol, pack, frames
            return
        self.game = game
        self.protocol = protocol
        self.pack = pack
        self._frames = frames
        example = ", ".join(game.action_names[: min(3, protocol.max_actions, len(game.action_names))])
        seconds = protocol.repeat / FPS_PAPER
        self._system_parts = [
            pack.render(
                "instructions", title=display_title(game), guide=pack.guide(game.key, protocol.guide).strip(),
                actions=", ".join(game.action_names), max_actions=protocol.max_actions,
                action_seconds=f"{seconds:g}", budget_seconds=f"{protocol.frames / FPS_PAPER:g}",
            ),
            *([pack.render_skill(game, skill)] if skill else []),
            pack.render("reply_format", max_actions=protocol.max_actions, example=f"[{example}]"),
        ]
        self.system_text = "\n\n".join(self._system_parts)
        self._feedback_cache: dict[tuple[Any, ...], str] = {}

    def set_experience(self, rules: list[str] | None) -> None:
        """Place an experience library (``workstation.engine.experience``) by the pack's experience slot, after
        the instructions and any skill, before the reply format; None takes it out again."""
        if self._document is not None:
            from workstation.engine.promptpack import PromptPackError

            raise PromptPackError(f"prompt pack {self.pack.path} is a document pack (the harness's layout): it has no "
                                  "place for an experience library; use the default pack or a copy of it")
        parts = self._system_parts
        if rules is not None:
            parts = [*parts[:-1], self.pack.render_experience(self.game, rules), parts[-1]]
        self.system_text = "\n\n".join(parts)

    # -- pieces ----------------------------------------------------------
    def feedback(self, reward: float, life_lost: bool, reset: bool) -> str:
        """Deterministic notices for one action, "" when nothing happened or feedback is off."""
        if not self.protocol.feedback or (reward == 0 and not life_lost and not reset):
            return ""
        key = (reward, life_lost, reset)
        text = self._feedback_cache.get(key)
        if text is None:
            lines = []
            if reward > 0:
                lines.append(self.pack.render("feedback_positive", reward=_fmt_reward(reward)))
            elif reward < 0:
                lines.append(self.pack.render("feedback_negative", reward=_fmt_reward(reward)))
            if life_lost:
                lines.append(self.pack.render("feedback_life_lost"))
            if reset:
                lines.append(self.pack.render("feedback_reset"))
            text = "".join(line.rstrip("\n") + "\n" for line in lines)
            self._feedback_cache[key] = text
        return text

    def _clip_parts(self, clip: Clip, parts: list[Any], heading: bool = True) -> None:
        """Append a clip's parts. A finished clip never changes, so its parts are built once."""
        key = (id(self), heading)
        cache = clip.__dict__.setdefault("_parts", {})
        built = cache.get(key)
        if built is None:
            built = []
            if heading:
                built.append(TextPart(self.pack.render(
                    "clip_heading", turn=clip.turn, time=timestamp(clip.start_frame),
                    actions="[" + ", ".join(clip.actions) + "]") + "\n"))
                built.append(ImagePart(clip.start_frame, "start"))
                built.append(TextPart("\n"))
            for step in clip.steps:
                built.append(TextPart(self.pack.render("clip_step", time=timestamp(step.frame), action=step.action) + "\n"))
                built.append(ImagePart(step.frame, f"after {step.action}"))
                built.append(TextPart("\n" + self.feedback(step.reward, step.life_lost, step.reset)))
            cache[key] = built
        parts.extend(built)

    def _current(self, frame: int, parts: list[Any], latency_s: float | None) -> None:
        if latency_s:
            parts.append(TextPart(self.pack.render("latency_note", seconds=f"{latency_s:.1f}") + "\n"))
        remaining = (self.protocol.frames - frame) / FPS_PAPER
        parts.append(TextPart(self.pack.render("current_frame", time=timestamp(frame), remaining=f"{remaining:.1f}") + "\n"))
        parts.append(ImagePart(frame, "current"))
        parts.append(TextPart("\n" + self.pack.render("closing")))

    # -- whole prompts ---------------------------------------------------
    @property
    def frames(self) -> FrameSource | None:
        return self._frames

    @frames.setter
    def frames(self, value: FrameSource | None) -> None:
        self._frames = value
        if self._document is not None:
            self._document.frames = value

    def build(self, clips: list[Clip], frame: int) -> Prompt:
        if self._document is not None:
            return self._document.build(clips, frame)
        if self.protocol.memory == "append":
            return self._append(clips, frame)
        latency_s = clips[-1].noop_frames / FPS_PAPER if clips and clips[-1].noop_frames else None
        return self._structured(clips, frame, latency_s)

    def current_only(self, frame: int) -> Prompt:
        """The paper's temporal-misgrounding probe: instructions and the current frame only."""
        if self._document is not None:
            return self._document.current_only(frame)
        parts: list[Any] = []
        self._current(frame, parts, None)
        return Prompt([Message("system", [TextPart(self.system_text)]), Message("user", merge_parts(parts))], self.frames)

    def _structured(self, clips: list[Clip], frame: int, latency_s: float | None) -> Prompt:
        rewarded, recent = select_structured(clips, self.protocol.history, self.protocol.reward_history)
        parts: list[Any] = []
        if not clips:
            parts.append(TextPart(self.pack.render("no_history") + "\n\n"))
        if rewarded:
            parts.append(TextPart(self.pack.render("reward_history_heading") + "\n"))
            for c in rewarded:
                self._clip_parts(c, parts)
            parts.append(TextPart("\n"))
        if recent:
            parts.append(TextPart(self.pack.render("recent_history_heading") + "\n"))
            for c in recent:
                self._clip_parts(c, parts)
            parts.append(TextPart("\n"))
        self._current(frame, parts, latency_s)
        return Prompt([Message("system", [TextPart(self.system_text)]), Message("user", merge_parts(parts))], self.frames)

    def _append(self, clips: list[Clip], frame: int) -> Prompt:
        msgs = [Message("system", [TextPart(self.system_text)])]
        first = clips[0].start_frame if clips else frame
        parts: list[Any] = []
        self._current(first, parts, None)
        msgs.append(Message("user", merge_parts(parts)))
        last = len(clips) - 1
        for i, c in enumerate(clips):
            nxt = frame if i == last else clips[i + 1].start_frame
            reply, result = self._exchange(c, nxt)
            msgs.append(Message("assistant", list(reply)))
            msgs.append(Message("user", list(result)))
        return Prompt(msgs, self.frames)

    def _exchange(self, clip: Clip, nxt: int) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        """A past turn in the chat: the reply, then what it did up to frame ``nxt``.

        Built once per (clip, nxt): a chat grows by a turn each time, and every
        earlier exchange stays as it was. On the latency clock the result opens
        with how long the game ran on while the model thought.
        """
        key = (id(self), "exchange", nxt)
        cache = clip.__dict__.setdefault("_parts", {})
        built = cache.get(key)
        if built is None:
            end = clip.steps[-1].frame if clip.steps else clip.start_frame
            parts: list[Part] = []
            if clip.noop_frames:
                parts.append(TextPart(self.pack.render("latency_note", seconds=f"{clip.noop_frames / FPS_PAPER:.1f}") + "\n"))
            parts.append(TextPart(self.pack.render("append_result", time=timestamp(end)) + "\n"))
            self._clip_parts(clip, parts, heading=False)
            parts.append(TextPart("\n"))
            if clip.steps and end == nxt:
                parts.append(TextPart(self.pack.render("closing")))
            else:  # the game moved on after the last action: show where it is now
                self._current(nxt, parts, None)
            built = cache[key] = ((TextPart(clip.raw or "move: [noop]"),), tuple(merge_parts(parts)))
        return cast(tuple[tuple[Any, ...], tuple[Any, ...]], built)
