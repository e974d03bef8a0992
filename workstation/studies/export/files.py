"""A recording (or up to 4 side by side) written as one MP4, GIF or HTML file: the checks and the write."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from workstation.base.errors import UserError

if TYPE_CHECKING:
    from workstation.store.recording import Recording

FORMATS = (".mp4", ".gif", ".html")
OVERLAY_DEFAULT = "thought,plan,score"


def parse_overlays(text: str) -> tuple[str, ...]:
    from workstation.studies.export.layout import OVERLAYS

    parts = [p.strip().lower() for p in text.split(",") if p.strip()]
    if parts == ["none"]:
        return ()
    bad = [p for p in parts if p not in OVERLAYS]
    if bad:
        raise UserError(f"bad --overlay {', '.join(bad)!s}: choose from {','.join(OVERLAYS)} or none")
    return tuple(p for p in OVERLAYS if p in parts)


def frame_range(recs: list[Recording], start: int | None, stop: int | None) -> tuple[int, int]:
    """[start, stop) in budget frames; the default is the longest run's frame count."""
    from workstation.studies.export.timeline import video_frames

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
    from workstation.store.framestore import FrameStoreError
    from workstation.store.recording import Recording
    from workstation.studies.export.layout import OVERLAYS
    from workstation.studies.export.outside import check_outside

    out = Path(out)
    ext = check_output(out)
    check_outside(out, list(paths))
    from workstation.store.local_paths import refuse_file_inside_artifacts

    refuse_file_inside_artifacts(out, "-o", "export")  # a batch, a QA set, a session...: never written into
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
            from workstation.studies.export.html import export_html

            n = export_html(recs, tmp, start, stop, overlays, pace)
        else:
            from workstation.studies.export.video import VideoJob, export_video

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
