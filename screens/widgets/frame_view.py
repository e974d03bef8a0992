"""The frame view: an Atari frame drawn in the terminal with half blocks.

Each cell shows two pixels stacked: an upper half block whose foreground is
the top pixel and whose background is the bottom one. A frame (160 wide,
210/230/250 high) is shown at full resolution, 160 columns by half its height
in rows, when the widget has room; otherwise it is shrunk block by block
(``pool_blocks``): a block shows its majority colour, except where it holds a
small object (a colour that is the majority of neither it nor any of its four
neighbours: a ball, a bullet, a thin line), which is shown instead, the
brightest if several. So a one-pixel ball never vanishes, and the edge of a
band of bricks or a wall is not smeared over its neighbours.

Aspect: one pixel aspect in every view (the live frame, the prompt's image
previews, open, compare): a pixel is drawn as a square half block, the shape
of the array the ALE returns and the model is sent, at full size and shrunk
alike. (On a 4:3 TV an Atari pixel was about ``TV_PIXEL_ASPECT`` times as wide
as tall; the model never sees that shape, so no view shows it.)

Cost: the render path keeps one rich Style per (top, bottom) colour pair keyed
on packed RGB integers, merges runs of equal cells into one Segment, keeps the
previous frame's Strips, rebuilds only rows whose cells changed and refreshes
only those rows, so the terminal receives only what moved.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable

import numpy as np
from PIL import Image
from rich.color import Color
from rich.segment import Segment
from rich.style import Style
from textual.containers import Horizontal, Vertical
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

FRAME_WIDTH = 160  # every Atari frame is 160 pixels wide
TV_PIXEL_ASPECT = 1.75  # width / height of one Atari pixel on a 4:3 TV
HALF_BLOCK = "\u2580"  # upper half block: fg paints the top pixel, bg the bottom
_PAD_STYLE = Style.from_color(bgcolor=Color.from_rgb(0, 0, 0))  # letterbox: black
# One Style per (top, bottom) colour pair, keyed top << 24 | bottom. Pooling only
# picks real pixels, so an Atari palette (128 colours) bounds it; the cap guards
# against arbitrary RGB input.
_STYLES: dict[int, Style] = {}
_STYLES_CAP = 1 << 16


def sent_image(png: bytes) -> np.ndarray:
    """The pixels of a PNG as it was sent to a model, as an (H, 160, 3) uint8 array (a prompt image preview)."""
    with Image.open(io.BytesIO(png)) as im:
        return np.asarray(im.convert("RGB"), dtype=np.uint8)


class FrameShapeError(ValueError):
    """A frame that is not an (H, 160, 3) uint8 RGB array."""


def check_frame(rgb: np.ndarray) -> None:
    """Raise FrameShapeError unless ``rgb`` is an (H, 160, 3) uint8 array, H >= 2."""
    shape: tuple[int, ...] = getattr(rgb, "shape", None) or ()
    if (
        not isinstance(rgb, np.ndarray)
        or rgb.dtype != np.uint8
        or rgb.ndim != 3
        or shape[1:] != (FRAME_WIDTH, 3)
        or shape[0] < 2
    ):
        raise FrameShapeError(
            f"frame must be an (H, {FRAME_WIDTH}, 3) uint8 RGB array, got "
            f"{getattr(rgb, 'dtype', type(rgb).__name__)} {shape}; pass the ALE's getScreenRGB()"
        )


def fit_grid(frame_height: int, width: int, height: int) -> tuple[int, int]:
    """Pixel grid (columns, pixel rows) to draw a frame in ``width`` x ``height`` cells.

    Full resolution when it fits; otherwise the largest grid that fits with
    square pixels (one step in both directions, the same in every view). Pixel
    rows are even (two per cell); (0, 0) when nothing fits.
    """
    if width < 1 or height < 1:
        return 0, 0
    if width >= FRAME_WIDTH and 2 * height >= frame_height:
        return FRAME_WIDTH, frame_height
    step = max(1.0, FRAME_WIDTH / width, frame_height / (2 * height))
    columns = min(width, math.ceil(FRAME_WIDTH / step - 1e-9))
    rows = min(2 * height, math.ceil(frame_height / step - 1e-9))
    return columns, max(2, rows - rows % 2)


MAX_PALETTE = 256  # more colours than an Atari frame has: pool by brightness alone
# colour numbers by 18-bit key (6 bits a channel; Atari palette colours differ by more), and their RGB
_COLOURS = np.full(1 << 18, -1, dtype=np.int64)
_COLOUR_VALUES: list[int] = []


def _block_of(size: int, n: int) -> np.ndarray:
    """The block (0..n-1) of each of ``size`` source positions, blocks as even as integers allow."""
    starts = np.arange(n) * size // n
    return np.searchsorted(starts, np.arange(size), side="right") - 1


def pool_blocks(rgb: np.ndarray, columns: int, rows: int) -> np.ndarray:
    """Shrink a frame to ``rows`` x ``columns`` packed 0xRRGGBB ints (int64).

    Each output pixel is its block's majority colour (of a tie, the lowest 0xRRGGBB), unless the block holds a
    small object: a colour that is the majority of neither this block nor any
    of its eight neighbours (a ball, a bullet, a thin line). Then that colour is
    shown (the brightest by luminance if several), so it never vanishes, while
    the edges of bands and walls keep their place.
    """
    wide = rgb.astype(np.int64)
    red, green, blue = wide[..., 0], wide[..., 1], wide[..., 2]
    packed = (red << 16) | (green << 8) | blue
    if (rows, columns) == rgb.shape[:2]:
        return packed
    # colours numbered through a lookup kept across frames (np.unique's sort costs 40 times as much)
    key = ((red >> 2) << 12) | ((green >> 2) << 6) | (blue >> 2)
    seen = _COLOURS[key]  # colour numbers kept across frames: new colours are rare after the first frame
    if (seen < 0).any():
        fresh = np.unique(key[seen < 0])
        if len(fresh) + len(_COLOUR_VALUES) > 4 * MAX_PALETTE:  # arbitrary RGB input: start the numbering again
            _COLOURS.fill(-1)
            _COLOUR_VALUES.clear()
            seen = _COLOURS[key]
            fresh = np.unique(key)
            if len(fresh) > 4 * MAX_PALETTE:
                return _pool_brightest(packed, red, green, blue, columns, rows)
        _COLOURS[fresh] = np.arange(len(_COLOUR_VALUES), len(_COLOUR_VALUES) + len(fresh))
        for f in fresh.tolist():
            _COLOUR_VALUES.append(int(packed[key == f].flat[0]))
        seen = _COLOURS[key]
    present = np.flatnonzero(np.bincount(seen.ravel(), minlength=len(_COLOUR_VALUES)))
    k = len(present)
    if k > MAX_PALETTE:
        return _pool_brightest(packed, red, green, blue, columns, rows)
    palette = np.asarray(_COLOUR_VALUES, dtype=np.int64)[present]
    # local numbers in the order of the colours' values, not of the lookup's (which depends on the frames
    # this process saw before): a tie between two colours then picks the same one whatever came before
    by_value = np.argsort(palette, kind="stable")
    palette, present = palette[by_value], present[by_value]
    local = np.zeros(len(_COLOUR_VALUES), dtype=np.int64)
    local[present] = np.arange(k)
    index = local[seen]
    block = _block_of(packed.shape[0], rows)[:, None] * columns + _block_of(packed.shape[1], columns)[None, :]
    counts = np.bincount((block * k + index).ravel(), minlength=rows * columns * k).reshape(rows, columns, k)
    majority = counts.argmax(axis=2)
    top = np.zeros((rows, columns, k), dtype=bool)
    np.put_along_axis(top, majority[..., None], True, axis=2)
    rows_near = top.copy()  # the majority colour of this block or of one of its eight neighbours
    rows_near[1:] |= top[:-1]
    rows_near[:-1] |= top[1:]
    near = rows_near.copy()
    near[:, 1:] |= rows_near[:, :-1]
    near[:, :-1] |= rows_near[:, 1:]
    small = (counts > 0) & ~near
    lum = (palette >> 16) * 299 + (palette >> 8 & 0xFF) * 587 + (palette & 0xFF) * 114 + 1
    score = np.where(small, lum[None, None, :], 0)
    best = score.argmax(axis=2)
    chosen = np.where(score.max(axis=2) > 0, best, majority)
    picked: np.ndarray = palette[chosen]
    return picked


def _pool_brightest(packed: np.ndarray, red: np.ndarray, green: np.ndarray, blue: np.ndarray, columns: int,
                    rows: int) -> np.ndarray:
    """The brightest (by luminance) pixel of each block (input with more colours than an Atari has)."""
    key = ((red * 299 + green * 587 + blue * 114) << 24) | packed
    brightest: np.ndarray = _max_blocks(_max_blocks(key, rows, axis=0), columns, axis=1) & 0xFFFFFF
    return brightest


def _max_blocks(key: np.ndarray, n: int, axis: int) -> np.ndarray:
    """Max over ``n`` near-equal blocks along ``axis`` (a few gathers, no Python loop per block)."""
    size = key.shape[axis]
    if n == size:
        return key
    starts = np.arange(n) * size // n
    ends = np.append(starts[1:], size)
    out = np.take(key, starts, axis=axis)
    for offset in range(1, int((ends - starts).max())):
        np.maximum(out, np.take(key, np.minimum(starts + offset, ends - 1), axis=axis), out=out)
    pooled: np.ndarray = out
    return pooled


class FrameRenderer:
    """Turns frames into Strips for a fixed cell size, reusing unchanged rows.

    Free of any running app, so the render path can be measured on its own.
    """

    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height
        self.frame_height = 0
        self.strips: list[Strip] = [Strip.blank(width, _PAD_STYLE)] * height
        self._cells: np.ndarray | None = None  # (top << 24 | bottom) per cell
        self._top = 0  # first row of the picture
        self._left: list[Segment] = []  # left letterbox
        self._right: list[Segment] = []  # right letterbox

    def cells(self, rgb: np.ndarray) -> np.ndarray:
        """Cell keys (top pixel << 24 | bottom pixel) of a frame at this size."""
        columns, rows = fit_grid(rgb.shape[0], self.width, self.height)
        if columns == 0:
            return np.zeros((0, 0), dtype=np.int64)
        packed = pool_blocks(rgb, columns, rows)
        keys: np.ndarray = (packed[0::2] << 24) | packed[1::2]
        return keys

    def render(self, rgb: np.ndarray) -> list[int]:
        """Show a frame; return the widget rows whose Strips changed."""
        cells = self.cells(rgb)
        if self._cells is None or cells.shape != self._cells.shape or rgb.shape[0] != self.frame_height:
            self._place(rgb.shape[0], cells.shape)  # letterbox may move: every row changes
            self._cells = cells
            self._build(cells, np.arange(cells.shape[0]))
            return list(range(self.height))
        changed = np.flatnonzero((cells != self._cells).any(axis=1))
        self._cells = cells
        if len(changed):
            self._build(cells, changed)
        return (changed + self._top).tolist()

    def _place(self, frame_height: int, shape: tuple[int, ...]) -> None:
        """Center a picture of ``shape`` cells; every row becomes letterbox until built."""
        self.frame_height = frame_height
        rows, columns = shape
        self._top = (self.height - rows) // 2
        left = (self.width - columns) // 2
        right = self.width - columns - left
        self._left = [Segment(" " * left, _PAD_STYLE)] if left else []
        self._right = [Segment(" " * right, _PAD_STYLE)] if right else []
        self.strips = [Strip.blank(self.width, _PAD_STYLE)] * self.height

    def _build(self, cells: np.ndarray, changed: np.ndarray) -> None:
        """Rebuild the Strips of the ``changed`` picture rows, one Segment per run."""
        block = cells[changed]
        n_rows, columns = block.shape
        starts_mask = np.ones(block.shape, dtype=bool)
        starts_mask[:, 1:] = block[:, 1:] != block[:, :-1]
        starts = np.flatnonzero(starts_mask)  # every row starts a run
        lengths = np.diff(starts, append=block.size).tolist()
        values = block.ravel()[starts].tolist()
        bounds = np.searchsorted(starts, np.arange(n_rows + 1) * columns).tolist()
        styles = _STYLES
        style_for = _style_for
        left, right, top, width = self._left, self._right, self._top, self.width
        for i, row in enumerate(changed.tolist()):
            a, b = bounds[i], bounds[i + 1]
            segments = [
                Segment(HALF_BLOCK * n, styles.get(v) or style_for(v))
                for n, v in zip(lengths[a:b], values[a:b])
            ]
            self.strips[top + row] = Strip(left + segments + right, width)


def _style_for(key: int) -> Style:
    """Make and cache the Style of a cell key: fg = top pixel, bg = bottom pixel."""
    if len(_STYLES) >= _STYLES_CAP:
        _STYLES.clear()
    top, bottom = key >> 24, key & 0xFFFFFF
    style = Style.from_color(
        Color.from_rgb(top >> 16, (top >> 8) & 0xFF, top & 0xFF),
        Color.from_rgb(bottom >> 16, (bottom >> 8) & 0xFF, bottom & 0xFF),
    )
    _STYLES[key] = style
    return style


def _row_regions(rows: Iterable[int], width: int) -> list[Region]:
    """One full-width Region per run of consecutive rows."""
    regions: list[Region] = []
    start = previous = -2  # -2: no run yet (rows are 0 or more)
    for y in rows:
        if y == previous + 1 and start >= 0:
            previous = y
            continue
        if start >= 0:
            regions.append(Region(0, start, width, previous - start + 1))
        start = previous = y
    if start >= 0:
        regions.append(Region(0, start, width, previous - start + 1))
    return regions


class FrameView(Widget):
    """Shows Atari frames; feed it with ``post_frame`` (any thread) or ``show`` (UI thread)."""

    DEFAULT_CSS = """
    FrameView {
        width: 1fr;
        height: 1fr;
        background: black;
    }
    """

    class FrameReady(Message, bubble=False):
        """A frame from the engine; a newer one replaces it while it waits in the queue."""

        def __init__(self, rgb: np.ndarray, index: int) -> None:
            super().__init__()
            self.rgb = rgb
            self.index = index

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, FrameView.FrameReady)

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.frame_index = -1  # index of the frame on display, -1 before the first
        self.rows_repainted = 0  # rows handed to Textual by render_line, for tests
        self._rgb: np.ndarray | None = None
        self._renderer = FrameRenderer(0, 0)

    def post_frame(self, rgb: np.ndarray, index: int) -> bool:
        """Queue a frame for display; safe from any thread, never blocks.

        The frame is copied, so the caller may reuse its buffer. Returns False
        when the widget no longer accepts messages (app closing).
        """
        check_frame(rgb)
        return self.post_message(self.FrameReady(rgb.copy(), index))

    def show(self, rgb: np.ndarray, index: int | None = None) -> None:
        """Display a frame now (UI thread only); repaints only the rows that changed.

        The array is kept (not copied) to redraw after a resize: don't mutate it.
        ``index`` defaults to the previous index plus one.
        """
        check_frame(rgb)
        self._rgb = rgb
        self.frame_index = self.frame_index + 1 if index is None else index
        width, height = self.size
        renderer = self._renderer
        if (renderer.width, renderer.height) != (width, height):
            self._resize_renderer(width, height)
            self.refresh()
            return
        changed = renderer.render(rgb)
        if changed:
            self.refresh(*_row_regions(changed, width))

    def _on_frame_view_frame_ready(self, message: FrameView.FrameReady) -> None:
        self.show(message.rgb, message.index)

    def _resize_renderer(self, width: int, height: int) -> None:
        self._renderer = FrameRenderer(width, height)
        if self._rgb is not None:
            self._renderer.render(self._rgb)

    def render_line(self, y: int) -> Strip:
        self.rows_repainted += 1
        width, height = self.size
        if (self._renderer.width, self._renderer.height) != (width, height):
            self._resize_renderer(width, height)  # resized: Textual repaints every row
        strips = self._renderer.strips
        return strips[y] if y < len(strips) else Strip.blank(width, _PAD_STYLE)


def frame_beside(prefix: str, *side: Widget) -> Widget:
    """The play screens' body: the frame with a column of panels beside it (ids PREFIX-body, PREFIX-frame
    and PREFIX-side; the panels keep their own)."""
    return Horizontal(FrameView(id=f"{prefix}-frame"), Vertical(*side, id=f"{prefix}-side"), id=f"{prefix}-body")
