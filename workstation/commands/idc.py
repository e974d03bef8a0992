"""``workstation idc``: improvement rounds (OmniGameArena's Improvement Dynamics Curve) on our runs and batches."""

from __future__ import annotations

import argparse
import re
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workstation.base.errors import UserError

if TYPE_CHECKING:
    from workstation.studies.idc.rounds import IdcConfig


def register(sub: Any) -> None:
    from workstation.run.options import PROTOCOL_CLI, RUN_SETTING, add_argument, add_model_arguments
    from workstation.studies.idc.rounds import MAX_CONCURRENCY, MAX_EPISODES, MAX_ROUNDS, MAX_TOOL_CALLS

    p = sub.add_parser("idc", help="improvement rounds: the model plays, reflects with tools, writes itself a skill",
                       description="""Round 0 plays K episodes with no skill; after each round a reflector studies its
                                   recordings with read-only tools and writes a skill the player gets next round. A
                                   round scoring below half the best (normalised against random play) makes the next
                                   round play the best skill. Episodes are batch runs under DIR/round_R/runs/;
                                   DIR/curve.json holds the curve. Running the same command again resumes. See
                                   docs/idc.md.""")
    p.add_argument("--game", metavar="GAME", help=RUN_SETTING["game"].help + " (required)")
    p.add_argument("--player", metavar="SPEC", help="the model that plays (openai:M, compat:M, ...; required)")
    p.add_argument("--reflector", metavar="SPEC", help="the model that reflects (default: the player's)")
    p.add_argument("--validator", metavar="SPEC", help="a judge model that checks each skill (optional; 5 "
                   "rejections keep the previous skill)")
    p.add_argument("--rounds", type=int, default=3, metavar="R", help=f"rounds after round 0, 1..{MAX_ROUNDS} (default 3)")
    p.add_argument("--episodes", type=int, default=5, metavar="K", help=f"episodes a round, 1..{MAX_EPISODES} (default 5)")
    p.add_argument("--out", metavar="DIR", help="the IDC's directory (resumed when it holds one; required)")
    p.add_argument("--view", metavar="DIR", help="open an IDC directory in the TUI: the curve, each round's skill, "
                   "diff, diagnosis and notebook, its episodes (nothing is played)")
    add_argument(p, RUN_SETTING["seed"], help="the first episode seed (default 0); every episode gets its own")
    p.add_argument("--concurrency", type=int, default=8, metavar="N", help=f"episodes at once, 1..{MAX_CONCURRENCY} (default 8)")
    p.add_argument("--tool-calls", type=int, default=30, metavar="N",
                   help=f"the reflector's tool calls a round, 1..{MAX_TOOL_CALLS} (default 30); without a skill by then the round keeps "
                   "the previous one")
    p.add_argument("--transfer", action="append", default=[], metavar="mode=M,difficulty=D",
                   help="after the last round, play the best skill and no skill on this held-out variant "
                   "(repeatable; `workstation games --variants` lists them)")
    g = p.add_argument_group("protocol (defaults = the paper, but noops:30 starts)")
    for s in PROTOCOL_CLI:
        add_argument(g, s, **({"default": "noops:30"} if s.name == "start" else {}))
    add_argument(g, RUN_SETTING["prompts"])
    add_model_arguments(p)
    p.set_defaults(func=run)


def parse_transfer(text: str, game: str) -> tuple[int | None, int | None]:
    """``mode=M,difficulty=D`` (either may be left out), checked against the game's ROM."""
    from workstation.game.clock import variant_problem

    values: dict[str, int] = {}
    for item in text.split(","):
        m = re.fullmatch(r"\s*(mode|difficulty)\s*=\s*(\d+)\s*", item)
        if not m or m.group(1) in values:
            raise UserError(f"--transfer {text!r}: write mode=M,difficulty=D (whole numbers; either may be left out)")
        values[m.group(1)] = int(m.group(2))
    mode, difficulty = values.get("mode"), values.get("difficulty")
    why = variant_problem(game, mode, difficulty)
    if why:
        raise UserError(f"--transfer {text}: {why.split(': ', 1)[1]}")
    return mode, difficulty


def make_config(a: argparse.Namespace) -> IdcConfig:
    from workstation.run.agents.registry import AgentSpecError, parse_agent
    from workstation.run.options import check_out, preflight, spec_from_args
    from workstation.studies.idc.rounds import IdcConfig

    for flag, spec in (("--player", a.player), ("--reflector", a.reflector), ("--validator", a.validator)):
        if spec is None:
            continue
        try:
            ref = parse_agent(spec)
        except AgentSpecError as e:
            raise UserError(f"{flag}: {e}") from None
        if not ref.is_model:
            raise UserError(f"{flag} {spec}: improvement rounds need a model (openai:M, compat:M, anthropic:M, "
                            "gemini:M)")
    out = Path(a.out)
    check_out(out)
    base = spec_from_args(a, agent=a.player)
    base = base.with_values(out=str(out))
    preflight(base)
    transfer = [parse_transfer(t, base.game) for t in a.transfer]
    if len(set(transfer)) != len(transfer):
        raise UserError("--transfer names one variant twice; give each once")
    cfg = IdcConfig(base=base, reflector=a.reflector or a.player, out=out, rounds=a.rounds, episodes=a.episodes,
                    validator=a.validator, concurrency=a.concurrency, max_cost=a.max_cost, tool_calls=a.tool_calls,
                    transfer=transfer)
    _check_keys(cfg)
    return cfg


def _check_keys(cfg: IdcConfig) -> None:
    from workstation.run.providers import ProviderConfigError, ProviderOptions
    from workstation.run.providers.agent import make_adapter
    from workstation.run.providers.spec import api_key

    for flag, spec in (("--player", cfg.base.agent), ("--reflector", cfg.reflector), ("--validator", cfg.validator)):
        if spec is None:
            continue
        try:
            api_key(make_adapter(spec, cfg.base.provider_options or ProviderOptions()).provider)
        except ProviderConfigError as e:
            raise UserError(f"{flag}: {e}") from None


def run(a: argparse.Namespace) -> int:
    from workstation.studies.idc.rounds import Idc

    if a.view:
        from workstation.run.launch import IdcLaunch
        from workstation.studies.idc.curve import load

        if load(Path(a.view)) is None:
            raise UserError(f"--view {a.view}: no IDC there (curve.json); run `workstation idc ... --out DIR` first")
        return int(a.open_tui(IdcLaunch(a.view)))
    missing = [f"--{n}" for n in ("game", "player", "out") if not getattr(a, n)]
    if missing:
        raise UserError(f"idc needs {', '.join(missing)} (or --view DIR to look at one)")
    cfg = make_config(a)
    idc = Idc(cfg, log=lambda line: print(line, flush=True))
    previous: dict[signal.Signals, Any] = {}

    def on_signal(signum: int, frame: object) -> None:
        idc.request_stop(signal.Signals(signum).name)

    for sig in (signal.SIGINT, signal.SIGTERM):
        previous[sig] = signal.signal(sig, on_signal)
    try:
        code = idc.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    print(f"curve: {cfg.out / 'curve.json'}", file=sys.stdout)
    return code


__all__ = ["make_config", "parse_transfer", "register", "run"]
