"""A model's reply to a closed-choice question, read as one of the choices (or None).

Accepted forms: the bare choice ("left"), a marked answer ("Answer: left",
"**Final answer:** (B)"), a sentence naming exactly one choice ("The ball is moving
to the left."), markdown around any of these, and a letter (A, B, ...) since the
choices are shown lettered. Anything else, including a sentence naming two
choices with no marked answer, reads as None: it counts wrong and the reply is
kept. Never raises.
"""

from __future__ import annotations

import re

LETTERS = "ABCDEFGHIJ"
_MARK = re.compile(r"(?:final\s+answer|answer|choice|option|direction)\s*(?:is|would\s+be|:|-|=|\))\s*", re.I)
_MARKDOWN = re.compile(r"[*_`#>~|]+")
_LETTER_ONLY = re.compile(r"^\(?([a-j])\)?[.):]?$", re.I)
_LETTER_LEAD = re.compile(r"^\(?([a-j])[.):]\s|^\(([a-j])\)", re.I)
_SYNONYMS = {
    "still": ("not moving", "stationary", "motionless", "no movement", "isn't moving", "is not moving",
              "doesn't move", "does not move", "standing still", "stays still"),
    "up": ("upward", "upwards"),
    "down": ("downward", "downwards"),
    "wait": ("stay", "hold", "don't move", "do not move"),
}


def lettered(choices: list[str]) -> str:
    """How the prompt shows the choices: "(A) left  (B) right"."""
    return "  ".join(f"({LETTERS[i]}) {c}" for i, c in enumerate(choices[: len(LETTERS)]))


def _aliases(choices: list[str]) -> list[list[str]]:
    """Per choice, the phrases that name it: itself, itself minus words every choice shares
    ("left half" -> "left"), and a few synonyms."""
    words = [c.lower().split() for c in choices]
    shared = set(words[0]).intersection(*map(set, words[1:])) if words else set()
    out = []
    for c, w in zip(choices, words):
        names = [c.lower()]
        short = " ".join(t for t in w if t not in shared)
        if short and short != names[0]:
            names.append(short)
        names.extend(_SYNONYMS.get(c.lower(), ()))
        out.append(names)
    return out


def _found(text: str, choices: list[str]) -> list[tuple[int, int]]:
    """(position, choice index) of every choice named in ``text``; longer names claim their
    span first, so "up-left" is not also read as "left"."""
    names = sorted(((n, i) for i, ns in enumerate(_aliases(choices)) for n in ns), key=lambda t: -len(t[0]))
    taken = [False] * len(text)
    hits = []
    for name, i in names:
        if not name.strip():
            continue
        for m in re.finditer(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", text):
            if not any(taken[m.start():m.end()]):
                hits.append((m.start(), i))
                for k in range(m.start(), m.end()):
                    taken[k] = True
    return sorted(hits)


def _clean(text: str) -> str:
    text = _MARKDOWN.sub(" ", text)
    return re.sub(r"\s+", " ", text).strip().lower()


def _one(text: str, choices: list[str], first: bool) -> int | None:
    t = text.strip(" .,:;!?\"'()[]")
    m = _LETTER_ONLY.match(t)
    if m and LETTERS.index(m.group(1).upper()) < len(choices):
        return LETTERS.index(m.group(1).upper())
    m = _LETTER_LEAD.match(text.strip())
    if m:
        k = LETTERS.index((m.group(1) or m.group(2)).upper())
        if k < len(choices):
            return k
    hits = _found(text, choices)
    distinct = {i for _, i in hits}
    if len(distinct) == 1:
        return hits[0][1]
    if hits and first:
        return hits[0][1]
    return None


def parse_choice(reply: object, choices: list[str]) -> str | None:
    """The choice a reply gives, or None when it gives none (or several)."""
    try:
        if not isinstance(reply, str) or not choices:
            return None
        choices = [str(c) for c in choices]
        text = _clean(reply)
        if not text:
            return None
        marks = list(_MARK.finditer(text))
        if marks:  # the last marked answer wins; read its first line, first choice named
            tail = text[marks[-1].end():]
            tail = re.split(r"(?<=[.!?])\s|\n", tail, maxsplit=1)[0]
            k = _one(tail, choices, first=True)
            if k is not None:
                return choices[k]
        k = _one(text, choices, first=False)
        return None if k is None else choices[k]
    except Exception:  # a reply must never stop an evaluation
        return None
