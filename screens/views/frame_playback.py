"""Frame steps and paper-pace playback for a screen that shows recorded frames.

The one-player replay, match replay and compare screens step and play their frames
alike: comma / full stop a frame, home / end, space plays one action (3 frames)
every 0.1 s (paper pace) and stops on the last frame or on a frame that cannot be read.
"""

from __future__ import annotations

from typing import Any

from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer

from screens.widgets.alive import unless_leaving

PLAY_FRAMES = 3  # frames per playback tick: one action
PLAY_TICK_S = 0.1  # paper pace: 0.1 s per action

# The keys, in footer order (each screen puts its own between them); ``turn`` is the screen's own action.
TURN_BINDINGS = [
    Binding("left,left_square_bracket", "turn(-1)", "Prev turn"),
    Binding("right,right_square_bracket", "turn(1)", "Next turn"),
]
STEP_BINDINGS = [
    *TURN_BINDINGS,
    Binding("comma", "frame(-1)", "Prev frame"),
    Binding("full_stop", "frame(1)", "Next frame"),
    Binding("space", "play", "Play/pause"),
]
END_BINDINGS = [
    Binding("home", "goto(0)", "Start", show=False),
    Binding("end", "goto(-1)", "End", show=False),
]


class FramePlaybackScreen(Screen[Any]):
    """A screen that sets ``frame``, ``n_frames`` (or its own ``last_frame``), ``playing`` and ``_timer`` and
    defines ``goto(frame)`` (which calls ``_stop_playback`` when a frame cannot be shown) and ``_show_playing()``."""

    frame: int
    n_frames: int
    playing: bool
    _timer: Timer | None

    @property
    def last_frame(self) -> int:
        """The last frame there is to show (-1: none)."""
        return self.n_frames - 1

    def goto(self, frame: int) -> None:
        raise NotImplementedError

    def _show_playing(self) -> None:
        """Show that playback started or stopped."""
        raise NotImplementedError

    def action_frame(self, delta: int) -> None:
        self.goto(self.frame + delta)

    def action_goto(self, frame: int) -> None:
        self.goto(self.last_frame if frame < 0 else frame)

    def action_play(self) -> None:
        if self.playing:
            self._stop_playback()
        elif self.last_frame >= 0:
            self.playing = True
            self._timer = self.set_interval(PLAY_TICK_S, self._tick)
            if self.frame >= self.last_frame:
                self.goto(0)
        self._show_playing()

    def _stop_playback(self) -> None:
        self.playing = False
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    @unless_leaving
    def _tick(self) -> None:
        if self.frame >= self.last_frame:
            self.action_play()
            return
        self.goto(self.frame + PLAY_FRAMES)
