"""Check re-executed frames against a recording's: pixels, RAM and palette, frame by frame.

Verify re-executes a run (``workstation.run.verify``) or a match (``workstation.run.match_verify``)
with a ``FrameCheck`` as the emulator's frame sink; the first frame that differs raises ``Mismatch``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Generic, TypeVar

import numpy as np

from workstation.store.framestore import FrameStoreError

T = TypeVar("T")


class Mismatch(Exception):
    """The first item the re-execution does not reproduce, at ``frame``."""

    def __init__(self, frame: int, detail: str) -> None:
        super().__init__(detail)
        self.frame, self.detail = frame, detail


def same(a: Any, b: Any) -> bool:
    """Recorded and re-executed values agree (numbers by value, lists item by item)."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float, bool)) and isinstance(b, (int, float, bool)):
        return float(a) == float(b)
    return bool(a == b)


def recorded_turn(turns: Sequence[T], k: int, checked: int) -> T:
    """Recorded turn ``k``; a Mismatch at frame ``checked`` when re-execution plays past the last one."""
    if k >= len(turns):
        raise Mismatch(checked, f"turns.jsonl ends at turn {len(turns) - 1}, but re-execution plays turn {k}")
    return turns[k]


def check_fields(want: Any, got: Any, keys: Iterable[str], frame: int, where: str) -> None:
    """A Mismatch at ``frame`` for the first of ``keys`` whose recorded and re-executed values differ."""
    for key in keys:
        recorded, replayed = getattr(want, key), getattr(got, key)
        if not same(recorded, replayed):
            raise Mismatch(frame, f"{where} {key}: recorded {recorded!r}, re-execution gives {replayed!r}")


class TurnCheck(Generic[T]):
    """Re-executed turns against the recorded ``turns``: ``see(got)`` finds recorded turn ``got.turn`` (a
    Mismatch past the last) and hands both to ``compare(want, got, where)``; ``checked`` counts the turns seen."""

    def __init__(self, turns: Sequence[T], frames: FrameCheck, compare: Callable[[T, Any, str], None]) -> None:
        self.turns, self.frames, self.compare = turns, frames, compare
        self.checked = 0

    def see(self, got: Any) -> None:
        k = got.turn
        self.compare(recorded_turn(self.turns, k, self.frames.checked), got, f"turns.jsonl turn {k}")
        self.checked += 1


class FrameCheck:
    """The frame sink: each re-executed frame must be the recording's next one; ``checked`` counts them."""

    def __init__(self, frames: Any) -> None:
        self.frames = frames
        self.n = len(frames)
        self.checked = 0
        self._palette = frames.palette()
        self._palette_ok: set[int] = set()

    def __call__(self, screen: np.ndarray, rgb: Any, ram: np.ndarray) -> None:
        i, n, frames = self.checked, self.n, self.frames
        if i >= n:
            raise Mismatch(i, f"re-execution goes on past the recording's {n} frames (frames.idx ends early)")
        try:
            stored = frames.indices(i)
        except FrameStoreError as e:
            raise Mismatch(i, f"frames.bin: {e}") from None
        if stored.shape != screen.shape or not np.array_equal(screen, stored):
            diff = int(np.count_nonzero(screen != stored)) if stored.shape == screen.shape else "all"
            raise Mismatch(i, f"frames.bin frame {i} differs from re-execution in {diff} pixels")
        if not np.array_equal(frames.ram(i), ram):
            raise Mismatch(i, f"frames.ram frame {i}: the stored RAM differs from re-execution")
        new = set(np.unique(screen).tolist()) - self._palette_ok
        if new:
            image = rgb() if callable(rgb) else rgb
            for v in new:
                ys, xs = np.nonzero(screen == v)
                colour = tuple(int(c) for c in image[ys[0], xs[0]])
                if self._palette.get(v) != colour:
                    raise Mismatch(i, f"frames.pal value {v}: stored colour {self._palette.get(v)} but the "
                                      f"emulator shows {colour}")
                self._palette_ok.add(v)
        self.checked += 1
