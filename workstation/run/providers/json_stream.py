"""The SDK's stream of server-sent events as the JSON the server sent, read to the end of the message.

Both OpenAI adapters (Chat Completions for ``compat:``, Responses for ``openai:``) post their
JSON-ready body through the SDK client's own request path (auth, headers, timeout, status
errors) and read the reply through the SDK's own ``Stream`` (SSE decoding, error events, the
translation of transport errors), with two changes that count at hundreds of calls in flight
(bench/call_profile.py, bench/batch_throughput.py):

- events stay plain dicts (``Stream[object]``): the typed model of every chunk cost ~7 % of a
  batch's CPU, and the adapters read a few fields;
- a Chat Completions stream is read to its end once ``[DONE]`` arrives: the SDK stopped there and
  closed a response whose HTTP message was not known to be complete, which closes the connection,
  so every call opened a new TCP (or TLS) connection. Read to the end, the connection goes back to
  the client's pool for the next call.
"""

from __future__ import annotations

from typing import Any


class _DrainAfterDone:
    """An SSE decoder that, once ``[DONE]`` arrives, reads what is left of the body: the HTTP message's
    end (a chunked body's last chunk), normally already received. At most a few more pieces are read,
    and a failure there is ignored: the reply is complete already, only the connection is lost."""

    MAX_PIECES = 8

    def __init__(self, decoder: Any) -> None:
        self.decoder = decoder

    def iter_bytes(self, raw: Any) -> Any:
        raw = iter(raw)
        for sse in self.decoder.iter_bytes(raw):
            if sse.data.startswith("[DONE]"):
                try:
                    for _ in zip(range(self.MAX_PIECES), raw):
                        pass
                except Exception:  # the reply is whole; the SDK closes the response
                    pass
            yield sse


_STREAM: type | None = None


def json_stream() -> type:
    """The ``stream_cls`` for ``client.post(..., cast_to=object, stream=True)``."""
    global _STREAM
    if _STREAM is None:
        from openai import Stream

        class JsonStream(Stream[object]):
            def __init__(self, **kwargs: Any) -> None:
                super().__init__(**kwargs)
                self._decoder = _DrainAfterDone(self._decoder)  # type: ignore[assignment]

        _STREAM = JsonStream
    return _STREAM


def get(d: Any, key: str) -> Any:
    """``d[key]`` of a JSON object, None for anything else (a server may send null or leave fields out)."""
    return d.get(key) if isinstance(d, dict) else None


__all__ = ["get", "json_stream"]
