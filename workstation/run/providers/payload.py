"""The exact request an adapter sends for a prompt, fit to show or store.

``describe_request`` runs the same body builder as the real call, with every
image replaced by ``{"png_bytes": N, "sha256": "..."}`` and credential headers
blanked. It needs no key and opens no connection.
"""

from __future__ import annotations

from typing import Any

from workstation.engine.prompt import Prompt
from workstation.run.providers.adapter import redacted_image
from workstation.run.providers.agent import make_adapter
from workstation.run.providers.redact import redact_headers
from workstation.run.providers.spec import ProviderOptions


def describe_request(prompt: Prompt, spec: str, options: ProviderOptions | None = None) -> dict[str, Any]:
    """``{"spec", "provider", "model", "method", "url", "headers", "body"}`` for this prompt."""
    adapter = make_adapter(spec, options or ProviderOptions())
    url, headers = adapter.endpoint()
    return {
        "spec": spec,
        "provider": adapter.provider,
        "model": adapter.model,
        "method": "POST",
        "url": url,
        "headers": redact_headers(headers),
        "body": adapter.request(prompt, image=redacted_image),
    }
