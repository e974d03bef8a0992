"""``--ray-address``, checked before a batch writes anything: a head that does not answer is one line, not a hang.

``ray.init(address=...)`` retries a GCS that is not there for about a minute per attempt while printing
Ray's own log lines; a TCP connect to the address answers in milliseconds (refused) or within
``CONNECT_S`` (nothing there). ``auto`` (the cluster started on this machine) is left to Ray, which
says at once when there is none (``ray_init_error``).
"""

from __future__ import annotations

import socket

from workstation.base.errors import UserError

CONNECT_S = 3.0
HINT = "start a head with `ray start --head` and pass the address it prints (host:6379), or auto on its machine"


def host_port(address: str) -> tuple[str, int] | None:
    """(host, port) of a ``host:port`` or ``ray://host:port`` address; None for ``auto``/``local``."""
    text = address.strip()
    if text in ("auto", "local"):
        return None
    rest = text.split("://", 1)[1] if "://" in text else text
    host, sep, port = rest.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UserError(f"--ray-address {address!r}: give the head's host:port (e.g. 10.0.0.5:6379, or ray://host:10001 "
                        "for Ray Client), or auto for the cluster started on this machine")
    return host, int(port)


def check_ray_address(address: str | None, timeout: float = CONNECT_S) -> None:
    """``UserError`` unless something accepts a TCP connection at ``address`` (None: a local Ray, nothing to check)."""
    if address is None:
        return
    where = host_port(address)
    if where is None:
        return
    try:
        with socket.create_connection(where, timeout=timeout):
            pass
    except OSError as e:
        why = f"nothing answered within {timeout:g} s" if isinstance(e, TimeoutError) else (e.strerror or str(e))
        raise UserError(f"--ray-address {address}: no Ray head there ({why}); {HINT}") from None


def ray_init_error(address: str | None, exc: BaseException) -> UserError:
    """One line for a ``ray.init`` that failed (no cluster for ``auto``, a version mismatch, ...)."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return UserError(f"--ray-address {address or '(a local Ray)'}: Ray could not connect ({first[:200]}); {HINT}")


__all__ = ["check_ray_address", "host_port", "ray_init_error"]
