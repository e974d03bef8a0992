"""Score over time for up to four runs in one terminal plot, drawn in braille dots.

Each cell holds 2 x 4 dots, so a plot W cells wide and H rows high has 2W x 4H
points. Every run is a step line in its own colour (a cell two runs share is
drawn white); a dim bar marks the cursor frame and a ``◆`` on the axis row the
first frame where the runs diverge. The y range covers every run (and 0); the
x range is the longest run's frames. Rendering is numpy on small arrays: a
200 x 10 plot of four 900-frame runs takes well under a millisecond to
rasterise (``bench/score_plot.py``).
"""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual.widget import Widget

from workstation.game.games import FPS_PAPER

COLOURS = ("cyan", "magenta", "yellow", "green")
GUTTER = 7  # y labels
# braille bit of dot (row 0..3, column 0..1) in a cell
_BITS = np.array([[0x01, 0x08], [0x02, 0x10], [0x04, 0x20], [0x40, 0x80]], dtype=np.int64)


def raster(values: np.ndarray, n_frames: int, cols: int, rows: int, lo: float, hi: float) -> np.ndarray:
    """(rows*4, cols*2) bool dots of a step line of ``values`` (per frame) over ``n_frames`` frames."""
    w, h = cols * 2, rows * 4
    dots = np.zeros((h, w), dtype=bool)
    if len(values) == 0 or w == 0 or h == 0:
        return dots
    x_frames = (np.arange(w) * max(1, n_frames - 1)) // max(1, w - 1)
    inside = x_frames < len(values)
    v = values[np.minimum(x_frames, len(values) - 1)]
    span = (hi - lo) or 1.0
    y = np.clip(np.rint((hi - v) / span * (h - 1)), 0, h - 1).astype(int)
    prev = None
    for x in np.flatnonzero(inside):
        yy = y[x]
        if prev is None:
            dots[yy, x] = True
        else:
            a, b = sorted((prev, yy))
            dots[a:b + 1, x] = True  # the step joins the previous level
        prev = yy
    return dots


def cells(dots: np.ndarray) -> np.ndarray:
    """Braille bit patterns per cell of a dot grid."""
    h, w = dots.shape
    grid = dots.reshape(h // 4, 4, w // 2, 2)
    return (grid * _BITS[None, :, None, :]).sum(axis=(1, 3))


class ScorePlot(Widget):
    """Score curves of several runs, a cursor and a divergence mark."""

    DEFAULT_CSS = """
    ScorePlot { height: 10; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.curves: list[np.ndarray] = []
        self.labels: list[str] = []
        self.cursor = 0
        self.marker: int | None = None

    def set_curves(self, curves: list[np.ndarray], labels: list[str], marker: int | None = None) -> None:
        self.curves = [np.asarray(c, dtype=float) for c in curves]
        self.labels = list(labels)
        self.marker = marker
        self.refresh()

    def set_cursor(self, frame: int) -> None:
        if frame != self.cursor:
            self.cursor = frame
            self.refresh()

    def render(self) -> Text:
        width = max(1, self.size.width - GUTTER)
        rows = max(1, self.size.height - 1)
        if not self.curves:
            return Text("no runs", style="dim")
        n = max(len(c) for c in self.curves)
        lo = min(0.0, min(float(c.min()) for c in self.curves if len(c)))
        hi = max(float(c.max()) for c in self.curves if len(c))
        if hi <= lo:
            hi = lo + 1
        codes = [cells(raster(c, n, width, rows, lo, hi)) for c in self.curves]
        stack = np.stack(codes)  # runs x rows x cols
        combined = np.bitwise_or.reduce(stack, axis=0)
        owners = (stack > 0).sum(axis=0)
        first = np.argmax(stack > 0, axis=0)
        cursor_col = min(width - 1, self.cursor * width // max(1, n))
        out = Text(no_wrap=True)
        for r in range(rows):
            label = f"{hi:g}" if r == 0 else f"{lo:g}" if r == rows - 1 else ""
            out.append(label[: GUTTER - 1].rjust(GUTTER - 1) + "┤" if label else " " * (GUTTER - 1) + "│",
                       style="dim")
            for c in range(width):
                code = int(combined[r, c])
                if code == 0:
                    out.append("│" if c == cursor_col else " ", style="grey50")
                    continue
                style = "bold white" if owners[r, c] > 1 else COLOURS[int(first[r, c]) % len(COLOURS)]
                if c == cursor_col:
                    style += " on grey23"
                out.append(chr(0x2800 + code), style=style)
            out.append("\n")
        axis = [" "] * width
        axis[cursor_col] = "▲"
        if self.marker is not None:
            axis[min(width - 1, self.marker * width // max(1, n))] = "◆"
        out.append(" " * (GUTTER - 1) + "└", style="dim")
        end_label = f"{(n - 1) / FPS_PAPER:g}s"
        line = "".join(axis)
        line = line[: width - len(end_label)] + end_label if width > len(end_label) + 2 else line
        for ch in line:
            out.append(ch, style="bold red" if ch == "◆" else "bold" if ch == "▲" else "dim")
        return out
