"""MP4 (H.264, yuv420p) and GIF export of one run or several side by side.

The canvas is palette values (see ``panel``), so a frame becomes video with table
look-ups: Y straight from the canvas, U and V from the mean of each 2x2 block's
chroma. Nothing is ever converted to RGB and back. GIF frames are the canvas as it
is, with one global palette.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from workstation.game.games import PACES
from workstation.store.recording import Recording
from workstation.studies.export import panel as P
from workstation.studies.export.layout import OVERLAYS, Box, build_tiles


@dataclass
class VideoJob:
    recs: list[Recording]
    out: Path
    start: int  # first budget frame shown
    stop: int  # one past the last
    pace: str = "paper"
    overlays: tuple[str, ...] = OVERLAYS
    threads: int = 1  # encoder threads; 0 = let x264 choose
    crf: int = 18
    preset: str = "veryfast"

    @property
    def count(self) -> int:
        return self.stop - self.start


def palette(recs: list[Recording]) -> np.ndarray:
    """256x3 RGB: the runs' ALE colours on even values, the panel's on odd ones."""
    lut = P.panel_palette()
    for r in recs:
        for v, rgb in r.frames.palette().items():
            if v % 2 == 0:
                lut[v] = rgb
    return lut


def yuv_tables(lut: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """BT.601 limited-range Y, Cb, Cr of every palette value (Y as uint8, chroma as uint16 for summing)."""
    rgb = lut.astype(np.float64) / 255.0
    r, g, b = rgb[:, 0], rgb[:, 1], rgb[:, 2]
    y = 16 + 65.481 * r + 128.553 * g + 24.966 * b
    cb = 128 - 37.797 * r - 74.203 * g + 112.0 * b
    cr = 128 + 112.0 * r - 93.786 * g - 18.214 * b

    def clip(a: np.ndarray) -> np.ndarray:
        return np.clip(np.round(a), 0, 255)

    return clip(y).astype(np.uint8), clip(cb).astype(np.uint16), clip(cr).astype(np.uint16)


class Canvas:
    """The tiles on one canvas, drawn frame by frame."""

    def __init__(self, recs: list[Recording], overlays: tuple[str, ...]) -> None:
        self.tiles, (self.h, self.w) = build_tiles(recs, overlays)
        self.pixels = np.full((self.h, self.w), P.BACKGROUND, np.uint8)
        for t in self.tiles:
            t.paint_static(self.pixels)
        self._first = True

    def draw(self, f: int, paint_frames: bool = True) -> tuple[np.ndarray, list[Any], list[Box]]:
        """The canvas at ``f``; each tile's (frame box, frame values, scale); the panel boxes repainted."""
        panels: list[Box] = []
        frames: list[Any] = []
        for t in self.tiles:
            panels += t.draw(self.pixels, f, paint_frames)
            frames.append((t.frame_box, t.frame_indices(f), t.scale))
        if self._first:
            self._first = False
            panels = [Box(0, 0, self.h, self.w)]
        return self.pixels, frames, panels


class YUV420:
    """Palette canvas -> yuv420p planes of one reused VideoFrame, converting only what changed.

    A frame box is converted at its source size and then scaled (Y) or sampled at
    each 2x2 block's top-left pixel (chroma; exact at an even scale, at scale 3 a
    colour edge's chroma moves by at most one pixel). Panel boxes average the 2x2
    block, so thin coloured text keeps its colour. libx264 copies each picture it is
    given, so writing the next frame into the same buffers is safe (the round-trip
    test decodes distinct frames).
    """

    def __init__(self, lut: np.ndarray, h: int, w: int) -> None:
        import av

        self.ly, self.lu16, self.lv16 = yuv_tables(lut)
        self.lu8, self.lv8 = self.lu16.astype(np.uint8), self.lv16.astype(np.uint8)
        self.frame = av.VideoFrame(w, h, "yuv420p")
        views = []
        for plane, (ph, pw) in zip(self.frame.planes, ((h, w), (h // 2, w // 2), (h // 2, w // 2))):
            views.append(np.frombuffer(cast(Any, plane), np.uint8).reshape(-1, plane.line_size)[:ph, :pw])
        self.y, self.u, self.v = views
        self._maps: dict[tuple[Any, ...], tuple[np.ndarray, np.ndarray]] = {}
        self._last: dict[int, np.ndarray] = {}  # last frame values converted, per tile

    def update(self, px: np.ndarray, frames: list[Any], panels: list[Box]) -> Any:
        for b in panels:
            y0, y1, x0, x1 = _even(b)
            region = px[y0:y1, x0:x1]
            np.take(self.ly, region, out=self.y[y0:y1, x0:x1])
            a, b_, c, d = region[0::2, 0::2], region[0::2, 1::2], region[1::2, 0::2], region[1::2, 1::2]
            for lut, plane in ((self.lu16, self.u), (self.lv16, self.v)):
                plane[y0 // 2:y1 // 2, x0 // 2:x1 // 2] = (lut[a] + lut[b_] + lut[c] + lut[d] + 2) >> 2
        for n, (box, idx, s) in enumerate(frames):
            last = self._last.get(n)
            if last is None or last.shape != idx.shape:
                r0, r1 = 0, idx.shape[0]
            else:  # only the band of source rows that changed
                rows = np.flatnonzero((idx != last).any(1))
                if rows.size == 0:
                    continue
                r0, r1 = int(rows[0]), int(rows[-1]) + 1
            self._last[n] = idx.copy()
            fw = idx.shape[1]
            band = idx[r0:r1]
            y0, x0 = box.y, box.x  # frame boxes sit at even positions
            self.y[y0 + r0 * s:y0 + r1 * s, x0:x0 + fw * s] = np.repeat(np.repeat(self.ly.take(band), s, 0), s, 1)
            rows_map, cols = self._chroma_map(idx.shape[0], fw, s)
            k0, k1 = (r0 * s) // 2, (r1 * s + 1) // 2
            sub = idx[rows_map[k0:k1]][:, cols]
            cy, cx, cw = y0 // 2 + k0, x0 // 2, sub.shape[1]
            np.take(self.lu8, sub, out=self.u[cy:cy + len(sub), cx:cx + cw])
            np.take(self.lv8, sub, out=self.v[cy:cy + len(sub), cx:cx + cw])
        return self.frame

    def _chroma_map(self, fh: int, fw: int, s: int) -> tuple[np.ndarray, np.ndarray]:
        key = (fh, fw, s)
        hit = self._maps.get(key)
        if hit is None:
            hit = self._maps[key] = (np.arange(0, fh * s, 2) // s, np.arange(0, fw * s, 2) // s)
        return hit


def _even(b: Box) -> tuple[int, int, int, int]:
    return b.y & ~1, (b.y + b.h + 1) & ~1, b.x & ~1, (b.x + b.w + 1) & ~1


def export_video(job: VideoJob, progress: Callable[[int, int], None] | None = None) -> int:
    """Write ``job.out`` (.mp4 or .gif); returns the number of frames written."""
    canvas = Canvas(job.recs, job.overlays)
    lut = palette(job.recs)
    if job.out.suffix.lower() == ".gif":
        return _gif(job, canvas, lut, progress)
    return _mp4(job, canvas, lut, progress)


def _mp4(job: VideoJob, canvas: Canvas, lut: np.ndarray, progress: Callable[[int, int], None] | None) -> int:
    from fractions import Fraction

    import av

    conv = YUV420(lut, canvas.h, canvas.w)
    fps = PACES[job.pace]
    with av.open(str(job.out), "w", options={"movflags": "+faststart"}) as box:
        st = box.add_stream("libx264", rate=fps)
        st.width, st.height, st.pix_fmt = canvas.w, canvas.h, "yuv420p"
        st.time_base = Fraction(1, fps)
        st.codec_context.thread_count = job.threads
        st.options = {"crf": str(job.crf), "preset": job.preset,
                      "x264-params": "colorprim=smpte170m:transfer=smpte170m:colormatrix=smpte170m"}
        for i, f in enumerate(range(job.start, job.stop)):
            frame = conv.update(*canvas.draw(f, paint_frames=False))
            frame.pts = i
            for packet in st.encode(frame):
                box.mux(packet)
            if progress:
                progress(i + 1, job.count)
        for packet in st.encode(None):
            box.mux(packet)
    return job.count


def _gif(job: VideoJob, canvas: Canvas, lut: np.ndarray, progress: Callable[[int, int], None] | None) -> int:
    from workstation.studies.export.gif import GifWriter

    # GIF delays are in 1/100 s, and players stretch delays under 2/100 s: paper pace
    # alternates 3,3,4 (exactly 30 fps); native pace uses 2 (50 fps, the fastest GIF plays).
    durations = [30, 30, 40] if job.pace == "paper" else [20]
    gif = GifWriter(job.out, canvas.w, canvas.h, lut)
    try:
        for i, f in enumerate(range(job.start, job.stop)):
            gif.add(canvas.draw(f)[0], durations[i % len(durations)])
            if progress:
                progress(i + 1, job.count)
    finally:
        gif.close()
    return gif.frames
