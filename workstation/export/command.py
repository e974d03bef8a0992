"""``workstation export REC -o FILE``: a run (or several, ``--compare``) as MP4, GIF or one HTML page."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workstation.errors import UserError

if TYPE_CHECKING:
    from workstation.store.recording import Recording

FORMATS = (".mp4", ".gif", ".html")
OVERLAY_DEFAULT = "thought,plan,score"


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


def parse_overlays(text: str) -> tuple[str, ...]:
    from workstation.export.layout import OVERLAYS

    parts = [p.strip().lower() for p in text.split(",") if p.strip()]
    if parts == ["none"]:
        return ()
    bad = [p for p in parts if p not in OVERLAYS]
    if bad:
        raise UserError(f"bad --overlay {', '.join(bad)!s}: choose from {','.join(OVERLAYS)} or none")
    return tuple(p for p in OVERLAYS if p in parts)


def frame_range(recs: list[Recording], start: int | None, stop: int | None) -> tuple[int, int]:
    """[start, stop) in budget frames; the default is the longest run's frame count."""
    from workstation.export.timeline import video_frames

    longest = max(video_frames(r) for r in recs)
    held = max(len(r.frames) for r in recs)
    if longest == 0:
        raise UserError(f"{recs[0].path} holds no frames; nothing to export")
    start = 0 if start is None else start
    stop = longest if stop is None else stop
    if start < 0 or stop <= start or stop > held:
        raise UserError(f"bad frame range --from {start} --to {stop}: the recording holds frames 0..{held - 1} and "
                        f"--to is one past the last shown (above --from, at most {held}; e.g. --from 0 --to {longest})")
    return start, stop


def check_output(out: Path) -> str:
    from workstation.store.local_paths import check_out_file, refuse_uri

    does = "export writes a local file"
    refuse_uri(out, "-o", does)
    ext = out.suffix.lower()
    if ext not in FORMATS:
        raise UserError(f"cannot export to {out.name!r}: the file name must end in .mp4, .gif or .html")
    check_out_file(out, "-o", does)
    return ext


def export(paths: list[str | Path], out: Path, pace: str = "paper", start: int | None = None,
           stop: int | None = None, overlays: tuple[str, ...] | None = None,
           progress: Callable[[int, int], None] | None = None) -> tuple[int, int, int]:
    """Write ``out`` (.mp4, .gif or .html) from the recordings at ``paths``; returns (frames, start, stop).

    Bad input raises UserError (or RecordingError); the file appears only when complete.
    """
    from workstation.export.layout import OVERLAYS
    from workstation.export.outside import check_outside
    from workstation.store.framestore import FrameStoreError
    from workstation.store.recording import Recording

    out = Path(out)
    ext = check_output(out)
    check_outside(out, list(paths))
    overlays = OVERLAYS if overlays is None else overlays
    if len(paths) > 4:
        raise UserError(f"--compare takes up to 3 more recordings (4 runs side by side); got {len(paths)} runs")
    recs = [Recording(Path(p)).require_sound() for p in paths]  # a damaged recording is refused (exit 1)
    games = [r.manifest_record.game for r in recs]
    if len(set(games)) > 1:
        raise UserError(f"--compare puts runs of one game side by side; these are of {', '.join(dict.fromkeys(map(str, games)))}")
    from workstation.store.atomic import put_in_place

    start, stop = frame_range(recs, start, stop)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.part{ext}")
    try:
        if ext == ".html":
            from workstation.export.html import export_html

            n = export_html(recs, tmp, start, stop, overlays, pace)
        else:
            from workstation.export.video import VideoJob, export_video

            n = export_video(VideoJob(recs, tmp, start, stop, pace, overlays), progress)
        put_in_place(tmp, out)
    except PermissionError as e:
        raise UserError(f"cannot write {out}: {e.strerror}; choose another -o") from None
    except FrameStoreError as e:
        raise UserError(f"damaged recording: {e}") from None
    finally:
        tmp.unlink(missing_ok=True)
    return n, start, stop


def beside(recording: Path, ext: str = ".mp4") -> Path:
    """The default file for a recording's export: next to its directory, named after it."""
    recording = Path(recording).resolve()
    return recording.with_name(recording.name + ext)


def run(args: argparse.Namespace) -> int:
    from workstation.export.outside import check_outside
    from workstation.store.local_paths import refuse_uri

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
    from workstation.export.inspect_log.export import export_inspect

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
