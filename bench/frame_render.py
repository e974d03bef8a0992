"""Benchmark: the frame view's render path and a 30 fps stream through a headless app.

Frames are real: Breakout and Seaquest played at random in the ALE, one frame
every second emulator frame (the 30 fps clock). Measured here, in one run:

- render path (downscale + cell keys + Strips for changed rows), CPU ms of
  this thread per changed frame (immune to other load on the machine), at
  full size (160x105 cells) and small (80x40 cells);
- a naive baseline on fewer frames: one new Style and Segment per cell, every
  row rebuilt, no caches (ratio = naive / ours);
- CPU (process time / wall) and terminal bytes per second of a 30 fps stream
  fed from a thread through ``post_frame`` into a real Textual app run
  headless; the headless driver writes nothing, so each screen update is
  encoded as a terminal driver would encode it and its bytes counted. The
  "full repaint" line rebuilds and refreshes every row on every frame.

Goals: <= 3 ms per changed frame, <= 15% of one core at 30 fps.
Run from the repository root: ``.venv/bin/python -m bench.frame_render``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import threading
import time

os.environ.setdefault("TEXTUAL_COLOR_SYSTEM", "truecolor")  # before Textual reads it

import numpy as np
from rich.color import Color
from rich.segment import Segment
from rich.style import Style
from textual._compositor import CompositorUpdate
from textual.app import App, ComposeResult
from textual.strip import Strip

from bench.random_frames import random_frames
from screens.widgets.frame_view import HALF_BLOCK, FrameRenderer, FrameView, fit_grid, pool_blocks

GAMES = ("breakout", "seaquest")
SIZES = {"full 160x105": (160, 105), "small 80x40": (80, 40)}
FPS = 30


def time_ours(frames: list[np.ndarray], width: int, height: int) -> tuple[list[float], int]:
    """Milliseconds of each changed frame through FrameRenderer, and the unchanged count."""
    renderer = FrameRenderer(width, height)
    renderer.render(frames[0])
    changed_ms, unchanged = [], 0
    for rgb in frames[1:]:
        start = time.thread_time()
        rows = renderer.render(rgb)
        elapsed = (time.thread_time() - start) * 1000
        if rows:
            changed_ms.append(elapsed)
        else:
            unchanged += 1
    return changed_ms, unchanged


def naive_render(rgb: np.ndarray, width: int, height: int) -> list[Strip]:
    """Baseline: a fresh Style and Segment for every cell, every row, every frame."""
    columns, rows = fit_grid(rgb.shape[0], width, height)
    packed = pool_blocks(rgb, columns, rows).tolist()
    strips = []
    for y in range(0, rows, 2):
        segments = []
        for top, bottom in zip(packed[y], packed[y + 1]):
            style = Style(
                color=Color.from_rgb(top >> 16, top >> 8 & 255, top & 255),
                bgcolor=Color.from_rgb(bottom >> 16, bottom >> 8 & 255, bottom & 255),
            )
            segments.append(Segment(HALF_BLOCK, style))
        strips.append(Strip(segments))
    return strips


def time_naive(frames: list[np.ndarray], width: int, height: int) -> list[float]:
    out = []
    for rgb in frames:
        start = time.thread_time()
        naive_render(rgb, width, height)
        out.append((time.thread_time() - start) * 1000)
    return out


class FullRepaintView(FrameView):
    """Baseline widget: drops its Strips each frame, so every row is rebuilt and refreshed."""

    def show(self, rgb: np.ndarray, index: int | None = None) -> None:
        self._renderer = FrameRenderer(0, 0)
        super().show(rgb, index)


class StreamApp(App):
    """One frame view; counts the bytes a terminal driver would have written."""

    def __init__(self, view_class: type[FrameView]) -> None:
        super().__init__()
        self.view_class = view_class
        self.bytes_out = 0

    def compose(self) -> ComposeResult:
        yield self.view_class()

    def _display(self, screen, renderable) -> None:
        if isinstance(renderable, CompositorUpdate):
            self.bytes_out += len(renderable.render_segments(self.console).encode())
        super()._display(screen, renderable)


async def stream(frames: list[np.ndarray], size: tuple[int, int], seconds: float,
                 view_class: type[FrameView] = FrameView) -> dict[str, float]:
    """Feed frames at 30 fps from a thread for ``seconds``; CPU share, bytes/s, frames shown."""
    app = StreamApp(view_class)
    shown = [0]

    def count(message: object) -> None:
        if isinstance(message, FrameView.FrameReady):
            shown[0] += 1

    async with app.run_test(size=size, message_hook=count) as pilot:
        view = app.query_one(FrameView)
        view.show(frames[0], 0)
        await pilot.pause(0.2)
        stop = threading.Event()

        def feed() -> None:
            due = time.perf_counter()
            for index in range(1, 1_000_000):
                if stop.is_set():
                    return
                view.post_frame(frames[index % len(frames)], index)
                due += 1 / FPS
                time.sleep(max(0.0, due - time.perf_counter()))

        app.bytes_out, shown[0] = 0, 0
        wall0, cpu0 = time.perf_counter(), time.process_time()
        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()
        await asyncio.sleep(seconds)
        stop.set()
        feeder.join()
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        return {"cpu": cpu / wall, "bytes_s": app.bytes_out / wall, "fps_shown": shown[0] / wall}


def summary(ms: list[float]) -> str:
    if not ms:
        return "no changed frames"
    p95 = sorted(ms)[int(0.95 * (len(ms) - 1))]
    return f"{statistics.fmean(ms):6.3f} ms mean, {p95:6.3f} ms p95 over {len(ms)} changed frames"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=300, help="frames per game (default 300)")
    parser.add_argument("--naive-frames", type=int, default=20, help="frames for the naive baseline")
    parser.add_argument("--seconds", type=float, default=4.0, help="length of each 30 fps stream")
    args = parser.parse_args()

    clips = {game: random_frames(game, args.frames) for game in GAMES}
    worst = 0.0
    print("render path (downscale + Strips of changed rows)")
    for game, frames in clips.items():
        for label, (width, height) in SIZES.items():
            ms, unchanged = time_ours(frames, width, height)
            worst = max(worst, statistics.fmean(ms) if ms else 0.0)
            naive = time_naive(frames[: args.naive_frames], width, height)
            ratio = statistics.fmean(naive) / statistics.fmean(ms) if ms else float("nan")
            print(f"  {game:9} {label:13} ours {summary(ms)}; {unchanged} unchanged")
            print(f"  {'':9} {'':13} naive {statistics.fmean(naive):7.2f} ms/frame "
                  f"({len(naive)} frames): ours is {ratio:.0f}x faster")

    print(f"30 fps stream through a headless Textual app, {args.seconds:g} s each")
    worst_cpu = 0.0
    for game, frames in clips.items():
        for label, size in SIZES.items():
            for name, view_class in (("ours", FrameView), ("full repaint", FullRepaintView)):
                if name != "ours" and size != SIZES["full 160x105"]:
                    continue
                got = asyncio.run(stream(frames, size, args.seconds, view_class))
                if name == "ours":
                    worst_cpu = max(worst_cpu, got["cpu"])
                print(f"  {game:9} {label:13} {name:12} CPU {got['cpu'] * 100:5.1f}% of a core, "
                      f"{got['bytes_s'] / 1024:7.1f} KiB/s to the terminal, "
                      f"{got['fps_shown']:4.1f} frames/s shown")

    print(f"goals: <= 3 ms per changed frame (worst mean {worst:.2f} ms: "
          f"{'met' if worst <= 3 else 'MISSED'}); <= 15% of a core "
          f"(worst {worst_cpu * 100:.1f}%: {'met' if worst_cpu <= 0.15 else 'MISSED'})")


if __name__ == "__main__":
    main()
