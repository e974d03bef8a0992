"""`workstation session --participant ID --games G1,G2 --seeds 0,1,2 ...`: a human baseline session (TUI)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workstation.base.errors import UserError

if TYPE_CHECKING:
    from workstation.studies.session import Settings


def register(sub: Any) -> None:
    from workstation.game.games import MODES, PACES
    from workstation.run.options import add_protocol_arguments
    from workstation.studies.session import ORDERS, SESSIONS

    p = sub.add_parser("session", help="run a human baseline session: instructions, practice, runs per game (TUI)",
                       description="""A human baseline session, as a lab runs it: for each game its instructions (the
                                   guide as the model gets it, the keys, the pace), optional practice runs (recorded,
                                   marked practice), a countdown, the run and its result, then the next. The session
                                   directory holds every run, session.json (rewritten after each step) and results.csv
                                   (setting human:ID, for `workstation report`). Running the same command again
                                   resumes at the first run not yet complete.""")
    p.add_argument("--participant", required=True, metavar="ID", help="the participant's id, kept as given")
    p.add_argument("--games", required=True, metavar="G1,G2,...", help="game keys, comma-separated")
    p.add_argument("--seeds", required=True, metavar="S1,S2,...", help="one scored run per seed and game, e.g. 0,1,2")
    p.add_argument("--practice", type=int, default=0, metavar="N", help="practice runs per game before the scored "
                   "ones (default 0; seeds 1000, 1001, ...)")
    p.add_argument("--mode", choices=MODES, default="realtime", help="realtime (the game never waits) or paused "
                   "(the model's protocol: the game waits for each plan); default realtime")
    p.add_argument("--pace", choices=tuple(PACES), default="paper", help="paper (30 fps: 900 frames in 30 s) or native "
                   "(the Atari's 60 fps); default paper")
    p.add_argument("--order", choices=ORDERS, default="fixed", help="fixed (as given) or shuffled (games, and seeds "
                   "within each game, in an order seeded by the participant id); default fixed")
    p.add_argument("--countdown", type=int, default=3, metavar="S", help="seconds of countdown before each run "
                   "(default 3)")
    p.add_argument("--out", default=None, metavar="DIR", help=f"the session directory (default {SESSIONS}/ID)")
    add_protocol_arguments(p)
    p.set_defaults(func=run)


def settings_from_args(a: argparse.Namespace) -> Settings:
    """Checked session settings (one ``UserError`` line on bad input)."""
    from workstation.run.options import spec_from_args
    from workstation.studies.session import make_settings, parse_games

    games = parse_games(a.games)
    ns = argparse.Namespace(**{k: v for k, v in vars(a).items() if k not in ("out", "mode", "pace", "func")})
    ns.game, ns.agent, ns.seed = games[0], "human", 0
    spec = spec_from_args(ns, agent="human")  # the protocol options, checked as any run's are
    from dataclasses import replace

    from workstation.run.options import preflight

    for game in games:  # the game variant and the prompt pack, as `run` checks them (nothing written; the
        preflight(replace(spec, game=game), out=False)  # session's own directory is checked by run())
    return make_settings(a.participant, a.games, a.seeds, a.practice, a.mode, a.pace, a.order, spec.protocol,
                         spec.prompts)


def run(args: argparse.Namespace) -> int:
    from workstation.studies.session import SESSIONS, Session, slug

    if args.countdown < 0:
        raise UserError(f"--countdown must be 0 or more seconds (got {args.countdown})")
    settings = settings_from_args(args)
    out = Path(args.out) if args.out else Path(SESSIONS) / slug(settings.participant)
    from workstation.run.launch import require_terminal
    from workstation.run.options import check_out

    check_out(out, "session")  # the session directory can be made where it is asked for
    from workstation.store.local_paths import refuse_inside_artifacts
    from workstation.studies.session import SEAL_KIND

    refuse_inside_artifacts(out, "--out", "the session", own=SEAL_KIND)  # a batch, an IDC, a QA set...: refused
    if settings.prompts:  # never written inside the prompt pack it reads
        from workstation.store.local_paths import refuse_inside_inputs

        refuse_inside_inputs(out, [settings.prompts], "--out", "the session")
    require_terminal("session")  # before session.json is written: nothing is left behind
    session = Session.open(out, settings, countdown=args.countdown)
    if session.complete:
        print(f"the session in {out} is already complete; results in {out / 'results.csv'}")
        return 0
    from workstation.run.launch import SessionLaunch

    code = args.open_tui(SessionLaunch(session))
    print(f"session {out}: {session.progress_text()}" + ("" if session.complete else
                                                          "; run the same command again to resume"))
    return int(code)

