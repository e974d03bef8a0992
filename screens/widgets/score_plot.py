"""Score over time for up to four runs in one terminal plot, drawn in braille dots.

Each cell holds 2 x 4 dots, so a plot W cells wide and H rows high has 2W x 4H
points. Every run is a step line in its own colour (a cell two runs share is
drawn white); a dim bar marks the cursor frame and a ``◆`` on the axis row the
first frame where the runs diverge. The y range covers every run (and 0); the
x range is the longest run's frames. Rasterising is numpy on small arrays and
each row is appended in runs of one style; ``bench/compare.py`` gives the cost
of a draw next to a frame view update.
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
    inside = x_frames < len(values)  # a shorter run's line stops where it ended
    v = values[np.minimum(x_frames, len(values) - 1)]
    span = (hi - lo) or 1.0
    y = np.clip(np.rint((hi - v) / span * (h - 1)), 0, h - 1).astype(int)
    prev = np.concatenate([y[:1], y[:-1]])  # each column joins the previous column's level: a step
    top, bottom = np.minimum(prev, y), np.maximum(prev, y)
    r = np.arange(h)[:, None]
    line: np.ndarray = (r >= top[None, :]) & (r <= bottom[None, :]) & inside[None, :]
    return line


def cells(dots: np.ndarray) -> np.ndarray:
    """Braille bit patterns per cell of a dot grid."""
    h, w = dots.shape
    grid = dots.reshape(h // 4, 4, w // 2, 2)
    bits: np.ndarray = (grid * _BITS[None, :, None, :]).sum(axis=(1, 3))
    return bits


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
        return render_plot(self.curves, max(1, self.size.width - GUTTER), max(1, self.size.height - 1),
                           self.cursor, self.marker)


def render_plot(curves: list[np.ndarray], width: int, rows: int, cursor: int, marker: int | None) -> Text:
    """The plot as Text: ``rows`` braille rows ``width`` cells wide after the y gutter, then the axis row."""
    if not curves:
        return Text("no runs", style="dim")
    n = max(len(c) for c in curves)
    lo = min(0.0, min(float(c.min()) for c in curves if len(c)))
    hi = max(float(c.max()) for c in curves if len(c))
    if hi <= lo:
        hi = lo + 1
    stack = np.stack([cells(raster(c, n, width, rows, lo, hi)) for c in curves])  # runs x rows x cols
    combined = np.bitwise_or.reduce(stack, axis=0)
    owners = (stack > 0).sum(axis=0)
    first = np.argmax(stack > 0, axis=0)
    cursor_col = min(width - 1, cursor * width // max(1, n))
    # one style code per cell: 0 empty, 1 + k run k alone, SHARED two runs or more; runs of equal codes are
    # appended as one piece, so a row costs a few appends rather than one per cell
    shared = len(COLOURS) + 1
    codes = np.where(owners > 1, shared, np.where(combined > 0, first % len(COLOURS) + 1, 0))
    glyphs = np.where(combined > 0, combined + 0x2800, ord(" "))
    glyphs[:, cursor_col] = np.where(combined[:, cursor_col] > 0, glyphs[:, cursor_col], ord("│"))
    styles = {0: "grey50", shared: "bold white", **{k + 1: c for k, c in enumerate(COLOURS)}}
    out = Text(no_wrap=True)
    for r in range(rows):
        label = f"{hi:g}" if r == 0 else f"{lo:g}" if r == rows - 1 else ""
        out.append(label[: GUTTER - 1].rjust(GUTTER - 1) + "┤" if label else " " * (GUTTER - 1) + "│", style="dim")
        row, chars = codes[r], "".join(map(chr, glyphs[r].tolist()))
        bounds = [0, *(np.flatnonzero(np.diff(row)) + 1).tolist(), width]
        for a, b in zip(bounds, bounds[1:]):
            style = styles[int(row[a])]
            if a <= cursor_col < b and row[a]:  # the cursor column inside a curve: highlighted
                out.append(chars[a:cursor_col], style=style)
                out.append(chars[cursor_col], style=f"{style} on grey23")
                out.append(chars[cursor_col + 1:b], style=style)
            else:
                out.append(chars[a:b], style=style)
        out.append("\n")
    axis = [" "] * width
    axis[cursor_col] = "▲"
    if marker is not None:
        axis[min(width - 1, marker * width // max(1, n))] = "◆"
    out.append(" " * (GUTTER - 1) + "└", style="dim")
    end_label = f"{(n - 1) / FPS_PAPER:g}s"
    line = "".join(axis)
    line = line[: width - len(end_label)] + end_label if width > len(end_label) + 2 else line
    for ch in line:
        out.append(ch, style="bold red" if ch == "◆" else "bold" if ch == "▲" else "dim")
    return out
