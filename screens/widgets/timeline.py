"""The timeline: rewards and life losses over the frame budget, one cell per bucket of frames.

Three rows: a sparkline of the reward gained in each bucket (green up, red for
a loss of points), a mark where a life was lost (✖) or a game ended (■), and a
cursor at the current frame. Frames not played yet are drawn as dots. Frames in a
stuck stretch (``workstation.studies.judge.stuck``), when given, are drawn as ≈ on the lives row.
"""

from __future__ import annotations

import numpy as np
from rich.text import Text
from textual.widget import Widget

from workstation.game.games import FPS_PAPER
from workstation.store.series import FrameSeries, buckets  # buckets: importable here as before

BARS = "▁▂▃▄▅▆▇█"
GUTTER = 7  # width of the row labels


class TimelineBar(Widget):
    """Per-bucket rewards and life losses up to the current frame."""

    DEFAULT_CSS = """
    TimelineBar { height: 3; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rewards = np.zeros(1)
        self.losses = np.zeros(1, dtype=bool)
        self.resets = np.zeros(1, dtype=bool)
        self.current = 0
        self.known = 0
        self.stuck: np.ndarray | None = None  # per frame: inside a stuck stretch (None: not known)

    def set_data(self, rewards: np.ndarray, losses: np.ndarray, current: int, known: int | None = None,
                 resets: np.ndarray | None = None) -> None:
        """Show per-frame ``rewards`` and ``losses`` (length budget + 1), the cursor at frame ``current``.

        Frames after ``known`` (default: ``current``) are not played yet and drawn as dots.
        """
        self.rewards = np.asarray(rewards, dtype=float).copy()
        self.losses = np.asarray(losses, dtype=bool).copy()
        self.resets = (np.asarray(resets, dtype=bool).copy() if resets is not None
                       else np.zeros(len(self.losses), dtype=bool))
        self.current = current
        self.known = current if known is None else known
        self.refresh()

    def show_series(self, series: FrameSeries, current: int, known: int | None = None) -> None:
        """Show a run's ``FrameSeries`` (live or recorded), the cursor at ``current``."""
        self.set_data(series.rewards, series.losses, current, known, series.resets)

    def render(self) -> Text:
        width = max(1, self.size.width - GUTTER)
        n = len(self.rewards)
        frames_per_cell = max(1, n) / width
        played = min(width, int(np.ceil((self.known + 1) / frames_per_cell)))
        sums = buckets(self.rewards, width)  # the same cells FrameSeries.cells gives a headless reader
        lost = buckets(self.losses.astype(np.int64), width) > 0
        ended = buckets(self.resets.astype(np.int64), width) > 0 if len(self.resets) == n else np.zeros(width, bool)
        stuck = (buckets(self.stuck.astype(np.int64), width) > 0 if self.stuck is not None and len(self.stuck) == n
                 else np.zeros(width, bool))
        peak = float(np.abs(sums).max()) or 1.0
        reward_row = Text("reward ", style="dim", no_wrap=True)
        loss_row = Text("lives  ", style="dim", no_wrap=True)
        for i in range(width):
            if i >= played:
                reward_row.append("·", style="grey30")
                loss_row.append("·", style="grey30")
                continue
            r = sums[i]
            if r == 0:
                reward_row.append("▁", style="grey42")
            else:
                level = min(len(BARS) - 1, int(abs(r) / peak * (len(BARS) - 1) + 0.999))
                reward_row.append(BARS[level], style="bold green" if r > 0 else "bold red")
            if ended[i]:
                loss_row.append("■", style="bold magenta")  # a game ended (and a new one began) here
            elif stuck[i] and not lost[i]:
                loss_row.append("≈", style="bold yellow")  # stuck: no progress here
            else:
                loss_row.append("✖" if lost[i] else "─", style="bold red" if lost[i] else "grey42")
        cursor = Text(" " * GUTTER, no_wrap=True)
        pos = min(width - 1, int(self.current / frames_per_cell))
        label = f"▲ {self.current / FPS_PAPER:.1f}s"
        if pos + len(label) > width:
            label = f"{self.current / FPS_PAPER:.1f}s ▲"
            pos = max(0, pos - len(label) + 1)
        cursor.append(" " * pos + label, style="bold")
        return Text("\n").join([reward_row, loss_row, cursor])
