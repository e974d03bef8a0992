"""FrameView: real ALE frames drawn with half blocks in a headless Textual app."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import numpy as np
import pytest
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from bench.random_frames import random_frames
from screens.widgets.frame_view import HALF_BLOCK, TV_PIXEL_ASPECT, FrameShapeError, FrameView, fit_grid, pool_blocks


@pytest.fixture(scope="module")
def breakout() -> np.ndarray:
    return random_frames("breakout", 120)[-1]


class ViewApp(App):
    def compose(self) -> ComposeResult:
        yield FrameView()


@asynccontextmanager
async def view_app(size: tuple[int, int], **run_test) -> AsyncIterator[tuple[ViewApp, Pilot, FrameView]]:
    """A FrameView alone in a headless app of ``size`` cells: the app, its pilot and the view."""
    app = ViewApp()
    async with app.run_test(size=size, **run_test) as pilot:
        yield app, pilot, app.query_one(FrameView)


def cells_of(view: FrameView, y: int) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """(fg, bg) RGB per cell of the line the widget hands to Textual."""
    out = []
    for segment in view.render_line(y):
        style = segment.style
        fg = tuple(style.color.get_truecolor()) if style.color else None
        bg = tuple(style.bgcolor.get_truecolor())
        out.extend([(fg, bg)] * len(segment.text))
    return out


def test_full_size_shows_every_pixel_of_a_real_frame(breakout: np.ndarray) -> None:
    async def scenario() -> None:
        async with view_app((160, 105)) as (app, pilot, view):
            view.show(breakout, 7)
            await pilot.pause()
            assert view.frame_index == 7
            for y in range(105):
                cells = cells_of(view, y)
                assert [c[0] for c in cells] == [tuple(p) for p in breakout[2 * y].tolist()]
                assert [c[1] for c in cells] == [tuple(p) for p in breakout[2 * y + 1].tolist()]
            strip = view.render_line(50)
            assert {s.text[0] for s in strip} == {HALF_BLOCK}
            assert len(list(strip)) < 160  # equal neighbours share one Segment
            # the composed screen carries the same colours
            style = app.screen.get_style_at(80, 60)
            assert tuple(style.color.get_truecolor()) == tuple(breakout[120, 80].tolist())
            assert tuple(style.bgcolor.get_truecolor()) == tuple(breakout[121, 80].tolist())

    asyncio.run(scenario())


def test_one_pixel_bright_object_survives_downscaling(breakout: np.ndarray) -> None:
    frame = breakout.copy()
    frame[150:190, 0:160] = 0  # a dark band below the bricks
    frame[160:163, 77] = (236, 236, 236)  # a bullet one pixel wide

    async def scenario() -> None:
        async with view_app((40, 20)) as (_, pilot, view):
            view.show(frame)
            await pilot.pause()
            colours = {c for y in range(20) for cell in cells_of(view, y) for c in cell}
            assert (236, 236, 236) in colours
            assert all(view.render_line(y).cell_length == 40 for y in range(20))

    asyncio.run(scenario())


def test_only_changed_rows_are_repainted(breakout: np.ndarray) -> None:
    changed = breakout.copy()
    changed[101, 30:60] = (255, 0, 0)  # one pixel row: cell row 50 (bottom half)

    async def scenario() -> None:
        async with view_app((160, 105)) as (_, pilot, view):
            view.show(breakout)
            await pilot.pause()
            before = [view.render_line(y) for y in range(105)]
            view.rows_repainted = 0
            view.show(changed)
            await pilot.pause()
            assert view.rows_repainted == 1
            after = [view.render_line(y) for y in range(105)]
            assert [y for y in range(105) if after[y] is not before[y]] == [50]
            assert cells_of(view, 50)[45][1] == (255, 0, 0)
            view.rows_repainted = 0
            view.show(changed.copy())  # same picture: nothing to repaint
            await pilot.pause()
            assert view.rows_repainted == 0

    asyncio.run(scenario())


def test_a_newer_frame_replaces_a_queued_one(breakout: np.ndarray) -> None:
    handled: list[int] = []

    def hook(message) -> None:
        if isinstance(message, FrameView.FrameReady):
            handled.append(message.index)

    async def scenario() -> None:
        async with view_app((80, 40), message_hook=hook) as (_, pilot, view):
            for index in range(5):  # queued before the widget gets to run
                assert view.post_frame(breakout, index)
            await pilot.pause()
            assert handled == [4] and view.frame_index == 4

            frames = random_frames("seaquest", 40)
            worker = threading.Thread(target=lambda: [view.post_frame(f, i) for i, f in enumerate(frames)])
            worker.start()
            worker.join()
            await pilot.pause()
            assert view.frame_index == 39

    asyncio.run(scenario())
    assert FrameView.FrameReady(np.zeros((2, 160, 3), np.uint8), 0).can_replace(
        FrameView.FrameReady(np.zeros((2, 160, 3), np.uint8), 1)
    )


def test_tall_frames_fit() -> None:
    pacman = random_frames("pacman", 30)[-1]
    assert pacman.shape == (250, 160, 3)

    async def scenario() -> None:
        async with view_app((160, 105)) as (_, pilot, view):
            view.show(pacman)
            await pilot.pause()
            assert fit_grid(250, 160, 105) == (135, 210)  # square pixels: 5 of 6 rows and 5 of 6 columns
            pooled = pool_blocks(pacman, 135, 210)
            bottom = [((t >> 16, t >> 8 & 255, t & 255), (b >> 16, b >> 8 & 255, b & 255))
                      for t, b in zip(pooled[208].tolist(), pooled[209].tolist())]
            left = (160 - 135) // 2
            assert cells_of(view, 104)[left:left + 135] == bottom
            await pilot.resize_terminal(160, 125)  # room for full resolution
            await pilot.pause()
            assert cells_of(view, 124) == [
                (tuple(t), tuple(b)) for t, b in zip(pacman[248].tolist(), pacman[249].tolist())
            ]
            view.rows_repainted = 0
            view.show(random_frames("breakout", 1)[0])  # shorter frame: letterbox rows repaint too
            await pilot.pause()
            assert view.rows_repainted == 125
            assert {bg for _, bg in cells_of(view, 124)} == {(0, 0, 0)}  # letterbox

    asyncio.run(scenario())


@pytest.mark.parametrize("height", [210, 230, 250])
@pytest.mark.parametrize("size", [(160, 125), (200, 60), (80, 40), (120, 30), (30, 80), (1, 1)])
def test_grid_fits_and_keeps_a_sane_aspect(height: int, size: tuple[int, int]) -> None:
    width, rows = size
    columns, pixel_rows = fit_grid(height, width, rows)
    assert columns <= min(width, 160) and pixel_rows <= 2 * rows and pixel_rows % 2 == 0
    if width >= 160 and 2 * rows >= height:
        assert (columns, pixel_rows) == (160, height)
    elif columns > 1 and pixel_rows > 2:
        aspect = (height / pixel_rows) / (160 / columns)  # an Atari pixel's shown width / height
        assert 0.9 < aspect < TV_PIXEL_ASPECT + 0.1  # between raw square pixels and the TV


def test_pooling_keeps_the_brightest_pixel() -> None:
    frame = np.zeros((210, 160, 3), np.uint8)
    frame[:, :] = (0, 0, 200)  # bright blue background, luminance 22.8
    frame[10, 10] = (120, 120, 120)  # dimmer in blue, but brighter by luminance
    pooled = pool_blocks(frame, 40, 42)
    assert pooled[2, 2] == 0x787878 and pooled[0, 0] == 0x0000C8


def test_a_wrong_frame_is_refused_with_a_clear_error() -> None:
    view = FrameView()
    with pytest.raises(FrameShapeError, match=r"\(H, 160, 3\) uint8"):
        view.show(np.zeros((210, 160), np.uint8))
    with pytest.raises(FrameShapeError):
        view.post_frame(np.zeros((210, 160, 3), np.float32), 0)


def test_a_band_edge_is_not_smeared_over_its_neighbours() -> None:
    frame = np.zeros((210, 160, 3), np.uint8)
    frame[100:106] = (200, 72, 72)  # a band of bricks six rows high: a large object
    frame[:, :8] = (142, 142, 142)  # a wall down the left side
    pooled = pool_blocks(frame, 40, 42)  # blocks of 4 x 5 pixels
    band = 0xC84848
    rows_with_band = [y for y in range(42) if (pooled[y, 4:] == band).any()]
    # the band covers rows 100..105: block rows 20 (100..104) and 21 (105..109, one row of band) -> only the first
    assert rows_with_band == [20]
    assert (pooled[:, :2] == 0x8E8E8E).all()  # the wall keeps its two columns, never brick-coloured
    assert (pooled[:, 2:] != 0x8E8E8E).all()


def test_small_objects_survive_where_their_block_is_mostly_background(breakout: np.ndarray) -> None:
    frame = np.zeros((210, 160, 3), np.uint8)
    frame[50, 33] = (236, 236, 236)  # a one-pixel bullet
    frame[120:124, 90:92] = (200, 72, 72)  # a 2 x 4 ball
    frame[180, :] = (84, 92, 214)  # a one-pixel line across the screen
    pooled = pool_blocks(frame, 40, 42)
    assert pooled[10, 8] == 0xECECEC
    assert pooled[24, 22] == 0xC84848
    assert (pooled[36] == 0x545CD6).all()
    assert np.count_nonzero(pooled) == 1 + 1 + 40


def test_a_tie_picks_the_same_colour_whatever_this_process_showed_before(breakout: np.ndarray) -> None:
    """Colours are numbered in the order a process first sees them; a tie must not depend on that order
    (it made the snapshots of a 30-frame Breakout run differ after other games' frames were shown)."""
    from screens.widgets import frame_view

    low, high = (84, 92, 214), (200, 72, 72)  # 0x545CD6 < 0xC84848
    stripes = np.zeros((210, 160, 3), np.uint8)
    stripes[:, 0::2], stripes[:, 1::2] = low, high  # every 2 x 2 block: two of each, both everywhere
    results = []
    for seen_first in (high, low, None):
        frame_view._COLOURS.fill(-1)
        frame_view._COLOUR_VALUES.clear()
        if seen_first is not None:
            pool_blocks(np.full((210, 160, 3), seen_first, np.uint8), 80, 105)
        results.append((pool_blocks(stripes, 80, 105), pool_blocks(breakout, 64, 110)))
    for pooled, shrunk in results:
        # the tie's majority is the lower value; the other, the majority of no block, shows as a small object
        assert (pooled == 0xC84848).all()
        assert (shrunk == results[0][1]).all()
