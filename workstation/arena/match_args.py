"""A match's spec from command-line arguments: `match`, `arena` and `play --vs` share it."""

from __future__ import annotations

import argparse
from typing import Any

from workstation.errors import UserError


def protocol_from_args(a: argparse.Namespace) -> Any:
    """The protocol the flags describe (ProtocolError names the flag)."""
    from workstation.game.protocol import SETTINGS, Protocol, StartOption

    values: dict[str, Any] = {}
    for s in SETTINGS:
        if not s.cli:
            continue
        value = getattr(a, s.name, None)
        if s.name == "feedback" and hasattr(a, "no_feedback"):
            value = not a.no_feedback
        if value is None:
            continue
        if s.type is StartOption and isinstance(value, str):
            value = StartOption.parse(value)
        values[s.name] = value
    return Protocol(**values)  # ProtocolError names the flag


def provider_options(a: argparse.Namespace, spec: str) -> Any:
    from workstation.options import provider_options_from_args

    return provider_options_from_args(argparse.Namespace(**{**vars(a), "agent": spec}))


def match_spec(a: argparse.Namespace, p1: str, p2: str, seed: int) -> Any:
    from workstation.arena.start import MatchSpec
    from workstation.game.twoplayer import (
        TwoPlayerGameError,
        get_two_player_game,
        variant_problem,
    )
    from workstation.options import check_out

    try:
        tp = get_two_player_game(a.game)
    except TwoPlayerGameError as e:
        raise UserError(str(e)) from None
    protocol = protocol_from_args(a)
    why = variant_problem(tp, protocol)  # before anything is written
    if why:
        raise UserError(why)
    if protocol.guide not in ("full", "short"):  # the instruction levels are written for one player's games
        raise UserError(f"--guide {protocol.guide}: two-player games have the guides full and short only "
                        "(prompts/twoplayer/); use --guide full or short")
    if seed < 0:
        raise UserError(f"--seed must be 0 or more (got {seed})")
    from workstation.agents.registry import is_model
    from workstation.options import GENERATION_KEYS, TRANSPORT_KEYS

    if not (is_model(p1) or is_model(p2)):
        given = next((k for k in (*GENERATION_KEYS, *TRANSPORT_KEYS) if getattr(a, k, None) is not None), None)
        if given:
            flag = "--" + given.replace("_", "-")
            raise UserError(f"{flag} applies to model agents, and neither side is one (e.g. --p2 openai:MODEL)")
    max_cost = getattr(a, "max_cost", None)  # `play --vs` has none
    if max_cost is not None and not max_cost > 0:
        raise UserError(f"--max-cost must be more than 0 dollars (got {max_cost:g})")
    check_out(a.out, getattr(a, "cmd", None) or "match")
    return MatchSpec(a.game, p1, p2, seed, protocol, a.out, a.prompts, max_cost,
                     (provider_options(a, p1), provider_options(a, p2)))
