"""An optional pygame window for human play: true key state and gamepads.

A terminal reports no key release (see ``screens.input.keys``); a window does. The
window runs in its own process (pygame must own its main thread on macOS and
Windows): it receives frames through a queue and sends back the buttons held,
in press order, whenever they change. pygame is not a dependency of the
workstation: without it, or without a display, ``window_unavailable`` says
why and play stays in the terminal. There is no sound: the engine's
environment does not produce audio samples.
"""

from __future__ import annotations

import importlib.util
import multiprocessing as mp
import os
import queue
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

SCALE = 3  # window pixels per Atari pixel (both ways; the TV's wider pixels are not imitated)
STICK_THRESHOLD = 0.5  # a gamepad stick counts as pushed past this deflection


def window_unavailable() -> str | None:
    """Why a play window cannot open here, or None when it can."""
    needs_display = sys.platform not in ("darwin", "win32")
    if needs_display and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return "no play window: no display (DISPLAY and WAYLAND_DISPLAY are unset); playing in the terminal"
    if importlib.util.find_spec("pygame") is None:
        return "no play window: pygame is not installed (`pip install pygame`); playing in the terminal"
    return None


@contextmanager
def _real_stderr() -> Iterator[None]:
    """Put the process's own stderr back for a while.

    The TUI swaps ``sys.stderr`` for an object without a file descriptor, and
    multiprocessing hands ``sys.stderr.fileno()`` to the helper processes it
    starts (its resource tracker).
    """
    saved = sys.stderr
    sys.stderr = sys.__stderr__ or saved
    try:
        yield
    finally:
        sys.stderr = saved


class PlayWindow:
    """The window process, seen from the game's side (one thread sends frames and reads keys)."""

    def __init__(self, title: str, height: int) -> None:
        with _real_stderr():
            ctx = mp.get_context("spawn")
            self._frames: mp.Queue = ctx.Queue(maxsize=2)
            self._keys, keys_out = ctx.Pipe(duplex=False)
            self._stop = ctx.Event()
            self._process = ctx.Process(target=_window_main, args=(title, height, self._frames, keys_out, self._stop),
                                        name="workstation-play-window", daemon=True)
            self._process.start()
        self._held: tuple[str, ...] = ()

    @property
    def is_open(self) -> bool:
        return self._process.is_alive()

    def send_frame(self, rgb: np.ndarray) -> None:
        """Offer a frame; dropped when the window has not drawn the previous ones yet."""
        try:
            self._frames.put_nowait(rgb)
        except queue.Full:
            pass

    def held(self) -> tuple[str, ...]:
        """Buttons held now, oldest press first (empty once the window is closed)."""
        try:
            while self._keys.poll():
                self._held = self._keys.recv()
        except (EOFError, OSError):
            self._held = ()
        return self._held if self.is_open else ()

    def close(self) -> None:
        self._stop.set()
        self._process.join(timeout=1.0)
        if self._process.is_alive():
            self._process.terminate()


def _window_main(title: str, height: int, frames: mp.Queue, keys_out, stop) -> None:  # pragma: no cover - needs a display
    quiet = os.open(os.devnull, os.O_WRONLY)  # the terminal belongs to the TUI: no greetings or SDL warnings
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    os.environ["PYGAME_HIDE_SUPPORT_PROMPT"] = "1"
    import pygame

    pygame.init()
    size = (160 * SCALE, height * SCALE)
    screen = pygame.display.set_mode(size)
    pygame.display.set_caption(title)
    key_buttons = {pygame.K_UP: "up", pygame.K_w: "up", pygame.K_DOWN: "down", pygame.K_s: "down",
                   pygame.K_LEFT: "left", pygame.K_a: "left", pygame.K_RIGHT: "right", pygame.K_d: "right",
                   pygame.K_SPACE: "fire"}
    pads = [pygame.joystick.Joystick(i) for i in range(pygame.joystick.get_count())]
    order: list[str] = []
    sent: tuple[str, ...] | None = None
    tick = pygame.time.Clock()
    while not stop.is_set():
        for event in pygame.event.get():
            if event.type == pygame.QUIT:
                return
            button = key_buttons.get(getattr(event, "key", None))
            if button and button in order:
                order.remove(button)
            if button and event.type == pygame.KEYDOWN:
                order.append(button)
        held = tuple(order) + tuple(b for b in _pad_buttons(pads) if b not in order)
        if held != sent:
            keys_out.send(held)
            sent = held
        frame = None
        try:
            while True:
                frame = frames.get_nowait()
        except queue.Empty:
            pass
        if frame is not None:
            surface = pygame.surfarray.make_surface(np.ascontiguousarray(frame.swapaxes(0, 1)))
            screen.blit(pygame.transform.scale(surface, size), (0, 0))
            pygame.display.flip()
        tick.tick(120)


def _pad_buttons(pads: list) -> list[str]:  # pragma: no cover - needs a gamepad
    """Directions and fire from every gamepad: hat, left stick, any face button."""
    out: list[str] = []
    for pad in pads:
        x = y = 0.0
        if pad.get_numhats():
            hx, hy = pad.get_hat(0)
            x, y = float(hx), float(-hy)
        if pad.get_numaxes() >= 2 and x == 0 and y == 0:
            x, y = pad.get_axis(0), pad.get_axis(1)
        if y < -STICK_THRESHOLD:
            out.append("up")
        elif y > STICK_THRESHOLD:
            out.append("down")
        if x < -STICK_THRESHOLD:
            out.append("left")
        elif x > STICK_THRESHOLD:
            out.append("right")
        if any(pad.get_button(i) for i in range(min(4, pad.get_numbuttons()))):
            out.append("fire")
    return list(dict.fromkeys(out))
