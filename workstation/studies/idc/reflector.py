"""The reflector's tool loop: explore a round, diagnose, (validate,) distill a skill, keep a notebook.

One reflection is a conversation with tools (``workstation.studies.idc.tools``): each
reply's tool calls are run against the round's ``Workbench`` and their results
go back as tool messages, until the reflector submits a skill, uses up its
tool-call budget, or the validator has rejected ``VALIDATION_TRIES`` skills.
Every reply, call and result is kept in the transcript with usage and cost.
"""

from __future__ import annotations

import io
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from workstation.engine.calls import CancelToken, FatalAgentError, Usage
from workstation.engine.prompt import ImagePart, Message, Prompt, TextPart
from workstation.studies.idc.tools import VALIDATION_TRIES, Workbench, result_summary, tool_specs

SYSTEM = """You are the reflector in improvement rounds for an Atari game played by a vision-language model.
The player played a round of episodes; you study its recordings with read-only tools and write the player a \
skill: short, general advice it will read in its instructions next round.

Work in stages:
1. Explore: list_dir, read_text (manifest.json, turns.jsonl with each turn's reply, actions and rewards, \
summary.json), read_image (a frame of a recording) and grep.
2. Diagnose: call submit_diagnosis with what went wrong and why.
3. Distill: call submit_skill with the skill (markdown, at most about 1,200 tokens). Write general rules about \
reading the screen and choosing actions; never a frame-timed script of actions and never a memorised map.
Keep your notebook with write_notebook (rewritten whole, at most about 2,000 tokens): it carries your notes to \
the next round. The player never sees it.
{validator}You have at most {budget} tool calls. Submitting a skill ends your turn."""

VALIDATOR_NOTE = ("Before submitting, you may check a skill with validate_skill; submit_skill checks it too. "
                  f"After {VALIDATION_TRIES} rejections the previous skill stays.\n")

NUDGE = "Use the tools to study the round, then call submit_diagnosis and submit_skill."

JUDGE = """You check a skill written for a player of the Atari game {title}. Reject it if it memorises \
frame-timed action scripts (actions tied to particular times or frame numbers) or a map of the level, or if it \
contradicts the diagnosis. Otherwise accept it.
Answer with one line: ACCEPT: <reason> or REJECT: <reason>.

Diagnosis:
{diagnosis}

Skill:
{skill}"""


class ImageBox:
    """A frame source over the PNGs tool results returned (an image part names one by index)."""

    def __init__(self) -> None:
        self.pngs: list[bytes] = []

    def add(self, png: bytes) -> int:
        self.pngs.append(png)
        return len(self.pngs) - 1

    def png(self, index: int) -> bytes:
        return self.pngs[index]

    def rgb(self, index: int) -> Any:
        import numpy as np
        from PIL import Image

        return np.asarray(Image.open(io.BytesIO(self.pngs[index])).convert("RGB"))


@dataclass
class Reflection:
    """How one reflection ended and what it cost."""

    status: str  # "submitted" | "no_skill" (budget used) | "rejected" (validator) | "failed" (provider)
    why: str
    skill: str | None = None
    diagnosis: str | None = None
    notebook: str = ""
    notebook_written: bool = False
    tool_calls: int = 0
    requests: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    priced: bool = True
    rejections: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)

    def account(self) -> dict[str, Any]:
        return {"status": self.status, "why": self.why, "tool_calls": self.tool_calls, "requests": self.requests,
                "usage": self.usage.to_json(), "cost_usd": round(self.cost_usd, 6), "priced": self.priced,
                "rejections": self.rejections, "notebook_written": self.notebook_written}


def _spend(into: Reflection, reply: Any) -> None:
    if reply.usage is not None:
        into.usage = into.usage + reply.usage
    if reply.cost_usd is None:
        into.priced = into.priced and reply.usage is None
    else:
        into.cost_usd += reply.cost_usd


def make_validator(agent: Any, title: str, log: Reflection) -> Callable[[str, str | None], tuple[bool, str]]:
    """A judge over ``agent``: (skill, diagnosis) -> (accepted, reason); its calls count in ``log``."""

    def validate(skill: str, diagnosis: str | None) -> tuple[bool, str]:
        text = JUDGE.format(title=title, diagnosis=diagnosis or "(none submitted)", skill=skill)
        reply = agent.act(Prompt([Message("user", [TextPart(text)])]))
        _spend(log, reply)
        log.events.append({"kind": "validator", "t": time.time(), "reply": reply.text, "error": reply.error,
                           "usage": reply.usage.to_json() if reply.usage else None, "cost_usd": reply.cost_usd})
        if reply.error:
            return False, f"the validator gave no verdict ({reply.error})"
        line = next((x.strip() for x in reply.text.splitlines() if x.strip()), "")
        m = re.match(r"\W*(accept|reject)\w*\W*(.*)", line, re.I)
        if not m:
            return False, f"the validator's reply named no verdict ({line[:120]!r})"
        return m.group(1).lower() == "accept", m.group(2).strip() or m.group(1).lower()

    return validate


def reflect(agent: Any, bench: Workbench, brief: str, budget: int, log: Reflection | None = None,
            cancel: CancelToken | None = None, max_cost: float | None = None) -> Reflection:
    """Run the tool loop until a skill is submitted or the budget runs out (``log`` may hold validator calls)."""
    out = log or Reflection("no_skill", "")
    box = ImageBox()
    system = SYSTEM.format(validator=VALIDATOR_NOTE if bench.validate else "", budget=budget)
    prompt = Prompt([Message("system", [TextPart(system)]), Message("user", [TextPart(brief)])], box,
                    tools=tool_specs(bench.validate is not None))
    out.events.append({"kind": "prompt", "t": time.time(), "system": system, "user": brief,
                       "tools": [t.name for t in prompt.tools]})

    def end(status: str, why: str) -> Reflection:
        out.status, out.why = status, why
        out.skill = bench.skill if status == "submitted" else None
        out.diagnosis, out.notebook, out.notebook_written = bench.diagnosis, bench.notebook, bench.notebook_written
        out.rejections = bench.rejections
        return out

    while True:
        if out.tool_calls >= budget or out.requests >= budget:
            return end("no_skill", f"no skill submitted within the budget of {budget} tool calls; "
                                   "the previous skill stays")
        try:
            reply = agent.act(prompt, None, cancel=cancel)
        except FatalAgentError as e:
            return end("failed", f"the reflector failed: {e}; the previous skill stays")
        out.requests += 1
        _spend(out, reply)
        out.events.append({"kind": "reply", "t": time.time(), "text": reply.text,
                           "tool_calls": [c.to_json() for c in reply.tool_calls], "error": reply.error,
                           "usage": reply.usage.to_json() if reply.usage else None, "cost_usd": reply.cost_usd,
                           "finish_reason": reply.finish_reason})
        if max_cost is not None and out.cost_usd >= max_cost:
            return end("failed", f"the reflection reached the IDC's cost cap (${out.cost_usd:.4f} of the "
                                 f"${max_cost:.4f} left); the previous skill stays")
        if reply.error and not reply.tool_calls:
            return end("failed", f"the reflector gave no usable reply ({reply.error}); the previous skill stays")
        prompt.messages.append(Message("assistant", [TextPart(reply.text)] if reply.text else [],
                                       tool_calls=list(reply.tool_calls)))
        if not reply.tool_calls:
            prompt.messages.append(Message("user", [TextPart(NUDGE)]))
            continue
        for call in reply.tool_calls:
            out.tool_calls += 1
            result = bench.call(call)
            out.events.append({"kind": "tool", "t": time.time(), "call": call.to_json(),
                               "result": result_summary(result)})
            parts = [TextPart(result.text)] + [ImagePart(box.add(png), "tool image") for png in result.images]
            # prompt.Role names no "tool" though a Message answers a call with it (turn/prompt.py)
            answer = Message("tool", parts, answers=call, is_error=result.is_error)  # type: ignore[arg-type]
            prompt.messages.append(answer)
        if bench.skill is not None:
            if len(reply.tool_calls) > 1:
                _close(agent, prompt, out, cancel)
            return end("submitted", "the reflector submitted a skill")
        if bench.rejections >= VALIDATION_TRIES:
            return end("rejected", f"the validator rejected {bench.rejections} skills; the previous skill stays")


def _close(agent: Any, prompt: Prompt, out: Reflection, cancel: CancelToken | None) -> None:
    """One last request when the reply that submitted the skill made other calls too: the reflector sees
    every result it asked for (calls in its answer are recorded, not run)."""
    try:
        reply = agent.act(prompt, None, cancel=cancel)
    except FatalAgentError as e:
        out.events.append({"kind": "closing", "t": time.time(), "error": str(e)})
        return
    out.requests += 1
    _spend(out, reply)
    out.events.append({"kind": "closing", "t": time.time(), "text": reply.text, "error": reply.error,
                       "tool_calls": [c.to_json() for c in reply.tool_calls],
                       "usage": reply.usage.to_json() if reply.usage else None, "cost_usd": reply.cost_usd})


__all__ = ["ImageBox", "Reflection", "make_validator", "reflect"]
