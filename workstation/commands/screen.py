"""`workstation watch`, `play` and `open`: the commands that open a screen of the TUI.

Each builds a ``Launch`` (workstation.run.launch) and hands it to ``args.open_tui``, the one door the CLI
gives every command; `play --vs` is a two-player match (workstation.studies.arena), so this module stands in
the studies layer.
"""

from __future__ import annotations

import argparse
from typing import Any

from workstation.commands.run import RECORDING_HELP, checked_spec, open_recording, run_arguments
from workstation.run.launch import MatchLaunch, OpenLaunch, PlayLaunch, WatchLaunch


def register(sub: Any) -> None:
    from workstation.run.options import (
        add_experience_arguments,
        add_model_arguments,
        add_play_arguments,
        add_protocol_arguments,
    )

    w = sub.add_parser("watch", help="watch an agent play live (TUI)", description="Watch an agent play live in "
                       "the TUI, with the exact prompt it was sent; --step holds before each prompt and reply.")
    run_arguments(w)
    w.add_argument("--step", action="store_true", help="start in step mode")
    add_protocol_arguments(w)
    add_model_arguments(w)
    add_experience_arguments(w)
    w.set_defaults(func=_watch)

    pl = sub.add_parser("play", help="play yourself, recorded like a model run (TUI)",
                        description="Play a game yourself in the TUI; the run is recorded with agent human.")
    add_play_arguments(pl)
    pl.set_defaults(func=_play)

    o = sub.add_parser("open", help="replay a recording in the TUI",
                       description="Replay a recording turn by turn in the TUI.")
    o.add_argument("recording", metavar="RECORDING", help=RECORDING_HELP)
    o.set_defaults(func=_open)


def _watch(a: argparse.Namespace) -> int:
    return int(a.open_tui(WatchLaunch(checked_spec(a), step=bool(getattr(a, "step", False)))))


def _play(a: argparse.Namespace) -> int:
    if getattr(a, "vs", None):  # a person against a model: a two-player match
        from workstation.run.match_vs import play_vs

        return int(a.open_tui(MatchLaunch(**play_vs(a))))
    return int(a.open_tui(PlayLaunch(checked_spec(a, agent="human"), window=bool(getattr(a, "window", False)))))


def _open(a: argparse.Namespace) -> int:
    open_recording(a.recording)  # a missing or unreadable recording is one line before any screen
    return int(a.open_tui(OpenLaunch(a.recording)))
