"""Agent specs (``openai:gpt-5.2``) and the options every provider agent takes.

A spec names the wire API and the model; ``ProviderOptions`` carries what the
command line sets (``--base-url``, ``--effort``, ...). Keys come only from the
environment. Every user mistake here raises ``ProviderConfigError`` with one
line that says what is wrong and what to do.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, fields
from typing import Any

from workstation.base.errors import FieldedError

# provider -> what it speaks
PROVIDERS = {
    "openai": "OpenAI Responses API",
    "compat": "OpenAI-compatible Chat Completions (vLLM, Ollama, llama.cpp, Together, ...)",
    "anthropic": "Anthropic Messages API",
    "gemini": "Google Gemini API (google-genai)",
}

# the one --effort knob, from no thinking at all to the most a provider offers
EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")

# environment variables holding each provider's key, in order of preference
KEY_VARS = {
    "openai": ("OPENAI_API_KEY",),
    "compat": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
}

COMPAT_DUMMY_KEY = "not-needed"  # local servers ignore the key, the SDK wants one


class ProviderConfigError(FieldedError, ValueError):
    """A bad spec, option or missing key: one line saying what to fix.

    ``field`` names the run setting at fault (``"effort"``, ``"base_url"``; ``"agent"`` for the spec
    or its key), so forms and specs mark it without reading the message.
    """

    FIELD = "agent"


def base_url_problem(url: str | None) -> str | None:
    """Why ``url`` cannot be an SDK base URL (the SDKs would retry a scheme-less one until they give up)."""
    if url is None or not url.strip():
        return None  # no URL: the provider's own endpoint (compat says it needs one)
    from urllib.parse import urlsplit

    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return f"--base-url {url!r} is not an http:// or https:// URL; give one such as http://localhost:11434/v1"
    return None


@dataclass(frozen=True)
class ProviderOptions:
    base_url: str | None = None
    effort: str | None = None
    temperature: float | None = None
    max_output_tokens: int | None = None
    timeout: float = 60.0  # seconds, per attempt (connect and each read)
    max_attempts: int = 6  # tries per turn, the first included
    max_wait_s: float = 120.0  # the longest single wait between tries
    clock: str = "wall"  # what a reply's latency_s charges: wall (the call's time) or server (its reported time)

    def __post_init__(self) -> None:
        if self.effort is not None:
            object.__setattr__(self, "effort", self.effort.strip().lower())
        if self.effort is not None and self.effort not in EFFORTS:
            raise ProviderConfigError(f"unknown effort {self.effort!r}; use one of {', '.join(EFFORTS)}", "effort")
        if self.temperature is not None and not (0.0 <= self.temperature <= 2.0):
            raise ProviderConfigError(f"temperature {self.temperature} is out of range; use a value from 0 to 2", "temperature")
        if self.max_output_tokens is not None and self.max_output_tokens < 1:
            raise ProviderConfigError("max output tokens must be a positive number", "max_output_tokens")
        if not (self.timeout > 0 and math.isfinite(self.timeout)):
            raise ProviderConfigError("timeout must be a positive number of seconds", "timeout")
        why = base_url_problem(self.base_url)
        if why:
            raise ProviderConfigError(why, "base_url")
        if self.max_attempts < 1:
            raise ProviderConfigError("max attempts must be at least 1")
        if self.max_wait_s < 0:
            raise ProviderConfigError("max wait must not be negative")
        if self.clock not in ("wall", "server"):
            raise ProviderConfigError(f"unknown clock {self.clock!r}; use wall or server", "clock")

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        if d["clock"] == "wall":  # written only for --clock latency:server: other manifests stay as they were
            del d["clock"]
        return d


def parse_spec(spec: str) -> tuple[str, str]:
    """``"anthropic:claude-sonnet-4-6"`` -> ``("anthropic", "claude-sonnet-4-6")``."""
    provider, sep, model = spec.partition(":")
    provider, model = provider.strip().lower(), model.strip()
    if not sep or provider not in PROVIDERS:
        raise ProviderConfigError(
            f"unknown agent spec {spec!r}; use PROVIDER:MODEL with PROVIDER one of {', '.join(PROVIDERS)}"
        )
    if not model:
        raise ProviderConfigError(f"agent spec {spec!r} names no model; write it as {provider}:MODEL")
    return provider, model


def api_key(provider: str) -> str:
    """The provider's key from the environment, or a clear error naming the variable."""
    names = KEY_VARS[provider]
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    if provider == "compat":
        return COMPAT_DUMMY_KEY
    wanted = " or ".join(names)
    raise ProviderConfigError(f"no API key for {provider}: set {wanted} in the environment")


def key_var(provider: str) -> str:
    """The variable a user should check when a key is refused."""
    names = KEY_VARS[provider]
    if provider == "gemini" and not os.environ.get("GEMINI_API_KEY") and os.environ.get("GOOGLE_API_KEY"):
        return "GOOGLE_API_KEY"
    return names[0]


def options_from_description(description: dict[str, Any]) -> ProviderOptions:
    """The options an agent ran with, from its ``describe()`` record (a run manifest's agent entry).

    Unknown keys are ignored, so older or newer manifests still load.
    """
    stored = description.get("options") or {}
    names = {f.name for f in fields(ProviderOptions)}
    return ProviderOptions(**{k: v for k, v in stored.items() if k in names})
