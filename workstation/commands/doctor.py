"""``workstation doctor --base-url URL [--model M] [protocol flags]``: can a ``compat:`` run go there?

One line per check (``ok`` / ``warn`` / ``FAIL``, and what to change when it fails); exit 0 when a run
can go, 2 when it cannot. A bad URL or a server that is not there: one line, exit 2, at once.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from workstation.base.errors import UserError

EXIT_CANNOT_GO = 2


def register(sub: Any) -> None:
    from workstation.run.options import RUN_SETTING, add_argument, add_protocol_arguments

    p = sub.add_parser("doctor", help="check an OpenAI-compatible model server (vLLM, llama.cpp, Ollama) before a run",
                       description="""Check a model server before a compat: run: reachable, the model served, images
                                   accepted, as many images in one request as a turn of these settings carries, the
                                   context window against the longest prompt, streaming, usage, reasoning output and
                                   server timings. One line per check; exit 0 when a run can go, 2 when it cannot. The
                                   protocol flags are those of `workstation run` (the longest prompt depends on them).""")
    add_argument(p, RUN_SETTING["base_url"], required=True)
    p.add_argument("--model", default=None, metavar="M", help="the model name the server serves (default: the one "
                   "it lists)")
    add_argument(p, RUN_SETTING["game"], default="breakout", help="the game whose prompt is measured (default breakout)")
    add_argument(p, RUN_SETTING["max_output_tokens"])
    add_argument(p, RUN_SETTING["timeout"])
    add_protocol_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from workstation.engine.promptpack import load_pack
    from workstation.run.options import spec_from_args
    from workstation.run.providers.spec import base_url_problem
    from workstation.studies.doctor.checks import run_checks

    why = base_url_problem(args.base_url)  # before anything else: one line
    if why:
        raise UserError(why, "base_url")
    spec = spec_from_args(args, agent=f"compat:{args.model or 'doctor'}")
    pack = load_pack(spec.prompts)
    from workstation.game.games import get_game

    game = pack.game(get_game(spec.game))

    def emit(check: Any) -> None:
        sys.stdout.write(check.line() + "\n")
        sys.stdout.flush()

    ok, name = run_checks(args.base_url, args.model, game, spec.protocol, pack, spec.generation.max_output_tokens,
                    spec.transport.timeout or 60.0, emit)
    if not ok:
        sys.stdout.write("doctor: a run cannot go yet: change what the FAIL lines say, then run doctor again\n")
        return EXIT_CANNOT_GO
    sys.stdout.write(f"doctor: a run can go: workstation run --agent compat:{name} --base-url {args.base_url} "
                     "(with the same protocol flags)\n")
    return 0
