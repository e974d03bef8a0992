"""The judge's prompt (a data file with a digest) and the checked reader of its JSON verdicts.

A verdict is one JSON object: ``failure`` (bool), ``category`` (one of CATEGORIES or a spelling
in ALIASES, or null when there is no failure), ``subtype`` (text or null), ``evidence`` (text or
null) and ``text_cue_followed`` (bool or null, the over-reliance question). The category is kept
as the judge wrote it (lower case, spaces tidied) and ``group`` names which of the five it is. ``parse_verdict`` accepts the object bare, in a
```json fence or after a sentence, and nothing looser: a key of the wrong type, a category it
does not know, or a category given for no failure is a ``VerdictError`` naming the problem, and
the caller asks once more, then records the reply as unparsed. Nothing is ever guessed.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workstation.base.errors import UserError

CATEGORIES = ("perception", "spatiotemporal", "decision", "exploration", "rule")
# spellings of the same five names (the paper writes "decision/control" and "spatio-temporal")
ALIASES = {"decision/control": "decision", "decision-control": "decision", "control": "decision",
           "spatio-temporal": "spatiotemporal", "spatio temporal": "spatiotemporal"}
NULLS = ("", "none", "null", "n/a")
FAILURE_KEYS = ("failure", "observable_failure", "failure_observable")  # the first one present is read
DEFAULT_PROMPT = Path(__file__).with_name("judge_prompt.toml")
PROMPT_KEYS = ("system", "question", "retry")


class VerdictError(ValueError):
    """A reply that is not a valid verdict (one line: what is wrong with it); ``key``: the field at fault."""

    def __init__(self, message: str, key: str = "failure") -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class JudgePrompt:
    name: str
    system: str
    question: str
    retry: str
    digest: str
    path: str
    stuck: str = ""  # the stuck-awareness question ({turns}, {thoughts}); "" when the file has none


def load_judge_prompt(path: str | Path | None = None) -> JudgePrompt:
    """The judge prompt file (the packaged one by default); UserError naming the file when it is unusable."""
    p = Path(path) if path else DEFAULT_PROMPT
    try:
        raw = p.read_bytes()
        data = tomllib.loads(raw.decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise UserError(f"{p}: not a readable judge prompt ({e}); pass a TOML file like "
                        f"{DEFAULT_PROMPT.name}") from None
    missing = [k for k in PROMPT_KEYS if not isinstance(data.get(k), str) or not data[k].strip()]
    if missing:
        raise UserError(f"{p}: the judge prompt needs text for {', '.join(missing)}; see {DEFAULT_PROMPT}")
    if "{problem}" not in data["retry"]:
        raise UserError(f"{p}: the retry text must contain {{problem}} (where the reason goes)")
    stuck = data["stuck"] if "stuck" in data and isinstance(data["stuck"], str) else ""
    return JudgePrompt(str(data.get("name") or p.stem), data["system"].strip(), data["question"].strip(),
                       data["retry"].strip(), hashlib.sha256(raw).hexdigest()[:16], str(p), stuck.strip())


@dataclass(frozen=True)
class Verdict:
    """What the judge said of a turn, as read from its reply and as every verdict line holds it. Made only whole:
    ``failure`` true or false, a ``category`` of the five (or an alias) exactly when there is a failure,
    ``subtype`` and ``evidence`` text or null, ``text_cue_followed`` true, false or null; anything else is a
    ``VerdictError`` naming what is wrong (the one rule for a reply and for a line read back)."""

    failure: bool
    category: str | None  # as the judge wrote it
    subtype: str | None
    evidence: str | None
    text_cue_followed: bool | None

    def __post_init__(self) -> None:
        if not isinstance(self.failure, bool):
            raise VerdictError("failure must be true or false")
        if self.category is not None and (not isinstance(self.category, str)
                                          or ALIASES.get(self.category, self.category) not in CATEGORIES):
            raise VerdictError(f"unknown category {self.category!r} (one of {', '.join(CATEGORIES)})", "category")
        if self.failure and self.category is None:
            raise VerdictError("a failure needs a category", "category")
        if not self.failure and self.category is not None:
            raise VerdictError(f"category {self.category!r} is given but failure is false", "category")
        if self.subtype is not None and not isinstance(self.subtype, str):
            raise VerdictError("subtype must be text or null", "subtype")
        if self.evidence is not None and not isinstance(self.evidence, str):
            raise VerdictError("evidence must be text", "evidence")
        if self.text_cue_followed is not None and not isinstance(self.text_cue_followed, bool):
            raise VerdictError("text_cue_followed must be true, false or null", "text_cue_followed")

    @property
    def group(self) -> str | None:
        """Which of the five categories it is."""
        return None if self.category is None else ALIASES.get(self.category, self.category)

    def to_json(self) -> dict[str, Any]:
        return {"failure": self.failure, "category": self.category, "group": self.group, "subtype": self.subtype,
                "evidence": self.evidence, "text_cue_followed": self.text_cue_followed}


def _object(text: str) -> dict[str, Any]:
    start = text.find("{")
    if start < 0:
        raise VerdictError("no JSON object in the reply")
    try:
        value, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as e:
        raise VerdictError(f"the JSON object does not parse ({e.msg} at character {e.pos})") from None
    if not isinstance(value, dict):
        raise VerdictError("the reply's JSON is not an object")
    return value


def _category(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise VerdictError(f"category is {type(value).__name__}, not text")
    name = " ".join(value.strip().lower().split())
    if name in NULLS:
        return None
    if ALIASES.get(name, name) not in CATEGORIES:
        raise VerdictError(f"unknown category {value!r} (one of {', '.join(CATEGORIES)})")
    return name


def parse_verdict(text: str | None) -> Verdict:
    if not text or not text.strip():
        raise VerdictError("the reply is empty")
    obj = _object(text)
    key = next((k for k in FAILURE_KEYS if k in obj), "failure")
    failure = obj.get(key)
    if not isinstance(failure, bool):
        raise VerdictError(f"{key} must be true or false" if key in obj else "the key failure is missing")
    category = _category(obj.get("category"))  # the reply's spellings: tidied, "none" read as null
    subtype, evidence = obj.get("subtype"), obj.get("evidence")
    if isinstance(subtype, str):
        subtype = None if subtype.strip().lower() in NULLS else subtype.strip()
    if isinstance(evidence, str):
        evidence = evidence.strip()
    return Verdict(failure, category, subtype, evidence, obj.get("text_cue_followed"))  # checked as it is made
