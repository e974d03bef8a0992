"""``workstation export REC -o FILE``: a run (or several, ``--compare``) as MP4, GIF or one HTML page."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workstation.base.errors import UserError
from workstation.studies.export.files import OVERLAY_DEFAULT, check_output, export, parse_overlays

if TYPE_CHECKING:
    pass


def register(sub: Any) -> None:
    p = sub.add_parser("export", help="export a recording as MP4, GIF or a self-contained HTML page, or runs as "
                       "Inspect AI eval logs",
                       description="Write a recording (or up to 4 side by side, --compare) as an MP4 or GIF video or "
                       "one self-contained HTML page, with the model's thought, plan and score beside the frames. "
                       "With --inspect DIR: recordings, batch and session directories as Inspect AI eval logs, one "
                       "per setting and game (docs/inspect.md).")
    p.add_argument("recording", nargs="+", metavar="SOURCE",
                   help="a recording (with --inspect: any number of recordings, batch or session directories)")
    p.add_argument("-o", "--out", metavar="FILE", help="run.mp4 | run.gif | run.html")
    p.add_argument("--inspect", metavar="DIR", help="write Inspect AI eval logs into DIR (made if missing; or one "
                   "log into a file named *.eval or *.json)")
    p.add_argument("--format", dest="log_format", choices=["eval", "json"], default=None,
                   help="with --inspect: .eval zip logs (default) or plain .json logs")
    p.add_argument("--include-changed", action="store_true",
                   help="with --inspect: also export runs changed by hand, each setting's in a log of its own, marked")
    p.add_argument("--pace", choices=["paper", "native"], default=None,  # None: not given (paper)
                   help="paper: 30 frames per second (900 frames = 30 s, the paper's clock, the default); native: 60 "
                   "(the Atari's)")
    p.add_argument("--from", dest="start", type=int, default=None, metavar="F", help="first frame (default 0)")
    p.add_argument("--to", dest="stop", type=int, default=None, metavar="F",
                   help="one past the last frame (default: the run's frame count, e.g. 900)")
    p.add_argument("--overlay", default=None, metavar="LIST",  # None: not given (all)
                   help="panel parts: any of thought,plan,score, or none (default all)")
    p.add_argument("--compare", nargs="+", default=[], metavar="REC", help="more recordings, side by side")
    p.add_argument("--quiet", action="store_true", help="print only the output path")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from workstation.store.local_paths import refuse_uri
    from workstation.studies.export.outside import check_outside

    if args.inspect is not None:
        return run_inspect(args)
    if args.log_format is not None or args.include_changed:
        flag = "--format" if args.log_format is not None else "--include-changed"
        raise UserError(f"{flag} applies to Inspect logs: add --inspect DIR (or drop {flag})")
    if args.out is None:
        raise UserError("export needs -o FILE (.mp4, .gif or .html) or --inspect DIR (Inspect AI logs)")
    if len(args.recording) > 1:
        raise UserError(f"export -o takes one recording ({len(args.recording)} given); put more side by side with "
                        "--compare, or write Inspect logs of them all with --inspect DIR")
    args.recording = args.recording[0]
    args.pace = args.pace or "paper"
    args.overlay = OVERLAY_DEFAULT if args.overlay is None else args.overlay
    for path in (args.recording, *args.compare):  # before -o: the recordings are read from local directories
        refuse_uri(path, "", "export reads a local recording")
    out = Path(args.out)
    check_output(out)
    paths = [args.recording, *args.compare]
    check_outside(out, paths)
    progress = _terminal_progress if (sys.stderr.isatty() and not args.quiet) else None
    try:
        n, start, stop = export(paths, out, args.pace, args.start, args.stop, parse_overlays(args.overlay), progress)
    finally:
        if progress:
            sys.stderr.write("\r\033[K")
    print(out)
    if not args.quiet:
        size = out.stat().st_size / 1e6
        pace = "" if out.suffix.lower() == ".html" else f" at {args.pace} pace"
        sys.stdout.write(f"{n} frames ({start}..{stop - 1}){pace}, {len(paths)} run{'s' * (len(paths) > 1)}, {size:.2f} MB\n")
    return 0


def run_inspect(args: argparse.Namespace) -> int:
    from workstation.studies.export.inspect_log.export import export_inspect

    if args.out is not None or args.compare:
        raise UserError("--inspect writes logs of every SOURCE; it takes no -o or --compare (give the runs as SOURCEs)")
    video = [flag for flag, given in (("--pace", args.pace is not None), ("--from", args.start is not None),
                                      ("--to", args.stop is not None), ("--overlay", args.overlay is not None))
             if given]  # refused whatever their value: given at all, they mean a video or page
    if video:
        several = len(video) > 1
        raise UserError(f"{', '.join(video)} {'shape' if several else 'shapes'} a video or page; an Inspect log "
                        f"holds every turn: drop {'them' if several else 'it'} or use -o")
    done = export_inspect(list(args.recording), Path(args.inspect), args.log_format, args.include_changed)
    for path in done.paths:
        print(path)
    if not args.quiet:
        left = (f"; {len(done.left_out)} changed by hand left out (--include-changed exports them, marked)"
                if done.left_out else "")
        sys.stdout.write(f"{done.runs} run{'s' * (done.runs != 1)} in {len(done.paths)} Inspect "
                         f"log{'s' * (len(done.paths) != 1)}, {done.bytes / 1e6:.2f} MB{left}\n")
    return 0


def _terminal_progress(done: int, total: int) -> None:
    if done == total or done % 30 == 0:
        sys.stderr.write(f"\rexporting frame {done}/{total}")
        sys.stderr.flush()
