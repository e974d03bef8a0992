"""The public harness's reading of a reply, for packs whose vocabulary says ``matching = "harness"``.

A pack made from the harness's prompts must play a reply exactly as the harness
would, including the replies it refuses. Its rules (restated from the protocol,
``ATARIBENCH_PROTOCOL.md``, "One turn"), in order:

- A reply that starts with a code fence loses its fence markers.
- The thought is the text after ``thought:`` up to a line that starts (after blanks
  and an optional ``1.`` style number) with ``move:``; failing that, after
  ``thought`` and one non-word, non-colon character up to ``move:`` or ``move``
  and a blank on such a line; failing that, up to ``move: [`` on the same line.
  A reply without one is refused.
- The move list is what stands inside the first ``move: [...]`` (case ignored,
  across lines), else the rest of the first ``move:`` line when it has no bracket.
- Items split on commas; each is stripped, unquoted, lower-cased, ``_`` read as a
  space, blanks collapsed (this spelling is what the prompt's history shows). An
  empty list, more than ``min(max_actions, 10)`` items, or an item the vocabulary
  does not know (``GameWords.lookup`` with the harness's rule) refuses the reply.
- A refused reply plays one ``noop``; its planned words are ``["noop"]``.
"""

from __future__ import annotations

import re
from typing import Any

from workstation.game.games import Game
from workstation.game.vocabulary import harness_form

_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*|\s*```$", re.M)
_FLAGS = re.I | re.S
_THOUGHTS = (
    re.compile(r"thought:\s*(.*?)\n[ \t\r\f\v]*(?:\d+\.\s*)?move:", _FLAGS),
    re.compile(r"thought[^:\w]\s*(.*?)\n[ \t\r\f\v]*(?:\d+\.\s*)?move[:\s]", _FLAGS),
    re.compile(r"thought:\s*(.*?)(?=\s*move:\s*\[)", _FLAGS),
)
_MOVE_BRACKET = re.compile(r"move:\s*\[(.*?)\]", _FLAGS)
_MOVE_LINE = re.compile(r"move:\s*([^\[\]\n][^\n]*)", re.I)


def parse_harness(text: str, game: Game, max_actions: int) -> tuple[Any, ...]:
    """(thought, words, ids, errors); ``errors`` empty when the reply is played as written."""
    cleaned = text.strip()
    if cleaned.startswith("```"):
        cleaned = _FENCE.sub("", cleaned).strip()
    errors: list[str] = []
    thought_m = next((m for m in (p.search(cleaned) for p in _THOUGHTS) if m), None)
    move_m = _MOVE_BRACKET.search(cleaned) or _MOVE_LINE.search(cleaned)
    thought = " ".join(thought_m.group(1).split()) if thought_m else ""
    if not thought_m:
        errors.append("no thought line: the reply needs 'thought: ...' before its move line")
    words: list[str] = []
    limit = min(max_actions, 10)
    if move_m is None:
        errors.append("no move line: end the reply with e.g. move: [noop]")
    else:
        inner = move_m.group(1).strip()
        words = [harness_form(p) for p in inner.split(",") if p.strip()] if inner else []
        if not words:
            errors.append(f"the move list is empty: give 1 to {limit} actions")
        elif len(words) > limit:
            errors.append(f"{len(words)} actions but at most {limit} allowed")
    vocab = game.vocabulary
    ids: list[int] = []
    for w in words:
        found = vocab.lookup(w)
        if found is None:
            errors.append(f"unknown action {w!r} (allowed: {', '.join(game.aliases)})")
        else:
            ids.append(found)
    return thought, words, ids, errors
