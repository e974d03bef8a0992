"""Document packs: a prompt written as whole documents with images in place.

The default pack builds a prompt from short named pieces (instructions in a
system message, then headings, clips and the current frame). A pack whose
``template.toml`` says ``layout = "document"`` instead holds whole documents,
kept to the character (nothing is stripped), with ``{image}`` where a frame goes:

| key | placeholders | what it is |
|---|---|---|
| ``structured`` | guide skill budget_rule reward_history recent_clips time image | the one user message of a structured-history turn |
| ``reward_history`` | clips | wraps the reward clips (left out, with its wrapper, when there are none) |
| ``clip`` | start_time end_time actions steps image | one past turn; ``image`` is its start frame |
| ``clip_step`` | time image | one action of it; feedback lines follow |
| ``budget_rule`` | budget_seconds | the time budget sentence |
| ``feedback_positive`` ``feedback_negative`` ``feedback_life_lost`` | none | added after a step when that happened |
| ``clip_reset_note`` | none | added after a clip whose game ended |
| ``reset_note`` | none | added after the whole prompt when the latest clip's game ended |
| ``append_header`` | guide skill budget_rule | append mode: the start of the first user message |
| ``append_first`` | time image | append mode: the rest of it, with the first frame |
| ``append_update`` | clip | append mode: the user message after each reply |

Optional: ``system`` (no placeholders; without it there is no system message) and
the ``[skill]`` table (``slot``, placeholders ``{title}`` ``{skill}``): how a
run's skill fills ``{skill}``, which is empty for a run without one.

Guides are ``games/<key>.md``, inserted exactly as written; a short guide
(``games/<key>.short.md``) is optional and falls back to the full one.
``{actions}`` in a clip is the planned words as the reply gave them, written as
a Python list (``['left', 'left']``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workstation.engine.template_strings import template_string

DOCUMENT_KEYS: dict[str, frozenset[str]] = {
    "structured": frozenset({"guide", "skill", "budget_rule", "reward_history", "recent_clips", "time", "image"}),
    "reward_history": frozenset({"clips"}),
    "clip": frozenset({"start_time", "end_time", "actions", "steps", "image"}),
    "clip_step": frozenset({"time", "image"}),
    "budget_rule": frozenset({"budget_seconds"}),
    "feedback_positive": frozenset(),
    "feedback_negative": frozenset(),
    "feedback_life_lost": frozenset(),
    "clip_reset_note": frozenset(),
    "reset_note": frozenset(),
    "append_header": frozenset({"guide", "skill", "budget_rule"}),
    "append_first": frozenset({"time", "image"}),
    "append_update": frozenset({"clip"}),
}
OPTIONAL_KEYS: dict[str, frozenset[str]] = {"system": frozenset()}


def check_document(data: dict[str, Any], where: str, error: Callable[[str], Exception]) -> dict[str, str]:
    """The document strings of a ``layout = "document"`` template, checked; ``error`` is the exception class."""
    known = {**DOCUMENT_KEYS, **OPTIONAL_KEYS}
    if isinstance(data.get("skill"), dict):  # the [skill] slot table (read by the pack loader where it knows it)
        data = {k: v for k, v in data.items() if k != "skill"}
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise error(f"{where}: template.toml has unknown key {unknown[0]!r}; a document pack's keys are "
                    + ", ".join(known))
    strings: dict[str, str] = {}
    for key, allowed in known.items():
        if key not in data and key in OPTIONAL_KEYS:
            continue
        value = template_string(data, key, allowed, where, error)
        strings[key] = value  # kept to the character: a document's spacing is its own
    return strings
