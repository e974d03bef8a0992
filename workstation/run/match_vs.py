"""`workstation play --game G --vs SPEC`: the checked match a person plays against an agent (or a person)."""

from __future__ import annotations

import argparse
from typing import Any

from workstation.base.errors import UserError
from workstation.run.match_args import match_spec


def play_vs(a: argparse.Namespace) -> dict[str, Any]:
    """`workstation play --game G --vs SPEC [--side 1|2]`: the checked match for the TUI's match screen."""
    from workstation.run.match_players import check_players
    from workstation.run.match_start import prepare_match

    if a.side not in (1, 2):
        raise UserError(f"--side {a.side}: there are sides 1 and 2; pick the one you play")
    from workstation.run.agents import AgentSpecError, parse_agent

    try:
        two_people = parse_agent(a.vs).kind == "human"
    except AgentSpecError as e:
        raise UserError(f"--vs: {e}") from None
    # person 0: both sides are people, on one keyboard. They play paused whatever --mode says (play's default is
    # realtime): a terminal repeats only the key pressed last, so two people holding keys would cut each other off.
    specs = ("human", "human") if two_people else ("human", a.vs) if a.side == 1 else (a.vs, "human")
    check_players(specs, window=two_people, person_ok=True)
    if a.window:
        raise UserError("--window with --vs: the match plays in the terminal for now; leave --window out")
    spec = match_spec(a, specs[0], specs[1], a.seed)
    prep = prepare_match(spec, plan_source=lambda ctx: None, person_ok=True)  # every check, nothing written
    for agent in prep.agents:
        agent.close()
    return {"spec": spec, "person": 0 if two_people else a.side, "mode": "paused" if two_people else a.mode or "paused",
            "pace": a.pace or "paper"}
