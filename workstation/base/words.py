"""Counted words as the workstation prints them: ``1 turn``, ``2 turns``."""

from __future__ import annotations


def plural(n: float, word: str, many: str | None = None) -> str:
    """``1 turn``, ``2 turns`` (``many`` for an irregular plural)."""
    return f"{n:g} {word}" if n == 1 else f"{n:g} {many or word + 's'}"
