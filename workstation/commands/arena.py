"""`workstation match` (one two-player match, headless) and `workstation arena` (every pairing)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from workstation.base.errors import UserError
from workstation.run.match_args import match_spec, protocol_from_args, provider_options  # noqa: F401


def _two_player_help() -> str:
    from workstation.game.twoplayer import two_player_keys

    return f"a two-player game: {two_player_keys()}"


def _common(p: argparse.ArgumentParser, arena: bool = False) -> None:
    from workstation.run.options import MODEL_CLI, RUN_SETTING, add_argument, add_protocol_arguments

    p.add_argument("--game", required=True, metavar="GAME", help=_two_player_help())
    add_argument(p, RUN_SETTING["out"])
    add_protocol_arguments(p)
    g = p.add_argument_group("model agents (openai:, compat:, anthropic:, gemini:)")
    for name in MODEL_CLI:
        if name == "base_url" and arena:  # one URL per player: SPEC=URL, repeatable; a bare URL serves the rest
            g.add_argument("--base-url", dest="base_url", action="append", default=None, metavar="[SPEC=]URL",
                           help="SDK base URL of a model player: SPEC=URL for that player (repeatable, e.g. "
                           "--base-url compat:a=http://localhost:8000/v1), or a bare URL for every model "
                           "player not named")
            continue
        add_argument(g, RUN_SETTING[name])
        if name == "base_url":
            for side in (1, 2):
                g.add_argument(f"--p{side}-base-url", dest=f"p{side}_base_url", default=None, metavar="URL",
                               help=f"side {side}'s own SDK base URL (default: --base-url)")


def register(sub: Any) -> None:
    from workstation.run.agents.registry import SPEC_HELP

    m = sub.add_parser("match", help="play one two-player match headless (model against model, or baselines)",
                       description="Play one two-player match: both plans collected each turn, then played in "
                       "lockstep (a shorter plan padded with NOOP). Prints the recording's path and the result.")
    _common(m)
    m.add_argument("--p1", required=True, metavar="SPEC", help=f"side 1's agent: {SPEC_HELP}")
    m.add_argument("--p2", required=True, metavar="SPEC", help="side 2's agent (the same kinds)")
    m.add_argument("--seed", type=int, default=0, metavar="N", help="match seed; each side's agent is seeded "
                   "from it and its side (default 0)")
    m.add_argument("--quiet", action="store_true", help="print only the recording path")
    m.set_defaults(func=run_match)

    a = sub.add_parser("arena", help="every pairing of several players in a two-player game, both sides",
                       description="Play every pairing of the players on both sides for N seeds (resumable: a "
                       "finished match is not played again), then print the win-rate table and Bradley-Terry "
                       "ratings. --report only reports what DIR holds.")
    _common(a, arena=True)
    a.add_argument("--players", required=False, metavar="A,B,C", help="comma-separated agent specs (2 or more)")
    a.add_argument("--seeds", type=int, default=1, metavar="N", help="seeds 0..N-1 per pairing and side (default 1)")
    a.add_argument("--max-matches", type=int, default=None, metavar="N", help="play at most N new matches, then stop")
    a.add_argument("--workers", type=int, default=1, metavar="N", help="matches at once (default 1)")
    a.add_argument("--report", action="store_true", help="play nothing: report the matches DIR holds")
    a.add_argument("--bootstrap", type=int, default=1000, metavar="N", help="bootstrap resamples for the "
                   "rating intervals (default 1000)")
    a.add_argument("--json", action="store_true", help="print the report as JSON")
    a.add_argument("--yes", action="store_true", help="start even if the cost guard's estimate is above --max-cost")
    a.set_defaults(func=run_arena)


def run_match(a: argparse.Namespace) -> int:
    from workstation.run.match_players import check_players
    from workstation.run.match_start import start_match
    from workstation.store.records import Summary

    check_players((a.p1, a.p2))
    spec = match_spec(a, a.p1, a.p2, a.seed)
    engine = start_match(spec)
    try:
        summary = engine.run()
    finally:
        engine.close()
    path = engine.writer.path if engine.writer else None
    print(path)
    if not a.quiet:
        print(result_line(summary))
    outcome = Summary.from_json(summary)  # the match's summary.json, typed
    if outcome.stopped:
        sys.stderr.write(f"workstation: match stopped: {outcome.stopped}\n")
        return 1
    return 0


def result_line(s: dict[str, Any]) -> str:
    p1, p2 = s["players"]
    scores = f"side 1 ({p1['agent']}) {p1['score']:g}, side 2 ({p2['agent']}) {p2['score']:g}"
    if s.get("stopped") or not s.get("complete", True):
        tail = f"stopped before the end ({s.get('stopped') or 'incomplete'}): no result"  # not a draw
    else:
        tail = f"team {s['team_score']:g}" if "team_score" in s else s["result"]
    return f"{s['game']} seed {s['seed']}: {scores}; {tail}; {s['frames']} frames, {s['turns']} turns"


def run_arena(a: argparse.Namespace) -> int:
    from workstation.studies.arena.arena import check_arena_numbers, play_arena
    from workstation.studies.arena.report import arena_report, render_report

    check_arena_numbers(a)  # before anything is played or written
    if not a.report:
        if not a.players:
            raise UserError("--players is needed to play: name two or more agents, e.g. --players random,openai:M")
        players = [s.strip() for s in a.players.split(",") if s.strip()]
        play_arena(a, players)
    report = arena_report(a.out, a.game, a.bootstrap)
    print(json.dumps(report, indent=1) if a.json else render_report(report))
    return 0
