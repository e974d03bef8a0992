"""Real models behind the Agent protocol, through the official SDKs.

Entry points: ``make_provider_agent(spec, ProviderOptions(...))`` for a run,
``describe_request(prompt, spec, options)`` for the redacted payload of a turn,
``cost_usd(usage, provider, model)`` for prices. Specs: ``openai:MODEL``
(Responses API), ``compat:MODEL`` (Chat Completions for vLLM, Ollama, ...),
``anthropic:MODEL`` (Messages API), ``gemini:MODEL`` (google-genai).
"""

from __future__ import annotations

from workstation.run.providers.agent import ProviderAgent, make_provider_agent
from workstation.run.providers.payload import describe_request
from workstation.run.providers.pricing import PriceTable, cost_usd, default_prices, load_prices
from workstation.run.providers.spec import (
                                        EFFORTS,
                                        PROVIDERS,
                                        ProviderConfigError,
                                        ProviderOptions,
                                        options_from_description,
                                        parse_spec,
)

__all__ = [
    "EFFORTS", "PROVIDERS", "PriceTable", "ProviderAgent", "ProviderConfigError", "ProviderOptions",
    "cost_usd", "default_prices", "describe_request", "load_prices", "make_provider_agent",
    "options_from_description", "parse_spec",
]
