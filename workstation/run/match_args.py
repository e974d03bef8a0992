"""A match's spec from command-line arguments: `match`, `arena` and `play --vs` share it."""

from __future__ import annotations

import argparse
from typing import Any

from workstation.base.errors import UserError
from workstation.game.seed import check_seed


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


def side_base_url(a: argparse.Namespace, side: int) -> str | None:
    """Side ``side``'s base URL: ``p1_base_url`` / ``p2_base_url`` when set, else the shared ``base_url``."""
    own: str | None = getattr(a, f"p{side}_base_url", None)
    shared: str | None = getattr(a, "base_url", None)
    return own if own is not None else shared


def provider_options(a: argparse.Namespace, spec: str, side: int | None = None) -> Any:
    """A side's provider options (its own base URL when ``side`` is given)."""
    from workstation.run.options import provider_options_from_args

    url = {} if side is None else {"base_url": side_base_url(a, side)}
    return provider_options_from_args(argparse.Namespace(**{**vars(a), "agent": spec, **url}))


def check_out_not_inside_inputs(out: str, specs: tuple[str, str], prompts: str | None) -> None:
    """``--out`` is neither a replayed recording nor the prompt pack, nor anywhere inside one."""
    from pathlib import Path

    inputs: list[tuple[str, str]] = [(f"the replayed recording {spec}", spec.partition(":")[2])
                                     for spec in specs if spec.startswith("replay:")]
    if prompts:
        inputs.append((f"--prompts {prompts}", prompts))
    target = Path(out).resolve()
    for flag, path in inputs:
        root = Path(path).resolve()
        if target == root or root in target.parents:
            raise UserError(f"--out {out} is inside {flag}, an input; choose a directory outside it", field="out")


def match_spec(a: argparse.Namespace, p1: str, p2: str, seed: int) -> Any:
    from workstation.game.twoplayer import TwoPlayerGameError, get_two_player_game, variant_problem
    from workstation.run.match_start import MatchSpec
    from workstation.run.options import check_out

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
    check_seed(seed)
    from workstation.run.agents.registry import is_model
    from workstation.run.options import GENERATION_KEYS, TRANSPORT_KEYS

    if not (is_model(p1) or is_model(p2)):
        given = next((k for k in (*GENERATION_KEYS, *TRANSPORT_KEYS) if getattr(a, k, None) is not None), None)
        if given:
            flag = "--" + given.replace("_", "-")
            raise UserError(f"{flag} applies to model agents, and neither side is one (e.g. --p2 openai:MODEL)")
    for side, spec in ((1, p1), (2, p2)):
        url = getattr(a, f"p{side}_base_url", None)
        if url is None:
            continue
        from workstation.run.providers.spec import base_url_problem

        empty = "--base-url is empty; give a URL such as http://localhost:11434/v1"
        why = base_url_problem(url) if url.strip() else empty
        if why:
            raise UserError(why.replace("--base-url", f"--p{side}-base-url", 1), field=f"p{side}_base_url")
        if not is_model(spec):
            raise UserError(f"--p{side}-base-url applies to a model agent, and side {side} is {spec}; "
                            f"leave it out or make --p{side} a model (e.g. compat:MODEL)", field=f"p{side}_base_url")
    max_cost = getattr(a, "max_cost", None)  # `play --vs` has none
    if max_cost is not None and not max_cost > 0:
        raise UserError(f"--max-cost must be more than 0 dollars (got {max_cost:g})", field="max_cost")
    check_out_not_inside_inputs(a.out, (p1, p2), getattr(a, "prompts", None))
    command = getattr(a, "cmd", None) or "match"
    check_out(a.out, command)
    from workstation.store.local_paths import refuse_inside_artifacts

    # an arena resumes in its own directory
    refuse_inside_artifacts(a.out, "--out", command, own="arena" if command == "arena" else None,
                            holds_recordings=True)
    return MatchSpec(a.game, p1, p2, seed, protocol, a.out, a.prompts, max_cost,
                     (provider_options(a, p1, 1), provider_options(a, p2, 2)))
