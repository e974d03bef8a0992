"""`workstation session`: a human baseline session (being written)."""

from __future__ import annotations

from workstation.errors import UserError


def register(sub) -> None:
    p = sub.add_parser("session", help="run a human baseline session (TUI)")
    p.set_defaults(func=run)


def run(args) -> int:
    raise UserError("session is not ready yet")
