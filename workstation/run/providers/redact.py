"""Keeping keys out of everything we write or show.

``scrub`` removes any key value we hold, plus anything shaped like a
credential (``Bearer ...``, ``x-api-key: ...``, ``key=...``, ``sk-...``,
``AIza...``), from a piece of text; ``redact_headers`` blanks credential
headers. Every error string and payload dump passes through here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

REDACTED = "[redacted]"

_PATTERNS = (
    (re.compile(r"(?i)\bBearer\s+[^\s\"',;}]+"), "Bearer " + REDACTED),
    (re.compile(r"(?i)\b(x-api-key|x-goog-api-key|api[_-]?key)([\"']?\s*[:=]\s*[\"']?)[^\s\"',;}&]+"),
     r"\1\2" + REDACTED),
    (re.compile(r"(?i)([?&]key=)[^&\s\"']+"), r"\1" + REDACTED),
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"), REDACTED),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"), REDACTED),
)

_CREDENTIAL_HEADERS = {"authorization", "x-api-key", "x-goog-api-key", "api-key", "proxy-authorization"}


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every known secret and credential-shaped token replaced."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, REDACTED)
    for pattern, repl in _PATTERNS:
        text = pattern.sub(repl, text)
    return text


def one_line(text: str, secrets: Iterable[str] = (), limit: int = 300) -> str:
    """Scrubbed, whitespace collapsed to single spaces, cut to ``limit`` characters."""
    flat = " ".join(scrub(str(text), secrets).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``headers`` with credential values blanked (the scheme word kept)."""
    out = {}
    for name, value in headers.items():
        if name.lower() in _CREDENTIAL_HEADERS:
            out[name] = "Bearer " + REDACTED if value.lower().startswith("bearer ") else REDACTED
        else:
            out[name] = value
    return out
