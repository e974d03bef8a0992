"""`workstation run` (one recorded run, headless) and `workstation games` (the 21 games).

Also the pieces the other run-shaped commands share: a run's own arguments, the checked spec of
such a command line, and a recording argument (`recording_command`, `screen_command`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workstation.base.errors import UserError

if TYPE_CHECKING:
    from workstation.run.options import RunSpec
    from workstation.store.recording import Recording

RECORDING_HELP = "a recording directory (one run: manifest.json, turns.jsonl, frames, summary.json)"


def run_arguments(p: argparse.ArgumentParser, agent: bool = True) -> None:
    """The run's own arguments, generated from the spec's declarations (workstation.run.options)."""
    from workstation.run.options import RUN_SETTING, add_argument

    add_argument(p, RUN_SETTING["game"], required=True)
    if agent:
        add_argument(p, RUN_SETTING["agent"])
    add_argument(p, RUN_SETTING["seed"])
    add_argument(p, RUN_SETTING["out"])


def checked_spec(a: argparse.Namespace, agent: str | None = None) -> RunSpec:
    """The checked run spec of a run/watch/play command line (SpecError names the flag; nothing written)."""
    from workstation.run.options import preflight, spec_from_args

    spec = spec_from_args(a, agent=agent)
    preflight(spec, command=getattr(a, "cmd", None))
    from workstation.store.local_paths import refuse_inside_artifacts

    refuse_inside_artifacts(spec.out, "--out", getattr(a, "cmd", None) or "run", holds_recordings=True)  # a batch's runs/, a study...
    return spec


def open_recording(path: str) -> Recording:
    """The recording at ``path`` (a missing or unreadable one is one line, before anything else)."""
    from workstation.store.recording import Recording

    return Recording(Path(path))


def register(sub: Any) -> None:
    from workstation.run.options import add_experience_arguments, add_model_arguments, add_protocol_arguments

    r = sub.add_parser("run", help="play one recorded run headless", description="Play one run without the TUI "
                       "and record it; prints the recording's path and a summary line (exit 0, or 1 if it stopped).")
    run_arguments(r)
    r.add_argument("--quiet", action="store_true", help="print only the recording path (no progress on stderr, "
                   "no summary line)")
    add_protocol_arguments(r)
    add_model_arguments(r)
    add_experience_arguments(r)
    r.add_argument("--max-failed-turns", type=int, default=3, metavar="N", help="stop the run after N turns in "
                   "a row lost to provider errors (no usable reply after every retry; default 3, 0 = never)")
    r.set_defaults(func=_run)

    gm = sub.add_parser("games", help="list the 21 games", description="List the 21 games: key, ALE name, genre, "
                   "skill, actions, warm-up and frame size.")
    gm.add_argument("--variants", action="store_true", help="also list each game's ALE modes and difficulties "
                    "(for --game-mode / --game-difficulty; reads every ROM, about 2 s)")
    gm.set_defaults(func=_games)


def _games(a: argparse.Namespace) -> int:
    from workstation.base.text_table import text_table
    from workstation.game.games import GAMES

    if a.variants:
        from workstation.game.clock import game_variants

        table: list[tuple[str, str, str]] = [("key", "modes", "difficulties")]
        for key in GAMES:
            modes, difficulties = game_variants(key)
            table.append((key, " ".join(map(str, modes)), " ".join(map(str, difficulties))))
        print("\n".join(text_table(table, rules=[0])))
        print("\nWithout --game-mode / --game-difficulty a game plays its default variant (the paper's); "
              "a grid's [protocol] table sets them as mode / difficulty.")
        return 0
    rows = [("key", "ALE name", "genre", "primary skill", "actions", "warm-up", "HxW", "in the paper")]
    for g in GAMES.values():
        rows.append((g.key, g.ale_name, g.genre, g.skill, str(len(g.allowed)), f"{g.warmup_seconds} s",
                     f"{g.height}x160", "yes" if g.in_paper else "no (not in the paper's 20)"))
    print("\n".join(text_table(rows, rules=[0])))
    print("\nSticky actions are off (the paper): every seed starts from the same state; use --start noops:30 or sticky:0.25 for seeds that differ.")
    return 0


def _run(a: argparse.Namespace) -> int:
    from workstation.run.drive import drive
    from workstation.run.start import start_run
    from workstation.store.series import summary_line

    spec = checked_spec(a)
    if a.max_failed_turns < 0:
        raise UserError(f"--max-failed-turns must be 0 (never stop) or more (got {a.max_failed_turns})")
    engine = start_run(spec, rewindable=False, max_failed_turns=a.max_failed_turns)
    if engine.replay_note:
        sys.stderr.write(f"workstation: warning: {engine.replay_note} (recorded in manifest.json)\n")
    if not a.quiet:
        from workstation.run.progress import RunProgress

        engine.observers.append(RunProgress(engine))
    try:
        summary = drive(engine)
    except KeyboardInterrupt:  # run() has already closed the recording as "interrupted"
        print(engine.recording_path)
        raise
    finally:
        engine.close()
    print(engine.recording_path)
    if summary is None:  # drive returns only when the run has ended; an ended run has its summary
        raise RuntimeError("the run ended without a summary")
    if not a.quiet:
        print(summary_line(summary.to_json()))
    idled = getattr(engine.agent, "idled", 0)
    if idled:  # a replay under a longer budget than its source's: say it, the recording says it turn by turn
        sys.stderr.write(f"workstation: note: the replayed recording had {getattr(engine.agent, 'source_turns', '?')} turns; the "
                         f"{idled} turn{'s' if idled != 1 else ''} after them played noop\n")
    if summary.stopped and not summary.complete:
        sys.stderr.write(f"workstation: run stopped: {summary.stopped}\n")
        return 1
    if summary.turns and (summary.failed_turns or 0) >= summary.turns:
        sys.stderr.write(f"workstation: the run did not really play: all {summary.turns} turns were lost "
                         "to provider errors (see `workstation info`)\n")
        return 1
    return 0
