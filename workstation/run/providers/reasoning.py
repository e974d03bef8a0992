"""Reasoning text per model: which think-tag rule a served model id gets, and one text for the parser.

Reasoning models served over Chat Completions show their thinking in one of two ways: in the
text, inside ``<think>...</think>`` (Qwen3, QwQ, DeepSeek-R1 and their distills; their chat
templates often open the block in the prompt, so the reply has only the closing ``</think>``),
or apart from it, in a ``reasoning_content`` (vLLM with a reasoning parser, DeepSeek's API) or
``reasoning`` (Ollama, newer vLLM) field. Either way it is the thought, never the plan.

``rule_for(model)`` picks the rule from the model id by a small table (``THINK_TAG_MODELS``):
``think_tags`` for the families above, else ``leading`` (a leading ``<think>`` block is still
read as thinking, and so is all of a reply that opens with ``<think>`` and never closes it).
``fold`` makes one text of a reply: the separate reasoning becomes a leading ``<think>`` block, and
under ``think_tags`` a lone ``</think>``, a block further in or an unclosed ``<think>`` further in
is written as one complete leading block. The text the run records and parses is that folded text,
so ``parse_reply`` reads every recorded turn the same way later (verify, replay, re-parse).
"""

from __future__ import annotations

import re

from workstation.engine.parser import REASONING_RULES, split_thinking

# (family, pattern over the lower-cased model id): models whose replies carry think tags
THINK_TAG_MODELS: tuple[tuple[str, str], ...] = (
    ("qwen3", r"qwen-?3"),
    ("qwq", r"qwq"),
    ("deepseek-r1", r"deepseek[-_ ]?r1|r1[-_]distill"),
    ("glm-4.1v/4.5v thinking", r"glm-?4\.(?:1|5)v"),
    ("kimi-vl thinking", r"kimi-vl.*thinking"),
    ("mimo-vl", r"mimo-vl"),
)
REASONING_FIELDS = ("reasoning_content", "reasoning")  # where servers put reasoning they send apart


def rule_for(model: str) -> tuple[str, str]:
    """``(rule, why)`` for a served model id: ``("think_tags", "qwen3")`` or ``("leading", "default")``."""
    low = model.lower()
    for family, pattern in THINK_TAG_MODELS:
        if re.search(pattern, low):
            return "think_tags", family
    return "leading", "default"


def fold(text: str, reasoning: str, rule: str) -> str:
    """The one text of a reply whose reasoning may come apart (``reasoning``) or in think tags."""
    if rule not in REASONING_RULES:
        raise ValueError(f"unknown reasoning rule {rule!r}")
    if reasoning.strip() and not text.lstrip().lower().startswith("<think>"):
        text = f"<think>{reasoning}</think>\n{text}"
    if rule == "think_tags":
        thinking, answer = split_thinking(text, "think_tags")
        leading, _ = split_thinking(text, "leading")
        if thinking is not None and leading != thinking:
            text = f"<think>{thinking}</think>\n{answer.lstrip()}"
    return text


def describe(model: str) -> dict[str, str]:
    """What the manifest records about the rule: ``{"rule": ..., "matched": ...}``."""
    rule, why = rule_for(model)
    return {"rule": rule, "matched": why}


__all__ = ["REASONING_FIELDS", "THINK_TAG_MODELS", "describe", "fold", "rule_for"]
