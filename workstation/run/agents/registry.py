"""The one list of agent kinds, and the parsing of agent specs.

A spec is ``KIND`` or ``KIND:ARG``: ``random``, ``human``, ``replay:PATH``, or a
model ``openai:M`` / ``compat:M`` / ``anthropic:M`` / ``gemini:M``. Parsing reads
no file and no key and builds nothing: the run spec's validation and its
identity hash use it; ``make_agent`` (in ``workstation.run.agents``) builds from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from workstation.base.errors import FieldedError


class AgentSpecError(FieldedError, ValueError):
    """An agent spec the workstation cannot make an agent from (``field`` is ``"agent"``)."""

    FIELD = "agent"


@dataclass(frozen=True)
class Kind:
    name: str
    arg: str | None  # what follows the colon ("PATH", "MODEL"), None when nothing may
    help: str
    model: bool = False  # a provider model: takes generation and transport options, may cost money


KINDS: tuple[Kind, ...] = (
    Kind("random", None, "the AtariBench random baseline, 1..3 uniform actions a turn (no key, no network)"),
    Kind("replay", "PATH", "re-play the actions of a recording"),
    Kind("human", None, "you, at the keyboard (workstation play)"),
    Kind("openai", "MODEL", "OpenAI Responses API (OPENAI_API_KEY)", model=True),
    Kind("compat", "MODEL", "OpenAI-compatible Chat Completions: vLLM, Ollama, llama.cpp (--base-url)", model=True),
    Kind("anthropic", "MODEL", "Anthropic Messages API (ANTHROPIC_API_KEY)", model=True),
    Kind("gemini", "MODEL", "Google Gemini API (GEMINI_API_KEY)", model=True),
)
KIND_BY_NAME = {k.name: k for k in KINDS}
PROVIDER_KINDS: tuple[str, ...] = tuple(k.name for k in KINDS if k.model)
SPEC_HELP = " | ".join(k.name if k.arg is None else f"{k.name}:{k.arg}" for k in KINDS)


@dataclass(frozen=True)
class AgentRef:
    """A parsed agent spec: its kind and what follows the colon."""

    kind: str
    arg: str  # "" when the kind takes none
    text: str  # the spec as written

    @property
    def is_model(self) -> bool:
        return KIND_BY_NAME[self.kind].model

    @property
    def canonical(self) -> str:
        """The spec the built agent calls itself (``Agent.spec``), which the run identity hashes."""
        if self.kind == "replay":
            return f"replay:{Path(self.arg)}"
        if self.is_model:
            return self.text  # provider agents keep the spec as written
        return self.kind


def parse_agent(text: str) -> AgentRef:
    """``AgentRef`` for a spec, or ``AgentSpecError`` with one line saying what to write."""
    if not isinstance(text, str):
        raise AgentSpecError(f"the agent must be a spec string such as random (got {text!r})")
    head, sep, rest = text.partition(":")
    kind = head.strip().lower()
    k = KIND_BY_NAME.get(kind)
    if k is None or (k.arg is None and rest):
        raise AgentSpecError(f"unknown agent {text!r}: use random, replay:PATH, human, "
                             f"or {'/'.join(f'{p}:' for p in PROVIDER_KINDS)}MODEL")
    if k.arg is not None and not (rest.strip() if k.model else rest):
        if kind == "replay":
            raise AgentSpecError("replay needs a recording: --agent replay:PATH")
        raise AgentSpecError(f"{kind} needs a model name: --agent {kind}:MODEL")
    return AgentRef(kind, rest, text)


def is_model(text: str) -> bool:
    """Whether a spec names a provider model (False for anything unparseable)."""
    return text.partition(":")[0].strip().lower() in PROVIDER_KINDS
