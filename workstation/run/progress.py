"""Progress of a headless run on stderr: a bar that redraws in place on a terminal, and a plain
line every few seconds otherwise (so a `nohup` log reads well). An engine observer; the clock is
injectable, so tests never depend on how fast the machine runs."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from workstation.engine.turn_engine import Event, RunEnded, TurnEnded, TurnEngine


class RunProgress:
    def __init__(self, engine: TurnEngine, stream: TextIO | None = None, tty: bool | None = None,
                 every_s: float | None = None, clock: Callable[[], float] = time.monotonic, width: int = 24):
        self.engine = engine
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.every_s = every_s if every_s is not None else (0.2 if self.tty else 5.0)
        self.clock = clock
        self.width = width
        self._t0 = clock()
        self._last = None if self.tty else self._t0  # off a terminal, a short run prints nothing
        self._drawn = False

    def __call__(self, ev: Event) -> None:
        if isinstance(ev, TurnEnded):
            now = self.clock()
            if self._last is None or now - self._last >= self.every_s:
                self._last = now
                self._write(self.line())
        elif isinstance(ev, RunEnded) and self._drawn and self.tty:
            self.stream.write("\n")
            self.stream.flush()

    def line(self) -> str:
        e = self.engine
        budget = e.protocol.frames
        frame = e.clock.frame
        done = min(1.0, frame / budget) if budget else 1.0
        cost = e.totals.cost_usd
        calls = e.totals.calls
        elapsed = self.clock() - self._t0
        eta = elapsed / done - elapsed if done > 0 else 0.0
        head = f"{e.game.key} seed {e.seed}"
        if self.tty:
            filled = int(done * self.width)
            head += " [" + "#" * filled + "." * (self.width - filled) + "]"
        parts = [head, f"frame {frame}/{budget}", f"turn {e.turn}", f"score {e.clock.score:g}",
                 f"lives lost {e.clock.lives_lost}"]
        if calls:
            parts += [f"calls {calls}", f"${cost:.4f}"]
        parts.append(f"{elapsed:.0f}s elapsed, ~{eta:.0f}s left")
        return "  ".join(parts)

    def _write(self, text: str) -> None:
        if self.tty:
            self.stream.write("\r\x1b[2K" + text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
        self._drawn = True
