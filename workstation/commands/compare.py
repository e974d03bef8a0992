"""`workstation compare A B [C D]`: up to four recordings of one game side by side (TUI), or as text."""

from __future__ import annotations

import argparse
from typing import Any

from workstation.base.errors import UserError


def register(sub: Any) -> None:
    p = sub.add_parser("compare", help="compare 2 to 4 recordings of one game side by side (TUI)",
                       description="Open 2 to 4 recordings of one game side by side, frame-aligned on the budget "
                       "clock, with one scrubber, score curves, the first frame and turn where they diverge and a "
                       "summary table. Recordings of different games are refused (exit 2).")
    p.add_argument("recordings", nargs="+", metavar="RECORDING", help="a recording directory (2 to 4 of them)")
    p.add_argument("--text", action="store_true",
                   help="print the start check, the divergence and the summary table instead of opening the TUI")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from workstation.studies.analysis.compare import MAX_RUNS, Comparison, load_runs

    if not 2 <= len(args.recordings) <= MAX_RUNS:
        raise UserError(f"compare takes 2 to {MAX_RUNS} recordings, not {len(args.recordings)}")
    if args.text:
        from workstation.store.recording import Recording

        c = Comparison.of(args.recordings)  # bad input (a missing recording, two games) is one line, exit 2
        for path in args.recordings:  # a damaged one is refused as `verify` refuses it: exit 1
            Recording(path).require_sound()
        print(c.start)
        print(c.divergence_text())
        print(c.table_text())
        return 0
    load_runs(args.recordings)  # bad input is one line before the TUI starts
    from workstation.run.launch import CompareLaunch

    code: int = args.open_tui(CompareLaunch(tuple(args.recordings)))
    return code
