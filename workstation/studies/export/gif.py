"""A streaming GIF writer: one global palette, each frame only the rectangle that changed.

Pillow's multi-frame GIF save keeps every frame in memory until the end (about
0.5 GB for a 900-frame export), so frames are written here as they come: the
changed rectangle, with unchanged pixels inside it set to a transparent value
(disposal 1, "leave in place", so they show the frame before). Pillow does the
LZW coding of each rectangle (``GifImagePlugin.getdata``). A frame equal to the one
before is written as one transparent pixel, so the GIF holds every frame.
"""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
from PIL import GifImagePlugin, Image

TRANSPARENT = 255  # a palette value neither the ALE (even values) nor the panel's classes use


class GifWriter:
    def __init__(self, path: Path, width: int, height: int, lut: np.ndarray) -> None:
        self.fp = open(path, "wb")
        self.w, self.h = width, height
        self.palette = lut.astype(np.uint8).tobytes()
        self.prev: np.ndarray | None = None
        self.frames = 0
        self.fp.write(b"GIF89a" + struct.pack("<HHBBB", width, height, 0xF7, 0, 0) + self.palette)
        self.fp.write(b"!\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00")  # loop forever

    def add(self, px: np.ndarray, duration_ms: int) -> None:
        if self.prev is None:
            x0, y0, crop = 0, 0, px
        else:
            changed = px != self.prev
            rows, cols = np.flatnonzero(changed.any(1)), np.flatnonzero(changed.any(0))
            if rows.size == 0:
                x0, y0, crop = 0, 0, np.full((1, 1), TRANSPARENT, np.uint8)
            else:
                y0, y1, x0, x1 = int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1
                crop = px[y0:y1, x0:x1].copy()
                crop[~changed[y0:y1, x0:x1]] = TRANSPARENT
        im = Image.frombytes("P", (crop.shape[1], crop.shape[0]), np.ascontiguousarray(crop).tobytes())
        im.putpalette(self.palette, "RGB")
        params = {"duration": duration_ms, "disposal": 1}
        if self.prev is not None:
            params["transparency"] = TRANSPARENT
        for chunk in GifImagePlugin.getdata(im, offset=(x0, y0), **params):
            self.fp.write(chunk)
        self.prev = px.copy()
        self.frames += 1

    def close(self) -> None:
        self.fp.write(b";")
        self.fp.close()
