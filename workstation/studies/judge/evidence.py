"""What the judge is shown for one turn, blinded.

In order: the instructions the player got, the screens and text of its prompt exactly as it got
them (rebuilt from the recording by ``workstation.run.request``), its reply (thought, plan), the
actions executed, then the screen after each action with the game's feedback. Images are the
recording's own frames, sent as data with no name (PNGs carry no text chunks). Blinding: every
text part passes through ``Blinder``, which replaces each model name and agent spec of the runs
being judged (and a setting's label in the player's own words) with ``NEUTRAL``; ``check``
then refuses evidence whose text still names one, so a leak is an error, never a request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from workstation.base.errors import UserError
from workstation.engine.prompt import ImagePart, Message, Part, Prompt, TextPart, merge_parts, timestamp
from workstation.store.recording import Recording
from workstation.studies.judge.verdict import JudgePrompt

NEUTRAL = "[name withheld]"


class BlindingError(UserError):
    """A judge request would still name a model (nothing is sent)."""


@dataclass
class Blinder:
    names: tuple[str, ...]  # model names and specs: replaced everywhere
    labels: tuple[str, ...] = ()  # setting labels: replaced in the player's own words

    @classmethod
    def for_runs(cls, recs: list[Recording], labels: list[str]) -> Blinder:
        names: set[str] = set()
        from workstation.run.agents.registry import is_model

        for rec in recs:
            agent = rec.manifest_record.agent
            if not is_model(rec.manifest_record.agent_spec or ""):
                continue  # a baseline (random, replay) has no identity to hide: "random" stays a plain word
            for key in ("spec", "model"):
                v = agent[key] if key in agent else None
                if isinstance(v, str) and len(v.strip()) >= 2:
                    names.add(v.strip())
        return cls(tuple(sorted(names, key=len, reverse=True)),
                   tuple(sorted({x for x in labels if len(x) >= 3} - names, key=len, reverse=True)))

    def _sub(self, words: tuple[str, ...], text: str) -> str:
        for w in words:
            text = re.sub(re.escape(w), NEUTRAL, text, flags=re.IGNORECASE)
        return text

    def text(self, text: str) -> str:
        return self._sub(self.names, text)

    def own_words(self, text: str) -> str:
        """The player's reply: names and setting labels (as whole words) removed."""
        text = self.text(text)
        for w in self.labels:
            text = re.sub(rf"(?<!\w){re.escape(w)}(?!\w)", NEUTRAL, text, flags=re.IGNORECASE)
        return text

    def check(self, parts: list[Part]) -> None:
        """Refuse evidence (the parts taken from the recording) that still names a model."""
        body = "".join(p.text for p in parts if isinstance(p, TextPart)).lower().replace(NEUTRAL, " ")
        for w in self.names:
            if w.lower() in body:
                raise BlindingError(f"a judge request would still name the model {w!r}; nothing was sent")


def _feedback(reward: float, life_lost: bool, reset: bool) -> str:
    bits = []
    if reward:
        bits.append(f"reward {reward:+g}")
    if life_lost:
        bits.append("a life was lost")
    if reset:
        bits.append("the game ended and restarted")
    return "; ".join(bits) if bits else "no reward"


def shown_parts(prompt: Prompt, blind: Blinder) -> list[Part]:
    """The player's prompt as parts of one user message: its instructions, then what it was shown."""
    parts: list[Part] = []
    system = "\n\n".join(m.text() for m in prompt.messages if m.role == "system")
    parts.append(TextPart("=== The instructions the player was given ===\n" + blind.text(system) + "\n\n"))
    parts.append(TextPart("=== What the player was shown on this turn ===\n"))
    for m in prompt.messages:
        if m.role == "system":
            continue
        if m.role == "assistant":
            parts.append(TextPart("\n[the player's earlier reply]\n" + blind.own_words(m.text()) + "\n[end of reply]\n"))
            continue
        for p in m.parts:
            parts.append(TextPart(blind.text(p.text)) if isinstance(p, TextPart) else ImagePart(p.frame, p.label))
    parts.append(TextPart("\n\n"))
    return parts


def reply_parts(thought: str, planned: list[str], executed: list[str] | None, note: str, blind: Blinder) -> list[Part]:
    text = ("=== The player's reply ===\n"
            f"thought: {blind.own_words(thought) or '(none)'}\n"
            f"planned actions: [{', '.join(planned)}]\n")
    if executed is not None:
        text += f"executed actions: [{', '.join(executed)}]\n"
    if note:
        text += note + "\n"
    return [TextPart(text + "\n")]


def followed_parts(rec: Recording, turn: int, heading: str = "What followed") -> list[Part]:
    t = rec.turn_records[turn]
    parts: list[Part] = [TextPart(f"=== {heading} ===\n")]
    for action, frame, reward, lost, reset in zip(t.actions, t.action_frames, t.action_rewards,
                                                   t.action_life_lost, t.action_reset):
        parts.append(TextPart(f"{timestamp(frame)}, after {action} ({_feedback(reward, lost, reset)}):\n"))
        parts.append(ImagePart(frame, f"after {action}"))
        parts.append(TextPart("\n"))
    parts.append(TextPart(f"Over the turn: reward {t.reward:+g}, lives lost {t.lives_lost}, score now {t.score:g}"
                          f"{', the game ended' if t.game_over else ''}.\n\n"))
    return parts


def judge_request(rec: Recording, turn: int, jp: JudgePrompt, blind: Blinder, *,
                  prompt: Prompt | None = None, reply: tuple[str, list[str]] | None = None) -> Prompt:
    """The judge's prompt for ``turn`` of ``rec``; ``prompt``/``reply`` replace the recorded ones (re-query)."""
    from workstation.run.request import rebuild_prompt

    t = rec.turn_records[turn]
    shown = prompt if prompt is not None else rebuild_prompt(rec, turn)
    parts = [TextPart(f"=== The turn under review: turn {turn}, from {timestamp(t.start_frame)} ===\n\n"),
             *shown_parts(shown, blind)]
    if reply is None:
        note = "" if t.valid else f"The reply could not be played ({t.rule}); the game idled instead."
        parts += reply_parts(t.thought, t.planned, t.actions, note, blind)
        parts += followed_parts(rec, turn)
    else:
        parts += reply_parts(reply[0], reply[1], None, "", blind)
        parts += followed_parts(rec, turn, "What the game did next under the plan the player first gave "
                                           "(for context: this reply was not played)")
    blind.check(parts)
    parts.append(TextPart("=== Your verdict ===\n" + jp.question))
    return Prompt([Message("system", [TextPart(jp.system)]), Message("user", merge_parts(parts))], rec.frames)


def with_retry_note(prompt: Prompt, jp: JudgePrompt, previous: str, problem: str) -> Prompt:
    """The same request once more, with the unreadable answer and what was wrong with it."""
    msgs = list(prompt.messages) + [Message("assistant", [TextPart(previous or "(empty)")]),
                                    Message("user", [TextPart(jp.retry.replace("{problem}", problem))])]
    return Prompt(msgs, prompt.frames)
