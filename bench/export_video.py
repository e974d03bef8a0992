"""Export speed: `workstation export` of a 900-frame run vs a naive pipeline, measured in the same run.

Ours: palette-value canvas, panel parts redrawn only when they change, table
look-ups straight to yuv420p, libx264 veryfast. The naive baseline is what a first
version would do: per frame, RGB through the palette, a Pillow nearest-neighbour
scale, the whole panel drawn again, a PNG encoded, and the PNG decoded by ffmpeg
(as `ffmpeg -f image2pipe -i -` does) before the same libx264
encoder. (The PNG is decoded with Pillow: PyAV's own png decoder gave wrong colours
here.) Both pinned to one core; figures are CPU seconds of this process (the
machine is shared, so wall time is printed too but means less).

    .venv/bin/python bench/export_video.py [RECORDING]
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from workstation.store.recording import Recording
from workstation.studies.export import panel as P
from workstation.studies.export.timeline import build_timeline
from workstation.studies.export.video import VideoJob, export_video

SAMPLE = ROOT / "recordings" / "sample" / "breakout-random-s0"


def timed(fn):
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    return time.process_time() - c0, time.perf_counter() - w0, out


def naive(rec: Recording, out: Path, frames: int) -> int:
    tl = build_timeline(rec)
    fnt, big = P.font(14), P.font(20)
    lut = np.zeros((256, 3), np.uint8)
    for v, rgb in rec.frames.palette().items():
        lut[v] = rgb
    h, w = rec.frames.height * 3, rec.frames.width * 3
    W, H = w + 360, h
    with av.open(str(out), "w") as box:
        st = box.add_stream("libx264", rate=30)
        st.width, st.height, st.pix_fmt = W, H, "yuv420p"
        st.time_base = Fraction(1, 30)
        st.codec_context.thread_count = 1
        st.options = {"crf": "18", "preset": "veryfast"}
        for f in range(frames):
            img = Image.new("RGB", (W, H), P.BG)
            img.paste(Image.fromarray(lut[rec.frames.indices(f)]).resize((w, h), Image.NEAREST), (0, 0))
            d = ImageDraw.Draw(img)
            m = rec.manifest_record
            d.text((w + 6, 6), f"{m.game} · seed {m.seed}", fill=P.CLASSES["accent"], font=fnt)
            d.text((w + 6, 40), f"score {tl.score[f]:g}   lives {tl.lives[f]}", fill=P.CLASSES["text"], font=big)
            d.text((w + 6, 70), f"t {f / 30:6.2f} s   frame {f}/900", fill=P.CLASSES["dim"], font=fnt)
            t = tl.turns[tl.turn[f]] if tl.turn[f] >= 0 else None
            y = 110
            for line in P.wrap(t.thought if t is not None else "", 40, 12):
                d.text((w + 6, y), line, fill=P.CLASSES["text"], font=fnt)
                y += 18
            y = 380
            for k, a in enumerate(t.actions if t is not None else []):
                mark = "▶" if k == tl.action[f] else " "
                d.text((w + 6, y), f"{mark} {k + 1:2d} {a}", fill=P.CLASSES["mark" if mark != " " else "text"], font=fnt)
                y += 18
            buf = io.BytesIO()
            img.save(buf, format="PNG")
            # what ffmpeg does with each piped PNG: decode it, convert to yuv420p, encode
            decoded = np.asarray(Image.open(io.BytesIO(buf.getvalue())).convert("RGB"))
            frame = av.VideoFrame.from_ndarray(decoded, format="rgb24").reformat(format="yuv420p")
            frame.pts = f
            for packet in st.encode(frame):
                box.mux(packet)
        for packet in st.encode(None):
            box.mux(packet)
    return frames


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else SAMPLE
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    rec = Recording(path)
    n = len(rec.frames) - 1
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        runs = {}
        for name, fn in [
            ("ours, threads 1", lambda: export_video(VideoJob([rec], tmp / "a.mp4", 0, n, threads=1))),
            ("ours, threads auto", lambda: export_video(VideoJob([rec], tmp / "b.mp4", 0, n, threads=0))),
            ("ours, GIF", lambda: export_video(VideoJob([rec], tmp / "c.gif", 0, n))),
            ("naive: PNG per frame -> ffmpeg", lambda: naive(rec, tmp / "d.mp4", n)),
        ]:
            runs[name] = timed(fn)
        sizes = {k: p.stat().st_size for k, p in zip(runs, [tmp / "a.mp4", tmp / "b.mp4", tmp / "c.gif", tmp / "d.mp4"])}
    base = runs["naive: PNG per frame -> ffmpeg"][0]
    print(f"{n}-frame run {path.name}, one core")
    print(f"{'pipeline':34s} {'CPU s':>7s} {'wall s':>7s} {'vs naive':>9s} {'size MB':>8s}")
    for name, (cpu, wall, _) in runs.items():
        print(f"{name:34s} {cpu:7.2f} {wall:7.2f} {base / cpu:8.1f}x {sizes[name] / 1e6:8.2f}")
    cpu = runs["ours, threads 1"][0]
    print(f"goal: 900 frames in at most 5 s on one core -> {'met' if cpu <= 5 else 'NOT met'} ({cpu:.2f} s CPU)")


if __name__ == "__main__":
    main()
